//! The host's arithmetic of bucket multiselection: how a key interval is projected onto buckets
//! (and which keys each bucket holds), the first level's intervals from a sample, the buckets
//! allotted to the segments of later levels, and the descriptors (chunks, segments, intervals)
//! that tell the kernels of `kernels/bucket_multiselect.cu` where each block works.
//!
//! Projections work on the order-preserving keys, in integers: the keys `lo..=hi` of an interval
//! with `b` buckets go to bucket `floor((key − lo) · m / 2^w)` for the key width `w` and the
//! multiplier `m = floor(b · 2^w / (hi − lo + 1))`, or to bucket `key − lo` when the interval
//! holds no more keys than buckets. The map is monotone, never reaches `b`, and its inverse is
//! exact ([`Interval::keys_of`]), so a bucket's keys are known without reading its elements, and
//! a bucket of one key is a value. For floats, keys are linear in the value within a binade, so
//! inside a sample interval this is the paper's linear projection; across binades it spreads
//! buckets over orders of magnitude, which keeps heavy tails (Cauchy, outliers) from crowding
//! one bucket.

pub(crate) use crate::device::cuda::kernels::bucket_multiselect::SAMPLE;
use crate::device::cuda::kernels::bucket_multiselect::{
    Chunk, IntervalWords, Segment, MAX_INTERVALS, TABLE_BINS, TOTAL_GROUP,
};

/// The keys `lo..=hi` projected onto `buckets` buckets (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Interval {
    /// The smallest key.
    pub lo: u64,
    /// The largest key.
    pub hi: u64,
    /// Buckets used (no more than the interval's keys).
    pub buckets: u32,
    /// The multiplier `m` (0 when `identity`).
    pub mult: u32,
    /// Offsets are shifted right by this many bits before the multiplication, so that they
    /// fit 32 bits.
    pub shift: u32,
    /// Whether the bucket is the key's offset `key − lo` itself.
    pub identity: bool,
}

impl Interval {
    /// The projection of the keys `lo..=hi` (`lo <= hi`) onto at most `buckets` (at least 1,
    /// below 2^31) buckets.
    pub(crate) fn new(lo: u64, hi: u64, buckets: u32) -> Interval {
        debug_assert!(lo <= hi && (1..1 << 31).contains(&buckets));
        let width = hi - lo;
        let buckets = buckets.max(1);
        if (width as u128) < buckets as u128 {
            return Interval {
                lo,
                hi,
                buckets: width as u32 + 1,
                mult: 0,
                shift: 0,
                identity: true,
            };
        }
        // width >> shift < 2^32; when shift > 0 it is at least 2^31 > buckets, else it is
        // width >= buckets: either way b < (width >> shift) + 1, so m < 2^32; and m >= 1.
        let shift = (u64::BITS - width.leading_zeros()).saturating_sub(32);
        let scaled = (width >> shift) as u128 + 1;
        let mult = ((buckets as u128) << 32) / scaled;
        Interval {
            lo,
            hi,
            buckets,
            mult: mult as u32,
            shift,
            identity: false,
        }
    }

    /// The bucket of a key of the interval, as the kernels compute it.
    #[cfg(test)]
    pub(crate) fn bucket(&self, key: u64) -> u32 {
        let q = (key.wrapping_sub(self.lo) >> self.shift) as u32;
        let j = if self.identity {
            q
        } else {
            ((q as u64 * self.mult as u64) >> 32) as u32
        };
        j.min(self.buckets - 1)
    }

    /// The first offset `d` with `bucket(lo + d) >= j` (`j <= buckets`; may pass the interval).
    fn first_offset(&self, j: u32) -> u128 {
        if self.identity {
            j as u128
        } else {
            (((j as u128) << 32).div_ceil(self.mult as u128)) << self.shift
        }
    }

    /// The keys of bucket `j`: `Some((first, last))`, or `None` when it holds no key.
    pub(crate) fn keys_of(&self, j: u32) -> Option<(u64, u64)> {
        if j >= self.buckets {
            return None;
        }
        let width = (self.hi - self.lo) as u128;
        let start = self.first_offset(j);
        let end = if j + 1 == self.buckets {
            width
        } else {
            self.first_offset(j + 1).saturating_sub(1).min(width)
        };
        if start > end || start > width {
            return None;
        }
        Some((self.lo + start as u64, self.lo + end as u64))
    }

