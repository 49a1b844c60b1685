//! Sparse recovery: the time of an iteration of each solver, on the CPU or a CUDA GPU, against
//! the floor of any such iteration — the operator and its adjoint applied once each.
//!
//! ```text
//! cargo bench --bench recovery -- --device cuda --ensemble gaussian --n 16384 --m 8192 \
//!     --rho 0.1 --dtype f32 --algorithms niht,htp,cgiht --reps 5 --json recovery.json
//! ```
//!
//! Options: `--device cpu|cuda` (default cuda; without a GPU, `cuda` prints a note and exits
//! 0 unless `KSELECT_REQUIRE_GPU=1`), `--ensemble` (an `Ensemble` name; default gaussian),
//! `--n` (default 16384), `--m` (default n / 2), `--rho` (`k = round(rho m)`; default 0.1),
//! `--signal gaussian|sign` (default gaussian), `--dtype f32|f64` (default f32),
//! `--algorithms` (comma separated; default niht), `--reps` (default 5), `--seed` (default 1),
//! `--batch B` (default 1), `--operators shared|each` (a batch's problems share one operator,
//! or each has its own; default shared), `--loop yes|no` (whether a batch is also solved by a
//! loop of single solves; default yes), `--json PATH`.
//!
//! **The problem**: the operator drawn from the ensemble with `seed`, a `k`-sparse signal
//! drawn with `seed + 1`, `y = A x`. **The solve**: `Solver::new(algorithm, k).solve(&op, &y)`
//! on the CPU, `solve_on(&uploaded, &y)` on the GPU (the operator uploaded once, before the
//! timing), wall clock from the call to its return (the solution back on the host), median of
//! `--reps` after one untimed solve; the time an iteration is that over the iterations run.
//! The same solve stopped after one iteration (`max_iterations(1)`) is timed the same way: the
//! later iterations' own time is `(solve - that) / (iterations - 1)`, without what a solve
//! costs once (the measurements' upload, the first gradient and threshold, the copy back).
//! **The floor** (GPU): one `apply` and one `adjoint` of the uploaded operator between CUDA
//! events, median of 20 after 3 untimed.
//!
//! **Batches** (`--batch B`): `B` problems with the one operator, the signals drawn with
//! `seed + 1 + p`. The batch solved at once (`solve_many_on`; `solve_many` on the CPU), median
//! of `--reps` after one; its iterations are those of the problem that ran longest (the
//! problems run in lockstep). Against it, the loop of single solves (`solve_on` / `solve`)
//! timed once, and the batched floor: `apply_many` and `adjoint_many` of `B` vectors.
//! With `--operators each`, problem `p` has its own operator, drawn with `seed + 1000000 + p`
//! (a stack on the GPU, `DeviceOperator::upload_each`; `solve_each` on the CPU); the loop
//! solves each with its own operator uploaded alone (before the timing), and the floors are
//! the stack's `apply_many` and `adjoint_many` and, for dense operators, two reads of its
//! matrices (a sum of as many values).

use std::time::Instant;

use rayon::prelude::*;

use kselect::recovery::{
    sparse_signal, Algorithm, DeviceOperator, Ensemble, LinearOperator, Real, SignalKind, Solver,
};
use kselect::{Device, DeviceBuffer};

#[path = "common/gpu.rs"]
mod gpu;
#[path = "common/options.rs"]
mod options;
#[path = "common/report.rs"]
mod report;

use report::median;

struct Options {
    device: String,
    ensemble: Ensemble,
    n: usize,
    m: Option<usize>,
    rho: f64,
    signal: SignalKind,
    dtype: String,
    algorithms: Vec<Algorithm>,
    reps: usize,
    seed: u64,
    batch: usize,
    each: bool,
    single_loop: bool,
    json: Option<String>,
}

