//! The buckets that CPU bucketMultiSelect's fused pass keeps: a count over a subset of the data
//! (one run of [`RUN`] values in each group of `group` runs) places each wanted rank within a
//! window of positions ([`crate::select::prediction`]), and the buckets those windows meet are
//! marked. The fused pass then counts every bucket and copies the marked buckets' values at
//! once, so that no second pass over the data is needed unless a rank falls outside its
//! window (then the caller makes the copying pass as before: the result is exact either way).

use rayon::prelude::*;

use crate::element::Element;
use crate::random::SplitMix64;
use crate::select::bucket_multi::cpu::multi_pass::count;
use crate::select::bucket_multi::cpu::piecewise::{Piecewise, Real};
use crate::select::prediction::{half_width, kept_share};

/// Values in a run of the subset (4 KiB of `f32`: whole pages of cache lines).
const RUN: usize = 1024;

/// Inputs shorter than this keep the two passes.
pub(crate) const MIN_LEN: usize = 1 << 20;

/// The expected kept share above which the fused pass does not pay: each kept value costs
/// its copy (fresh memory, page faults included) and its place in the second, small pass,
/// about 1.5 ms a percent of 2^26 values on the development machine, where the fused pass saves
/// about 15 ms against the two passes.
const KEPT_LIMIT: f64 = 0.08;

/// The cost of the kept share relative to the subset's count (both in units of a counting pass
/// over the data): a kept share of 1 would cost about 8 counting passes.
const KEPT_COST: f64 = 8.0;

/// The subset's count costs about this many counting passes times its fraction of the data
/// (its runs are scattered).
const SUBSET_COST: f64 = 1.8;

/// Seed of the subset's runs.
const SEED: u64 = 0x5EED_F05E;

/// The subset's group for `n` values, the sorted unique `ranks` and `buckets` buckets: the one
/// of 4, 8, 16, 32 for which the subset's count and the kept values cost least, or `None` when
/// the best keeps more than [`KEPT_LIMIT`] of the data.
pub(crate) fn group(n: usize, ranks: &[usize], buckets: usize) -> Option<usize> {
    let kept = |g: usize| kept_share(n, ranks, 1.0 / g as f64, buckets);
    let cost = |g: usize| SUBSET_COST / g as f64 + KEPT_COST * kept(g);
    let best = [4usize, 8, 16, 32]
        .into_iter()
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))?;
    (n >= MIN_LEN && n / (RUN * best) > 0 && kept(best) <= KEPT_LIMIT).then_some(best)
}

/// Per bucket of `p`: whether the window of one of the sorted unique `ranks` meets it, from a
/// count over one run in each group of `group` runs of `data` (`group` from [`group`]).
pub(crate) fn marks<T: Element, F: Real>(
    data: &[T],
    p: &Piecewise<F>,
    ranks: &[usize],
    group: usize,
    parallel: bool,
) -> Vec<bool> {
    let n = data.len();
    let groups = n / (RUN * group);
    let count_groups = |range: std::ops::Range<usize>| {
        let mut counts = vec![0u32; p.buckets()];
        for g in range {
            let mut rng =
                SplitMix64::new(SEED.wrapping_add((g as u64).wrapping_mul(SplitMix64::GAMMA)));
            let start = (g * group + rng.below(group)) * RUN;
            count(p, &data[start..start + RUN], &mut counts);
        }
        counts
    };
    let parts: Vec<Vec<u32>> = if parallel {
        let per = groups
            .div_ceil(4 * rayon::current_num_threads().max(1))
            .max(1);
        (0..groups.div_ceil(per))
            .into_par_iter()
            .map(|i| count_groups(i * per..((i + 1) * per).min(groups)))
            .collect()
    } else {
        vec![count_groups(0..groups)]
    };
    // starts[j]: the subset's values in the buckets below j.
    let mut starts = vec![0usize; p.buckets() + 1];
    for j in 0..p.buckets() {
        starts[j + 1] = starts[j] + parts.iter().map(|c| c[j] as usize).sum::<usize>();
    }
    let counted = starts[p.buckets()];
    let mut marked = vec![false; p.buckets()];
    let scale = n as f64 / counted as f64;
    let fraction = counted as f64 / n as f64;
    for &k in ranks {
        // The window in the subset's positions, widened by a run (the subset's grain).
        let w = half_width(n, k, fraction) + RUN as f64 * scale;
        let lo = ((k as f64 - w) / scale).max(0.0) as usize;
        let hi = ((k as f64 + w) / scale).min(counted as f64) as usize;
        // Every bucket whose closed range of positions [starts[j], starts[j + 1]] meets [lo, hi]
        // (so that buckets the subset found empty at the window's ends are marked too).
        let first = starts[1..].partition_point(|&s| s < lo);
        let last = starts[..p.buckets()].partition_point(|&s| s <= hi);
        for m in &mut marked[first..last.max(first)] {
            *m = true;
        }
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::bucket_multi::cpu::fit;

    /// Every percentile's bucket is marked on uniform and skewed data, and few buckets are.
    #[test]
    fn the_marks_hold_every_rank() {
        let n = 1usize << 21;
        let mut rng = SplitMix64::new(7);
        let uniform: Vec<f32> = (0..n).map(|_| rng.next_u64() as f32).collect();
        let skewed: Vec<f32> = uniform.iter().map(|x| (x / 1e19).powi(6)).collect();
        for data in [&uniform, &skewed] {
            let ranks: Vec<usize> = (0..5).map(|i| i * (n - 1) / 4).collect();
            let p = fit::<f32, f32>(data, 4096, false);
            let g = group(n, &ranks, p.buckets()).expect("a group for 5 ranks of 2^21");
            let marked = marks(data, &p, &ranks, g, true);
            let mut keys: Vec<(usize, f32)> = data.iter().map(|&x| (p.bucket(x), x)).collect();
            keys.sort_by(|a, b| a.1.total_cmp(&b.1));
            for &k in &ranks {
                assert!(marked[keys[k].0], "rank {k}'s bucket is not marked");
            }
            let share = marked.iter().filter(|&&m| m).count() as f64 / p.buckets() as f64;
            assert!(share < 0.5, "{share}");
        }
    }

    /// No group when the windows would cover much of the data, or the input is short.
    #[test]
    fn many_ranks_keep_two_passes() {
        let n = 1usize << 26;
        let ranks: Vec<usize> = (0..101).map(|i| i * (n - 1) / 100).collect();
        assert_eq!(group(n, &ranks, 4096), None);
        assert!(group(n, &ranks[..11], 4096).is_some());
        assert_eq!(group(1 << 16, &ranks[..3], 4096), None);
    }
}
