//! The root's side of bucket-based distributed selection: where each wanted rank lies, which
//! buckets are active, and the buckets of the next pass.
//!
//! Exactness rests on counts alone: the global counts of a pass's buckets place every wanted
//! rank in one bucket (buckets are ordered intervals of keys); a bucket whose smallest and
//! largest keys (reduced over the ranks) are equal holds one value, which is then the value of
//! every rank in it. A bucket with two distinct values is always split by the next pass (see
//! [`plan`](super::plan)), so each pass shrinks every unresolved bucket and the search ends.
//! Nothing is inferred from a pass that did not reduce the data.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::select::prediction;

use super::plan::{BinnedSpec, IntervalSpec};
use super::shard::{SKETCH_GROUP, SKETCH_PIECE};

/// Samples the ranks draw together for the first pass (the paper's 1024).
pub(crate) const SAMPLES: u64 = 1024;

/// The most of the values the first count copies the keys of (as the sketch estimates the
/// buckets it keeps): above it, the count writes every value's bucket for the reduction
/// instead, which costs about as much.
const COPY_LIMIT: f64 = 0.3;

/// An interval of the current pass and the global rank of its first element (known from the
/// second pass on; the first pass's intervals cover every value, so it follows from counts).
#[derive(Clone, Copy, Debug)]
struct Region {
    spec: IntervalSpec,
    below: Option<u64>,
}

/// An active bucket: one that holds a wanted rank.
#[derive(Clone, Debug)]
struct Active {
    /// Its bucket number in the pass.
    bucket: usize,
    /// The global rank of its smallest element.
    below: u64,
    /// Its elements over all ranks.
    count: u64,
    /// The wanted ranks in it (a range of the pending list).
    targets: Range<usize>,
}

/// The root's record of a multiselection.
pub(crate) struct Search {
    /// Wanted ranks not yet found, with their result index, ascending by rank.
    pending: Vec<(u64, usize)>,
    /// The key found for each result index.
    found: Vec<u64>,
    regions: Vec<Region>,
    active: Vec<Active>,
    buckets: usize,
}

impl Search {
    /// A search for `ranks` (all below the number of values) with `buckets` buckets a pass.
    pub(crate) fn new(ranks: &[usize], buckets: usize) -> Self {
        let mut pending: Vec<(u64, usize)> = ranks
            .iter()
            .enumerate()
            .map(|(i, &r)| (r as u64, i))
            .collect();
        pending.sort_unstable();
        Search {
            pending,
            found: vec![0; ranks.len()],
            regions: Vec::new(),
            active: Vec::new(),
            buckets,
        }
    }

    /// Every rank found (all values equal `key`).
    pub(crate) fn resolve_all(&mut self, key: u64) {
        for &(_, i) in &self.pending {
            self.found[i] = key;
        }
        self.pending.clear();
    }

    /// The elements of the active buckets over all ranks.
    pub(crate) fn kept(&self) -> u64 {
        self.active.iter().map(|a| a.count).sum()
    }

    /// Whether the active buckets' `extremes` (as [`Search::refine`] takes them) leave some
    /// bucket with two distinct keys; false for extremes of the wrong length, which `refine`
    /// refuses.
    pub(crate) fn some_unsettled(&self, extremes: &[u64]) -> bool {
        extremes.len() == 2 * self.active.len() && extremes.chunks_exact(2).any(|e| e[0] != !e[1])
    }

    /// Whether every rank has been found.
    pub(crate) fn done(&self) -> bool {
        self.pending.is_empty()
    }

    /// The keys found, in the order the ranks were given.
    pub(crate) fn into_found(self) -> Vec<u64> {
        self.found
    }

    /// The first pass's plan: the keys from `min < max` in bins, with buckets in proportion
    /// to the sample's share of each ([`BinnedSpec::from_sample`]).
    pub(crate) fn sampled_plan(&mut self, min: u64, max: u64, sample: &[u64]) -> BinnedSpec {
        self.first_pass(BinnedSpec::from_sample(min, max, sample, self.buckets))
    }

