//! The `kselect` binary end to end: `.npy` files of every dtype written by numpy (fixtures in
//! `tests/data/cli/`, made by `make_fixtures.py` there), CSV files written here, the table and
//! the JSON output (parsed back and checked value for value), the NaN policies, and every
//! user error (a clear message on stderr and exit status 1, or 2 for usage errors).
//!
//! Every selection runs with `--backend cpu`, except the test of the backend flag itself and
//! the `--backend cuda` cases, which compare with `--backend cpu` and skip (with a note)
//! without a GPU unless `KSELECT_REQUIRE_GPU=1`. The binary is the one in `KSELECT_BIN`, or
//! cargo's (see `common::cli::binary`).

mod common;

use std::path::Path;
use std::process::Output;

use common::cli::{
    assert_bits_eq, assert_cuda_matches_cpu, assert_own_usage_error, binary_from, cpu_fails,
    cpu_json, cpu_json_stdin, cpu_text, f64s, i64s, kselect, kselect_with_stdin, names_in, path,
    repository_file, stderr, stdout, u64s, words_of_lines,
};
use serde_json::Value;

/// A fixture of `tests/data/cli/`.
fn fixture(name: &str) -> String {
    repository_file("tests/data/cli")
        .join(name)
        .display()
        .to_string()
}

/// Runs `kselect select FILE ARGS --backend cpu --json`, checks success, parses the JSON.
fn select_json(file: &str, args: &[&str]) -> Value {
    cpu_json("select", file, args).1
}

/// Runs `kselect select FILE ARGS --backend cpu`, expects exit status `code`, returns stderr.
fn select_fails(file: &str, args: &[&str], code: i32) -> String {
    cpu_fails("select", file, args, code)
}

/// Runs `kselect select FIXTURE --k 0 --backend BACKEND ARGS` on the repository's `fixture`.
fn select_first_on(fixture_name: &str, backend: &str, args: &[&str]) -> Output {
    let file = fixture(fixture_name);
    kselect(&[&["select", &file, "--k", "0", "--backend", backend], args].concat())
}

/// A temporary CSV file with `content`.
fn csv_file(dir: &tempfile::TempDir, name: &str, content: &str) -> String {
    let path = path(dir, name);
    std::fs::write(&path, content).expect("write the CSV fixture");
    path.display().to_string()
}

// ---------------------------------------------------------------------------------------------
// .npy input, every dtype
// ---------------------------------------------------------------------------------------------

