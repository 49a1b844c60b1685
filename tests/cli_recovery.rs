//! `kselect recover` and `kselect phase-transition` end to end. `recover`: signals recovered
//! well inside the recovery region (n = 256, m = 128, k = 10) by NIHT and HTP from an ensemble
//! and from a `.npy` matrix in C and Fortran order, in f32 and f64, the solution read back from
//! `--out` against the true signal; the JSON's fields; a batch of three; a solver stopped
//! before converging (exit status 3, `--out` still written); every user error. The inputs are
//! drawn with the library (the same ensembles and seeds the command draws from) and written
//! with its `.npy` writer. `phase-transition`: a tiny grid written as JSON, PNG and SVG, and
//! grids refused.

#[macro_use]
mod common;

use std::path::Path;
use std::process::Output;

use common::cli::{
    f64s, kselect, kselect_fails, names_in, npy_matrix, npy_vector, npy_with_header, path, stderr,
    stdout, u64s, words_of_lines,
};
use common::recovery::measure;
use kselect::io::npy::read_npy_array;
use kselect::io::Column;
use kselect::recovery::{sparse_signal, DenseMatrix, Ensemble, Operator, Real, SignalKind};
use serde_json::Value;

/// The signal's length, the measurements and the nonzeros: well inside the region where NIHT
/// and HTP recover every signal.
const N: usize = 256;
const M: usize = 128;
const K: usize = 10;

/// The seed of the Gaussian operator of the tests.
const SEED: u64 = 5;

/// The Gaussian operator of the tests, as `kselect recover --ensemble gaussian --seed 5` draws
/// it.
fn operator<T: Real>() -> Operator<T> {
    Ensemble::Gaussian.generate::<T>(M, N, SEED).unwrap()
}

/// A signal of `N` entries with `K` Gaussian nonzeros, drawn from `seed`.
fn signal<T: Real>(seed: u64) -> Vec<T> {
    sparse_signal::<T>(N, K, SignalKind::Gaussian, seed).unwrap()
}

/// The entries of a dense operator, row-major.
fn entries<T: Real>(a: &Operator<T>) -> Vec<T> {
    match a {
        Operator::Dense(matrix) => matrix.as_slice().to_vec(),
        other => panic!("a Gaussian operator is dense, not {other:?}"),
    }
}

/// Writes `values` as a 1-D `.npy` file `name` in `dir`; returns its path as text.
fn vector<T: Real>(dir: &tempfile::TempDir, name: &str, values: &[T]) -> String {
    npy_vector(dir, name, values).display().to_string()
}

/// Writes `values` (row-major) as a `rows x cols` `.npy` file in C order.
fn matrix<T: Real>(
    dir: &tempfile::TempDir,
    name: &str,
    values: &[T],
    rows: usize,
    cols: usize,
) -> String {
    npy_matrix(dir, name, values, rows, cols)
        .display()
        .to_string()
}

/// Writes an `f8` `.npy` file `name` in `dir`: in `fortran_order` (`True` or `False`), of
/// `shape` (`2, 3` for 2 x 3), holding `values` in the order given; returns its path as text.
fn f8_npy(
    dir: &tempfile::TempDir,
    name: &str,
    fortran_order: &str,
    shape: &str,
    values: impl IntoIterator<Item = f64>,
) -> String {
    let header =
        format!("{{'descr': '<f8', 'fortran_order': {fortran_order}, 'shape': ({shape}), }}");
    let mut bytes = npy_with_header(&header);
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let p = path(dir, name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

/// Writes `values` (row-major) as a `rows x cols` `f8` `.npy` file in Fortran order, as
/// `numpy.save` writes `numpy.asfortranarray(a)`: the values column after column.
fn fortran_matrix(
    dir: &tempfile::TempDir,
    name: &str,
    values: &[f64],
    rows: usize,
    cols: usize,
) -> String {
    let column_after_column = (0..cols).flat_map(|j| (0..rows).map(move |i| values[i * cols + j]));
    f8_npy(
        dir,
        name,
        "True",
        &format!("{rows}, {cols}"),
        column_after_column,
    )
}

/// The values of a `.npy` file as `f64`, with its shape and its dtype's name.
fn read_back(file: &str) -> (Vec<usize>, Vec<f64>, &'static str) {
    let array = read_npy_array(file).unwrap();
    let (values, dtype) = match array.values {
        Column::F32(v) => (v.into_iter().map(f64::from).collect(), "f32"),
        Column::F64(v) => (v, "f64"),
        other => panic!("a solution of floats, not {other:?}"),
    };
    (array.shape, values, dtype)
}

/// The largest `|a - b|`.
fn largest_error<T: Real>(a: &[f64], b: &[T]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(a, b)| (a - b.as_f64()).abs())
        .fold(0.0, f64::max)
}

/// The indices of the nonzeros of `x`.
fn support<T: Real>(x: &[T]) -> Vec<u64> {
    (0..x.len() as u64)
        .filter(|&i| x[i as usize] != T::of(0.0))
        .collect()
}

/// Runs `kselect recover ARGS`, checks exit status 0 and a quiet stderr, returns stdout.
fn recover(args: &[&str]) -> String {
    let out = run("recover", args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "kselect recover {args:?}: {}",
        stderr(&out)
    );
    assert!(out.stderr.is_empty(), "nothing on stderr: {}", stderr(&out));
    stdout(&out)
}

/// Runs `kselect recover --json ARGS` to exit status 0 and returns its one JSON object.
fn recover_json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    parse_one(&recover(&all))
}

/// The one JSON object of one line.
fn parse_one(text: &str) -> Value {
    assert_eq!(
        text.lines().count(),
        1,
        "one JSON object on one line: {text}"
    );
    serde_json::from_str(text).unwrap_or_else(|e| panic!("invalid JSON ({e}): {text}"))
}

