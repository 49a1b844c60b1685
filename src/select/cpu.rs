//! The CPU backend: dispatch to the algorithms' CPU parts.

use crate::element::Element;
use crate::select::{
    bucket, cutting_plane, floyd_rivest, introselect, quick_multiselect, radix, sample,
    sort_choose, Algorithm,
};

/// Helpers shared by the CPU algorithms.
pub(crate) mod util;

/// At most this many ranks are answered by Floyd–Rivest passes under `Auto` (one pass per group
/// of nearby ranks); more go to bucketMultiSelect (two passes whatever their number).
const AUTO_FLOYD_RIVEST_RANKS: usize = 4;

/// What `Algorithm::Auto` runs on the CPU for `n` values and `ranks` ranks.
///
/// Short inputs go to introselect (one rank) or quickMultiSelect (several); longer ones to
/// Floyd–Rivest (one pass over the data per group of nearby ranks, the fastest measured for a
/// few ranks), or to bucketMultiSelect (`Algorithm::Bucket` with several ranks: two passes)
/// when more ranks are asked for. (`T` is part of the signature every backend shares; the CPU
/// choice does not depend on it.)
#[allow(clippy::extra_unused_type_parameters)]
pub(crate) fn auto_algorithm<T: Element>(n: usize, ranks: usize) -> Algorithm {
    if n < floyd_rivest::SMALL {
        if ranks > 1 {
            Algorithm::QuickMultiselect
        } else {
            Algorithm::Introselect
        }
    } else if ranks <= AUTO_FLOYD_RIVEST_RANKS || n < bucket::multi::MIN_LEN {
        Algorithm::FloydRivest
    } else {
        Algorithm::Bucket
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
        Algorithm::Auto => multiselect(
            auto_algorithm::<T>(data.len(), ranks.len()),
            data,
            ranks,
            parallel,
        ),
        Algorithm::SortChoose if ranks.len() == 1 => one(sort_choose::cpu::select),
        Algorithm::SortChoose => sort_choose::cpu::multiselect(data, ranks, parallel),
        Algorithm::QuickMultiselect => quick_multiselect::multiselect(data, ranks, parallel),
        Algorithm::Introselect | Algorithm::Quick => one(introselect::select),
        Algorithm::FloydRivest | Algorithm::Randomized if ranks.len() == 1 => {
            one(floyd_rivest::select)
        }
        Algorithm::FloydRivest | Algorithm::Randomized => {
            floyd_rivest::multiselect(data, ranks, parallel)
        }
        // The in-place form is a CUDA algorithm (the selector refuses it on the CPU); the
        // CPU's radix select answers the same should it be reached.
        Algorithm::Radix | Algorithm::RadixInPlace => one(radix::cpu::select),
        // The GPU bucket multiselections are CUDA algorithms (refused on the CPU); the CPU's
        // bucketMultiSelect answers the same should they be reached.
        Algorithm::BucketMultiselect
        | Algorithm::IterativeBucketMultiselect
        | Algorithm::FusedMultiselect => {
            bucket::multi::multiselect_counting_nans(data, ranks, parallel).0
        }
        Algorithm::Bucket if ranks.len() == 1 => one(bucket::cpu::select),
        Algorithm::Bucket => bucket::multi::multiselect_counting_nans(data, ranks, parallel).0,
        Algorithm::Sample => one(sample::cpu::select),
        Algorithm::CuttingPlane => one(cutting_plane::select),
    }
}

/// [`multiselect`], and the number of NaNs in `data` when the algorithm counted them in its
/// own pass over the data (Floyd–Rivest does); `None` when the caller must scan for them.
pub(crate) fn multiselect_counting_nans<T: Element>(
    algorithm: Algorithm,
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<T>, Option<usize>) {
    match algorithm {
        Algorithm::Auto => multiselect_counting_nans(
            auto_algorithm::<T>(data.len(), ranks.len()),
            data,
            ranks,
            parallel,
        ),
        Algorithm::FloydRivest | Algorithm::Randomized => {
            let (values, nans) = floyd_rivest::multiselect_counting_nans(data, ranks, parallel);
            (values, Some(nans))
        }
        Algorithm::Bucket if ranks.len() > 1 => {
            let (values, nans) = bucket::multi::multiselect_counting_nans(data, ranks, parallel);
            (values, Some(nans))
        }
        other => (multiselect(other, data, ranks, parallel), None),
    }
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;

    /// Every CPU algorithm, with and without threads, gives the reference bits.
    #[test]
    fn every_algorithm_agrees_on_many_ranks() {
        let mut rng = SplitMix64::new(12);
        let n = 20_000;
        let data: Vec<f32> = (0..n)
            .map(|i| match i % 50 {
                0 => f32::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => (rng.below(5000) as f32 - 2500.0) * 0.25,
            })
            .collect();
        let ranks: Vec<usize> = (0..20)
            .map(|_| rng.below(n))
            .chain([0, n - 1, 5, 5])
            .collect();
        let want = sort_choose::cpu::multiselect(&data, &ranks, false);
        for &algorithm in Algorithm::cpu_algorithms() {
            for parallel in [false, true] {
                let got = multiselect(algorithm, &data, &ranks, parallel);
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{algorithm}: {got:?} != {want:?}");
            }
        }
    }

    /// What `Auto` picks.
    #[test]
    fn auto_prefers_floyd_rivest_for_long_inputs() {
        assert_eq!(auto_algorithm::<f32>(100, 1), Algorithm::Introselect);
        assert_eq!(auto_algorithm::<f32>(100, 3), Algorithm::QuickMultiselect);
        assert_eq!(auto_algorithm::<f32>(1 << 20, 2), Algorithm::FloydRivest);
        assert_eq!(auto_algorithm::<f32>(1 << 20, 100), Algorithm::Bucket);
        assert_eq!(auto_algorithm::<f32>(10_000, 100), Algorithm::FloydRivest);
    }
}