#[test]
fn f64_npy_every_rank_exact() {
    // 0.1, 1e300, -5e-324, 2.0, -inf, inf, 1.2345678901234567e-7
    let json = select_json(&fixture("f64.npy"), &["--k", "0,1,2,3,4,5,6"]);
    assert_eq!(json["n"], 7);
    assert_eq!(json["dtype"], "f64");
    assert_eq!(json["format"], "npy");
    assert_eq!(json["values"][0], "-inf");
    assert_eq!(json["values"][6], "inf");
    assert_bits_eq(
        &f64s(&json["values"]),
        &[
            f64::NEG_INFINITY,
            -5e-324,
            1.2345678901234567e-7,
            0.1,
            2.0,
            1e300,
            f64::INFINITY,
        ],
    );
    assert_eq!(u64s(&json["ranks"]), vec![0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(json["largest"], false);
    assert_eq!(json["backend"], "cpu");
    assert!(json["device"].as_str().unwrap_or("").starts_with("cpu"));
    assert!(json["seconds"].as_f64().is_some_and(|s| s >= 0.0));
    assert!(json["algorithm"].as_str().is_some_and(|a| a != "auto"));
}

#[test]
fn f32_values_round_trip_as_f32() {
    // 3.5, -1.25, 0.1, 1e-45, 3.4028235e38, -inf, -0.0, 16777217 (stored as 16777216)
    let want = [
        f32::NEG_INFINITY,
        -1.25,
        -0.0,
        1e-45,
        0.1,
        3.5,
        16777216.0,
        3.4028235e38,
    ];
    for file in ["f32.npy", "f32_v2.npy"] {
        let (text, json) = cpu_json("select", fixture(file), &["--k", "0,1,2,3,4,5,6,7"]);
        assert_eq!(json["dtype"], "f32");
        let values = json["values"].as_array().expect("values");
        assert_eq!(values[0], "-inf");
        for (v, w) in values.iter().zip(want).skip(1) {
            // Through f64 and through the JSON text itself: the same f32, bit for bit.
            let via_f64 = v.as_f64().expect("a number") as f32;
            let via_text: f32 = v.to_string().parse().expect("an f32");
            assert_eq!(via_f64.to_bits(), w.to_bits(), "{v} vs {w:?}");
            assert_eq!(via_text.to_bits(), w.to_bits(), "{v} vs {w:?}");
        }
        // The shortest text: 0.1f32 prints as 0.1, not 0.10000000149011612.
        assert!(text.contains("0.1,") || text.contains("0.1]"), "{text}");
    }
}

#[test]
fn i32_and_i64_npy_exact() {
    for file in ["i32.npy", "i32_v3.npy"] {
        let json = select_json(&fixture(file), &["--k", "0", "--k", "4", "--k", "2"]);
        assert_eq!(json["dtype"], "i32");
        assert_eq!(
            i64s(&json["values"]),
            vec![i32::MIN as i64, i32::MAX as i64, 0]
        );
    }
    for file in ["i64.npy", "i64_be.npy"] {
        let json = select_json(&fixture(file), &["--k", "0,1,2,3,4"]);
        assert_eq!(json["dtype"], "i64");
        assert_eq!(
            i64s(&json["values"]),
            vec![i64::MIN, -1, 5, (1 << 53) + 1, i64::MAX]
        );
    }
}

#[test]
fn u32_and_u64_npy_exact_above_2_pow_53() {
    for file in ["u32.npy", "u32_be.npy"] {
        let json = select_json(&fixture(file), &["--k", "2,0"]);
        assert_eq!(json["dtype"], "u32");
        assert_eq!(u64s(&json["values"]), vec![u32::MAX as u64, 0]);
    }
    for file in ["u64.npy", "u64.npy.gz"] {
        let (text, json) = cpu_json("select", fixture(file), &["--k", "0,1,2,3,4"]);
        // Printed as integers, never through f64.
        assert!(
            text.contains("[0, 9007199254740992, 9007199254740993, 12345678901234567891, 18446744073709551615]"),
            "{text}"
        );
        assert_eq!(
            u64s(&json["values"]),
            vec![0, 1 << 53, (1 << 53) + 1, 12345678901234567891, u64::MAX]
        );
    }
}

#[test]
fn big_endian_npy_reads_like_little_endian() {
    let le = select_json(&fixture("f64.npy"), &["--k", "0,1,2,3,4,5,6"]);
    let be = select_json(&fixture("f64_be.npy"), &["--k", "0,1,2,3,4,5,6"]);
    assert_eq!(le["values"], be["values"]);
}

#[test]
fn npy_detected_by_content_whatever_the_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("data.bin");
    std::fs::copy(fixture("i64.npy"), &path).expect("copy");
    let json = select_json(&path.display().to_string(), &["--k", "0"]);
    assert_eq!(json["format"], "npy");
    assert_eq!(i64s(&json["values"]), vec![i64::MIN]);
}

// ---------------------------------------------------------------------------------------------
// Ranks: --largest, several --k, the table
// ---------------------------------------------------------------------------------------------

#[test]
fn largest_counts_from_the_maximum() {
    let json = select_json(&fixture("i32.npy"), &["--largest", "--k", "0,1,4,0"]);
    assert_eq!(json["largest"], true);
    assert_eq!(u64s(&json["k"]), vec![0, 1, 4, 0]);
    assert_eq!(u64s(&json["ranks"]), vec![4, 3, 0, 4]);
    assert_eq!(
        i64s(&json["values"]),
        vec![i32::MAX as i64, 42, i32::MIN as i64, i32::MAX as i64]
    );
    let err = select_fails(&fixture("i32.npy"), &["--largest", "--k", "5"], 1);
    assert!(err.contains("k = 5") && err.contains("5 values"), "{err}");
}

#[test]
fn several_ranks_in_the_order_given() {
    let json = select_json(&fixture("u64.npy"), &["--k", "4", "--k", "0,4", "-k", "1"]);
    assert_eq!(u64s(&json["k"]), vec![4, 0, 4, 1]);
    assert_eq!(u64s(&json["ranks"]), vec![4, 0, 4, 1]);
    assert_eq!(u64s(&json["values"]), vec![u64::MAX, 0, u64::MAX, 1 << 53]);
}

#[test]
fn every_cpu_algorithm_gives_the_same_values() {
    let want = select_json(&fixture("f64.npy"), &["--k", "0,3,6"])["values"].clone();
    for algorithm in kselect::Algorithm::cpu_algorithms() {
        let json = select_json(
            &fixture("f64.npy"),
            &["--k", "0,3,6", "--algorithm", algorithm.name()],
        );
        assert_eq!(json["values"], want, "{algorithm}");
        if *algorithm != kselect::Algorithm::Auto {
            assert_eq!(json["algorithm"], algorithm.name());
        }
    }
}

#[test]
fn table_output() {
    let text = cpu_text("select", fixture("u64.npy"), &["--k", "4,0", "--median"]);
    assert!(text.contains("5 of type u64"), "{text}");
    assert!(text.contains("rank"), "{text}");
    let rows = words_of_lines(&text);
    assert!(rows.contains(&vec!["4", "18446744073709551615"]), "{text}");
    assert!(rows.contains(&vec!["0", "0"]), "{text}");
    assert!(rows.iter().any(|r| r.first() == Some(&"median")), "{text}");

    let out = kselect(&[
        "select",
        &fixture("i32.npy"),
        "--backend",
        "cpu",
        "--k",
        "0",
        "--largest",
    ]);
    let text = stdout(&out);
    assert!(text.contains("k (largest)"), "{text}");
    let rows = words_of_lines(&text);
    assert!(rows.contains(&vec!["0", "4", "2147483647"]), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Quantiles and the median
// ---------------------------------------------------------------------------------------------

#[test]
fn quantiles_and_median_by_numpy_method() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = csv_file(&dir, "q.csv", "x\n1.0\n3.0\n2.0\n10.0\n");
    // numpy.quantile([1, 3, 2, 10], [0.25, 0.5], method=...)
    for (method, want) in [
        ("linear", [1.75, 2.5]),
        ("lower", [1.0, 2.0]),
        ("hazen", [1.5, 2.5]),
        ("inverted_cdf", [1.0, 2.0]),
    ] {
        let json = select_json(
            &file,
            &["-q", "0.25", "--quantile", "0.5", "--method", method],
        );
        assert_eq!(json["method"], method);
        assert_eq!(f64s(&json["quantiles"]["q"]), vec![0.25, 0.5]);
        assert_eq!(
            f64s(&json["quantiles"]["values"]),
            want.to_vec(),
            "{method}"
        );
        assert_eq!(u64s(&json["values"]), Vec::<u64>::new());
    }
    let json = select_json(&file, &["--median", "--k", "3"]);
    assert_eq!(json["median"], 2.5);
    assert_eq!(f64s(&json["values"]), vec![10.0]);
    assert!(json.get("quantiles").is_none());
    // --method applies to --quantile only: --median is numpy.median whatever the method.
    let json = select_json(&file, &["--median", "--method", "lower"]);
    assert_eq!(json["median"], 2.5);
    assert_eq!(json["method"], "lower");

    let err = select_fails(&file, &["-q", "1.5"], 2);
    assert!(err.contains("1.5") && err.contains("[0, 1]"), "{err}");
    let err = select_fails(&file, &["--median", "--method", "type7"], 2);
    assert!(
        err.contains("type7") && err.contains("median_unbiased"),
        "{err}"
    );
}

/// A temporary 1-D `.npy` file of `data`.
fn npy_file<T: kselect::Element>(dir: &tempfile::TempDir, name: &str, data: &[T]) -> String {
    let path = path(dir, name);
    kselect::io::write_npy(&path, data).expect("write the .npy fixture");
    path.display().to_string()
}

/// `--median` read the quantile 0.5, which interpolates next to an infinity: NaN for
/// numpy.median([inf, -10, 4]) == 4 and numpy.nanmedian([inf, nan, nan, nan]) == inf.
#[test]
fn median_option_is_numpys_median_with_infinities() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = npy_file(&dir, "inf.npy", &[f32::INFINITY, -10.0, 4.0]);
    for method in ["linear", "lower", "hazen"] {
        let json = select_json(&file, &["--median", "--method", method]);
        assert_eq!(json["dtype"], "f32");
        assert_eq!(json["median"], 4.0, "--method {method}");
    }
    let text = cpu_text("select", &file, &["--median"]);
    let rows = words_of_lines(&text);
    assert!(rows.contains(&vec!["median", "4.0"]), "{text}");

    let file = npy_file(
        &dir,
        "nan.npy",
        &[f32::INFINITY, f32::NAN, f32::NAN, f32::NAN],
    );
    let json = select_json(&file, &["--median", "--nan", "omit"]);
    assert_eq!(json["nan_count"], 3);
    assert_eq!(json["median"], "inf");
    // numpy.median: NaN when any value is NaN.
    let json = select_json(&file, &["--median", "--nan", "last"]);
    assert_eq!(json["median"], "nan");
    let err = select_fails(&file, &["--median"], 1);
    assert!(err.contains("3 NaN"), "{err}");
    let err = select_fails(
        &npy_file(&dir, "all_nan.npy", &[f64::NAN; 2]),
        &["--median", "--nan", "omit"],
        1,
    );
    assert!(err.contains("empty"), "{err}");
}

/// The mean of the two middle values as numpy computes it: in float32 for f4 data (numpy:
/// float32(0.15), printed as the f64 of that float32), in float64 for integers; the finite
/// mean where numpy's sum overflows to inf.
#[test]
fn median_option_is_the_mean_of_the_two_middle_values_like_numpy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = npy_file(&dir, "f32.npy", &[0.2f32, 0.9, 0.1, -1.0]);
    let (text, _) = cpu_json("select", &file, &["--median"]);
    let want = format!("\"median\": {:?},", f64::from(0.15f32));
    assert!(text.contains(&want), "{want} missing from {text}");
    let file = npy_file(
        &dir,
        "i64.npy",
        &[(1i64 << 53) + 1, (1 << 53) + 2, -1, 1 << 62],
    );
    assert_eq!(
        select_json(&file, &["--median"])["median"],
        9007199254740992.0
    );
    let file = npy_file(&dir, "big.npy", &[1e308, 1.5e308]);
    assert_eq!(select_json(&file, &["--median"])["median"], 1.25e308);
    let file = npy_file(&dir, "inf2.npy", &[f64::INFINITY, f64::NEG_INFINITY]);
    assert_eq!(select_json(&file, &["--median"])["median"], "nan");
}

