//! Distributed quantiles under MPI: Table 4 of Blanchard, Fu & Knoth (2024) on what we have.
//! Run it under `mpirun`, one process per rank:
//!
//! ```text
//! cargo bench --features mpi,plot --bench distributed --no-run
//! mpirun -np 4 target/release/deps/distributed-* --device cuda --log2n 24,26,28 --m 101,501 \
//!     --algorithms sort-choose,distributed-bms,dibms --reps 7 --json distributed.json
//! ```
//!
//! Options: `--device cpu|cuda` (default cuda: every rank's part in the memory of GPU
//! `local rank % GPUs`, so ranks may share one GPU), `--transport mpi|nccl` (default mpi;
//! nccl needs a GPU for each rank of a host), `--dtype f32|f64` (default f32), `--log2n`
//! (total values, powers of two; default 24,26,28), `--m` (numbers of evenly spaced quantiles;
//! default 101,501), `--algorithms` (default all three), `--reps` (default 7; sort&choose at
//! most 3), `--warmup` (untimed calls first, default 1; 0 for calls of seconds, such as
//! sort&choose's at 2^32, whose kernels an earlier run compiled), `--buckets` (default 8192),
//! `--parts even|skewed` (default even), `--json PATH` (written by rank 0).
//!
//! **The data**: `n` values uniform in [0, 1) of one seeded sequence, so that their
//! concatenation is known; with `--device cuda` each rank generates its part on its GPU (no
//! part crosses a bus). `even` parts: rank `r` holds values `r n/q .. (r+1) n/q`; `skewed`:
//! rank 0 holds 90 %, the last rank none (with 3 ranks or more), the others the rest in equal
//! parts. **The call**: every rank calls
//! `quantiles(_device)` with the `m` probabilities `i / (m - 1)`, linear method, results on
//! every rank; timed by rank 0's wall clock from a barrier to the call's return (the results
//! broadcast ends the call on every rank), median of `--reps` after `--warmup` untimed calls.
//! **Checks**: every call's quantiles equal, bit for bit, the single-process quantiles of the
//! concatenated data, computed by rank 0 (on its GPU with `--device cuda`: the one-GPU
//! answer). **The floor**: every rank reads its part once (a sum: on the GPU
//! `DeviceBuffer::sum`), from a barrier to a barrier, median of 7. **The peer**: the
//! single-process quantiles of all `n` values on rank 0's device (one GPU: the crate's own
//! `Selector`, CUDA events), where they fit. **Traffic**: every rank's messages, values and
//! bytes by phase, summed, beside the paper's expected values (`model::expected_phase`).
//! **The model** (`model::Scaling`, from the counted traffic of each run on 2 or more ranks):
//! the values all ranks would send on 2 to 4096 ranks holding the same data, and the time of
//! those messages over a 10 Gb/s LAN (50 us, 1.25 GB/s) and HDR InfiniBand (2 us, 25 GB/s) with
//! tree collectives; `--plot PATH` (rank 0) draws the values against the ranks, SVG.

use std::time::Instant;

use rayon::prelude::*;
use serde_json::json;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use kselect::distributed::{
    model, Communicator, DistributedAlgorithm, DistributedSelector, Mpi, Nccl, Phase, Traffic,
};
use kselect::{CudaDevice, Device, DeviceBuffer, Element, QuantileMethod, Selector};

#[path = "common/gpu.rs"]
mod gpu;
#[path = "common/options.rs"]
mod options;
#[path = "common/report.rs"]
mod report;

use report::median;

/// The networks of the model: latency (s) and bandwidth (bytes/s) of a 10 Gb/s Ethernet LAN
/// (the paper's kind of network) and of HDR InfiniBand.
const LAN: (f64, f64) = (50e-6, 1.25e9);
const INFINIBAND: (f64, f64) = (2e-6, 25e9);

struct Options {
    device: String,
    transport: String,
    parts: String,
    dtype: String,
    log2n: Vec<u32>,
    m: Vec<usize>,
    algorithms: Vec<DistributedAlgorithm>,
    reps: usize,
    warmup: usize,
    buckets: usize,
    json: Option<String>,
    plot: Option<String>,
}

