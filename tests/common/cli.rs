//! Helpers of the tests that run the `kselect` binary: running it (on the CPU), its output,
//! files for it to read, and the JSON it prints read back.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Runs `kselect` with `args`.
pub fn kselect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kselect"))
        .args(args)
        .output()
        .expect("the kselect binary runs")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `COMMAND FILE --backend cpu`, then `tail`.
fn cpu_args<'a>(command: &'a str, file: &'a str, tail: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec![command, file, "--backend", "cpu"];
    all.extend_from_slice(tail);
    all
}

/// Runs `kselect COMMAND FILE --backend cpu ARGS`, checks success, returns stdout.
pub fn cpu_text(command: &str, file: impl AsRef<Path>, args: &[&str]) -> String {
    let file = file.as_ref().display().to_string();
    let all = cpu_args(command, &file, args);
    let out = kselect(&all);
    assert!(
        out.status.success(),
        "kselect {all:?} failed: {}",
        stderr(&out)
    );
    stdout(&out)
}

/// Runs `kselect COMMAND FILE --backend cpu --json ARGS`, checks success and that it printed
/// one line, returns the text and the parsed JSON.
pub fn cpu_json(command: &str, file: impl AsRef<Path>, args: &[&str]) -> (String, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let text = cpu_text(command, file, &all);
    assert_eq!(
        text.lines().count(),
        1,
        "one JSON object on one line: {text}"
    );
    let value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("invalid JSON ({e}): {text}"));
    (text, value)
}

/// Runs `kselect COMMAND FILE --backend cpu ARGS`, expects exit status `code`, an error message
/// on stderr and nothing on stdout; returns stderr.
pub fn cpu_fails(command: &str, file: impl AsRef<Path>, args: &[&str], code: i32) -> String {
    let file = file.as_ref().display().to_string();
    let all = cpu_args(command, &file, args);
    let out = kselect(&all);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(code),
        "kselect {all:?}: stdout {} stderr {err}",
        stdout(&out)
    );
    assert!(err.starts_with("error: "), "{err}");
    assert!(out.stdout.is_empty(), "nothing on stdout: {}", stdout(&out));
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// A path in the temporary directory.
pub fn path(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// The list of a JSON array (panics on anything else).
fn items(v: &Value) -> &Vec<Value> {
    v.as_array().expect("an array")
}

pub fn u64s(v: &Value) -> Vec<u64> {
    items(v)
        .iter()
        .map(|x| x.as_u64().unwrap_or_else(|| panic!("{x} is not a u64")))
        .collect()
}

pub fn i64s(v: &Value) -> Vec<i64> {
    items(v)
        .iter()
        .map(|x| x.as_i64().unwrap_or_else(|| panic!("{x} is not an i64")))
        .collect()
}

/// Floats of a JSON array, with the strings "inf", "-inf", "nan" as those values.
pub fn f64s(v: &Value) -> Vec<f64> {
    items(v)
        .iter()
        .map(|x| match x {
            Value::String(s) if s == "inf" => f64::INFINITY,
            Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
            Value::String(s) if s == "nan" => f64::NAN,
            _ => x.as_f64().unwrap_or_else(|| panic!("{x} is not a number")),
        })
        .collect()
}

/// A JSON array of arrays, each read by `row` ([`u64s`], [`i64s`], [`f64s`]).
pub fn rows<T>(v: &Value, row: fn(&Value) -> Vec<T>) -> Vec<Vec<T>> {
    items(v).iter().map(row).collect()
}

pub fn assert_bits_eq(got: &[f64], want: &[f64]) {
    let g: Vec<u64> = got.iter().map(|x| x.to_bits()).collect();
    let w: Vec<u64> = want.iter().map(|x| x.to_bits()).collect();
    assert_eq!(g, w, "got {got:?}, want {want:?}");
}