// ---------------------------------------------------------------------------------------------
// NaN policies
// ---------------------------------------------------------------------------------------------

#[test]
fn nan_is_an_error_by_default() {
    let err = select_fails(&fixture("nan_f64.npy"), &["--k", "0"], 1);
    assert!(err.contains("NaN") && err.contains("2 NaN"), "{err}");
    assert!(err.contains("index 1"), "{err}");
    assert!(err.contains("--nan omit"), "{err}");
}

#[test]
fn nan_omit_and_last() {
    // [1, nan, 3, nan, 2]
    let json = select_json(&fixture("nan_f64.npy"), &["--nan", "omit", "--k", "0,2"]);
    assert_eq!(json["n"], 5);
    assert_eq!(json["nan_count"], 2);
    assert_eq!(json["nan_policy"], "omit");
    assert_eq!(f64s(&json["values"]), vec![1.0, 3.0]);
    let json = select_json(
        &fixture("nan_f64.npy"),
        &["--nan", "omit", "--largest", "--k", "0"],
    );
    assert_eq!(u64s(&json["ranks"]), vec![2]);
    assert_eq!(f64s(&json["values"]), vec![3.0]);
    let err = select_fails(&fixture("nan_f64.npy"), &["--nan", "omit", "--k", "3"], 1);
    assert!(err.contains("k = 3") && err.contains("3 values"), "{err}");

    let json = select_json(&fixture("nan_f64.npy"), &["--nan", "last", "--k", "2,3,4"]);
    assert_eq!(json["values"][0], 3.0);
    assert_eq!(json["values"][1], "nan");
    assert_eq!(json["values"][2], "nan");
    // [nan, -2.5, inf] as f32: the largest is NaN under `last`, +inf under `omit`.
    let json = select_json(
        &fixture("nan_f32.npy"),
        &["--nan", "last", "--largest", "--k", "0,1,2"],
    );
    assert_eq!(json["values"], serde_json::json!(["nan", "inf", -2.5]));
    let json = select_json(
        &fixture("nan_f32.npy"),
        &["--nan", "omit", "--largest", "--k", "0"],
    );
    assert_eq!(json["values"], serde_json::json!(["inf"]));
}

// ---------------------------------------------------------------------------------------------
// CSV input
// ---------------------------------------------------------------------------------------------

#[test]
fn csv_named_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = csv_file(
        &dir,
        "t.csv",
        "id,name,delay,big\n1,a,5,18446744073709551615\n2,\"b, c\",-3,9007199254740993\n3,d,12,0\n",
    );
    let json = select_json(&file, &["--column", "delay", "--k", "0,1,2"]);
    assert_eq!(json["format"], "csv");
    assert_eq!(json["column"], "delay");
    assert_eq!(json["dtype"], "i64");
    assert_eq!(i64s(&json["values"]), vec![-3, 5, 12]);
    let json = select_json(&file, &["-c", "big", "--k", "0,1,2"]);
    assert_eq!(json["dtype"], "u64");
    assert_eq!(u64s(&json["values"]), vec![0, 9007199254740993, u64::MAX]);
    // One column: no --column needed.
    let one = csv_file(&dir, "one.csv", "v\n0.5\n-0.25\n");
    let json = select_json(&one, &["--k", "0"]);
    assert_eq!(json["dtype"], "f64");
    assert_eq!(f64s(&json["values"]), vec![-0.25]);
}

#[test]
fn csv_missing_values_follow_the_nan_policy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = csv_file(&dir, "m.csv", "a,b\n1,4\n,5\nNA,6\n7,nan\n3,NaN\n");
    let err = select_fails(&file, &["-c", "a", "--k", "0"], 1);
    assert!(err.contains("NaN"), "{err}");
    let json = select_json(&file, &["-c", "a", "--nan", "omit", "--k", "0,1,2"]);
    assert_eq!(json["dtype"], "f64"); // integers with missing values are read as f64
    assert_eq!(json["n"], 5);
    assert_eq!(json["nan_count"], 2);
    assert_eq!(f64s(&json["values"]), vec![1.0, 3.0, 7.0]);
    let json = select_json(
        &file,
        &["-c", "b", "--nan", "last", "--largest", "--k", "0,2"],
    );
    assert_eq!(json["values"], serde_json::json!(["nan", 6.0]));
}

#[test]
fn gzip_csv() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.csv.gz");
    let file = std::fs::File::create(&path).expect("create");
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    gz.write_all(b"x,y\n1,-1e300\n2,1e-300\n")
        .and_then(|()| gz.finish().map(|_| ()))
        .expect("write gz");
    let json = select_json(&path.display().to_string(), &["-c", "y", "--k", "0,1"]);
    assert_eq!(f64s(&json["values"]), vec![-1e300, 1e-300]);
}

#[test]
fn real_dataset_flights_dep_delay() {
    // datasets/flights.csv.gz: 336,776 flights, 8,255 without a departure delay.
    let file = repository_file("datasets/flights.csv.gz")
        .display()
        .to_string();
    let json = select_json(
        &file,
        &[
            "-c",
            "dep_delay",
            "--nan",
            "omit",
            "--k",
            "0,1",
            "--median",
            "-q",
            "0.9,0.99",
        ],
    );
    assert_eq!(json["n"], 336776);
    assert_eq!(json["nan_count"], 8255);
    assert_eq!(f64s(&json["values"]), vec![-43.0, -33.0]);
    assert_eq!(json["median"], -2.0);
    assert_eq!(f64s(&json["quantiles"]["values"]), vec![49.0, 191.0]);
    let json = select_json(&file, &["-c", "distance", "--largest", "--k", "0"]);
    assert_eq!(json["dtype"], "i64");
    assert_eq!(i64s(&json["values"]), vec![4983]);
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn missing_file() {
    let err = select_fails("/nonexistent/dir/data.npy", &["--k", "0"], 1);
    assert!(err.contains("/nonexistent/dir/data.npy"), "{err}");
    let err = select_fails("/nonexistent/data.csv", &["--k", "0"], 1);
    assert!(err.contains("No such file"), "{err}");
}

#[test]
fn empty_inputs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let err = select_fails(&csv_file(&dir, "empty.csv", ""), &["--k", "0"], 1);
    assert!(err.contains("empty"), "{err}");
    let err = select_fails(&csv_file(&dir, "header.csv", "x\n"), &["--k", "0"], 1);
    assert!(err.contains("empty"), "{err}");
    let err = select_fails(&fixture("empty_f64.npy"), &["--k", "0"], 1);
    assert!(err.contains("empty"), "{err}");
    // Only NaNs, omitted: nothing left.
    let err = select_fails(
        &csv_file(&dir, "na.csv", "x\nNA\n\n"),
        &["--k", "0", "--nan", "omit"],
        1,
    );
    assert!(err.contains("empty"), "{err}");
    let err = select_fails(&csv_file(&dir, "e.npy", ""), &["--k", "0"], 1);
    assert!(err.contains("empty"), "{err}");
}

