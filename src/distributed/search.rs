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

use super::plan::IntervalSpec;

/// Samples the ranks draw together for the first pass (the paper's 1024).
pub(crate) const SAMPLES: u64 = 1024;

/// Pivot intervals of the first pass (the paper's P = 16).
pub(crate) const SAMPLED_INTERVALS: usize = 16;

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

    /// Whether every rank has been found.
    pub(crate) fn done(&self) -> bool {
        self.pending.is_empty()
    }

    /// The keys found, in the order the ranks were given.
    pub(crate) fn into_found(self) -> Vec<u64> {
        self.found
    }

    /// The first pass's intervals: the extremes `min < max` and the sorted sample cut into
    /// [`SAMPLED_INTERVALS`] intervals of (about) equal sample counts, `buckets` split evenly.
    pub(crate) fn sampled_plan(
        &mut self,
        min: u64,
        max: u64,
        sample: &mut [u64],
    ) -> Vec<IntervalSpec> {
        sample.sort_unstable();
        let mut cuts = vec![min];
        for j in 1..SAMPLED_INTERVALS {
            if let Some(&s) = sample.get(j * sample.len() / SAMPLED_INTERVALS) {
                if s > *cuts.last().unwrap() && s < max {
                    cuts.push(s);
                }
            }
        }
        let per = (self.buckets / cuts.len()).max(2);
        let specs: Vec<IntervalSpec> = cuts
            .iter()
            .enumerate()
            .map(|(j, &lo)| IntervalSpec {
                lo,
                hi: cuts.get(j + 1).map_or(max, |&next| next - 1),
                buckets: per,
            })
            .collect();
        self.regions = specs
            .iter()
            .map(|&spec| Region { spec, below: None })
            .collect();
        specs
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

    #[test]
    fn ranks_are_placed_in_their_buckets() {
        let mut s = Search::new(&[0, 5, 6, 9], 4);
        let specs = s.sampled_plan(0, 99, &mut [50]);
        assert_eq!(specs.len(), 2);
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

    #[test]
    fn counts_that_do_not_cover_the_ranks_are_refused() {
        let mut s = Search::new(&[10], 4);
        s.sampled_plan(0, 99, &mut []);
        assert!(s.identify(&[1, 2]).is_err());
        assert!(s.identify(&[1, 2, 3]).is_err());
    }
}
