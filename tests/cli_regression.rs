//! `kselect lts` and `kselect lms` end to end: the classic data sets of `datasets/robust`
//! through the command line against R's references (`references.json`), the JSON read back and
//! compared with the library's fit bit for bit, the model options (`--predictors`, `--log`,
//! `--no-intercept`, `--alpha`, `--h`, `--nsamp`, `--seed`), `.npy` input, the readable
//! output, and every user error (a clear message on stderr and exit status 1, or 2 for usage
//! errors). Everything runs with `--backend cpu` unless it says otherwise; the `--backend
//! cuda` cases skip without a GPU unless `KSELECT_REQUIRE_GPU=1`.

mod common;

use std::path::{Path, PathBuf};

use common::cli::{
    cpu_fails, cpu_fails_stdin, cpu_json, cpu_json_stdin, cpu_text, cuda_json, f64s, kselect,
    kselect_with_stdin, npy_with_header, path, repository_file, stderr, stdout, u64s,
    without_file_and_time,
};
use kselect::io::npy::write_npy_matrix;
use kselect::regression::{Lms, Lts, RegressionFit};
use kselect::Matrix;
use serde_json::Value;

fn robust(file: &str) -> PathBuf {
    repository_file("datasets/robust").join(file)
}

/// `references.json`: R's results for each data set.
fn references() -> Value {
    let text = std::fs::read_to_string(robust("references.json")).expect("references.json");
    serde_json::from_str(&text).expect("valid JSON")
}

const SETS: [&str; 5] = ["stackloss", "starsCYG", "hbk", "wood", "Animals2"];

/// The strings of a JSON array.
fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

/// The command-line options of the model of a data set's reference: response, predictors and
/// `--log` of every column when the model is on the log scale.
fn model_args(r: &Value) -> Vec<String> {
    let response = r["response"].as_str().unwrap().to_string();
    let predictors = strings(&r["predictors"]);
    let mut args = vec![
        "--response".to_string(),
        response.clone(),
        "--predictors".to_string(),
        predictors.join(","),
    ];
    if r["log_transform"].as_bool().unwrap() {
        let mut all = predictors.clone();
        all.push(response);
        args.extend(["--log".to_string(), all.join(",")]);
    }
    args
}

