//! Many ranks at once on the CPU (bucketMultiSelect, the default for more than a few ranks):
//! random rank sets — clustered, repeated, unsorted, from 1 to 8191 ranks — on random and
//! adversarial inputs long enough for its two passes, every element type and NaN policy,
//! against the sort-based reference, bit for bit; and quantiles (many probabilities) equal to
//! sort&choose's.

#[macro_use]
mod common;

use common::*;
use kselect::{Algorithm, Element, Error, NanPolicy, QuantileMethod, Selector};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// The smallest input that bucketMultiSelect runs its passes on (shorter ones go to
/// Floyd–Rivest).
const PASSES_FROM: usize = 1 << 14;

/// The selectors under test: the default with threads, and bucketMultiSelect by name without.
fn selectors() -> Vec<Selector> {
    vec![
        cpu_selector(),
        cpu_selector()
            .algorithm(Algorithm::BucketMultiselect)
            .parallel(false),
    ]
}

/// `count` ranks below `m` in one of four shapes: spread at random, clustered in runs of
/// neighbours, few values repeated many times, or evenly spaced; unsorted.
fn rank_set(rng: &mut SplitMix64, m: usize, count: usize, shape: u8) -> Vec<usize> {
    let mut ranks: Vec<usize> = match shape {
        0 => (0..count).map(|_| rng.below(m)).collect(),
        1 => {
            let mut v = Vec::with_capacity(count);
            while v.len() < count {
                let start = rng.below(m);
                let run = 1 + rng.below(40);
                v.extend((start..(start + run).min(m)).take(count - v.len()));
            }
            v
        }
        2 => {
            let few: Vec<usize> = (0..1 + rng.below(5)).map(|_| rng.below(m)).collect();
            (0..count).map(|i| few[i % few.len()]).collect()
        }
        _ => (0..count)
            .map(|i| ((i as u128 * (m - 1) as u128) / count.max(1) as u128) as usize)
            .collect(),
    };
    rng.shuffle(&mut ranks);
    ranks
}

/// `n` values of type `T` from `seed` in one of five shapes: uniform floats in a range, full
/// random bit patterns, few distinct values, a narrow cluster with far outliers, or mostly
/// one value.
fn input<T: TestElement>(n: usize, seed: u64, shape: u8) -> Vec<T> {
    let mut rng = SplitMix64::new(seed);
    let few: Vec<T> = (0..7).map(|_| T::random_bits(&mut rng)).collect();
    (0..n)
        .map(|_| match shape {
            0 => T::from_f64(rng.unit() * 2000.0 - 1000.0),
            1 => T::from_bits(rng.next_u64()),
            2 => few[rng.below(few.len())],
            3 => {
                if rng.chance(0.01) {
                    T::huge()
                } else {
                    T::from_f64(1000.0 + rng.unit())
                }
            }
            _ => {
                if rng.chance(0.9) {
                    few[0]
                } else {
                    T::from_bits(rng.next_u64())
                }
            }
        })
        .collect()
}

/// Checks every selector's `multiselect` at `ranks` against the reference under `policy`.
fn check<T: TestElement>(data: &[T], ranks: &[usize], policy: NanPolicy, what: &str) {
    let reference = match policy {
        NanPolicy::Omit => Reference::without_nan(data),
        _ => Reference::new(data),
    };
    for selector in selectors() {
        let sel = selector.nan_policy(policy);
        let context = || {
            format!(
                "{what} {} n={} {policy:?} {} ranks, {}",
                T::DTYPE,
                data.len(),
                ranks.len(),
                sel.algorithm_choice()
            )
        };
        let nans = data.iter().filter(|x| x.is_nan()).count();
        let got = sel.multiselect(data, ranks);
        if policy == NanPolicy::Error && nans > 0 {
            let first = data.iter().position(|x| x.is_nan()).unwrap();
            assert!(
                matches!(got, Err(Error::NanInInput { count, first_index })
                    if count == nans && first_index == first),
                "{}: got {got:?}",
                context()
            );
            continue;
        }
        let got = got.unwrap_or_else(|e| panic!("{}: {e}", context()));
        reference.check_all(&got, ranks, &context);
    }
}

/// Runs [`check`] on an input of the type numbered `dtype` (0..6: f32, f64, i32, i64, u32,
/// u64) with ranks drawn for it.
fn check_drawn(dtype: usize, n: usize, seed: u64, shape: u8, count: usize, rank_shape: u8) {
    macro_rules! run {
        ($t:ty) => {{
            let mut data = input::<$t>(n, seed, shape);
            let mut rng = SplitMix64::new(seed ^ 0xA5);
            let policy = if <$t as TestElement>::FLOAT {
                // Some NaNs, under each policy.
                for _ in 0..rng.below(4) * rng.below(n / 100 + 1) {
                    let i = rng.below(n);
                    data[i] = <$t>::random_nan(&mut rng);
                }
                [NanPolicy::Error, NanPolicy::Omit, NanPolicy::Last][rng.below(3)]
            } else {
                NanPolicy::Error
            };
            let m = match policy {
                NanPolicy::Omit => data.iter().filter(|x| !x.is_nan()).count(),
                _ => n,
            };
            let ranks = rank_set(&mut rng, m.max(1), count, rank_shape);
            check(
                &data,
                &ranks,
                policy,
                &format!("shape {shape}/{rank_shape} seed {seed}"),
            );
        }};
    }
    match dtype {
        0 => run!(f32),
        1 => run!(f64),
        2 => run!(i32),
        3 => run!(i64),
        4 => run!(u32),
        _ => run!(u64),
    }
}

