//! Bucket definitions, as every rank holds them: pivot intervals of keys, each cut into
//! buckets by a linear projection (Blanchard et al.'s `slopes` and `preCount`).
//!
//! An interval `[lo, hi]` of keys gets `b >= 2` buckets. Where both ends are finite numbers a
//! different `f64` apart, the projection is of the values,
//! `floor((v - lo) * b / (hi - lo))` clamped to `b - 1`, which spreads evenly distributed
//! data evenly; otherwise (infinities, NaN ordered last, `-0.0` against `+0.0`, 64-bit integers
//! too close for `f64`) it is of the keys, in exact integer arithmetic. Either projection is
//! monotone in the key, so every bucket is an interval of keys and buckets are ordered like
//! their values; and `lo` and `hi` always land in different buckets, so an interval that holds
//! two distinct values is always split: exactness and progress never depend on rounding.
//!
//! The first pass's plan is binned ([`BinnedSpec`]): the keys from the smallest to the largest
//! cut into bins of `2^shift` keys, each with a power of two of buckets of equal key width, so
//! that a key's bucket is a shift away from its bin's (`(key - lo) * b / 2^shift`, exactly), a
//! table read on a GPU.

use std::marker::PhantomData;

use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};

/// How an interval's keys map to its buckets.
#[derive(Clone, Copy, Debug)]
enum Projection {
    /// `floor((key - lo) * b / (hi - lo + 1))`, exactly.
    Keys { span: u128 },
    /// `floor((v - lo) * scale)`, clamped, for the values `v` of the keys.
    Values { lo: f64, scale: f64 },
}

/// One pivot interval: keys `lo..=hi`, buckets `first..first + buckets`.
#[derive(Clone, Copy, Debug)]
struct Interval {
    lo: u64,
    hi: u64,
    first: usize,
    buckets: usize,
    projection: Projection,
}

/// The buckets of one pass over the data: disjoint pivot intervals in ascending order.
#[derive(Clone, Debug)]
pub(crate) struct BucketPlan<T> {
    lows: Vec<u64>,
    intervals: Vec<Interval>,
    buckets: usize,
    /// Where the bins lie, when the plan is binned.
    binned: Option<Bins>,
    /// A word a bin of a binned plan: its first bucket, and above bit 32 the shift from a
    /// key's offset in the bin to its bucket there (as the GPU kernels read them).
    bin_words: Vec<u64>,
    _element: PhantomData<T>,
}

/// The bins of a binned plan: bins of `2^shift` keys from `base` to `max`, intervals from
/// `first` on of the plan (one a word of the plan's `bin_words`).
#[derive(Clone, Copy, Debug)]
struct Bins {
    base: u64,
    shift: u32,
    max: u64,
    first: usize,
}

impl Bins {
    /// The bucket of `key` (in `base..=max`) from the bins' words.
    #[inline]
    fn bucket(self, words: &[u64], key: u64) -> usize {
        let rel = key - self.base;
        let word = words[(rel >> self.shift) as usize];
        let offset = rel & ((1u64 << self.shift) - 1);
        (word as u32) as usize + (offset >> (word >> 32)) as usize
    }
}

/// A binned plan's word for "no such bucket" in its device table (read as -1 there).
const NO_BUCKET: u64 = u64::MAX;

/// Bins a binned plan has at most.
pub(crate) const MAX_BINS: usize = 256;

/// A binned plan as the root defines it and sends it: bins of `2^shift` keys from `base` on,
/// the last one ending at `max`, bin `i` cut into `2^exps[i]` buckets (at most `2^shift`).
/// An open plan also counts the keys outside its bins, from `lowest` to `top`: a bucket
/// below the bins (`lowest..base`), one above them (`max + 1..top`), and one for `top`
/// alone (NaN's key, when `top` is the largest key); a closed one has `lowest == base` and
/// `top == max`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BinnedSpec {
    pub base: u64,
    pub shift: u32,
    pub max: u64,
    pub exps: Vec<u8>,
    pub lowest: u64,
    pub top: u64,
}