fn parse_options() -> Options {
    let mut opts = Options {
        device: "cuda".into(),
        ensemble: Ensemble::Gaussian,
        n: 16384,
        m: None,
        rho: 0.1,
        signal: SignalKind::Gaussian,
        dtype: "f32".into(),
        algorithms: vec![Algorithm::Niht],
        reps: 5,
        seed: 1,
        batch: 1,
        each: false,
        single_loop: true,
        json: None,
    };
    let count = |v: &str| v.parse::<f64>().ok().map(|v| v as usize);
    options::for_each(|name, value| {
        match name {
            "--device" => opts.device = value,
            "--ensemble" => opts.ensemble = value.parse().unwrap_or(opts.ensemble),
            "--n" => opts.n = count(&value).unwrap_or(opts.n),
            "--m" => opts.m = count(&value),
            "--rho" => opts.rho = value.parse().unwrap_or(opts.rho),
            "--signal" => opts.signal = value.parse().unwrap_or(opts.signal),
            "--dtype" => opts.dtype = value,
            "--algorithms" => opts.algorithms = options::parsed(&value),
            "--reps" => opts.reps = value.parse().unwrap_or(opts.reps).max(1),
            "--seed" => opts.seed = value.parse().unwrap_or(opts.seed),
            "--batch" => opts.batch = count(&value).unwrap_or(opts.batch).max(1),
            "--operators" => opts.each = value == "each",
            "--loop" => opts.single_loop = value != "no",
            "--json" => opts.json = Some(value),
            _ => return false,
        }
        true
    });
    opts
}

fn main() {
    let opts = parse_options();
    let device = match opts.device.as_str() {
        "cpu" => Device::Cpu,
        _ => match gpu::device_or_exit("recovery") {
            Some(gpu) => {
                println!("device: {}", gpu::describe(&gpu));
                Device::Cuda(gpu)
            }
            None => return,
        },
    };
    let results = match (opts.dtype.as_str(), opts.batch > 1) {
        ("f64", false) => run::<f64>(&opts, &device),
        ("f64", true) => run_batch::<f64>(&opts, &device),
        (_, false) => run::<f32>(&opts, &device),
        (_, true) => run_batch::<f32>(&opts, &device),
    };
    let failed = results.iter().any(|r| r.get("error").is_some());
    report::finish(opts.json.as_deref(), failed, || {
        let fields = serde_json::json!({
            "device": match &device { Device::Cuda(g) => gpu::describe(g), Device::Cpu => "cpu".into() },
            "ensemble": opts.ensemble.to_string(), "n": opts.n, "dtype": opts.dtype,
            "signal": opts.signal.name(), "batch": opts.batch,
            "operators": if opts.each { "each" } else { "shared" },
            "timing": "solve: wall clock of one solve (operator already on the device), median of --reps after one; per iteration = solve / iterations; later iterations = (solve - solve stopped after one iteration) / (iterations - 1); floor: apply + adjoint between CUDA events, median of 20 after 3",
        });
        (fields, results)
    });
}