    /// The first pass's plan when the extremes are not known: open, its bins from the
    /// smallest to the largest of the keys drawn below `top`, `extremes`, with buckets in
    /// proportion to `sample` ([`BinnedSpec::open_from_sample`]).
    pub(crate) fn open_plan(
        &mut self,
        sample: &[u64],
        extremes: Option<(u64, u64)>,
        top: u64,
    ) -> BinnedSpec {
        let spec = BinnedSpec::open_from_sample(sample, extremes, top, self.buckets);
        self.first_pass(spec)
    }

    /// Takes `spec` as the first pass's plan.
    fn first_pass(&mut self, spec: BinnedSpec) -> BinnedSpec {
        self.regions = spec
            .intervals()
            .map(|spec| Region { spec, below: None })
            .collect();
        spec
    }

    /// Whether the first pass's count should copy the keys of the buckets a sketch predicts
    /// (the ranks sketch first): when the windows of the pending ranks among `n` values, as a
    /// sketch estimates them, likely hold at most [`COPY_LIMIT`] of them.
    pub(crate) fn worth_sketching(&self, n: u64) -> bool {
        let ranks: Vec<usize> = self.pending.iter().map(|&(r, _)| r as usize).collect();
        let fraction = 1.0 / SKETCH_GROUP as f64;
        prediction::kept_share(n as usize, &ranks, fraction, self.buckets) <= COPY_LIMIT
    }

    /// The buckets of the first pass whose keys the count copies, from `sketch` (the ranks'
    /// sketches summed: every bucket's estimated global count, then the number of values
    /// read) among `n` values: those whose estimated positions meet the window of a pending
    /// rank ([`prediction::half_width`] of the sketch's share, and a group of runs more), in
    /// ascending order. None (an empty list) when the sketch read nothing or when the buckets
    /// would hold more than [`COPY_LIMIT`] of the values.
    pub(crate) fn predict(&self, sketch: &[u64], n: u64) -> Result<Vec<u64>> {
        let Some((&counted, estimates)) = sketch.split_last() else {
            return Err(inconsistent());
        };
        if estimates.len() != self.buckets_in_pass() {
            return Err(inconsistent());
        }
        if counted == 0 || n == 0 {
            return Ok(Vec::new());
        }
        let fraction = (counted as f64 / n as f64).min(1.0);
        let granularity = (SKETCH_PIECE * SKETCH_GROUP) as f64;
        // Each bucket's estimated positions: starts[j]..=starts[j + 1], scaled so that the
        // estimates add up to `n` (the sketches' totals are each rank's size up to rounding).
        let total = estimates.iter().sum::<u64>().max(1);
        let to_n = n as f64 / total as f64;
        let mut starts = Vec::with_capacity(estimates.len() + 1);
        let mut run = 0u64;
        starts.push(0.0);
        for &e in estimates {
            run += e;
            starts.push(run as f64 * to_n);
        }
        let mut marked = vec![false; estimates.len()];
        for &(rank, _) in &self.pending {
            let w = prediction::half_width(n as usize, rank as usize, fraction) + granularity;
            let (lo, hi) = (rank as f64 - w, rank as f64 + w);
            let first = starts[1..].partition_point(|&end| end < lo);
            for (j, m) in marked.iter_mut().enumerate().skip(first) {
                if starts[j] > hi {
                    break;
                }
                *m = true;
            }
        }
        let kept: u64 = estimates
            .iter()
            .zip(&marked)
            .filter(|(_, &m)| m)
            .map(|(&e, _)| e)
            .sum();
        if kept as f64 > COPY_LIMIT * total as f64 {
            return Ok(Vec::new());
        }
        Ok((0..marked.len() as u64)
            .filter(|&j| marked[j as usize])
            .collect())
    }

    /// The buckets of the current pass.
    fn buckets_in_pass(&self) -> usize {
        self.regions.iter().map(|r| r.spec.buckets).sum()
    }

