//! `kselect neighbors` and `kselect knn` end to end. `neighbors`: lists of a tiny set whose
//! neighbours are known, read back from the `.npy` files with kselect's own reader, the kNN
//! graph (`--self`), the element type of the distances, the CSV and JSON outputs. `knn`: the
//! leave-one-out table and JSON against errors worked out by hand and the library's, the
//! predictions as CSV and `.npy`, labels of text and of numbers, `--standardize` on a set
//! whose scales differ. For both, every user error: a clear message on stderr and exit status
//! 1, or 2 for usage errors. Everything runs with `--backend cpu` unless it says otherwise;
//! the `--backend cuda` cases skip without a GPU unless `KSELECT_REQUIRE_GPU=1`.

mod common;

use std::path::{Path, PathBuf};

use common::cli::{
    assert_cuda_matches_cpu, cpu_fails, cpu_json, cpu_text, f64s, kselect_with_stdin, names_in,
    path, rows, stderr, stdout, u64s,
};
use kselect::io::npy::{read_npy_array, write_npy_matrix};
use kselect::io::{read_npy, Column};
use kselect::knn::{KnnRegressor, Points};
use serde_json::Value;

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

/// Runs `kselect COMMAND FILE --backend cpu ARGS` for each (ARGS, NEEDLE) of `cases`: a usage
/// error (exit status 2) that says NEEDLE.
fn assert_usage_errors(command: &str, file: &Path, cases: &[(&[&str], &str)]) {
    for (args, needle) in cases {
        let err = cpu_fails(command, file, args, 2);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn usage_errors_exit_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let base = file(&dir, "base.csv", BASE);
    let q = file(&dir, "q.csv", QUERIES).display().to_string();
    let b = base.display().to_string();
    let out = path(&dir, "out.npy").display().to_string();
    assert_usage_errors(
        "neighbors",
        &base,
        &[
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
        ],
    );
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

/// Five rows: a name (text, never a predictor), x = 0..4 and y = x.
const LINE: &str = "name,x,y\na,0,0\nb,1,1\nc,2,2\nd,3,3\ne,4,4\n";

/// Runs `kselect knn FILE --backend cpu --json ARGS` without --query: the JSON array.
fn scores(file: &std::path::Path, args: &[&str]) -> Vec<Value> {
    let text = cpu_text("knn", file, &[&["--json"], args].concat());
    assert_eq!(text.lines().count(), 1, "{text}");
    let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    json.as_array().expect("a JSON array").clone()
}

#[test]
fn leave_one_out_errors_of_each_k() {
    let dir = tempfile::tempdir().unwrap();
    let line = file(&dir, "line.csv", LINE);
    // k = 1: every point takes a neighbour 1 away (the lower index among two): MSE 1.
    // k = 2: the inner points average to themselves, the ends are 1.5 off: 2 * 2.25 / 5.
    // k = 4: the mean of the others, 2.5, 1.25, 0, 1.25, 2.5 off: 15.625 / 5.
    let json = scores(&line, &["--response", "y", "--k", "1,2,4"]);
    let library = KnnRegressor::new(1)
        .leave_one_out_scores(
            Points::new(&[0.0f64, 1.0, 2.0, 3.0, 4.0], 1).unwrap(),
            &[0.0, 1.0, 2.0, 3.0, 4.0],
            &[1, 2, 4],
        )
        .unwrap();
    let want = [(1, 1.0, false), (2, 4.5 / 5.0, true), (4, 3.125, false)];
    assert_eq!(json.len(), 3);
    for ((item, (k, error, best)), score) in json.iter().zip(want).zip(&library) {
        assert_eq!(item["k"], k);
        assert_eq!(item["error"].as_f64().unwrap(), error, "k = {k}");
        assert_eq!(item["error"].as_f64().unwrap(), score.error, "k = {k}");
        assert_eq!(item["metric"], "mse");
        assert_eq!(item["best"], best, "k = {k}");
    }

    let text = cpu_text("knn", &line, &["--response", "y", "--k", "4,1,2"]);
    for needle in [
        "file:       ",
        "line.csv (5 rows)",
        "model:      knn regression, y ~ x\n",
        "neighbours: uniform weights, euclidean",
        "backend:    cpu",
        "leave-one-out mse",
    ] {
        assert!(text.contains(needle), "no `{needle}` in:\n{text}");
    }
    // In the order given, the best marked.
    let table: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("k "))
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        table,
        [vec!["4", "3.125"], vec!["1", "1.0"], vec!["2", "0.9", "*"]]
    );

    // Distance weights: k = 2 weighs the nearer neighbour more; ties as many as k.
    let json = scores(
        &line,
        &["--response", "y", "--k", "2", "--weights", "distance"],
    );
    // The ends: 1 and 2 away, weights 1 and 1/2: 0 from (1 + 1) / 1.5 = 4/3.
    let end = (4.0f64 / 3.0).powi(2);
    assert!((json[0]["error"].as_f64().unwrap() - 2.0 * end / 5.0).abs() < 1e-12);
}

