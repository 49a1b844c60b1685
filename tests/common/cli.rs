//! Helpers of the tests that run the `kselect` binary: running it (on the CPU), its output,
//! files for it to read, and the JSON it prints read back.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Runs `kselect` with `args`.
pub fn kselect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kselect"))
        .args(args)
        .output()
        .expect("the kselect binary runs")
}

/// Starts `kselect` with `args`, its standard input, output and error piped.
pub fn spawn_kselect(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kselect"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kselect binary starts")
}

/// Runs `kselect` with `args` and `input` on its standard input, written by a thread of its
/// own so that neither side waits on the other (kselect may stop reading early: the writer's
/// broken pipe is no error).
pub fn kselect_with_stdin(args: &[&str], input: Vec<u8>) -> Output {
    let mut child = spawn_kselect(args);
    let mut stdin = child.stdin.take().expect("a piped standard input");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = finished(child, Duration::from_secs(120));
    writer.join().expect("the writer thread");
    out
}

/// The output of `child` once it has exited; it is killed, and the test fails, if it runs
/// longer than `limit` (a reader waiting for input that never comes).
pub fn finished(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().expect("kselect's status").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("kselect's output");
            panic!("kselect ran for more than {limit:?}: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("kselect's output")
}

/// Runs `kselect COMMAND - --backend cpu --json ARGS` with `input` on standard input, checks
/// success, that it printed one line and nothing on stderr, and returns the parsed JSON.
pub fn cpu_json_stdin(command: &str, args: &[&str], input: Vec<u8>) -> Value {
    let mut all = cpu_args(command, "-", &["--json"]);
    all.extend_from_slice(args);
    let out = kselect_with_stdin(&all, input);
    assert!(
        out.status.success(),
        "kselect {all:?} failed: {}",
        stderr(&out)
    );
    assert!(out.stderr.is_empty(), "nothing on stderr: {}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "one JSON object: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("invalid JSON ({e}): {text}"))
}

/// Runs `kselect COMMAND - --backend cpu ARGS` with `input` on standard input, expects exit
/// status 1, an error message on stderr and nothing on stdout; returns stderr.
pub fn cpu_fails_stdin(command: &str, args: &[&str], input: Vec<u8>) -> String {
    let all = cpu_args(command, "-", args);
    let out = kselect_with_stdin(&all, input);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "kselect {all:?}: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(out.stdout.is_empty(), "nothing on stdout: {}", stdout(&out));
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The JSON object `json` without its `file` and `seconds` fields, for comparing two runs on
/// the same data read from different places.
pub fn without_file_and_time(json: &Value) -> Value {
    let mut json = json.clone();
    let object = json.as_object_mut().expect("a JSON object");
    object.remove("file");
    object.remove("seconds");
    json
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