impl BinnedSpec {
    /// The bins of the keys `min..=max` with buckets in proportion to the share of the keys
    /// of `sample` in each, rounded to powers of two, `buckets` at most in all: each bin's
    /// share rounded down, then doubled, the bins furthest below their share first, while the
    /// buckets last.
    pub(crate) fn from_sample(min: u64, max: u64, sample: &[u64], buckets: usize) -> Self {
        let range = max - min;
        let mut shift = 0;
        while (range >> shift) >= MAX_BINS as u64 {
            shift += 1;
        }
        let bins = (range >> shift) as usize + 1;
        let mut counts = vec![0usize; bins];
        for &k in sample.iter().filter(|&&k| (min..=max).contains(&k)) {
            counts[((k - min) >> shift) as usize] += 1;
        }
        // A bucket for every bin, the rest in proportion to the sample, so that the powers of
        // two rounded down from the shares never pass `buckets`.
        let spare = buckets.saturating_sub(bins) as f64;
        let total = counts.iter().sum::<usize>().max(1) as f64;
        let widest = shift.min(31);
        let shares: Vec<f64> = counts
            .iter()
            .map(|&c| 1.0 + c as f64 * spare / total)
            .collect();
        let mut exps: Vec<u8> = shares
            .iter()
            .map(|s| (s.log2().floor() as u32).min(widest) as u8)
            .collect();
        let mut left = buckets.saturating_sub(exps.iter().map(|&e| 1usize << e).sum());
        let mut order: Vec<usize> = (0..bins).collect();
        order.sort_by(|&a, &b| {
            let below = |i: usize| shares[i] / (1u64 << exps[i]) as f64;
            below(b).total_cmp(&below(a))
        });
        for i in order {
            let size = 1usize << exps[i];
            if size <= left && (exps[i] as u32) < widest {
                exps[i] += 1;
                left -= size;
            }
        }
        BinnedSpec {
            base: min,
            shift,
            max,
            exps,
            lowest: min,
            top: max,
        }
    }

    /// An open plan of every key up to `top`, its bins over the keys `extremes` (clamped
    /// below `top`; the key below `top` when there are none), with buckets in proportion to
    /// `sample` ([`from_sample`](Self::from_sample) with three buckets fewer, left for the
    /// keys outside them): for a first pass whose extremes are not known.
    pub(crate) fn open_from_sample(
        sample: &[u64],
        extremes: Option<(u64, u64)>,
        top: u64,
        buckets: usize,
    ) -> Self {
        let below_top = top.saturating_sub(1);
        let (min, max) = extremes.unwrap_or((below_top, below_top));
        let max = max.min(below_top);
        let min = min.min(max);
        let spec = Self::from_sample(min, max, sample, buckets.saturating_sub(3).max(1));
        BinnedSpec {
            lowest: 0,
            top,
            ..spec
        }
    }

    /// Words per bin's exponent on the wire (packed eight to a word).
    const EXPS_PER_WORD: usize = 8;

    /// The plan as words: `base, shift, max, bins, lowest, top`, then the exponents packed.
    pub(crate) fn to_words(&self) -> Vec<u64> {
        let mut words = vec![
            self.base,
            self.shift as u64,
            self.max,
            self.exps.len() as u64,
            self.lowest,
            self.top,
        ];
        words.extend(self.exps.chunks(Self::EXPS_PER_WORD).map(|c| {
            c.iter()
                .enumerate()
                .fold(0u64, |w, (i, &e)| w | (e as u64) << (8 * i))
        }));
        words
    }

    /// The inverse of [`to_words`](Self::to_words) (checked: the bins cover `base..=max`,
    /// inside `lowest..=top`).
    pub(crate) fn from_words(words: &[u64]) -> Result<Self> {
        let [base, shift, max, bins, lowest, top, ref packed @ ..] = *words else {
            return Err(malformed("its bins are cut short"));
        };
        let bins = bins as usize;
        let span_ok = shift < 64 && max >= base && ((max - base) >> shift) as usize + 1 == bins;
        let inside = lowest <= base && max <= top;
        if !span_ok
            || !inside
            || bins > MAX_BINS
            || packed.len() != bins.div_ceil(Self::EXPS_PER_WORD)
        {
            return Err(malformed("its bins do not cover its keys"));
        }
        let exps: Vec<u8> = (0..bins)
            .map(|i| (packed[i / Self::EXPS_PER_WORD] >> (8 * (i % Self::EXPS_PER_WORD))) as u8)
            .collect();
        if exps.iter().any(|&e| e as u64 > shift) {
            return Err(malformed("a bin has more buckets than keys"));
        }
        Ok(BinnedSpec {
            base,
            shift: shift as u32,
            max,
            exps,
            lowest,
            top,
        })
    }