#[test]
fn rank_out_of_range() {
    let err = select_fails(&fixture("i32.npy"), &["--k", "5"], 1);
    assert!(err.contains("k = 5") && err.contains("5 values"), "{err}");
    let err = select_fails(&fixture("i32.npy"), &["--k", "-1"], 2);
    assert!(err.contains("-1"), "{err}");
}

#[test]
fn malformed_csv() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ragged = csv_file(&dir, "ragged.csv", "a,b\n1,2\n3,4\n5\n");
    let err = select_fails(&ragged, &["-c", "a", "--k", "0"], 1);
    assert!(err.contains("row 3") && err.contains("ragged.csv"), "{err}");
    assert!(
        err.contains("1 field") && err.contains("header has 2"),
        "{err}"
    );

    let text = csv_file(&dir, "text.csv", "a,b\n1,2\n3,four\n");
    let err = select_fails(&text, &["-c", "b", "--k", "0"], 1);
    assert!(err.contains("row 2") && err.contains("column b"), "{err}");
    assert!(err.contains("`four`"), "{err}");

    let err = select_fails(&text, &["-c", "c", "--k", "0"], 1);
    assert!(
        err.contains("no column named `c`") && err.contains("a, b"),
        "{err}"
    );

    let err = select_fails(&text, &["--k", "0"], 1);
    assert!(
        err.contains("2 columns (a, b)") && err.contains("--column"),
        "{err}"
    );
}