#[test]
fn predictions_go_to_csv_and_npy() {
    let dir = tempfile::tempdir().unwrap();
    let line = file(&dir, "line.csv", LINE);
    let q = file(&dir, "q.csv", "x,other\n0.4,a\n2.6,b\n10,c\n")
        .display()
        .to_string();
    let args = ["--response", "y", "--query", &q, "--k", "2"];
    // 0.4: 0 and 1; 2.6: 3 and 2; 10: 4 and 3.
    let text = cpu_text("knn", &line, &args);
    assert_eq!(text, "row,prediction\n0,0.5\n1,2.5\n2,3.5\n");

    let csv = path(&dir, "p.csv");
    let out = csv.display().to_string();
    let summary = cpu_text("knn", &line, &[&args[..], &["--out", &out]].concat());
    assert!(summary.contains("query:      "), "{summary}");
    assert!(summary.contains("q.csv (3 rows)"), "{summary}");
    assert!(summary.contains("neighbours: k = 2, uniform"), "{summary}");
    assert!(summary.contains("written:    "), "{summary}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), text);

    let npy = path(&dir, "p.npy");
    let out = npy.display().to_string();
    let (_, json) = cpu_json("knn", &line, &[&args[..], &["--out", &out]].concat());
    assert_eq!(read_npy(&npy).unwrap(), Column::F64(vec![0.5, 2.5, 3.5]));
    assert_eq!(json["out"], out.as_str());
    assert_eq!(json["rows"], 3);
    assert_eq!(json["task"], "regression");
    assert!(json.get("predictions").is_none());

    let (_, json) = cpu_json("knn", &line, &args);
    assert_eq!(f64s(&json["predictions"]), [0.5, 2.5, 3.5]);
    assert_eq!(json["predictors"], serde_json::json!(["x"]));
    assert_eq!(json["backend"], "cpu");
}

/// Two kinds of animal by weight and length, and a column of ids that is no predictor.
const ANIMALS: &str = "id,kind,weight,length\n\
    1,cat,4,50\n2,cat,5,45\n3,cat,3.5,48\n\
    4,dog,30,60\n5,dog,25,70\n6,dog,35,65\n\
    7,\"bird, small\",0.1,10\n8,\"bird, small\",0.2,12\n";

#[test]
fn classify_predicts_text_labels() {
    let dir = tempfile::tempdir().unwrap();
    let animals = file(&dir, "animals.csv", ANIMALS);
    let q = file(&dir, "q.csv", "weight,length\n4.2,47\n28,66\n0.15,11\n")
        .display()
        .to_string();
    let args = [
        "--response",
        "kind",
        "--predictors",
        "weight,length",
        "--classify",
    ];
    let text = cpu_text(
        "knn",
        &animals,
        &[&args[..], &["--query", &q, "--k", "2"]].concat(),
    );
    // Classes in string order; the label with a comma quoted.
    assert_eq!(
        text,
        "row,prediction,proba_bird, small,proba_cat,proba_dog\n\
         0,cat,0.0,1.0,0.0\n1,dog,0.0,0.0,1.0\n2,\"bird, small\",1.0,0.0,0.0\n"
            .replace("proba_bird, small", "\"proba_bird, small\"")
    );
    let (_, json) = cpu_json(
        "knn",
        &animals,
        &[&args[..], &["--query", &q, "--k", "2"]].concat(),
    );
    assert_eq!(
        json["classes"],
        serde_json::json!(["bird, small", "cat", "dog"])
    );
    assert_eq!(
        json["predictions"],
        serde_json::json!(["cat", "dog", "bird, small"])
    );
    assert_eq!(rows(&json["proba"], f64s)[1], [0.0, 0.0, 1.0]);
    assert_eq!(json["task"], "classification");

    // Leave-one-out: with k = 1 every animal's nearest is of its kind; with k = 7 each sees
    // every other, among which its own kind (two or one) is outvoted.
    let json = scores(&animals, &[&args[..], &["--k", "1,7"]].concat());
    assert_eq!(json[0]["error"], 0.0);
    assert_eq!(json[0]["metric"], "misclassification");
    assert_eq!(json[0]["best"], true);
    assert_eq!(json[1]["error"], 1.0);

    // Labels that are numbers are ordered by value, and a .npy file holds them.
    let numbers = file(&dir, "n.csv", "label,x\n10,0\n10,1\n2,5\n2,6\n");
    let qn = file(&dir, "qn.csv", "x\n0.2\n5.5\n").display().to_string();
    let npy = path(&dir, "labels.npy");
    let out = npy.display().to_string();
    let base = [
        "--response",
        "label",
        "--classify",
        "--query",
        &qn,
        "--k",
        "1",
    ];
    let text = cpu_text("knn", &numbers, &base);
    assert_eq!(
        text,
        "row,prediction,proba_2,proba_10\n0,10,0.0,1.0\n1,2,1.0,0.0\n"
    );
    cpu_text("knn", &numbers, &[&base[..], &["--out", &out]].concat());
    assert_eq!(read_npy(&npy).unwrap(), Column::F64(vec![10.0, 2.0]));
    // Text labels do not go into a .npy file.
    let err = cpu_fails(
        "knn",
        &animals,
        &[&args[..], &["--query", &q, "--k", "1", "--out", &out]].concat(),
        1,
    );
    assert!(err.contains("labels of `kind` are text"), "{err}");
}

#[test]
fn standardize_lets_every_predictor_count() {
    let dir = tempfile::tempdir().unwrap();
    // x tells the class; z, in thousands, differs between the classes by only 30.
    let set = file(
        &dir,
        "s.csv",
        "class,x,z\na,0,0\na,0,1000\na,0,2000\nb,1,30\nb,1,1030\nb,1,2030\n",
    );
    let q = file(&dir, "q.csv", "x,z\n0.95,1010\n")
        .display()
        .to_string();
    let args = ["--response", "class", "--classify", "--k", "1"];
    // Unscaled, z decides: each point's nearest is of the other class.
    let raw = scores(&set, &args);
    assert_eq!(raw[0]["error"], 1.0);
    let scaled = scores(&set, &[&args[..], &["--standardize"]].concat());
    assert_eq!(scaled[0]["error"], 0.0);
    // The query is scaled by the training numbers: (0.95, 1010) is near b's x.
    let predict = |extra: &[&str]| {
        let all = [&args[..], &["--query", &q], extra].concat();
        cpu_json("knn", &set, &all).1["predictions"][0].clone()
    };
    assert_eq!(predict(&[]), "a");
    assert_eq!(predict(&["--standardize"]), "b");
    let text = cpu_text("knn", &set, &[&args[..], &["--standardize"]].concat());
    assert!(text.contains("(predictors standardized)"), "{text}");

    // A constant predictor is only centred (scale 1), as StandardScaler does.
    let constant = file(&dir, "c.csv", "y,x,c\n0,0,5\n1,1,5\n2,2,5\n3,3,5\n");
    let with = scores(
        &constant,
        &["--response", "y", "--k", "1,2", "--standardize"],
    );
    let without = scores(&constant, &["--response", "y", "--k", "1,2"]);
    assert_eq!(with, without);
}

#[test]
fn npy_training_columns_are_named_by_index() {
    let dir = tempfile::tempdir().unwrap();
    let npy = path(&dir, "t.npy");
    // Columns 0 (x), 1 (a label of 0 or 1).
    write_npy_matrix(&npy, &[0i64, 0, 1, 0, 5, 1, 6, 1], 4, 2).unwrap();
    let json = scores(&npy, &["--response", "1", "--classify", "--k", "1"]);
    assert_eq!(json[0]["error"], 0.0);
    let err = cpu_fails("knn", &npy, &["--response", "2", "--k", "1"], 1);
    assert!(err.contains("`2`") && err.contains("0 to 1"), "{err}");
}

#[test]
fn knn_errors_are_one_clear_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let line = file(&dir, "line.csv", LINE);
    let fails = |args: &[&str]| cpu_fails("knn", &line, args, 1);

    let q = file(&dir, "q.csv", "z\n1\n").display().to_string();
    let err = fails(&["--response", "y", "--query", &q, "--k", "1"]);
    assert!(err.contains("q.csv: no column named `x`"), "{err}");
    let err = fails(&["--response", "y", "--k", "5"]);
    assert!(err.contains("k = 5") && err.contains("1 to n - 1"), "{err}");
    let good = file(&dir, "good.csv", "x\n1\n").display().to_string();
    let err = fails(&["--response", "y", "--query", &good, "--k", "6"]);
    assert!(err.contains("6") && err.contains("only 5 points"), "{err}");
    let err = fails(&["--response", "name", "--k", "1"]);
    assert!(
        err.contains("`a` is not a number") && err.contains("--classify"),
        "{err}"
    );
    let err = fails(&["--response", "w", "--k", "1"]);
    assert!(err.contains("no column named `w`"), "{err}");
    let err = fails(&["--response", "y", "--predictors", "x,y", "--k", "1"]);
    assert!(err.contains("`y` is the response"), "{err}");
    let args = ["--response", "y", "--k", "1", "--weights", "distance"];
    let err = fails(&[&args[..], &["--metric", "inner_product"]].concat());
    assert!(err.contains("similarity"), "{err}");

    let only = file(&dir, "only.csv", "y,name\n1,a\n2,b\n");
    let err = cpu_fails("knn", &only, &["--response", "y", "--k", "1"], 1);
    assert!(err.contains("no predictors"), "{err}");
    let gap = file(&dir, "gap.csv", "y,x\n1,0\n2,\n3,2\n");
    let err = cpu_fails("knn", &gap, &["--response", "y", "--k", "1"], 1);
    assert!(
        err.contains("column `x` has a missing value at data row 1"),
        "{err}"
    );
    let unlabelled = file(&dir, "u.csv", "c,x\na,0\nNA,1\nb,2\n");
    let err = cpu_fails(
        "knn",
        &unlabelled,
        &["--response", "c", "--classify", "--k", "1"],
        1,
    );
    assert!(err.contains("missing label at data row 1"), "{err}");
    let bad_query = file(&dir, "bq.csv", "x\ninf\n").display().to_string();
    let err = fails(&["--response", "y", "--query", &bad_query, "--k", "1"]);
    assert!(err.contains("column `x` holds inf at data row 0"), "{err}");
}