    /// The bins as intervals: `lo, hi, buckets` (the last one ending at `max`).
    pub(crate) fn bins(&self) -> impl Iterator<Item = IntervalSpec> + '_ {
        self.exps.iter().enumerate().map(|(i, &e)| {
            let lo = self.base + ((i as u64) << self.shift);
            IntervalSpec {
                lo,
                hi: lo.saturating_add((1u64 << self.shift) - 1).min(self.max),
                buckets: 1 << e,
            }
        })
    }

    /// Every interval of the plan, ascending: the bucket below the bins (when `lowest <
    /// base`), the bins, the bucket above them (when `max + 1 < top`) and `top`'s own (when
    /// `max < top`).
    pub(crate) fn intervals(&self) -> impl Iterator<Item = IntervalSpec> + '_ {
        let one = |lo: u64, hi: u64| IntervalSpec { lo, hi, buckets: 1 };
        let below = (self.lowest < self.base).then(|| one(self.lowest, self.base - 1));
        let above =
            (self.max < self.top.saturating_sub(1)).then(|| one(self.max + 1, self.top - 1));
        let top = (self.max < self.top).then(|| one(self.top, self.top));
        below.into_iter().chain(self.bins()).chain(above).chain(top)
    }
}

/// An interval as the root defines it and sends it: keys `lo..=hi` in `buckets` buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IntervalSpec {
    pub lo: u64,
    pub hi: u64,
    pub buckets: usize,
}

/// Words per interval on the wire.
pub(crate) const WORDS_PER_INTERVAL: usize = 3;

impl IntervalSpec {
    /// The intervals as words: `lo, hi, buckets` each.
    pub(crate) fn to_words(specs: &[IntervalSpec]) -> Vec<u64> {
        specs
            .iter()
            .flat_map(|s| [s.lo, s.hi, s.buckets as u64])
            .collect()
    }
}

impl<T: Element> BucketPlan<T> {
    /// The plan of intervals received as words (checked: ascending, disjoint, `b >= 1`).
    pub(crate) fn from_words(words: &[u64]) -> Result<Self> {
        if !words.len().is_multiple_of(WORDS_PER_INTERVAL) {
            return Err(malformed("its length is not a multiple of 3"));
        }
        let mut intervals = Vec::with_capacity(words.len() / WORDS_PER_INTERVAL);
        let mut first = 0usize;
        for w in words.chunks_exact(WORDS_PER_INTERVAL) {
            let (lo, hi, buckets) = (w[0], w[1], w[2] as usize);
            let disjoint = intervals.last().is_none_or(|p: &Interval| p.hi < lo);
            if lo > hi || buckets == 0 || !disjoint || lo > T::Key::MAX.to_u64() {
                return Err(malformed("its intervals are not ascending and disjoint"));
            }
            intervals.push(Interval {
                lo,
                hi,
                first,
                buckets,
                projection: projection::<T>(lo, hi, buckets),
            });
            first += buckets;
        }
        Ok(BucketPlan {
            lows: intervals.iter().map(|i| i.lo).collect(),
            intervals,
            buckets: first,
            binned: None,
            bin_words: Vec::new(),
            _element: PhantomData,
        })
    }

    /// The plan of a binned spec: its bins, their keys projected exactly over `2^shift` keys
    /// each, and an open plan's buckets outside them.
    pub(crate) fn from_binned(spec: &BinnedSpec) -> Result<Self> {
        if spec.top > T::Key::MAX.to_u64() {
            return Err(malformed("its bins lie above every key"));
        }
        let mut first = 0usize;
        let intervals: Vec<Interval> = spec
            .intervals()
            .map(|iv| {
                let in_bins = (spec.base..=spec.max).contains(&iv.lo);
                let span = match in_bins {
                    true => 1u128 << spec.shift,
                    false => (iv.hi - iv.lo) as u128 + 1,
                };
                let interval = Interval {
                    lo: iv.lo,
                    hi: iv.hi,
                    first,
                    buckets: iv.buckets,
                    projection: Projection::Keys { span },
                };
                first += iv.buckets;
                interval
            })
            .collect();
        let first_bin = (spec.lowest < spec.base) as usize;
        let bins = &intervals[first_bin..first_bin + spec.exps.len()];
        let bin_words = bins
            .iter()
            .map(|i| {
                let log = i.buckets.trailing_zeros();
                i.first as u64 | ((spec.shift - log) as u64) << 32
            })
            .collect();
        Ok(BucketPlan {
            lows: intervals.iter().map(|i| i.lo).collect(),
            intervals,
            buckets: first,
            binned: Some(Bins {
                base: spec.base,
                shift: spec.shift,
                max: spec.max,
                first: first_bin,
            }),
            bin_words,
            _element: PhantomData,
        })
    }

