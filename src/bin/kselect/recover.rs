//! `kselect recover`: a k-sparse signal recovered from its measurements `y = A x`, the
//! operator read from a `.npy` matrix or drawn from a random ensemble; one problem, or a batch
//! of problems with the same operator or each with its own. The report, its JSON, and the exit
//! status of a solver that stopped without converging.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use kselect::io::npy::{write_npy, write_npy_matrix};
use kselect::io::{Column, FileFormat};
use kselect::recovery::{
    Algorithm, DenseMatrix, DeviceOperator, Ensemble, Operator, Real, Recovery, Solver, StopReason,
};
use kselect::{Device, Error, RecoveryError, Result};
use serde::{Serialize, Serializer};

use crate::cli::{Backend, Operators, RecoverArgs};
use crate::open;
use crate::output::{aligned, json_line, nums, Num, RunFields};
use crate::output_files::{write_replacing, FileKind};
use crate::table::ToF64;

/// The exit status of a run in which a solver stopped without converging.
pub const NOT_CONVERGED: u8 = 3;

/// The problems of a batch the report lists one by one; of a larger batch it lists only those
/// that did not converge, at most this many.
const LISTED: usize = 20;

/// The device `--backend` names for recovery: `auto` is CUDA device 0 when a GPU is usable
/// and the CPU otherwise, `cpu` the CPU, `cuda` CUDA device 0 (an error without a usable GPU).
pub fn device(backend: Backend) -> Result<Device> {
    Ok(match backend {
        Backend::Auto => Device::auto(),
        Backend::Cpu => Device::Cpu,
        Backend::Cuda => Device::cuda(0)?,
    })
}

/// The values of a file, in the type they are solved in.
enum Values {
    /// A `.npy` array of `f4`.
    F32(Vec<f32>),
    /// A `.npy` array of `f8`, or of integers (converted).
    F64(Vec<f64>),
}

impl Values {
    /// The values as `f64` (exactly: every `f32` is an `f64`).
    fn into_f64(self) -> Vec<f64> {
        match self {
            Values::F32(values) => values.into_iter().map(f64::from).collect(),
            Values::F64(values) => values,
        }
    }
}

/// A `.npy` array read: its name, its shape and its values.
struct Array {
    /// The file, or `<stdin>`.
    name: PathBuf,
    /// `[len]` or `[rows, cols]`.
    shape: Vec<usize>,
    values: Values,
}

impl Array {
    /// Reads `file` (`-`: standard input), the array of `option`: 1-D, or 2-D in C or Fortran
    /// order.
    fn read(file: &Path, option: &str) -> Result<Array> {
        let source = open::open(file)?;
        let name = source.name().to_path_buf();
        if source.format() != FileFormat::Npy {
            return Err(Error::Format {
                path: name,
                message: format!(
                    "not a NumPy .npy array (its name does not end in .npy and it does not \
                     start as one): {option} reads a .npy file"
                ),
            });
        }
        let array = source.read_npy_array_any_order()?;
        let values = match array.values {
            Column::F32(values) => Values::F32(values),
            Column::F64(values) => Values::F64(values),
            other => Values::F64(other.visit(ToF64)),
        };
        Ok(Array {
            name,
            shape: array.shape,
            values,
        })
    }
}

/// Where the operator comes from.
enum Source {
    /// A `.npy` matrix, by its name.
    Matrix(String),
    /// An ensemble and the seed it was drawn from.
    Ensemble(Ensemble, u64),
}

/// One problem's result, as it is reported.
struct Solved {
    stop: StopReason,
    iterations: usize,
    /// `|y - A x|` at the start and after each iteration.
    residuals: Vec<f64>,
    /// `|y|`.
    norm_y: f64,
    /// The indices kept, ascending.
    support: Vec<usize>,
    /// The solution's entries on the support.
    values: Vec<Num>,
}

impl Solved {
    /// The final `|y - A x|`.
    fn residual(&self) -> f64 {
        self.residuals.last().copied().unwrap_or(self.norm_y)
    }

    /// The final `|y - A x| / |y|` (0 for `y = 0`, which the zero signal solves exactly).
    fn relative_residual(&self) -> f64 {
        if self.norm_y > 0.0 {
            self.residual() / self.norm_y
        } else {
            0.0
        }
    }
}

