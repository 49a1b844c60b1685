//! Workspace queries: `Selector::workspace_bytes` bounds the device memory every CUDA algorithm
//! takes (measured by the memory pool's peak) on the adversarial corpus, several sizes and
//! rank sets; `CudaDevice::reserve` maps that much once, so the call maps nothing more. On the
//! CPU the query answers 0 and checks its arguments as a selection does.
//!
//! The GPU part is one test: the pool's peak is the device's, so no other selection may run
//! beside it.

mod common;

use common::*;
use kselect::{Algorithm, CudaDevice, Device, DeviceBuffer, Error, NanPolicy, Selector};

#[test]
fn on_the_cpu_the_query_answers_nothing_and_checks_its_arguments() {
    let sel = cpu_selector();
    assert_eq!(
        sel.workspace_bytes::<f64>(1 << 20, &[0, 5, 1 << 19])
            .unwrap(),
        0
    );
    assert_eq!(sel.workspace_bytes::<u32>(10, &[]).unwrap(), 0);
    assert!(matches!(
        sel.workspace_bytes::<f32>(10, &[3, 10]),
        Err(Error::RankOutOfRange { k: 10, n: 10 })
    ));
    assert!(matches!(
        sel.workspace_bytes::<f32>(0, &[0]),
        Err(Error::EmptyInput)
    ));
    let cuda_only = sel.clone().algorithm(Algorithm::RadixInPlace);
    assert!(cuda_only.workspace_bytes::<f32>(100, &[1]).is_err());
}

/// Rank sets for `n` values: one median, the two ends, 101 percentiles and, for the
/// multiselections, 1001 of them.
fn rank_sets(n: usize, many: bool) -> Vec<(&'static str, Vec<usize>)> {
    let spread = |count: usize| (0..count).map(|i| i * (n - 1) / (count - 1)).collect();
    let mut sets = vec![
        ("median", vec![n / 2]),
        ("ends", vec![0, n - 1]),
        ("101", spread(101)),
    ];
    if many {
        sets.push(("1001", spread(1001)));
    }
    sets
}

/// Whether an algorithm selects every rank with one pass of its own (1001 ranks would only
/// repeat what 101 show).
fn one_rank_at_a_time(algorithm: Algorithm) -> bool {
    matches!(
        algorithm,
        Algorithm::Radix
            | Algorithm::RadixInPlace
            | Algorithm::Bucket
            | Algorithm::CuttingPlane
            | Algorithm::Quick
            | Algorithm::Randomized
    )
}

/// One measured call: the pool's peak above what it held before, and the bound.
struct Measured {
    label: String,
    peak: usize,
    bound: usize,
}

/// The pool's usage (the device allocates from a pool: the crate sets one up).
fn usage(gpu: &CudaDevice) -> kselect::PoolUsage {
    gpu.pool_usage()
        .unwrap()
        .expect("the device allocates from a memory pool")
}

/// Every CUDA algorithm on every case of the corpus for `T` at `n` values (the first `cases`
/// of them), each rank set: the peak against the bound.
fn measure<T: TestElement>(gpu: &CudaDevice, n: usize, cases: usize, out: &mut Vec<Measured>) {
    let device = Device::Cuda(gpu.clone());
    for case in corpus::<T>(n).into_iter().take(cases) {
        let buf = DeviceBuffer::from_host(&device, &case.data).unwrap();
        for &algorithm in Algorithm::cuda_algorithms() {
            let sel = Selector::on(device.clone())
                .algorithm(algorithm)
                .nan_policy(NanPolicy::Last);
            for (name, ranks) in rank_sets(n, !one_rank_at_a_time(algorithm)) {
                let bound = sel.workspace_bytes::<T>(n, &ranks).unwrap();
                gpu.reset_pool_peaks().unwrap();
                let before = usage(gpu).in_use;
                sel.multiselect(&buf, &ranks).unwrap();
                gpu.synchronize().unwrap();
                let peak = usage(gpu).in_use_peak.saturating_sub(before);
                out.push(Measured {
                    label: format!("{algorithm} {} {name}", case.label()),
                    peak,
                    bound,
                });
            }
        }
    }
}

#[test]
fn no_cuda_selection_takes_more_than_its_workspace_bound() {
    let Some(Device::Cuda(gpu)) = cuda_device() else {
        return;
    };
    let device = Device::Cuda(gpu.clone());

    // The pool's rounding of a small buffer.
    gpu.reset_pool_peaks().unwrap();
    let before = usage(&gpu).in_use;
    let one = DeviceBuffer::from_host(&device, &[1u32]).unwrap();
    println!(
        "pool rounding of a 4-byte buffer: {} bytes",
        usage(&gpu).in_use - before
    );
    drop(one);

    // A reserve of the bound maps the call's whole workspace before it.
    let n = 1 << 24;
    let data = generate::<f32>("huge_outliers", n).unwrap();
    let buf = DeviceBuffer::from_host(&device, &data).unwrap();
    let ranks: Vec<usize> = (0..=100).map(|p| p * (n - 1) / 100).collect();
    let sel = Selector::on(device.clone());
    gpu.reserve(sel.workspace_bytes::<f32>(n, &ranks).unwrap())
        .unwrap();
    gpu.reset_pool_peaks().unwrap();
    let mapped = usage(&gpu).reserved;
    sel.multiselect(&buf, &ranks).unwrap();
    gpu.synchronize().unwrap();
    let after = usage(&gpu);
    println!(
        "reserve: {mapped} bytes mapped before the call, peak {} during it",
        after.reserved_peak
    );
    assert!(
        after.reserved_peak <= mapped,
        "the call mapped {} bytes beyond the reserve",
        after.reserved_peak - mapped
    );
    drop(buf);

    let mut measured = Vec::new();
    for &n in &[5_000usize, 70_001, 1 << 20, (1 << 22) + 5] {
        measure::<f32>(&gpu, n, usize::MAX, &mut measured);
        measure::<f64>(&gpu, n, usize::MAX, &mut measured);
        measure::<u32>(&gpu, n, 6, &mut measured);
    }
    measure::<f32>(&gpu, (1 << 25) + 3, 4, &mut measured);
    measure::<f64>(&gpu, 1 << 25, 2, &mut measured);

    let over: Vec<&Measured> = measured.iter().filter(|m| m.peak > m.bound).collect();
    for m in &measured {
        println!(
            "{}: peak {} bound {} ({:.2})",
            m.label,
            m.peak,
            m.bound,
            m.peak as f64 / m.bound.max(1) as f64
        );
    }
    assert!(
        over.is_empty(),
        "{} of {} calls took more than their bound:\n{}",
        over.len(),
        measured.len(),
        over.iter()
            .map(|m| format!("{}: peak {} > bound {}", m.label, m.peak, m.bound))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