fn options() -> Options {
    let mut o = Options {
        device: "cuda".into(),
        transport: "mpi".into(),
        parts: "even".into(),
        dtype: "f32".into(),
        log2n: vec![24, 26, 28],
        m: vec![101, 501],
        algorithms: vec![
            DistributedAlgorithm::SortChoose,
            DistributedAlgorithm::DistributedBms,
            DistributedAlgorithm::Dibms,
        ],
        reps: 7,
        warmup: 1,
        buckets: 8192,
        json: None,
        plot: None,
    };
    options::for_each(|name, value| {
        match name {
            "--device" => o.device = value,
            "--transport" => o.transport = value,
            "--parts" => o.parts = value,
            "--dtype" => o.dtype = value,
            "--log2n" => o.log2n = options::parsed(&value),
            "--m" => o.m = options::parsed(&value),
            "--algorithms" => o.algorithms = options::parsed(&value),
            "--reps" => o.reps = value.parse().unwrap_or(7),
            "--warmup" => o.warmup = value.parse().unwrap_or(1),
            "--buckets" => o.buckets = value.parse().unwrap_or(8192),
            "--json" => o.json = Some(value),
            "--plot" => o.plot = Some(value),
            _ => return false,
        }
        true
    });
    o
}

/// Values `start..start + len` of the seeded uniform sequence.
trait Uniform: Element + cudarc::driver::DeviceRepr {
    fn at(i: u64) -> Self;
    /// The kernel of `GENERATOR` that writes the same values on a GPU.
    const KERNEL: &'static str;
}

/// The sequence on a GPU: `bits` and the two conversions of [`Uniform::at`].
const GENERATOR: &str = r#"
__device__ unsigned long long bits(unsigned long long i) {
    unsigned long long z = i * 0x9E3779B97F4A7C15ull + 0x12345678ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
extern "C" __global__ void uniform_f32(float* out, unsigned long long start, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = (float)(bits(start + i) >> 40) / 16777216.0f;
}
extern "C" __global__ void uniform_f64(double* out, unsigned long long start, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = (double)(bits(start + i) >> 11) / 9007199254740992.0;
}
"#;

/// Values `start..start + len` of the sequence, generated on `gpu`.
fn values_on<T: Uniform>(gpu: &CudaDevice, start: u64, len: usize) -> DeviceBuffer<T> {
    let ctx = CudaContext::new(gpu.ordinal()).expect("the GPU's context");
    let stream = ctx.default_stream();
    let ptx = cudarc::nvrtc::compile_ptx(GENERATOR).expect("the generator compiles");
    let module = ctx.load_module(ptx).expect("the generator loads");
    let f = module
        .load_function(T::KERNEL)
        .expect("the generator's kernel");
    // SAFETY: every element is written by the kernel before it is read.
    let mut out = unsafe { stream.alloc::<T>(len) }.expect("room for the part");
    if len > 0 {
        let n = len as u64;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&mut out).arg(&start).arg(&n);
        // SAFETY: uniform_T(T* out, u64 start, u64 n) writes out[0..n).
        unsafe { launch.launch(LaunchConfig::for_num_elems(len.min(1 << 30) as u32)) }
            .expect("the generator runs");
    }
    stream.synchronize().expect("the generator finishes");
    DeviceBuffer::from_slice(gpu, out)
}

fn bits(i: u64) -> u64 {
    let mut z = i
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x1234_5678);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Uniform for f32 {
    const KERNEL: &'static str = "uniform_f32";
    fn at(i: u64) -> f32 {
        (bits(i) >> 40) as f32 / (1u64 << 24) as f32
    }
}

