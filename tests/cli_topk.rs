//! `kselect topk` and `kselect threshold` end to end: `.npy` files written here (1-D and 2-D,
//! every dtype), the JSON output parsed back and checked value for value, the thresholded file
//! read back, the NaN policies, and every user error (a clear message on stderr and exit status
//! 1, or 2 for usage errors). Everything runs with `--backend cpu`, except the `--backend cuda`
//! cases, which compare with it (skipped without a GPU unless `KSELECT_REQUIRE_GPU=1`).

mod common;

use std::path::Path;

use common::cli::{
    assert_bits_eq, assert_cuda_matches_cpu, assert_own_usage_error, cpu_fails, cpu_fails_stdin,
    cpu_json, cpu_json_stdin, cpu_text, cuda_json, f64s, i64s, kselect, kselect_with_stdin,
    names_in, npy_matrix, npy_vector, npy_with_header, path, results_only, rows, stdout, u64s,
    without_file_and_time,
};
use kselect::io::{read_npy, Column};
use serde_json::Value;

/// Runs `kselect threshold FILE --backend cpu --json ARGS --out OUT`, checks success, returns
/// the text and the parsed JSON.
fn threshold_json(file: &Path, out: &Path, args: &[&str]) -> (String, Value) {
    cpu_json("threshold", file, &with_out(args, out))
}

/// Runs `kselect threshold FILE --backend cpu ARGS --out OUT`, expects exit status `code`,
/// returns stderr.
fn threshold_fails(file: &Path, out: &Path, args: &[&str], code: i32) -> String {
    cpu_fails("threshold", file, &with_out(args, out), code)
}

/// `args` and then `--out OUT`.
fn with_out<'a>(args: &[&'a str], out: &'a Path) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend(["--out", out.to_str().expect("a UTF-8 path")]);
    all
}

/// The keys of a JSON object, sorted.
fn sorted_keys(v: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    keys.sort_unstable();
    keys
}

/// A JSON list of lists of unsigned integers.
fn indices(v: &Value) -> Vec<Vec<u64>> {
    rows(v, u64s)
}

/// A JSON list of lists of numbers, with "inf", "-inf", "nan" as those values.
fn floats(v: &Value) -> Vec<Vec<f64>> {
    rows(v, f64s)
}

