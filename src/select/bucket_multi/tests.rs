//! The two bucket multiselections against sort&choose on the GPU (skipped without one, failing
//! when `KSELECT_REQUIRE_GPU=1`), and the measurement behind `bms::SEGMENTED_UP_TO`.

use super::bms::{self, Reduction};
use super::iterative;
use crate::device::cuda::tests::gpu;
use crate::device::cuda::CudaDevice;
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::random::SplitMix64;
use crate::select::host::testing::{inputs, many_level_inputs, Gen};
use crate::select::sort_choose;

/// A multiselection under test.
type Method<T> = fn(&DeviceBuffer<T>, &[usize]) -> Result<(Vec<T>, Option<usize>)>;

/// Asserts that the device buffer still holds `data`, key for key.
fn assert_unchanged<T: Element>(buf: &DeviceBuffer<T>, data: &[T], context: &str) {
    let now = buf.to_host().unwrap();
    assert!(
        now.iter().zip(data).all(|(a, b)| a.to_key() == b.to_key()),
        "{context}: the input was modified"
    );
}

/// Every form: bucketMultiSelect with each reduction, and the iterative form.
fn methods<T: Element>() -> Vec<(&'static str, Method<T>)> {
    vec![
        ("bms", bms::multiselect::<T>),
        ("bms-segmented", |b, r| {
            bms::multiselect_with(b, r, Reduction::Segmented)
        }),
        ("bms-flags", |b, r| {
            bms::multiselect_with(b, r, Reduction::Flags)
        }),
        ("iterative", iterative::multiselect::<T>),
    ]
}

/// Rank sets for `n` values: evenly spaced counts, a cluster, repeats in no order.
fn rank_sets(n: usize, rng: &mut SplitMix64) -> Vec<(&'static str, Vec<usize>)> {
    let even = |m: usize| -> Vec<usize> { (0..m).map(|i| i * (n - 1) / (m - 1).max(1)).collect() };
    let mut scrambled: Vec<usize> = (0..300).map(|_| rng.below(n)).collect();
    scrambled.extend_from_slice(&[n - 1, 0, n - 1, n / 2, 0]);
    vec![
        ("one", vec![n / 3]),
        ("edges", vec![0, n - 1]),
        ("11", even(11)),
        ("101", even(101)),
        ("1001", even(1001.min(n))),
        (
            "clustered",
            (0..500).map(|i| (n / 3 + i).min(n - 1)).collect(),
        ),
        ("scrambled", scrambled),
    ]
}

/// Checks every form on every adversarial input of one type at a few lengths.
fn check_type<T: Gen>(dev: &CudaDevice) {
    let mut rng = SplitMix64::new(5);
    for n in [1usize, 33, 4097, 16_384, 16_385, 70_001, 300_007] {
        for (name, data) in inputs::<T>(n, 11 + n as u64) {
            let keys = sort_choose::cpu::sorted_keys(&data, true);
            let nans = data.iter().filter(|x| x.is_nan()).count();
            let buf = DeviceBuffer::from_host_on(dev, &data).unwrap();
            for (set, ranks) in rank_sets(n, &mut rng) {
                for (method, run) in methods::<T>() {
                    let context = format!("{} {name} n={n} {set} {method}", T::DTYPE);
                    let (got, counted) =
                        run(&buf, &ranks).unwrap_or_else(|e| panic!("{context}: {e}"));
                    if let Some(c) = counted {
                        assert_eq!(c, nans, "{context}: NaN count");
                    }
                    assert_eq!(got.len(), ranks.len(), "{context}");
                    for (&k, v) in ranks.iter().zip(&got) {
                        assert!(
                            v.to_key() == keys[k],
                            "{context} k={k}: got {v:?}, want {:?}",
                            T::from_key(keys[k])
                        );
                    }
                }
            }
            assert_unchanged(&buf, &data, &format!("{} {name} n={n}", T::DTYPE));
        }
    }
}