    /// The descriptor of the interval, its buckets starting at `first` in its segment.
    fn descriptor(&self, first: u64) -> IntervalWords {
        IntervalWords::new(
            self.lo,
            self.mult,
            first,
            self.buckets,
            self.shift,
            self.identity,
        )
    }
}

/// How the first level's intervals are bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bounds {
    /// Between the input's smallest and largest keys (bucketMultiSelect's min/max pass).
    Exact {
        /// The smallest key.
        min: u64,
        /// The largest key.
        max: u64,
    },
    /// Between the sample's extremes, with one bucket for all keys below and one for all keys
    /// above them (no pass over the input needed).
    Open,
}

/// The sample positions of the kernel density intervals' inner pivots: Blanchard et al.'s
/// `{22 + 70 j}` for `j = 0..15`, 16 intervals of about 1/16 of the values each.
const PIVOTS: [usize; 15] = {
    let mut p = [0usize; 15];
    let mut j = 0;
    while j < 15 {
        p[j] = 22 + 70 * j;
        j += 1;
    }
    p
};

/// Whether an interval of the first level came from outside the sample's range (then its
/// elements' key range is far wider than their spread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Between sample pivots (or an equality interval of a repeated pivot).
    Sample,
    /// Below the sample's smallest key or above its largest (`Bounds::Open`).
    Outside,
}

/// The first level's intervals from the sorted sample keys ([`SAMPLE`] of them): the kernel
/// density intervals between the pivots, each pivot that the sample holds more than once as an
/// interval of its own (an equality bucket: a rank among its copies is then found without
/// copying them; the input's extremes likewise), and, with `Bounds::Open`, one bucket below and
/// one above the sample. The range intervals share what `buckets` leaves after the one-bucket
/// ones equally. Ascending, disjoint, covering the bounds (all keys with `Open`).
pub(crate) fn first_level(
    sample: &[u64],
    bounds: Bounds,
    buckets: u32,
    bits: u32,
) -> Vec<(Interval, Origin)> {
    debug_assert!(sample.len() == SAMPLE && sample.windows(2).all(|w| w[0] <= w[1]));
    let top = if bits == 32 {
        u32::MAX as u64
    } else {
        u64::MAX
    };
    let open = bounds == Bounds::Open;
    let (lo_all, hi_all) = match bounds {
        Bounds::Exact { min, max } => (min, max),
        // With open bounds the largest key (every NaN's) gets a bucket of its own, whose total
        // is the NaN count.
        Bounds::Open if sample[0] == top => {
            return vec![
                (Interval::new(0, top - 1, 1), Origin::Outside),
                (Interval::new(top, top, 1), Origin::Sample),
            ];
        }
        Bounds::Open => (sample[0], sample[SAMPLE - 1].min(top - 1)),
    };
    let repeated = |v: u64| {
        let first = sample.partition_point(|&s| s < v);
        first + 1 < sample.len() && sample[first + 1] == v
    };
    // Starts of the pieces covering lo_all..=hi_all; a repeated value v gets the piece v..=v.
    let mut starts = vec![lo_all];
    let single = |v: u64, starts: &mut Vec<u64>| {
        starts.push(v);
        if v < hi_all {
            starts.push(v + 1);
        }
    };
    if repeated(lo_all) {
        single(lo_all, &mut starts);
    }
    for &p in &PIVOTS {
        let v = sample[p].clamp(lo_all, hi_all);
        if repeated(v) {
            single(v, &mut starts);
        } else {
            starts.push(v);
        }
    }
    if repeated(hi_all) {
        single(hi_all, &mut starts);
    }
    starts.sort_unstable();
    starts.dedup();
    let pieces: Vec<(u64, u64)> = starts
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, starts.get(i + 1).map_or(hi_all, |&next| next - 1)))
        .collect();
    let below = open && lo_all > 0;
    let above = open && hi_all < top - 1;
    let singles = pieces.iter().filter(|&&(lo, hi)| lo == hi).count()
        + below as usize
        + above as usize
        + open as usize;
    let ranges = pieces.len() + below as usize + above as usize + open as usize - singles;
    let share = (buckets as usize)
        .saturating_sub(singles)
        .max(ranges)
        .checked_div(ranges)
        .unwrap_or(1) as u32;
    let mut out = Vec::with_capacity(pieces.len() + 3);
    if below {
        out.push((Interval::new(0, lo_all - 1, 1), Origin::Outside));
    }
    for (lo, hi) in pieces {
        let b = if lo == hi { 1 } else { share };
        out.push((Interval::new(lo, hi, b), Origin::Sample));
    }
    if above {
        out.push((Interval::new(hi_all + 1, top - 1, 1), Origin::Outside));
    }
    if open {
        out.push((Interval::new(top, top, 1), Origin::Sample));
    }
    out
}

