//! Exact k-nearest-neighbour search: `kselect::knn::Neighbors::search` on the CPU or a CUDA GPU,
//! for the peers of `benches/peers_knn.py` (scikit-learn's brute force on the CPU, PyTorch on
//! the GPU) to search the same data.
//!
//! ```text
//! cargo bench --bench knn -- --device cpu --dtype f32,f64 --n 100000 --d 32 --queries 10000 \
//!     --ks 1,10,100 --metric euclidean --reps 3 --json knn-cpu.json
//! cargo bench --bench knn -- --device cuda --dtype f32,f64 --n 1000000 --d 128 --queries 10000 \
//!     --ks 1,10,100 --reps 5 --json knn-cuda.json
//! ```
//!
//! Options: `--device cpu|cuda` (default cpu; without a GPU, `cuda` prints a note and exits 0,
//! unless `KSELECT_REQUIRE_GPU=1`), `--dtype` (`f32`, `f64` or both, comma separated; default
//! f32), `--n` (reference points, `1e5` or `100000`; default 1e5), `--d` (coordinates; default
//! 32), `--queries` (default 1e4), `--ks` (comma separated; default 1,10,100), `--metric` (any
//! name [`Metric`] parses; default euclidean), `--data uniform|normal` (default uniform),
//! `--seed` (default 1), `--graph true` (the kNN graph of the reference set, `search_self`,
//! instead of the queries; the floor is then the product of the set with itself), `--lists
//! device` (`--device cuda`: `search_device`, the lists left on the GPU, as a peer's tensors
//! are; default `host`),
//! `--reps` (timed searches per case; the median is reported; default 5),
//! `--warmups` (untimed searches before them; default 1), `--chunk` (queries per product of
//! the GPU floor; default 2048), `--json PATH`.
//!
//! **The data** (deterministic for a seed): the reference points are the first `n d` numbers of
//! the SplitMix64 stream whose state starts at `seed`, the queries the first `queries d` of the
//! stream starting at `seed ^ 0xD1B54A32D192ED03`, row-major. `uniform`: `(u >> 11) 2^-53`,
//! uniform in `[0, 1)`; `normal`: standard normals, Box–Muller pairs (`u1 = ((a >> 11) + 0.5)
//! 2^-53`, `u2 = (b >> 11) 2^-53`, `sqrt(-2 ln u1) cos(2 pi u2)` then the same with `sin`). The
//! values are made in `f64`; `f32` points are those values rounded to `f32` (one generator for
//! both types). `benches/peers_knn.py` makes the same numbers (bit for bit for `uniform`).
//!
//! **The search**: `Neighbors::new(reference).metric(m).device(dev).search(queries, k)` from
//! host slices to host lists, the layout of the reference set included. Each time is one whole
//! call, wall clock, after `--warmups` untimed calls (the first GPU call compiles the kernels);
//! the call returns the lists on the host, so on the GPU the wall clock covers the copies both
//! ways and every kernel. With `--lists device` the call is `search_device(queries, k)`, timed
//! to the end of its last kernel (the device synchronised), the copy of the queries to the
//! device included. The first 4 queries' lists are checked against a brute force of
//! [`Metric::measure`] and a stable sort (`correct` in the JSON). A search that fails records
//! its error (`error` in the JSON, no times) and the run goes on; the exit status is then 1.
//!
//! **The floor** (`--device cuda` only): the product that a matrix-form search is built on,
//! the `queries x d` query matrix times the `d x n` transposed reference matrix, by cuBLAS
//! (`sgemm` for f32 with the default math mode, so no TF32; `dgemm` for f64), `--chunk`
//! queries at a time (fewer where a product's `chunk x n` outputs would pass 4 GiB); the time is all
//! the chunks' products between two CUDA events (`kselect::GpuTimer`, on the stream the
//! products run on), median of `--reps`, after one untimed round. Only the products are
//! timed: no norms, no selection, no copies. Reported ratios are the search's time over it.

use std::time::Instant;

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{CudaContext, CudaSlice, DeviceRepr, ValidAsZeroBits};
use kselect::knn::{DeviceNeighborLists, KnnFloat, Metric, NeighborLists, Neighbors, Points};
use kselect::{CudaDevice, Device};

#[path = "common/gpu.rs"]
mod gpu;
#[path = "common/options.rs"]
mod options;
#[path = "common/report.rs"]
mod report;
#[path = "common/splitmix.rs"]
mod splitmix;

