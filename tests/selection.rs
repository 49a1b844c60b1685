//! Every algorithm of every backend against the sort-based reference, on the adversarial corpus
//! (`tests/common`), for every element type: `select` at the edge ranks, `select_largest`,
//! `median`, `multiselect` with unsorted repeated ranks, the errors of empty input and of ranks
//! out of range, and on CUDA the device-resident path. Results are compared bit for bit through
//! the order-preserving keys, so `-0.0` vs `+0.0` counts as a difference.
//!
//! Inputs with NaN (the `nan_mixed` case) run under `NanPolicy::Last`, where ranks count the
//! NaNs as numpy's sort orders them; `tests/nan_policy.rs` covers the policies themselves.
//!
//! Sizes up to 4097 get every check. A debug build (`cargo test`) checks each case at one of the
//! 64Ki sizes with fewer ranks, and two cases above the parallel threshold (300 000), to keep the
//! run short; release builds (the GPU test binaries) and `KSELECT_THOROUGH=1` check every case
//! at every size.

#[macro_use]
mod common;

use common::*;
use kselect::{Algorithm, DeviceBuffer, Error, NanPolicy, Selector};

/// Sizes that get every check.
const SMALL_SIZES: &[usize] = &[
    1, 2, 3, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097,
];

/// Sizes around 64Ki.
const MEDIUM_SIZES: &[usize] = &[65535, 65536, 65537];

/// A size above the parallel threshold (`1 << 17`).
const LARGE_SIZE: usize = 300_000;

/// The cases run at [`LARGE_SIZE`] in a quick run (every case runs there in a thorough one).
const LARGE_CASES: &[&str] = &["bucket_killer", "nan_mixed", "distinct_2", "uniform"];

/// How many of [`LARGE_CASES`] (those that apply to the type) a quick run checks.
const QUICK_LARGE_CASES: usize = 2;

/// Whether to check everything: in release builds (the GPU test binaries of
/// `scripts/build-gpu-tests.sh`) and when `KSELECT_THOROUGH=1` is set. A quick run (a debug
/// build, as `cargo test` on CI) checks every case at every small size, each case at one of the
/// 64Ki sizes, and two cases above the parallel threshold.
fn thorough() -> bool {
    !cfg!(debug_assertions) || std::env::var("KSELECT_THOROUGH").is_ok_and(|v| v.trim() == "1")
}

/// How thoroughly one input is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Depth {
    /// Every rank set, every method, every error.
    Full,
    /// The median, one multiselect with repeats, one error.
    Light,
}

/// Unwraps a selection result, naming the input when it is an error.
#[track_caller]
fn ok<V>(result: kselect::Result<V>, context: &dyn Fn() -> String) -> V {
    result.unwrap_or_else(|e| panic!("{}: unexpected error: {e}", context()))
}

