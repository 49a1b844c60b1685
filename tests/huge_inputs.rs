//! Every CUDA algorithm on 2^28 values of every element type (and 2^30 `f32` values), against
//! the CPU reference, on the inputs that stress the bracketing and bucketing paths most.
//!
//! These need a GPU with tens of GiB and minutes of CPU time for the references, so they are
//! ignored by default: run them with `cargo test --release --test huge_inputs -- --ignored`,
//! or `gpu-bin/huge_inputs --ignored` on the GPU machine. Without a GPU they pass with a
//! note, unless `KSELECT_REQUIRE_GPU=1`.

mod common;

use common::{algorithms, cuda_device, generate, TestElement};
use kselect::{Algorithm, Device, DeviceBuffer, NanPolicy, Selector};

/// The corpus cases run at these sizes: a random one, the ordered one, few distinct values,
/// the bucket killer, huge outliers and, for floats, NaNs mixed in.
const CASES: &[&str] = &[
    "uniform",
    "sorted",
    "distinct_16",
    "bucket_killer",
    "huge_outliers",
    "nan_mixed",
];

fn check_type<T: TestElement>(device: &Device, n: usize, cases: &[&str]) {
    let cpu = Selector::on(Device::Cpu).nan_policy(NanPolicy::Last);
    for &name in cases {
        let Some(data) = generate::<T>(name, n) else {
            continue;
        };
        let ranks = [0, 1, n / 100, n / 2, n - 1];
        let expected = cpu.multiselect(&data, &ranks).expect("CPU reference");
        let buf = DeviceBuffer::from_host(device, &data).expect("upload");
        drop(data);
        for &algorithm in algorithms(device) {
            let sel = Selector::on(device.clone())
                .algorithm(algorithm)
                .nan_policy(NanPolicy::Last);
            let got = sel
                .multiselect(&buf, &ranks)
                .unwrap_or_else(|e| panic!("{} {name} n={n} {algorithm}: {e}", T::DTYPE));
            for ((&k, g), e) in ranks.iter().zip(&got).zip(&expected) {
                assert!(
                    g.to_key() == e.to_key(),
                    "{} {name} n={n} {algorithm} rank {k}: got {g:?}, expected {e:?}",
                    T::DTYPE
                );
            }
        }
        eprintln!("{} {name} n={n}: every CUDA algorithm agrees", T::DTYPE);
    }
}

#[test]
#[ignore = "needs a large GPU and minutes; run with --ignored"]
fn every_type_at_2_pow_28() {
    let Some(device) = cuda_device() else {
        return;
    };
    let n = 1 << 28;
    check_type::<f32>(&device, n, CASES);
    check_type::<f64>(&device, n, CASES);
    check_type::<i32>(&device, n, CASES);
    check_type::<i64>(&device, n, CASES);
    check_type::<u32>(&device, n, CASES);
    check_type::<u64>(&device, n, CASES);
}

#[test]
#[ignore = "needs a large GPU and minutes; run with --ignored"]
fn f32_at_2_pow_30() {
    let Some(device) = cuda_device() else {
        return;
    };
    check_type::<f32>(&device, 1 << 30, &["uniform", "nan_mixed"]);
}

#[test]
fn the_cases_exist() {
    // Every name is a corpus case for f32 (the float-only ones included).
    for &name in CASES {
        assert!(generate::<f32>(name, 16).is_some(), "{name}");
    }
    assert!(Algorithm::cuda_algorithms().contains(&Algorithm::Auto));
}
