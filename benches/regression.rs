//! Robust regression benchmark: LTS (`kselect::regression::Lts`, FAST-LTS) or LMS
//! (`kselect::regression::Lms`, `--method lms`) on simulated data with 20 % outliers, for R's
//! robustbase `ltsReg` (`benches/peer_ltsreg.R`) to fit the same data.
//!
//! ```text
//! cargo bench --features io --bench regression -- --sizes 1e4,1e5,1e6 --reps 3 --write-data /tmp/lts --json cpu.json
//! Rscript benches/peer_ltsreg.R /tmp/lts > r.json
//! ```
//!
//! Options: `--method lts|lms` (default lts), `--sizes` (the numbers of rows, comma separated,
//! `1e6` or `1000000`; default `1e4,1e5,1e6,1e7`), `--device cpu|cuda` (default cpu; without a GPU, `cuda` prints a note and
//! exits 0, unless `KSELECT_REQUIRE_GPU=1`), `--reps` (timed fits a size; the median is
//! reported; default 3), `--nsamp` (random starts, default 500 as `ltsReg`; LMS: default
//! `min(500 p, 3000)` as MASS `lqs`), `--seed` (of the
//! data, default 1), `--fit-seed` (of the fit's random starts, default 42), `--json PATH`,
//! `--write-data DIR` (the data sets, for the R peer).
//!
//! **The data** (deterministic for a size and a seed, whatever the number of threads): `n` rows
//! of `p = 10` predictors `x_ij ~ N(0, 1)` and `y = b_0 + sum_j b_j x_ij + e_i`, `e_i ~ N(0, 1)`,
//! with `b_0 = 1`, `b_j = (-1)^j j / 2` (`-0.5, 1, -1.5, ..., 5`). 20 % of the rows are outliers:
//! rows `i` with `i % 10 == 0` are vertical outliers (`y_i` raised by `50 + 5 N(0, 1)`), rows
//! with `i % 10 == 5` bad leverage points (`x_ij = 10 + 0.5 N(0, 1)`, `y_i = -20 + N(0, 1)`, far
//! from the plane, which puts them near `y = 26`). Normals are Box–Muller pairs from SplitMix64
//! streams, one stream per block of 16384 rows, its first state hashed from (seed, block).
//!
//! **The fit**: `Lts::new().nsamp(nsamp).seed(fit_seed).device(device).fit(Matrix::new(&x, n, 10), &y)`: an
//! intercept, `alpha = 0.5` (`h = floor((n + p + 1) / 2)`, `p = 11`), `ltsReg`'s defaults. Each
//! time is one whole fit (standardization, the nested-subsample search, the reweighting), wall
//! clock, from host slices. Reported: the median time, the objective (the sum of the `h`
//! smallest squared residuals of the raw fit), `h`, the largest error of the reweighted
//! coefficients against `b`, how many of the planted outliers the fit flags, and the median
//! time of each stage (to the end of the starts, the refinement, the rest: reweighting), and
//! of each part between the fit's progress reports (`breakdown_seconds`: the setup's checks and
//! standardization, its copy to the device, the starts, each round of the refinement's race,
//! the polish, the reweighting's three parts). With
//! `--method lms`: `Lms::new().seed(fit_seed).device(device)` (its default coverage
//! `floor(n / 2) + floor((p + 1) / 2)`), the objective its `h`-th smallest absolute residual.
//!
//! **`--write-data DIR`** writes each data set as `DIR/regression-n{n}.f64`: the columns
//! `x_1 .. x_10, y` one after the other (column-major), as little-endian `f64` — what R's
//! `readBin` reads into a matrix unchanged — and `DIR/manifest.csv` (`n,p,file`) listing them.

use std::io::Write;

use kselect::regression::{Lms, Lts, Method, LTS_DEFAULT_NSAMP};
use kselect::Device;
use kselect::Matrix;
use rayon::prelude::*;

#[path = "common/gpu.rs"]
mod gpu;
#[path = "common/options.rs"]
mod options;
#[path = "common/report.rs"]
mod report;
#[path = "common/splitmix.rs"]
mod splitmix;
#[path = "common/stages.rs"]
mod stages;