/// Runs `kselect COMMAND ARGS`.
fn run(command: &str, args: &[&str]) -> Output {
    let mut all = vec![command];
    all.extend_from_slice(args);
    kselect(&all)
}

/// Runs `kselect COMMAND ARGS`, expects exit status `code`, one error message on stderr and
/// nothing on stdout; returns stderr.
fn fails(command: &str, args: &[&str], code: i32) -> String {
    let mut all = vec![command];
    all.extend_from_slice(args);
    kselect_fails(&all, code)
}

/// Asserts that each result of the JSON's `results` found the support of its signal.
fn assert_supports(json: &Value, signals: &[Vec<f64>], context: &str) {
    for (result, x) in json["results"].as_array().unwrap().iter().zip(signals) {
        assert_eq!(u64s(&result["support"]), support(x), "{context}");
    }
}

/// Reads the solutions of the `.npy` file `out` back, asserts that each row is within 1e-6
/// of its signal, and returns the file's shape.
fn assert_solutions(out: &str, signals: &[Vec<f64>], context: &str) -> Vec<usize> {
    let (shape, solutions, _) = read_back(out);
    for (row, x) in solutions.chunks(N).zip(signals) {
        assert!(largest_error(row, x) < 1e-6, "{context}");
    }
    shape
}

/// Whether `output`, of a run with `--backend cuda`, is the one clear error (exit status 1)
/// of a machine without a usable GPU.
fn no_usable_gpu(output: &Output) -> bool {
    if output.status.code() != Some(1) {
        return false;
    }
    let err = stderr(output);
    assert!(err.starts_with("error: ") && err.contains("CUDA"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    true
}

/// Three broken copies of the `.npy` file `from`, named `cut{suffix}`, `huge{suffix}` and
/// `junk{suffix}` in `dir`: the last value cut in half, a header of shape
/// `(1000000000000, {rest})` promising far more than the file holds, and junk. Their paths as
/// text.
fn broken_copies(dir: &tempfile::TempDir, suffix: &str, from: &str, rest: &str) -> [String; 3] {
    let bytes = std::fs::read(from).unwrap();
    let cut = path(dir, &format!("cut{suffix}"));
    std::fs::write(&cut, &bytes[..bytes.len() - 4]).unwrap();
    let huge = path(dir, &format!("huge{suffix}"));
    let header =
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, {rest}), }}");
    std::fs::write(&huge, npy_with_header(&header)).unwrap();
    let junk = path(dir, &format!("junk{suffix}"));
    std::fs::write(&junk, b"\x93NUMPY\x01\x00\xff\xff garbage").unwrap();
    [cut, huge, junk].map(|p| p.display().to_string())
}

