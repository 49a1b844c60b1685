//! Property tests (proptest): random inputs, types, NaN policies and ranks (with repeats), for
//! every CPU algorithm, against the sort-based reference, bit for bit.
//!
//! Values come from three distributions: full-range bit patterns (for floats NaNs of any sign
//! and payload, `±inf`, `±0.0`, subnormals), a small set of values (many ties, extremes
//! included), and a mix of both. Inputs with NaN run under each policy: `Error` must refuse
//! them, `Omit` and `Last` must rank as the reference does.
//!
//! Sizes are mostly below 2000; one test draws 8 inputs of up to 10^6 values (above the parallel
//! threshold), built from a drawn seed so that they stay cheap to generate and to shrink. The
//! CUDA backend runs a handful of cases through `backend_test!` (skipped without a GPU).

#[macro_use]
mod common;

use common::*;
use kselect::{DType, Error, NanPolicy, Selector};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};

/// The number of values in [`small_value`]'s set.
const SMALL_SET: usize = 9;

/// The `i`-th value of a small set with extremes: for floats `-inf, -1, -0.0, +0.0`, the
/// smallest subnormal, `1, 2, +inf, NaN`; for integers the minimum and its successor, `0..=4`,
/// the maximum's predecessor and the maximum.
fn small_value<T: TestElement>(i: usize) -> T {
    let i = i % SMALL_SET;
    if T::FLOAT {
        match i {
            0 => T::min_value(),
            1 => T::from_f64(-1.0),
            2 => T::neg_zero(),
            3 => T::from_f64(0.0),
            4 => T::from_bits(1),
            5 => T::from_f64(1.0),
            6 => T::from_f64(2.0),
            7 => T::max_value(),
            _ => T::from_bits(u64::MAX), // a NaN
        }
    } else {
        match i {
            0 => T::min_value(),
            1 => T::from_bits(T::min_value().bits() + 1),
            2..=6 => T::from_f64((i - 2) as f64),
            7 => T::from_bits(T::max_value().bits() - 1),
            _ => T::max_value(),
        }
    }
}

/// Random inputs of `0..max_len` values: full-range bit patterns, values of a small set (many
/// ties), or a mix of both.
fn inputs<T: TestElement>(max_len: usize) -> BoxedStrategy<Vec<T>> {
    let full = any::<u64>().prop_map(T::from_bits);
    let small = (0..SMALL_SET).prop_map(small_value::<T>);
    prop_oneof![
        vec(full.clone(), 0..max_len),
        vec(small.clone(), 0..max_len),
        vec(prop_oneof![full, small], 0..max_len),
    ]
    .boxed()
}

/// A random NaN policy.
fn policies() -> impl Strategy<Value = NanPolicy> {
    prop_oneof![
        Just(NanPolicy::Error),
        Just(NanPolicy::Omit),
        Just(NanPolicy::Last)
    ]
}

/// The first rank in `ranks` whose result differs from the reference, described.
fn mismatch<T: TestElement>(
    reference: &Reference<T>,
    got: &[T],
    ranks: &[usize],
) -> Option<String> {
    if got.len() != ranks.len() {
        return Some(format!("{} results for {} ranks", got.len(), ranks.len()));
    }
    ranks.iter().zip(got).find_map(|(&k, &x)| {
        (x.to_key() != reference.key(k))
            .then(|| format!("rank {k}: got {x:?}, expected {:?}", reference.value(k)))
    })
}

/// numpy.median of the reference's values: NaN when `any_nan`, else the middle value or the
/// mean of the two middle values as numpy computes it for the type (an `f32` sum in `f32`),
/// except the finite mean `a / 2 + b / 2` where numpy's sum overflows.
fn numpy_median<T: TestElement>(reference: &Reference<T>, any_nan: bool) -> f64 {
    if any_nan {
        return f64::NAN;
    }
    let m = reference.len();
    let (a, b) = (reference.value((m - 1) / 2), reference.value(m / 2));
    let (a, b) = (a.to_f64(), b.to_f64());
    if T::DTYPE == DType::F32 {
        let (a, b) = (a as f32, b as f32);
        let sum = a + b;
        let overflows = sum.is_infinite() && a.is_finite() && b.is_finite();
        f64::from(if overflows {
            a / 2.0 + b / 2.0
        } else {
            sum / 2.0
        })
    } else {
        let sum = a + b;
        let overflows = sum.is_infinite() && a.is_finite() && b.is_finite();
        if overflows {
            a / 2.0 + b / 2.0
        } else {
            sum / 2.0
        }
    }
}