#[test]
fn unsupported_npy() {
    let err = select_fails(&fixture("f16.npy"), &["--k", "0"], 1);
    assert!(err.contains("'<f2'") && err.contains("supported"), "{err}");
    let err = select_fails(&fixture("c64.npy"), &["--k", "0"], 1);
    assert!(err.contains("'<c8'") && err.contains("complex"), "{err}");
    let err = select_fails(&fixture("f64_2d.npy"), &["--k", "0"], 1);
    assert!(err.contains("shape (2, 3)") && err.contains("1-D"), "{err}");
    let err = select_fails(&fixture("f64.npy"), &["--k", "0", "--column", "x"], 1);
    assert!(err.contains("column"), "{err}");

    // Truncated: the header announces more values than the file holds.
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = std::fs::read(fixture("f64.npy")).expect("read fixture");
    let cut = dir.path().join("cut.npy");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).expect("write");
    let err = select_fails(&cut.display().to_string(), &["--k", "0"], 1);
    assert!(
        err.contains("truncated") && err.contains("7 values"),
        "{err}"
    );
    let bad = dir.path().join("bad.npy");
    std::fs::write(&bad, b"not numpy at all").expect("write");
    let err = select_fails(&bad.display().to_string(), &["--k", "0"], 1);
    assert!(err.contains("magic"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let err = select_fails(
        &fixture("f64.npy"),
        &["--k", "0", "--algorithm", "heapsort"],
        2,
    );
    assert!(
        err.contains("heapsort") && err.contains("floyd-rivest"),
        "{err}"
    );
    let err = select_fails(&fixture("f64.npy"), &["--k", "0", "--nan", "skip"], 2);
    assert!(err.contains("skip"), "{err}");
    // Nothing to select.
    let err = select_fails(&fixture("f64.npy"), &[], 2);
    assert!(err.contains("--k"), "{err}");
    let out = kselect(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let out = select_first_on("f64.npy", "tpu", &[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn backend_flag() {
    let out = select_first_on("f64.npy", "cuda", &["--json"]);
    match kselect::Device::cuda(0) {
        Err(e) => {
            assert!(!common::require_gpu(), "KSELECT_REQUIRE_GPU=1: {e}");
            assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
            let err = stderr(&out);
            assert!(err.starts_with("error: ") && err.contains("CUDA"), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
        Ok(_) => {
            assert!(out.status.success(), "{}", stderr(&out));
            let json: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
            assert_eq!(json["backend"], "cuda");
            assert_eq!(json["values"], serde_json::json!(["-inf"]));
        }
    }
    // auto runs somewhere, and says where.
    let out = kselect(&["select", &fixture("i64.npy"), "--k", "0", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert!(
        json["backend"] == "cpu" || json["backend"] == "cuda",
        "{json}"
    );
    assert_eq!(i64s(&json["values"]), vec![i64::MIN]);
    // An algorithm the CPU has but CUDA has not is refused on CUDA only.
    let out = select_first_on("i64.npy", "cuda", &["--algorithm", "introselect"]);
    assert_eq!(out.status.code(), Some(1));
}

// ---------------------------------------------------------------------------------------------
// Standard input, pipes and FIFOs: every input read once
// ---------------------------------------------------------------------------------------------

/// A CSV column `a` of 0 to n - 1, one a line.
fn counting_csv(n: usize) -> Vec<u8> {
    let mut text = String::from("a\n");
    for i in 0..n {
        text.push_str(&format!("{i}\n"));
    }
    text.into_bytes()
}

/// `data` as a gzip stream.
fn gzipped(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data).expect("compress");
    gz.finish().expect("compress")
}

#[cfg(unix)]
#[test]
fn piped_input_is_read_once() {
    // A pipe given as a path (as `<(...)` gives /dev/fd/N): its first bytes used to be read
    // to tell the format and then lost, giving the median of the rest with exit status 0.
    for file in ["/dev/stdin", "-"] {
        let args = [
            "select",
            file,
            "--backend",
            "cpu",
            "--json",
            "--median",
            "--k",
            "0",
        ];
        let out = kselect_with_stdin(&args, counting_csv(100_000));
        assert!(out.status.success(), "{file}: {}", stderr(&out));
        let json: Value = serde_json::from_str(&stdout(&out)).expect("valid JSON");
        assert_eq!(json["n"], 100_000, "{file}");
        assert_eq!(json["median"], 49999.5, "{file}");
        assert_eq!(i64s(&json["values"]), vec![0], "{file}");
        assert_eq!(json["column"], "a", "{file}");
        // A short input is not mistaken for an empty one.
        let out = kselect_with_stdin(&args, b"x\n7\n".to_vec());
        assert!(out.status.success(), "{file}: {}", stderr(&out));
        let json: Value = serde_json::from_str(&stdout(&out)).expect("valid JSON");
        assert_eq!(
            (json["n"].as_u64(), json["median"].as_f64()),
            (Some(1), Some(7.0))
        );
    }
}

#[cfg(unix)]
#[test]
fn fifo_with_a_pausing_writer_is_read_once() {
    use std::time::Duration;
    let dir = tempfile::tempdir().expect("temp dir");
    // The header split in two, then the rows in chunks, a pause after each: more than a
    // second in all, so that the read's progress is due (and hidden: stderr is not a
    // terminal).
    let mut chunks = vec![b"b,".to_vec(), b"a\n".to_vec()];
    let rows: Vec<String> = (0..3000)
        .map(|i| format!("{},{}\n", i * 3, 2999 - i))
        .collect();
    chunks.extend(rows.chunks(1000).map(|c| c.concat().into_bytes()));
    // Opening blocks until kselect opens the FIFO for reading; a reader that went away makes
    // the writer stop (the test below says why).
    let (fifo, writer) =
        common::cli::fifo_writing(&dir, "values.fifo", chunks, Duration::from_millis(300));
    let fifo_arg = fifo.display().to_string();
    let child = common::cli::spawn_kselect(&[
        "select",
        &fifo_arg,
        "--backend",
        "cpu",
        "--json",
        "--column",
        "a",
        "--k",
        "0,2999",
        "--median",
    ]);
    let out = common::cli::finished(child, Duration::from_secs(60));
    writer.join().expect("the writer thread");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        out.stderr.is_empty(),
        "no progress on a stderr that is not a terminal"
    );
    let json: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert_eq!(json["column"], "a");
    assert_eq!(json["n"], 3000);
    assert_eq!(i64s(&json["values"]), vec![0, 2999]);
    assert_eq!(json["median"], 1499.5);
}

#[test]
fn dash_reads_standard_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    // CSV, plain and gzip-compressed, against the same file read from disk.
    let csv = b"t,v\n1,2.5\n2,-1\n3,NA\n4,8\n".to_vec();
    let file = csv_file(&dir, "t.csv", std::str::from_utf8(&csv).expect("UTF-8"));
    let args = ["-c", "v", "--k", "0,2", "--median", "--nan", "omit"];
    let from_file = select_json(&file, &args);
    for input in [csv.clone(), gzipped(&csv)] {
        let json = cpu_json_stdin("select", &args, input);
        assert_eq!(json["file"], "<stdin>");
        assert_eq!(
            common::cli::without_file_and_time(&json),
            common::cli::without_file_and_time(&from_file)
        );
    }
    // .npy, told by its content.
    let npy = std::fs::read(fixture("u64.npy")).expect("fixture");
    let json = cpu_json_stdin("select", &["--k", "0"], npy.clone());
    assert_eq!(json["format"], "npy");
    assert_eq!(
        json["values"],
        select_json(&fixture("u64.npy"), &["--k", "0"])["values"]
    );
    let json = cpu_json_stdin("select", &["--k", "0"], gzipped(&npy));
    assert_eq!(json["format"], "npy");
    // quantiles.
    let json = cpu_json_stdin(
        "quantiles",
        &["-c", "v", "--probs", "0,1", "--nan", "omit"],
        csv.clone(),
    );
    assert_eq!(json["file"], "<stdin>");
    assert_eq!(f64s(&json["values"]), vec![-1.0, 8.0]);
    let text = stdout(&kselect_with_stdin(
        &[
            "quantiles",
            "-",
            "--backend",
            "cpu",
            "-c",
            "v",
            "--count",
            "2",
            "--nan",
            "omit",
        ],
        csv.clone(),
    ));
    assert!(text.contains("<stdin> (csv, column v)"), "{text}");
    // Errors name standard input.
    let err = common::cli::cpu_fails_stdin("select", &["-c", "w", "--k", "0"], csv.clone());
    assert!(err.contains("<stdin>: no column named `w`"), "{err}");
    let err = common::cli::cpu_fails_stdin("select", &["--k", "0"], Vec::new());
    assert!(err.contains("<stdin>") && err.contains("empty"), "{err}");
    let err = common::cli::cpu_fails_stdin("quantiles", &["--count", "3"], npy[..70].to_vec());
    assert!(err.contains("<stdin>: truncated"), "{err}");
}

#[test]
fn npy_gz_with_a_bad_checksum_is_an_error() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut npy = Vec::new();
    kselect::io::npy::write_npy_to(&mut npy, &[1.0f64, 2.0, 3.0]).expect("npy");
    // Stored deflate blocks: a changed byte still decodes, to another value.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    gz.write_all(&npy).expect("compress");
    let mut bytes = gz.finish().expect("compress");
    let last_value_byte = bytes.len() - 8 - 1;
    bytes[last_value_byte] ^= 0x40;
    let file = path(&dir, "x.npy.gz");
    std::fs::write(&file, &bytes).expect("write");
    let err = select_fails(&file.display().to_string(), &["--k", "2"], 1);
    assert!(
        err.contains("x.npy.gz") && err.contains("checksum"),
        "{err}"
    );
    let err = common::cli::cpu_fails_stdin("select", &["--k", "2"], bytes);
    assert!(err.contains("<stdin>") && err.contains("checksum"), "{err}");
}

#[test]
fn csv_negative_zero_is_read_as_negative_zero() {
    // numpy.loadtxt reads -0 as -0.0; -0.0 orders just below +0.0.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = csv_file(&dir, "z.csv", "x\n0\n-0\n5\n");
    let json = select_json(&file, &["--k", "0,1"]);
    assert_eq!(json["dtype"], "f64");
    assert_bits_eq(&f64s(&json["values"]), &[-0.0, 0.0]);
    // numpy.median([-0.0, -0.0]) and numpy.quantile(x, 0.5, method="lower") are -0.0.
    let file = csv_file(&dir, "zeros.csv", "x\n-0\n-0\n");
    let json = select_json(&file, &["--median"]);
    assert_bits_eq(&[json["median"].as_f64().expect("a number")], &[-0.0]);
    let file = csv_file(&dir, "lower.csv", "x\n1\n-0\n-0\n");
    let json = select_json(&file, &["--quantile", "0.5", "--method", "lower"]);
    assert_bits_eq(&f64s(&json["quantiles"]["values"]), &[-0.0]);
}

// ---------------------------------------------------------------------------------------------
// kselect quantiles
// ---------------------------------------------------------------------------------------------

/// Runs `kselect quantiles FILE ARGS --backend cpu --json`, checks success, parses the JSON.
fn quantiles_json(file: &str, args: &[&str]) -> Value {
    cpu_json("quantiles", file, args).1
}

/// Runs `kselect quantiles FILE ARGS --backend cpu`, expects exit status `code`, returns stderr.
fn quantiles_fails(file: &str, args: &[&str], code: i32) -> String {
    cpu_fails("quantiles", file, args, code)
}

/// `quantiles` of the fixture `name` with `args` fails (status 1), its message holding each
/// of `needles`.
#[track_caller]
fn quantiles_fail_saying(name: &str, args: &[&str], needles: &[&str]) {
    let err = quantiles_fails(&fixture(name), args, 1);
    assert!(needles.iter().all(|n| err.contains(n)), "{err}");
}

/// The width and height of a PNG file, from its IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).expect("the PNG file was written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn quantiles_of_the_flights_with_plots() {
    let file = repository_file("datasets/flights.csv.gz")
        .display()
        .to_string();
    let dir = tempfile::tempdir().expect("temp dir");
    let pdf = dir.path().join("pdf.png");
    let cdf = dir.path().join("cdf.svg");
    let json = quantiles_json(
        &file,
        &[
            "-c",
            "dep_delay",
            "--nan",
            "omit",
            "--count",
            "101",
            "--plot",
            pdf.to_str().unwrap(),
            "--cdf-plot",
            cdf.to_str().unwrap(),
            "--plot-range=-40,160",
        ],
    );
    assert_eq!(json["n"], 336776);
    assert_eq!(json["nan_count"], 8255);
    assert_eq!(json["method"], "linear");
    assert_eq!(json["backend"], "cpu");
    let probs = f64s(&json["probs"]);
    assert_eq!(probs.len(), 101);
    assert_eq!((probs[0], probs[50], probs[100]), (0.0, 0.5, 1.0));
    let values = f64s(&json["values"]);
    // The same as kselect select's quantiles: min, median, 90th and 99th percentile, max.
    assert_eq!(
        (values[0], values[50], values[90], values[99], values[100]),
        (-43.0, -2.0, 49.0, 191.0, 1301.0)
    );
    // Percentiles: at most 1% of the values between neighbours, so at most 1% apart.
    let ks = json["ks_distance"].as_f64().expect("a number");
    assert!(ks > 0.0 && ks <= 0.01 + 3.0 / 328521.0, "{ks}");
    assert!(json["seconds"].as_f64().is_some_and(|s| s >= 0.0));
    assert_eq!(json["plot"], pdf.display().to_string());
    assert_eq!(json["cdf_plot"], cdf.display().to_string());
    assert_eq!(png_size(&pdf), (1000, 600));
    let svg = std::fs::read_to_string(&cdf).expect("the SVG file was written");
    assert!(
        svg.contains("dep_delay: CDF estimated from 101 quantiles"),
        "title"
    );
    assert!(svg.contains("KS distance"));
}

#[test]
fn quantiles_probs_methods_and_the_table() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = csv_file(&dir, "q.csv", "x\n4\n1\n3\n2\n");
    // Through (1, 0), (2.5, 0.5), (4, 1): the empirical CDF is 1/4 off at 1 and just below 4.
    let json = quantiles_json(&file, &["--probs", "0,0.5,1"]);
    assert_eq!(f64s(&json["values"]), vec![1.0, 2.5, 4.0]);
    assert_eq!(json["ks_distance"], 0.25);
    assert_eq!(json["dtype"], "i64");
    assert!(json.get("plot").is_none());
    let json = quantiles_json(&file, &["-p", "0", "-p", "0.5,1", "--method", "lower"]);
    assert_eq!(f64s(&json["values"]), vec![1.0, 2.0, 4.0]);
    assert_eq!(json["method"], "lower");
    // --count M: i / (M - 1).
    let json = quantiles_json(&file, &["--count", "4"]);
    assert_eq!(f64s(&json["probs"]), vec![0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0]);
    assert_eq!(f64s(&json["values"]), vec![1.0, 2.0, 3.0, 4.0]);

    let text = cpu_text("quantiles", &file, &["--count", "3"]);
    assert!(text.contains("4 of type i64"), "{text}");
    assert!(
        text.contains("Kolmogorov-Smirnov distance to the data 0.25"),
        "{text}"
    );
    let rows = words_of_lines(&text);
    assert!(rows.contains(&vec!["p", "quantile", "(linear)"]), "{text}");
    assert!(rows.contains(&vec!["0.5", "2.5"]), "{text}");
    assert!(rows.contains(&vec!["1.0", "4.0"]), "{text}");
}

#[test]
fn quantiles_nan_and_infinite_values() {
    // [1, nan, 3, nan, 2]
    quantiles_fail_saying("nan_f64.npy", &["--count", "3"], &["2 NaN", "--nan omit"]);
    let json = quantiles_json(&fixture("nan_f64.npy"), &["--count", "3", "--nan", "omit"]);
    assert_eq!(f64s(&json["values"]), vec![1.0, 2.0, 3.0]);
    assert_eq!(json["nan_count"], 2);
    // Ordered last, the NaNs are the largest values; quantiles that reach them (the median
    // interpolates towards the first NaN, as numpy's does) are NaN.
    quantiles_fail_saying(
        "nan_f64.npy",
        &["--count", "3", "--nan", "last"],
        &["p = 0.5 is NaN", "--nan omit"],
    );
    // Below them it works, and the distance counts them as values above every number:
    // F_est(2) = 1 but only 2 of the 5 values are at most 2.
    let json = quantiles_json(
        &fixture("nan_f64.npy"),
        &["--probs", "0,0.25", "--nan", "last"],
    );
    assert_eq!(f64s(&json["values"]), vec![1.0, 2.0]);
    assert_eq!(json["ks_distance"], 0.6);
    // [nan, -2.5, inf] as f32, NaN omitted: the maximum is infinite, and interpolating next
    // to it gives NaN (-2.5 + inf * 0), as numpy does.
    quantiles_fail_saying(
        "nan_f32.npy",
        &["--count", "2", "--nan", "omit", "--method", "lower"],
        &["p = 1 is inf", "infinite"],
    );
    quantiles_fail_saying(
        "nan_f32.npy",
        &["--count", "2", "--nan", "omit"],
        &["p = 0 is NaN", "discrete"],
    );
}

#[test]
fn quantiles_usage_errors_exit_2() {
    let file = fixture("f64.npy");
    for (args, want) in [
        (vec!["--probs", "0.5"], "at least two"),
        (vec!["--probs", "0.9,0.1"], "strictly increasing"),
        (vec!["--probs", "0.1,0.1"], "strictly increasing"),
        (vec!["--probs", "0.1,1.5"], "[0, 1]"),
        (vec!["--count", "1"], "--count"),
        (
            vec!["--count", "3", "--probs", "0,1"],
            "cannot be used with",
        ),
        (vec![], "--probs"),
        (vec!["--count", "3", "--plot", "x.jpg"], ".png or .svg"),
        (vec!["--count", "3", "--cdf-plot", "x"], ".png or .svg"),
        (vec!["--count", "3", "--plot-range", "5,1"], "LO < HI"),
        (vec!["--count", "3", "--plot-range", "5"], "LO,HI"),
        (vec!["--count", "3", "--bins", "0"], "bins"),
        (vec!["--count", "3", "--bandwidth", "-2"], "bandwidth"),
        (vec!["--count", "3", "--method", "type7"], "median_unbiased"),
    ] {
        let err = quantiles_fails(&file, &args, 2);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn quantiles_plot_errors_and_integer_bins() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = csv_file(&dir, "d.csv", "d\n0\n1\n1\n2\n2\n2\n3\n10\n");
    let missing = dir.path().join("missing/pdf.png");
    let err = quantiles_fails(
        &file,
        &["--count", "5", "--plot", missing.to_str().unwrap()],
        1,
    );
    assert!(
        err.contains("cannot write the plot") && err.contains("missing"),
        "{err}"
    );
    // Integers: bins aligned to them (11 integers, 11 bins) unless a range is given.
    let svg = dir.path().join("pdf.svg");
    quantiles_json(&file, &["--count", "5", "--plot", svg.to_str().unwrap()]);
    let text = std::fs::read_to_string(&svg).expect("written");
    assert!(text.contains("8 values, 11 bins"), "bins");
    assert!(text.contains("d: PDF estimated from 5 quantiles"), "title");
    quantiles_json(
        &file,
        &[
            "--count",
            "5",
            "--plot",
            svg.to_str().unwrap(),
            "--plot-range=-1,11",
            "--bins",
            "24",
            "--bandwidth",
            "0.5",
        ],
    );
    let text = std::fs::read_to_string(&svg).expect("written");
    assert!(text.contains("8 values, 24 bins"), "bins");
    assert!(text.contains("half-width 0.5"), "bandwidth");
}

/// The help of `kselect COMMAND`, checked to name each of `options`, every algorithm and every
/// quantile method.
fn help_naming(command: &str, options: &[&str]) -> String {
    let out = kselect(&[command, "--help"]);
    assert!(out.status.success());
    let text = stdout(&out);
    for option in options {
        assert!(text.contains(option), "{option} missing from:\n{text}");
    }
    for algorithm in kselect::Algorithm::ALL {
        assert!(text.contains(algorithm.name()), "{algorithm}");
    }
    for method in kselect::QuantileMethod::ALL {
        assert!(text.contains(method.name()), "{method}");
    }
    text
}

#[test]
fn help_explains_every_option() {
    let out = kselect(&["--help"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("select") && text.contains("Exit status"),
        "{text}"
    );

    let text = help_naming(
        "select",
        &[
            "--k",
            "--largest",
            "--median",
            "--quantile",
            "--method",
            "--column",
            "--backend",
            "--algorithm",
            "--nan",
            "--json",
        ],
    );
    for policy in ["error", "omit", "last"] {
        assert!(text.contains(policy));
    }
    assert!(text.contains("- reads standard input"), "{text}");

    let out = kselect(&["--help"]);
    assert!(stdout(&out).contains("quantiles"));
    let text = help_naming(
        "quantiles",
        &[
            "--probs",
            "--count",
            "--method",
            "--column",
            "--backend",
            "--algorithm",
            "--nan",
            "--plot",
            "--cdf-plot",
            "--plot-range",
            "--bins",
            "--bandwidth",
            "--json",
            "Kolmogorov-Smirnov",
            "inclusive",
            ".png",
            ".svg",
        ],
    );
    for key in ["ks_distance", "probs", "values", "seconds", "cdf_plot"] {
        assert!(text.contains(key), "{key}");
    }
}

// ---------------------------------------------------------------------------------------------
// Output files, numbers at the ends of f64, messages of usage errors
// ---------------------------------------------------------------------------------------------

#[test]
fn plot_onto_the_input_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A CSV file whose name a plot could have.
    let data = csv_file(&dir, "data.svg", "d\n1\n2\n3\n4\n");
    let plot = path(&dir, "pdf.png");
    let same_plot = format!("{}/./pdf.png", dir.path().display());
    let plot = plot.to_str().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["--cdf-plot", &data], "--cdf-plot"),
        (&["--plot", plot, "--cdf-plot", &data], "--cdf-plot"),
        (&["--plot", &data], "--plot"),
    ];
    for (plots, option) in cases {
        let mut args = vec!["--count", "3"];
        args.extend_from_slice(plots);
        let err = quantiles_fails(&data, &args, 2);
        assert!(
            err.starts_with(&format!("error: {option} {data} is the input file {data}")),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&data).unwrap(), "d\n1\n2\n3\n4\n");
    }
    let err = quantiles_fails(
        &data,
        &["--count", "3", "--plot", plot, "--cdf-plot", &same_plot],
        2,
    );
    assert!(
        err.starts_with(&format!(
            "error: --plot {plot} and --cdf-plot {same_plot} are the same file"
        )),
        "{err}"
    );
    assert_eq!(names_in(&dir), ["data.svg"]);
}

#[test]
fn failed_plot_leaves_the_existing_file_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = csv_file(&dir, "d.csv", "d\n0\n0.5\n1e300\n");
    let plot = path(&dir, "pdf.svg");
    std::fs::write(&plot, "an earlier plot").unwrap();
    // A range too narrow to draw an order statistic at 1e300: the drawing fails.
    let err = quantiles_fails(
        &data,
        &[
            "--count",
            "3",
            "--plot",
            plot.to_str().unwrap(),
            "--plot-range=0,1e-250",
        ],
        1,
    );
    assert!(err.contains("too narrow"), "{err}");
    assert_eq!(std::fs::read_to_string(&plot).unwrap(), "an earlier plot");
    assert_eq!(names_in(&dir), ["d.csv", "pdf.svg"]);
    // A successful run replaces it.
    quantiles_json(&data, &["--count", "3", "--plot", plot.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&plot).unwrap().contains("<svg"));
    assert_eq!(names_in(&dir), ["d.csv", "pdf.svg"]);
}