/// Every form against sort&choose on every type and adversarial input.
#[test]
fn gpu_matches_sort_on_every_input() {
    let Some(dev) = gpu() else { return };
    check_type::<f32>(&dev);
    check_type::<f64>(&dev);
    check_type::<i32>(&dev);
    check_type::<i64>(&dev);
    check_type::<u32>(&dev);
    check_type::<u64>(&dev);
}

/// Inputs that need many levels: clusters at ever smaller scales, 64-bit integers a few apart
/// among huge ones, and 8191 ranks.
#[test]
fn gpu_runs_many_levels() {
    let Some(dev) = gpu() else { return };
    let (nested, ints) = many_level_inputs(400_000);
    fn run<T: Element>(dev: &CudaDevice, data: &[T]) {
        let keys = sort_choose::cpu::sorted_keys(data, true);
        let buf = DeviceBuffer::from_host_on(dev, data).unwrap();
        let n = data.len();
        for m in [40usize, 8191] {
            let ranks: Vec<usize> = (0..m).map(|i| i * (n - 1) / (m - 1)).collect();
            for (method, f) in methods::<T>() {
                let (got, _) = f(&buf, &ranks).unwrap();
                for (&k, v) in ranks.iter().zip(&got) {
                    assert!(v.to_key() == keys[k], "{method} m={m} k={k}: {v:?}");
                }
            }
        }
    }
    run(&dev, &nested);
    run(&dev, &ints);
}

/// Hands `n` uniform `f32` values in `[0, 1)` to `on_f32s`, then (those dropped) `n` uniform
/// `f64` values in `[0, 1)` to `on_f64s`, both drawn from one stream seeded with `seed`.
fn with_uniform_floats(
    n: usize,
    seed: u64,
    on_f32s: impl FnOnce(&[f32]),
    on_f64s: impl FnOnce(&[f64]),
) {
    let mut rng = SplitMix64::new(seed);
    let f32s: Vec<f32> = (0..n)
        .map(|_| (rng.next_u64() >> 40) as f32 / (1u32 << 24) as f32)
        .collect();
    on_f32s(&f32s);
    drop(f32s);
    let f64s: Vec<f64> = (0..n)
        .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
        .collect();
    on_f64s(&f64s);
}

/// Times bucketMultiSelect with each reduction for growing numbers of evenly spaced ranks (the
/// active buckets), at 2^26 uniform values of f32 and f64 (median of 7 runs, CUDA events), and
/// prints where the flag-based write starts to win. Run on a GPU:
/// `gpu-bin/lib --ignored measure_reduction_cutoff --nocapture`.
#[test]
#[ignore]
fn measure_reduction_cutoff() {
    let Some(dev) = gpu() else { return };
    fn time<T: Element>(dev: &CudaDevice, data: &[T]) {
        let buf = DeviceBuffer::from_host_on(dev, data).unwrap();
        let n = data.len();
        println!("{} n={n}: ranks, segmented ms, flags ms", T::DTYPE);
        for m in [2usize, 8, 32, 128, 512, 2048, 8191] {
            let ranks: Vec<usize> = (0..m).map(|i| i * (n - 1) / (m - 1)).collect();
            let mut row = Vec::new();
            for reduction in [Reduction::Segmented, Reduction::Flags] {
                let mut times = Vec::new();
                for rep in 0..9 {
                    let timer = crate::device::cuda::GpuTimer::start(dev).unwrap();
                    bms::multiselect_with(&buf, &ranks, reduction).unwrap();
                    let ms = timer.stop().unwrap();
                    if rep >= 2 {
                        times.push(ms);
                    }
                }
                times.sort_by(f32::total_cmp);
                row.push(times[times.len() / 2]);
            }
            println!("{m:>6} {:>10.3} {:>10.3}", row[0], row[1]);
        }
    }
    with_uniform_floats(1 << 26, 3, |v| time(&dev, v), |v| time(&dev, v));
}