fn run<T: Real>(opts: &Options, device: &Device) -> Vec<serde_json::Value> {
    let n = opts.n;
    let m = opts.m.unwrap_or(n / 2);
    let k = ((opts.rho * m as f64).round() as usize).max(1);
    println!(
        "{} n = {n}, m = {m}, k = {k}, {} signal, {}",
        opts.ensemble, opts.signal, opts.dtype
    );
    let problem = || -> kselect::Result<_> {
        let op = opts.ensemble.generate::<T>(m, n, opts.seed)?;
        let x = sparse_signal::<T>(n, k, opts.signal, opts.seed + 1)?;
        let mut y = vec![T::zero(); m];
        op.apply(&x, &mut y);
        Ok((op, x, y))
    };
    let (op, x, y) = match problem() {
        Ok(p) => p,
        Err(e) => return vec![serde_json::json!({ "error": e.to_string() })],
    };
    let uploaded = match device {
        Device::Cuda(_) => match DeviceOperator::upload(&op, device) {
            Ok(u) => Some(u),
            Err(e) => return vec![serde_json::json!({ "error": e.to_string() })],
        },
        Device::Cpu => None,
    };
    let floor_ms = match (&uploaded, device) {
        (Some(u), Device::Cuda(gpu)) => floor(u, device, gpu).ok(),
        _ => None,
    };
    if let Some(f) = floor_ms {
        println!("floor (apply + adjoint): {f:.4} ms");
    }
    println!(
        "{:>8} {:>6} {:>10} {:>12} {:>9}  stop",
        "algo", "iters", "solve ms", "ms / iter", "x floor"
    );
    let mut results = Vec::new();
    for &algorithm in &opts.algorithms {
        let solver = Solver::new(algorithm, k);
        let timed = |solver: &Solver| {
            let solve = || match &uploaded {
                Some(u) => solver.solve_on(u, &y),
                None => solver.solve(&op, &y),
            };
            let mut times = Vec::new();
            let mut last = None;
            for r in 0..=opts.reps {
                let start = Instant::now();
                let found = solve()?;
                if r > 0 {
                    times.push(start.elapsed().as_secs_f64() * 1e3);
                }
                last = Some(found);
            }
            kselect::Result::Ok((times, last))
        };
        let (times, last, error) = match timed(&solver) {
            Ok((times, last)) => (times, last, None),
            Err(e) => (Vec::new(), None, Some(e.to_string())),
        };
        // The same solve stopped after its first iteration: what the solve costs beyond its
        // iterations (the upload of y, the first gradient and threshold, the result's copy
        // back), so that the later iterations' own time is the difference.
        let one_ms = match (&last, &error) {
            (Some(found), None) if found.iterations > 1 => timed(&solver.clone().max_iterations(1))
                .ok()
                .map(|(times, _)| median(times)),
            _ => None,
        };
        let Some(found) = last.filter(|_| error.is_none()) else {
            println!(
                "{:>8}  error: {}",
                algorithm.name(),
                error.clone().unwrap_or_default()
            );
            results.push(serde_json::json!({ "algorithm": algorithm.name(), "error": error }));
            continue;
        };
        let ms = median(times.clone());
        let per = ms / found.iterations.max(1) as f64;
        let largest = x.iter().map(|v| v.as_f64().abs()).fold(0.0, f64::max);
        let err = found
            .solution
            .iter()
            .zip(&x)
            .map(|(a, b)| (a.as_f64() - b.as_f64()).abs())
            .fold(0.0, f64::max);
        let ratio = floor_ms.map(|f| per / f);
        // Iterations 2 to the last alone: (solve - solve of one iteration) / (iterations - 1).
        let later = one_ms.map(|one| (ms - one) / (found.iterations - 1) as f64);
        let later_ratio = later.zip(floor_ms).map(|(t, f)| t / f);
        println!(
            "{:>8} {:>6} {:>10.3} {:>12.4} {:>9}  {} (error {:.1e}){}",
            algorithm.name(),
            found.iterations,
            ms,
            per,
            ratio.map_or("-".into(), |r| format!("{r:.2}")),
            found.stop,
            err / largest,
            match (one_ms, later, later_ratio) {
                (Some(one), Some(t), Some(r)) => format!(
                    "; one iteration's solve {one:.3} ms, the later ones {t:.4} ms each ({r:.2}x)"
                ),
                _ => String::new(),
            }
        );
        results.push(serde_json::json!({
            "algorithm": algorithm.name(), "m": m, "k": k, "iterations": found.iterations,
            "stop": found.stop.name(), "relative_error": err / largest,
            "solve_ms": ms, "times_ms": times, "ms_per_iteration": per,
            "floor_ms": floor_ms, "x_floor": ratio,
            "one_iteration_solve_ms": one_ms, "ms_per_later_iteration": later,
            "later_x_floor": later_ratio,
        }));
    }
    results
}

