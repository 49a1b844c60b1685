//! `kselect neighbors` end to end: lists of a tiny set whose neighbours are known, read back
//! from the `.npy` files with kselect's own reader, the kNN graph (`--self`), the element type
//! of the distances, the CSV and JSON outputs, and every user error (a clear message on stderr
//! and exit status 1, or 2 for usage errors). Everything runs with `--backend cpu` unless it
//! says otherwise; the `--backend cuda` cases skip without a GPU unless `KSELECT_REQUIRE_GPU=1`.

mod common;

use std::path::PathBuf;

use common::cli::{
    assert_cuda_matches_cpu, cpu_fails, cpu_json, cpu_text, f64s, kselect_with_stdin, names_in,
    path, rows, stderr, stdout, u64s,
};
use kselect::io::npy::{read_npy_array, write_npy_matrix};
use kselect::io::Column;

/// A file of `text` in the temporary directory.
fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = path(dir, name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Four points on a line at 0, 1, 3 and 7 (one coordinate each), and a second coordinate of 0.
const BASE: &str = "x,y\n0,0\n1,0\n3,0\n7,0\n";

/// Queries at 2 (equally far from 1 and 3) and at 6.
const QUERIES: &str = "x,y\n2,0\n6,0\n";

/// The shape and the values of a `.npy` file read back.
fn read_back(file: &std::path::Path) -> (Vec<usize>, Column) {
    let array = read_npy_array(file).unwrap();
    (array.shape, array.values)
}

/// The options of a search of the queries `q` for `k` neighbours that writes the indices to
/// `i` and the distances to `d`.
fn with_files<'a>(q: &'a str, k: &'a str, i: &'a str, d: &'a str) -> [&'a str; 8] {
    [
        "--query",
        q,
        "--k",
        k,
        "--out-indices",
        i,
        "--out-distances",
        d,
    ]
}

#[test]
fn lists_of_a_known_set_are_written_as_npy() {
    let dir = tempfile::tempdir().unwrap();
    let base = file(&dir, "base.csv", BASE);
    let queries = file(&dir, "q.csv", QUERIES);
    let (i, d) = (path(&dir, "I.npy"), path(&dir, "D.npy"));
    let q = queries.display().to_string();
    let (id, dd) = (i.display().to_string(), d.display().to_string());
    let text = cpu_text("neighbors", &base, &with_files(&q, "3", &id, &dd));
    assert!(text.contains("indices:   "), "{text}");
    assert!(text.contains("(int64, 2 x 3)"), "{text}");
    assert!(text.contains("(f64, 2 x 3)"), "{text}");
    // 2: 1 and 3 are both 1 away (the lower index first), then 0; 6: 7, then 3, then 1.
    assert_eq!(
        read_back(&i),
        (vec![2, 3], Column::I64(vec![1, 2, 0, 3, 2, 1]))
    );
    assert_eq!(
        read_back(&d),
        (vec![2, 3], Column::F64(vec![1.0, 1.0, 2.0, 1.0, 3.0, 5.0]))
    );

    // Only one of the files; the JSON names it and leaves the lists out.
    std::fs::remove_file(&d).unwrap();
    let (_, json) = cpu_json(
        "neighbors",
        &base,
        &[
            "--query",
            &q,
            "--k",
            "1",
            "--out-indices",
            &id,
            "--metric",
            "manhattan",
        ],
    );
    assert_eq!(json["out_indices"], id.as_str());
    assert!(json.get("out_distances").is_none() && json.get("indices").is_none());
    assert_eq!(json["metric"], "manhattan");
    assert_eq!(read_back(&i), (vec![2, 1], Column::I64(vec![1, 3])));
    assert!(!d.exists());
    assert_eq!(names_in(&dir), ["I.npy", "base.csv", "q.csv"]);
}