/// Times the phases of the iterative form on 2^28 uniform values with the 101 percentiles:
/// the sample, the first level (count, totals, choice), its write, and the whole call, beside
/// the one-read floor (median of 7 runs, CUDA events). Run on a GPU:
/// `gpu-bin/lib --ignored profile_iterative_phases --nocapture`.
#[test]
#[ignore]
fn profile_iterative_phases() {
    use super::engine::NONE;
    use super::plan::Bounds;
    use super::run::Run;
    use crate::device::cuda::GpuTimer;
    let Some(dev) = gpu() else { return };
    fn median(mut v: Vec<f32>) -> f32 {
        v.sort_by(f32::total_cmp);
        v[v.len() / 2]
    }
    fn profile<T: Element>(dev: &CudaDevice, data: &[T]) {
        let buf = DeviceBuffer::from_host_on(dev, data).unwrap();
        let n = data.len();
        let ranks: Vec<usize> = (0..101).map(|i| i * (n - 1) / 100).collect();
        let x = buf.as_slice().as_view();
        let mut rows: Vec<(&str, Vec<f32>)> = ["floor", "sample", "level", "write", "whole"]
            .iter()
            .map(|&name| (name, Vec::new()))
            .collect();
        for _ in 0..7 {
            let timer = GpuTimer::start(dev).unwrap();
            buf.sum().unwrap();
            rows[0].1.push(timer.stop().unwrap());
            let mut run = Run::new(&buf, &ranks).unwrap();
            let timer = GpuTimer::start(dev).unwrap();
            let (sample, _) = run.eng.first_look(&x, false).unwrap();
            rows[1].1.push(timer.stop().unwrap());
            let timer = GpuTimer::start(dev).unwrap();
            let (level, cands) = run.first_level(&sample, Bounds::Open).unwrap();
            rows[2].1.push(timer.stop().unwrap());
            let mut dest = vec![NONE; level.actives.len()];
            let mut total = 0u64;
            for c in &cands {
                if c.lo != c.hi {
                    dest[c.active] = total;
                    total += c.count;
                }
            }
            let timer = GpuTimer::start(dev).unwrap();
            let out = run
                .eng
                .write_segmented::<T, T::Key>(&x, &level, &dest, total as usize)
                .unwrap();
            dev.synchronize().unwrap();
            rows[3].1.push(timer.stop().unwrap());
            drop((out, level, run));
            let timer = GpuTimer::start(dev).unwrap();
            iterative::multiselect(&buf, &ranks).unwrap();
            rows[4].1.push(timer.stop().unwrap());
        }
        let line: Vec<String> = rows
            .into_iter()
            .map(|(name, t)| format!("{name} {:.3}", median(t)))
            .collect();
        println!("{} n={n}: {} (ms)", T::DTYPE, line.join(", "));
    }
    with_uniform_floats(1 << 28, 9, |v| profile(&dev, v), |v| profile(&dev, v));
}

