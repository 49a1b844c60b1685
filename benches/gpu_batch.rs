//! GPU benchmark of batched selection, top-k and hard thresholding against the one-read floor
//! (a sum over the same array), timed with CUDA events in the same run; results checked
//! against the CPU.
//!
//! ```text
//! cargo bench --bench gpu_batch -- --shapes 1024x1048576,65536x1024 --threshold-sizes 26 --json out.json
//! ```
//!
//! Options: `--shapes` (rows x cols, comma separated), `--ks-long` (k for rows of at least
//! 65536 values), `--ks-short` (k for shorter rows), `--threshold-sizes` (log2 of n for hard
//! thresholding, at k = n/1000 and n/100), `--types` (f32, f64), `--reps`, `--json PATH`.
//! Cases of a shape: `top-k` (largest, sorted and unsorted), `top-k smallest` (sorted) for
//! each k, and `kth` (the element of rank cols/2 of every row). Results stay on the device.
//! Without a GPU it prints a note and exits 0, unless `KSELECT_REQUIRE_GPU=1`.

use kselect::{
    BatchRank, CudaDevice, Device, DeviceBuffer, Element, GpuTimer, Matrix, Selector, TopKOptions,
};
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
const WARMUPS: usize = 2;

/// Command-line options.
struct Options {
    shapes: Vec<(usize, usize)>,
    ks_long: Vec<usize>,
    ks_short: Vec<usize>,
    threshold_sizes: Vec<u32>,
    common: options::Common,
}

fn parse_options() -> Options {
    let mut opts = Options {
        shapes: vec![(1024, 1 << 20), (1 << 16, 1024)],
        ks_long: vec![32, 1024, 65536],
        ks_short: vec![16, 256],
        threshold_sizes: vec![26],
        common: options::Common::new(&["f32"], 21),
    };
    options::for_each(|name, value| {
        match name {
            "--shapes" => {
                opts.shapes = options::list(&value)
                    .iter()
                    .filter_map(|s| {
                        let (r, c) = s.split_once('x')?;
                        Some((r.parse().ok()?, c.parse().ok()?))
                    })
                    .collect()
            }
            "--ks-long" => opts.ks_long = options::parsed(&value),
            "--ks-short" => opts.ks_short = options::parsed(&value),
            "--threshold-sizes" if value == "none" => opts.threshold_sizes = Vec::new(),
            "--threshold-sizes" => opts.threshold_sizes = options::parsed(&value),
            _ => return opts.common.take(name, value),
        }
        true
    });
    opts
}

/// Uniform values in `[0, 1)` of the benchmark's float types.
trait BenchFloat: Element {
    fn unit(bits: u64) -> Self;
}

impl BenchFloat for f32 {
    fn unit(bits: u64) -> Self {
        (bits >> 40) as f32 / (1u64 << 24) as f32
    }
}