#[test]
fn without_files_the_lists_are_printed() {
    let dir = tempfile::tempdir().unwrap();
    let base = file(&dir, "base.csv", BASE);
    let q = file(&dir, "q.csv", QUERIES).display().to_string();
    let text = cpu_text("neighbors", &base, &["--query", &q, "--k", "2"]);
    assert_eq!(
        text,
        "query,rank,index,distance\n0,0,1,1.0\n0,1,2,1.0\n1,0,3,1.0\n1,1,2,3.0\n"
    );
    let (_, json) = cpu_json(
        "neighbors",
        &base,
        &["--query", &q, "--k", "2", "--metric", "sqeuclidean"],
    );
    assert_eq!(rows(&json["indices"], u64s), [[1, 2], [3, 2]]);
    assert_eq!(rows(&json["distances"], f64s), [[1.0, 1.0], [1.0, 9.0]]);
    for (key, want) in [("points", 4), ("queries", 2), ("dim", 2), ("k", 2)] {
        assert_eq!(json[key], want, "{key}");
    }
    assert_eq!(json["self"], false);
    assert_eq!(json["dtype"], "f64");
    assert_eq!(json["backend"], "cpu");
}

#[test]
fn self_gives_the_knn_graph() {
    let dir = tempfile::tempdir().unwrap();
    let base = file(&dir, "base.csv", BASE);
    let (_, json) = cpu_json("neighbors", &base, &["--self", "--k", "2"]);
    // Each point's nearest others, itself left out.
    assert_eq!(
        rows(&json["indices"], u64s),
        [[1, 2], [0, 2], [1, 0], [2, 1]]
    );
    assert_eq!(
        rows(&json["distances"], f64s),
        [[1.0, 3.0], [1.0, 2.0], [2.0, 3.0], [4.0, 6.0]]
    );
    assert_eq!(json["self"], true);
    assert!(json["query"].is_null());
    // Standard input reads like the file.
    let out = kselect_with_stdin(
        &["neighbors", "-", "--self", "--k", "1", "--backend", "cpu"],
        BASE.as_bytes().to_vec(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "query,rank,index,distance\n0,0,1,1.0\n1,0,0,1.0\n2,0,1,2.0\n3,0,2,4.0\n"
    );
}

#[test]
fn f32_points_keep_f32_distances() {
    let dir = tempfile::tempdir().unwrap();
    let base = path(&dir, "base.npy");
    let queries = path(&dir, "q.npy");
    write_npy_matrix(&base, &[0.0f32, 0.0, 0.1, 0.0, 1.0, 1.0], 3, 2).unwrap();
    write_npy_matrix(&queries, &[0.3f32, 0.4], 1, 2).unwrap();
    let (i, d) = (path(&dir, "I.npy"), path(&dir, "D.npy.gz"));
    let q = queries.display().to_string();
    let (id, dd) = (i.display().to_string(), d.display().to_string());
    let (_, json) = cpu_json("neighbors", &base, &with_files(&q, "3", &id, &dd));
    assert_eq!(json["dtype"], "f32");
    let (shape, values) = read_back(&d);
    assert_eq!(shape, [1, 3]);
    // Each distance computed in f64 and rounded once to f32.
    let want: Vec<f32> = [(0.0f32, 0.0f32), (0.1, 0.0), (1.0, 1.0)]
        .iter()
        .map(|&(x, y)| {
            let (dx, dy) = (0.3f32 as f64 - x as f64, 0.4f32 as f64 - y as f64);
            (dx * dx + dy * dy).sqrt() as f32
        })
        .collect();
    assert_eq!(values, Column::F32(vec![want[1], want[0], want[2]]));
    assert_eq!(read_back(&i).1, Column::I64(vec![1, 0, 2]));

    // An f8 query makes both f8; integer arrays are read as f8 too.
    let ints = path(&dir, "ints.npy");
    write_npy_matrix(&ints, &[0i32, 1], 1, 2).unwrap();
    let ints = ints.display().to_string();
    let (_, json) = cpu_json("neighbors", &base, &["--query", &ints, "--k", "1"]);
    assert_eq!(json["dtype"], "f64");
    assert_eq!(rows(&json["indices"], u64s), [[0]]);
    assert_eq!(rows(&json["distances"], f64s), [[1.0]]);
}

#[test]
fn bad_inputs_are_one_clear_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let base = file(&dir, "base.csv", BASE);
    let fails = |args: &[&str]| cpu_fails("neighbors", &base, args, 1);

    let one = file(&dir, "one.csv", "x\n1\n").display().to_string();
    let err = fails(&["--query", &one, "--k", "1"]);
    assert!(
        err.contains("one.csv) have 1 coordinate(s) each but the base points")
            && err.contains("base.csv) have 2"),
        "{err}"
    );
    let err = fails(&["--self", "--k", "4"]);
    assert!(err.contains("k = 4") && err.contains("1 to 3"), "{err}");
    let q = file(&dir, "q.csv", QUERIES).display().to_string();
    let err = fails(&["--query", &q, "--k", "5"]);
    assert!(err.contains("k = 5") && err.contains("1 to 4"), "{err}");

    let missing = file(&dir, "m.csv", "x,y\n0,0\n1,\n");
    let err = cpu_fails("neighbors", &missing, &["--self", "--k", "1"], 1);
    assert!(
        err.contains("m.csv: reference point 1 has a non-finite coordinate (NaN in column 1)"),
        "{err}"
    );
    let infinite = file(&dir, "inf.csv", "x,y\n2,0\ninf,0\n")
        .display()
        .to_string();
    let err = fails(&["--query", &infinite, "--k", "1"]);
    assert!(
        err.contains("query 1 has a non-finite coordinate (inf in column 0)"),
        "{err}"
    );
    let text = file(&dir, "t.csv", "x,name\n1,a\n2,b\n");
    let err = cpu_fails("neighbors", &text, &["--self", "--k", "1"], 1);
    assert!(
        err.contains("t.csv: row 1, column name: `a` is not a number"),
        "{err}"
    );
    let vector = path(&dir, "v.npy");
    kselect::io::write_npy(&vector, &[1.0f64, 2.0]).unwrap();
    let err = cpu_fails("neighbors", &vector, &["--self", "--k", "1"], 1);
    assert!(err.contains("a 1-D array of 2 values"), "{err}");
    let twice = file(&dir, "twice.csv", "x,x\n1,2\n3,4\n");
    let err = cpu_fails("neighbors", &twice, &["--self", "--k", "1"], 1);
    assert!(err.contains("the column `x` twice"), "{err}");
    let err = fails(&[
        "--query",
        &path(&dir, "nope.csv").display().to_string(),
        "--k",
        "1",
    ]);
    assert!(err.contains("nope.csv"), "{err}");
}

