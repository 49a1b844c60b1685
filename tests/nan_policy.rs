//! The NaN policies on every backend and with every algorithm:
//!
//! - `NanPolicy::Error` (the default) refuses input with NaN: `Error::NanInInput` with the number
//!   of NaNs and the index of the first one, from every method (host and device input).
//! - `NanPolicy::Omit` ranks the other values only; ranks past them are out of range, and input
//!   of NaNs only is `Error::EmptyInput`. Quantiles equal the quantiles of the filtered data.
//! - `NanPolicy::Last` orders NaNs after `+inf`, as numpy sorts: ranks past the numbers are NaN.
//!
//! NaNs come with random signs and payloads, quiet and signalling, so a key that ordered
//! negative NaNs first (below `-inf`) would fail. Integers ignore the policy.

#[macro_use]
mod common;

use common::*;
use kselect::{Algorithm, DeviceBuffer, Error, NanPolicy, QuantileMethod, Selector, Values};

/// Inputs: `(n, indices of the NaNs)`, from one value to a size above the parallel threshold.
fn patterns() -> Vec<(usize, Vec<usize>)> {
    vec![
        (1, vec![0]),
        (2, vec![1]),
        (10, vec![0]),
        (10, vec![9]),
        (10, vec![3, 7, 9]),
        (5, (0..5).collect()),
        (33, vec![32, 0, 16]),
        (257, (0..257).step_by(5).collect()),
        (1000, vec![999]),
        (4097, (0..4097).filter(|i| i % 3 != 0).collect()),
        (200_000, vec![150_001, 199_999, 77_777]),
    ]
}

/// `n` values with NaNs (random sign and payload) at `nan_at`, numbers elsewhere: normal
/// values with ties, `±inf`, `±0.0` and subnormals.
fn with_nans<T: TestElement>(n: usize, nan_at: &[usize]) -> Vec<T> {
    let mut rng = SplitMix64::from_label(&format!("nan/{}", T::DTYPE), n as u64);
    let mut data: Vec<T> = (0..n)
        .map(|_| match rng.below(16) {
            0 => T::max_value(),
            1 => T::min_value(),
            2 => T::neg_zero(),
            3 => T::from_f64(0.0),
            4 => T::random_subnormal(&mut rng),
            5 => T::from_f64(1.0),
            _ => T::from_f64((rng.normal() * 100.0).round() / 4.0),
        })
        .collect();
    for &i in nan_at {
        data[i] = T::random_nan(&mut rng);
    }
    data
}

/// Unwraps a result, naming the input when it is an error.
#[track_caller]
fn ok<V>(result: kselect::Result<V>, context: &dyn Fn() -> String) -> V {
    result.unwrap_or_else(|e| panic!("{}: unexpected error: {e}", context()))
}

/// Whether `r` is `NanInInput` with exactly this count and first index.
fn is_nan_error<V>(r: &kselect::Result<V>, count: usize, first_index: usize) -> bool {
    matches!(r, Err(Error::NanInInput { count: c, first_index: f }) if *c == count && *f == first_index)
}

/// Asserts that `r` is `NanInInput` with exactly this count and first index.
#[track_caller]
fn assert_nan_error<V: std::fmt::Debug>(
    r: kselect::Result<V>,
    (count, first_index): (usize, usize),
    context: String,
) {
    assert!(is_nan_error(&r, count, first_index), "{context}, got {r:?}");
}

/// `data` uploaded to the selector's GPU, or `None` on the CPU.
fn upload<T: TestElement>(selector: &Selector, data: &[T]) -> Option<DeviceBuffer<T>> {
    selector.device().is_cuda().then(|| {
        ok(DeviceBuffer::from_host(selector.device(), data), &|| {
            "upload".into()
        })
    })
}

/// Whether two lists of quantiles hold the same bits.
fn same_quantiles(got: &[f64], want: &[f64]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(a, b)| a.to_bits() == b.to_bits())
}

