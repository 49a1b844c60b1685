//! The cutting-plane comparison of Beliakov (2011), Tables I–II: the check loss of the median
//! minimised by Kelley's cutting plane (the exact hybrid, with and without the monotone
//! transform) and by argmin's Brent and golden-section searches and bisection on the
//! subgradient's sign, counting reductions (passes over the data) and time, on the CPU or on
//! CUDA; our radix sort of the same data for comparison.
//!
//! ```text
//! cargo bench --bench cutting_plane -- --backend cuda --sizes 20,24,26 --reps 11 --json cp.json
//! ```
//!
//! Options: `--backend cpu|cuda`, `--sizes` (log2 of n, comma separated), `--types` (f32, f64),
//! `--dists` (uniform, normal, half-normal, outliers), `--reps` (timed runs; the median is
//! reported), `--json PATH`. The outliers distribution is uniform with five values of `1e300`
//! (`3e38` for f32). Brent, golden section and bisection are approximate minimisers: they give
//! a point, reported by how far its rank is from `k` (`gap`), never as a selection; `exact`
//! says whether the point or element equals the exact median. Without a GPU, `--backend cuda`
//! prints a note and exits 0, unless `KSELECT_REQUIRE_GPU=1`.

use std::time::Instant;

use argmin::core::{Executor, IterState, Solver, State, TerminationStatus};
use argmin::solver::brent::BrentOpt;
use argmin::solver::goldensectionsearch::GoldenSectionSearch;
use kselect::select::cutting_plane::{
    from_argmin, select_device, select_host, Bisection, CheckLoss, Data, DeviceData, HostData,
    Transform,
};
use kselect::{Algorithm, CudaDevice, Device, DeviceBuffer, Element, GpuTimer, Selector};

#[path = "common/gpu.rs"]
mod gpu;
#[path = "common/options.rs"]
mod options;
#[path = "common/report.rs"]
mod report;
#[path = "common/splitmix.rs"]
mod splitmix;

use report::median;

/// Step bound of the approximate minimisers.
const MAX_ITERS: u64 = 500;

/// Command-line options.
struct Options {
    backend: String,
    sizes: Vec<u32>,
    dists: Vec<String>,
    common: options::Common,
}

/// The options of the command line, with the defaults for those it does not give.
fn parse_options() -> Options {
    let mut opts = Options {
        backend: "cpu".into(),
        sizes: vec![20, 22, 24],
        dists: vec![
            "uniform".into(),
            "normal".into(),
            "half-normal".into(),
            "outliers".into(),
        ],
        common: options::Common::new(&["f32", "f64"], 11),
    };
    options::for_each(|name, value| {
        match name {
            "--backend" => opts.backend = value,
            "--sizes" => opts.sizes = options::parsed(&value),
            "--dists" => opts.dists = options::list(&value),
            _ => return opts.common.take(name, value),
        }
        true
    });
    // At least one timed run.
    opts.common.reps = opts.common.reps.max(1);
    opts
}

/// The float types of the comparison.
trait BenchFloat: Element {
    fn from_f64(x: f64) -> Self;
    /// The huge outlier of the type.
    const HUGE: f64;
}
impl BenchFloat for f32 {
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    const HUGE: f64 = 3e38;
}
impl BenchFloat for f64 {
    fn from_f64(x: f64) -> Self {
        x
    }
    const HUGE: f64 = 1e300;
}