use report::median;

/// The queries checked against a brute force.
const CHECKED: usize = 4;
/// The most bytes of one product's output in the floor.
const FLOOR_OUTPUT_BYTES: usize = 4 << 30;
/// The query stream's first state is the seed XOR this.
const QUERY_STREAM: u64 = 0xD1B5_4A32_D192_ED03;

/// Command-line options.
struct Options {
    device: String,
    dtypes: Vec<String>,
    n: usize,
    d: usize,
    queries: usize,
    ks: Vec<usize>,
    metric: Metric,
    data: String,
    seed: u64,
    reps: usize,
    warmups: usize,
    chunk: usize,
    graph: bool,
    lists_on_device: bool,
    json: Option<String>,
}

/// A count given as `100000` or `1e5`.
fn count(value: &str) -> Option<usize> {
    value
        .parse::<f64>()
        .ok()
        .filter(|&v| v >= 1.0)
        .map(|v| v as usize)
}

fn parse_options() -> Options {
    let mut opts = Options {
        device: "cpu".into(),
        dtypes: vec!["f32".into()],
        n: 100_000,
        d: 32,
        queries: 10_000,
        ks: vec![1, 10, 100],
        metric: Metric::Euclidean,
        data: "uniform".into(),
        seed: 1,
        reps: 5,
        warmups: 1,
        chunk: 2048,
        graph: false,
        lists_on_device: false,
        json: None,
    };
    let mut bad = Vec::new();
    options::for_each(|name, value| {
        match name {
            "--device" => opts.device = value,
            "--dtype" | "--dtypes" => opts.dtypes = options::list(&value),
            "--n" => opts.n = count(&value).unwrap_or(opts.n),
            "--d" => opts.d = count(&value).unwrap_or(opts.d),
            "--queries" => opts.queries = count(&value).unwrap_or(opts.queries),
            "--ks" => opts.ks = options::parsed(&value),
            "--metric" => match value.parse() {
                Ok(m) => opts.metric = m,
                Err(e) => bad.push(format!("{e}")),
            },
            "--data" => opts.data = value,
            "--seed" => opts.seed = value.parse().unwrap_or(opts.seed),
            "--reps" => opts.reps = value.parse().unwrap_or(opts.reps).max(1),
            "--warmups" => opts.warmups = value.parse().unwrap_or(opts.warmups),
            "--chunk" => opts.chunk = count(&value).unwrap_or(opts.chunk),
            "--graph" => opts.graph = matches!(value.as_str(), "true" | "yes" | "1"),
            "--lists" => opts.lists_on_device = value == "device",
            "--json" => opts.json = Some(value),
            _ => return false,
        }
        true
    });
    for t in &opts.dtypes {
        if t != "f32" && t != "f64" {
            bad.push(format!("unknown dtype {t} (f32 or f64)"));
        }
    }
    if opts.data != "uniform" && opts.data != "normal" {
        bad.push(format!("unknown data {} (uniform or normal)", opts.data));
    }
    if !bad.is_empty() {
        eprintln!("{}", bad.join("\n"));
        std::process::exit(2);
    }
    opts
}

/// `count` numbers of the SplitMix64 stream starting at `state`: uniform in `[0, 1)`, or
/// standard normals (Box–Muller pairs) for `normal`.
fn generate(count: usize, state: u64, normal: bool) -> Vec<f64> {
    let mut state = state;
    let mut unit =
        |offset: f64| ((splitmix::next(&mut state) >> 11) as f64 + offset) / (1u64 << 53) as f64;
    let mut out = Vec::with_capacity(count + 1);
    while out.len() < count {
        if normal {
            let (u1, u2) = (unit(0.5), unit(0.0));
            let r = (-2.0 * u1.ln()).sqrt();
            let a = std::f64::consts::TAU * u2;
            out.push(r * a.cos());
            out.push(r * a.sin());
        } else {
            out.push(unit(0.0));
        }
    }
    out.truncate(count);
    out
}

/// One case's result.
struct Row {
    dtype: &'static str,
    k: usize,
    times: Vec<f64>,
    floor: Option<Vec<f64>>,
    correct: bool,
    /// Why the search failed, where it did (no times then).
    error: Option<String>,
}

impl Row {
    fn seconds(&self) -> Option<f64> {
        (!self.times.is_empty()).then(|| median(self.times.clone()))
    }