/// `NanPolicy::Error`, explicit and by default, from every method.
fn check_error_policy<T: TestElement>(selector: &Selector) {
    for (n, nan_at) in patterns() {
        let data = with_nans::<T>(n, &nan_at);
        let count = nan_at.len();
        let first = *nan_at.iter().min().unwrap();
        let want = (count, first);
        let buffer = upload(selector, &data);
        for &algorithm in algorithms_of(selector) {
            // The default policy is `Error`.
            for sel in [
                selector.clone().algorithm(algorithm),
                selector
                    .clone()
                    .algorithm(algorithm)
                    .nan_policy(NanPolicy::Error),
            ] {
                let context = |what: &str| {
                    format!(
                        "{} {algorithm} {} n={n} NaNs at {}: {what} (expected NanInInput {{ count: \
                         {count}, first_index: {first} }})",
                        sel.device().backend_name(),
                        T::DTYPE,
                        preview(&nan_at)
                    )
                };
                assert_nan_error(sel.select(&data, 0), want, context("select"));
                assert_nan_error(
                    sel.select_largest(&data, 0),
                    want,
                    context("select_largest"),
                );
                assert_nan_error(sel.median(&data), want, context("median"));
                assert_nan_error(
                    sel.multiselect(&data, &[0, n - 1]),
                    want,
                    context("multiselect"),
                );
                assert_nan_error(
                    sel.quantiles(&data, &[0.5], QuantileMethod::Linear),
                    want,
                    context("quantiles"),
                );
                if let Some(buffer) = &buffer {
                    assert_nan_error(sel.select(buffer, 0), want, context("select_device"));
                    assert_nan_error(
                        sel.multiselect(buffer, &[n - 1, 0]),
                        want,
                        context("multiselect_device"),
                    );
                    assert_nan_error(
                        sel.quantiles(buffer, &[0.25], QuantileMethod::Linear),
                        want,
                        context("quantiles_device"),
                    );
                }
            }
        }
        if !selector.device().is_cuda() {
            // The free functions use the default policy too.
            let free = |name: &str| format!("kselect::{name}");
            assert_nan_error(kselect::select(&data, 0), want, free("select"));
            assert_nan_error(kselect::median(&data), want, free("median"));
        }
    }
}

/// The ranks to check among `m` values: the edges, and more for small inputs.
fn ranks_to_check(m: usize) -> Vec<usize> {
    if m <= 40 {
        (0..m).collect()
    } else {
        edge_ranks(m)
    }
}

/// `selector` with `algorithm` and `policy`, and the context of its failures on `n` values of
/// which `numbers` are not NaN.
fn with_policy<T: TestElement>(
    selector: &Selector,
    algorithm: Algorithm,
    policy: NanPolicy,
    (n, numbers): (usize, usize),
) -> (Selector, impl Fn(&str) -> String) {
    let sel = selector.clone().algorithm(algorithm).nan_policy(policy);
    let backend = sel.device().backend_name();
    let context = move |what: &str| {
        format!(
            "{backend} {algorithm} {} n={n} ({numbers} numbers) {policy:?}: {what}",
            T::DTYPE
        )
    };
    (sel, context)
}

/// Checks the `multiselect` of `ranks` from `data` against the reference; returns the values.
fn check_multiselect<'a, T: TestElement>(
    sel: &Selector,
    data: impl Into<Values<'a, T>>,
    (ranks, reference): (&[usize], &Reference<T>),
    what: &str,
    context: &dyn Fn(&str) -> String,
) -> Vec<T> {
    let got = ok(sel.multiselect(data, ranks), &|| context(what));
    reference.check_all(&got, ranks, &|| context(what));
    got
}

/// Checks `select` of each rank of [`ranks_to_check`] among `m` against the reference.
fn check_selects<T: TestElement>(
    sel: &Selector,
    data: &[T],
    reference: &Reference<T>,
    m: usize,
    context: &dyn Fn(&str) -> String,
) {
    for k in ranks_to_check(m) {
        let got = ok(sel.select(data, k), &|| context("select"));
        reference.check(got, k, &|| context("select"));
    }
}