/// Runs `kselect COMMAND FILE --backend cpu --json ARGS` and returns the JSON.
fn fit_json(command: &str, file: &Path, args: &[String]) -> Value {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cpu_json(command, file, &args).1
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

/// The keys every JSON object has.
const KEYS: [&str; 12] = [
    "n",
    "p",
    "h",
    "coefficients",
    "raw_coefficients",
    "objective",
    "raw_scale",
    "scale",
    "outliers",
    "weights",
    "backend",
    "seconds",
];

/// Checks the JSON's shape and inner consistency: every key, one coefficient per term, one
/// weight per row, the outliers where the weights are 0.
fn check_shape(name: &str, v: &Value) {
    for key in KEYS {
        assert!(v.get(key).is_some(), "{name}: no `{key}` in {v}");
    }
    let (n, p) = (v["n"].as_u64().unwrap(), v["p"].as_u64().unwrap());
    let terms = strings(&v["terms"]);
    assert_eq!(terms.len() as u64, p, "{name}: terms {terms:?}");
    assert_eq!(f64s(&v["coefficients"]).len() as u64, p, "{name}");
    assert_eq!(f64s(&v["raw_coefficients"]).len() as u64, p, "{name}");
    let weights = u64s(&v["weights"]);
    assert_eq!(weights.len() as u64, n, "{name}");
    let zeros: Vec<u64> = (0..n).filter(|&i| weights[i as usize] == 0).collect();
    assert_eq!(u64s(&v["outliers"]), zeros, "{name}: outliers and weights");
    assert_eq!(v["backend"], "cpu", "{name}");
    assert!(v["seconds"].as_f64().unwrap() >= 0.0, "{name}");
}

#[test]
fn lts_reaches_robustbase_on_the_classic_data_sets() {
    let refs = references();
    for name in SETS {
        let r = &refs[name];
        let file = robust(r["file"].as_str().unwrap());
        let v = fit_json("lts", &file, &model_args(r));
        check_shape(name, &v);
        assert_eq!(v["method"], "LTS", "{name}");
        for key in ["n", "p", "h"] {
            assert_eq!(v[key], r[key], "{name}: {key}");
        }
        let mut terms = vec!["(Intercept)".to_string()];
        let log = r["log_transform"].as_bool().unwrap();
        terms.extend(strings(&r["predictors"]).into_iter().map(|p| {
            if log {
                format!("log({p})")
            } else {
                p
            }
        }));
        assert_eq!(strings(&v["terms"]), terms, "{name}");
        let objective = v["objective"].as_f64().unwrap();
        let want = r["lts_objective"].as_f64().unwrap();
        assert!(
            objective <= want * (1.0 + 1e-9),
            "{name}: LTS objective {objective} above R's {want}"
        );
        if rel(objective, want) > 1e-9 {
            continue; // a better optimum than R's: nothing of R's to compare
        }
        assert_eq!(
            u64s(&v["outliers"]),
            u64s(&r["ltsreg_outliers_0based"]),
            "{name}: outliers"
        );
        for (key, reference) in [
            ("coefficients", "ltsreg_coefficients"),
            ("raw_coefficients", "lts_raw_coefficients"),
        ] {
            for (got, want) in f64s(&v[key]).iter().zip(f64s(&r[reference])) {
                assert!(
                    (got - want).abs() <= 1e-6 * want.abs().max(1e-3),
                    "{name}: {key} {got}, R {want}"
                );
            }
        }
        for (key, reference) in [("raw_scale", "ltsreg_raw_scale"), ("scale", "ltsreg_scale")] {
            let (got, want) = (v[key].as_f64().unwrap(), r[reference].as_f64().unwrap());
            assert!(rel(got, want) < 1e-6, "{name}: {key} {got}, R {want}");
        }
    }
}

#[test]
fn lms_reaches_lqs_on_the_classic_data_sets() {
    let refs = references();
    for name in SETS {
        let r = &refs[name];
        let file = robust(r["file"].as_str().unwrap());
        let v = fit_json("lms", &file, &model_args(r));
        check_shape(name, &v);
        assert_eq!(v["method"], "LMS", "{name}");
        assert_eq!(v["h"], r["lms_h"], "{name}: h");
        assert!(v.get("alpha").is_none(), "{name}: LMS has no alpha");
        let objective = v["objective"].as_f64().unwrap();
        let want = r["lms_objective_abs_residual"].as_f64().unwrap();
        assert!(
            objective <= want * (1.0 + 1e-9),
            "{name}: LMS objective {objective} above lqs's {want}"
        );
    }
}

/// The columns of a CSV data set as `f64`, row-major predictors and the response.
fn design(file: &Path, predictors: &[&str], response: &str) -> (Vec<f64>, Vec<f64>, usize) {
    use kselect::io::{read_csv_column, ColumnVisitor};
    use kselect::Element;
    struct ToF64;
    impl ColumnVisitor for ToF64 {
        type Output = Vec<f64>;
        fn visit<T: Element>(self, data: &[T]) -> Vec<f64> {
            data.iter().map(|v| v.to_f64()).collect()
        }
    }
    let column = |c: &str| read_csv_column(file, Some(c)).unwrap().values.visit(ToF64);
    let y = column(response);
    let columns: Vec<Vec<f64>> = predictors.iter().map(|c| column(c)).collect();
    let n = y.len();
    let x = (0..n)
        .flat_map(|i| columns.iter().map(move |c| c[i]))
        .collect();
    (x, y, n)
}

/// The JSON text of `values` as `kselect` prints them: the shortest text that reads back as
/// the same `f64`.
fn json_floats(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[{}]", items.join(", "))
}

/// Asserts that the JSON object `text` holds the library's fit, bit for bit (compared as
/// text: each float printed with the shortest digits that read back as it).
fn assert_same_fit(what: &str, text: &str, fit: &RegressionFit) {
    let fields = [
        ("coefficients", json_floats(&fit.coefficients)),
        ("raw_coefficients", json_floats(&fit.raw_coefficients)),
        ("objective", format!("{:?}", fit.objective)),
        ("raw_scale", format!("{:?}", fit.raw_scale)),
        ("scale", format!("{:?}", fit.scale)),
        ("h", fit.h.to_string()),
        ("outliers", format!("{:?}", fit.outliers)),
    ];
    for (key, value) in fields {
        let field = format!("\"{key}\": {value}");
        assert!(text.contains(&field), "{what}: no `{field}` in {text}");
    }
}

#[test]
fn options_reach_the_estimators() {
    let file = robust("hbk.csv");
    let (x, y, n) = design(&file, &["X1", "X2", "X3"], "Y");
    fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut all = vec!["--response", "Y"];
        all.extend_from_slice(extra);
        all
    }

    // The default predictors are every other column, in the file's order.
    let (text, default) = cpu_json("lts", &file, &args(&[]));
    let (_, explicit) = cpu_json("lts", &file, &args(&["--predictors", "X1,X2,X3"]));
    assert_eq!(default["coefficients"], explicit["coefficients"]);
    assert_eq!(
        strings(&default["terms"]),
        ["(Intercept)", "X1", "X2", "X3"]
    );
    assert_same_fit(
        "default",
        &text,
        &Lts::new().fit(Matrix::new(&x, n, 3), &y).unwrap(),
    );

    let (text, v) = cpu_json(
        "lts",
        &file,
        &args(&["--alpha", "0.75", "--nsamp", "100", "--seed", "7"]),
    );
    let lts = Lts::new().alpha(0.75).nsamp(100).seed(7);
    assert_same_fit(
        "alpha 0.75",
        &text,
        &lts.fit(Matrix::new(&x, n, 3), &y).unwrap(),
    );
    assert_eq!(v["starts"], 100);
    assert_eq!(v["seed"], 7);
    assert_eq!(v["alpha"], 0.75);

    let (text, _) = cpu_json("lts", &file, &args(&["--h", "50"]));
    assert_same_fit(
        "h 50",
        &text,
        &Lts::new().h(50).fit(Matrix::new(&x, n, 3), &y).unwrap(),
    );

    let (text, v) = cpu_json("lts", &file, &args(&["--no-intercept"]));
    assert_eq!(strings(&v["terms"]), ["X1", "X2", "X3"]);
    assert_eq!(v["p"], 3);
    let fit = Lts::new()
        .intercept(false)
        .fit(Matrix::new(&x, n, 3), &y)
        .unwrap();
    assert_same_fit("no intercept", &text, &fit);

    // A subset of the predictors, in the order given.
    let (text, v) = cpu_json("lts", &file, &args(&["--predictors", "X3,X1"]));
    assert_eq!(strings(&v["terms"]), ["(Intercept)", "X3", "X1"]);
    let x31: Vec<f64> = x.chunks(3).flat_map(|r| [r[2], r[0]]).collect();
    assert_same_fit(
        "X3, X1",
        &text,
        &Lts::new().fit(Matrix::new(&x31, n, 2), &y).unwrap(),
    );

    // LMS: --h, and --alpha by robustbase's rule.
    let (text, _) = cpu_json("lms", &file, &args(&["--h", "45", "--nsamp", "300"]));
    let lms = Lms::new().h(45).nsamp(300);
    assert_same_fit(
        "lms h 45",
        &text,
        &lms.fit(Matrix::new(&x, n, 3), &y).unwrap(),
    );
    let (text, _) = cpu_json("lms", &file, &args(&["--alpha", "0.75"]));
    let h = kselect::regression::h_alpha(0.75, n, 4);
    assert_same_fit(
        "lms alpha",
        &text,
        &Lms::new().h(h).fit(Matrix::new(&x, n, 3), &y).unwrap(),
    );
    let (text, _) = cpu_json("lms", &file, &args(&[]));
    assert_same_fit(
        "lms",
        &text,
        &Lms::new().fit(Matrix::new(&x, n, 3), &y).unwrap(),
    );

    // The same seed gives the same bits.
    let again = |seed: &str| cpu_json("lts", &file, &args(&["--seed", seed, "--nsamp", "50"]));
    let (a, b) = (again("3").1, again("3").1);
    assert_eq!(a["raw_coefficients"], b["raw_coefficients"]);
    assert_eq!(a["outliers"], b["outliers"]);
}

