//! The CPU backend: dispatch to the algorithms' CPU parts.

use crate::element::Element;
use crate::select::{
    bucket, cutting_plane, floyd_rivest, introselect, quick_multiselect, radix, sample,
    sort_choose, Algorithm,
};

/// What `Algorithm::Auto` runs on the CPU for `n` values and `ranks` ranks.
pub(crate) fn auto_algorithm<T: Element>(n: usize, ranks: usize) -> Algorithm {
    if ranks > 1 {
        Algorithm::QuickMultiselect
    } else if n < 1 << 12 {
        Algorithm::Introselect
    } else {
        Algorithm::FloydRivest
    }
}

/// The elements of `ranks` (all `< data.len()`, NaNs ordered last) by `algorithm`.
pub(crate) fn multiselect<T: Element>(
    algorithm: Algorithm,
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> Vec<T> {
    let one = |select: fn(&[T], usize, bool) -> T| -> Vec<T> {
        ranks.iter().map(|&k| select(data, k, parallel)).collect()
    };
    match algorithm {
        Algorithm::Auto => {
            multiselect(auto_algorithm::<T>(data.len(), ranks.len()), data, ranks, parallel)
        }
        Algorithm::SortChoose => sort_choose::cpu::multiselect(data, ranks, parallel),
        Algorithm::QuickMultiselect => quick_multiselect::multiselect(data, ranks, parallel),
        Algorithm::Introselect => one(introselect::select),
        Algorithm::FloydRivest => one(floyd_rivest::select),
        Algorithm::Radix => one(radix::cpu::select),
        Algorithm::Bucket => one(bucket::select),
        Algorithm::Sample => one(sample::select),
        Algorithm::CuttingPlane => one(cutting_plane::select),
    }
}