/// `NanPolicy::Omit`: ranks over the numbers only.
fn check_omit_policy<T: TestElement>(selector: &Selector) {
    for (n, nan_at) in patterns() {
        let data = with_nans::<T>(n, &nan_at);
        let reference = Reference::without_nan(&data);
        let m = reference.len();
        let buffer = upload(selector, &data);
        let large = n >= 100_000;
        for &algorithm in algorithms_of(selector) {
            let (sel, context) = with_policy::<T>(selector, algorithm, NanPolicy::Omit, (n, m));
            if m == 0 {
                assert_err!(
                    sel.select(&data, 0),
                    Error::EmptyInput,
                    "{}",
                    context("select")
                );
                assert_err!(
                    sel.median(&data),
                    Error::EmptyInput,
                    "{}",
                    context("median")
                );
                assert_err!(
                    sel.quantiles(&data, &[0.5], QuantileMethod::Linear),
                    Error::EmptyInput,
                    "{}",
                    context("quantiles")
                );
                if let Some(buffer) = &buffer {
                    assert_err!(
                        sel.select(buffer, 0),
                        Error::EmptyInput,
                        "{}",
                        context("select_device")
                    );
                }
                continue;
            }
            let got = ok(sel.median(&data), &|| context("median"));
            reference.check(got, (m - 1) / 2, &|| context("median"));
            let ranks = scrambled_ranks(m);
            check_multiselect(&sel, &data, (&ranks, &reference), "multiselect", &context);
            assert_rank_out_of_range(
                sel.select(&data, m),
                m,
                m,
                &context("select(number of non-NaN values)"),
            );
            if !large {
                check_selects(&sel, &data, &reference, m, &context);
                let got = ok(sel.select_largest(&data, 0), &|| context("select_largest"));
                reference.check(got, m - 1, &|| context("select_largest(0)"));
                assert_rank_out_of_range(
                    sel.select_largest(&data, m),
                    m,
                    m,
                    &context("select_largest(number of non-NaN values)"),
                );
            }
            if let Some(buffer) = &buffer {
                let (what, input) = ("multiselect_device", buffer);
                check_multiselect(&sel, input, (&ranks, &reference), what, &context);
                assert_rank_out_of_range(
                    sel.select(buffer, m),
                    m,
                    m,
                    &context("select_device(number of non-NaN values)"),
                );
            }
        }
    }
}

/// `NanPolicy::Last`: NaNs rank after every number; their ranks return NaN.
fn check_last_policy<T: TestElement>(selector: &Selector) {
    for (n, nan_at) in patterns() {
        let data = with_nans::<T>(n, &nan_at);
        let reference = Reference::new(&data);
        let numbers = n - nan_at.len();
        let buffer = upload(selector, &data);
        let large = n >= 100_000;
        for &algorithm in algorithms_of(selector) {
            let (sel, context) =
                with_policy::<T>(selector, algorithm, NanPolicy::Last, (n, numbers));
            // The ranks on both sides of the first NaN rank, in a scrambled order with repeats.
            let mut ranks = vec![n - 1, 0, numbers, numbers.wrapping_sub(1), n / 2, n - 1];
            ranks.retain(|&k| k < n);
            let got = check_multiselect(&sel, &data, (&ranks, &reference), "multiselect", &context);
            for (&k, x) in ranks.iter().zip(&got) {
                assert_eq!(
                    k >= numbers,
                    x.is_nan(),
                    "{}: rank {k} gave {x:?}",
                    context("multiselect")
                );
            }
            let got = ok(sel.median(&data), &|| context("median"));
            reference.check(got, (n - 1) / 2, &|| context("median"));
            let got = ok(sel.select_largest(&data, 0), &|| context("select_largest"));
            assert!(
                got.is_nan(),
                "{}: the largest is NaN, got {got:?}",
                context("select_largest")
            );
            assert_rank_out_of_range(sel.select(&data, n), n, n, &context("select(n)"));
            if !large {
                check_selects(&sel, &data, &reference, n, &context);
            }
            if let Some(buffer) = &buffer {
                let (what, input) = ("multiselect_device", buffer);
                check_multiselect(&sel, input, (&ranks, &reference), what, &context);
            }
        }
    }
}