/// What was solved and found.
pub struct Outcome {
    /// The measurements' file.
    y: String,
    operator: Source,
    m: usize,
    n: usize,
    k: usize,
    /// `f32` or `f64`: the type the problems were solved in.
    dtype: &'static str,
    algorithm: Algorithm,
    tolerance: f64,
    max_iterations: usize,
    /// `None` for one problem (a 1-D `--y`); the number of problems of a 2-D `--y`.
    batch: Option<usize>,
    /// Whether each problem has its own operator.
    each: bool,
    solved: Vec<Solved>,
    /// Wall time of the solves alone.
    seconds: f64,
}

impl Outcome {
    /// Whether every problem converged.
    pub fn converged(&self) -> bool {
        self.solved.iter().all(|p| p.stop.is_success())
    }

    /// The exit status: 0 when every problem converged, [`NOT_CONVERGED`] otherwise.
    pub fn status(&self) -> u8 {
        if self.converged() {
            0
        } else {
            NOT_CONVERGED
        }
    }

    /// The warning for standard error when a solver stopped without converging.
    pub fn warning(&self) -> Option<String> {
        if self.converged() {
            return None;
        }
        Some(match self.batch {
            None => {
                let p = &self.solved[0];
                format!(
                    "the solver stopped without converging ({} after {}, |y - A x| / |y| = \
                     {}): the solution is its last iterate, not a converged one",
                    p.stop,
                    iterations(p.iterations),
                    scientific(p.relative_residual())
                )
            }
            Some(problems) => {
                let failed = self.solved.iter().filter(|p| !p.stop.is_success()).count();
                let stops = stop_counts(&self.solved);
                let reasons: Vec<String> = stops
                    .iter()
                    .filter(|(stop, _)| !stop.is_success())
                    .map(|(stop, count)| format!("{count} {stop}"))
                    .collect();
                format!(
                    "{failed} of {problems} problems stopped without converging ({}): their \
                     solutions are the last iterates, not converged ones",
                    reasons.join(", ")
                )
            }
        })
    }
}

/// The problem as read, before the element type is chosen.
struct Setup<'a> {
    args: &'a RecoverArgs,
    device: &'a Device,
    y: PathBuf,
    /// The matrix file, with `--matrix`.
    matrix: Option<PathBuf>,
    m: usize,
    n: usize,
    batch: Option<usize>,
    /// Whether each problem has its own operator (a 3-D `--matrix`, or `--operators each`).
    each: bool,
}

/// Reads the files, draws or builds the operator, solves on `device`, and writes `--out`.
pub fn run(args: &RecoverArgs, device: &Device) -> Result<Outcome> {
    let matrix = args
        .matrix
        .as_deref()
        .map(|file| Array::read(file, "--matrix"))
        .transpose()?;
    let y = Array::read(&args.y, "--y")?;
    let (batch, m) = match y.shape[..] {
        [m] => (None, m),
        [problems, m] => (Some(problems), m),
        _ => {
            return Err(Error::Format {
                path: y.name,
                message: format!(
                    "an array of shape {:?}: the measurements are a 1-D array of m values or a \
                     2-D array of B problems of m values",
                    y.shape
                ),
            })
        }
    };
    if m == 0 || batch == Some(0) {
        return Err(Error::Format {
            path: y.name,
            message: "no measurements: the array is empty".into(),
        });
    }
    let (rows, n, stacked) = match (&matrix, args.m, args.n) {
        (Some(a), _, _) => match a.shape[..] {
            [rows, cols] => (rows, cols, None),
            [count, rows, cols] => (rows, cols, Some(count)),
            _ => {
                return Err(Error::Format {
                    path: a.name.clone(),
                    message: format!(
                        "{}: the measurement matrix is a 2-D array of m rows and n columns, or \
                         a 3-D array of B such matrices",
                        match a.shape[..] {
                            [len] => format!("a 1-D array of {len} values"),
                            _ => format!("an array of shape {:?}", a.shape),
                        }
                    ),
                })
            }
        },
        (None, Some(m), Some(n)) => (m, n, None),
        (None, _, _) => {
            return Err(Error::InvalidArgument(
                "--ensemble needs the operator's size: --n and --m".into(),
            ))
        }
    };
    if rows != m {
        let length = match batch {
            None => format!("{m} measurements"),
            Some(_) => format!("problems of {m} measurements"),
        };
        return Err(Error::InvalidArgument(match &matrix {
            Some(a) => format!(
                "--y {} holds {length}, but --matrix {} has {rows} rows: y needs one measurement \
                 for each row of A",
                y.name.display(),
                a.name.display()
            ),
            None => format!(
                "--y {} holds {length}, but --m is {rows}: y needs one measurement for each row \
                 of A",
                y.name.display()
            ),
        }));
    }
    if args.k > n {
        return Err(RecoveryError::Sparsity { k: args.k, n }.into());
    }
    let each = one_operator_each(args, stacked, batch, &y.name)?;
    let setup = Setup {
        args,
        device,
        y: y.name,
        matrix: matrix.as_ref().map(|a| a.name.clone()),
        m,
        n,
        batch,
        each,
    };
    match (y.values, matrix.map(|a| a.values)) {
        (Values::F32(ys), None) => solve::<f32>(&setup, ys, None),
        (Values::F32(ys), Some(Values::F32(a))) => solve::<f32>(&setup, ys, Some(a)),
        (ys, a) => solve::<f64>(&setup, ys.into_f64(), a.map(Values::into_f64)),
    }
}