    /// A binned plan as the GPU kernels read it (`BIN_HEADER` in kernels/distributed.cu): the
    /// first key, the width in bits, the last key, the bins, the buckets below and above the
    /// bins, the top key and its bucket ([`NO_BUCKET`] where the plan has none), then a word a
    /// bin: its first bucket, and above bit 32 the shift from a key's place in the bin to its
    /// bucket there. `None` for a plan of intervals.
    pub(crate) fn device_table(&self) -> Option<Vec<u64>> {
        let bins = self.binned?;
        let of = |iv: Option<&Interval>| iv.map_or(NO_BUCKET, |i| i.first as u64);
        let below = of(self.intervals[..bins.first].first());
        let outside = &self.intervals[bins.first + self.bin_words.len()..];
        // Above the bins: a bucket of keys up to `top`, then `top`'s own (or that alone).
        let (above, top) = match outside {
            [above, top] => (Some(above), Some(top)),
            [top] => (None, Some(top)),
            _ => (None, None),
        };
        let top_key = top.map_or(u64::MAX, |t| t.lo);
        let mut words = vec![
            bins.base,
            bins.shift as u64,
            bins.max,
            self.bin_words.len() as u64,
            below,
            of(above),
            top_key,
            of(top),
        ];
        words.extend_from_slice(&self.bin_words);
        Some(words)
    }

    /// The number of intervals.
    pub(crate) fn intervals(&self) -> usize {
        self.intervals.len()
    }

    /// The intervals as the GPU kernels read them, 8 words each (see `kernels/distributed.cu`):
    /// `lo, hi, span` (two words), the projection's `lo` and `scale` (as bits), `first |
    /// buckets << 32`, and the projection (0 keys, 1 values).
    pub(crate) fn device_words(&self) -> Vec<u64> {
        self.intervals
            .iter()
            .flat_map(|iv| {
                let packed = iv.first as u64 | (iv.buckets as u64) << 32;
                match iv.projection {
                    Projection::Keys { span } => [
                        iv.lo,
                        iv.hi,
                        span as u64,
                        (span >> 64) as u64,
                        0,
                        0,
                        packed,
                        0,
                    ],
                    Projection::Values { lo, scale } => {
                        [iv.lo, iv.hi, 0, 0, lo.to_bits(), scale.to_bits(), packed, 1]
                    }
                }
            })
            .collect()
    }

    /// The number of buckets.
    pub(crate) fn buckets(&self) -> usize {
        self.buckets
    }

    /// The bucket of a key, `None` when no interval holds it.
    #[inline]
    pub(crate) fn bucket(&self, key: T::Key) -> Option<usize> {
        let key = key.to_u64();
        match self.binned {
            // The bin by a shift, and within it the key projection over 2^shift keys onto a
            // power of two of buckets, also a shift.
            Some(bins) if (bins.base..=bins.max).contains(&key) => {
                Some(bins.bucket(&self.bin_words, key))
            }
            _ => self.bucket_in_intervals(key),
        }
    }

    /// The bucket of a key by a search of the intervals (a plan of intervals, or a key
    /// outside a binned plan's bins), `None` when no interval holds it.
    #[inline(never)]
    fn bucket_in_intervals(&self, key: u64) -> Option<usize> {
        let j = self.lows.partition_point(|&lo| lo <= key);
        let iv = self.intervals.get(j.checked_sub(1)?)?;
        if key > iv.hi {
            return None;
        }
        let local = match iv.projection {
            Projection::Keys { span } => {
                ((key - iv.lo) as u128 * iv.buckets as u128 / span) as usize
            }
            Projection::Values { lo, scale } => {
                let t = (T::from_key(T::Key::from_u64(key)).to_f64() - lo) * scale;
                (t as usize).min(iv.buckets - 1)
            }
        };
        Some(iv.first + local)
    }
}

/// The projection of the interval `lo..=hi` onto `buckets` buckets.
fn projection<T: Element>(lo: u64, hi: u64, buckets: usize) -> Projection {
    let value = |k: u64| T::from_key(T::Key::from_u64(k)).to_f64();
    let (lo_v, hi_v) = (value(lo), value(hi));
    let width = hi_v - lo_v;
    if lo_v.is_finite() && hi_v.is_finite() && width.is_finite() && width > 0.0 {
        Projection::Values {
            lo: lo_v,
            scale: buckets as f64 / width,
        }
    } else {
        Projection::Keys {
            span: (hi - lo) as u128 + 1,
        }
    }
}