#[test]
fn log_takes_the_natural_logarithm_first() {
    let file = robust("Animals2.csv");
    let (x, y, n) = design(&file, &["body"], "brain");
    let (text, v) = cpu_json(
        "lts",
        &file,
        &["--response", "brain", "--log", "brain,body"],
    );
    // The text column `species` is left out of the default predictors.
    assert_eq!(strings(&v["terms"]), ["(Intercept)", "log(body)"]);
    assert_eq!(v["response"], "log(brain)");
    assert_eq!(strings(&v["log"]), ["brain", "body"]);
    let lx: Vec<f64> = x.iter().map(|v| v.ln()).collect();
    let ly: Vec<f64> = y.iter().map(|v| v.ln()).collect();
    assert_same_fit(
        "log-log",
        &text,
        &Lts::new().fit(Matrix::new(&lx, n, 1), &ly).unwrap(),
    );

    // Only the response logged.
    let (text, v) = cpu_json("lts", &file, &["--response", "brain", "--log", "brain"]);
    assert_eq!(strings(&v["terms"]), ["(Intercept)", "body"]);
    assert_same_fit(
        "log y",
        &text,
        &Lts::new().fit(Matrix::new(&x, n, 1), &ly).unwrap(),
    );
}

#[test]
fn npy_columns_are_named_by_index() {
    let csv = robust("stackloss.csv");
    let (x, y, n) = design(
        &csv,
        &["Air.Flow", "Water.Temp", "Acid.Conc."],
        "stack.loss",
    );
    let dir = tempfile::tempdir().unwrap();
    let npy = path(&dir, "stackloss.npy");
    let matrix: Vec<f64> = x
        .chunks(3)
        .zip(&y)
        .flat_map(|(row, &yi)| row.iter().copied().chain([yi]))
        .collect();
    write_npy_matrix(&npy, &matrix, n, 4).unwrap();
    let (_, from_npy) = cpu_json("lts", &npy, &["--response", "3"]);
    assert_eq!(strings(&from_npy["terms"]), ["(Intercept)", "0", "1", "2"]);
    let (_, from_csv) = cpu_json("lts", &csv, &["--response", "stack.loss"]);
    for key in ["coefficients", "objective", "scale", "outliers"] {
        assert_eq!(from_npy[key], from_csv[key], "{key}");
    }
    let err = cpu_fails("lts", &npy, &["--response", "4"], 1);
    assert!(err.contains("`4`") && err.contains("0 to 3"), "{err}");
}