#[test]
fn plot_io_error_is_one_sentence() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = csv_file(&dir, "d.csv", "d\n1\n2\n3\n");
    for name in ["/nonexistent/x.png", "/nonexistent/x.svg"] {
        for option in ["--plot", "--cdf-plot"] {
            let err = quantiles_fails(&data, &["--count", "3", option, name], 1);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.starts_with(&format!("error: cannot write the plot {name}: ")),
                "{err}"
            );
            assert!(!err.contains("Error(") && !err.contains("Os {"), "{err}");
            #[cfg(unix)]
            assert!(
                err.ends_with("No such file or directory (os error 2)\n"),
                "{err}"
            );
        }
    }
}

/// The longest run of digits in `text`.
fn longest_digit_run(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// Runs `kselect quantiles` with both plots (SVG, so that their text can be read) on `values`
/// and checks that the output and the plots print no number with more than 20 digits; returns
/// the text of both plots.
fn plots_of(values: &[f64], args: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = path(&dir, "x.npy");
    kselect::io::write_npy(&file, values).expect("write the .npy file");
    let (pdf, cdf) = (path(&dir, "pdf.svg"), path(&dir, "cdf.svg"));
    let mut all = vec![
        "--plot",
        pdf.to_str().unwrap(),
        "--cdf-plot",
        cdf.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let table = cpu_text("quantiles", &file, &all);
    assert!(longest_digit_run(&table) < 20, "{table}");
    let (text, json) = cpu_json("quantiles", &file, &all);
    assert!(longest_digit_run(&text) < 20, "{text}");
    assert!(json["ks_distance"].as_f64().is_some(), "{text}");
    let svg = std::fs::read_to_string(pdf).unwrap() + &std::fs::read_to_string(cdf).unwrap();
    // The labels only (path data holds long coordinates).
    let labels: String = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0))
        .collect::<Vec<_>>()
        .join(" | ");
    assert!(longest_digit_run(&labels) < 20, "{labels}");
    labels
}

