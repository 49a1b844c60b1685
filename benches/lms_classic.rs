//! LMS on small data: `kselect::regression::Lms` on the classic data sets of
//! `datasets/robust` and on a simulated 38 x 10 set, for MASS `lqs` (`benches/peer_lqs.R`) to
//! fit the same data with the same coverage.
//!
//! ```text
//! cargo bench --features io --bench lms_classic -- --reps 31 --write-data /tmp/lms --json cpu.json
//! Rscript benches/peer_lqs.R /tmp/lms 31 > r.json
//! ```
//!
//! Options: `--reps` (timed fits a case; the median is reported; default 31), `--sets A,B`
//! (only these sets; default all), `--json PATH`, `--write-data DIR` (the simulated set as
//! `DIR/simulated-38x10.csv`, for the R peer).
//!
//! **The cases**: each data set with two coverages, `lqs(method = "lms")`'s
//! `h = floor((n + 1) / 2)` ([`LmsCoverage::Median`]) and kselect's default
//! `floor(n / 2) + floor((p + 1) / 2)` ([`LmsCoverage::HighestBreakdown`]), which `lqs` fits
//! as `method = "lqs", quantile = h`. The fits use the defaults otherwise (`nsamp =
//! min(500 p, 3000)` random starts, or every `p`-subset when there are fewer than 5000, as
//! `lqs`). Each time is one whole fit (starts, refinement, reweighting), wall clock, on all
//! threads. Reported: the median time and the objective, the `h`-th smallest absolute
//! residual of the raw fit, and the median time of each stage (to the end of the starts, the
//! refinement, the rest: reweighting), and of each part between the fit's progress reports
//! (`breakdown_seconds`), from the fit's progress reports.
//!
//! **The simulated set** (`simulated-38x10`): 38 rows of 10 predictors `x_ij ~ N(0, 1)` and
//! `y = 1 + sum_j x_ij + e_i`, `e_i ~ N(0, 1)`, with rows `i % 5 == 0` raised by 20: a
//! small data set with many coefficients, where the search has the most to do per row.

use std::io::Write;

use kselect::regression::{Lms, LmsCoverage};
use kselect::Matrix;

#[path = "common/options.rs"]
mod options;
#[path = "common/report.rs"]
mod report;
#[path = "../tests/robust/mod.rs"]
mod robust;
#[path = "common/splitmix.rs"]
mod splitmix;
#[path = "common/stages.rs"]
mod stages;

use report::median;
use stages::StageClock;

/// Command-line options.
struct Options {
    reps: usize,
    sets: Option<Vec<String>>,
    json: Option<String>,
    write_data: Option<String>,
}

fn parse_options() -> Options {
    let mut opts = Options {
        reps: 31,
        sets: None,
        json: None,
        write_data: None,
    };
    options::for_each(|name, value| {
        match name {
            "--reps" => {
                opts.reps = options::parsed(&value)
                    .first()
                    .copied()
                    .unwrap_or(opts.reps)
                    .max(1)
            }
            "--sets" => opts.sets = Some(options::list(&value)),
            "--json" => opts.json = Some(value),
            "--write-data" => opts.write_data = Some(value),
            _ => return false,
        }
        true
    });
    opts
}

/// A data set: `n` rows of `k` predictors (row-major) and the response.
struct Set {
    name: String,
    x: Vec<f64>,
    y: Vec<f64>,
    n: usize,
    k: usize,
}