    fn floor_seconds(&self) -> Option<f64> {
        self.floor.clone().map(median)
    }
}

/// Whether the first queries' lists are those of a brute force: every canonical value, sorted
/// stably (ties by index), the `k` first.
fn check<T: KnnFloat>(
    reference: &Points<'_, T>,
    queries: &Points<'_, T>,
    opts: &Options,
    lists: &NeighborLists<T>,
) -> bool {
    let metric = opts.metric;
    (0..CHECKED.min(queries.rows())).all(|i| {
        let q = queries.row(i);
        let mut all: Vec<(f64, usize)> = (0..reference.rows())
            .filter(|&j| !(opts.graph && j == i))
            .map(|j| {
                let v = metric.measure(q, reference.row(j));
                (if metric.is_similarity() { -v } else { v }, j)
            })
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (dist, idx) = lists.row(i);
        all.iter()
            .zip(dist.iter().zip(idx))
            .all(|(&(key, j), (&v, &got))| {
                let want = if metric.is_similarity() { -key } else { key };
                got == j && v.to_f64() == T::from_f64(want).to_f64()
            })
    })
}

/// The GPU floor: cuBLAS products of query chunks and the reference set.
struct Floor<T: DeviceRepr> {
    blas: CudaBlas,
    reference: CudaSlice<T>,
    queries: CudaSlice<T>,
    out: CudaSlice<T>,
}

impl<T: KnnFloat + DeviceRepr + ValidAsZeroBits> Floor<T>
where
    CudaBlas: Gemm<T>,
{
    /// The reference and query matrices on `gpu`, and a product's output of `chunk x n`.
    fn new(
        gpu: &CudaDevice,
        reference: &[T],
        queries: &[T],
        n: usize,
        chunk: usize,
    ) -> Result<Floor<T>, String> {
        let ctx = CudaContext::new(gpu.ordinal()).map_err(floor_error("opening the device"))?;
        // The null stream, the one kselect's device and its GpuTimer use.
        let stream = ctx.default_stream();
        Ok(Floor {
            blas: CudaBlas::new(stream.clone()).map_err(floor_error("a cuBLAS handle"))?,
            reference: stream
                .clone_htod(reference)
                .map_err(floor_error("copying the reference points"))?,
            queries: stream
                .clone_htod(queries)
                .map_err(floor_error("copying the queries"))?,
            out: stream
                .alloc_zeros(n * chunk)
                .map_err(floor_error("the products' output"))?,
        })
    }

    /// Every chunk's product `Q_c X'` (`Q_c` the chunk's `c x d` queries, `X` the `n x d`
    /// reference matrix): in cuBLAS's column-major terms, `X Q_c'` of `n x c`.
    fn products(&mut self, n: usize, d: usize, rows: usize, chunk: usize) -> kselect::Result<()> {
        let mut first = 0;
        while first < rows {
            let c = chunk.min(rows - first);
            let cfg = GemmConfig {
                transa: cublasOperation_t::CUBLAS_OP_T,
                transb: cublasOperation_t::CUBLAS_OP_N,
                m: n as i32,
                n: c as i32,
                k: d as i32,
                alpha: T::from_f64(1.0),
                lda: d as i32,
                ldb: d as i32,
                beta: T::from_f64(0.0),
                ldc: n as i32,
            };
            let queries = self.queries.slice(first * d..(first + c) * d);
            // SAFETY: A is the d x n column-major matrix of the row-major reference points
            // (lda = d, n d values), transposed; B the d x c matrix of the chunk's queries
            // (ldb = d, c d values); C is n x c (ldc = n, at most n chunk values); `out` does
            // not alias the inputs, and every buffer is on the handle's stream.
            unsafe {
                self.blas
                    .gemm(cfg, &self.reference, &queries, &mut self.out)
            }
            .map_err(|e| kselect::Error::Cuda {
                context: "the floor's cuBLAS product".into(),
                message: format!("{e:?}"),
            })?;
            first += c;
        }
        Ok(())
    }
}

/// An error of the floor's setup, saying what failed.
fn floor_error<E: std::fmt::Debug>(what: &'static str) -> impl FnOnce(E) -> String {
    move |e| format!("the floor: {what}: {e:?}")
}