#[test]
fn plot_of_huge_values_prints_compact_numbers() {
    let huge = [-1.7e308, 0.0, 1.7e308];
    for args in [
        &["--count", "3"][..],
        &["--count", "5", "--bins", "1"],
        &["--probs", "0,0.5,1", "--bandwidth", "1e300"],
        &["--count", "3", "--plot-range=-1.7e308,1.7e308"],
    ] {
        let labels = plots_of(&huge, args);
        assert!(labels.contains("e308"), "{args:?}: {labels}");
        // Densities of about 1e-308.
        assert!(labels.contains("e-30"), "{args:?}: {labels}");
    }
    let extremes = [-f64::MAX, f64::MAX];
    let labels = plots_of(&extremes, &["--count", "2", "--method", "inverted_cdf"]);
    assert!(labels.contains("1.80e308"), "{labels}");
    // numpy's linear interpolation across a difference beyond f64::MAX is NaN.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = path(&dir, "x.npy");
    kselect::io::write_npy(&file, &extremes).expect("write the .npy file");
    let err = cpu_fails("quantiles", &file, &["--count", "2"], 1);
    assert!(err.contains("more than f64::MAX apart"), "{err}");
    assert!(longest_digit_run(&err) < 20, "{err}");
}

#[test]
fn plot_of_subnormal_values_prints_compact_numbers() {
    let tiny = [5e-324, 1e-323, 2e-323, 3e-323, 5e-323, 1e-322];
    for args in [
        &["--count", "3"][..],
        &["--count", "5", "--bins", "7"],
        &["--count", "4", "--bandwidth", "1e-323"],
    ] {
        let labels = plots_of(&tiny, args);
        assert!(labels.contains("e-324"), "{args:?}: {labels}");
        // Densities beyond f64::MAX, printed all the same.
        assert!(labels.contains("e32"), "{args:?}: {labels}");
    }
}