use report::median;
use stages::StageClock;

/// Predictors (without the intercept).
const P: usize = 10;
/// Rows a generator stream covers.
const BLOCK: usize = 1 << 14;

/// Command-line options.
struct Options {
    method: Method,
    sizes: Vec<usize>,
    device: String,
    reps: usize,
    nsamp: Option<usize>,
    seed: u64,
    fit_seed: u64,
    json: Option<String>,
    write_data: Option<String>,
}

/// The options of the command line, with the defaults for those it does not give.
fn parse_options() -> Options {
    let mut opts = Options {
        method: Method::Lts,
        sizes: vec![10_000, 100_000, 1_000_000, 10_000_000],
        device: "cpu".into(),
        reps: 3,
        nsamp: None,
        seed: 1,
        fit_seed: 42,
        json: None,
        write_data: None,
    };
    options::for_each(|name, value| {
        match name {
            "--sizes" => {
                // `1e6` as well as `1000000`.
                opts.sizes = options::parsed::<f64>(&value)
                    .into_iter()
                    .filter(|&n| n >= 1.0)
                    .map(|n| n as usize)
                    .collect()
            }
            "--device" => opts.device = value,
            "--reps" => opts.reps = value.parse().unwrap_or(opts.reps).max(1),
            "--nsamp" => opts.nsamp = value.parse().ok().map(|n: usize| n.max(1)),
            "--method" => {
                opts.method = match value.as_str() {
                    "lms" => Method::Lms,
                    _ => Method::Lts,
                }
            }
            "--seed" => opts.seed = value.parse().unwrap_or(opts.seed),
            "--fit-seed" => opts.fit_seed = value.parse().unwrap_or(opts.fit_seed),
            "--json" => opts.json = Some(value),
            "--write-data" => opts.write_data = Some(value),
            _ => return false,
        }
        true
    });
    opts
}

/// The true coefficients: `b_0 = 1`, then `b_j = (-1)^j j / 2`.
fn truth() -> Vec<f64> {
    std::iter::once(1.0)
        .chain((1..=P).map(|j| if j % 2 == 0 { 1.0 } else { -1.0 } * j as f64 / 2.0))
        .collect()
}

/// Standard normals, Box–Muller pairs from a SplitMix64 stream.
struct Normals {
    state: u64,
    spare: Option<f64>,
}

impl Normals {
    fn new(seed: u64) -> Normals {
        Normals {
            state: seed,
            spare: None,
        }
    }