impl BenchFloat for f64 {
    fn unit(bits: u64) -> Self {
        (bits >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn uniform<T: BenchFloat>(n: usize, seed: u64) -> Vec<T> {
    splitmix::generate(n, seed, |s, _| T::unit(splitmix::next(s)))
}

/// One timed case.
struct Row {
    dtype: &'static str,
    shape: String,
    case: String,
    k: usize,
    median_ms: f64,
    floor_ms: f64,
    bytes: usize,
    correct: bool,
}

/// The median ms of `f` over `reps` calls timed with CUDA events (after [`WARMUPS`]).
fn time_ms(
    gpu: &CudaDevice,
    reps: usize,
    f: impl FnMut(usize) -> kselect::Result<()>,
) -> kselect::Result<f64> {
    Ok(median(gpu::event_times(gpu, WARMUPS, reps, f)?))
}

/// Where the cases of one input are printed and recorded, with its type, shape, size and floor.
struct Recorder<'a> {
    dtype: &'static str,
    /// The input's shape as recorded, and as printed.
    shape: String,
    shown: String,
    bytes: usize,
    floor_ms: f64,
    out: &'a mut Vec<Row>,
}

impl<'a> Recorder<'a> {
    /// The recorder of the input in `copies`, whose floor it times.
    fn new<T: Element>(
        gpu: &CudaDevice,
        opts: &Options,
        copies: &Copies<T>,
        shape: String,
        shown: String,
        out: &'a mut Vec<Row>,
    ) -> kselect::Result<Self> {
        Ok(Recorder {
            dtype: T::DTYPE.name(),
            shape,
            shown,
            bytes: copies.bytes(),
            floor_ms: median(copies.floor_times(gpu, WARMUPS, opts.common.reps)?),
            out,
        })
    }

    /// Prints and records a case.
    fn push(&mut self, case: &str, k: usize, median_ms: f64, correct: bool) {
        println!(
            "{:>4} {:>14} {:>22} k={:<8} {:>9.3} ms  floor {:>7.3} ms  x{:>6.2}  {}",
            self.dtype,
            self.shown,
            case,
            k,
            median_ms,
            self.floor_ms,
            median_ms / self.floor_ms,
            if correct { "ok" } else { "WRONG" }
        );
        self.out.push(Row {
            dtype: self.dtype,
            shape: self.shape.clone(),
            case: case.to_string(),
            k,
            median_ms,
            floor_ms: self.floor_ms,
            bytes: self.bytes,
            correct,
        });
    }
}

fn run_shape<T: BenchFloat>(
    gpu: &CudaDevice,
    opts: &Options,
    rows: usize,
    cols: usize,
    out: &mut Vec<Row>,
) -> kselect::Result<()> {
    let data = uniform::<T>(rows * cols, 0x5eed);
    let shape = format!("{rows}x{cols}");
    let device = Device::Cuda(gpu.clone());
    let copies = Copies::upload(&device, &data)?;
    let mut rec = Recorder::new(gpu, opts, &copies, shape.clone(), shape, out)?;
    let sel = Selector::on(device);
    let cpu = Selector::new();
    let ks = if cols >= 65536 {
        &opts.ks_long
    } else {
        &opts.ks_short
    };
    // The CPU reference of the first rows only (the whole of 4 GiB would take long).
    let checked_rows = rows.min(64);
    let head = &data[..checked_rows * cols];
    for &k in ks.iter().filter(|&&k| k <= cols) {
        for (case, options) in [
            ("top-k sorted", TopKOptions::largest().sorted(true)),
            ("top-k unsorted", TopKOptions::largest().sorted(false)),
            (
                "top-k smallest sorted",
                TopKOptions::smallest().sorted(true),
            ),
        ] {
            let got = sel
                .top_k_rows_device(Matrix::new(copies.get(0), rows, cols), k, options)?
                .to_host()?;
            let want = cpu.top_k_rows(Matrix::new(head, checked_rows, cols), k, options)?;
            let m = checked_rows * k;
            let correct = got.indices()[..m] == want.indices()[..]
                && got.values()[..m]
                    .iter()
                    .zip(want.values())
                    .all(|(a, b)| a.to_key() == b.to_key());
            let ms = time_ms(gpu, opts.common.reps, |r| {
                sel.top_k_rows_device(Matrix::new(copies.get(r), rows, cols), k, options)
                    .map(|_| ())
            })?;
            rec.push(case, k, ms, correct);
        }
    }
    let kth = cols / 2;
    let got = sel.select_rows(Matrix::new(copies.get(0), rows, cols), BatchRank::Same(kth))?;
    let want = cpu.select_rows(Matrix::new(head, checked_rows, cols), BatchRank::Same(kth))?;
    let correct = got[..checked_rows]
        .iter()
        .zip(&want)
        .all(|(a, b)| a.to_key() == b.to_key());
    let ms = time_ms(gpu, opts.common.reps, |r| {
        sel.select_rows(Matrix::new(copies.get(r), rows, cols), BatchRank::Same(kth))
            .map(|_| ())
    })?;
    rec.push("kth", kth, ms, correct);
    Ok(())
}
fn run_threshold<T: BenchFloat>(
    gpu: &CudaDevice,
    opts: &Options,
    log2n: u32,
    out: &mut Vec<Row>,
) -> kselect::Result<()> {
    let n = 1usize << log2n;
    // Signed values, so that magnitudes differ from values.
    let data: Vec<T> = uniform::<f64>(n, 0x7e57)
        .into_par_iter()
        .map(|u| T::unit(((u - 0.5).abs() * 2.0 * (1u64 << 53) as f64) as u64 * 2048))
        .collect();
    let device = Device::Cuda(gpu.clone());
    let copies = Copies::upload(&device, &data)?;
    let mut rec = Recorder::new(
        gpu,
        opts,
        &copies,
        format!("{n}"),
        format!("2^{log2n}"),
        out,
    )?;
    let sel = Selector::on(device.clone());
    for k in [n / 1000, n / 100] {
        let want = Selector::new().threshold(&data, k)?;
        let got = sel.threshold_device(copies.get(0), k)?.to_host()?;
        let correct = got.support == want.support && got.index == want.index;
        // The support left on the device (as the peers leave theirs), then copied to the host.
        let ms = time_ms(gpu, opts.common.reps, |r| {
            sel.threshold_device(copies.get(r), k).map(|_| ())
        })?;
        rec.push("threshold", k, ms, correct);
        let ms = time_ms(gpu, opts.common.reps, |r| {
            sel.threshold_device(copies.get(r), k)?
                .to_host()
                .map(|_| ())
        })?;
        rec.push("threshold-to-host", k, ms, correct);
        // In place: each run gets a fresh copy of the data (made outside the timed region).
        let mut times = Vec::with_capacity(opts.common.reps);
        let mut support = Vec::new();
        let mut work = DeviceBuffer::from_host(&device, &data)?;
        for rep in 0..opts.common.reps + WARMUPS {
            work = if rep == 0 {
                work
            } else {
                DeviceBuffer::from_host(&device, &data)?
            };
            // The copy may still be in flight: it is not part of the timed call.
            gpu.synchronize()?;
            let timer = GpuTimer::start(gpu)?;
            let kept = sel.hard_threshold_device(&mut work, k)?;
            let ms = timer.stop()? as f64;
            support = kept.to_host()?.support;
            if rep >= WARMUPS {
                times.push(ms);
            }
        }
        let ms = median(times);
        let zeroed = work.to_host()?;
        let correct = support == want.support
            && zeroed.iter().enumerate().all(|(i, x)| {
                let kept = want.support.binary_search(&i).is_ok();
                x.to_key() == if kept { data[i] } else { T::default() }.to_key()
            });
        rec.push("hard-threshold", k, ms, correct);
    }
    Ok(())
}

fn main() {
    let opts = parse_options();
    let Some(gpu) = gpu::device_printed("gpu_batch") else {
        return;
    };
    let mut rows = Vec::new();
    let mut failed = false;
    for dtype in &opts.common.types {
        for &(r, c) in &opts.shapes {
            let result = match dtype.as_str() {
                "f32" => run_shape::<f32>(&gpu, &opts, r, c, &mut rows),
                "f64" => run_shape::<f64>(&gpu, &opts, r, c, &mut rows),
                other => {
                    eprintln!("unknown type {other} (f32, f64)");
                    continue;
                }
            };
            if let Err(e) = result {
                eprintln!("{dtype} {r}x{c}: {e}");
                failed = true;
            }
        }
        for &log2n in &opts.threshold_sizes {
            let result = match dtype.as_str() {
                "f32" => run_threshold::<f32>(&gpu, &opts, log2n, &mut rows),
                "f64" => run_threshold::<f64>(&gpu, &opts, log2n, &mut rows),
                _ => continue,
            };
            if let Err(e) = result {
                eprintln!("{dtype} threshold 2^{log2n}: {e}");
                failed = true;
            }
        }
    }
    failed |= rows.iter().any(|r| !r.correct);
    report::finish(opts.common.json.as_deref(), failed, || {
        let results: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "dtype": r.dtype, "shape": r.shape, "case": r.case, "k": r.k,
                    "median_ms": r.median_ms, "floor_ms": r.floor_ms,
                    "ratio_to_floor": r.median_ms / r.floor_ms,
                    "gb_per_s": r.bytes as f64 / r.median_ms / 1e6, "correct": r.correct,
                    "bytes": r.bytes,
                })
            })
            .collect();
        let fields = serde_json::json!({
            "device": gpu.name(), "arch": gpu.arch(),
            "timing": "CUDA events around each whole call after 2 warm-up calls; median of --reps runs; inputs rotated among copies totalling >= 512 MiB; results left on the device",
            "floor": "DeviceBuffer::sum over the same array (one read, 16-byte loads)",
        });
        (fields, results)
    });
}
