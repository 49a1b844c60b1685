//! Helpers of the tests that run the `kselect` binary: finding it and the repository's files
//! (also where the test binaries were copied to another machine), running it on the CPU and on
//! CUDA, its output, files for it to read, and the JSON it prints read back.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use kselect::io::npy::write_npy_matrix;
use kselect::io::write_npy;
use kselect::Element;
use serde_json::Value;

// The JSON readers and the repository's files, importable with the rest from here (each test
// file uses some of them, as with the module's functions).
#[allow(unused_imports)]
pub use super::{
    json::{assert_bits_eq, f64s, i64s, rows, u64s},
    repository_file,
};

/// The `kselect` binary: the path in `KSELECT_BIN` when it is set and not empty (the test
/// binaries run on another machine, beside a copy of the CLI), otherwise the one cargo built
/// with the tests.
pub fn binary() -> PathBuf {
    binary_from(std::env::var_os("KSELECT_BIN"))
}

/// The `kselect` binary given the value of `KSELECT_BIN` (see [`binary`]).
pub fn binary_from(kselect_bin: Option<OsString>) -> PathBuf {
    match kselect_bin {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_kselect")),
    }
}

/// Runs `kselect` with `args`.
pub fn kselect(args: &[&str]) -> Output {
    let binary = binary();
    Command::new(&binary)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run the kselect binary {} (KSELECT_BIN names another): {e}",
                binary.display()
            )
        })
}

/// Starts `kselect` with `args`, its standard input, output and error piped.
pub fn spawn_kselect(args: &[&str]) -> Child {
    Command::new(binary())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kselect binary starts")
}

/// A FIFO `name` in `dir`, and the thread that writes `chunks` into it, `pause` after each (it
/// blocks until a reader opens the FIFO, and stops quietly when the reader goes away).
#[cfg(unix)]
pub fn fifo_writing(
    dir: &tempfile::TempDir,
    name: &str,
    chunks: Vec<Vec<u8>>,
    pause: Duration,
) -> (PathBuf, std::thread::JoinHandle<()>) {
    let fifo = dir.path().join(name);
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo failed");
    let writer_path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&writer_path)
            .expect("open the FIFO for writing");
        for chunk in chunks {
            if file.write_all(&chunk).and_then(|()| file.flush()).is_err() {
                return;
            }
            std::thread::sleep(pause);
        }
    });
    (fifo, writer)
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

/// The lines of `text`, each split into its words (the rows of a table).
pub fn words_of_lines(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .map(|l| l.split_whitespace().collect())
        .collect()
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
    kselect_fails(&cpu_args(command, &file, args), code)
}

/// Runs `kselect ARGS`, expects exit status `code`, an error message on stderr and nothing on
/// stdout; returns stderr.
pub fn kselect_fails(args: &[&str], code: i32) -> String {
    let out = kselect(args);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(code),
        "kselect {args:?}: stdout {} stderr {err}",
        stdout(&out)
    );
    assert!(err.starts_with("error: "), "{err}");
    assert!(out.stdout.is_empty(), "nothing on stdout: {}", stdout(&out));
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// Runs `kselect COMMAND FILE --backend cpu ARGS`, expects a usage error (exit status 2) that
/// says `want` in kselect's own words, not clap's ("unexpected argument", "tip:").
pub fn assert_own_usage_error(command: &str, file: impl AsRef<Path>, args: &[&str], want: &str) {
    let err = cpu_fails(command, file, args, 2);
    assert!(err.contains(want), "{command} {args:?}: {err}");
    assert!(
        !err.contains("unexpected argument") && !err.contains("tip:"),
        "{command} {args:?}: {err}"
    );
}

/// A path in the temporary directory.
pub fn path(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// The keys of a command's JSON object that say where and how fast it ran, not what it found.
const RUN_KEYS: [&str; 4] = ["backend", "device", "algorithm", "seconds"];

/// `json` without the keys that say where and how fast the command ran.
pub fn results_only(json: &Value) -> Value {
    let mut json = json.clone();
    if let Some(object) = json.as_object_mut() {
        for key in RUN_KEYS {
            object.remove(key);
        }
    }
    json
}

/// Runs `kselect COMMAND FILE --backend cuda --json ARGS` and returns its JSON (checking that
/// it ran on CUDA), or `None` after a note on stderr when no GPU is usable: the CLI then fails
/// with exit status 1 and "no CUDA device is available". Where `KSELECT_REQUIRE_GPU=1` (see
/// [`super::require_gpu`]) that fails the test instead, as the library's CUDA tests do.
pub fn cuda_json(command: &str, file: impl AsRef<Path>, args: &[&str]) -> Option<Value> {
    let file = file.as_ref().display().to_string();
    let mut all = vec![command, &file, "--backend", "cuda", "--json"];
    all.extend_from_slice(args);
    let out = kselect(&all);
    let err = stderr(&out);
    if out.status.code() == Some(1) && err.contains("no CUDA device is available") {
        assert!(
            !super::require_gpu(),
            "KSELECT_REQUIRE_GPU=1 but kselect {all:?} found no GPU: {err}"
        );
        eprintln!("note: skipping a CUDA case of the CLI, no usable GPU: {err}");
        return None;
    }
    assert!(out.status.success(), "kselect {all:?} failed: {err}");
    let text = stdout(&out);
    let json: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("invalid JSON ({e}): {text}"));
    assert_eq!(json["backend"], "cuda", "{text}");
    Some(json)
}

/// Runs `kselect COMMAND FILE --json ARGS` on CUDA and on the CPU and checks that both found
/// the same, every key but those of [`results_only`] equal; returns the CPU's JSON, or `None`
/// where [`cuda_json`] skips.
pub fn assert_cuda_matches_cpu(
    command: &str,
    file: impl AsRef<Path>,
    args: &[&str],
) -> Option<Value> {
    let cuda = cuda_json(command, &file, args)?;
    let (_, cpu) = cpu_json(command, &file, args);
    assert_eq!(
        results_only(&cuda),
        results_only(&cpu),
        "kselect {command} {} {args:?}: CUDA and CPU differ",
        file.as_ref().display()
    );
    Some(cpu)
}

/// A 1-D `.npy` file `name` in `dir` of `data`.
pub fn npy_vector<T: Element>(dir: &tempfile::TempDir, name: &str, data: &[T]) -> PathBuf {
    let p = path(dir, name);
    write_npy(&p, data).expect("write the .npy fixture");
    p
}

/// A 2-D `.npy` file `name` in `dir` of `data` (`rows` x `cols`, row-major, in C order).
pub fn npy_matrix<T: Element>(
    dir: &tempfile::TempDir,
    name: &str,
    data: &[T],
    rows: usize,
    cols: usize,
) -> PathBuf {
    let p = path(dir, name);
    write_npy_matrix(&p, data, rows, cols).expect("write the .npy fixture");
    p
}

/// The names of the entries of `dir`, sorted.
pub fn names_in(dir: &tempfile::TempDir) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("a readable directory")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// The bytes of a `.npy` file of format 1.0 with the header dictionary `header` and no data.
pub fn npy_with_header(header: &str) -> Vec<u8> {
    let mut header = header.to_string();
    header.push_str(&" ".repeat((64 - (10 + header.len() + 1) % 64) % 64));
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes
}