/// The queries of one product of the floor: `--chunk`, fewer where their `chunk x n` outputs
/// of `bytes` each would pass [`FLOOR_OUTPUT_BYTES`].
fn floor_chunk(opts: &Options, bytes: usize) -> usize {
    let fits = (FLOOR_OUTPUT_BYTES / (opts.n * bytes)).max(1);
    opts.chunk.min(fits).min(opts.queries)
}

/// Times the search of every k for one element type; on the GPU also the floor.
fn run_type<T: KnnFloat + DeviceRepr + ValidAsZeroBits>(
    opts: &Options,
    device: &Device,
    dtype: &'static str,
    convert: impl Fn(f64) -> T,
) -> Result<Vec<Row>, String>
where
    CudaBlas: Gemm<T>,
{
    let normal = opts.data == "normal";
    let reference: Vec<T> = generate(opts.n * opts.d, opts.seed, normal)
        .into_iter()
        .map(&convert)
        .collect();
    let queries: Vec<T> = if opts.graph {
        reference.clone()
    } else {
        generate(opts.queries * opts.d, opts.seed ^ QUERY_STREAM, normal)
            .into_iter()
            .map(&convert)
            .collect()
    };
    let reference_points = Points::new(&reference, opts.d).map_err(|e| e.to_string())?;
    let query_points = Points::new(&queries, opts.d).map_err(|e| e.to_string())?;
    let index = Neighbors::new(reference_points.clone())
        .map_err(|e| e.to_string())?
        .metric(opts.metric)
        .device(device.clone());

    let floor = match device {
        Device::Cuda(gpu) => {
            let chunk = floor_chunk(opts, std::mem::size_of::<T>());
            let mut floor = Floor::new(gpu, &reference, &queries, opts.n, chunk)?;
            let times = gpu::event_times(gpu, 1, opts.reps, |_| {
                floor.products(opts.n, opts.d, query_points.rows(), chunk)
            })
            .map_err(|e| e.to_string())?;
            Some(times.iter().map(|ms| ms / 1e3).collect::<Vec<f64>>())
        }
        Device::Cpu => None,
    };

    let mut rows = Vec::new();
    for &k in &opts.ks {
        let mut row = Row {
            dtype,
            k,
            times: Vec::with_capacity(opts.reps),
            floor: floor.clone(),
            correct: false,
            error: None,
        };
        match time_search(&index, &query_points, k, opts, &mut row.times) {
            Ok(lists) => {
                row.correct = check(&reference_points, &query_points, opts, &lists);
            }
            Err(e) => row.error = Some(e.to_string()),
        }
        print_row(&row, opts);
        rows.push(row);
    }
    Ok(rows)
}

/// Times `reps` searches for the `k` nearest after `warmups` untimed ones, pushing each time
/// to `times`; the last lists.
fn time_search<T: KnnFloat>(
    index: &Neighbors<'_, T>,
    queries: &Points<'_, T>,
    k: usize,
    opts: &Options,
    times: &mut Vec<f64>,
) -> kselect::Result<NeighborLists<T>> {
    let search = || {
        if opts.graph {
            index.search_self(k).map(Found::Host)
        } else if opts.lists_on_device {
            let lists = index.search_device(queries.clone(), k)?;
            lists.distances().device().synchronize()?;
            Ok(Found::Device(lists))
        } else {
            index.search(queries.clone(), k).map(Found::Host)
        }
    };
    let mut lists = None;
    for _ in 0..opts.warmups {
        lists = Some(search()?);
    }
    for _ in 0..opts.reps {
        let start = Instant::now();
        let found = search()?;
        times.push(start.elapsed().as_secs_f64());
        lists = Some(found);
    }
    match lists.expect("at least one search") {
        Found::Host(lists) => Ok(lists),
        Found::Device(lists) => lists.to_host(),
    }
}

/// The lists of a search, where it left them.
enum Found<T: KnnFloat> {
    Host(NeighborLists<T>),
    Device(DeviceNeighborLists<T>),
}

