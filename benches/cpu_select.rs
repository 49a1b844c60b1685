//! CPU selection benchmark: the median of `n = 2^16 … 2^26` uniform random `f32` by every CPU
//! algorithm through the public API, against baselines — `select_nth_unstable` and a full sort
//! on a copy (the standard library), and the one-read floor: a (vectorizable) sum of the array,
//! which reads every value once, on one thread like `numpy.sum` (`sum`) and on all threads
//! (`sum-parallel`).
//!
//! Benchmark ids are `median_f32/2^P/NAME`, so criterion's name filter picks sizes or
//! algorithms: `cargo bench --bench cpu_select -- '2\^26'` or `-- 'floyd|sum'`.
//!
//! The `percentiles_f32/2^P/COUNT/NAME` group measures `Selector::quantiles` (numpy's linear
//! method) at `COUNT` uniformly spaced probabilities `0, 1/(COUNT-1), ..., 1` (11, 101 and 1001:
//! up to `2 · COUNT` ranks) for `n = 2^20, 2^24, 2^26` (and `quantiles_approximate` as
//! `COUNT/approximate`), with the parallel sum as the floor:
//! `cargo bench --bench cpu_select -- 'percentiles'`. `percentiles_types/2^24/NAME/ALGORITHM`
//! takes 101 percentiles of normal and log-normal `f32`, uniform `i32` and uniform `f64`.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode,
    Throughput,
};
use kselect::{Algorithm, QuantileMethod, Selector};
use rayon::prelude::*;

/// `n` uniform random `f32` in `[0, 1)` from a SplitMix64 stream.
fn uniform_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// The sum of `data` in 16 independent lanes, so that it vectorizes and runs at memory speed
/// (a plain sequential float sum is latency-bound, several times slower than one read).
fn sum_lanes(data: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    let mut chunks = data.chunks_exact(16);
    for chunk in &mut chunks {
        for (acc, &x) in lanes.iter_mut().zip(chunk) {
            *acc += x;
        }
    }
    lanes.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// The group `name` of `n` `f32` values: 10 samples, the warm-up and measurement times
/// `(ms, s)` given, flat sampling when the input is `big`.
fn f32_group(
    c: &mut Criterion,
    name: String,
    n: usize,
    big: bool,
    (warm_up_ms, measurement_s): (u64, u64),
) -> BenchmarkGroup<'_, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(warm_up_ms))
        .measurement_time(Duration::from_secs(measurement_s))
        .throughput(Throughput::Bytes((n * std::mem::size_of::<f32>()) as u64));
    if big {
        group.sampling_mode(SamplingMode::Flat);
    }
    group
}

/// `sum-parallel`: the sum of `data` on all threads, the floor of a read.
fn bench_parallel_sum(group: &mut BenchmarkGroup<'_, WallTime>, data: &[f32]) {
    group.bench_function("sum-parallel", |b| {
        b.iter(|| {
            black_box(data)
                .par_chunks(1 << 16)
                .map(sum_lanes)
                .sum::<f32>()
        })
    });
}

/// Benchmarks the quantiles `qs` of `data` by the default and by quickMultiSelect, as
/// `NAME/ALGORITHM`.
fn both<T: kselect::Element>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    data: &[T],
    qs: &[f64],
) {
    for algorithm in [Algorithm::Auto, Algorithm::QuickMultiselect] {
        let selector = Selector::new().algorithm(algorithm);
        group.bench_function(format!("{name}/{}", algorithm.name()), |b| {
            b.iter(|| {
                selector
                    .quantiles(black_box(data), qs, QuantileMethod::Linear)
                    .expect("percentiles")
            })
        });
    }
}

