//! Many ranks at once: 1, 11, 101, 1001 and 8191 evenly spaced ranks, clustered ranks, and
//! repeated ranks in no order, on inputs that trouble bucket and sample methods (few distinct
//! values, Cauchy tails, sorted data, integer-valued reals, huge outliers, all equal, NaNs),
//! for every element type, against the sort-based reference, bit for bit.
//!
//! The CUDA variant runs every CUDA multiselection (`bucket-multiselect`,
//! `iterative-bucket-multiselect`, `fused-multiselect`, `sample`, `sort-choose` and `Auto`) on device-resident
//! buffers, checks that the buffers are left unchanged, and runs the NaN policies and
//! quantiles through the same path. The CPU variant runs `Auto` on a shorter input and checks
//! that the CUDA-only multiselections are refused.

#[macro_use]
mod common;

use common::*;
use kselect::{Algorithm, DeviceBuffer, Error, NanPolicy, QuantileMethod, Selector};

/// Values per input on the GPU: above 2^20, so that no small-input shortcut applies.
const GPU_N: usize = (1 << 20) + 3;
/// Values per input on the CPU.
const CPU_N: usize = 20_011;

/// The CUDA algorithms made for many ranks, and `Auto`.
const CUDA_MULTI: &[Algorithm] = &[
    Algorithm::Auto,
    Algorithm::BucketMultiselect,
    Algorithm::IterativeBucketMultiselect,
    Algorithm::FusedMultiselect,
    Algorithm::Sample,
    Algorithm::SortChoose,
];

/// The rank sets for `n` values.
fn rank_sets(n: usize) -> Vec<(String, Vec<usize>)> {
    let even = |m: usize| -> Vec<usize> {
        (0..m)
            .map(|i| if m == 1 { n / 2 } else { i * (n - 1) / (m - 1) })
            .collect()
    };
    let mut sets: Vec<(String, Vec<usize>)> = [1usize, 11, 101, 1001, 8191]
        .into_iter()
        .filter(|&m| m <= n)
        .map(|m| (format!("{m} even"), even(m)))
        .collect();
    let mut clustered: Vec<usize> = (0..2000).map(|i| n / 3 + i).collect();
    clustered.extend((0..50).map(|i| n - 1 - 3 * i));
    sets.push(("clustered".to_string(), clustered));
    let mut rng = SplitMix64::new(n as u64);
    let mut scrambled = even(101);
    scrambled.extend(even(101));
    scrambled.extend([0, n - 1, 0, n / 2]);
    rng.shuffle(&mut scrambled);
    sets.push(("repeated, unsorted".to_string(), scrambled));
    sets
}

/// The inputs: corpus cases that trouble bucket and sample methods, and Cauchy and
/// integer-valued data.
fn inputs<T: TestElement>(n: usize) -> Vec<Case<T>> {
    let names = [
        "uniform",
        "normal",
        "sorted",
        "distinct_16",
        "all_equal",
        "bucket_killer",
        "huge_outliers",
        "nan_mixed",
    ];
    let mut cases: Vec<Case<T>> = names
        .iter()
        .filter_map(|&name| generate::<T>(name, n).map(|data| Case { name, data }))
        .collect();
    let mut rng = SplitMix64::from_label(&format!("{}/cauchy", T::DTYPE), n as u64);
    let scale = if T::FLOAT { 1.0 } else { 1e3 };
    cases.push(Case {
        name: "cauchy",
        data: (0..n)
            .map(|_| {
                let c = (std::f64::consts::PI * (rng.unit() - 0.5)).tan() * scale;
                T::from_f64(T::CENTER + c)
            })
            .collect(),
    });
    cases.push(Case {
        name: "integer_valued",
        data: (0..n)
            .map(|_| T::from_f64(T::CENTER + (rng.normal() * 100.0).round()))
            .collect(),
    });
    cases
}

