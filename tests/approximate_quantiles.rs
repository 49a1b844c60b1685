//! Approximate quantiles (`Selector::quantiles_approximate`): what they guarantee holds on the
//! adversarial corpus and on random data, for every element type and NaN policy — the order
//! statistics the exact quantile is read from lie between `lower` and `upper`, the rank counts
//! are exact, discrete methods return a value in the bounds, and short inputs are exact.

#[macro_use]
mod common;

use common::*;
use kselect::{ApproximateQuantile, Error, NanPolicy, QuantileMethod, Selector};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// The probabilities checked: the percentiles and a few odd ones.
fn probabilities() -> Vec<f64> {
    let mut qs: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).collect();
    qs.extend([1e-9, 0.333, 0.5 + 1e-12, 1.0 - 1e-9]);
    qs
}

/// The number of values of `reference` whose key is below (`strict`) or at most `key`.
fn count_upto<T: TestElement>(reference: &Reference<T>, key: T::Key, strict: bool) -> usize {
    let (mut a, mut b) = (0, reference.len());
    while a < b {
        let mid = (a + b) / 2;
        let k = reference.key(mid);
        if k < key || (!strict && k == key) {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    a
}

/// Checks the guarantees of `got` (for `qs` by `method`) against the reference.
fn check_guarantees<T: TestElement>(
    reference: &Reference<T>,
    qs: &[f64],
    method: QuantileMethod,
    got: &[ApproximateQuantile<T>],
    context: &dyn Fn() -> String,
) {
    let m = reference.len();
    assert_eq!(got.len(), qs.len(), "{}", context());
    for (&q, a) in qs.iter().zip(got) {
        let what = || format!("{} {method} q={q}: {a:?}", context());
        assert_eq!(a.q, q, "{}", what());
        let (lo, hi) = (a.lower.to_key(), a.upper.to_key());
        assert!(lo <= hi, "{}", what());
        // The rank counts are exact.
        assert_eq!(a.rank_lo, count_upto(reference, lo, true), "{}", what());
        assert_eq!(a.rank_hi, count_upto(reference, hi, false), "{}", what());
        assert!(a.rank_lo < a.rank_hi && a.rank_hi <= m, "{}", what());
        // The neighbours numpy's linear method reads lie in the bounds.
        if method == QuantileMethod::Linear {
            let i = ((m - 1) as f64 * q).floor() as usize;
            let j = (i + 1).min(m - 1);
            assert!(
                a.rank_lo <= i && j < a.rank_hi,
                "{} (ranks {i}, {j})",
                what()
            );
            assert!(
                lo <= reference.key(i) && reference.key(j) <= hi,
                "{}",
                what()
            );
        }
        // A discrete method returns an estimate of the element itself, in the bounds.
        if matches!(
            method,
            QuantileMethod::Lower | QuantileMethod::Higher | QuantileMethod::InvertedCdf
        ) && !a.value.is_nan()
        {
            assert!(
                a.lower.to_f64() <= a.value && a.value <= a.upper.to_f64(),
                "{}",
                what()
            );
        }
    }
}

/// Checks one input under `policy` by a few methods, and its exactness when short.
fn check_input<T: TestElement>(data: &[T], policy: NanPolicy, context: &str) {
    let sel = cpu_selector().nan_policy(policy);
    let nans = data.iter().filter(|x| x.is_nan()).count();
    let qs = probabilities();
    for method in [
        QuantileMethod::Linear,
        QuantileMethod::Lower,
        QuantileMethod::Higher,
        QuantileMethod::InvertedCdf,
        QuantileMethod::MedianUnbiased,
    ] {
        let got = sel.quantiles_approximate(data, &qs, method);
        if policy == NanPolicy::Error && nans > 0 {
            assert!(
                matches!(got, Err(Error::NanInInput { count, .. }) if count == nans),
                "{context}: {got:?}"
            );
            return;
        }
        let reference = match policy {
            NanPolicy::Omit => Reference::without_nan(data),
            _ => Reference::new(data),
        };
        if reference.is_empty() {
            assert!(matches!(got, Err(Error::EmptyInput)), "{context}: {got:?}");
            return;
        }
        let got = got.unwrap_or_else(|e| panic!("{context}: {e}"));
        let ctx = || format!("{context} {} n={} {policy:?}", T::DTYPE, data.len());
        check_guarantees(&reference, &qs, method, &got, &ctx);
        if data.len() < 1 << 14 {
            // Short inputs are exact.
            let exact = sel.quantiles(data, &qs, method).unwrap();
            for (a, e) in got.iter().zip(exact) {
                assert!(
                    a.value.to_bits() == e.to_bits() || (a.value.is_nan() && e.is_nan()),
                    "{}: {a:?} vs {e}",
                    ctx()
                );
            }
        }
    }
}

/// Every corpus case of `T` at a few lengths.
fn check_corpus<T: TestElement>(sizes: &[usize]) {
    for &n in sizes {
        for case in corpus::<T>(n) {
            for policy in [NanPolicy::Error, NanPolicy::Omit, NanPolicy::Last] {
                check_input(&case.data, policy, &case.label());
            }
        }
    }
}

typed_tests!(check_corpus:
    corpus_f32 = f32(&[1, 1000, (1 << 14) + 1, 100_003]),
    corpus_f64 = f64(&[33, (1 << 14) + 1, 65_537]),
    corpus_i32 = i32(&[257, 65_537]),
    corpus_i64 = i64(&[257, 65_537]),
    corpus_u32 = u32(&[257, 65_537]),
    corpus_u64 = u64(&[257, 65_537]),
);

proptest! {
    #![proptest_config(Config::with_cases(16))]

    /// Random data: a mix of a normal bulk, repeats and far values.
    #[test]
    fn random_data(n in 1usize..200_000, seed in any::<u64>(), spread in 0.0f64..30.0) {
        let mut rng = SplitMix64::new(seed);
        let data: Vec<f64> = (0..n)
            .map(|_| match rng.below(20) {
                0 => 7.0,
                1 => rng.normal() * 10f64.powf(spread),
                _ => rng.normal(),
            })
            .collect();
        check_input(&data, NanPolicy::Error, &format!("seed {seed} spread {spread}"));
    }
}

/// The bound is small on smooth data: about a bucket's population.
#[test]
fn bound_is_small_on_smooth_data() {
    let mut rng = SplitMix64::new(1);
    let n = 1 << 20;
    let data: Vec<f32> = (0..n).map(|_| rng.normal() as f32).collect();
    let qs = probabilities();
    let got = Selector::new()
        .quantiles_approximate(&data, &qs, QuantileMethod::Linear)
        .unwrap();
    for a in &got {
        assert!(a.rank_error_bound() <= n / 512, "{a:?}");
    }
}