/// Inputs of negative NaNs only (quiet and signalling): they rank last, never first.
fn check_negative_nans<T: TestElement>(selector: &Selector) {
    let bits = T::BITS;
    let mantissa_bits = if bits == 32 { 23 } else { 52 };
    let sign = 1u64 << (bits - 1);
    let exponent = ((1u64 << (bits - 1)) - 1) & !((1u64 << mantissa_bits) - 1);
    let quiet = 1u64 << (mantissa_bits - 1);
    let negative_nans = [
        T::from_bits(sign | exponent | quiet), // -NaN, as `-f64::NAN`
        T::from_bits(sign | exponent | 1),     // a signalling -NaN
        T::from_bits(sign | exponent | (quiet - 1)), // the largest signalling payload
        T::from_bits(u64::MAX),                // all bits set
    ];
    assert!(negative_nans.iter().all(|x| x.is_nan()));
    let data: Vec<T> = vec![
        negative_nans[0],
        T::min_value(),
        T::from_f64(-1.0),
        negative_nans[1],
        T::neg_zero(),
        T::from_f64(0.0),
        negative_nans[2],
        T::max_value(),
        negative_nans[3],
        T::from_f64(2.5),
    ];
    let n = data.len();
    let numbers = n - negative_nans.len();
    for &algorithm in algorithms_of(selector) {
        let context = |what: &str| {
            format!(
                "{} {algorithm} {} negative NaNs: {what}",
                selector.device().backend_name(),
                T::DTYPE
            )
        };
        let sel = selector.clone().algorithm(algorithm);
        assert_err!(
            sel.select(&data, 0),
            Error::NanInInput {
                count: 4,
                first_index: 0
            },
            "{}",
            context("Error")
        );

        let omit = sel.clone().nan_policy(NanPolicy::Omit);
        let reference = Reference::without_nan(&data);
        for k in 0..numbers {
            reference.check(ok(omit.select(&data, k), &|| context("Omit")), k, &|| {
                context("Omit")
            });
        }
        let first = ok(omit.select(&data, 0), &|| context("Omit"));
        assert_eq!(
            first.bits(),
            T::min_value().bits(),
            "{}: -inf ranks first",
            context("Omit")
        );

        let last = sel.nan_policy(NanPolicy::Last);
        let ranks: Vec<usize> = (0..n).rev().collect();
        let got = ok(last.multiselect(&data, &ranks), &|| context("Last"));
        for (&k, x) in ranks.iter().zip(&got) {
            assert_eq!(
                k >= numbers,
                x.is_nan(),
                "{}: rank {k} gave {x:?}",
                context("Last")
            );
        }
        Reference::new(&data).check_all(&got, &ranks, &|| context("Last"));
    }
}

/// Quantiles under `Omit`, by every method, equal the quantiles of the data without its NaNs
/// (the same bits).
fn check_omit_quantiles<T: TestElement>(selector: &Selector) {
    let qs = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0];
    for (n, nan_at) in patterns() {
        if n >= 100_000 || nan_at.len() == n {
            continue;
        }
        let data = with_nans::<T>(n, &nan_at);
        let filtered: Vec<T> = data.iter().copied().filter(|x| !x.is_nan()).collect();
        for &algorithm in algorithms_of(selector) {
            for method in QuantileMethod::ALL {
                let context = || {
                    format!(
                        "{} {algorithm} {} n={n} {method:?}",
                        selector.device().backend_name(),
                        T::DTYPE
                    )
                };
                let sel = selector.clone().algorithm(algorithm);
                let want = ok(sel.quantiles(&filtered, &qs, method), &context);
                let omit = sel.nan_policy(NanPolicy::Omit);
                let got = ok(omit.quantiles(&data, &qs, method), &context);
                assert!(
                    same_quantiles(&got, &want),
                    "{}: Omit gave {got:?}, the filtered data {want:?}",
                    context()
                );
                if let Some(device) = selector.device().is_cuda().then(|| selector.device()) {
                    let buffer = ok(DeviceBuffer::from_host(device, &data), &context);
                    let got = ok(omit.quantiles(&buffer, &qs, method), &context);
                    assert!(
                        same_quantiles(&got, &want),
                        "{}: device Omit gave {got:?}, want {want:?}",
                        context()
                    );
                }
            }
        }
    }
}

/// Integer types have no NaN: every policy gives the reference.
fn check_integers_ignore_policy<T: TestElement>(selector: &Selector) {
    for n in [1, 2, 33, 1000] {
        let data = generate::<T>("distinct_16", n).unwrap();
        let reference = Reference::new(&data);
        let ranks = scrambled_ranks(n);
        for &algorithm in algorithms_of(selector) {
            for policy in [NanPolicy::Error, NanPolicy::Omit, NanPolicy::Last] {
                let sel = selector.clone().algorithm(algorithm).nan_policy(policy);
                let context = || {
                    format!(
                        "{} {algorithm} {} n={n} {policy:?}",
                        sel.device().backend_name(),
                        T::DTYPE
                    )
                };
                let got = ok(sel.multiselect(&data, &ranks), &context);
                reference.check_all(&got, &ranks, &context);
                assert_rank_out_of_range(sel.select(&data, n), n, n, &context());
            }
        }
    }
}

typed_backend_tests!(
    [
        error_policy: check_error_policy,
        omit_policy: check_omit_policy,
        last_policy: check_last_policy,
        negative_nans: check_negative_nans,
        omit_quantiles: check_omit_quantiles,
    ]
    type_f32: f32,
    type_f64: f64,
);

backend_test!(integers_ignore_the_policy, |selector: Selector| {
    check_integers_ignore_policy::<i32>(&selector);
    check_integers_ignore_policy::<i64>(&selector);
    check_integers_ignore_policy::<u32>(&selector);
    check_integers_ignore_policy::<u64>(&selector);
});