    /// Places every pending rank in a bucket by the pass's global `counts` and returns the
    /// active buckets' numbers, ascending.
    pub(crate) fn identify(&mut self, counts: &[u64]) -> Result<Vec<u64>> {
        self.active.clear();
        let (mut bucket, mut offset, mut t) = (0usize, 0u64, 0usize);
        for region in &self.regions {
            let mut start = region.below.unwrap_or(offset);
            for _ in 0..region.spec.buckets {
                let end = start + counts.get(bucket).copied().ok_or_else(inconsistent)?;
                let first = t;
                while t < self.pending.len() && self.pending[t].0 < end {
                    if self.pending[t].0 < start {
                        return Err(inconsistent());
                    }
                    t += 1;
                }
                if t > first {
                    self.active.push(Active {
                        bucket,
                        below: start,
                        count: end - start,
                        targets: first..t,
                    });
                }
                start = end;
                bucket += 1;
            }
            offset = start;
        }
        if t < self.pending.len() || bucket != counts.len() {
            return Err(inconsistent());
        }
        Ok(self.active.iter().map(|a| a.bucket as u64).collect())
    }

    /// Takes the active buckets' key extremes over all ranks (a largest key and the complement
    /// of a smallest, per bucket, as [`Shard::reduce`](super::shard::Shard::reduce) gives
    /// them): a bucket of one value resolves its ranks; the others become the next pass's
    /// intervals, with buckets allotted in proportion to their counts (at least 2 each).
    /// `None` when every rank is found.
    pub(crate) fn refine(&mut self, extremes: &[u64]) -> Result<Option<Vec<IntervalSpec>>> {
        if extremes.len() != 2 * self.active.len() {
            return Err(inconsistent());
        }
        let mut pending = Vec::new();
        let mut open = Vec::new();
        for (a, e) in self.active.iter().zip(extremes.chunks_exact(2)) {
            let (max, min) = (e[0], !e[1]);
            if min > max || a.count == 0 {
                return Err(inconsistent());
            }
            if min == max {
                for &(_, i) in &self.pending[a.targets.clone()] {
                    self.found[i] = min;
                }
            } else {
                pending.extend_from_slice(&self.pending[a.targets.clone()]);
                open.push((min, max, a.below, a.count));
            }
        }
        self.pending = pending;
        if open.is_empty() {
            self.regions.clear();
            return Ok(None);
        }
        let total: u128 = open.iter().map(|o| o.3 as u128).sum();
        let spare = (self.buckets.max(2 * open.len()) - 2 * open.len()) as u128;
        self.regions = open
            .iter()
            .map(|&(lo, hi, below, count)| Region {
                spec: IntervalSpec {
                    lo,
                    hi,
                    buckets: 2 + (count as u128 * spare / total) as usize,
                },
                below: Some(below),
            })
            .collect();
        Ok(Some(self.regions.iter().map(|r| r.spec).collect()))
    }

    /// The key of every pending rank from the active buckets' elements gathered and sorted
    /// (DistributedBMS's finish): the active buckets are disjoint and ascending, so their
    /// elements follow one another in `sorted`.
    pub(crate) fn finish_from_sorted(&mut self, sorted: &[u64]) -> Result<()> {
        let mut start = 0u64;
        for a in &self.active {
            for &(rank, i) in &self.pending[a.targets.clone()] {
                let at = start + (rank - a.below);
                self.found[i] = *sorted.get(at as usize).ok_or_else(inconsistent)?;
            }
            start += a.count;
        }
        if start != sorted.len() as u64 {
            return Err(inconsistent());
        }
        self.pending.clear();
        Ok(())
    }
}