proptest! {
    #![proptest_config(Config::with_cases(24))]

    /// Random inputs, types, NaN policies and rank sets of 1 to 8191 ranks.
    #[test]
    fn random_rank_sets(
        dtype in 0usize..6,
        n in PASSES_FROM..200_000,
        seed in any::<u64>(),
        shape in 0u8..5,
        count in prop_oneof![1usize..40, 40usize..1000, 1000usize..8192],
        rank_shape in 0u8..4,
    ) {
        check_drawn(dtype, n, seed, shape, count, rank_shape);
    }
}

/// Every corpus case of every type at the lengths around and above the passes' threshold,
/// with percentile-like, clustered and repeated ranks.
fn check_corpus<T: TestElement>(sizes: &[usize]) {
    check_corpus_ranks::<T>(sizes, &[(202, 3), (64, 1), (300, 2), (2000, 0)]);
}

/// Every corpus case at each of `sizes` with rank sets of each (count, shape) of `sets` (see
/// [`rank_set`]).
fn check_corpus_ranks<T: TestElement>(sizes: &[usize], sets: &[(usize, u8)]) {
    for &n in sizes {
        for case in corpus::<T>(n) {
            let policy = if case.has_nan() {
                NanPolicy::Last
            } else {
                NanPolicy::Error
            };
            let mut rng = SplitMix64::from_label(case.name, n as u64);
            for &(count, shape) in sets {
                let ranks = rank_set(&mut rng, n, count, shape);
                check(&case.data, &ranks, policy, &case.label());
            }
        }
    }
}

/// An input length at which a few ranks run the fused pass (a subset count predicts the ranks'
/// buckets; one pass counts every bucket and copies the predicted ones).
const FUSED_LEN: usize = (1 << 22) + 3;

/// The fused pass on every corpus case (32-bit keys through the vector path, 64-bit through
/// the scalar one), with evenly spaced, random and clustered ranks few enough for it.
const FUSED_SETS: [(usize, u8); 3] = [(11, 3), (8, 0), (5, 1)];

#[test]
fn fused_corpus_f32() {
    check_corpus_ranks::<f32>(&[FUSED_LEN], &FUSED_SETS);
}

#[test]
fn fused_corpus_u64() {
    check_corpus_ranks::<u64>(&[FUSED_LEN], &FUSED_SETS);
}

typed_tests!(check_corpus:
    corpus_f32 = f32(&[PASSES_FROM, 65_537, 300_000]),
    corpus_f64 = f64(&[PASSES_FROM, 65_537]),
    corpus_i32 = i32(&[PASSES_FROM, 65_537]),
    corpus_i64 = i64(&[PASSES_FROM, 65_537]),
    corpus_u32 = u32(&[PASSES_FROM, 65_537]),
    corpus_u64 = u64(&[PASSES_FROM, 65_537]),
);

/// 11, 101 and 1001 quantiles by every method equal sort&choose's, bit for bit, on corpus
/// inputs (NaN omitted).
#[test]
fn quantiles_match_sort_and_choose() {
    let reference = cpu_selector()
        .algorithm(Algorithm::SortChoose)
        .nan_policy(NanPolicy::Omit);
    for case in corpus::<f32>(70_000)
        .into_iter()
        .chain(corpus::<f32>(PASSES_FROM + 1))
    {
        for count in [11usize, 101, 1001] {
            let qs: Vec<f64> = (0..count).map(|i| i as f64 / (count - 1) as f64).collect();
            for method in [
                QuantileMethod::Linear,
                QuantileMethod::InvertedCdf,
                QuantileMethod::MedianUnbiased,
            ] {
                let want = reference.quantiles(&case.data, &qs, method);
                let got = cpu_selector()
                    .nan_policy(NanPolicy::Omit)
                    .quantiles(&case.data, &qs, method);
                match (want, got) {
                    (Ok(want), Ok(got)) => {
                        let same = want
                            .iter()
                            .zip(&got)
                            .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
                        assert!(same, "{} {count} {method}", case.label());
                    }
                    (Err(_), Err(_)) => {}
                    (want, got) => panic!("{}: {want:?} vs {got:?}", case.label()),
                }
            }
        }
    }
}

/// The input is never modified, and repeated ranks come back in the order asked.
#[test]
fn input_is_untouched_and_order_kept() {
    let data = input::<f32>(100_000, 9, 0);
    let copy = data.clone();
    let ranks = [99_999, 0, 50_000, 0, 99_999, 12_345, 50_000];
    let got = cpu_selector()
        .algorithm(Algorithm::BucketMultiselect)
        .multiselect(&data, &ranks)
        .unwrap();
    assert!(same_bits(&data, &copy));
    Reference::new(&data).check_all(&got, &ranks, &|| "order".to_string());
}
