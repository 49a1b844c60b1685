//! `kselect quantiles --distributed` under `mpirun` (the `mpi` feature): the quantiles of a
//! file read in parts by 1 to 4 ranks, or of one file per rank, equal (bit for bit) to the
//! single-process command's; rank 0 alone prints; a rank that cannot read its file fails the
//! whole job with a message naming it.

mod common;

use std::process::{Command, Output};

use common::cli::{binary, cpu_json, f64s, path, stderr, stdout};
use serde_json::Value;

/// `mpirun -np ranks kselect ARGS` (as root when need be), with a session directory of its own:
/// jobs started at once by the tests running in parallel would otherwise race to create the
/// same one (Open MPI then fails with "File exists").
fn mpirun(ranks: usize, args: &[&str]) -> Output {
    let session = tempfile::tempdir().expect("a temporary directory");
    Command::new("mpirun")
        .args(["--oversubscribe", "-np", &ranks.to_string()])
        .arg(binary())
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_orte_tmpdir_base", session.path())
        .output()
        .expect("mpirun runs (Open MPI is installed with the mpi feature)")
}

fn json_of(out: &Output) -> Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

#[test]
fn parts_of_one_file_give_the_single_process_quantiles() {
    let dir = tempfile::tempdir().unwrap();
    let file = path(&dir, "x.npy");
    let values: Vec<f64> = (0..20_011)
        .map(|i| ((i * 7919) % 20_011) as f64 / 7.0 - 99.0)
        .collect();
    kselect::io::write_npy(&file, &values).unwrap();
    let gz = path(&dir, "x.npy.gz");
    kselect::io::write_npy(&gz, &values).unwrap();
    let file = file.display().to_string();
    let probs = ["--count", "101", "--method", "median_unbiased"];
    let (_, single) = cpu_json("quantiles", &file, &probs);
    for ranks in 1..=4 {
        for algorithm in ["sort-choose", "distributed-bms", "dibms", "auto"] {
            for input in [file.clone(), gz.display().to_string()] {
                let mut args = vec![
                    "quantiles",
                    &input,
                    "--distributed",
                    "--distributed-algorithm",
                    algorithm,
                ];
                args.extend(probs);
                args.push("--json");
                let got = json_of(&mpirun(ranks, &args));
                assert_eq!(got["ranks"], ranks);
                assert_eq!(got["n"], 20_011);
                let (g, s) = (f64s(&got["values"]), f64s(&single["values"]));
                assert_eq!(
                    g.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    s.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "{ranks} ranks, {algorithm}, {input}"
                );
                assert_eq!(got["traffic_per_rank"].as_array().unwrap().len(), ranks);
            }
        }
    }
}

#[test]
fn one_file_per_rank_and_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<i32> = (0..3000).map(|i| (i * 37) % 1001 - 500).collect();
    for (r, part) in all.chunks(1000).enumerate() {
        kselect::io::write_npy(path(&dir, &format!("p-{r}.npy")), part).unwrap();
    }
    let whole = path(&dir, "all.npy");
    kselect::io::write_npy(&whole, &all).unwrap();
    let (_, single) = cpu_json("quantiles", &whole, &["--probs", "0,0.3,0.5,1"]);
    let pattern = path(&dir, "p-{rank}.npy").display().to_string();
    let args = [
        "quantiles",
        &pattern,
        "--distributed",
        "--shards",
        "--probs",
        "0,0.3,0.5,1",
    ];
    let out = mpirun(3, &[&args[..], &["--json"]].concat());
    assert_eq!(json_of(&out)["values"], single["values"]);
    // The table: printed once, by rank 0.
    let text = stdout(&mpirun(3, &args));
    assert_eq!(text.matches("values on 3 ranks").count(), 1, "{text}");
    // Rank 3 has no file: every rank fails, rank 0 says which rank and why.
    let out = mpirun(4, &args);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("rank 3") && err.contains("p-3.npy"), "{err}");
}