impl Uniform for f64 {
    const KERNEL: &'static str = "uniform_f64";
    fn at(i: u64) -> f64 {
        (bits(i) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn values<T: Uniform>(start: u64, len: usize) -> Vec<T> {
    (0..len as u64)
        .into_par_iter()
        .map(|i| T::at(start + i))
        .collect()
}

/// This rank's part, on the host or on its GPU.
enum Part<T: Element> {
    Host(Vec<T>),
    Gpu(DeviceBuffer<T>),
}

/// The quantiles of `probs` of each of `ms` for all `n` values on one GPU (an error's text
/// when they fail) and the time of 101 of them (median of 5 after one untimed call).
fn one_gpu<T: Uniform>(
    g: &CudaDevice,
    n: usize,
    ms: &[Vec<f64>],
) -> (Result<Vec<Vec<f64>>, String>, Option<f64>) {
    let all: DeviceBuffer<T> = values_on(g, 0, n);
    let sel = Selector::on(Device::Cuda(g.clone()));
    let found = ms
        .iter()
        .map(|p| sel.quantiles(&all, p, QuantileMethod::Linear))
        .collect::<kselect::Result<Vec<_>>>()
        .map_err(|e| e.to_string());
    let probs: Vec<f64> = (0..101).map(|i| i as f64 / 100.0).collect();
    let times = gpu::event_times(g, 1, 5, |_| {
        sel.quantiles(&all, &probs, QuantileMethod::Linear)
            .map(|_| ())
    });
    (found, times.ok().map(median))
}

/// The first value and the length of each rank's part of `n` values over `q` ranks.
fn parts(how: &str, n: usize, q: usize) -> Vec<(usize, usize)> {
    let sizes: Vec<usize> = match how {
        "skewed" => {
            // Ranks 1..=rest share what rank 0 leaves; the last is empty with 3 ranks or more.
            let rest = if q >= 3 { q - 2 } else { q - 1 };
            let big = if rest == 0 { n } else { n * 9 / 10 };
            (0..q)
                .map(|r| match r {
                    0 => big + (n - big) % rest.max(1),
                    _ if r <= rest => (n - big) / rest,
                    _ => 0,
                })
                .collect()
        }
        _ => (0..q).map(|r| n * (r + 1) / q - n * r / q).collect(),
    };
    let mut start = 0;
    sizes
        .into_iter()
        .map(|len| {
            start += len;
            (start - len, len)
        })
        .collect()
}

fn run<T: Uniform>(
    mpi: &Mpi,
    comm: &dyn Communicator,
    o: &Options,
    gpu: Option<&CudaDevice>,
) -> (Vec<serde_json::Value>, bool) {
    let (rank, q) = (mpi.rank(), mpi.size());
    let mut results = Vec::new();
    let mut failed = false;
    for &log2n in &o.log2n {
        let n = 1usize << log2n;
        let ms: Vec<Vec<f64>> =
            o.m.iter()
                .map(|&m| (0..m).map(|i| i as f64 / (m - 1) as f64).collect())
                .collect();
        // Rank 0: the expected quantiles of all n values, and the single-process peer's time
        // on its GPU; the data freed before the parts exist. The expected values are the
        // one-GPU answer up to 2^30 values, the host's above (the one-GPU answer is then
        // checked against them).
        let (expected, peer_ms) = if rank == 0 {
            let host = (gpu.is_none() || n > 1 << 30).then(|| {
                let all: Vec<T> = values(0, n);
                ms.iter()
                    .map(|p| {
                        kselect::quantiles(&all, p, QuantileMethod::Linear).expect("reference")
                    })
                    .collect::<Vec<_>>()
            });
            let one_gpu = gpu.map(|g| one_gpu::<T>(g, n, &ms));
            match (host, one_gpu) {
                (Some(h), Some((one, peer))) => {
                    if one.as_ref().ok() != Some(&h) {
                        eprintln!("MISMATCH n=2^{log2n}: one GPU against the host ({one:?})");
                        failed = true;
                    }
                    (Some(h), peer)
                }
                (Some(h), None) => (Some(h), None),
                (None, Some((one, peer))) => (Some(one.expect("one-GPU reference")), peer),
                (None, None) => (None, None),
            }
        } else {
            (None, None)
        };
        mpi.barrier();
        let (start, len) = parts(&o.parts, n, q)[rank];
        let part: Part<T> = match gpu {
            Some(g) => Part::Gpu(values_on(g, start as u64, len)),
            None => Part::Host(values(start as u64, len)),
        };
        // The floor: every rank reads its part once.
        let mut floor = Vec::new();
        for _ in 0..8 {
            mpi.barrier();
            let t = Instant::now();
            let s = match &part {
                Part::Host(v) => v.par_iter().map(|x| x.to_f64()).sum::<f64>(),
                Part::Gpu(b) => b.sum().expect("sum"),
            };
            std::hint::black_box(s);
            mpi.barrier();
            floor.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let floor_ms = median(floor[1..].to_vec());
        for (mi, &m) in o.m.iter().enumerate() {
            let probs = &ms[mi];
            let expected = expected.as_ref().map(|e| &e[mi]);
            for &algorithm in &o.algorithms {
                let sel = DistributedSelector::new(comm)
                    .algorithm(algorithm)
                    .buckets(o.buckets);
                let call = || match &part {
                    Part::Host(v) => sel.quantiles(v, probs, QuantileMethod::Linear),
                    Part::Gpu(b) => sel.quantiles_device(b, probs, QuantileMethod::Linear),
                };
                let reps = if algorithm == DistributedAlgorithm::SortChoose {
                    o.reps.min(3)
                } else {
                    o.reps
                };
                let mut times = Vec::new();
                let mut last = None;
                for r in 0..o.warmup + reps {
                    mpi.barrier();
                    let t = Instant::now();
                    let out = call().expect("distributed quantiles");
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    if r >= o.warmup {
                        times.push(ms);
                    }
                    if let Some(e) = expected {
                        if out.values.as_ref() != Some(e) {
                            eprintln!("MISMATCH n=2^{log2n} m={m} {algorithm}");
                            failed = true;
                        }
                    }
                    last = Some(out.report);
                }
                let report = last.expect("a call ran");
                let all = sel.gather_traffic(&report).expect("traffic");
                if let Some(all) = all {
                    let total = all.iter().fold(Traffic::default(), |a, t| a.sum(t));
                    let ms = median(times.clone());
                    let phases: serde_json::Map<String, serde_json::Value> = Phase::ALL
                        .iter()
                        .map(|&p| {
                            // How often the algorithm makes the paper's subroutine.
                            let passes = match (algorithm, p) {
                                (DistributedAlgorithm::SortChoose, _) => 0.0,
                                (_, Phase::CreateRefine | Phase::AssignRefine | Phase::ReduceRefine) => {
                                    report.passes.saturating_sub(1) as f64
                                }
                                (DistributedAlgorithm::DistributedBms, Phase::Gather) => 1.0,
                                (_, Phase::Gather) => 0.0,
                                _ => 1.0,
                            };
                            let expected = passes * model::expected_phase(p, n as u64, m, q, o.buckets);
                            (
                                p.name().to_string(),
                                json!({"counted": total.phase(p), "paper_expected_values": expected}),
                            )
                        })
                        .collect();
                    println!(
                        "n=2^{log2n} m={m:4} q={q} {:<15} {ms:9.3} ms  (floor {floor_ms:.3} ms: {:.1}x; passes {}; {} values, {} messages)",
                        algorithm.name(),
                        ms / floor_ms,
                        report.passes,
                        total.total().values,
                        total.total().messages
                    );
                    let modelled = model::Scaling::from_counted(&all, n as u64).map(|sc| {
                        (1..=12)
                            .map(|l| {
                                let ranks = 1usize << l;
                                json!({
                                    "ranks": ranks,
                                    "values": sc.values(ranks),
                                    "lan_comm_ms": 1e3 * sc.seconds(ranks, LAN.0, LAN.1),
                                    "infiniband_comm_ms": 1e3 * sc.seconds(ranks, INFINIBAND.0, INFINIBAND.1),
                                    "paper_expected_values": model::expected_values(algorithm, n as u64, m, ranks, o.buckets),
                                })
                            })
                            .collect::<Vec<_>>()
                    });
                    results.push(json!({
                        "log2n": log2n, "n": n, "m": m, "ranks": q, "dtype": T::DTYPE.name(),
                        "transport": comm.transport(), "parts": &o.parts,
                        "algorithm": algorithm.name(), "ms": ms, "times_ms": times,
                        "floor_ms": floor_ms, "x_floor": ms / floor_ms,
                        "single_process_101_ms": peer_ms,
                        "passes": report.passes,
                        "traffic_total": total.total(),
                        "paper_expected_total_values": model::expected_values(algorithm, n as u64, m, q, o.buckets),
                        "phases": phases,
                        "traffic_per_rank": all,
                        "modelled": modelled,
                    }));
                }
            }
        }
    }
    (results, failed)
}

fn main() {
    let o = options();
    let mpi = Mpi::init().expect("MPI initializes");
    let local = mpi.local_rank();
    let gpu = if o.device == "cuda" {
        match CudaDevice::count().and_then(|c| CudaDevice::new(local % c.max(1))) {
            Ok(g) => Some(g),
            Err(e) => {
                eprintln!("distributed: no GPU ({e})");
                if std::env::var("KSELECT_REQUIRE_GPU").as_deref() == Ok("1") {
                    std::process::exit(1);
                }
                return;
            }
        }
    } else {
        None
    };
    let nccl = (o.transport == "nccl").then(|| Nccl::over_mpi(&mpi).expect("NCCL over MPI"));
    let comm: &dyn Communicator = match &nccl {
        Some(nccl) => nccl,
        None => &mpi,
    };
    let (results, failed) = match o.dtype.as_str() {
        "f64" => run::<f64>(&mpi, comm, &o, gpu.as_ref()),
        _ => run::<f32>(&mpi, comm, &o, gpu.as_ref()),
    };
    if mpi.rank() == 0 {
        if let Some(path) = &o.plot {
            if let Err(e) = plot_model(path, &results) {
                eprintln!("plotting {path}: {e}");
            }
        }
        let device = gpu
            .as_ref()
            .map_or("cpu".to_string(), |g| g.name().to_string());
        report::finish(o.json.as_deref(), failed, || {
            (
                json!({"benchmark": "distributed", "device": device, "ranks": mpi.size(),
                       "gpus": CudaDevice::count().unwrap_or(0), "transport": comm.transport(),
                       "buckets": o.buckets, "timing": "rank 0 wall clock from a barrier to the call's return, median after untimed warm-up calls", "warmup_calls": o.warmup}),
                results,
            )
        });
    } else if failed {
        std::process::exit(1);
    }
}

/// A line of the plot: (ranks, values) points.
type Points = Vec<(f64, f64)>;

/// The modelled values sent against the number of ranks, for the largest `n` measured: one
/// line per algorithm and number of quantiles, the paper's expected values dotted.
fn plot_model(path: &str, results: &[serde_json::Value]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    kselect::plot::font::register();
    let largest = results
        .iter()
        .filter_map(|r| r["log2n"].as_u64())
        .max()
        .unwrap_or(0);
    let lines: Vec<(String, Points, Points)> = results
        .iter()
        .filter(|r| r["log2n"].as_u64() == Some(largest) && r["modelled"].is_array())
        .map(|r| {
            let points = |key: &str| -> Vec<(f64, f64)> {
                r["modelled"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| Some((p["ranks"].as_f64()?, p[key].as_f64()?.max(1.0))))
                    .collect()
            };
            (
                format!("{} m={}", r["algorithm"].as_str().unwrap_or(""), r["m"]),
                points("values"),
                points("paper_expected_values"),
            )
        })
        .collect();
    let top = lines
        .iter()
        .flat_map(|l| l.1.iter().chain(&l.2))
        .map(|p| p.1)
        .fold(10.0, f64::max);
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Values sent by all ranks, n = 2^{largest} (model from counted runs)"),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((2f64..4096f64).log_scale(), (1f64..top * 2.0).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("ranks")
        .y_desc("values sent")
        .draw()?;
    for (i, (name, counted, paper)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                counted.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(paper.iter().map(|&p| Circle::new(p, 2, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}