fn bits(rows: &[Vec<f64>]) -> Vec<Vec<u64>> {
    rows.iter()
        .map(|r| r.iter().map(|x| x.to_bits()).collect())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// topk
// ---------------------------------------------------------------------------------------------

#[test]
fn topk_json_has_exactly_the_documented_keys() {
    let dir = tempfile::tempdir().unwrap();
    let file = npy_vector(&dir, "x.npy", &[0.5f64, 3.0, -1.0, 3.0, 2.0]);
    let (text, v) = cpu_json("topk", &file, &["--k", "3"]);
    assert!(
        text.starts_with("{\"rows\": 1, \"k\": 3, \"values\": [["),
        "{text}"
    );
    assert_eq!(
        sorted_keys(&v),
        ["backend", "indices", "k", "rows", "seconds", "values"]
    );
    assert_eq!(v["rows"], 1);
    assert_eq!(v["k"], 3);
    assert_eq!(v["backend"], "cpu");
    assert!(v["seconds"].as_f64().is_some_and(|s| s >= 0.0));
    // In index order by default; sorted (ties by index) with --sorted.
    assert_eq!(indices(&v["indices"]), vec![vec![1, 3, 4]]);
    assert_eq!(bits(&floats(&v["values"])), bits(&[vec![3.0, 3.0, 2.0]]));
    let (_, v) = cpu_json("topk", &file, &["--k", "3", "--sorted", "--smallest"]);
    assert_eq!(indices(&v["indices"]), vec![vec![2, 0, 4]]);
    assert_eq!(bits(&floats(&v["values"])), bits(&[vec![-1.0, 0.5, 2.0]]));
}

#[test]
fn topk_of_a_matrix_and_of_a_vector_read_as_rows() {
    let dir = tempfile::tempdir().unwrap();
    let data = [4i64, -7, 9, 9, i64::MIN, 0, i64::MAX, 2, 5, 5, 5, 5];
    let m = npy_matrix(&dir, "m.npy", &data, 3, 4);
    let (_, v) = cpu_json("topk", &m, &["--k", "2", "--sorted"]);
    assert_eq!(v["rows"], 3);
    assert_eq!(
        indices(&v["indices"]),
        vec![vec![2, 3], vec![2, 3], vec![0, 1]]
    );
    assert_eq!(
        rows(&v["values"], i64s),
        vec![vec![9, 9], vec![i64::MAX, 2], vec![5, 5]]
    );
    // The same values as a 1-D array read as rows of 4 (and of 6, and of 12).
    let flat = npy_vector(&dir, "flat.npy", &data);
    let (_, w) = cpu_json("topk", &flat, &["--k", "2", "--sorted", "--cols", "4"]);
    assert_eq!(w["indices"], v["indices"]);
    assert_eq!(w["values"], v["values"]);
    let (_, w) = cpu_json("topk", &flat, &["--k", "1", "--smallest", "--cols", "6"]);
    assert_eq!(indices(&w["indices"]), vec![vec![4], vec![1]]);
    let (_, w) = cpu_json("topk", &flat, &["--k", "12"]);
    assert_eq!(indices(&w["indices"]), vec![(0..12).collect::<Vec<u64>>()]);
    // --cols equal to a 2-D array's columns is accepted.
    let (_, w) = cpu_json("topk", &m, &["--k", "2", "--sorted", "--cols", "4"]);
    assert_eq!(w["indices"], v["indices"]);
}

#[test]
fn topk_every_dtype() {
    let dir = tempfile::tempdir().unwrap();
    let f32s = npy_vector(&dir, "f32.npy", &[0.1f32, -0.0, 0.0, 3.5, f32::INFINITY]);
    let (text, v) = cpu_json("topk", &f32s, &["--k", "3", "--sorted"]);
    assert_eq!(indices(&v["indices"]), vec![vec![4, 3, 0]]);
    assert!(text.contains("[\"inf\", 3.5, 0.1]"), "{text}");
    let (text, _) = cpu_json("topk", &f32s, &["--k", "2", "--smallest", "--sorted"]);
    assert!(text.contains("[-0.0, 0.0]"), "{text}");
    let i32s = npy_vector(&dir, "i32.npy", &[i32::MIN, 3, i32::MAX]);
    let (text, _) = cpu_json("topk", &i32s, &["--k", "1", "--smallest"]);
    assert!(text.contains("[[-2147483648]]"), "{text}");
    let u32s = npy_vector(&dir, "u32.npy", &[7u32, u32::MAX]);
    let (text, _) = cpu_json("topk", &u32s, &["--k", "1"]);
    assert!(text.contains("[[4294967295]]"), "{text}");
    let u64s = npy_vector(&dir, "u64.npy", &[u64::MAX, (1 << 53) + 1]);
    let (text, _) = cpu_json("topk", &u64s, &["--k", "2", "--sorted"]);
    assert!(
        text.contains("[[18446744073709551615, 9007199254740993]]"),
        "{text}"
    );
    let f64s = npy_vector(&dir, "f64.npy.gz", &[1e300, -5e-324, f64::NEG_INFINITY]);
    let (text, _) = cpu_json("topk", &f64s, &["--k", "3", "--sorted", "--smallest"]);
    assert!(text.contains("[[\"-inf\", -5e-324, 1e300]]"), "{text}");
}

#[test]
fn topk_nan_policies() {
    let dir = tempfile::tempdir().unwrap();
    let data = [1.0f64, f64::NAN, 2.0, 0.5, f64::NAN, 3.0];
    let m = npy_matrix(&dir, "nan.npy", &data, 2, 3);
    let err = cpu_fails("topk", &m, &["--k", "1"], 1);
    assert!(err.contains("NaN") && err.contains("--nan"), "{err}");
    let (_, v) = cpu_json("topk", &m, &["--k", "2", "--sorted", "--nan", "last"]);
    assert_eq!(indices(&v["indices"]), vec![vec![1, 2], vec![1, 2]]);
    assert_eq!(v["values"][0][0], "nan");
    let (_, v) = cpu_json("topk", &m, &["--k", "2", "--sorted", "--nan", "omit"]);
    assert_eq!(indices(&v["indices"]), vec![vec![2, 0], vec![2, 0]]);
    let (_, v) = cpu_json(
        "topk",
        &m,
        &["--k", "3", "--smallest", "--sorted", "--nan", "last"],
    );
    assert_eq!(indices(&v["indices"]), vec![vec![0, 2, 1], vec![0, 2, 1]]);
    let err = cpu_fails("topk", &m, &["--k", "3", "--nan", "omit"], 1);
    assert!(err.contains("k = 3") && err.contains("NaN"), "{err}");
}

#[test]
fn topk_table() {
    let dir = tempfile::tempdir().unwrap();
    let file = npy_matrix(&dir, "t.npy", &[3u32, 1, 2, 9, 8, 7], 2, 3);
    let text = cpu_text("topk", &file, &["--k", "2"]);
    assert!(text.contains("2 row(s) of 3 value(s), type u32"), "{text}");
    assert!(
        text.contains("the 2 largest of each row, in index order"),
        "{text}"
    );
    let table: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.starts_with("row"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(table[0], vec!["row", "#", "index", "value"]);
    assert_eq!(
        table[1..].to_vec(),
        vec![
            vec!["0", "0", "0", "3"],
            vec!["0", "1", "2", "2"],
            vec!["1", "0", "0", "9"],
            vec!["1", "1", "1", "8"],
        ]
    );
}

#[test]
fn topk_errors() {
    let dir = tempfile::tempdir().unwrap();
    let flat = npy_vector(&dir, "flat.npy", &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let err = cpu_fails("topk", &flat, &["--k", "7"], 1);
    assert!(err.contains("k = 7") && err.contains("6"), "{err}");
    let err = cpu_fails("topk", &flat, &["--k", "0"], 1);
    assert!(err.contains("k = 0"), "{err}");
    let err = cpu_fails("topk", &flat, &["--k", "1", "--cols", "4"], 1);
    assert!(
        err.contains("--cols 4") && err.contains("multiple"),
        "{err}"
    );
    let err = cpu_fails("topk", &flat, &["--k", "3", "--cols", "2"], 1);
    assert!(err.contains("row 0 holds 2"), "{err}");
    let m = npy_matrix(&dir, "m.npy", &[1i32, 2, 3, 4, 5, 6], 2, 3);
    let err = cpu_fails("topk", &m, &["--k", "1", "--cols", "2"], 1);
    assert!(err.contains("--cols 2") && err.contains("2 x 3"), "{err}");
    // Fortran order, 3-D, not a .npy file, a missing file.
    let fortran = path(&dir, "f.npy");
    let mut bytes = Vec::new();
    kselect::io::npy::write_npy_to(&mut bytes, &[0.0f64; 6]).unwrap();
    let text = String::from_utf8_lossy(&bytes[10..74]).replace(
        "'fortran_order': False, 'shape': (6,)",
        "'fortran_order': True, 'shape': (2, 3)",
    );
    let mut header = text.trim_end().to_string();
    header.push_str(&" ".repeat(63 - header.len()));
    header.push('\n');
    let mut f = bytes[..10].to_vec();
    f.extend_from_slice(header.as_bytes());
    f.extend_from_slice(&bytes[74..]);
    std::fs::write(&fortran, f).unwrap();
    let err = cpu_fails("topk", &fortran, &["--k", "1"], 1);
    assert!(err.contains("Fortran"), "{err}");
    let csv = path(&dir, "x.csv");
    std::fs::write(&csv, "a\n1\n2\n").unwrap();
    let err = cpu_fails("topk", &csv, &["--k", "1"], 1);
    assert!(err.contains("x.csv") && err.contains(".npy"), "{err}");
    let err = cpu_fails("topk", path(&dir, "missing.npy"), &["--k", "1"], 1);
    assert!(err.contains("missing.npy"), "{err}");
    // Usage errors: no --k, --cols 0, a negative k.
    cpu_fails("topk", &flat, &[], 2);
    cpu_fails("topk", &flat, &["--k", "1", "--cols", "0"], 2);
    cpu_fails("topk", &flat, &["--k", "-1"], 2);
}

// ---------------------------------------------------------------------------------------------
// threshold
// ---------------------------------------------------------------------------------------------

#[test]
fn threshold_writes_the_thresholded_array() {
    let dir = tempfile::tempdir().unwrap();
    let x = [0.5f64, -3.0, 2.0, -0.25, 3.0, -2.0];
    let file = npy_vector(&dir, "x.npy", &x);
    let out = path(&dir, "out.npy");
    let (text, v) = threshold_json(&file, &out, &["--k", "3"]);
    assert!(
        text.starts_with("{\"n\": 6, \"k\": 3, \"threshold\": "),
        "{text}"
    );
    assert_eq!(
        sorted_keys(&v),
        [
            "backend",
            "k",
            "n",
            "seconds",
            "support",
            "threshold",
            "threshold_index"
        ]
    );
    assert_eq!(v["threshold"], 2.0);
    assert_eq!(v["threshold_index"], 2);
    assert_eq!(v["support"], serde_json::json!([1, 2, 4]));
    assert_eq!(v["backend"], "cpu");
    match read_npy(&out).unwrap() {
        Column::F64(got) => assert_bits_eq(&got, &[0.0, -3.0, 2.0, 0.0, 3.0, 0.0]),
        other => panic!("{other:?}"),
    }
    // The input file is left alone.
    assert_eq!(read_npy(&file).unwrap(), Column::F64(x.to_vec()));
}

#[test]
fn threshold_keeps_the_dtype_and_applies_the_nan_policy() {
    let dir = tempfile::tempdir().unwrap();
    let ints = npy_vector(&dir, "i.npy", &[i32::MIN, 5, -5, 1]);
    let out = path(&dir, "i_out.npy.gz");
    let (_, v) = threshold_json(&ints, &out, &["--k", "2"]);
    assert_eq!(v["threshold"], 5);
    assert_eq!(v["threshold_index"], 1);
    assert_eq!(
        read_npy(&out).unwrap(),
        Column::I32(vec![i32::MIN, 5, 0, 0])
    );
    let unsigned = npy_vector(&dir, "u.npy", &[3u64, u64::MAX, 3]);
    let out = path(&dir, "u_out.npy");
    let (text, _) = threshold_json(&unsigned, &out, &["--k", "3"]);
    assert!(
        text.contains("\"threshold\": 3, \"threshold_index\": 2"),
        "{text}"
    );
    assert_eq!(read_npy(&out).unwrap(), Column::U64(vec![3, u64::MAX, 3]));

    let nan = npy_vector(&dir, "n.npy", &[1.0f32, f32::NAN, -4.0]);
    let out = path(&dir, "n_out.npy");
    let err = threshold_fails(&nan, &out, &["--k", "1"], 1);
    assert!(err.contains("NaN"), "{err}");
    assert!(!out.exists(), "nothing written after an error");
    let (_, v) = threshold_json(&nan, &out, &["--k", "2", "--nan", "omit"]);
    assert_eq!(v["support"], serde_json::json!([0, 2]));
    assert_eq!(read_npy(&out).unwrap(), Column::F32(vec![1.0, 0.0, -4.0]));
    let (_, v) = threshold_json(&nan, &out, &["--k", "1", "--nan", "last"]);
    assert_eq!(v["threshold"], "nan");
    assert_eq!(v["threshold_index"], 1);
    let err = threshold_fails(&nan, &out, &["--k", "3", "--nan", "omit"], 1);
    assert!(err.contains("k = 3"), "{err}");
}

#[test]
fn threshold_summary_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = npy_vector(&dir, "x.npy", &[1i64, -9, 4]);
    let out = path(&dir, "o.npy");
    let text = cpu_text("threshold", &file, &with_out(&["--k", "2"], &out));
    assert!(text.contains("threshold: 4 at index 2"), "{text}");
    assert!(text.contains("support:   1 2"), "{text}");
    assert!(text.contains("3 values of type i64"), "{text}");
    let err = threshold_fails(&file, &out, &["--k", "4"], 1);
    assert!(err.contains("k = 4"), "{err}");
    let m = npy_matrix(&dir, "m.npy", &[1.0f64, 2.0, 3.0, 4.0], 2, 2);
    let err = threshold_fails(&m, &out, &["--k", "1"], 1);
    assert!(err.contains("1-D"), "{err}");
    let bad_dir = path(&dir, "no/such/dir/o.npy");
    let err = threshold_fails(&file, &bad_dir, &["--k", "1"], 1);
    assert!(err.contains("o.npy"), "{err}");
    cpu_fails("threshold", &file, &["--k", "1"], 2); // no --out
}

#[test]
fn dash_reads_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let data = [4i32, -7, 9, 1, 8, 0];
    let m = npy_matrix(&dir, "m.npy", &data, 2, 3);
    let bytes = std::fs::read(&m).unwrap();
    let args = ["--k", "2", "--sorted"];
    let from_stdin = cpu_json_stdin("topk", &args, bytes.clone());
    let (_, from_file) = cpu_json("topk", &m, &args);
    assert_eq!(
        without_file_and_time(&from_stdin),
        without_file_and_time(&from_file)
    );
    assert_eq!(
        indices(&from_stdin["indices"]),
        vec![vec![2, 0], vec![1, 0]]
    );
    let text = stdout(&kselect_with_stdin(
        &["topk", "-", "--backend", "cpu", "--k", "1"],
        bytes.clone(),
    ));
    assert!(text.starts_with("file:      <stdin> (2 row(s)"), "{text}");

    let x = npy_vector(&dir, "x.npy.gz", &[0.5f64, -3.0, 2.0]);
    let out = path(&dir, "out.npy");
    let gz = std::fs::read(&x).unwrap();
    let v = cpu_json_stdin("threshold", &with_out(&["--k", "1"], &out), gz);
    assert_eq!(v["support"], serde_json::json!([1]));
    assert_eq!(read_npy(&out).unwrap(), Column::F64(vec![0.0, -3.0, 0.0]));
    let err = cpu_fails_stdin(
        "threshold",
        &with_out(&["--k", "1"], &out),
        bytes[..50].to_vec(),
    );
    assert!(err.contains("<stdin>: truncated"), "{err}");
}

#[test]
fn npy_shape_zero_rows_huge_cols_allocates_nothing() {
    // A header that claims 10^15 columns of no rows: no data back them, and nothing is
    // allocated for them. topk has no row to take from.
    let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1000000000000000), }";
    let bytes = npy_with_header(header);
    let v = cpu_json_stdin("topk", &["--k", "3"], bytes);
    assert_eq!(
        (v["rows"].as_u64(), v["indices"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );
}

#[test]
fn help_mentions_both_commands() {
    let out = kselect(&["--help"]);
    let text = stdout(&out);
    assert!(
        text.contains("kselect topk") && text.contains("kselect threshold"),
        "{text}"
    );
    let out = kselect(&["threshold", "--help"]);
    assert!(stdout(&out).contains("threshold_index"));
}

#[test]
fn output_onto_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = npy_vector(&dir, "x.npy", &[1.0f64, -9.0, 4.0]);
    let before = std::fs::read(&file).unwrap();
    let sub = path(&dir, "sub");
    std::fs::create_dir(&sub).unwrap();
    let mut spellings = vec![file.clone(), sub.join("../x.npy")];
    #[cfg(unix)]
    {
        let link = path(&dir, "link.npy");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        spellings.push(link);
        let hard = path(&dir, "hard.npy");
        std::fs::hard_link(&file, &hard).unwrap();
        spellings.push(hard);
    }
    for out in &spellings {
        let err = threshold_fails(&file, out, &["--k", "2"], 2);
        assert!(
            err.starts_with(&format!(
                "error: --out {} is the input file {}",
                out.display(),
                file.display()
            )),
            "{err}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), before, "{}", out.display());
    }
}

#[test]
fn threshold_output_is_replaced_only_when_complete() {
    let dir = tempfile::tempdir().unwrap();
    let file = npy_vector(&dir, "x.npy", &[1.0f64, -9.0, 4.0]);
    let out = path(&dir, "o.npy.gz");
    std::fs::write(&out, b"an earlier result").unwrap();
    // A failed run leaves the existing output as it was, and no temporary file.
    threshold_fails(&file, &out, &["--k", "7"], 1);
    assert_eq!(std::fs::read(&out).unwrap(), b"an earlier result");
    assert_eq!(names_in(&dir), ["o.npy.gz", "x.npy"]);
    // A successful one replaces it (gzip-compressed, as its name asks).
    threshold_json(&file, &out, &["--k", "1"]);
    assert_eq!(read_npy(&out).unwrap(), Column::F64(vec![0.0, -9.0, 0.0]));
    assert_eq!(names_in(&dir), ["o.npy.gz", "x.npy"]);
    // An output in a missing directory: one sentence that names it.
    let missing = path(&dir, "missing/o.npy");
    let err = threshold_fails(&file, &missing, &["--k", "1"], 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
}

#[test]
fn negative_k_is_a_clear_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = npy_vector(&dir, "x.npy", &[1.0f64, -9.0, 4.0, 2.0]);
    let out = path(&dir, "o.npy");
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "topk",
            &["--k", "-1"],
            "k is the number of values to take from each row",
        ),
        (
            "topk",
            &["--k", "1", "--cols", "-2"],
            "--cols is the number",
        ),
        (
            "threshold",
            &["--k", "-3", "--out", out.to_str().unwrap()],
            "k is the number of entries to keep",
        ),
        (
            "threshold",
            &["-k", "-3", "--out", out.to_str().unwrap()],
            "k is the number of entries to keep",
        ),
    ];
    for (command, args, want) in cases {
        assert_own_usage_error(command, &file, args, want);
    }
    assert!(!out.exists());
}