#[test]
fn knn_usage_errors_exit_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let line = file(&dir, "line.csv", LINE);
    let l = line.display().to_string();
    let q = file(&dir, "q.csv", "x\n1\n").display().to_string();
    let out = path(&dir, "p.csv").display().to_string();
    assert_usage_errors(
        "knn",
        &line,
        &[
            (&["--response", "y"][..], "--k"),
            (&["--k", "1"], "--response"),
            (&["--response", "y", "--k", "0"], "1 or more"),
            (&["--response", "y", "--k", "1", "--out", &out], "--query"),
            (&["--response", "y", "--k", "1,2", "--query", &q], "one k"),
            (
                &["--response", "y", "--k", "1", "--query", &q, "--out", &l],
                "is the input file",
            ),
            (
                &["--response", "y", "--k", "1", "--query", &q, "--out", &q],
                "is the input file",
            ),
            (
                &["--response", "y", "--k", "1", "--weights", "cubic"],
                "cubic",
            ),
            (&["--response", "y", "--k", "1", "--self"], "--self"),
        ],
    );
    assert_eq!(names_in(&dir), ["line.csv", "q.csv"], "nothing written");
    let out = kselect_with_stdin(
        &["knn", "-", "--response", "y", "--query", "-", "--k", "1"],
        LINE.as_bytes().to_vec(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("TRAIN and --query are both -"));
}

