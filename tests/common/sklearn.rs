//! The scikit-learn reference cases of `tests/data/knn/sklearn_cases.json` (written by
//! `scripts/knn_sklearn_cases.py`) and their matrices; arrays read with `cli::f64s` and
//! `cli::i64s`.

use serde_json::Value;

/// The whole cases file.
pub fn cases() -> Value {
    let path = super::repository_file("tests/data/knn/sklearn_cases.json");
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A matrix of the cases file as row-major values and the number of columns.
pub fn matrix(v: &Value) -> (Vec<f64>, usize) {
    let rows = v.as_array().unwrap();
    let dim = rows[0].as_array().unwrap().len();
    let data = rows
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
        .collect();
    (data, dim)
}