    fn next(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let u1 = ((splitmix::next(&mut self.state) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let u2 = (splitmix::next(&mut self.state) >> 11) as f64 / (1u64 << 53) as f64;
        let r = (-2.0 * u1.ln()).sqrt();
        let a = std::f64::consts::TAU * u2;
        self.spare = Some(r * a.sin());
        r * a.cos()
    }
}

/// The first state of a block's stream: (seed, block) hashed through two SplitMix64 steps, so
/// that the streams of different blocks start at unrelated points of the generator's cycle
/// (states a fixed stride apart would make them shifted copies of one another).
fn block_state(seed: u64, block: usize) -> u64 {
    let mut s = seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ (block as u64);
    let first = splitmix::next(&mut s);
    first ^ splitmix::next(&mut s).rotate_left(32)
}

/// The simulated data set of `n` rows (see the module documentation): `x` row-major `n x P`,
/// and `y`.
fn simulate(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let b = truth();
    let mut x = vec![0.0; n * P];
    let mut y = vec![0.0; n];
    x.par_chunks_mut(BLOCK * P)
        .zip(y.par_chunks_mut(BLOCK))
        .enumerate()
        .for_each(|(block, (xs, ys))| {
            let mut z = Normals::new(block_state(seed, block));
            for (r, (row, yi)) in xs.chunks_exact_mut(P).zip(ys.iter_mut()).enumerate() {
                let i = block * BLOCK + r;
                for v in row.iter_mut() {
                    *v = z.next();
                }
                let plane = b[0] + row.iter().zip(&b[1..]).map(|(v, c)| v * c).sum::<f64>();
                *yi = match i % 10 {
                    0 => plane + z.next() + 50.0 + 5.0 * z.next(),
                    5 => {
                        for v in row.iter_mut() {
                            *v = 10.0 + 0.5 * *v;
                        }
                        -20.0 + z.next()
                    }
                    _ => plane + z.next(),
                };
            }
        });
    (x, y)
}

/// Whether row `i` is a planted outlier.
fn planted(i: usize) -> bool {
    i.is_multiple_of(10) || i % 10 == 5
}

/// Writes the data set as `dir/regression-n{n}.f64` (column-major little-endian `f64`: `x_1`
/// to `x_10`, then `y`); returns the file's name.
fn write_data(dir: &str, n: usize, x: &[f64], y: &[f64]) -> std::io::Result<String> {
    std::fs::create_dir_all(dir)?;
    let name = format!("regression-n{n}.f64");
    let file = std::fs::File::create(std::path::Path::new(dir).join(&name))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    for j in 0..P {
        for i in 0..n {
            out.write_all(&x[i * P + j].to_le_bytes())?;
        }
    }
    for v in y {
        out.write_all(&v.to_le_bytes())?;
    }
    out.flush()?;
    Ok(name)
}

/// One size's result.
struct Row {
    n: usize,
    h: usize,
    times: Vec<f64>,
    /// Per run: seconds to the end of the starts, of the refinement, and of the rest (the
    /// reweighting), from the fit's progress reports.
    stages: Vec<[f64; 3]>,
    /// Per run: [`StageClock::breakdown`].
    breakdowns: Vec<Vec<(String, f64)>>,
    objective: f64,
    raw_scale: f64,
    scale: f64,
    starts: usize,
    flagged: usize,
    planted_flagged: usize,
    coefficient_error: f64,
}

/// Simulates, optionally writes, and fits one size `reps` times.
fn run_size(opts: &Options, device: &Device, n: usize) -> Result<Row, String> {
    let (x, y) = simulate(n, opts.seed);
    if let Some(dir) = &opts.write_data {
        let name = write_data(dir, n, &x, &y).map_err(|e| format!("writing to {dir}: {e}"))?;
        println!("wrote {dir}/{name}");
    }
    let lts = Lts::new()
        .nsamp(opts.nsamp.unwrap_or(LTS_DEFAULT_NSAMP))
        .seed(opts.fit_seed)
        .device(device.clone());
    let mut lms = Lms::new().seed(opts.fit_seed).device(device.clone());
    if let Some(nsamp) = opts.nsamp {
        lms = lms.nsamp(nsamp);
    }
    let mut times = Vec::with_capacity(opts.reps);
    let mut stages = Vec::with_capacity(opts.reps);
    let mut breakdowns = Vec::with_capacity(opts.reps);
    let mut last = None;
    for _ in 0..opts.reps {
        let clock = StageClock::start();
        let fit = match opts.method {
            Method::Lms => lms
                .clone()
                .progress(clock.callback())
                .fit(Matrix::new(&x, n, P), &y),
            _ => lts
                .clone()
                .progress(clock.callback())
                .fit(Matrix::new(&x, n, P), &y),
        }
        .map_err(|e| e.to_string())?;
        let (total, stage_seconds) = clock.stop();
        stages.push(stage_seconds);
        breakdowns.push(clock.breakdown());
        times.push(total);
        last = Some(fit);
    }
    let fit = last.ok_or("no run")?;
    let b = truth();
    let coefficient_error = fit
        .coefficients
        .iter()
        .zip(&b)
        .map(|(got, want)| (got - want).abs())
        .fold(0.0, f64::max);
    Ok(Row {
        n,
        h: fit.h,
        times,
        stages,
        breakdowns,
        objective: fit.objective,
        raw_scale: fit.raw_scale,
        scale: fit.scale,
        starts: fit.starts,
        flagged: fit.outliers.len(),
        planted_flagged: fit.outliers.iter().filter(|&&i| planted(i)).count(),
        coefficient_error,
    })
}

fn main() {
    let opts = parse_options();
    let Some((device, device_name)) = gpu::named_device(&opts.device, "regression") else {
        return;
    };
    println!("device: {device_name}");
    println!(
        "{:>10} {:>7} {:>10} {:>20} {:>8} {:>9} {:>10}",
        "n", "h", "seconds", "objective", "starts", "flagged", "coef err"
    );
    let mut rows = Vec::new();
    let mut failed = false;
    for &n in &opts.sizes {
        match run_size(&opts, &device, n) {
            Ok(row) => {
                println!(
                    "{:>10} {:>7} {:>10.3} {:>20.10e} {:>8} {:>9} {:>10.2e}",
                    row.n,
                    row.h,
                    median(row.times.clone()),
                    row.objective,
                    row.starts,
                    row.flagged,
                    row.coefficient_error
                );
                let [s, r, w] = stages::medians(&row.stages);
                println!(
                    "{:>10} stages: starts {s:.3} s, refinement {r:.3} s, rest {w:.3} s",
                    ""
                );
                for (part, seconds) in stages::breakdown_medians(&row.breakdowns) {
                    println!("{:>10}   {part:<24} {seconds:.4} s", "");
                }
                rows.push(row);
            }
            Err(e) => {
                eprintln!("n = {n}: {e}");
                failed = true;
            }
        }
    }
    if let Some(dir) = &opts.write_data {
        let manifest: String = std::iter::once("n,p,file\n".to_string())
            .chain(
                rows.iter()
                    .map(|r| format!("{},{P},regression-n{}.f64\n", r.n, r.n)),
            )
            .collect();
        let path = std::path::Path::new(dir).join("manifest.csv");
        if let Err(e) = std::fs::write(&path, manifest) {
            eprintln!("writing {}: {e}", path.display());
            failed = true;
        }
    }
    report::finish(opts.json.as_deref(), failed, || {
        let results = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "n": r.n, "p": P + 1, "h": r.h, "seconds": median(r.times.clone()),
                    "times": r.times, "stage_seconds": stages::medians(&r.stages),
                    "breakdown_seconds": stages::breakdown_medians(&r.breakdowns),
                    "objective": r.objective, "raw_scale": r.raw_scale,
                    "scale": r.scale, "starts": r.starts, "flagged": r.flagged,
                    "planted_outliers": (0..r.n).filter(|&i| planted(i)).count(),
                    "planted_flagged": r.planted_flagged,
                    "coefficient_error": r.coefficient_error,
                })
            })
            .collect();
        let fields = serde_json::json!({
            "device": device_name,
            "backend": device.backend_name(),
            "estimator": match opts.method {
                Method::Lms => format!("kselect::regression::Lms::new(){}.seed({}) (default coverage, intercept)", opts.nsamp.map(|k| format!(".nsamp({k})")).unwrap_or_default(), opts.fit_seed),
                _ => format!("kselect::regression::Lts::new().nsamp({}).seed({}) (alpha 0.5, intercept)", opts.nsamp.unwrap_or(LTS_DEFAULT_NSAMP), opts.fit_seed),
            },
            "data": format!("x ~ N(0,1) n x {P}, y = 1 + sum_j (-1)^j j/2 x_j + N(0,1); rows i % 10 == 0 vertical outliers (y + 50 + 5 N(0,1)), i % 10 == 5 bad leverage points (x = 10 + 0.5 N(0,1), y = -20 + N(0,1)); data seed {}", opts.seed),
            "timing": format!("wall clock of one whole fit from host slices, median of {} runs, no warm-up", opts.reps),
            "objective": match opts.method {
                Method::Lms => "h-th smallest absolute residual of the raw fit",
                _ => "sum of the h smallest squared residuals of the raw fit",
            },
            "coefficient_error": "max_j |reweighted coefficient_j - true b_j|",
        });
        (fields, results)
    });
}