#[test]
fn knn_cuda_backend_matches_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let animals = file(&dir, "animals.csv", ANIMALS);
    let q = file(&dir, "q.csv", "weight,length\n4.2,47\n28,66\n0.15,11\n")
        .display()
        .to_string();
    for extra in [&["--classify"][..], &["--weights", "distance"]] {
        let response = if extra[0] == "--classify" {
            "kind"
        } else {
            "id"
        };
        let args = [
            &[
                "--response",
                response,
                "--predictors",
                "weight,length",
                "--standardize",
            ][..],
            &["--query", &q, "--k", "3"],
            extra,
        ]
        .concat();
        if assert_cuda_matches_cpu("knn", &animals, &args).is_none() {
            return;
        }
    }
}

#[test]
fn truncated_and_malformed_point_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = path(&dir, "good.npy");
    write_npy_matrix(&good, &[0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], 3, 2).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    // The last value cut in half: not 3 points of 2 coordinates.
    let cut = path(&dir, "cut.npy");
    std::fs::write(&cut, &bytes[..bytes.len() - 4]).unwrap();
    // A header that promises 10^12 rows the file does not hold.
    let huge = path(&dir, "huge.npy");
    let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 2), }";
    std::fs::write(&huge, common::cli::npy_with_header(header)).unwrap();
    // Bytes that are neither .npy nor CSV numbers.
    let junk = path(&dir, "junk.npy");
    std::fs::write(&junk, b"\x93NUMPY\x01\x00\xff\xff garbage").unwrap();
    for bad in [&cut, &huge, &junk] {
        for args in [
            vec!["--self", "--k", "1"],
            vec!["--query", good.to_str().unwrap(), "--k", "1"],
        ] {
            let err = cpu_fails("neighbors", bad, &args, 1);
            assert!(!err.is_empty(), "{}: no message", bad.display());
        }
        // As the query file too.
        let bad_query = bad.to_str().unwrap();
        let err = cpu_fails("neighbors", &good, &["--query", bad_query, "--k", "1"], 1);
        assert!(!err.is_empty(), "{}: no message as queries", bad.display());
    }
}

#[cfg(unix)]
#[test]
fn points_from_a_fifo_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let chunks = ["x,y\n0,0\n1,", "0\n3,0\n", "7,0\n"]
        .map(|c| c.as_bytes().to_vec())
        .to_vec();
    let (fifo, writer) = common::cli::fifo_writing(
        &dir,
        "points.fifo",
        chunks,
        std::time::Duration::from_millis(200),
    );
    let queries = file(&dir, "q.csv", QUERIES);
    let (_, json) = cpu_json(
        "neighbors",
        &fifo,
        &["--query", queries.to_str().unwrap(), "--k", "2"],
    );
    writer.join().unwrap();
    let from_fifo = json.clone();
    let base = file(&dir, "base.csv", BASE);
    let (_, from_file) = cpu_json(
        "neighbors",
        &base,
        &["--query", queries.to_str().unwrap(), "--k", "2"],
    );
    for field in ["points", "indices", "distances"] {
        assert_eq!(from_fifo[field], from_file[field], "{field}");
    }
}