/// Buckets for segments of `counts` candidates sharing `budget` buckets in proportion to their
/// sizes, at least two each (so every segment splits): `2 + floor(c · spare / total)` for the
/// `spare = budget − 2 · segments` left. Needs `2 · counts.len() <= budget`.
pub(crate) fn allot(counts: &[u64], budget: u32) -> Vec<u32> {
    let spare = (budget as u128).saturating_sub(2 * counts.len() as u128);
    let total: u128 = counts.iter().map(|&c| c as u128).sum::<u128>().max(1);
    counts
        .iter()
        .map(|&c| 2 + (c as u128 * spare / total) as u32)
        .collect()
}

/// The longest chunk: its per-bucket counts are `u32`.
const MAX_CHUNK: u64 = 1 << 31;

/// One segment of a level: `len` elements from `start` of the level's buffer, and its intervals
/// (ascending, disjoint, holding every element).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SegmentPlan {
    /// Its first element.
    pub start: u64,
    /// Its number of elements.
    pub len: u64,
    /// Its intervals.
    pub intervals: Vec<Interval>,
}

/// The descriptors of a level's launches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The chunks, one a block of the count and write kernels.
    pub chunks: Vec<Chunk>,
    /// The segments.
    pub segments: Vec<Segment>,
    /// The intervals of all segments, each segment's in a run.
    pub intervals: Vec<IntervalWords>,
    /// The `u32` counts all chunks write.
    pub partial_len: usize,
    /// Buckets of the level (all segments).
    pub buckets: usize,
    /// The most buckets of one segment (the count kernel's shared counters).
    pub max_segment_buckets: usize,
    /// The most mask words one segment's buckets span (the write kernel's shared copy).
    pub max_segment_words: usize,
    /// Groups of [`TOTAL_GROUP`] chunks of the segment with the most chunks.
    pub total_groups: usize,
    /// The plans, kept to place buckets back in their segments and intervals.
    pub plans: Vec<SegmentPlan>,
    /// Each segment's first bucket.
    first_bucket: Vec<u64>,
}

impl Layout {
    /// The chunks of the level.
    pub(crate) fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The segments of the level.
    pub(crate) fn segment_count(&self) -> usize {
        self.plans.len()
    }

    /// Where bucket `j` of the level is: (segment, interval, bucket inside the interval).
    pub(crate) fn locate(&self, j: u64) -> (usize, usize, u32) {
        let s = self.first_bucket.partition_point(|&f| f <= j) - 1;
        let local = j - self.first_bucket[s];
        let plan = &self.plans[s];
        let mut base = 0u64;
        for (i, iv) in plan.intervals.iter().enumerate() {
            if local < base + iv.buckets as u64 {
                return (s, i, (local - base) as u32);
            }
            base += iv.buckets as u64;
        }
        let last = plan.intervals.len() - 1;
        (s, last, plan.intervals[last].buckets - 1)
    }

    /// The keys of bucket `j` of the level, `None` when it holds none.
    pub(crate) fn keys_of(&self, j: u64) -> Option<(u64, u64)> {
        let (s, i, b) = self.locate(j);
        self.plans[s].intervals[i].keys_of(b)
    }
}