/// The fused multiselection against sort&choose on every adversarial input of every type at
/// 2^22 values (rank sets it fuses, up to 41 ranks, and sets it hands on), and with 101 to 2048
/// percentiles at 2^24 values of the floats; its exact form the same on every set it takes; on
/// inputs without heavy repeats the fused run and the exact one must succeed (no fallback).
#[test]
fn gpu_fused_matches_sort_on_every_input() {
    use super::fused;
    let Some(dev) = gpu() else { return };
    fn even(n: usize, m: usize) -> Vec<usize> {
        (0..m).map(|i| i * (n - 1) / (m - 1)).collect()
    }
    fn check<T: Gen>(
        dev: &CudaDevice,
        n: usize,
        sets: &[(&str, Vec<usize>)],
        only: Option<&[&str]>,
    ) {
        for (name, data) in inputs::<T>(n, 23) {
            if only.is_some_and(|names| !names.contains(&name)) {
                continue;
            }
            let keys = sort_choose::cpu::sorted_keys(&data, true);
            let nans = data.iter().filter(|x| x.is_nan()).count();
            let buf = DeviceBuffer::from_host_on(dev, &data).unwrap();
            for (set, ranks) in sets {
                let context = format!("{} {name} n={n} {set}", T::DTYPE);
                let (got, counted) =
                    fused::multiselect(&buf, ranks).unwrap_or_else(|e| panic!("{context}: {e}"));
                if let Some(c) = counted {
                    assert_eq!(c, nans, "{context}: NaN count");
                }
                for (&k, v) in ranks.iter().zip(&got) {
                    assert!(
                        v.to_key() == keys[k],
                        "{context} k={k}: got {v:?}, want {:?}",
                        T::from_key(keys[k])
                    );
                }
                let mut distinct = ranks.clone();
                distinct.sort_unstable();
                distinct.dedup();
                let fusable = distinct.len() <= fused::MAX_RANKS
                    && fused::subset_group(n, &distinct).is_some();
                // Inputs without heavy repeats (unsigned types clamp the signed ones' negatives to 0).
                let spread: &[&str] = if T::DTYPE.name().starts_with('u') {
                    &["bits"]
                } else {
                    &["uniform", "bits", "reversed", "sorted"]
                };
                if fusable && spread.contains(&name) {
                    let run = fused::fused_run(&buf, &distinct).unwrap();
                    assert!(run.is_ok(), "{context}: the fused run fell back: {run:?}");
                }
                // The exact form on every set, whichever form the set would take.
                if distinct.len() <= fused::MAX_EXACT_RANKS {
                    match fused::exact_run(&buf, &distinct).unwrap() {
                        Ok((got, top)) => {
                            for (&k, &key) in distinct.iter().zip(&got) {
                                assert!(
                                    key == keys[k].to_u64(),
                                    "{context} k={k}: the exact form found {:?}, want {:?}",
                                    T::from_key(T::Key::from_u64(key)),
                                    T::from_key(keys[k])
                                );
                            }
                            if T::DTYPE.is_float() {
                                assert_eq!(top, nans, "{context}: the exact form's NaN count");
                            }
                        }
                        // Up to 1001 ranks the active buckets stay far below the
                        // workspace; 2048 of them may fill it where the plan's buckets are
                        // uneven (the caller then runs the iterative form).
                        Err(status) => assert!(
                            !spread.contains(&name) || distinct.len() > 1001,
                            "{context}: the exact run fell back: {status}"
                        ),
                    }
                }
            }
            assert_unchanged(&buf, &data, &format!("{} {name}", T::DTYPE));
        }
    }
    let n = (1 << 22) + 5;
    let mut rng = SplitMix64::new(17);
    let mut scrambled: Vec<usize> = (0..30).map(|_| rng.below(n)).collect();
    scrambled.extend_from_slice(&[n - 1, 0, n / 2, 0]);
    let sets: Vec<(&str, Vec<usize>)> = vec![
        ("one", vec![n / 3]),
        ("edges", vec![0, n - 1]),
        ("11", even(n, 11)),
        ("41", even(n, 41)),
        ("scrambled", scrambled),
        ("101", even(n, 101)),
        ("1001", even(n, 1001)),
    ];
    check::<f32>(&dev, n, &sets, None);
    check::<f64>(&dev, n, &sets, None);
    check::<i32>(&dev, n, &sets, None);
    check::<i64>(&dev, n, &sets, None);
    check::<u32>(&dev, n, &sets, None);
    check::<u64>(&dev, n, &sets, None);
    let n = (1 << 24) + 5;
    let sets: Vec<(&str, Vec<usize>)> = vec![
        ("101", even(n, 101)),
        ("256", even(n, 256)),
        ("1001", even(n, 1001)),
        ("2048", even(n, 2048)),
    ];
    let names: &[&str] = &[
        "unit",
        "sorted",
        "distinct1024",
        "bucket_killer",
        "some_nan",
        "outliers",
    ];
    check::<f32>(&dev, n, &sets, Some(names));
    check::<f64>(&dev, n, &sets, Some(names));
}