fn print_row(row: &Row, opts: &Options) {
    let floor = row.floor_seconds();
    let floor_ms = floor.map_or("-".into(), |f| format!("{:.2}", f * 1e3));
    let Some(seconds) = row.seconds() else {
        println!(
            "{:>5} {:>6} {:>12} {:>12} {:>10} {:>8} {:>8}  error: {}",
            row.dtype,
            row.k,
            "-",
            "-",
            floor_ms,
            "-",
            "-",
            row.error.as_deref().unwrap_or("no run")
        );
        return;
    };
    let pairs = (opts.n * if opts.graph { opts.n } else { opts.queries }) as f64;
    let ratio = floor.map_or("-".into(), |f| format!("{:.2}", seconds / f));
    println!(
        "{:>5} {:>6} {:>12.2} {:>12.3} {:>10} {:>8} {:>8}",
        row.dtype,
        row.k,
        seconds * 1e3,
        seconds / pairs * 1e9,
        floor_ms,
        ratio,
        row.correct
    );
}

fn main() {
    let opts = parse_options();
    let Some((device, device_name)) = gpu::named_device(&opts.device, "knn") else {
        return;
    };
    println!("device: {device_name}");
    println!(
        "n = {}, d = {}, queries = {}, metric = {}, data = {}",
        opts.n, opts.d, opts.queries, opts.metric, opts.data
    );
    println!(
        "{:>5} {:>6} {:>12} {:>12} {:>10} {:>8} {:>8}",
        "dtype", "k", "ms", "ns/pair", "floor ms", "x floor", "correct"
    );
    let mut rows = Vec::new();
    let mut failed = false;
    for dtype in opts.dtypes.clone() {
        let result = match dtype.as_str() {
            "f32" => run_type::<f32>(&opts, &device, "f32", |v| v as f32),
            _ => run_type::<f64>(&opts, &device, "f64", |v| v),
        };
        match result {
            Ok(r) => {
                failed |= r.iter().any(|row| !row.correct || row.error.is_some());
                rows.extend(r);
            }
            Err(e) => {
                eprintln!("{dtype}: {e}");
                failed = true;
            }
        }
    }
    report::finish(opts.json.as_deref(), failed, || {
        let results = rows
            .iter()
            .map(|r| {
                let (seconds, floor) = (r.seconds(), r.floor_seconds());
                let queries = if opts.graph { opts.n } else { opts.queries };
                let pairs = (opts.n * queries) as f64;
                let mut result = serde_json::json!({
                    "dtype": r.dtype, "k": r.k, "n": opts.n, "d": opts.d,
                    "queries": queries, "graph": opts.graph, "seconds": seconds, "times": r.times,
                    "ns_per_pair": seconds.map(|s| s / pairs * 1e9),
                    "floor_seconds": floor, "floor_times": r.floor,
                    "ratio": seconds.zip(floor).map(|(s, f)| s / f), "correct": r.correct,
                });
                if let Some(e) = &r.error {
                    result["error"] = e.clone().into();
                }
                result
            })
            .collect();
        let fields = serde_json::json!({
            "device": device_name,
            "backend": device.backend_name(),
            "search": format!("kselect::knn::Neighbors::new(reference).metric({}).{}", opts.metric.name(), if opts.graph { "search_self(k)" } else if opts.lists_on_device { "search_device(queries, k), then the device synchronised" } else { "search(queries, k)" }),
            "lists": if opts.lists_on_device { "device" } else { "host" },
            "graph": opts.graph,
            "n": opts.n, "d": opts.d, "queries": opts.queries, "ks": opts.ks,
            "metric": opts.metric.name(), "dtypes": opts.dtypes,
            "data": format!("{} (SplitMix64: reference stream from state {}, queries from {} ^ 0x{QUERY_STREAM:X}; values made in f64, rounded for f32)", match opts.data.as_str() {
                "normal" => "standard normal, Box-Muller",
                _ => "uniform [0, 1)",
            }, opts.seed, opts.seed),
            "timing": format!("wall clock of one whole search from host slices to host lists, median of {} runs after {} warm-up run(s)", opts.reps, opts.warmups),
            "floor": match device {
                Device::Cuda(_) => serde_json::Value::from(format!("cuBLAS sgemm (f32) / dgemm (f64) of the queries x d query matrix and the d x n reference matrix, --chunk {} queries a product (f32: {}, f64: {} after the 4 GiB cap on a product's output), all products between CUDA events (kselect::GpuTimer), median of {} runs after one; default math mode (no TF32)", opts.chunk, floor_chunk(&opts, 4), floor_chunk(&opts, 8), opts.reps)),
                Device::Cpu => serde_json::Value::Null,
            },
            "correct": format!("the first {CHECKED} queries' lists equal a brute force of Metric::measure, stably sorted"),
        });
        (fields, results)
    });
}