/// The options of the tests' Gaussian ensemble.
fn ensemble_args() -> Vec<String> {
    [
        "--ensemble",
        "gaussian",
        "--n",
        &N.to_string(),
        "--m",
        &M.to_string(),
        "--seed",
        &SEED.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// The signal of `seed` measured by the operator of the tests, in `f64`, with its files in
/// `dir`: `y.npy`, the measurements, and `a.npy`, the operator's matrix in C order. The
/// operator, the signal and the two files' paths.
fn matrix_problem(dir: &tempfile::TempDir, seed: u64) -> (Operator<f64>, Vec<f64>, String, String) {
    let a = operator::<f64>();
    let x = signal::<f64>(seed);
    let y = vector(dir, "y.npy", &measure(&a, &x));
    let c = matrix(dir, "a.npy", &entries(&a), M, N);
    (a, x, y, c)
}

/// The signals of seeds `first`, `first + 1` and `first + 2` measured by the operator of the
/// tests, in `f64`: the signals, their measurements one after the other, and the path of
/// `ys.npy` in `dir`, the measurements as a `3 x M` matrix.
fn three_problems(dir: &tempfile::TempDir, first: u64) -> (Vec<Vec<f64>>, Vec<f64>, String) {
    let a = operator::<f64>();
    let signals: Vec<Vec<f64>> = (first..first + 3).map(signal::<f64>).collect();
    let ys: Vec<f64> = signals.iter().flat_map(|x| measure(&a, x)).collect();
    let y = matrix(dir, "ys.npy", &ys, 3, M);
    (signals, ys, y)
}

/// `base` and `tail` as one argument list.
fn args<'a>(base: &'a [String], tail: &[&'a str]) -> Vec<&'a str> {
    base.iter()
        .map(String::as_str)
        .chain(tail.iter().copied())
        .collect()
}

/// The options that solve `y` for `K` (10) nonzeros by `algorithm`, the solution written to
/// `out`.
fn solving<'a>(y: &'a str, algorithm: &'a str, out: &'a str) -> [&'a str; 8] {
    [
        "--y",
        y,
        "--k",
        "10",
        "--algorithm",
        algorithm,
        "--out",
        out,
    ]
}

// ---------------------------------------------------------------------------------------------
// recover
// ---------------------------------------------------------------------------------------------

/// Recovers the signal of `seed` in `T` from the ensemble by each of NIHT and HTP, the
/// solution read back from `--out` within `within` of the signal.
fn recovers_from_the_ensemble<T: Real>(within: f64) {
    let dir = tempfile::tempdir().unwrap();
    let x = signal::<T>(11);
    let y = vector(&dir, "y.npy", &measure(&operator::<T>(), &x));
    let out = path(&dir, "x.npy").display().to_string();
    let base = ensemble_args();
    for algorithm in ["niht", "htp"] {
        let text = recover(&args(&base, &solving(&y, algorithm, &out)));
        assert!(text.contains("stopped:    converged after"), "{text}");
        assert!(
            text.contains(&format!(
                "gaussian ensemble, seed 5 (128 x 256, {})",
                T::DTYPE
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!("algorithm:  {algorithm}, k = 10")),
            "{text}"
        );
        assert!(text.contains("support:    10 entries"), "{text}");
        let (shape, solution, dtype) = read_back(&out);
        assert_eq!((shape, dtype), (vec![N], T::DTYPE.name()));
        let error = largest_error(&solution, &x);
        assert!(error < within, "{algorithm} in {}: error {error}", T::DTYPE);
    }
    assert_eq!(names_in(&dir), ["x.npy", "y.npy"]);
}

typed_tests!(recovers_from_the_ensemble:
    recovers_from_an_ensemble_in_f64 = f64(1e-6),
    recovers_from_an_ensemble_in_f32 = f32(1e-3),
);

#[test]
fn recovers_from_a_matrix_in_c_and_fortran_order() {
    let dir = tempfile::tempdir().unwrap();
    let (a, x, y, c) = matrix_problem(&dir, 12);
    let fortran = fortran_matrix(&dir, "a_fortran.npy", &entries(&a), M, N);
    let out = path(&dir, "x.npy").display().to_string();
    let mut solutions = Vec::new();
    for file in [&c, &fortran] {
        for algorithm in ["niht", "htp"] {
            let solve = solving(&y, algorithm, &out);
            let options = [
                &["--matrix", file.as_str()][..],
                &solve,
                &["--backend", "cpu"],
            ];
            let text = recover(&options.concat());
            assert!(
                text.contains(&format!("{file} (128 x 256 matrix, f64)")),
                "{text}"
            );
            let (shape, solution, dtype) = read_back(&out);
            assert_eq!((shape, dtype), (vec![N], "f64"));
            let error = largest_error(&solution, &x);
            assert!(error < 1e-6, "{algorithm} on {file}: error {error}");
            solutions.push(solution);
        }
    }
    // The same matrix, in either order: the same solutions, bit for bit.
    assert_eq!(solutions[0], solutions[2]);
    assert_eq!(solutions[1], solutions[3]);
}

#[test]
fn f32_files_are_solved_in_f32_and_mixed_ones_in_f64() {
    let dir = tempfile::tempdir().unwrap();
    let a = operator::<f32>();
    let x = signal::<f32>(13);
    let y32 = measure(&a, &x);
    let y = vector(&dir, "y32.npy", &y32);
    let a32 = matrix(&dir, "a32.npy", &entries(&a), M, N);
    let out = path(&dir, "x.npy").display().to_string();
    let json = recover_json(&["--matrix", &a32, "--y", &y, "--k", "10", "--out", &out]);
    assert_eq!(json["dtype"], "f32");
    assert_eq!(json["tolerance"].as_f64(), Some(1e-5));
    let (_, solution, dtype) = read_back(&out);
    assert_eq!(dtype, "f32");
    assert!(largest_error(&solution, &x) < 1e-3);

    // An f4 matrix beside f8 measurements (of the same matrix and signal, measured in f8):
    // both read as f8, the solution f8.
    let a64: Vec<f64> = entries(&a).into_iter().map(f64::from).collect();
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let y64 = measure(&Operator::Dense(DenseMatrix::new(a64, M, N).unwrap()), &x64);
    let y = vector(&dir, "y64.npy", &y64);
    let json = recover_json(&["--matrix", &a32, "--y", &y, "--k", "10", "--out", &out]);
    assert_eq!(json["dtype"], "f64");
    assert_eq!(json["tolerance"].as_f64(), Some(1e-10));
    let (_, solution, dtype) = read_back(&out);
    assert_eq!(dtype, "f64");
    assert!(largest_error(&solution, &x64) < 1e-6);
}

#[test]
fn the_json_holds_the_history_and_the_support() {
    let dir = tempfile::tempdir().unwrap();
    let x = signal::<f64>(14);
    let y_values = measure(&operator::<f64>(), &x);
    let y = vector(&dir, "y.npy", &y_values);
    let base = ensemble_args();
    let json = recover_json(&args(
        &base,
        &[
            "--y",
            &y,
            "--k",
            "10",
            "--algorithm",
            "htp",
            "--backend",
            "auto",
        ],
    ));
    for (key, want) in [
        ("y", Value::from(y.as_str())),
        ("matrix", Value::Null),
        ("ensemble", Value::from("gaussian")),
        ("seed", Value::from(SEED)),
        ("m", Value::from(M)),
        ("n", Value::from(N)),
        ("k", Value::from(K)),
        ("dtype", Value::from("f64")),
        ("algorithm", Value::from("htp")),
        ("tolerance", Value::from(1e-10)),
        ("max_iterations", Value::from(5000)),
        ("stop", Value::from("converged")),
        ("converged", Value::from(true)),
        // auto: the GPU where one is usable.
        (
            "backend",
            Value::from(if common::cuda_device().is_some() {
                "cuda"
            } else {
                "cpu"
            }),
        ),
    ] {
        assert_eq!(json[key], want, "{key}: {json}");
    }
    assert!(json.get("out").is_none(), "no file written: {json}");
    assert!(json.get("problems").is_none(), "one problem: {json}");
    let residuals = f64s(&json["residuals"]);
    let iterations = json["iterations"].as_u64().unwrap() as usize;
    assert!(iterations >= 1);
    assert_eq!(residuals.len(), iterations + 1);
    let norm_y = y_values.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(
        (residuals[0] - norm_y).abs() <= 1e-12 * norm_y,
        "{residuals:?}"
    );
    assert_eq!(json["residual"].as_f64(), residuals.last().copied());
    let relative = json["relative_residual"].as_f64().unwrap();
    assert!(
        (relative - residuals[iterations] / norm_y).abs() <= 1e-15,
        "{json}"
    );
    assert!(relative <= 1e-10, "{json}");
    let found = u64s(&json["support"]);
    assert_eq!(found, support(&x));
    let values = f64s(&json["values"]);
    for (i, v) in found.iter().zip(&values) {
        assert!((v - x[*i as usize]).abs() < 1e-6, "entry {i}: {v}");
    }
    assert!(json["seconds"].as_f64().unwrap() >= 0.0);
    let device = json["device"].as_str().unwrap();
    assert!(
        device.starts_with("cpu") || json["backend"] == "cuda",
        "{device}"
    );
}

#[test]
fn a_batch_of_three_is_solved_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (signals, _, y) = three_problems(&dir, 20);
    let out = path(&dir, "xs.npy").display().to_string();
    let base = ensemble_args();
    let text = recover(&args(&base, &["--y", &y, "--k", "10", "--out", &out]));
    assert!(text.contains("(3 problems of 128 measurements)"), "{text}");
    assert!(text.contains("stops:      3 converged"), "{text}");
    assert!(
        text.contains("solution:   ") && text.contains("(f64, 3 x 256)"),
        "{text}"
    );
    let lines = words_of_lines(&text);
    for problem in ["0", "1", "2"] {
        assert!(
            lines
                .iter()
                .any(|l| l.len() == 5 && l[0] == problem && l[1] == "converged"),
            "a line for problem {problem}: {text}"
        );
    }
    assert_eq!(assert_solutions(&out, &signals, "a batch"), vec![3, N]);

    let json = recover_json(&args(&base, &["--y", &y, "--k", "10", "--out", &out]));
    assert_eq!(json["problems"], 3);
    assert_eq!(json["converged"], true);
    assert_eq!(json["stops"], serde_json::json!({"converged": 3}));
    assert_eq!(json["out"], out.as_str());
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_supports(&json, &signals, "a batch");
    for result in results {
        assert_eq!(result["stop"], "converged");
        let iterations = result["iterations"].as_u64().unwrap() as usize;
        assert_eq!(f64s(&result["residuals"]).len(), iterations + 1);
    }
}

#[test]
fn cuda_solves_one_problem_and_a_batch_or_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let (signals, ys, batch) = three_problems(&dir, 30);
    let one = vector(&dir, "y.npy", &ys[..M]);
    let out = path(&dir, "xs.npy").display().to_string();
    let base = ensemble_args();
    for (y, problems) in [(&one, 1), (&batch, 3)] {
        let all = args(
            &base,
            &["--y", y, "--k", "10", "--backend", "cuda", "--out", &out],
        );
        let output = run("recover", &all);
        if no_usable_gpu(&output) {
            continue;
        }
        let text = stdout(&output);
        assert_eq!(output.status.code(), Some(0), "{text}");
        assert!(text.contains("cuda:0)"), "{text}");
        assert_solutions(&out, &signals[..problems], &text);
    }
}

/// Writes `count` matrices of `rows x cols` (row-major, one after the other) as a 3-D `f8` `.npy`
/// file in C order.
fn matrices(
    dir: &tempfile::TempDir,
    name: &str,
    values: &[f64],
    (count, rows, cols): (usize, usize, usize),
) -> String {
    let shape = format!("{count}, {rows}, {cols}");
    f8_npy(dir, name, "False", &shape, values.iter().copied())
}

/// `count` problems, each with its own Gaussian operator (problem p's from seed 5 + p, as
/// `--operators each --seed 5` draws it) and signal (from `first_signal + p`), written to
/// `ys.npy` and `as.npy` (the operators, B x m x n) in `dir`.
fn stack_problems(dir: &tempfile::TempDir, count: usize, first_signal: u64) -> Stack {
    let ops: Vec<Operator<f64>> = (0..count as u64)
        .map(|p| Ensemble::Gaussian.generate::<f64>(M, N, SEED + p).unwrap())
        .collect();
    let signals: Vec<Vec<f64>> = (0..count as u64)
        .map(|p| signal::<f64>(first_signal + p))
        .collect();
    let ys: Vec<f64> = ops
        .iter()
        .zip(&signals)
        .flat_map(|(a, x)| measure(a, x))
        .collect();
    let y = matrix(dir, "ys.npy", &ys, count, M);
    let entries: Vec<f64> = ops.iter().flat_map(entries).collect();
    let a = matrices(dir, "as.npy", &entries, (count, M, N));
    Stack {
        signals,
        ys,
        y,
        entries,
        a,
    }
}

/// Problems with an operator each, as [`stack_problems`] writes them.
struct Stack {
    signals: Vec<Vec<f64>>,
    /// The measurements, one problem after another.
    ys: Vec<f64>,
    /// Their file.
    y: String,
    /// The operators' entries, row-major, one after another.
    entries: Vec<f64>,
    /// Their file.
    a: String,
}

#[test]
fn each_problem_may_have_its_own_operator() {
    let dir = tempfile::tempdir().unwrap();
    let Stack {
        signals,
        ys,
        y,
        entries: stack,
        a,
    } = stack_problems(&dir, 3, 40);
    let out = path(&dir, "xs.npy").display().to_string();
    let base = ensemble_args();
    let drawn = args(&base, &["--operators", "each", "--y", &y, "--k", "10"]);
    let given = ["--matrix", &a, "--y", &y, "--k", "10"];
    let text = recover(&drawn);
    assert!(
        text.contains("one operator a problem, seeds 5 to 7 (128 x 256, f64)"),
        "{text}"
    );
    assert!(text.contains("stops:      3 converged"), "{text}");
    let text = recover(&given);
    assert!(
        text.contains("(3 matrices of 128 x 256, one a problem, f64)"),
        "{text}"
    );
    for backend in ["cpu", "cuda"] {
        for form in [&drawn[..], &given[..]] {
            let mut all = form.to_vec();
            all.extend(["--backend", backend, "--out", &out, "--json"]);
            let output = run("recover", &all);
            if backend == "cuda" && no_usable_gpu(&output) {
                continue;
            }
            assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
            let json = parse_one(&stdout(&output));
            assert_eq!(json["operators"], "each");
            assert_eq!(json["converged"], true);
            assert_supports(&json, &signals, backend);
            assert_eq!(assert_solutions(&out, &signals, backend), vec![3, N]);
        }
    }
    // One operator for all: these problems were measured by others (not converged: exit 3).
    let shared = run("recover", &args(&base, &["--json", "--y", &y, "--k", "10"]));
    assert_eq!(shared.status.code(), Some(3), "{}", stderr(&shared));
    assert_eq!(parse_one(&stdout(&shared))["operators"], "shared");

    // The errors of a mismatch.
    let one = vector(&dir, "y.npy", &ys[..M]);
    let two = matrix(&dir, "two.npy", &ys[..2 * M], 2, M);
    let plain = matrix(&dir, "a.npy", &stack[..M * N], M, N);
    for (tail, says) in [
        (
            vec!["--matrix", &a, "--y", &one],
            "one problem (a 1-D array)",
        ),
        (vec!["--matrix", &a, "--y", &two], "2 problems"),
        (
            vec!["--matrix", &a, "--y", &y, "--operators", "shared"],
            "a 3-D one is a matrix for each problem",
        ),
        (
            vec!["--matrix", &plain, "--y", &y, "--operators", "each"],
            "this --matrix is one matrix",
        ),
    ] {
        let mut all = tail;
        all.extend(["--k", "10"]);
        let err = fails("recover", &all, 1);
        assert!(err.contains(says), "{says}: {err}");
    }
    let err = fails(
        "recover",
        &args(&base, &["--operators", "each", "--y", &one, "--k", "10"]),
        1,
    );
    assert!(err.contains("give a 2-D --y of B problems"), "{err}");
}

#[test]
fn a_stack_of_matrices_in_either_order_piped_or_broken() {
    let dir = tempfile::tempdir().unwrap();
    let Stack {
        signals,
        y,
        entries: stack,
        a: c,
        ..
    } = stack_problems(&dir, 2, 50);
    // The same stack in Fortran order: entry (p, i, j) stored at p + 2 (i + M j).
    let fortran_order = (0..N).flat_map(|j| {
        let stack = &stack;
        (0..M).flat_map(move |i| (0..2).map(move |p| stack[p * M * N + i * N + j]))
    });
    let f = f8_npy(
        &dir,
        "as-fortran.npy",
        "True",
        &format!("2, {M}, {N}"),
        fortran_order,
    );
    let tail = ["--y", &y, "--k", "10", "--backend", "cpu"];
    let solved = |matrix: &str| {
        let mut all = vec!["--matrix", matrix];
        all.extend(tail);
        recover_json(&all)
    };
    let from_c = solved(&c);
    assert_eq!(from_c["operators"], "each");
    assert_supports(&from_c, &signals, "C order");
    assert_eq!(solved(&f)["results"], from_c["results"]);
    // Piped on standard input.
    let mut all = vec!["recover", "--json", "--matrix", "-"];
    all.extend(tail);
    let piped = common::cli::kselect_with_stdin(&all, std::fs::read(&c).unwrap());
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert_eq!(parse_one(&stdout(&piped))["results"], from_c["results"]);
    // Cut short, a header promising far more than the file holds, junk: one error each.
    let bytes = std::fs::read(&c).unwrap();
    for broken in broken_copies(&dir, ".npy", &c, "128, 256") {
        let mut all = vec!["--matrix", broken.as_str()];
        all.extend(tail);
        let err = fails("recover", &all, 1);
        assert_eq!(err.lines().count(), 1, "{broken}: {err}");
    }
    // The stack as --out: refused before anything is written.
    let mut all = vec!["--matrix", c.as_str(), "--out", c.as_str()];
    all.extend(tail);
    let err = fails("recover", &all, 2);
    assert!(err.contains("is the input file"), "{err}");
    assert_eq!(std::fs::read(&c).unwrap(), bytes);
}

#[cfg(unix)]
#[test]
fn a_stack_of_matrices_from_a_fifo_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let Stack { signals, y, a, .. } = stack_problems(&dir, 2, 60);
    let bytes = std::fs::read(&a).unwrap();
    let chunks = bytes.chunks(65536).map(<[u8]>::to_vec).collect();
    let (fifo, writer) =
        common::cli::fifo_writing(&dir, "as.fifo", chunks, std::time::Duration::ZERO);
    let fifo_name = fifo.display().to_string();
    let json = recover_json(&[
        "--matrix",
        &fifo_name,
        "--y",
        &y,
        "--k",
        "10",
        "--backend",
        "cpu",
    ]);
    writer.join().unwrap();
    assert_eq!(json["operators"], "each");
    assert_supports(&json, &signals, "from a FIFO");
}