#[test]
fn dash_reads_standard_input() {
    let csv = std::fs::read(robust("stackloss.csv")).unwrap();
    for command in ["lts", "lms"] {
        let args = ["--response", "stack.loss"];
        let from_stdin = cpu_json_stdin(command, &args, csv.clone());
        let (_, from_file) = cpu_json(command, robust("stackloss.csv"), &args);
        assert_eq!(from_stdin["file"], "<stdin>", "{command}");
        assert_eq!(
            without_file_and_time(&from_stdin),
            without_file_and_time(&from_file),
            "{command}"
        );
        let err = cpu_fails_stdin(command, &["--response", "nope"], csv.clone());
        assert!(err.contains("<stdin>: no column named `nope`"), "{err}");
    }
    let text = stdout(&kselect_with_stdin(
        &["lms", "-", "--backend", "cpu", "--response", "stack.loss"],
        csv,
    ));
    assert!(text.starts_with("file:       <stdin> (csv"), "{text}");
}

#[test]
fn npy_shape_zero_rows_huge_cols_is_refused() {
    // One empty column a claimed column used to be allocated: 24 PB, and the process aborted.
    let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1000000000000000), }";
    let bytes = npy_with_header(header);
    let dir = tempfile::tempdir().unwrap();
    let file = path(&dir, "huge.npy");
    std::fs::write(&file, &bytes).unwrap();
    for command in ["lts", "lms"] {
        let err = cpu_fails(command, &file, &["--response", "0"], 1);
        assert!(
            err.contains("huge.npy") && err.contains("0 x 1000000000000000"),
            "{err}"
        );
        let err = cpu_fails_stdin(command, &["--response", "0"], bytes.clone());
        assert!(err.contains("<stdin>: a 0 x 1000000000000000"), "{err}");
    }
    // A few columns of no rows read, and fail as an empty CSV table does.
    let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }";
    let err = cpu_fails_stdin("lts", &["--response", "0"], npy_with_header(header));
    assert!(err.contains("no observations"), "{err}");
    // No columns at all.
    let header = "{'descr': '<i4', 'fortran_order': False, 'shape': (1000000000000000, 0), }";
    let err = cpu_fails_stdin("lts", &["--response", "0"], npy_with_header(header));
    assert!(err.contains("no columns at all"), "{err}");
}