/// The ranks' reports do not add up: a defect, reported rather than answered.
fn inconsistent() -> Error {
    Error::Communication(
        "the ranks' bucket counts do not add up (ranks holding different data than they \
         counted, or a transport that altered a message)"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search for `ranks` whose first pass has the intervals `specs`.
    fn search_over(ranks: &[usize], buckets: usize, specs: &[IntervalSpec]) -> Search {
        let mut s = Search::new(ranks, buckets);
        s.regions = specs
            .iter()
            .map(|&spec| Region { spec, below: None })
            .collect();
        s
    }

    #[test]
    fn ranks_are_placed_in_their_buckets() {
        let halves = |lo, hi| IntervalSpec { lo, hi, buckets: 2 };
        let mut s = search_over(&[0, 5, 6, 9], 4, &[halves(0, 49), halves(50, 99)]);
        // 4 buckets of counts 5, 1, 0, 4 (2 buckets per interval).
        let active = s.identify(&[5, 1, 0, 4]).unwrap();
        assert_eq!(active, vec![0, 1, 3]);
        assert_eq!(s.active[2].below, 6);
        // Bucket 1 holds one value; buckets 0 and 3 more than one.
        let next = s.refine(&[4, !0, 7, !7, 99, !60]).unwrap().unwrap();
        assert_eq!(next.len(), 2);
        assert_eq!((next[0].lo, next[0].hi), (0, 4));
        assert!(next.iter().all(|n| n.buckets >= 2));
        assert!(!s.done());
        assert_eq!(s.into_found()[1], 7);
    }

    /// The buckets around each rank's estimated place are kept, no others; a sketch that
    /// read nothing keeps none, and one of the wrong length is refused.
    #[test]
    fn predicted_buckets_surround_the_ranks() {
        let n = 1u64 << 30;
        let mut s = Search::new(&[(n / 2) as usize], 1024);
        let sample: Vec<u64> = (1..16).map(|j| j << 20).collect();
        let spec = s.sampled_plan(0, 1 << 24, &sample);
        let buckets: usize = spec.intervals().map(|p| p.buckets).sum();
        assert!(buckets <= 1024 && buckets > 512, "{buckets}");
        // Even estimates over every bucket, from a sixteenth of the values.
        let mut sketch = vec![n / buckets as u64; buckets];
        sketch.push(n / 16);
        let keep = s.predict(&sketch, n).unwrap();
        let middle = buckets as u64 / 2;
        assert!(
            keep.contains(&middle) && keep.contains(&(middle - 1)),
            "{keep:?}"
        );
        // The window: 4.5 standard deviations of 2^30 / 4 * 15 values and a group of runs
        // about the median, about 0.13 % of the values a side: two buckets of 1024 a side.
        assert!(keep.len() <= 6, "{keep:?}");
        assert!(keep.windows(2).all(|w| w[1] == w[0] + 1));
        *sketch.last_mut().unwrap() = 0;
        assert!(s.predict(&sketch, n).unwrap().is_empty());
        assert!(s.predict(&sketch[1..], n).is_err());
    }

    /// Estimates that add up to a little less than `n` (a sketch's rounding) still keep the
    /// last bucket for the largest rank, whose window is narrow.
    #[test]
    fn the_largest_rank_keeps_the_last_bucket() {
        let n = 1u64 << 22;
        let mut s = Search::new(&[0, (n - 1) as usize], 1024);
        let sample: Vec<u64> = (0..1024).collect();
        let spec = s.sampled_plan(0, 1023, &sample);
        let buckets: usize = spec.intervals().map(|p| p.buckets).sum();
        let mut sketch = vec![(n - 512) / buckets as u64; buckets];
        sketch.push(n / 16);
        let keep = s.predict(&sketch, n).unwrap();
        assert_eq!(keep.first(), Some(&0));
        assert_eq!(keep.last(), Some(&(buckets as u64 - 1)), "{keep:?}");
    }

    #[test]
    fn counts_that_do_not_cover_the_ranks_are_refused() {
        let mut s = Search::new(&[10], 4);
        // 100 bins of one key, a bucket each.
        s.sampled_plan(0, 99, &[]);
        assert!(s.identify(&[1, 2]).is_err());
        assert!(s.identify(&[1; 99]).is_err());
        assert_eq!(s.identify(&[1; 100]).unwrap(), vec![10]);
    }
}