/// Runs every algorithm of the selector's backend on one input and checks every result.
fn check_case<T: TestElement>(selector: &Selector, case: &Case<T>, depth: Depth) {
    let data = &case.data[..];
    let n = data.len();
    assert!(n > 0, "the empty input is checked apart");
    let original = case.data.clone();
    let reference = Reference::new(data);
    let policy = if case.has_nan() {
        NanPolicy::Last
    } else {
        NanPolicy::Error
    };
    let on_cuda = selector.device().is_cuda();
    // One upload serves every algorithm of the device-resident path.
    let buffer = on_cuda.then(|| {
        ok(DeviceBuffer::from_host(selector.device(), data), &|| {
            format!("uploading {}", case.label())
        })
    });

    for &algorithm in algorithms_of(selector) {
        let sel = selector.clone().algorithm(algorithm).nan_policy(policy);
        let context = |what: &str| {
            format!(
                "{} {} {}: {what}",
                sel.device().backend_name(),
                algorithm,
                case.label()
            )
        };

        if depth == Depth::Full {
            for k in edge_ranks(n) {
                let got = ok(sel.select(data, k), &|| context("select"));
                reference.check(got, k, &|| context("select"));
            }
            for k in [0, n / 3].into_iter().filter(|&k| k < n) {
                let got = ok(sel.select_largest(data, k), &|| context("select_largest"));
                reference.check(got, n - 1 - k, &|| {
                    format!("{} k={k}", context("select_largest"))
                });
            }
        }

        let got = ok(sel.median(data), &|| context("median"));
        reference.check(got, (n - 1) / 2, &|| context("median"));

        let ranks = match depth {
            Depth::Full => scrambled_ranks(n),
            Depth::Light => vec![n - 1, n / 2, n - 1],
        };
        let got = ok(sel.multiselect(data, &ranks), &|| context("multiselect"));
        reference.check_all(&got, &ranks, &|| context("multiselect"));

        assert_rank_out_of_range(sel.select(data, n), n, n, &context("select(n)"));
        if depth == Depth::Full {
            let got = ok(sel.multiselect(data, &[]), &|| {
                context("multiselect(no ranks)")
            });
            assert!(got.is_empty(), "{}", context("multiselect(no ranks)"));
            assert_rank_out_of_range(
                sel.select(data, usize::MAX),
                usize::MAX,
                n,
                &context("select(usize::MAX)"),
            );
            assert_rank_out_of_range(
                sel.select_largest(data, n),
                n,
                n,
                &context("select_largest(n)"),
            );
            assert_rank_out_of_range(
                sel.multiselect(data, &[0, n + 1, 0]),
                n + 1,
                n,
                &context("multiselect with a rank out of range"),
            );
        }

        if let Some(buffer) = &buffer {
            if depth == Depth::Full {
                for k in edge_ranks(n) {
                    let got = ok(sel.select(buffer, k), &|| context("select_device"));
                    reference.check(got, k, &|| context("select_device"));
                }
                assert_rank_out_of_range(sel.select(buffer, n), n, n, &context("select_device(n)"));
            }
            let got = ok(sel.multiselect(buffer, &ranks), &|| {
                context("multiselect_device")
            });
            reference.check_all(&got, &ranks, &|| context("multiselect_device"));
        }
    }

    if let Some(buffer) = &buffer {
        let back = ok(buffer.to_host(), &|| {
            format!("downloading {}", case.label())
        });
        assert!(
            same_bits(&back, &original),
            "{}: the device buffer was modified",
            case.label()
        );
    }
    assert!(
        same_bits(data, &original),
        "{}: the host input was modified",
        case.label()
    );
}

/// Checks every case of the corpus at every small size.
fn check_small<T: TestElement>(selector: &Selector) {
    for &n in SMALL_SIZES {
        for case in corpus::<T>(n) {
            check_case(selector, &case, Depth::Full);
        }
    }
}

/// Checks the cases of the corpus at the 64Ki sizes: all of them at each size with every check
/// in a thorough run, each at one of the sizes (in turn) with fewer ranks in a quick one.
fn check_medium<T: TestElement>(selector: &Selector) {
    for (i, &n) in MEDIUM_SIZES.iter().enumerate() {
        for (j, case) in corpus::<T>(n).into_iter().enumerate() {
            if thorough() {
                check_case(selector, &case, Depth::Full);
            } else if j % MEDIUM_SIZES.len() == i {
                check_case(selector, &case, Depth::Light);
            }
        }
    }
}

/// Checks cases at [`LARGE_SIZE`]: every case in a thorough run, the first
/// [`QUICK_LARGE_CASES`] of [`LARGE_CASES`] in a quick one.
fn check_large<T: TestElement>(selector: &Selector) {
    let names: Vec<&'static str> = if thorough() {
        CASES.to_vec()
    } else {
        LARGE_CASES.to_vec()
    };
    let cases = names
        .into_iter()
        .filter_map(|name| generate::<T>(name, LARGE_SIZE).map(|data| Case { name, data }))
        .take(if thorough() {
            usize::MAX
        } else {
            QUICK_LARGE_CASES
        });
    for case in cases {
        check_case(selector, &case, Depth::Light);
    }
}