#[test]
fn usage_errors_exit_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let base = file(&dir, "base.csv", BASE);
    let q = file(&dir, "q.csv", QUERIES).display().to_string();
    let b = base.display().to_string();
    let out = path(&dir, "out.npy").display().to_string();
    for (args, needle) in [
        (&["--k", "1"][..], "--query <Q>|--self"),
        (
            &["--self", "--query", &q, "--k", "1"],
            "cannot be used with",
        ),
        (&["--self", "--k", "0"], "1 or more"),
        (&["--self", "--k", "-1"], "1 or more"),
        (
            &["--self", "--k", "1", "--metric", "hamming"],
            "unknown metric `hamming`",
        ),
        (
            &["--self", "--k", "1", "--out-indices", &b],
            "is the input file",
        ),
        (
            &["--query", &q, "--k", "1", "--out-distances", &q],
            "is the input file",
        ),
        (
            &[
                "--self",
                "--k",
                "1",
                "--out-indices",
                &out,
                "--out-distances",
                &out,
            ],
            "are the same file",
        ),
        (&["--self", "--k", "1", "--nan", "omit"], "--nan"),
    ] {
        let err = cpu_fails("neighbors", &base, args, 2);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert_eq!(names_in(&dir), ["base.csv", "q.csv"], "nothing written");
    let out = kselect_with_stdin(
        &[
            "neighbors",
            "-",
            "--query",
            "-",
            "--k",
            "1",
            "--backend",
            "cpu",
        ],
        BASE.as_bytes().to_vec(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("both - (standard input)"));
}

#[test]
fn cuda_backend_matches_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let base = path(&dir, "base.npy");
    let values: Vec<f32> = (0..200).map(|i| ((i * 37) % 101) as f32 / 7.0).collect();
    write_npy_matrix(&base, &values, 50, 4).unwrap();
    for metric in ["euclidean", "cosine", "inner_product"] {
        let args = ["--self", "--k", "5", "--metric", metric];
        let Some(cpu) = assert_cuda_matches_cpu("neighbors", &base, &args) else {
            return;
        };
        assert_eq!(cpu["dtype"], "f32");
    }
}