#[test]
fn a_solver_stopped_before_converging_exits_3_and_still_writes_its_solution() {
    let dir = tempfile::tempdir().unwrap();
    let y = vector(
        &dir,
        "y.npy",
        &measure(&operator::<f64>(), &signal::<f64>(15)),
    );
    let out = path(&dir, "x.npy");
    let o = out.display().to_string();
    let base = ensemble_args();
    let stopped = args(
        &base,
        &["--y", &y, "--k", "10", "--max-iter", "3", "--out", &o],
    );
    let run_once = |extra: &[&str]| {
        let mut all = stopped.clone();
        all.extend_from_slice(extra);
        let result = run("recover", &all);
        assert_eq!(result.status.code(), Some(3), "{}", stderr(&result));
        let err = stderr(&result);
        assert!(
            err.starts_with("warning: the solver stopped without converging"),
            "{err}"
        );
        assert!(err.contains("iteration limit after 3 iterations"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        stdout(&result)
    };
    let text = run_once(&[]);
    assert!(
        text.contains("stopped:    iteration limit after 3 iterations (not converged)"),
        "{text}"
    );
    let (shape, solution, _) = read_back(&o);
    assert_eq!(shape, vec![N]);
    assert!(solution.iter().filter(|v| **v != 0.0).count() <= K);
    assert!(
        solution.iter().any(|v| *v != 0.0),
        "the last iterate, not zeros"
    );

    std::fs::remove_file(&out).unwrap();
    let json = parse_one(&run_once(&["--json"]));
    assert_eq!(json["stop"], "iteration limit");
    assert_eq!(json["converged"], false);
    assert_eq!(json["iterations"], 3);
    assert_eq!(f64s(&json["residuals"]).len(), 4);
    assert!(json["relative_residual"].as_f64().unwrap() > 1e-10);
    assert!(out.exists());

    // A batch where one problem cannot converge in the limit: y = 0 converges at once.
    let mut ys = vec![0.0; M];
    ys.extend(measure(&operator::<f64>(), &signal::<f64>(16)));
    let y2 = matrix(&dir, "ys.npy", &ys, 2, M);
    let result = run(
        "recover",
        &args(
            &base,
            &["--y", &y2, "--k", "10", "--max-iter", "3", "--json"],
        ),
    );
    assert_eq!(result.status.code(), Some(3), "{}", stderr(&result));
    assert!(
        stderr(&result).starts_with("warning: 1 of 2 problems stopped without converging"),
        "{}",
        stderr(&result)
    );
    let json = parse_one(&stdout(&result));
    assert_eq!(json["converged"], false);
    assert_eq!(
        json["stops"],
        serde_json::json!({"converged": 1, "iteration limit": 1})
    );
    assert_eq!(json["results"][0]["iterations"], 0);
}

#[test]
fn measurements_and_matrices_may_come_from_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let (_, x, y, c) = matrix_problem(&dir, 17);
    let matrix_bytes = std::fs::read(&c).unwrap();
    let out = common::cli::kselect_with_stdin(
        &["recover", "--matrix", "-", "--y", &y, "--k", "10", "--json"],
        matrix_bytes,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json = parse_one(&stdout(&out));
    assert_eq!(json["matrix"], "<stdin>");
    assert_eq!(u64s(&json["support"]), support(&x));
}

#[test]
fn errors_are_one_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let a = operator::<f64>();
    let good: Vec<f64> = measure(&a, &signal::<f64>(18));
    let y = vector(&dir, "y.npy", &good);
    let short = vector(&dir, "short.npy", &good[..100]);
    let mut with_nan = good.clone();
    with_nan[3] = f64::NAN;
    let nan = vector(&dir, "nan.npy", &with_nan);
    let c = matrix(&dir, "a.npy", &entries(&a), M, N);
    let mut bad_entries = entries(&a);
    bad_entries[2 * N + 7] = f64::INFINITY;
    let bad_matrix = matrix(&dir, "a_inf.npy", &bad_entries, M, N);
    let text = path(&dir, "y.csv");
    std::fs::write(&text, "y\n1\n2\n").unwrap();
    let text = text.display().to_string();
    let missing = path(&dir, "missing.npy").display().to_string();
    let out = path(&dir, "x.npy").display().to_string();
    let base = ensemble_args();

    // (arguments, exit status, what the message says)
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["--matrix", &c, "--y", &short, "--k", "10", "--out", &out],
            1,
            "holds 100 measurements, but --matrix",
        ),
        (
            args(&base, &["--y", &short, "--k", "10"]),
            1,
            "holds 100 measurements, but --m is 128",
        ),
        (
            vec!["--matrix", &c, "--y", &nan, "--k", "10", "--out", &out],
            1,
            "nan.npy: measurement 3 is nan: every measurement must be finite",
        ),
        (
            vec!["--matrix", &bad_matrix, "--y", &y, "--k", "10"],
            1,
            "the matrix entry in row 2 and column 7 is inf",
        ),
        (
            vec!["--matrix", &c, "--y", &y, "--k", "300", "--out", &out],
            1,
            "k = 300 nonzeros asked for in signals of n = 256 entries",
        ),
        (
            args(&base, &["--y", &y, "--k", "257"]),
            1,
            "k = 257 nonzeros asked for in signals of n = 256 entries",
        ),
        (
            vec!["--matrix", &c, "--y", &y, "--k", "10", "--algorithm", "omp"],
            2,
            "unknown recovery algorithm `omp` (known: iht, niht, htp, cosamp, sp, cgiht)",
        ),
        (
            vec![
                "--ensemble",
                "gauss",
                "--n",
                "256",
                "--m",
                "128",
                "--y",
                &y,
                "--k",
                "10",
            ],
            2,
            "unknown ensemble `gauss`",
        ),
        (
            vec![
                "--ensemble",
                "gaussian",
                "--n",
                "256",
                "--y",
                &y,
                "--k",
                "10",
            ],
            2,
            "the following required arguments were not provided:\n  --m <M>",
        ),
        (
            vec!["--matrix", &c, "--n", "256", "--y", &y, "--k", "10"],
            2,
            "'--matrix <A.npy>' cannot be used with '--n <N>'",
        ),
        (
            vec!["--y", &y, "--k", "10"],
            2,
            "<--matrix <A.npy>|--ensemble <NAME>>",
        ),
        (
            vec!["--matrix", &missing, "--y", &y, "--k", "10"],
            1,
            "missing.npy: No such file or directory",
        ),
        (
            vec![
                "--matrix",
                &c,
                "--y",
                dir.path().to_str().unwrap(),
                "--k",
                "10",
            ],
            1,
            "is a directory",
        ),
        (
            vec!["--matrix", &c, "--y", &text, "--k", "10"],
            1,
            "y.csv: not a NumPy .npy array",
        ),
        (
            vec!["--matrix", &y, "--y", &y, "--k", "10"],
            1,
            "a 1-D array of 128 values: the measurement matrix is a 2-D array",
        ),
        (
            vec!["--matrix", &c, "--y", &c, "--k", "10"],
            1,
            "holds problems of 256 measurements, but --matrix",
        ),
        (
            vec!["--matrix", &c, "--y", &y, "--k", "0"],
            2,
            "k is the most nonzeros of the signal: 1 or more",
        ),
        (
            vec!["--matrix", &c, "--y", &y, "--k", "10", "--tol", "-1"],
            2,
            "the tolerance is relative to |y|: finite and positive",
        ),
        (
            vec!["--matrix", &c, "--y", &y, "--k", "10", "--out", &y],
            2,
            "is the input file",
        ),
        (
            vec!["--matrix", "-", "--y", "-", "--k", "10"],
            2,
            "--matrix and --y are both - (standard input)",
        ),
    ];
    for (arguments, code, want) in cases {
        let err = fails("recover", &arguments, code);
        assert!(err.contains(want), "{arguments:?}: {err}");
        if code == 1 {
            assert_eq!(err.lines().count(), 1, "one line: {err}");
        }
    }
    // No error left an --out file behind.
    assert!(!Path::new(&out).exists());

    let e = fails(
        "recover",
        &[
            "--ensemble",
            "dct",
            "--n",
            "100",
            "--m",
            "128",
            "--y",
            &y,
            "--k",
            "10",
        ],
        1,
    );
    assert!(e.contains("cannot take m = 128 measurements"), "{e}");

    // Options of other commands: where they belong.
    let e = fails(
        "recover",
        &["--matrix", &c, "--y", &y, "--k", "10", "--nan", "omit"],
        2,
    );
    assert!(
        e.starts_with(
            "error: `kselect recover` has no --nan option; it is an option of `select`, \
             `quantiles`, `topk` and `threshold`"
        ),
        "{e}"
    );
    let e = fails(
        "phase-transition",
        &["--ensemble", "dct", "--n", "32", "--k", "3"],
        2,
    );
    assert!(
        e.starts_with(
            "error: `kselect phase-transition` has no --k option; it is an option of \
             `select`, `topk`, `threshold`, `neighbors`, `knn` and `recover`"
        ),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// phase-transition
// ---------------------------------------------------------------------------------------------

/// The options of a tiny experiment: n = 32, two deltas, two rhos, two trials.
const TINY: [&str; 12] = [
    "--ensemble",
    "gaussian",
    "--n",
    "32",
    "--deltas",
    "0.5,1",
    "--rhos",
    "0.1,0.9",
    "--trials",
    "2",
    "--algorithms",
    "niht,htp",
];

#[test]
fn a_tiny_phase_transition_is_written_as_json_png_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let json_file = path(&dir, "pt.json");
    let png = path(&dir, "pt.png");
    let (j, p) = (json_file.display().to_string(), png.display().to_string());
    let mut all = TINY.to_vec();
    all.extend(["--json", &j, "--plot", &p, "--backend", "cpu"]);
    let out = run("phase-transition", &all);
    assert!(out.status.success(), "{}", stderr(&out));
    // The progress bar is hidden: stderr is not a terminal here.
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("gaussian operators, n = 32"), "{text}");
    assert!(text.contains("8 problems for each of niht, htp"), "{text}");
    let rows = words_of_lines(&text);
    let header = rows
        .iter()
        .position(|r| r[..] == ["delta", "niht", "htp"])
        .unwrap_or_else(|| panic!("a header of the curve: {text}"));
    for (row, delta) in rows[header + 1..header + 3].iter().zip(["0.5", "1"]) {
        assert_eq!(row.len(), 3, "{text}");
        assert_eq!(row[0], delta, "{text}");
        for rho in &row[1..] {
            assert!(*rho == "-" || rho.parse::<f64>().is_ok(), "{rho} in {text}");
        }
    }
    assert!(text.contains(&format!("json:        {j}")), "{text}");
    assert!(text.contains(&format!("plot:        {p}")), "{text}");

    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).expect("valid JSON");
    assert_eq!(json["ensemble"], "gaussian");
    assert_eq!(json["n"], 32);
    assert_eq!(json["trials"], 2);
    assert_eq!(json["dtype"], "f64");
    assert_eq!(f64s(&json["deltas"]), [0.5, 1.0]);
    assert_eq!(f64s(&json["rhos"]), [0.1, 0.9]);
    let algorithms = json["algorithms"].as_array().unwrap();
    assert_eq!(algorithms.len(), 2);
    for (diagram, name) in algorithms.iter().zip(["niht", "htp"]) {
        assert_eq!(diagram["algorithm"], name);
        let cells = diagram["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 4);
        for cell in cells {
            assert_eq!(cell["trials"], 2);
            assert!(cell["successes"].as_u64().unwrap() <= 2);
        }
        // rho = 0.1 of delta = 1 (m = 32, k = 3) is well inside the region.
        assert_eq!(cells[2]["m"], 32);
        assert_eq!(cells[2]["successes"], 2, "{name}: {}", cells[2]);
        // rho = 0.9 of delta = 0.5 (m = 16, k = 14) is well outside it.
        assert_eq!(cells[1]["successes"], 0, "{name}: {}", cells[1]);
        // Each point of the curve in the table, to three decimals.
        for point in diagram["curve"].as_array().unwrap() {
            let delta = point["delta"].as_f64().unwrap();
            let row = &rows[header + if delta == 0.5 { 1 } else { 2 }];
            let column = if name == "niht" { 1 } else { 2 };
            let rho = point["rho"].as_f64().unwrap();
            assert_eq!(row[column], format!("{rho:.3}"), "{text}");
        }
    }
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG file");

    // The SVG, in f32 with sign nonzeros, and the JSON on standard output.
    let svg = path(&dir, "pt.svg");
    let s = svg.display().to_string();
    let mut all = TINY.to_vec();
    all.extend([
        "--plot", &s, "--dtype", "f32", "--signal", "sign", "--json", "-",
    ]);
    let out = run("phase-transition", &all);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).expect("only JSON on stdout");
    assert_eq!(
        (&json["dtype"], &json["signal"]),
        (&Value::from("f32"), &Value::from("sign"))
    );
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("<svg") && picture.trim_end().ends_with("</svg>"));
    assert_eq!(names_in(&dir), ["pt.json", "pt.png", "pt.svg"]);
}