/// The benchmarks of one size.
fn bench_size(c: &mut Criterion, power: u32) {
    let n = 1usize << power;
    let data = uniform_f32(n, 0x5EED + power as u64);
    let k = n / 2;
    let big = power >= 22;
    let times = if big { (200, 2) } else { (500, 1) };
    let mut group = f32_group(c, format!("median_f32/2^{power}"), n, big, times);
    group.bench_function("sum", |b| b.iter(|| sum_lanes(black_box(&data))));
    bench_parallel_sum(&mut group, &data);
    group.bench_function("std-select_nth_unstable", |b| {
        b.iter(|| {
            let mut copy = black_box(&data).to_vec();
            *copy.select_nth_unstable_by(k, f32::total_cmp).1
        })
    });
    group.bench_function("std-sort", |b| {
        b.iter(|| {
            let mut copy = black_box(&data).to_vec();
            copy.sort_unstable_by(f32::total_cmp);
            copy[k]
        })
    });
    for &algorithm in Algorithm::cpu_algorithms() {
        let selector = Selector::new().algorithm(algorithm);
        group.bench_function(BenchmarkId::from_parameter(algorithm.name()), |b| {
            b.iter(|| selector.select(black_box(&data), k).expect("median"))
        });
    }
    group.finish();
}

/// `count` uniformly spaced probabilities from 0 to 1.
fn spaced(count: usize) -> Vec<f64> {
    (0..count).map(|i| i as f64 / (count - 1) as f64).collect()
}

/// The percentile benchmarks of one size: 11, 101 and 1001 quantiles by the default (`auto`),
/// by quickMultiSelect (the default before bucketMultiSelect) and approximately (one counting
/// pass), against the parallel sum.
fn bench_percentiles(c: &mut Criterion, power: u32) {
    let n = 1usize << power;
    let data = uniform_f32(n, 0x9E5 + power as u64);
    let big = power >= 22;
    let times = if big { (300, 3) } else { (500, 1) };
    let mut group = f32_group(c, format!("percentiles_f32/2^{power}"), n, big, times);
    bench_parallel_sum(&mut group, &data);
    for count in [11, 101, 1001] {
        let qs = spaced(count);
        both(&mut group, &count.to_string(), &data, &qs);
        let selector = Selector::new();
        group.bench_function(format!("{count}/approximate"), |b| {
            b.iter(|| {
                selector
                    .quantiles_approximate(black_box(&data), &qs, QuantileMethod::Linear)
                    .expect("approximate percentiles")
            })
        });
    }
    group.finish();
}

/// `n` standard normal values (Box–Muller on a SplitMix64 stream).
fn normal_f64(n: usize, seed: u64) -> Vec<f64> {
    let u: Vec<f32> = uniform_f32(n + n % 2, seed);
    u.chunks_exact(2)
        .flat_map(|p| {
            let r = (-2.0 * (1.0 - p[0] as f64).ln()).sqrt();
            let a = std::f64::consts::TAU * p[1] as f64;
            [r * a.cos(), r * a.sin()]
        })
        .take(n)
        .collect()
}

/// 101 percentiles of 2^24 values of other distributions and types, by the default and by
/// quickMultiSelect: `percentiles_types/2^24/NAME/ALGORITHM`.
fn bench_types(c: &mut Criterion) {
    let n = 1usize << 24;
    let qs = spaced(101);
    let normal = normal_f64(n, 0x7E5);
    let mut group = c.benchmark_group("percentiles_types/2^24");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sampling_mode(SamplingMode::Flat);
    let f32_normal: Vec<f32> = normal.iter().map(|&x| x as f32).collect();
    both(&mut group, "f32-normal", &f32_normal, &qs);
    let lognormal: Vec<f32> = normal.iter().map(|&x| (3.0 * x).exp() as f32).collect();
    both(&mut group, "f32-lognormal-3", &lognormal, &qs);
    let i32s: Vec<i32> = uniform_f32(n, 0x132)
        .iter()
        .map(|&x| (x as f64 * 4e9 - 2e9) as i32)
        .collect();
    both(&mut group, "i32-uniform", &i32s, &qs);
    let f64s: Vec<f64> = uniform_f32(n, 0xF64).iter().map(|&x| x as f64).collect();
    both(&mut group, "f64-uniform", &f64s, &qs);
    group.finish();
}

/// Every size, smallest first.
fn benches(c: &mut Criterion) {
    for power in (16..=26).step_by(2) {
        bench_size(c, power);
    }
    for power in [20, 24, 26] {
        bench_percentiles(c, power);
    }
    bench_types(c);
}

criterion_group!(cpu_select, benches);
criterion_main!(cpu_select);