fn malformed(why: &str) -> Error {
    Error::Communication(format!("a bucket plan from the root is malformed: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan<T: Element>(specs: &[IntervalSpec]) -> BucketPlan<T> {
        BucketPlan::from_words(&IntervalSpec::to_words(specs)).unwrap()
    }

    #[test]
    fn buckets_are_monotone_and_split_both_ends() {
        let lo = (-3.5f64).to_key().to_u64();
        let hi = 1e300f64.to_key().to_u64();
        let p = plan::<f64>(&[IntervalSpec { lo, hi, buckets: 7 }]);
        let values = [-3.5, -3.4, -0.0, 0.0, 1e-300, 2.0, 1e299, 1e300];
        let buckets: Vec<_> = values
            .iter()
            .map(|v| p.bucket(v.to_key()).unwrap())
            .collect();
        assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
        assert_eq!((buckets[0], buckets[7]), (0, 6));
        assert_eq!(p.bucket(1e301f64.to_key()), None);
        assert_eq!(p.bucket((-4.0f64).to_key()), None);
    }

    #[test]
    fn key_projection_separates_what_f64_cannot() {
        // Signed zeros, and 64-bit integers one apart above 2^53.
        let z = plan::<f32>(&[IntervalSpec {
            lo: (-0.0f32).to_key().to_u64(),
            hi: 0.0f32.to_key().to_u64(),
            buckets: 2,
        }]);
        assert_eq!(z.bucket((-0.0f32).to_key()), Some(0));
        assert_eq!(z.bucket(0.0f32.to_key()), Some(1));
        let big = u64::MAX - 1;
        let u = plan::<u64>(&[IntervalSpec {
            lo: big,
            hi: u64::MAX,
            buckets: 2,
        }]);
        assert_eq!((u.bucket(big), u.bucket(u64::MAX)), (Some(0), Some(1)));
        // The whole key range of u64, NaN-free, and of f64 with NaN (key MAX) on top.
        let all = plan::<u64>(&[IntervalSpec {
            lo: 0,
            hi: u64::MAX,
            buckets: 3,
        }]);
        assert_eq!((all.bucket(0), all.bucket(u64::MAX)), (Some(0), Some(2)));
        let nan = plan::<f64>(&[IntervalSpec {
            lo: 1.0f64.to_key(),
            hi: f64::NAN.to_key(),
            buckets: 4,
        }]);
        assert_eq!(nan.bucket(f64::NAN.to_key()), Some(3));
        assert_eq!(nan.bucket(1.0f64.to_key()), Some(0));
    }

    /// A binned plan: bins of 2^shift keys from the smallest key, buckets in proportion to
    /// the sample, each key's bucket a shift from its bin's; through words and back.
    #[test]
    fn binned_plans_cut_bins_by_shifts() {
        let (min, max) = (1_000u64, 1_000 + 5_000_000);
        let sample: Vec<u64> = (0..1024).map(|i| min + i * i * 4).collect();
        let spec = BinnedSpec::from_sample(min, max, &sample, 8192);
        assert!(spec.exps.len() <= MAX_BINS && ((max - min) >> spec.shift) < MAX_BINS as u64);
        assert_eq!(BinnedSpec::from_words(&spec.to_words()).unwrap(), spec);
        assert!(spec.to_words().len() <= 6 + MAX_BINS / 8);
        let p = BucketPlan::<u64>::from_binned(&spec).unwrap();
        assert!(
            p.buckets() <= 8192 && p.buckets() >= 4096,
            "{}",
            p.buckets()
        );
        let table = p.device_table().unwrap();
        let mut last = 0;
        let bins: Vec<IntervalSpec> = spec.intervals().collect();
        for key in (min..=max).step_by(997).chain([max]) {
            let b = p.bucket(key).unwrap();
            // The key projection over the bin's 2^shift keys, as for any interval.
            let j = ((key - min) >> spec.shift) as usize;
            let first: usize = bins[..j].iter().map(|i| i.buckets).sum();
            let local = ((key - bins[j].lo) as u128 * bins[j].buckets as u128) >> spec.shift;
            assert_eq!(b, first + local as usize, "{key}");
            assert!(b >= last);
            last = b;
            let rel = key - min;
            let entry = table[8 + (rel >> spec.shift) as usize];
            let local = (rel & ((1 << spec.shift) - 1)) >> (entry >> 32);
            assert_eq!(b as u64, (entry & 0xffff_ffff) + local, "{key}");
        }
        assert_eq!((p.bucket(min - 1), p.bucket(max + 1)), (None, None));
        // The sample's dense end (small keys) gets the most buckets a bin.
        assert!(spec.exps[0] > *spec.exps.last().unwrap());
        assert!(BinnedSpec::from_words(&spec.to_words()[..3]).is_err());
        let mut bad = spec.to_words();
        bad[3] += 1;
        assert!(BinnedSpec::from_words(&bad).is_err());
    }

    /// An open plan counts every key: those below its bins in its first bucket, those above
    /// in the one before last, and the top key (NaN's) alone in the last; on the host and in
    /// the device table alike.
    #[test]
    fn open_plans_count_the_keys_outside_their_bins() {
        let sample: Vec<u64> = (0..1024).map(|i| 5_000 + i * 3).collect();
        let top = u32::MAX as u64;
        let extremes = Some((5_000, 5_000 + 1023 * 3));
        let spec = BinnedSpec::open_from_sample(&sample, extremes, top, 512);
        assert_eq!(
            (spec.base, spec.max, spec.lowest),
            (5_000, 5_000 + 1023 * 3, 0)
        );
        assert_eq!(BinnedSpec::from_words(&spec.to_words()).unwrap(), spec);
        let p = BucketPlan::<u32>::from_binned(&spec).unwrap();
        let last = p.buckets() - 1;
        assert!(p.buckets() <= 512);
        let table = p.device_table().unwrap();
        assert_eq!(&table[4..8], &[0, last as u64 - 1, top, last as u64]);
        let inside: Vec<usize> = [spec.base, spec.max]
            .iter()
            .map(|&k| p.bucket(k as u32).unwrap())
            .collect();
        assert_eq!(inside, vec![1, last - 2]);
        for (key, bucket) in [
            (0, 0),
            (4_999, 0),
            (spec.max + 1, last - 1),
            (top - 1, last - 1),
        ] {
            assert_eq!(p.bucket(key as u32), Some(bucket), "{key}");
        }
        assert_eq!(p.bucket(u32::MAX), Some(last));
        // Draws all at the top (all NaN): bins of the key below it, the bucket above them
        // empty and left out; extremes at the top are clamped below it.
        let spec = BinnedSpec::open_from_sample(&[top; 3], None, top, 64);
        assert_eq!(
            BinnedSpec::open_from_sample(&[top; 3], Some((top, top)), top, 64),
            spec
        );
        let p = BucketPlan::<u32>::from_binned(&spec).unwrap();
        assert_eq!(p.buckets(), 3);
        assert_eq!(p.device_table().unwrap()[4..8], [0, NO_BUCKET, top, 2]);
        assert_eq!(
            [0, top - 1, top].map(|k| p.bucket(k as u32)),
            [Some(0), Some(1), Some(2)]
        );
        // A closed plan counts none of them.
        let closed = BinnedSpec::from_sample(5_000, 9_000, &sample, 512);
        let p = BucketPlan::<u32>::from_binned(&closed).unwrap();
        assert_eq!(
            p.device_table().unwrap()[4..8],
            [NO_BUCKET, NO_BUCKET, u64::MAX, NO_BUCKET]
        );
        assert_eq!((p.bucket(4_999), p.bucket(9_001)), (None, None));
    }

    #[test]
    fn intervals_number_their_buckets_in_order() {
        let p = plan::<i32>(&[
            IntervalSpec {
                lo: 0i32.to_key() as u64,
                hi: 9i32.to_key() as u64,
                buckets: 2,
            },
            IntervalSpec {
                lo: 20i32.to_key() as u64,
                hi: 29i32.to_key() as u64,
                buckets: 5,
            },
        ]);
        assert_eq!(p.buckets(), 7);
        assert_eq!(p.bucket(0i32.to_key()), Some(0));
        assert_eq!(p.bucket(9i32.to_key()), Some(1));
        assert_eq!(p.bucket(15i32.to_key()), None);
        assert_eq!(p.bucket(20i32.to_key()), Some(2));
        assert_eq!(p.bucket(29i32.to_key()), Some(6));
        assert!(BucketPlan::<i32>::from_words(&[5, 3, 2]).is_err());
        assert!(BucketPlan::<i32>::from_words(&[1, 3, 2, 3, 4, 2]).is_err());
    }
}