/// Runs every algorithm of `algorithms` on every input and rank set.
fn check<T: TestElement>(selector: &Selector, n: usize, algorithms: &[Algorithm]) {
    let sets = rank_sets(n);
    for case in inputs::<T>(n) {
        let reference = Reference::new(&case.data);
        let policy = if case.has_nan() {
            NanPolicy::Last
        } else {
            NanPolicy::Error
        };
        let buffer = selector.device().is_cuda().then(|| {
            DeviceBuffer::from_host(selector.device(), &case.data)
                .unwrap_or_else(|e| panic!("uploading {}: {e}", case.label()))
        });
        for &algorithm in algorithms {
            let sel = selector.clone().algorithm(algorithm).nan_policy(policy);
            for (set, ranks) in &sets {
                let context = || {
                    format!(
                        "{} {algorithm} {} [{set}]",
                        selector.device().backend_name(),
                        case.label()
                    )
                };
                let got = match &buffer {
                    Some(buf) => sel.multiselect(buf, ranks),
                    None => sel.multiselect(&case.data, ranks),
                }
                .unwrap_or_else(|e| panic!("{}: {e}", context()));
                reference.check_all(&got, ranks, &context);
            }
            let context = || {
                format!(
                    "{} {algorithm} {}",
                    selector.device().backend_name(),
                    case.label()
                )
            };
            // The host path and quantiles (pairs of ranks) through the same algorithm.
            let ranks = &sets[2].1;
            let got = sel
                .multiselect(&case.data, ranks)
                .unwrap_or_else(|e| panic!("{} (host input): {e}", context()));
            reference.check_all(&got, ranks, &|| format!("{} (host input)", context()));
            let qs: Vec<f64> = (0..=100).map(|p| p as f64 / 100.0).collect();
            let cpu = Selector::new().nan_policy(policy);
            let want = cpu
                .quantiles(&case.data, &qs, QuantileMethod::Linear)
                .unwrap();
            let got = match &buffer {
                Some(buf) => sel.quantiles(buf, &qs, QuantileMethod::Linear),
                None => sel.quantiles(&case.data, &qs, QuantileMethod::Linear),
            }
            .unwrap_or_else(|e| panic!("{} quantiles: {e}", context()));
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{} quantile {i}: got {g}, want {w}",
                    context()
                );
            }
            if case.has_nan() {
                check_nan_policies(&sel, &case, buffer.as_ref(), &context);
            }
        }
        if let Some(buf) = &buffer {
            let back = buf.to_host().unwrap();
            assert!(
                same_bits(&back, &case.data),
                "{}: the device buffer was modified",
                case.label()
            );
        }
    }
}

/// `Omit` ranks the numbers only; `Error` refuses the input.
fn check_nan_policies<T: TestElement>(
    sel: &Selector,
    case: &Case<T>,
    buffer: Option<&DeviceBuffer<T>>,
    context: &dyn Fn() -> String,
) {
    let numbers = Reference::without_nan(&case.data);
    let m = numbers.len();
    let ranks: Vec<usize> = (0..101).map(|i| i * (m - 1) / 100).collect();
    let omit = sel.clone().nan_policy(NanPolicy::Omit);
    let got = match buffer {
        Some(buf) => omit.multiselect(buf, &ranks),
        None => omit.multiselect(&case.data, &ranks),
    }
    .unwrap_or_else(|e| panic!("{} Omit: {e}", context()));
    numbers.check_all(&got, &ranks, &|| format!("{} Omit", context()));
    let strict = sel.clone().nan_policy(NanPolicy::Error);
    let result = match buffer {
        Some(buf) => strict.multiselect(buf, &ranks),
        None => strict.multiselect(&case.data, &ranks),
    };
    assert!(
        matches!(result, Err(Error::NanInInput { .. })),
        "{}: NaN under Error must be refused, got {result:?}",
        context()
    );
}

/// Every type through the backend's multiselections.
fn check_all_types(selector: &Selector) {
    let (n, algorithms): (usize, &[Algorithm]) = if selector.device().is_cuda() {
        (GPU_N, CUDA_MULTI)
    } else {
        (CPU_N, &[Algorithm::Auto, Algorithm::BucketMultiselect])
    };
    check::<f32>(selector, n, algorithms);
    check::<f64>(selector, n, algorithms);
    check::<i32>(selector, n, algorithms);
    check::<i64>(selector, n, algorithms);
    check::<u32>(selector, n, algorithms);
    check::<u64>(selector, n, algorithms);
}

backend_test!(many_ranks_every_type, |selector: Selector| {
    check_all_types(&selector);
});

backend_test!(
    iterative_and_fused_multiselections_are_cuda_only,
    |selector: Selector| {
        for algorithm in [
            Algorithm::IterativeBucketMultiselect,
            Algorithm::FusedMultiselect,
        ] {
            let sel = selector.clone().algorithm(algorithm);
            let result = sel.multiselect(&[3.0f64, 1.0, 2.0], &[0, 2]);
            if selector.device().is_cuda() {
                assert_eq!(result.unwrap(), vec![1.0, 3.0], "{algorithm}");
            } else {
                assert!(
                    matches!(result, Err(Error::UnsupportedAlgorithm { .. })),
                    "{algorithm} on the CPU: {result:?}"
                );
            }
        }
    }
);