/// Every method of every algorithm refuses empty input with `Error::EmptyInput`.
fn check_empty<T: TestElement>(selector: &Selector) {
    let empty: Vec<T> = Vec::new();
    for &algorithm in algorithms_of(selector) {
        for policy in [NanPolicy::Error, NanPolicy::Omit, NanPolicy::Last] {
            let sel = selector.clone().algorithm(algorithm).nan_policy(policy);
            let context = || {
                format!(
                    "{} {algorithm} {} {policy:?}",
                    T::DTYPE,
                    sel.device().backend_name()
                )
            };
            assert_err!(
                sel.select(&empty, 0),
                Error::EmptyInput,
                "{} select",
                context()
            );
            assert_err!(
                sel.select_largest(&empty, 0),
                Error::EmptyInput,
                "{} select_largest",
                context()
            );
            assert_err!(
                sel.median(&empty),
                Error::EmptyInput,
                "{} median",
                context()
            );
            assert_err!(
                sel.multiselect(&empty, &[0]),
                Error::EmptyInput,
                "{} multiselect",
                context()
            );
            assert_err!(
                sel.multiselect(&empty, &[]),
                Error::EmptyInput,
                "{} multiselect(no ranks)",
                context()
            );
            assert_err!(
                sel.quantiles(&empty, &[0.5], kselect::QuantileMethod::Linear),
                Error::EmptyInput,
                "{} quantiles",
                context()
            );
            if sel.device().is_cuda() {
                let buffer = ok(DeviceBuffer::from_host(sel.device(), &empty), &|| {
                    format!("{} uploading nothing", context())
                });
                assert_err!(
                    sel.select(&buffer, 0),
                    Error::EmptyInput,
                    "{} select_device",
                    context()
                );
                assert_err!(
                    sel.multiselect(&buffer, &[0]),
                    Error::EmptyInput,
                    "{} multiselect_device",
                    context()
                );
            }
        }
    }
}

// Per element type, the tests of the small, medium and large sizes and of empty input.
typed_backend_tests!(
    [
        small_sizes: check_small,
        medium_sizes: check_medium,
        large_size: check_large,
        empty_input: check_empty,
    ]
    type_f32: f32,
    type_f64: f64,
    type_i32: i32,
    type_i64: i64,
    type_u32: u32,
    type_u64: u64,
);

backend_test!(free_functions_agree, |selector: Selector| {
    // The free functions run on the CPU with the default settings; they agree with any selector.
    let data = generate::<f64>("distinct_1024", 5000).unwrap();
    let reference = Reference::new(&data);
    let context = || format!("{} free functions", selector.device().backend_name());
    reference.check(kselect::select(&data, 17).unwrap(), 17, &context);
    reference.check(ok(selector.select(&data, 17), &context), 17, &context);
    reference.check(kselect::select_largest(&data, 3).unwrap(), 4996, &context);
    reference.check(kselect::median(&data).unwrap(), 2499, &context);
    let ranks = [4999, 0, 2500, 2500];
    reference.check_all(
        &kselect::multiselect(&data, &ranks).unwrap(),
        &ranks,
        &context,
    );
});

backend_test!(unknown_algorithm_names_are_refused, |selector: Selector| {
    // Asking a backend for an algorithm it lacks is an error, never a wrong answer.
    let available = algorithms_of(&selector);
    for &algorithm in Algorithm::ALL.iter().filter(|a| !available.contains(a)) {
        let sel = selector.clone().algorithm(algorithm);
        assert_err!(
            sel.select(&[3u32, 1, 2], 0),
            Error::UnsupportedAlgorithm { .. },
            "{algorithm} on {}",
            sel.device().backend_name()
        );
    }
});