/// Whether each problem has its own operator: a 3-D `--matrix` of `stacked` matrices (one for
/// each problem of `--y`), or `--operators each` with a batch; errors where the two disagree.
fn one_operator_each(
    args: &RecoverArgs,
    stacked: Option<usize>,
    batch: Option<usize>,
    y: &Path,
) -> Result<bool> {
    match (stacked, args.operators, batch) {
        (Some(_), Some(Operators::Shared), _) => Err(Error::InvalidArgument(
            "--operators shared takes a 2-D --matrix: a 3-D one is a matrix for each problem"
                .into(),
        )),
        (Some(count), _, problems) if problems != Some(count) => {
            Err(Error::InvalidArgument(format!(
                "--matrix holds {count} matrices, but --y {} holds {}: one problem (a row of a \
                 2-D --y) for each matrix",
                y.display(),
                match problems {
                    None => "one problem (a 1-D array)".to_string(),
                    Some(p) => format!("{p} problems"),
                }
            )))
        }
        (Some(_), _, _) => Ok(true),
        (None, Some(Operators::Each), None) => Err(Error::InvalidArgument(format!(
            "--operators each draws an operator for each problem, but --y {} holds one (a 1-D \
             array): give a 2-D --y of B problems",
            y.display()
        ))),
        (None, Some(Operators::Each), Some(_)) if args.matrix.is_some() => {
            Err(Error::InvalidArgument(
                "--operators each takes --ensemble, or a 3-D --matrix of a matrix for each \
                 problem: this --matrix is one matrix"
                    .into(),
            ))
        }
        (None, operators, _) => Ok(operators == Some(Operators::Each)),
    }
}

/// The operators of the problems: one, or one each (`count`), from the entries of `--matrix`
/// (row-major, one matrix after another) or drawn from the ensemble; and their source.
fn operators<T: Real>(
    setup: &Setup<'_>,
    matrix: Option<Vec<T>>,
    count: usize,
) -> Result<(Vec<Operator<T>>, Source)> {
    use rayon::prelude::*;
    let (args, m, n) = (setup.args, setup.m, setup.n);
    match (matrix, &setup.matrix, args.ensemble) {
        (Some(data), Some(name), _) => {
            if m * n == 0 {
                let empty = RecoveryError::EmptyOperator {
                    what: "a measurement matrix",
                    m,
                    n,
                };
                return Err(open::naming(empty.into(), name));
            }
            let ops = data
                .chunks(m * n)
                .map(|a| Ok(Operator::Dense(DenseMatrix::new(a.to_vec(), m, n)?)))
                .collect::<Result<_>>()
                .map_err(|e| open::naming(e, name))?;
            Ok((ops, Source::Matrix(name.display().to_string())))
        }
        (None, _, Some(ensemble)) => {
            let seed = args.seed.unwrap_or(1);
            let ops = (0..count as u64)
                .into_par_iter()
                .map(|p| ensemble.generate::<T>(m, n, seed.wrapping_add(p)))
                .collect::<Result<_>>()?;
            Ok((ops, Source::Ensemble(ensemble, seed)))
        }
        _ => Err(Error::InvalidArgument(
            "give the operator: --matrix, or --ensemble with --n and --m".into(),
        )),
    }
}

