//! GPU selection benchmark: each CUDA algorithm against the one-read floor (a sum over the same
//! array), timed with CUDA events in the same run, results checked against the CPU.
//!
//! ```text
//! cargo bench --bench gpu_select -- --sizes 24,26,28 --types f32,f64 --json out.json
//! ```
//!
//! Options: `--sizes` (log2 of n, comma separated), `--types`, `--dists` (uniform, normal,
//! half-normal, cauchy, distinct16, sorted, equal, two-values, bucket-killer, integers),
//! `--ranks` (rank expressions: `0`, `n/100`, `n/2`, `n-1`, or a number; each timed alone;
//! `--ranks none` times none), `--percentiles` (counts of evenly spaced ranks, each count timed
//! as one multiselection: `101` is the percentiles `i·(n−1)/100`), `--clustered` (counts of
//! consecutive ranks from `n/3`, each timed as one multiselection), `--algorithms` (CUDA
//! algorithm names), `--reps` (timed runs per case; the median is reported), `--json PATH`.
//! Each row prints the median time, the bandwidth of one read of the input at that time, and
//! the ratio to the floor. Without a GPU it prints a note and exits 0, unless
//! `KSELECT_REQUIRE_GPU=1`.
//!
//! ```text
//! gpu_select --sizes 28 --types f32,f64 --ranks none --percentiles 11,101,1001 --clustered 1000 \
//!     --algorithms auto,iterative-bucket-multiselect,bucket-multiselect,sample,sort-choose
//! ```

use kselect::{Algorithm, CudaDevice, Device, Element, Selector};
use rayon::prelude::*;

#[path = "common/gpu.rs"]
mod gpu;
#[path = "common/options.rs"]
mod options;
#[path = "common/report.rs"]
mod report;
#[path = "common/splitmix.rs"]
mod splitmix;

use gpu::Copies;
use report::median;

/// The calls before the timed ones.
const WARMUPS: usize = 3;

/// Command-line options.
struct Options {
    sizes: Vec<u32>,
    dists: Vec<String>,
    ranks: Vec<String>,
    percentiles: Vec<usize>,
    clustered: Vec<usize>,
    algorithms: Vec<Algorithm>,
    common: options::Common,
}

/// The options of the command line, with the defaults for those it does not give.
fn parse_options() -> Options {
    let mut opts = Options {
        sizes: vec![20, 24, 26, 28],
        dists: vec!["uniform".into(), "normal".into()],
        ranks: vec!["n/2".into()],
        percentiles: Vec::new(),
        clustered: Vec::new(),
        algorithms: vec![Algorithm::Radix, Algorithm::SortChoose],
        common: options::Common::new(&["f32", "f64", "u32"], 21),
    };
    options::for_each(|name, value| {
        match name {
            "--sizes" => opts.sizes = options::parsed(&value),
            "--dists" => opts.dists = options::list(&value),
            "--ranks" if value == "none" => opts.ranks = Vec::new(),
            "--ranks" => opts.ranks = options::list(&value),
            "--percentiles" => opts.percentiles = options::parsed(&value),
            "--clustered" => opts.clustered = options::parsed(&value),
            "--algorithms" => opts.algorithms = options::parsed(&value),
            _ => return opts.common.take(name, value),
        }
        true
    });
    opts
}

/// A value of the benchmark's element types built from a uniform `u64` and an `f64`.
trait BenchElement: Element {
    fn from_f64(x: f64) -> Self;
    fn from_bits_u64(x: u64) -> Self;
}

macro_rules! bench_float {
    ($t:ty) => {
        impl BenchElement for $t {
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn from_bits_u64(x: u64) -> Self {
                (x >> 11) as f64 as $t / (1u64 << 53) as $t
            }
        }
    };
}
macro_rules! bench_int {
    ($t:ty) => {
        impl BenchElement for $t {
            fn from_f64(x: f64) -> Self {
                (x * 1e6) as $t
            }
            fn from_bits_u64(x: u64) -> Self {
                x as $t
            }
        }
    };
}
bench_float!(f32);
bench_float!(f64);
bench_int!(i32);
bench_int!(i64);
bench_int!(u32);
bench_int!(u64);