#[test]
fn negative_rank_is_a_clear_usage_error() {
    let file = fixture("f64.npy");
    let cases: [(&str, &[&str], &str); 10] = [
        (
            "select",
            &["--k", "--median"],
            "the value is missing: --median is an option",
        ),
        (
            "select",
            &["--k", "-1"],
            "--k <K>': a rank is a non-negative integer",
        ),
        (
            "select",
            &["--k", "1,-2"],
            "--k <K>': a rank is a non-negative integer",
        ),
        (
            "select",
            &["-k", "-1"],
            "--k <K>': a rank is a non-negative integer",
        ),
        (
            "select",
            &["--quantile", "-0.1"],
            "quantile probability -0.1 is not in [0, 1]",
        ),
        (
            "quantiles",
            &["--probs", "-0.1,0.5"],
            "quantile probability -0.1 is not in [0, 1]",
        ),
        (
            "quantiles",
            &["--count", "-3"],
            "--count is the number of probabilities, 2 to 10000000, not -3",
        ),
        (
            "quantiles",
            &["--count", "3", "--bins", "-1"],
            "the number of bins is 1 to 100000, not -1",
        ),
        (
            "lts",
            &["--response", "0", "--nsamp", "-5"],
            "--nsamp is the number of starting subsets",
        ),
        (
            "lts",
            &["--response", "0", "--seed", "-1"],
            "the seed is an integer from 0",
        ),
    ];
    for (command, args, want) in cases {
        assert_own_usage_error(command, &file, args, want);
    }
}

#[test]
fn options_of_other_commands_are_clear_errors() {
    let file = fixture("f64.npy");
    let err = select_fails(&file, &["--k", "0", "--out", "o.npy"], 2);
    assert!(
        err.starts_with(
            "error: `kselect select` has no --out option; it is an option of `threshold`"
        ),
        "{err}"
    );
    let err = quantiles_fails(&file, &["--count", "3", "--k", "2"], 2);
    assert!(
        err.starts_with(
            "error: `kselect quantiles` has no --k option; it is an option of `select`, `topk`, \
             `threshold`, `neighbors`, `knn` and `recover`"
        ),
        "{err}"
    );
    // An option no command has: clap's own message and its suggestions.
    let err = select_fails(&file, &["--k", "0", "--frobnicate"], 2);
    assert!(err.contains("unexpected argument '--frobnicate'"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Where the binary is, and --backend cuda against --backend cpu
// ---------------------------------------------------------------------------------------------

#[test]
fn cli_tests_find_the_binary_through_kselect_bin() {
    let cargo = std::path::PathBuf::from(env!("CARGO_BIN_EXE_kselect"));
    assert_eq!(binary_from(None), cargo);
    assert_eq!(binary_from(Some("".into())), cargo);
    assert_eq!(
        binary_from(Some("/opt/gpu-bin/kselect".into())),
        Path::new("/opt/gpu-bin/kselect")
    );
    // End to end on unix: this test binary run again, for one test, with KSELECT_BIN naming a
    // script that logs its calls and runs the real binary.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if std::env::var_os("KSELECT_BIN_LOG").is_some() {
            return; // the run below: nothing to nest
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let log = path(&dir, "calls.log");
        let script = path(&dir, "kselect");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"$@\" >> \"$KSELECT_BIN_LOG\"\nexec '{}' \"$@\"\n",
                common::cli::binary().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let this = std::env::current_exe().expect("the test binary");
        let run = |kselect_bin: &Path| {
            std::process::Command::new(&this)
                .args(["--exact", "rank_out_of_range", "--test-threads=1"])
                .env("KSELECT_BIN", kselect_bin)
                .env("KSELECT_BIN_LOG", &log)
                .output()
                .expect("the test binary runs")
        };
        let out = run(&script);
        assert!(out.status.success(), "{}", stdout(&out));
        let calls = std::fs::read_to_string(&log).expect("the script ran");
        assert!(calls.contains("select"), "{calls}");
        // A KSELECT_BIN that is not there fails the tests, saying so.
        let out = run(&path(&dir, "missing"));
        assert!(!out.status.success());
        assert!(stdout(&out).contains("KSELECT_BIN"), "{}", stdout(&out));
    }
}

/// A data file of `n` f64 values with ties and negatives, and one of the same values as i64.
fn varied_data(dir: &tempfile::TempDir, n: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    let floats: Vec<f64> = (0..n)
        .map(|i| ((i * 7919) % 1009) as f64 / 8.0 - 40.0)
        .collect();
    let ints: Vec<i64> = floats.iter().map(|&x| (x * 8.0) as i64).collect();
    let (f, i) = (path(dir, "floats.npy"), path(dir, "ints.npy"));
    kselect::io::write_npy(&f, &floats).expect("write the .npy file");
    kselect::io::write_npy(&i, &ints).expect("write the .npy file");
    (f, i)
}

#[test]
fn cuda_backend_matches_cpu_for_select() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (floats, ints) = varied_data(&dir, 5000);
    let fixtures = [fixture("f64.npy"), fixture("f32.npy"), fixture("u64.npy")];
    let cases: Vec<(String, Vec<&str>)> = vec![
        (fixtures[0].clone(), vec!["--k", "0,1,2,3,4,5,6"]),
        (fixtures[1].clone(), vec!["--k", "0,7", "--largest"]),
        (fixtures[2].clone(), vec!["--k", "1", "--median"]),
        (fixture("nan_f64.npy"), vec!["--k", "0", "--nan", "omit"]),
        (
            floats.display().to_string(),
            vec![
                "--k",
                "0,17,2500,4999",
                "--median",
                "--quantile",
                "0.1,0.99",
            ],
        ),
        (
            floats.display().to_string(),
            vec!["--k", "4000", "--algorithm", "radix"],
        ),
        (
            ints.display().to_string(),
            vec![
                "--k",
                "3",
                "--largest",
                "--quantile",
                "0.5",
                "--method",
                "lower",
            ],
        ),
    ];
    for (file, args) in cases {
        if assert_cuda_matches_cpu("select", &file, &args).is_none() {
            return;
        }
    }
}

#[test]
fn cuda_backend_matches_cpu_for_quantiles() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (floats, ints) = varied_data(&dir, 5000);
    let csv = csv_file(&dir, "d.csv", "a,b\n1,x\n3,y\n2,z\n2,w\n9,v\n");
    let cases: [(&Path, &[&str]); 4] = [
        (&floats, &["--count", "11"]),
        (&floats, &["--probs", "0.05,0.5,0.95", "--method", "hazen"]),
        (&ints, &["--count", "101", "--method", "median_unbiased"]),
        (Path::new(&csv), &["--count", "5", "--column", "a"]),
    ];
    for (file, args) in cases {
        if assert_cuda_matches_cpu("quantiles", file, args).is_none() {
            return;
        }
    }
}