fn generate<T: BenchFloat>(dist: &str, n: usize) -> Vec<T> {
    let mut data = splitmix::generate(n, 0x1234_5678, |s, _| {
        let u1 = ((splitmix::next(s) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let v = match dist {
            "normal" | "half-normal" => {
                let u2 = (splitmix::next(s) >> 11) as f64 / (1u64 << 53) as f64;
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                if dist == "normal" {
                    z
                } else {
                    z.abs()
                }
            }
            _ => u1,
        };
        T::from_f64(v)
    });
    if dist == "outliers" {
        for j in 0..5.min(n) {
            data[(j * 7919) % n] = T::from_f64(T::HUGE);
        }
    }
    data
}

/// Times one call: CUDA events on the GPU, wall clock on the CPU.
enum Clock {
    Cpu,
    Gpu(CudaDevice),
}

impl Clock {
    fn time<R>(&self, f: impl FnOnce() -> kselect::Result<R>) -> kselect::Result<(f64, R)> {
        match self {
            Clock::Cpu => {
                let start = Instant::now();
                let r = f()?;
                Ok((start.elapsed().as_secs_f64() * 1e3, r))
            }
            Clock::Gpu(gpu) => {
                let timer = GpuTimer::start(gpu)?;
                let r = f()?;
                Ok((timer.stop()? as f64, r))
            }
        }
    }
}

/// One result line.
struct Row {
    backend: String,
    dtype: &'static str,
    dist: String,
    n: usize,
    method: String,
    reductions: u64,
    median_ms: f64,
    status: String,
    exact: bool,
    rank_gap: usize,
    sort_ms: f64,
}

/// What one run of a method gave.
struct Run {
    reductions: u64,
    status: String,
    exact: bool,
    rank_gap: usize,
}

/// Runs an approximate minimiser on a fresh problem, timed without the problem's set-up pass.
fn approximate<D, S>(
    clock: &Clock,
    problem: CheckLoss<D>,
    solver: S,
    init: Option<f64>,
    want: f64,
) -> kselect::Result<(f64, Run)>
where
    D: Data,
    S: Solver<CheckLoss<D>, IterState<f64, (), (), (), (), f64>>,
{
    let (ms, result) = clock.time(|| {
        Ok(Executor::new(problem, solver)
            .configure(|s| {
                let s = s.max_iters(MAX_ITERS);
                match init {
                    Some(x) => s.param(x),
                    None => s,
                }
            })
            .timer(false)
            .run())
    })?;
    let run = match result {
        Ok(r) => {
            let y = r
                .state
                .get_best_param()
                .or(r.state.get_param())
                .copied()
                .unwrap_or(f64::NAN);
            let status = match r.state.get_termination_status() {
                TerminationStatus::Terminated(reason) => reason.text().to_string(),
                TerminationStatus::NotTerminated => "running".to_string(),
            };
            let p = r.problem.problem.as_ref();
            Run {
                reductions: p.map_or(0, |p| p.reductions()),
                status,
                exact: y == want,
                rank_gap: match p {
                    Some(p) => p.rank_gap(y)?,
                    None => usize::MAX,
                },
            }
        }
        Err(e) => Run {
            reductions: 0,
            status: format!("error: {e}"),
            exact: false,
            rank_gap: usize::MAX,
        },
    };
    Ok((ms, run))
}

/// Every method on one data set (rank `k`, exact answer `want`); `make` builds a fresh data
/// handle for each run, `exact_select` runs the exact hybrid and returns its reductions.
fn run_methods<T: BenchFloat, D: Data<Elem = T>>(
    clock: &Clock,
    reps: usize,
    k: usize,
    make: &dyn Fn() -> kselect::Result<D>,
    exact_select: &dyn Fn(Option<Transform>) -> kselect::Result<(T, u64)>,
    want: T,
    emit: &mut dyn FnMut(&str, Vec<f64>, Run),
) -> kselect::Result<()> {
    // The exact hybrid, with the transform chosen by range and with none.
    for (name, transform) in [
        ("cutting-plane", None),
        ("cutting-plane-identity", Some(Transform::Identity)),
    ] {
        let mut times = Vec::with_capacity(reps);
        let mut last = None;
        for r in 0..=reps {
            let (ms, got) = clock.time(|| exact_select(transform))?;
            if r > 0 {
                times.push(ms);
            }
            last = Some(got);
        }
        let (x, reductions) = last.expect("at least one run");
        let exact = x.to_key() == want.to_key();
        let run = Run {
            reductions,
            status: "exact selection".into(),
            exact,
            rank_gap: usize::from(!exact),
        };
        emit(name, times, run);
    }
    // The approximate minimisers on the plain (untransformed) objective, as in the paper.
    for name in ["brent", "golden-section", "bisection"] {
        let mut times = Vec::with_capacity(reps);
        let mut last = None;
        for r in 0..=reps {
            let problem = CheckLoss::new(make()?, k)?.with_transform(Transform::Identity);
            let (lo, hi) = (problem.lower(), problem.upper());
            let want = want.to_f64();
            let (ms, run) = match name {
                "brent" => {
                    let solver = BrentOpt::new(lo, hi).set_tolerance(1e-10, 1e-14);
                    approximate(clock, problem, solver, None, want)?
                }
                "golden-section" => {
                    let solver = GoldenSectionSearch::new(lo, hi)
                        .and_then(|s| s.with_tolerance(1e-12))
                        .map_err(from_argmin)?;
                    approximate(clock, problem, solver, Some(lo / 2.0 + hi / 2.0), want)?
                }
                _ => approximate(clock, problem, Bisection::new(lo, hi, 0.0), None, want)?,
            };
            if r > 0 {
                times.push(ms);
            }
            last = Some(run);
        }
        emit(name, times, last.expect("at least one run"));
    }
    Ok(())
}

/// Runs one case (type, distribution, size) and appends its rows.
fn run_case<T: BenchFloat>(
    opts: &Options,
    gpu: Option<&CudaDevice>,
    dist: &str,
    log2n: u32,
    rows: &mut Vec<Row>,
) -> kselect::Result<()> {
    let n = 1usize << log2n;
    let data = generate::<T>(dist, n);
    let k = (n - 1) / 2;
    let want = Selector::new().select(&data, k)?;
    let mut case_rows = Vec::new();
    let mut emit = |method: &str, times: Vec<f64>, run: Run| {
        case_rows.push((method.to_string(), median(times), run));
    };
    let sort_ms = match gpu {
        None => {
            let clock = Clock::Cpu;
            let make = || Ok(HostData::new(&data));
            let exact = |t: Option<Transform>| {
                select_host(HostData::new(&data), k, t).map(|(x, tr)| (x, tr.reductions))
            };
            run_methods(&clock, opts.common.reps, k, &make, &exact, want, &mut emit)?;
            let sort = Selector::new().algorithm(Algorithm::SortChoose);
            let mut times = Vec::new();
            for r in 0..=opts.common.reps {
                let (ms, _) = clock.time(|| sort.select(&data, k))?;
                if r > 0 {
                    times.push(ms);
                }
            }
            median(times)
        }
        Some(gpu) => {
            let clock = Clock::Gpu(gpu.clone());
            let buf = DeviceBuffer::from_host(&Device::Cuda(gpu.clone()), &data)?;
            let make = || DeviceData::new(&buf);
            let exact = |t: Option<Transform>| {
                select_device(&DeviceData::new(&buf)?, k, t).map(|(x, tr)| (x, tr.reductions))
            };
            run_methods(&clock, opts.common.reps, k, &make, &exact, want, &mut emit)?;
            let mut times = Vec::new();
            for r in 0..=opts.common.reps {
                let (ms, _) = clock.time(|| kselect::select::sort_device(&buf))?;
                if r > 0 {
                    times.push(ms);
                }
            }
            median(times)
        }
    };
    let backend = if gpu.is_some() { "cuda" } else { "cpu" };
    for (method, median_ms, run) in case_rows {
        let gap = if run.rank_gap == usize::MAX {
            "-".to_string()
        } else {
            run.rank_gap.to_string()
        };
        println!(
            "{backend:>4} {:>4} {:>11} 2^{:<2} {:>22} {:>5} red {:>10.3} ms  sort {:>9.3} ms  exact {:<5} gap {:>8}  {}",
            T::DTYPE.name(),
            dist,
            log2n,
            method,
            run.reductions,
            median_ms,
            sort_ms,
            run.exact,
            gap,
            run.status
        );
        rows.push(Row {
            backend: backend.to_string(),
            dtype: T::DTYPE.name(),
            dist: dist.to_string(),
            n,
            method,
            reductions: run.reductions,
            median_ms,
            status: run.status,
            exact: run.exact,
            rank_gap: run.rank_gap,
            sort_ms,
        });
    }
    Ok(())
}

fn main() {
    let opts = parse_options();
    let gpu = match opts.backend.as_str() {
        "cpu" => None,
        "cuda" => {
            let Some(gpu) = gpu::device_or_exit("cutting_plane") else {
                return;
            };
            Some(gpu)
        }
        other => {
            eprintln!("unknown backend {other} (cpu or cuda)");
            std::process::exit(2);
        }
    };
    let device_name = match &gpu {
        Some(gpu) => gpu::describe(gpu),
        None => format!("cpu ({} threads)", rayon::current_num_threads()),
    };
    println!("device: {device_name}");
    let mut rows = Vec::new();
    let mut failed = false;
    for dtype in &opts.common.types {
        for dist in &opts.dists {
            for &log2n in &opts.sizes {
                let result = match dtype.as_str() {
                    "f32" => run_case::<f32>(&opts, gpu.as_ref(), dist, log2n, &mut rows),
                    "f64" => run_case::<f64>(&opts, gpu.as_ref(), dist, log2n, &mut rows),
                    other => {
                        eprintln!("unknown type {other} (f32 or f64)");
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
    // The exact selections must be exact; the approximate minimisers are reported, not judged.
    failed |= rows
        .iter()
        .any(|r| r.method.starts_with("cutting-plane") && !r.exact);
    report::finish(opts.common.json.as_deref(), failed, || {
        let results: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "backend": r.backend, "dtype": r.dtype, "dist": r.dist, "n": r.n,
                    "method": r.method, "reductions": r.reductions, "median_ms": r.median_ms,
                    "status": r.status, "exact": r.exact,
                    "rank_gap": if r.rank_gap == usize::MAX { None } else { Some(r.rank_gap) },
                    "sort_ms": r.sort_ms,
                })
            })
            .collect();
        let fields = serde_json::json!({
            "device": device_name,
            "timing": "median of --reps runs after one warm-up; CUDA events on the GPU, wall clock on the CPU. cutting-plane rows time the whole exact selection (census pass, steps, copy, exact finish); brent, golden-section and bisection time the solver run only (problem set-up pass excluded)",
            "reductions": "objective evaluations, one pass over the data each (the census pass and the copy not included)",
            "rank_gap": "distance in rank between the returned point and k (0: the point is the exact median's value)",
            "sort": "sort_device (CUDA LSD radix sort) or the CPU sort-choose selection on the same data",
        });
        (fields, results)
    });
}