fn generate<T: BenchElement>(dist: &str, n: usize) -> Vec<T> {
    splitmix::generate(n, 0x1234_5678, |s, i| {
        let r = splitmix::next(s);
        let unit = || ((r >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let mut gaussian = || {
            let u2 = (splitmix::next(s) >> 11) as f64 / (1u64 << 53) as f64;
            (-2.0 * unit().ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        match dist {
            "normal" => T::from_f64(gaussian()),
            "half-normal" => T::from_f64(gaussian().abs()),
            "cauchy" => T::from_f64((std::f64::consts::PI * (unit() - 0.5)).tan()),
            "distinct16" => T::from_f64((r % 16) as f64),
            "sorted" => T::from_f64(i as f64 / n as f64),
            "equal" => T::from_f64(1.0),
            "two-values" => T::from_f64(if r.is_multiple_of(20) { 2.0 } else { 1.0 }),
            "integers" => T::from_f64((gaussian() * 1000.0).round()),
            "bucket-killer" => {
                if i < 65 {
                    T::from_f64(2f64.powi(i as i32 - 32))
                } else {
                    T::from_f64(2f64.powi(-32) * (1.0 + (r >> 40) as f64 / 2f64.powi(30)))
                }
            }
            _ => T::from_bits_u64(r),
        }
    })
}

struct Row {
    dtype: &'static str,
    dist: String,
    n: usize,
    rank: String,
    k: usize,
    ranks: usize,
    algorithm: String,
    median_ms: f64,
    min_ms: f64,
    floor_ms: f64,
    correct: bool,
}

fn run_case<T: BenchElement>(
    gpu: &CudaDevice,
    opts: &Options,
    dist: &str,
    log2n: u32,
    rows: &mut Vec<Row>,
) -> kselect::Result<()> {
    let n = 1usize << log2n;
    let data = generate::<T>(dist, n);
    let ranks: Vec<(String, usize)> = opts
        .ranks
        .iter()
        .filter_map(|expr| rank_of(expr, n).map(|k| (expr.clone(), k)))
        .collect();
    let wanted: Vec<usize> = ranks.iter().map(|&(_, k)| k).collect();
    let expected = if wanted.is_empty() {
        Vec::new()
    } else {
        Selector::new().multiselect(&data, &wanted)?
    };
    let sets = rank_sets(opts, n);
    // One sort answers every rank set.
    let sorted: Vec<T::Key> = if sets.is_empty() {
        Vec::new()
    } else {
        let mut keys: Vec<T::Key> = data.par_iter().map(|x| x.to_key()).collect();
        keys.par_sort_unstable();
        keys
    };
    let device = Device::Cuda(gpu.clone());
    // Rotate among enough copies that consecutive runs do not find the input in L2.
    let copies = Copies::upload(&device, &data)?;
    let bytes = copies.bytes();
    drop(data);
    let floor_ms = median(copies.floor_times(gpu, WARMUPS, opts.common.reps)?);
    let mut cases: Vec<(String, Vec<usize>, Vec<T::Key>)> = ranks
        .into_iter()
        .zip(expected)
        .map(|((rank, k), want)| (rank, vec![k], vec![want.to_key()]))
        .collect();
    for (label, set) in sets {
        let want = set.iter().map(|&k| sorted[k]).collect();
        cases.push((label, set, want));
    }
    drop(sorted);
    for (rank, set, want) in cases {
        for &algorithm in &opts.algorithms {
            let sel = Selector::on(device.clone()).algorithm(algorithm);
            let got = sel.multiselect(copies.get(0), &set)?;
            let correct = got.iter().map(|v| v.to_key()).eq(want.iter().copied());
            let times = gpu::event_times(gpu, WARMUPS, opts.common.reps, |r| {
                sel.multiselect(copies.get(r), &set).map(|_| ())
            })?;
            let min_ms = times.iter().copied().fold(f64::INFINITY, f64::min);
            let row = Row {
                dtype: T::DTYPE.name(),
                dist: dist.to_string(),
                n,
                rank: rank.clone(),
                k: set[0],
                ranks: set.len(),
                algorithm: algorithm.name().to_string(),
                median_ms: median(times),
                min_ms,
                floor_ms,
                correct,
            };
            println!(
                "{:>4} {:>13} 2^{:<2} k={:<14} {:>28} {:>10.3} ms  floor {:>8.3} ms  x{:>6.2}  {:>7.1} GB/s  {}",
                row.dtype,
                row.dist,
                log2n,
                row.rank,
                row.algorithm,
                row.median_ms,
                row.floor_ms,
                row.median_ms / row.floor_ms,
                bytes as f64 / row.median_ms / 1e6,
                if correct { "ok" } else { "WRONG" }
            );
            rows.push(row);
        }
    }
    Ok(())
}

/// The multiselection rank sets of `--percentiles` (evenly spaced, both ends included) and
/// `--clustered` (consecutive from `n/3`), with their labels, for `n` values.
fn rank_sets(opts: &Options, n: usize) -> Vec<(String, Vec<usize>)> {
    let mut sets = Vec::new();
    for &m in &opts.percentiles {
        if m == 0 || m > n {
            eprintln!("skipping --percentiles {m} for n = {n}");
            continue;
        }
        let set = (0..m)
            .map(|i| if m == 1 { n / 2 } else { i * (n - 1) / (m - 1) })
            .collect();
        sets.push((format!("{m} even"), set));
    }
    for &m in &opts.clustered {
        if m == 0 || n / 3 + m > n {
            eprintln!("skipping --clustered {m} for n = {n}");
            continue;
        }
        sets.push((format!("{m} clustered"), (n / 3..n / 3 + m).collect()));
    }
    sets
}

/// The rank a `--ranks` expression names for `n` values: `0`, `n/100`, `n/2`, `n-1`, or a
/// number (`None`, with a note, when it is none of these or not below `n`).
fn rank_of(expr: &str, n: usize) -> Option<usize> {
    let k = match expr {
        "n/100" => Some(n / 100),
        "n/2" => Some(n / 2),
        "n-1" => Some(n - 1),
        other => other.parse().ok(),
    };
    match k {
        Some(k) if k < n => Some(k),
        _ => {
            eprintln!("skipping rank `{expr}` for n = {n}");
            None
        }
    }
}

fn main() {
    let opts = parse_options();
    let Some(gpu) = gpu::device_printed("gpu_select") else {
        return;
    };
    let mut rows = Vec::new();
    let mut failed = false;
    for dtype in &opts.common.types {
        for dist in &opts.dists {
            for &log2n in &opts.sizes {
                let result = match dtype.as_str() {
                    "f32" => run_case::<f32>(&gpu, &opts, dist, log2n, &mut rows),
                    "f64" => run_case::<f64>(&gpu, &opts, dist, log2n, &mut rows),
                    "i32" => run_case::<i32>(&gpu, &opts, dist, log2n, &mut rows),
                    "i64" => run_case::<i64>(&gpu, &opts, dist, log2n, &mut rows),
                    "u32" => run_case::<u32>(&gpu, &opts, dist, log2n, &mut rows),
                    "u64" => run_case::<u64>(&gpu, &opts, dist, log2n, &mut rows),
                    other => {
                        eprintln!("unknown type {other}");
                        continue;
                    }
                };
                if let Err(e) = result {
                    eprintln!("{dtype} {dist} 2^{log2n}: {e}");
                    failed = true;
                }
            }
        }
    }
    failed |= rows.iter().any(|r| !r.correct);
    report::finish(opts.common.json.as_deref(), failed, || {
        let results: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let bytes = r.n * if r.dtype.ends_with("64") { 8 } else { 4 };
                serde_json::json!({
                    "dtype": r.dtype, "dist": r.dist, "n": r.n, "rank": r.rank, "k": r.k,
                    "ranks": r.ranks, "algorithm": r.algorithm, "median_ms": r.median_ms,
                    "min_ms": r.min_ms,
                    "floor_ms": r.floor_ms, "ratio_to_floor": r.median_ms / r.floor_ms,
                    "gb_per_s": bytes as f64 / r.median_ms / 1e6, "correct": r.correct,
                    "bytes": bytes,
                })
            })
            .collect();
        let fields = serde_json::json!({
            "device": gpu.name(), "arch": gpu.arch(),
            "timing": "CUDA events around each whole call after 3 warm-up calls; median of --reps runs; inputs rotated among copies totalling >= 512 MiB",
            "floor": "DeviceBuffer::sum over the same array (one read, 16-byte loads)",
        });
        (fields, results)
    });
}