/// Solves the problems in `T` arithmetic: `ys` the measurements, `matrix` the entries of A
/// (row-major; one matrix after another for one each) or `None` for an ensemble.
fn solve<T: Real>(setup: &Setup<'_>, ys: Vec<T>, matrix: Option<Vec<T>>) -> Result<Outcome> {
    let (args, m, n) = (setup.args, setup.m, setup.n);
    check_finite(&ys, m, setup.batch.is_some(), &setup.y)?;
    let count = match (setup.each, setup.batch) {
        (true, Some(problems)) => problems,
        _ => 1,
    };
    let (ops, source) = operators(setup, matrix, count)?;
    let mut solver = Solver::new(args.algorithm, args.k);
    if let Some(tol) = args.tol {
        solver = solver.tolerance(tol);
    }
    if let Some(iterations) = args.max_iter {
        solver = solver.max_iterations(iterations);
    }
    let start = Instant::now();
    let found: Vec<Recovery<T>> = match (setup.device, setup.batch) {
        (Device::Cpu, None) => vec![solver.solve(&ops[0], &ys)?],
        (Device::Cpu, Some(_)) if setup.each => solver.solve_each(&ops, &ys)?,
        (Device::Cpu, Some(_)) => solver.solve_many(&ops[0], &ys)?,
        (Device::Cuda(_), batch) => {
            // The operators' copy to the device counts in the time.
            let on_device = DeviceOperator::upload_each(&ops, setup.device)?;
            match batch {
                None => vec![solver.solve_on(&on_device, &ys)?],
                Some(_) => solver.solve_many_on(&on_device, &ys)?,
            }
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    if let Some(out) = &args.out {
        let solutions: Vec<T> = found
            .iter()
            .flat_map(|r| r.solution.iter().copied())
            .collect();
        write_replacing(out, FileKind::Array, |path| match setup.batch {
            None => write_npy(path, &solutions),
            Some(problems) => write_npy_matrix(path, &solutions, problems, n),
        })?;
    }
    let solved = found
        .into_iter()
        .zip(ys.chunks(m))
        .map(|(r, y)| Solved {
            values: r.support.iter().map(|&i| Num::of(r.solution[i])).collect(),
            stop: r.stop,
            iterations: r.iterations,
            residuals: r.residuals,
            norm_y: norm(y),
            support: r.support,
        })
        .collect();
    Ok(Outcome {
        y: setup.y.display().to_string(),
        operator: source,
        m,
        n,
        k: args.k,
        dtype: T::DTYPE.name(),
        algorithm: args.algorithm,
        tolerance: solver.tolerance_for::<T>(),
        max_iterations: solver.iteration_limit(),
        batch: setup.batch,
        each: setup.each,
        solved,
        seconds,
    })
}

/// The Euclidean norm of `y`, in `f64`, scaled against overflow.
fn norm<T: Real>(y: &[T]) -> f64 {
    let largest = y.iter().map(|v| v.as_f64().abs()).fold(0.0, f64::max);
    if largest == 0.0 {
        return 0.0;
    }
    largest
        * y.iter()
            .map(|v| (v.as_f64() / largest).powi(2))
            .sum::<f64>()
            .sqrt()
}

/// An error naming the first measurement of `ys` (problems of `m` values) that is NaN or
/// infinite.
fn check_finite<T: Real>(ys: &[T], m: usize, batch: bool, file: &Path) -> Result<()> {
    match ys.iter().position(|v| !v.as_f64().is_finite()) {
        None => Ok(()),
        Some(at) => Err(Error::Format {
            path: file.to_path_buf(),
            message: format!(
                "measurement {}{} is {}: every measurement must be finite",
                at % m,
                if batch {
                    format!(" of problem {}", at / m)
                } else {
                    String::new()
                },
                Num::of(ys[at]).text()
            ),
        }),
    }
}

/// How many problems stopped for each reason: converged first, then the others in the order
/// they first occur.
fn stop_counts(solved: &[Solved]) -> Vec<(StopReason, usize)> {
    let mut counts: Vec<(StopReason, usize)> = Vec::new();
    for p in solved {
        match counts.iter_mut().find(|(stop, _)| *stop == p.stop) {
            Some((_, count)) => *count += 1,
            None => counts.push((p.stop, 1)),
        }
    }
    counts.sort_by_key(|(stop, _)| !stop.is_success());
    counts
}

/// `n iteration(s)`.
fn iterations(n: usize) -> String {
    format!("{n} iteration{}", if n == 1 { "" } else { "s" })
}

/// A ratio in scientific notation with three significant digits.
fn scientific(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{x:.2e}")
    }
}

/// The JSON fields of one problem.
#[derive(Serialize)]
struct ProblemFields<'a> {
    stop: &'a str,
    converged: bool,
    iterations: usize,
    residual: Num,
    relative_residual: Num,
    residuals: Vec<Num>,
    support: &'a [usize],
    values: &'a [Num],
}