#[test]
fn broken_inputs_fail_every_rank_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let whole = path(&dir, "x.npy");
    kselect::io::write_npy(&whole, &(0..1000).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let bytes = std::fs::read(&whole).unwrap();
    // Truncated: the header announces more values than the file holds.
    let truncated = path(&dir, "truncated.npy");
    std::fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
    // Corrupted: a header that is not a Python dict.
    let mut corrupt = bytes.clone();
    corrupt[10..20].copy_from_slice(b"@@@@@@@@@@");
    let corrupted = path(&dir, "corrupted.npy");
    std::fs::write(&corrupted, &corrupt).unwrap();
    // A header length of 4 GiB (format 2.0).
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    huge.extend_from_slice(b"{'descr': '<f4'");
    let huge_header = path(&dir, "huge.npy");
    std::fs::write(&huge_header, &huge).unwrap();
    for (file, says) in [
        (&truncated, "truncated"),
        (&corrupted, "corrupted.npy"),
        (&huge_header, "huge.npy"),
    ] {
        let file = file.display().to_string();
        let out = mpirun(
            3,
            &["quantiles", &file, "--distributed", "--probs", "0,0.5,1"],
        );
        assert!(!out.status.success(), "{file}: {}", stdout(&out));
        // Nothing of a result (mpirun may add its own notice of the failed job).
        assert!(
            !stdout(&out).contains("quantile ("),
            "{file}: {}",
            stdout(&out)
        );
        let err = stderr(&out);
        assert!(err.contains(says), "{file}: {err}");
    }
    // Standard input: refused, not read by rank 0 alone.
    let out = mpirun(2, &["quantiles", "-", "--distributed", "--probs", "0,1"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("standard input"), "{}", stderr(&out));
}

#[cfg(unix)]
#[test]
fn a_fifo_is_read_whole_or_refused_never_misread() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = path(&dir, "pipe.npy");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let fifo = fifo.display().to_string();
    // One rank: the FIFO cannot be read from an offset; the rank reads it through, or says why.
    // The writer is left detached: it blocks until a reader opens the FIFO.
    {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let data: Vec<f64> = (0..500).map(|i| i as f64).collect();
            let _ = kselect::io::write_npy(&fifo, &data);
        });
    }
    let out = mpirun(
        1,
        &[
            "quantiles",
            &fifo,
            "--distributed",
            "--probs",
            "0,0.5,1",
            "--json",
        ],
    );
    if out.status.success() {
        assert_eq!(f64s(&json_of(&out)["values"]), vec![0.0, 249.5, 499.0]);
    } else {
        assert!(!stderr(&out).is_empty());
    }
}

#[test]
fn backends_and_transports_are_reported_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = path(&dir, "x.npy");
    let values: Vec<f32> = (0..5000).map(|i| ((i * 31) % 5000) as f32).collect();
    kselect::io::write_npy(&file, &values).unwrap();
    let file = file.display().to_string();
    let run = |ranks: usize, extra: &[&str]| {
        let args = [
            &["quantiles", &file, "--distributed", "--probs", "0,0.5"][..],
            extra,
        ]
        .concat();
        mpirun(ranks, &args)
    };
    let cpu = json_of(&run(2, &["--backend", "cpu", "--json"]));
    assert_eq!(
        (&cpu["backend"], &cpu["gpu_ranks"], &cpu["transport"]),
        (&Value::from("cpu"), &Value::from(0), &Value::from("mpi"))
    );
    assert_eq!(f64s(&cpu["values"]), vec![0.0, 2499.5]);
    let text = stdout(&run(2, &["--backend", "cpu"]));
    assert!(
        text.contains("0 on a GPU, 2 on the CPU; messages by mpi"),
        "{text}"
    );
    // NCCL needs a GPU on every rank: refused with the CPU, before mpirun starts anything.
    let out = run(1, &["--backend", "cpu", "--transport", "nccl"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--transport nccl"),
        "{}",
        stderr(&out)
    );
    // On a machine without a GPU, asking for one fails every rank with a message.
    if kselect::CudaDevice::count().unwrap_or(0) == 0 {
        for extra in [&["--backend", "cuda"][..], &["--transport", "nccl"]] {
            let out = run(2, extra);
            assert!(!out.status.success(), "{extra:?}: {}", stdout(&out));
            assert!(!stdout(&out).contains("quantile ("), "{}", stdout(&out));
            assert!(stderr(&out).contains("CUDA"), "{extra:?}: {}", stderr(&out));
        }
        // auto runs on the CPU.
        let auto = json_of(&run(2, &["--json"]));
        assert_eq!(auto["backend"], "cpu");
    }
}