/// `B` problems solved at once against a loop of single solves and the batched floor.
fn run_batch<T: Real>(opts: &Options, device: &Device) -> Vec<serde_json::Value> {
    let (n, batch) = (opts.n, opts.batch);
    let m = opts.m.unwrap_or(n / 2);
    let k = ((opts.rho * m as f64).round() as usize).max(1);
    println!(
        "{batch} problems of {} n = {n}, m = {m}, k = {k}, {} signal, {}, {} operator{}",
        opts.ensemble,
        opts.signal,
        opts.dtype,
        if opts.each { "one" } else { "a shared" },
        if opts.each { " each" } else { "" }
    );
    let problems = || -> kselect::Result<_> {
        let seeds: Vec<u64> = if opts.each {
            (0..batch as u64)
                .map(|p| opts.seed + 1_000_000 + p)
                .collect()
        } else {
            vec![opts.seed]
        };
        let ops = seeds
            .into_par_iter()
            .map(|seed| opts.ensemble.generate::<T>(m, n, seed))
            .collect::<kselect::Result<Vec<_>>>()?;
        let mut ys = vec![T::zero(); batch * m];
        for (p, y) in ys.chunks_mut(m).enumerate() {
            let x = sparse_signal::<T>(n, k, opts.signal, opts.seed + 1 + p as u64)?;
            ops[p % ops.len()].apply(&x, y);
        }
        let uploaded = match device {
            Device::Cuda(_) => Some(DeviceOperator::upload_each(&ops, device)?),
            Device::Cpu => None,
        };
        // Each problem's operator alone on the device, for the loop of single solves.
        let alone = match (device, opts.each && opts.single_loop) {
            (Device::Cuda(_), true) => ops
                .iter()
                .map(|op| DeviceOperator::upload(op, device))
                .collect::<kselect::Result<Vec<_>>>()?,
            _ => Vec::new(),
        };
        Ok((ops, ys, uploaded, alone))
    };
    let (ops, ys, uploaded, alone_on_device) = match problems() {
        Ok(p) => p,
        Err(e) => return vec![serde_json::json!({ "error": e.to_string() })],
    };
    let floor_ms = match (&uploaded, device) {
        (Some(u), Device::Cuda(gpu)) => batch_floor(u, device, gpu, batch).ok(),
        _ => None,
    };
    if let Some(f) = floor_ms {
        println!("batched floor (apply_many + adjoint_many): {f:.4} ms");
    }
    let dense = matches!(opts.ensemble, Ensemble::Gaussian | Ensemble::Sign);
    let read_ms = match device {
        Device::Cuda(gpu) if opts.each && dense => read_floor::<T>(device, gpu, batch * m * n).ok(),
        _ => None,
    };
    if let Some(f) = read_ms {
        println!("read floor (two reads of the operators' entries): {f:.4} ms");
    }
    let mut results = Vec::new();
    for &algorithm in &opts.algorithms {
        let solver = Solver::new(algorithm, k);
        let together = || match &uploaded {
            Some(u) => solver.solve_many_on(u, &ys),
            None if opts.each => solver.solve_each(&ops, &ys),
            None => solver.solve_many(&ops[0], &ys),
        };
        let one_by_one = || -> kselect::Result<Vec<_>> {
            ys.chunks(m)
                .enumerate()
                .map(|(p, y)| match &uploaded {
                    Some(_) if opts.each => solver.solve_on(&alone_on_device[p], y),
                    Some(u) => solver.solve_on(u, y),
                    None => solver.solve(&ops[p % ops.len()], y),
                })
                .collect()
        };
        let timed = || -> kselect::Result<_> {
            let mut times = Vec::new();
            let mut found = together()?;
            for _ in 0..opts.reps {
                let start = Instant::now();
                found = together()?;
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
            let start = Instant::now();
            let alone = if opts.single_loop {
                one_by_one()?
            } else {
                Vec::new()
            };
            let loop_ms = start.elapsed().as_secs_f64() * 1e3;
            Ok((times, found, alone, loop_ms))
        };
        let (times, found, alone, loop_ms) = match timed() {
            Ok(t) => t,
            Err(e) => {
                println!("{:>8}  error: {e}", algorithm.name());
                results.push(
                    serde_json::json!({ "algorithm": algorithm.name(), "error": e.to_string() }),
                );
                continue;
            }
        };
        let ms = median(times.clone());
        let iterations = found.iter().map(|f| f.iterations).max().unwrap_or(0);
        let per = ms / iterations.max(1) as f64;
        let ratio = floor_ms.map(|f| per / f);
        let read_ratio = read_ms.map(|f| per / f);
        let successes = found.iter().filter(|f| f.stop.is_success()).count();
        let same = found
            .iter()
            .zip(&alone)
            .filter(|(a, b)| a.support == b.support && a.iterations == b.iterations)
            .count();
        println!(
            "{:>8}: batch {ms:.3} ms, {iterations} iterations, {per:.4} ms / iteration ({}{}), \
             loop of single solves {loop_ms:.1} ms ({:.1}x); {successes} of {batch} converged, \
             {same} as alone",
            algorithm.name(),
            ratio.map_or("-".into(), |r| format!("{r:.2}x floor")),
            read_ratio.map_or(String::new(), |r| format!(", {r:.2}x the read floor")),
            loop_ms / ms
        );
        results.push(serde_json::json!({
            "algorithm": algorithm.name(), "m": m, "k": k, "batch": batch,
            "iterations": iterations, "batch_ms": ms, "times_ms": times,
            "ms_per_iteration": per, "floor_ms": floor_ms, "x_floor": ratio,
            "read_floor_ms": read_ms, "x_read_floor": read_ratio, "loop_ms": loop_ms, "speedup": loop_ms / ms, "converged": successes,
            "same_as_alone": same,
        }));
    }
    results
}

/// The median time of `apply_many` and `adjoint_many` of `batch` vectors, in ms.
fn batch_floor<T: Real>(
    u: &DeviceOperator<T>,
    device: &Device,
    gpu: &kselect::CudaDevice,
    batch: usize,
) -> kselect::Result<f64> {
    let (m, n) = u.shape();
    let x = DeviceBuffer::from_host(device, &vec![T::one(); n * batch])?;
    let mut y = DeviceBuffer::from_host(device, &vec![T::zero(); m * batch])?;
    let mut back = DeviceBuffer::from_host(device, &vec![T::zero(); n * batch])?;
    let times = gpu::event_times(gpu, 3, 20, |_| {
        u.apply_many(&x, &mut y)?;
        u.adjoint_many(&y, &mut back)
    })?;
    Ok(median(times))
}

/// The median time of two reads of `len` values (sums of a buffer of that many), in ms.
fn read_floor<T: Real>(
    device: &Device,
    gpu: &kselect::CudaDevice,
    len: usize,
) -> kselect::Result<f64> {
    let values = DeviceBuffer::from_host(device, &vec![T::one(); len])?;
    let times = gpu::event_times(gpu, 3, 20, |_| {
        values.sum()?;
        values.sum().map(|_| ())
    })?;
    Ok(median(times))
}

/// The median time of one apply and one adjoint, in ms.
fn floor<T: Real>(
    u: &DeviceOperator<T>,
    device: &Device,
    gpu: &kselect::CudaDevice,
) -> kselect::Result<f64> {
    let (m, n) = u.shape();
    let x = DeviceBuffer::from_host(device, &vec![T::one(); n])?;
    let mut y = DeviceBuffer::from_host(device, &vec![T::zero(); m])?;
    let mut back = DeviceBuffer::from_host(device, &vec![T::zero(); n])?;
    let times = gpu::event_times(gpu, 3, 20, |_| {
        u.apply(&x, &mut y)?;
        u.adjoint(&y, &mut back)
    })?;
    Ok(median(times))
}