#[test]
fn algorithm_on_topk_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = npy_vector(&dir, "x.npy", &[1.0f64, -9.0, 4.0, 2.0]);
    let out = path(&dir, "o.npy");
    let out = out.to_str().unwrap();
    let cases: [(&str, &[&str], &str); 5] = [
        (
            "topk",
            &["--k", "2", "--algorithm", "radix"],
            "`kselect topk` has no --algorithm option; it is an option of `select`, \
             `quantiles` and `recover`",
        ),
        (
            "topk",
            &["--k", "2", "--algorithm=radix"],
            "`kselect topk` has no --algorithm option",
        ),
        (
            "topk",
            &["--k", "2", "--method", "linear"],
            "`kselect topk` has no --method option; it is an option of `select` and `quantiles`",
        ),
        (
            "threshold",
            &["--k", "2", "--out", out, "--column", "a"],
            "`kselect threshold` has no --column option; it is an option of `select` and \
             `quantiles`",
        ),
        (
            "topk",
            &["--k", "2", "--out", out],
            "`kselect topk` has no --out option; it is an option of `threshold`",
        ),
    ];
    for (command, args, want) in cases {
        let err = cpu_fails(command, &file, args, 2);
        assert!(
            err.starts_with(&format!("error: {want}")),
            "{command} {args:?}: {err}"
        );
        assert!(!err.contains("tip:"), "{err}");
    }
}

