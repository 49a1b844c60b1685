//! The CPU backend: dispatch to the algorithms' CPU parts.

use crate::element::Element;
use crate::select::algorithm::each_rank;
use crate::select::{bucket_multi, floyd_rivest, introselect, quick_multiselect, Algorithm};

/// At most this many ranks are answered by Floyd–Rivest passes under `Auto` (one pass per group
/// of nearby ranks); more go to bucketMultiSelect (two passes whatever their number).
const AUTO_FLOYD_RIVEST_RANKS: usize = 4;

/// What `Algorithm::Auto` runs on the CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
enum AutoChoice {
    Introselect,
    QuickMultiselect,
    FloydRivest,
    BucketMultiselect,
}

impl AutoChoice {
    /// The choice for `n` values and `ranks` ranks.
    ///
    /// Short inputs go to introselect (one rank) or quickMultiSelect (several); longer ones to
    /// Floyd–Rivest (one pass over the data per group of nearby ranks, the fastest measured for
    /// a few ranks), or to bucketMultiSelect (two passes) when more ranks are asked for.
    fn of(n: usize, ranks: usize) -> AutoChoice {
        if n < floyd_rivest::SMALL {
            if ranks > 1 {
                AutoChoice::QuickMultiselect
            } else {
                AutoChoice::Introselect
            }
        } else if ranks <= AUTO_FLOYD_RIVEST_RANKS || n < bucket_multi::cpu::MIN_LEN {
            AutoChoice::FloydRivest
        } else {
            AutoChoice::BucketMultiselect
        }
    }

    fn algorithm(self) -> Algorithm {
        match self {
            AutoChoice::Introselect => Algorithm::Introselect,
            AutoChoice::QuickMultiselect => Algorithm::QuickMultiselect,
            AutoChoice::FloydRivest => Algorithm::FloydRivest,
            AutoChoice::BucketMultiselect => Algorithm::BucketMultiselect,
        }
    }

    /// The elements of `ranks` by this algorithm, and the NaN count when it counted them (the
    /// infallible calls the batched selections make on each span).
    fn run<T: Element>(
        self,
        data: &[T],
        ranks: &[usize],
        parallel: bool,
    ) -> (Vec<T>, Option<usize>) {
        match self {
            AutoChoice::Introselect => each_rank(introselect::cpu::select, data, ranks, parallel),
            AutoChoice::QuickMultiselect => (
                quick_multiselect::cpu::multiselect(data, ranks, parallel),
                None,
            ),
            AutoChoice::FloydRivest => {
                let (values, nans) = floyd_rivest::multiselect_counting_nans(data, ranks, parallel);
                (values, Some(nans))
            }
            AutoChoice::BucketMultiselect => {
                let (values, nans) =
                    bucket_multi::cpu::multiselect_counting_nans(data, ranks, parallel);
                (values, Some(nans))
            }
        }
    }
}

/// What `Algorithm::Auto` runs on the CPU for `n` values and `ranks` ranks (see
/// [`AutoChoice::of`]). (`T` is part of the signature every backend shares; the CPU choice
/// does not depend on it.)
#[allow(clippy::extra_unused_type_parameters)]
pub(crate) fn auto_algorithm<T: Element>(n: usize, ranks: usize) -> Algorithm {
    AutoChoice::of(n, ranks).algorithm()
}

/// The elements of `ranks` (all `< data.len()`, NaNs ordered last) by `Auto`'s choice, and
/// the number of NaNs in `data` when the algorithm counted them in its own pass.
pub(crate) fn auto_multiselect_counting_nans<T: Element>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<T>, Option<usize>) {
    AutoChoice::of(data.len(), ranks.len()).run(data, ranks, parallel)
}

/// The elements of `ranks` by `Auto`'s choice.
pub(crate) fn auto_multiselect<T: Element>(data: &[T], ranks: &[usize], parallel: bool) -> Vec<T> {
    auto_multiselect_counting_nans(data, ranks, parallel).0
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::random::SplitMix64;
    use crate::select::algorithm::run_cpu;
    use crate::select::sort_choose;

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
        for algorithm in [Algorithm::RadixInPlace, Algorithm::FusedMultiselect] {
            assert!(matches!(
                run_cpu(algorithm, &data, &ranks, false),
                Err(Error::UnsupportedAlgorithm { .. })
            ));
        }
        for &algorithm in Algorithm::cpu_algorithms() {
            for parallel in [false, true] {
                let (got, _) = run_cpu(algorithm, &data, &ranks, parallel).unwrap();
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
        assert_eq!(
            auto_algorithm::<f32>(1 << 20, 100),
            Algorithm::BucketMultiselect
        );
        assert_eq!(auto_algorithm::<f32>(10_000, 100), Algorithm::FloydRivest);
    }
}
