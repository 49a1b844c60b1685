//! Inputs large enough (n > 2^20) for the sample-based algorithms to take their bracketing
//! path rather than a small-input shortcut: every corpus case, the ranks where brackets are
//! most likely to miss (the ends) and the middle, against the sort reference.
//!
//! The CPU variant runs the default algorithm only (the others are covered by `selection`);
//! the CUDA variant runs every CUDA algorithm.

#[macro_use]
mod common;

use common::{algorithms_of, corpus, Reference, TestElement};
use kselect::{Algorithm, DeviceBuffer, NanPolicy, Selector};

/// Just above 2^20 (the smallest size that takes the bracketing path), so that no size-based shortcut applies and the tail is not a whole vector.
const N: usize = (1 << 20) + 3;

fn check_type<T: TestElement>(selector: &Selector) {
    let algorithms: Vec<Algorithm> = if selector.device().is_cuda() {
        algorithms_of(selector).to_vec()
    } else {
        vec![Algorithm::Auto]
    };
    for case in corpus::<T>(N) {
        let reference = Reference::new(&case.data);
        let n = case.data.len();
        let ranks = [0, 1, n / 100, n / 2, n - 2, n - 1];
        let device_buf = match selector.device() {
            kselect::Device::Cuda(_) => {
                Some(DeviceBuffer::from_host(selector.device(), &case.data).unwrap())
            }
            kselect::Device::Cpu => None,
        };
        for &algorithm in &algorithms {
            let sel = selector
                .clone()
                .algorithm(algorithm)
                .nan_policy(NanPolicy::Last);
            let context = || {
                format!(
                    "{} {algorithm} {}",
                    selector.device().backend_name(),
                    case.label()
                )
            };
            let got = sel
                .multiselect(&case.data, &ranks)
                .unwrap_or_else(|e| panic!("{}: {e}", context()));
            reference.check_all(&got, &ranks, &context);
            if let Some(buf) = &device_buf {
                let got = sel
                    .multiselect(buf, &ranks)
                    .unwrap_or_else(|e| panic!("{}: {e}", context()));
                reference.check_all(&got, &ranks, &|| format!("{} (device-resident)", context()));
            }
            if case.has_nan() {
                let strict = selector.clone().algorithm(algorithm);
                assert!(
                    matches!(
                        strict.select(&case.data, n / 2),
                        Err(kselect::Error::NanInInput { .. })
                    ),
                    "{}: NaN under the default policy must be an error",
                    context()
                );
            }
        }
    }
}

backend_test!(every_case_above_a_million, |selector: Selector| {
    check_type::<f32>(&selector);
    check_type::<f64>(&selector);
    check_type::<i32>(&selector);
    check_type::<u64>(&selector);
});