/// Checks one input against the reference with every algorithm of the selector's backend:
/// `multiselect` at the ranks (as drawn, repeats added), and the errors (NaN under `Error`,
/// empty input, rank out of range); unless `big`, also `select` at the first rank, the lower
/// median and numpy's median.
fn check<T: TestElement>(
    selector: &Selector,
    data: &[T],
    policy: NanPolicy,
    picks: &[Index],
    big: bool,
) -> Result<(), TestCaseError> {
    let nans = data.iter().filter(|x| x.is_nan()).count();
    let reference = match policy {
        NanPolicy::Omit => Reference::without_nan(data),
        _ => Reference::new(data),
    };
    let m = reference.len();
    let mut ranks: Vec<usize> = if m == 0 {
        Vec::new()
    } else {
        picks.iter().map(|p| p.index(m)).collect()
    };
    if let Some(&first) = ranks.first() {
        ranks.push(first); // a repeat, after the others
    }
    for &algorithm in algorithms_of(selector) {
        let sel = selector.clone().algorithm(algorithm).nan_policy(policy);
        let what = format!(
            "{} {algorithm} {} n={} ({nans} NaN) {policy:?}",
            sel.device().backend_name(),
            T::DTYPE,
            data.len()
        );
        if policy == NanPolicy::Error && nans > 0 {
            let r = sel.multiselect(data, &ranks);
            let first = data.iter().position(|x| x.is_nan()).unwrap();
            prop_assert!(
                matches!(r, Err(Error::NanInInput { count, first_index })
                    if count == nans && first_index == first),
                "{what}: expected NanInInput {{ count: {nans}, first_index: {first} }}, got {r:?}"
            );
            continue;
        }
        if m == 0 {
            let r = sel.select(data, 0);
            prop_assert!(matches!(r, Err(Error::EmptyInput)), "{what}: got {r:?}");
            continue;
        }
        let got = sel.multiselect(data, &ranks);
        let got = got.map_err(|e| TestCaseError::fail(format!("{what}: multiselect: {e}")))?;
        if let Some(m) = mismatch(&reference, &got, &ranks) {
            return Err(TestCaseError::fail(format!(
                "{what}: multiselect {ranks:?}: {m}"
            )));
        }
        let r = sel.select(data, m);
        prop_assert!(
            matches!(r, Err(Error::RankOutOfRange { k, n }) if k == m && n == m),
            "{what}: select({m}) gave {r:?}"
        );
        if big {
            continue;
        }
        let k = ranks[0];
        let got = sel.select(data, k);
        let got = got.map_err(|e| TestCaseError::fail(format!("{what}: select: {e}")))?;
        if let Some(m) = mismatch(&reference, &[got], &[k]) {
            return Err(TestCaseError::fail(format!("{what}: select: {m}")));
        }
        let got = sel.median(data);
        let got = got.map_err(|e| TestCaseError::fail(format!("{what}: median: {e}")))?;
        if let Some(m) = mismatch(&reference, &[got], &[(m - 1) / 2]) {
            return Err(TestCaseError::fail(format!("{what}: median: {m}")));
        }
        let got = sel.median_mean(data);
        let got = got.map_err(|e| TestCaseError::fail(format!("{what}: median_mean: {e}")))?;
        let want = numpy_median(&reference, policy == NanPolicy::Last && nans > 0);
        prop_assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "{what}: median_mean gave {got:e}, numpy.median {want:e}"
        );
    }
    Ok(())
}