/// The interval lookup table of a segment: its base (the second interval's lowest key; keys
/// below it are in the first) and the shift that maps the keys up to the last interval's lowest
/// key onto [`TABLE_BINS`] bins.
fn lookup(intervals: &[Interval]) -> (u64, u32) {
    if intervals.len() < 2 {
        return (0, 0);
    }
    let base = intervals[1].lo;
    let span = intervals[intervals.len() - 1].lo - base;
    let bins = TABLE_BINS.trailing_zeros();
    (
        base,
        (u64::BITS - span.leading_zeros()).saturating_sub(bins),
    )
}

/// The descriptors of a level over `plans`, with about `target_chunks` chunks in all (each
/// segment's share in proportion to its length, at least one, none shorter than `min_chunk`
/// unless the segment is) and chunk bounds on multiples of 16 elements from the segment's start.
pub(crate) fn layout(plans: Vec<SegmentPlan>, target_chunks: usize, min_chunk: usize) -> Layout {
    let total_len: u128 = plans.iter().map(|p| p.len as u128).sum::<u128>().max(1);
    let (mut chunks, mut segments, mut intervals) = (Vec::new(), Vec::new(), Vec::new());
    let mut first_bucket = Vec::with_capacity(plans.len());
    let (mut partial, mut bucket_base, mut iv_base) = (0u64, 0u64, 0u64);
    let (mut max_buckets, mut max_words, mut max_chunks) = (0usize, 0usize, 0usize);
    for (s, plan) in plans.iter().enumerate() {
        let nb: u64 = plan.intervals.iter().map(|iv| iv.buckets as u64).sum();
        let share = (target_chunks as u128 * plan.len as u128).div_ceil(total_len) as u64;
        let most = plan.len.div_ceil(min_chunk.max(1) as u64).max(1);
        let least = plan.len.div_ceil(MAX_CHUNK).max(1);
        let count = share.clamp(1, most).max(least);
        let size = plan.len.div_ceil(count).div_ceil(16).max(1) * 16;
        let count = plan.len.div_ceil(size).max(1);
        let first_chunk = chunks.len() as u64;
        for c in 0..count {
            chunks.push(Chunk {
                begin: plan.start + (c * size).min(plan.len),
                end: plan.start + ((c + 1) * size).min(plan.len),
                segment: s as u64,
                counts: partial,
            });
            partial += nb;
        }
        let mut local = 0u64;
        debug_assert!(!plan.intervals.is_empty() && plan.intervals.len() <= MAX_INTERVALS);
        for iv in &plan.intervals {
            intervals.push(iv.descriptor(local));
            local += iv.buckets as u64;
        }
        let (table_base, table_shift) = lookup(&plan.intervals);
        segments.push(Segment {
            first_interval: iv_base,
            intervals: plan.intervals.len() as u64,
            first_bucket: bucket_base,
            buckets: nb,
            first_chunk,
            chunk_end: first_chunk + count,
            lookup_base: table_base,
            lookup_shift: table_shift as u64,
        });
        first_bucket.push(bucket_base);
        let words = ((bucket_base + nb.max(1) - 1) >> 5) - (bucket_base >> 5) + 1;
        max_words = max_words.max(words as usize);
        max_buckets = max_buckets.max(nb as usize);
        max_chunks = max_chunks.max(count as usize);
        iv_base += plan.intervals.len() as u64;
        bucket_base += nb;
    }
    Layout {
        chunks,
        segments,
        intervals,
        partial_len: partial as usize,
        buckets: bucket_base as usize,
        max_segment_buckets: max_buckets,
        max_segment_words: max_words,
        total_groups: max_chunks.div_ceil(TOTAL_GROUP),
        plans,
        first_bucket,
    }
}

/// Unit tests of the projection, the first level, the allotment and the layout.
#[cfg(test)]
mod tests {
    use super::*;