#[test]
fn cuda_backend_matches_cpu_for_topk_and_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<f64> = (0..3000)
        .map(|i| ((i * 7919) % 997) as f64 / 4.0 - 100.0)
        .collect();
    let ints: Vec<i32> = values.iter().map(|&x| (x * 4.0) as i32).collect();
    let m = npy_matrix(&dir, "m.npy", &values, 30, 100);
    let v = npy_vector(&dir, "v.npy", &values);
    let i = npy_vector(&dir, "i.npy", &ints);
    let topk: [(&Path, &[&str]); 5] = [
        (&m, &["--k", "5"]),
        (&m, &["--k", "7", "--sorted", "--smallest"]),
        (&v, &["--k", "25", "--sorted"]),
        (&v, &["--k", "3", "--cols", "50"]),
        (&i, &["--k", "10", "--smallest"]),
    ];
    for (file, args) in topk {
        if assert_cuda_matches_cpu("topk", file, args).is_none() {
            return;
        }
    }
    for (file, k) in [(&v, "40"), (&i, "1"), (&i, "3000")] {
        let cpu_out = path(&dir, "cpu.npy");
        let cuda_out = path(&dir, "cuda.npy");
        let cuda = cuda_json("threshold", file, &with_out(&["--k", k], &cuda_out))
            .expect("a GPU, since topk ran on one");
        let (_, cpu) = threshold_json(file, &cpu_out, &["--k", k]);
        assert_eq!(results_only(&cuda), results_only(&cpu), "threshold --k {k}");
        assert_eq!(
            std::fs::read(&cuda_out).unwrap(),
            std::fs::read(&cpu_out).unwrap(),
            "threshold --k {k}: the written arrays"
        );
    }
}

#[cfg(unix)]
#[test]
fn output_onto_the_file_standard_input_reads_is_refused() {
    // `kselect threshold - --out x.npy < x.npy`: standard input is that file.
    let dir = tempfile::tempdir().unwrap();
    let file = npy_vector(&dir, "x.npy", &[1.0f64, -9.0, 4.0]);
    let before = std::fs::read(&file).unwrap();
    let out = std::process::Command::new(common::cli::binary())
        .args(["threshold", "-", "--backend", "cpu", "--k", "2", "--out"])
        .arg(&file)
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is the input file read from standard input"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(names_in(&dir), vec!["x.npy"]);
}