#[test]
fn a_phase_transition_on_cuda_runs_or_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let j = path(&dir, "cuda.json").display().to_string();
    let out = run(
        "phase-transition",
        &[
            "--ensemble",
            "gaussian",
            "--n",
            "64",
            "--deltas",
            "0.5",
            "--rhos",
            "0.1,0.9",
            "--trials",
            "4",
            "--backend",
            "cuda",
            "--json",
            &j,
        ],
    );
    if no_usable_gpu(&out) {
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("cuda:0"), "{}", stdout(&out));
    let diagram: Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    let cells = diagram["algorithms"][0]["cells"].as_array().unwrap();
    // rho = 0.1 (k = 3 of m = 32) is recovered; rho = 0.9 (k = 29) is not.
    assert_eq!(
        (
            cells[0]["successes"].as_u64(),
            cells[1]["successes"].as_u64()
        ),
        (Some(4), Some(0))
    );
}

#[test]
fn ranges_make_grids() {
    let out = run(
        "phase-transition",
        &[
            "--ensemble",
            "sign",
            "--n",
            "24",
            "--deltas",
            "0.75,0.25:0.5:0.25",
            "--rhos",
            "0.2",
            "--trials",
            "1",
            "--json",
            "-",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(f64s(&json["deltas"]), [0.25, 0.5, 0.75]);
    assert_eq!(json["algorithms"][0]["algorithm"], "niht");
    assert_eq!(json["seed"], 1);
}

#[test]
fn grids_outside_the_unit_interval_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let json_file = path(&dir, "pt.json").display().to_string();
    let base = ["--ensemble", "gaussian", "--n", "32", "--json", &json_file];
    let cases: [(&[&str], i32, &str); 7] = [
        (&["--deltas", "0.5,1.5"], 2, "delta = 1.5 is outside (0, 1]"),
        (&["--deltas", "0,0.5"], 2, "delta = 0 is outside (0, 1]"),
        (&["--deltas", "-0.5"], 2, "delta = -0.5 is outside (0, 1]"),
        (&["--rhos", "0.1:1.1:0.5"], 2, "rho = 1.1 is outside (0, 1]"),
        (&["--rhos", "0.5:0.1:0.1"], 2, "ends below its start"),
        (&["--trials", "0"], 2, "--trials is the number of problems"),
        (
            &["--algorithms", "niht,niht"],
            1,
            "--algorithms names niht twice",
        ),
    ];
    for (extra, code, want) in cases {
        let mut all = base.to_vec();
        all.extend_from_slice(extra);
        let err = fails("phase-transition", &all, code);
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    let err = fails(
        "phase-transition",
        &[
            "--ensemble",
            "sparse:9",
            "--n",
            "32",
            "--deltas",
            "0.25,0.5",
        ],
        1,
    );
    assert!(err.contains("delta = 0.25 gives m = 8"), "{err}");
    let same = path(&dir, "pt.svg").display().to_string();
    let err = fails(
        "phase-transition",
        &[
            "--ensemble",
            "dct",
            "--n",
            "32",
            "--plot",
            &same,
            "--json",
            &same,
        ],
        2,
    );
    assert!(err.contains("are the same file"), "{err}");
    let err = fails(
        "phase-transition",
        &["--ensemble", "dct", "--n", "32", "--plot", "pt.pdf"],
        2,
    );
    assert!(err.contains("ends in .png or .svg"), "{err}");
    assert!(
        names_in(&dir).is_empty(),
        "nothing written: {:?}",
        names_in(&dir)
    );
}

#[test]
fn the_help_names_both_commands_and_the_exit_status() {
    let text = stdout(&kselect(&["--help"]));
    for command in ["recover", "phase-transition"] {
        assert!(text.contains(command), "{command} missing from:\n{text}");
    }
    let text = stdout(&kselect(&["recover", "--help"]));
    assert!(
        text.contains("3 when a solver stopped without converging"),
        "{text}"
    );
    for algorithm in kselect::recovery::ALGORITHMS {
        assert!(text.contains(algorithm.name()), "{algorithm} missing");
    }
    let text = stdout(&kselect(&["phase-transition", "--help"]));
    assert!(text.contains("a:b:step"), "{text}");
    assert!(text.contains("[default: 0.05:0.95:0.05]"), "{text}");
}

#[test]
fn truncated_huge_header_and_junk_inputs_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, y, c) = matrix_problem(&dir, 21);
    for broken in broken_copies(&dir, "-y.npy", &y, "128") {
        let err = fails("recover", &["--matrix", &c, "--y", &broken, "--k", "10"], 1);
        assert!(!err.is_empty(), "{broken}: no message");
    }
    for broken in broken_copies(&dir, "-a.npy", &c, "128") {
        let err = fails("recover", &["--matrix", &broken, "--y", &y, "--k", "10"], 1);
        assert!(!err.is_empty(), "{broken}: no message");
    }
}

#[cfg(unix)]
#[test]
fn measurements_from_a_fifo_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let a = operator::<f64>();
    let x = signal::<f64>(23);
    let y = vector(&dir, "y.npy", &measure(&a, &x));
    let bytes = std::fs::read(&y).unwrap();
    // In pieces, a pause between them.
    let chunks = bytes.chunks(300).map(<[u8]>::to_vec).collect();
    let (fifo, writer) =
        common::cli::fifo_writing(&dir, "y.fifo", chunks, std::time::Duration::from_millis(50));
    let fifo_name = fifo.display().to_string();
    let base = ensemble_args();
    let from_fifo = recover_json(&args(&base, &["--y", &fifo_name, "--k", "10"]));
    writer.join().unwrap();
    let from_file = recover_json(&args(&base, &["--y", &y, "--k", "10"]));
    assert_eq!(u64s(&from_fifo["support"]), support(&x));
    assert_eq!(from_fifo["support"], from_file["support"]);
    assert_eq!(from_fifo["iterations"], from_file["iterations"]);
}