impl<'a> ProblemFields<'a> {
    fn new(p: &'a Solved) -> ProblemFields<'a> {
        ProblemFields {
            stop: p.stop.name(),
            converged: p.stop.is_success(),
            iterations: p.iterations,
            residual: Num::of_f64(p.residual()),
            relative_residual: Num::of_f64(p.relative_residual()),
            residuals: nums(&p.residuals),
            support: &p.support,
            values: &p.values,
        }
    }
}

/// How many problems stopped for each reason, as a JSON object in [`stop_counts`]' order.
struct StopCounts(Vec<(StopReason, usize)>);

impl Serialize for StopCounts {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(stop, count)| (stop.name(), count)))
    }
}

/// The fields of a batch of problems.
#[derive(Serialize)]
struct BatchFields<'a> {
    problems: usize,
    converged: bool,
    stops: StopCounts,
    results: Vec<ProblemFields<'a>>,
}

/// The one JSON object of `--json` (see its help).
pub fn json(out: &Outcome, device: &Device, file: Option<&Path>) -> Result<String> {
    #[derive(Serialize)]
    struct Recovery<'a> {
        y: &'a str,
        matrix: Option<&'a str>,
        ensemble: Option<String>,
        seed: Option<u64>,
        operators: &'a str,
        m: usize,
        n: usize,
        k: usize,
        dtype: &'a str,
        algorithm: &'a str,
        tolerance: Num,
        max_iterations: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        out: Option<String>,
        #[serde(flatten)]
        one: Option<ProblemFields<'a>>,
        #[serde(flatten)]
        batch: Option<BatchFields<'a>>,
        #[serde(flatten)]
        run: RunFields,
    }

    let (matrix, ensemble, seed) = match &out.operator {
        Source::Matrix(name) => (Some(name.as_str()), None, None),
        Source::Ensemble(ensemble, seed) => (None, Some(ensemble.to_string()), Some(*seed)),
    };
    json_line(&Recovery {
        y: &out.y,
        matrix,
        ensemble,
        seed,
        operators: if out.each { "each" } else { "shared" },
        m: out.m,
        n: out.n,
        k: out.k,
        dtype: out.dtype,
        algorithm: out.algorithm.name(),
        tolerance: Num::of_f64(out.tolerance),
        max_iterations: out.max_iterations,
        out: file.map(|f| f.display().to_string()),
        one: out
            .batch
            .is_none()
            .then(|| ProblemFields::new(&out.solved[0])),
        batch: out.batch.map(|problems| BatchFields {
            problems,
            converged: out.converged(),
            stops: StopCounts(stop_counts(&out.solved)),
            results: out.solved.iter().map(ProblemFields::new).collect(),
        }),
        run: RunFields::new(device, out.seconds),
    })
}