    /// The projection is monotone, covers its buckets from 0, and `keys_of` is its exact
    /// inverse, for narrow, wide and full-width intervals of both key widths.
    #[test]
    fn projection_and_its_inverse_agree() {
        let cases: &[(u64, u64, u32, u32)] = &[
            (0, 9, 16, 32),
            (5, 5, 7, 32),
            (100, 1099, 7, 32),
            (0, u32::MAX as u64, 2, 32),
            (0, u32::MAX as u64, 16384, 32),
            (3, u32::MAX as u64 - 2, 1000, 32),
            (0, u64::MAX, 2, 64),
            (0, u64::MAX, 16384, 64),
            (1 << 40, (1 << 40) + 12345, 100, 64),
            (u64::MAX - 3, u64::MAX, 2, 64),
        ];
        for &(lo, hi, b, _) in cases {
            let iv = Interval::new(lo, hi, b);
            assert!(iv.buckets >= 1 && iv.buckets <= b.max(1));
            assert_eq!(iv.bucket(lo), 0, "{iv:?}");
            assert_eq!(
                iv.bucket(hi),
                iv.buckets - 1,
                "{iv:?}: the last key fills the last bucket"
            );
            let mut covered = 0u128;
            let mut prev_end: Option<u64> = None;
            for j in 0..iv.buckets {
                let Some((a, z)) = iv.keys_of(j) else {
                    continue;
                };
                assert!(a <= z);
                if let Some(e) = prev_end {
                    assert_eq!(a, e + 1, "{iv:?} bucket {j}: ranges are contiguous");
                }
                prev_end = Some(z);
                covered += (z - a) as u128 + 1;
                for key in [a, z, a + (z - a) / 2] {
                    assert_eq!(iv.bucket(key), j, "{iv:?} key {key}");
                }
                if a > lo {
                    assert!(iv.bucket(a - 1) < j);
                }
            }
            assert_eq!(covered, (hi - lo) as u128 + 1, "{iv:?}");
        }
    }

    /// Every interval with at least two buckets splits: its smallest and largest keys land in
    /// different buckets, so a level always narrows a segment's keys.
    #[test]
    fn two_buckets_always_split() {
        for bits in [32u32, 64] {
            let max = if bits == 32 {
                u32::MAX as u64
            } else {
                u64::MAX
            };
            for width in [1u64, 2, 3, 4, 5, 1000, max / 2, max - 2, max - 1, max] {
                for b in [2u32, 3, 1000] {
                    let iv = Interval::new(0, width, b);
                    assert!(
                        iv.bucket(width) >= 1,
                        "width {width} buckets {b} bits {bits}"
                    );
                }
            }
        }
    }

    fn sorted_sample(f: impl Fn(usize) -> u64) -> Vec<u64> {
        let mut s: Vec<u64> = (0..SAMPLE).map(f).collect();
        s.sort_unstable();
        s
    }

    /// The first level covers its bounds without gaps or overlaps, gives repeated pivots an
    /// interval of their own, and with open bounds reaches from key 0 to the largest key.
    #[test]
    fn first_level_covers_and_isolates_repeats() {
        let distinct = sorted_sample(|i| 1000 + 7 * i as u64);
        let few = sorted_sample(|i| 500 + 100 * (i % 5) as u64);
        let equal = sorted_sample(|_| 42);
        for sample in [&distinct, &few, &equal] {
            for (bounds, lo, hi) in [
                (
                    Bounds::Exact {
                        min: 10,
                        max: 1 << 20,
                    },
                    10u64,
                    1u64 << 20,
                ),
                (Bounds::Open, 0, u32::MAX as u64),
            ] {
                let ivs = first_level(sample, bounds, 16384, 32);
                assert!(ivs.len() <= MAX_INTERVALS);
                assert_eq!(ivs[0].0.lo, lo);
                assert_eq!(ivs.last().unwrap().0.hi, hi);
                for w in ivs.windows(2) {
                    assert_eq!(w[1].0.lo, w[0].0.hi + 1);
                }
                let total: u32 = ivs.iter().map(|(iv, _)| iv.buckets).sum();
                assert!(total <= 16384, "{total}");
            }
        }
        let ivs = first_level(&few, Bounds::Open, 16384, 64);
        for v in [500u64, 600, 700, 800, 900] {
            assert!(
                ivs.iter().any(|(iv, _)| iv.lo == v && iv.hi == v),
                "{v} gets its own interval"
            );
        }
        assert_eq!(ivs[0].1, Origin::Outside);
        assert_eq!(ivs[ivs.len() - 2].1, Origin::Outside);
        let last = ivs.last().unwrap().0;
        assert_eq!(
            (last.lo, last.hi),
            (u64::MAX, u64::MAX),
            "the NaN key alone"
        );
        let nans = sorted_sample(|i| if i < 700 { i as u64 } else { u64::MAX });
        let ivs = first_level(&nans, Bounds::Open, 16384, 64);
        assert_eq!(ivs.last().unwrap().0.lo, u64::MAX);
        assert_eq!(ivs[ivs.len() - 2].0.hi, u64::MAX - 1);
        let all_nan = sorted_sample(|_| u32::MAX as u64);
        let ivs = first_level(&all_nan, Bounds::Open, 16384, 32);
        assert_eq!(ivs.len(), 2);
        let ivs = first_level(&distinct, Bounds::Open, 16384, 64);
        let wide = ivs.iter().filter(|(iv, _)| iv.buckets > 1).count();
        assert_eq!(
            wide, 16,
            "16 density intervals (the outer ones have one bucket)"
        );
    }