/// Emits, per element type, the property test of small inputs on the CPU.
macro_rules! small_input_properties {
    ($($name:ident: $t:ty),* $(,)?) => {
        proptest! {
            #![proptest_config(Config::with_cases(160))]
            $(
                /// Every CPU algorithm equals the reference on random inputs of < 2000 values.
                #[test]
                fn $name(
                    data in inputs::<$t>(2000),
                    policy in policies(),
                    picks in vec(any::<Index>(), 1..8),
                ) {
                    check(&cpu_selector(), &data, policy, &picks, false)?;
                }
            )*
        }
    };
}

small_input_properties!(
    small_inputs_f32: f32,
    small_inputs_f64: f64,
    small_inputs_i32: i32,
    small_inputs_i64: i64,
    small_inputs_u32: u32,
    small_inputs_u64: u64,
);

/// The largest input the big-input test draws.
const MAX_BIG: usize = 1_000_000;

/// `n` values of type `T` from `seed`: full-range bit patterns (`mode` 0), the small set
/// (`mode` 1), or a mix (`mode` 2).
fn big_input<T: TestElement>(n: usize, seed: u64, mode: u8) -> Vec<T> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let small = match mode {
                0 => false,
                1 => true,
                _ => rng.chance(0.5),
            };
            if small {
                small_value(rng.below(SMALL_SET))
            } else {
                T::from_bits(rng.next_u64())
            }
        })
        .collect()
}

/// Checks a big input of the type numbered `dtype` (0..6: f32, f64, i32, i64, u32, u64).
fn check_big(
    selector: &Selector,
    dtype: usize,
    n: usize,
    seed: u64,
    mode: u8,
    policy: NanPolicy,
    picks: &[Index],
) -> Result<(), TestCaseError> {
    match dtype {
        0 => check(
            selector,
            &big_input::<f32>(n, seed, mode),
            policy,
            picks,
            true,
        ),
        1 => check(
            selector,
            &big_input::<f64>(n, seed, mode),
            policy,
            picks,
            true,
        ),
        2 => check(
            selector,
            &big_input::<i32>(n, seed, mode),
            policy,
            picks,
            true,
        ),
        3 => check(
            selector,
            &big_input::<i64>(n, seed, mode),
            policy,
            picks,
            true,
        ),
        4 => check(
            selector,
            &big_input::<u32>(n, seed, mode),
            policy,
            picks,
            true,
        ),
        _ => check(
            selector,
            &big_input::<u64>(n, seed, mode),
            policy,
            picks,
            true,
        ),
    }
}

proptest! {
    #![proptest_config(Config::with_cases(8))]

    /// Every CPU algorithm equals the reference on a few inputs of up to 10^6 values, of random
    /// types (NaN policies other than `Error`, so that float inputs get selected from).
    #[test]
    fn big_inputs(
        dtype in 0usize..6,
        n in 0..=MAX_BIG,
        seed in any::<u64>(),
        mode in 0u8..3,
        policy in prop_oneof![Just(NanPolicy::Omit), Just(NanPolicy::Last)],
        picks in vec(any::<Index>(), 1..3),
    ) {
        check_big(&cpu_selector(), dtype, n, seed, mode, policy, &picks)?;
    }
}

/// Runs `cases` random cases of `strategy` through `test`, panicking with proptest's report.
fn run_cases<S: Strategy>(
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{e}");
    }
}

backend_test!(handful_of_cases, |selector: Selector| {
    // A few cases of every type on each backend, and two big ones on CUDA (the CPU is covered
    // above in depth; this is for CUDA).
    macro_rules! each_type {
        ($($t:ty),*) => {
            $(
                run_cases(
                    6,
                    (inputs::<$t>(5000), policies(), vec(any::<Index>(), 1..8)),
                    |(data, policy, picks)| check(&selector, &data, policy, &picks, false),
                );
            )*
        };
    }
    each_type!(f32, f64, i32, i64, u32, u64);
    if !selector.device().is_cuda() {
        return; // `big_inputs` covers big inputs on the CPU
    }
    run_cases(
        2,
        (
            0usize..6,
            100_000..=MAX_BIG,
            any::<u64>(),
            0u8..3,
            vec(any::<Index>(), 1..3),
        ),
        |(dtype, n, seed, mode, picks)| {
            check_big(&selector, dtype, n, seed, mode, NanPolicy::Last, &picks)
        },
    );
});