#[test]
fn text_output_is_a_readable_table() {
    let text = cpu_text(
        "lts",
        robust("stackloss.csv"),
        &["--response", "stack.loss"],
    );
    for needle in [
        "model:      LTS, stack.loss ~ 1 + Air.Flow + Water.Temp + Acid.Conc.",
        "n = 21, p = 4, h = 13 (alpha 0.5)",
        "objective:  2.9323912 (the sum of the h smallest squared residuals)",
        "scale:      1.8631459 raw, 1.9218769 reweighted",
        "backend:    cpu",
        "term",
        "coefficient",
        "raw coefficient",
        "outliers:   4 of 21 rows (0-based, weight 0): 0 2 3 20",
    ] {
        assert!(text.contains(needle), "no `{needle}` in:\n{text}");
    }
    let row = text
        .lines()
        .find(|l| l.starts_with("(Intercept)"))
        .unwrap_or_else(|| panic!("no intercept row in:\n{text}"));
    assert!(
        row.contains("-37.652459") && row.contains("-37.323326"),
        "{row}"
    );
    assert!(text.lines().any(|l| l.starts_with("Air.Flow ")), "{text}");

    let text = cpu_text("lms", robust("starsCYG.csv"), &["--response", "log.light"]);
    assert!(
        text.contains("(the h-th smallest absolute residual)"),
        "{text}"
    );
    assert!(
        text.contains("model:      LMS, log.light ~ 1 + log.Te"),
        "{text}"
    );
}