    /// The lookup table's bins cover the intervals from the second one's start to the last
    /// one's, each bin's first key then finds its interval.
    #[test]
    fn lookup_spans_the_intervals() {
        let ivs: Vec<Interval> = [
            (0u64, 99u64),
            (100, 5000),
            (5001, 1 << 40),
            ((1 << 40) + 1, u64::MAX),
        ]
        .iter()
        .map(|&(lo, hi)| Interval::new(lo, hi, 64))
        .collect();
        let (base, shift) = lookup(&ivs);
        assert_eq!(base, 100);
        assert!(((1u64 << 40) + 1 - base) >> shift < TABLE_BINS);
        assert!(((1u64 << 40) + 1 - base) >> shift >= TABLE_BINS / 2);
        assert_eq!(lookup(&ivs[..1]), (0, 0));
    }

    /// Allotments are proportional, at least two, and within the budget.
    #[test]
    fn allotment_is_proportional_and_bounded() {
        let b = allot(&[100, 300, 0, 600], 1000);
        assert_eq!(b.len(), 4);
        assert!(b.iter().all(|&x| x >= 2));
        assert!(b.iter().sum::<u32>() <= 1000);
        assert!(b[3] > b[1] && b[1] > b[0] && b[0] > b[2]);
        assert_eq!(allot(&[5; 8], 16), vec![2; 8]);
    }

    /// Chunks tile each segment on 16-element bounds, and counts' offsets follow the buckets.
    #[test]
    fn layout_tiles_segments() {
        let iv = |n: u64, b: u32| Interval::new(0, n, b);
        let plans = vec![
            SegmentPlan {
                start: 0,
                len: 100_000,
                intervals: vec![iv(999, 100), iv(5000, 50)],
            },
            SegmentPlan {
                start: 100_003,
                len: 17,
                intervals: vec![iv(10, 4)],
            },
            SegmentPlan {
                start: 100_020,
                len: 50_000,
                intervals: vec![iv(1 << 20, 1000)],
            },
        ];
        let l = layout(plans, 10, 1000);
        assert_eq!(l.buckets, 150 + 4 + 1000);
        assert_eq!(l.max_segment_buckets, 1000);
        let mut covered = vec![0u64; 3];
        let mut partial = 0;
        for c in &l.chunks {
            let s = c.segment as usize;
            let plan = &l.plans[s];
            assert!(c.begin <= c.end && c.begin >= plan.start && c.end <= plan.start + plan.len);
            assert_eq!((c.begin - plan.start) % 16, 0);
            assert_eq!(c.counts, partial);
            partial += l.segments[s].buckets;
            covered[s] += c.end - c.begin;
        }
        assert_eq!(covered, vec![100_000, 17, 50_000]);
        assert_eq!(l.partial_len as u64, partial);
        assert_eq!(l.locate(0), (0, 0, 0));
        assert_eq!(l.locate(149), (0, 1, 49));
        assert_eq!(l.locate(150), (1, 0, 0));
        assert_eq!(l.locate(154), (2, 0, 0));
        assert_eq!(l.keys_of(153).map(|(_, last)| last), Some(10));
    }
}