/// A standard normal from the stream `state` (Box–Muller, one of the pair).
fn normal(state: &mut u64) -> f64 {
    let u = (splitmix::next(state) >> 11) as f64 / (1u64 << 53) as f64;
    let v = (splitmix::next(state) >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The simulated 38 x 10 set of the module documentation.
fn simulated() -> Set {
    let (n, k) = (38, 10);
    let mut state = 2026;
    let mut x = Vec::with_capacity(n * k);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let row: Vec<f64> = (0..k).map(|_| normal(&mut state)).collect();
        let shift = if i % 5 == 0 { 20.0 } else { 0.0 };
        y.push(1.0 + row.iter().sum::<f64>() + normal(&mut state) + shift);
        x.extend(row);
    }
    Set {
        name: "simulated-38x10".into(),
        x,
        y,
        n,
        k,
    }
}

/// Writes the simulated set as CSV (`x1, ..., x10, y`) for the R peer.
fn write_csv(dir: &str, set: &Set) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(format!("{dir}/{}.csv", set.name))?);
    let names: Vec<String> = (1..=set.k).map(|j| format!("x{j}")).collect();
    writeln!(out, "{},y", names.join(","))?;
    for i in 0..set.n {
        let row: Vec<String> = set.x[i * set.k..(i + 1) * set.k]
            .iter()
            .map(|v| format!("{v:e}"))
            .collect();
        writeln!(out, "{},{:e}", row.join(","), set.y[i])?;
    }
    out.flush()
}

fn main() {
    let opts = parse_options();
    let mut sets: Vec<Set> = robust::cases()
        .into_iter()
        .map(|c| Set {
            name: c.name,
            x: c.x,
            y: c.y,
            n: c.n,
            k: c.k,
        })
        .collect();
    sets.push(simulated());
    if let Some(dir) = &opts.write_data {
        if let Err(e) = write_csv(dir, sets.last().expect("the simulated set")) {
            eprintln!("writing {dir}: {e}");
            std::process::exit(1);
        }
    }
    println!(
        "{:<16} {:>4} {:>3} {:>4} {:<17} {:>9} {:>16}   starts / refinement / rest ms",
        "set", "n", "p", "h", "coverage", "median ms", "objective"
    );
    let mut results = Vec::new();
    let mut failed = false;
    let chosen = |set: &Set| {
        opts.sets
            .as_ref()
            .is_none_or(|names| names.contains(&set.name))
    };
    for set in sets.iter().filter(|s| chosen(s)) {
        for (label, coverage) in [
            ("median", LmsCoverage::Median),
            ("highest_breakdown", LmsCoverage::HighestBreakdown),
        ] {
            let lms = Lms::new().coverage(coverage);
            let mut times = Vec::with_capacity(opts.reps);
            let mut stage_times = Vec::with_capacity(opts.reps);
            let mut breakdowns = Vec::with_capacity(opts.reps);
            let mut last = None;
            for _ in 0..opts.reps {
                let clock = StageClock::start();
                let fit = lms
                    .clone()
                    .progress(clock.callback())
                    .fit(Matrix::new(&set.x, set.n, set.k), &set.y);
                let (total, stage_seconds) = clock.stop();
                times.push(total);
                stage_times.push(stage_seconds);
                breakdowns.push(clock.breakdown());
                last = Some(fit);
            }
            let fit = match last.expect("at least one rep") {
                Ok(fit) => fit,
                Err(e) => {
                    eprintln!("{} ({label}): {e}", set.name);
                    failed = true;
                    continue;
                }
            };
            let ms = median(times) * 1e3;
            let stage_ms = stages::medians(&stage_times).map(|s| s * 1e3);
            println!(
                "{:<16} {:>4} {:>3} {:>4} {:<17} {:>9.3} {:>16.10}   {:.3} / {:.3} / {:.3}",
                set.name,
                set.n,
                fit.p,
                fit.h,
                label,
                ms,
                fit.objective,
                stage_ms[0],
                stage_ms[1],
                stage_ms[2]
            );
            results.push(serde_json::json!({
                "set": set.name,
                "n": set.n,
                "p": fit.p,
                "h": fit.h,
                "coverage": label,
                "median_ms": ms,
                "stage_ms": stage_ms,
                "breakdown_seconds": stages::breakdown_medians(&breakdowns),
                "objective": fit.objective,
                "starts": fit.starts,
                "exhaustive": fit.exhaustive,
            }));
        }
    }
    report::finish(opts.json.as_deref(), failed, || {
        let threads = rayon::current_num_threads();
        (
            serde_json::json!({
                "bench": "lms_classic",
                "device": "cpu",
                "threads": threads,
                "reps": opts.reps,
            }),
            results,
        )
    });
}