/// A CSV file in the temporary directory.
fn csv(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = path(dir, name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn bad_models_and_data_are_errors() {
    let hbk = robust("hbk.csv");
    let fails = |args: &[&str]| cpu_fails("lts", &hbk, args, 1);
    let err = fails(&["--response", "Z"]);
    assert!(err.contains("no column named `Z`") && err.contains("X1, X2, X3, Y"));
    let err = fails(&["--response", "Y", "--predictors", "X1,W"]);
    assert!(err.contains("no column named `W`"), "{err}");
    let err = fails(&["--response", "Y", "--predictors", "X1,Y"]);
    assert!(err.contains("`Y` is the response"), "{err}");
    let err = fails(&["--response", "Y", "--predictors", "X1,X1"]);
    assert!(err.contains("`X1` twice"), "{err}");
    let err = fails(&["--response", "Y", "--predictors", "X1", "--log", "X2"]);
    assert!(err.contains("--log names `X2`"), "{err}");
    let err = fails(&["--response", "Y", "--h", "20"]);
    assert!(err.contains("h = 20"), "{err}");
    // --alpha 1 gives h = n = 75: the minimax fit of every row, a valid LMS coverage.
    let (_, json) = cpu_json("lms", &hbk, &["--response", "Y", "--alpha", "1"]);
    assert_eq!(json["h"], 75);

    let animals = robust("Animals2.csv");
    let err = cpu_fails("lms", &animals, &["--response", "species"], 1);
    assert!(
        err.contains("column species") && err.contains("not a number"),
        "{err}"
    );
    let args = ["--response", "brain", "--predictors", "species"];
    let err = cpu_fails("lts", &animals, &args, 1);
    assert!(err.contains("`Mountain beaver` is not a number"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let text = "x,y,c,z\n1,2,5,1\n2,4,5,0\n3,7,5,-1\n4,8,5,3\n5,10,5,2\n6,11,5,4\n";
    let file = csv(&dir, "t.csv", text);
    let err = cpu_fails("lts", &file, &["--response", "y", "--log", "z"], 1);
    assert!(
        err.contains("--log z") && err.contains("row 1") && err.contains("positive"),
        "{err}"
    );
    let err = cpu_fails("lts", &file, &["--response", "y", "--predictors", "x,c"], 1);
    assert!(err.contains("`c` is constant"), "{err}");
    let missing = csv(&dir, "m.csv", "x,y\n1,2\n2,\n3,7\n4,8\n5,10\n");
    let err = cpu_fails("lms", &missing, &["--response", "y"], 1);
    assert!(err.contains("missing value at data row 1"), "{err}");
    let collinear = csv(
        &dir,
        "c.csv",
        "a,b,y\n1,2,1\n2,4,3\n3,6,2\n4,8,5\n5,10,4\n6,12,7\n7,14,6\n",
    );
    let err = cpu_fails("lts", &collinear, &["--response", "y"], 1);
    assert!(err.contains("singular") && err.contains("1 = b"), "{err}");
    let few = csv(&dir, "f.csv", "x,y\n1,2\n2,3\n");
    let err = cpu_fails("lts", &few, &["--response", "y"], 1);
    assert!(err.contains("too few"), "{err}");
    let err = cpu_fails("lts", path(&dir, "nope.csv"), &["--response", "y"], 1);
    assert!(err.contains("nope.csv"), "{err}");
}

#[test]
fn usage_errors_exit_with_status_2() {
    let hbk = robust("hbk.csv");
    for args in [
        &["--response", "Y", "--alpha", "0.6", "--h", "40"][..],
        &["--response", "Y", "--alpha", "0.4"],
        &["--response", "Y", "--alpha", "x"],
        &["--response", "Y", "--nsamp", "0"],
        &["--response", "Y", "--seed", "-1"],
        &["--predictors", "X1"],
    ] {
        for command in ["lts", "lms"] {
            cpu_fails(command, &hbk, args, 2);
        }
    }
    let err = cpu_fails(
        "lts",
        &hbk,
        &["--response", "Y", "--alpha", "0.6", "--h", "40"],
        2,
    );
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn cuda_backend_fits_or_says_why_not() {
    let file = robust("stackloss.csv").display().to_string();
    let args = [
        "lts",
        &file,
        "--response",
        "stack.loss",
        "--backend",
        "cuda",
        "--json",
    ];
    let out = kselect(&args);
    if out.status.success() {
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["backend"], "cuda");
        assert!(v["objective"].as_f64().unwrap() <= 2.932_391_246_119_97 * (1.0 + 1e-9));
    } else {
        let err = stderr(&out);
        assert!(!common::require_gpu(), "KSELECT_REQUIRE_GPU=1: {err}");
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.starts_with("error: ") && !err.contains("panicked"),
            "{err}"
        );
        assert!(err.contains("--backend cpu"), "{err}");
        assert!(out.stdout.is_empty());
    }
    // auto fits on the GPU when there is one, else on the CPU; the optimum either way.
    let auto = kselect(&["lts", &file, "--response", "stack.loss", "--json"]);
    assert!(auto.status.success(), "{}", stderr(&auto));
    let v: Value = serde_json::from_str(&stdout(&auto)).unwrap();
    let expected = if kselect::Device::auto().backend_name() == "cuda" {
        "cuda"
    } else {
        "cpu"
    };
    assert_eq!(v["backend"], expected);
    assert!(v["objective"].as_f64().unwrap() <= 2.932_391_246_119_97 * (1.0 + 1e-9));
}

/// The CUDA fit's JSON agrees with the CPU's as `tests/regression_gpu.rs` has the library's
/// fits agree: the same model and starts; for LTS the objective within rounding (relative
/// 1e-9: the GPU sums in another order), the same outliers, and the coefficients and scales
/// close; for LMS, whose race may end on another candidate within rounding, an objective not
/// above the CPU's.
fn assert_fits_agree(method: &str, what: &str, cuda: &Value, cpu: &Value) {
    for key in ["n", "p", "h", "terms", "starts", "seed"] {
        assert_eq!(cuda[key], cpu[key], "{what}: {key}");
    }
    let (a, b) = (
        cuda["objective"].as_f64().unwrap(),
        cpu["objective"].as_f64().unwrap(),
    );
    if method == "lms" {
        assert!(
            a <= b * (1.0 + 1e-6),
            "{what}: objective {a} on CUDA, above {b} on the CPU"
        );
        return;
    }
    assert!(
        rel(a, b) < 1e-9,
        "{what}: objective {a} on CUDA, {b} on the CPU"
    );
    for key in ["outliers", "weights"] {
        assert_eq!(cuda[key], cpu[key], "{what}: {key}");
    }
    for key in ["coefficients", "raw_coefficients"] {
        for (a, b) in f64s(&cuda[key]).into_iter().zip(f64s(&cpu[key])) {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                "{what}: {key} {a} on CUDA, {b} on the CPU"
            );
        }
    }
    for key in ["raw_scale", "scale"] {
        let (a, b) = (cuda[key].as_f64().unwrap(), cpu[key].as_f64().unwrap());
        assert!(
            rel(a, b) < 1e-6,
            "{what}: {key} {a} on CUDA, {b} on the CPU"
        );
    }
}

#[test]
fn cuda_backend_matches_cpu_for_lts_and_lms() {
    let refs = references();
    for method in ["lts", "lms"] {
        for name in ["stackloss", "Animals2"] {
            let r = &refs[name];
            let file = robust(r["file"].as_str().unwrap());
            let args = model_args(r);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let Some(cuda) = cuda_json(method, &file, &args) else {
                return;
            };
            let (_, cpu) = cpu_json(method, &file, &args);
            assert_fits_agree(method, &format!("{method} {name}"), &cuda, &cpu);
        }
    }
}

/// Runs `kselect METHOD stackloss.csv --backend cpu --response stack.loss --h H`, expects exit
/// status `code`, returns stderr.
fn stackloss_with_h_fails(method: &str, h: &str, code: i32) -> String {
    let args = ["--response", "stack.loss", "--h", h];
    cpu_fails(method, robust("stackloss.csv"), &args, code)
}

#[test]
fn lms_coverage_of_the_largest_integer_is_a_clear_error() {
    let err = stackloss_with_h_fails("lms", "18446744073709551615", 1);
    assert!(
        err.contains("h = 18446744073709551615 is not in [5, 21]"),
        "{err}"
    );
    let err = stackloss_with_h_fails("lms", "-1", 2);
    assert!(err.contains("a number of rows"), "{err}");
}

#[test]
fn lms_takes_the_coverage_of_mass_lqs() {
    let refs = references();
    for set in SETS {
        let r = &refs[set];
        let file = robust(r["file"].as_str().unwrap());
        let mut args = model_args(r);
        args.extend(["--h".to_string(), "lms".to_string()]);
        let json = fit_json("lms", &file, &args);
        assert_eq!(json["h"], r["lqs_lms_h"], "{set}");
        let want = r["lqs_lms_objective_abs_residual"].as_f64().unwrap();
        let objective = json["objective"].as_f64().unwrap();
        assert!(
            objective <= want * (1.0 + 1e-9),
            "{set}: {objective} > {want}"
        );
    }
    // Every h from p + 1 to n, and lqs(method = "lqs")'s floor((n + p + 1) / 2).
    let stackloss = robust("stackloss.csv");
    for h in ["5", "21", "lqs"] {
        let (_, json) = cpu_json("lms", &stackloss, &["--response", "stack.loss", "--h", h]);
        let want = if h == "lqs" { 13 } else { h.parse().unwrap() };
        assert_eq!(json["h"], want);
    }
    let err = stackloss_with_h_fails("lts", "lms", 1);
    assert!(err.contains("coverage rule of LMS"), "{err}");
}

#[test]
fn lms_with_too_few_rows_names_the_rows_needed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("few.csv");
    std::fs::write(&file, "y,a,b\n1,2,3\n2,1,5\n3,0,2\n").unwrap();
    let err = cpu_fails("lms", &file, &["--response", "y"], 1);
    assert!(!err.contains("is not in ["), "{err}");
    assert!(err.contains("n = 3 rows are too few for p = 3"), "{err}");
}

#[test]
fn nsamp_of_a_trillion_is_refused_at_once() {
    let hbk = robust("hbk.csv");
    let started = std::time::Instant::now();
    for command in ["lts", "lms"] {
        let err = cpu_fails(
            command,
            &hbk,
            &["--response", "Y", "--nsamp", "1000000000000"],
            1,
        );
        assert!(err.contains("nsamp = 1000000000000 is more than"), "{err}");
    }
    assert!(started.elapsed().as_secs() < 10);
}