/// The readable report.
pub fn report(out: &Outcome, device: &Device, file: Option<&Path>) -> String {
    let mut s = String::new();
    let (m, n, dtype) = (out.m, out.n, out.dtype);
    let operator = match (&out.operator, out.each.then_some(out.solved.len())) {
        (Source::Matrix(name), None) => format!("{name} ({m} x {n} matrix, {dtype})"),
        (Source::Matrix(name), Some(count)) => {
            format!("{name} ({count} matrices of {m} x {n}, one a problem, {dtype})")
        }
        (Source::Ensemble(ensemble, seed), None) => {
            format!("{ensemble} ensemble, seed {seed} ({m} x {n}, {dtype})")
        }
        (Source::Ensemble(ensemble, seed), Some(count)) => format!(
            "{ensemble} ensemble, one operator a problem, seeds {seed} to {} ({m} x {n}, {dtype})",
            seed.wrapping_add(count as u64 - 1)
        ),
    };
    let _ = writeln!(s, "operator:   {operator}");
    let measured = match out.batch {
        None => format!("{} ({m} measurements)", out.y),
        Some(problems) => format!("{} ({problems} problems of {m} measurements)", out.y),
    };
    let _ = writeln!(s, "y:          {measured}");
    let _ = writeln!(
        s,
        "algorithm:  {}, k = {} (tolerance {} relative to |y|, at most {})",
        out.algorithm,
        out.k,
        Num::of_f64(out.tolerance).text(),
        iterations(out.max_iterations)
    );
    match out.batch {
        None => {
            let p = &out.solved[0];
            let note = if p.stop.is_success() {
                ""
            } else {
                " (not converged)"
            };
            let _ = writeln!(
                s,
                "stopped:    {} after {}{note}",
                p.stop,
                iterations(p.iterations)
            );
            let _ = writeln!(
                s,
                "residual:   |y - A x| / |y| = {}",
                scientific(p.relative_residual())
            );
            let entries = p.support.len();
            let plural = if entries == 1 { "entry" } else { "entries" };
            let _ = writeln!(s, "support:    {entries} {plural}");
        }
        Some(problems) => {
            let stops: Vec<String> = stop_counts(&out.solved)
                .iter()
                .map(|(stop, count)| format!("{count} {stop}"))
                .collect();
            let _ = writeln!(s, "stops:      {}", stops.join(", "));
            let listed: Vec<(usize, &Solved)> = if problems <= LISTED {
                out.solved.iter().enumerate().collect()
            } else {
                out.solved
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| !p.stop.is_success())
                    .take(LISTED)
                    .collect()
            };
            if problems > LISTED && !listed.is_empty() {
                let _ = writeln!(
                    s,
                    "not converged (the first {} of them; --json lists every problem):",
                    listed.len()
                );
            }
            if !listed.is_empty() {
                let rows: Vec<Vec<String>> = listed
                    .iter()
                    .map(|(i, p)| {
                        vec![
                            i.to_string(),
                            p.stop.to_string(),
                            p.iterations.to_string(),
                            scientific(p.relative_residual()),
                            p.support.len().to_string(),
                        ]
                    })
                    .collect();
                aligned(
                    &mut s,
                    &[
                        "problem",
                        "stop",
                        "iterations",
                        "|y - A x| / |y|",
                        "support",
                    ],
                    &rows,
                );
            }
        }
    }
    if let Some(file) = file {
        let shape = match out.batch {
            None => format!("{n} values"),
            Some(problems) => format!("{problems} x {n}"),
        };
        let _ = writeln!(s, "solution:   {} ({dtype}, {shape})", file.display());
    }
    let _ = writeln!(
        s,
        "backend:    {}, {:.6} s",
        device.description(),
        out.seconds
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solved(stop: StopReason) -> Solved {
        Solved {
            stop,
            iterations: 3,
            residuals: vec![2.0, 1.0, 0.5, 0.25],
            norm_y: 2.0,
            support: vec![1, 4],
            values: vec![Num::of_f64(1.5), Num::of_f64(-2.0)],
        }
    }

    #[test]
    fn stops_are_counted_converged_first() {
        let all = [
            solved(StopReason::MaxIterations),
            solved(StopReason::Converged),
            solved(StopReason::NoProgress),
            solved(StopReason::MaxIterations),
        ];
        assert_eq!(
            stop_counts(&all),
            vec![
                (StopReason::Converged, 1),
                (StopReason::MaxIterations, 2),
                (StopReason::NoProgress, 1)
            ]
        );
    }

    #[test]
    fn residuals_are_relative_to_y() {
        let p = solved(StopReason::MaxIterations);
        assert_eq!((p.residual(), p.relative_residual()), (0.25, 0.125));
        let zero = Solved {
            norm_y: 0.0,
            residuals: vec![0.0],
            ..solved(StopReason::Converged)
        };
        assert_eq!(zero.relative_residual(), 0.0);
        assert_eq!(norm(&[3.0f64, 4.0]), 5.0);
        assert_eq!(norm(&[3e300f64, 4e300]), 5e300);
        assert_eq!(norm::<f32>(&[0.0, 0.0]), 0.0);
        assert_eq!(scientific(0.000123456), "1.23e-4");
        assert_eq!(iterations(1), "1 iteration");
    }

    #[test]
    fn the_backends_name_their_devices() {
        assert!(matches!(device(Backend::Cpu), Ok(Device::Cpu)));
        match device(Backend::Cuda) {
            Ok(d) => assert_eq!(d.backend_name(), "cuda"),
            Err(e) => assert!(e.to_string().contains("CUDA"), "{e}"),
        }
        let auto = device(Backend::Auto).unwrap();
        assert_eq!(auto.backend_name(), Device::auto().backend_name());
    }
}
