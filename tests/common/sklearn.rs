//! The scikit-learn reference cases of `tests/data/knn/sklearn_cases.json` (written by
//! `scripts/knn_sklearn_cases.py`) and readers of their arrays.

use serde_json::Value;

/// The whole cases file.
pub fn cases() -> Value {
    let path = super::cli::repository_file("tests/data/knn/sklearn_cases.json");
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

/// An array of numbers.
pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// An array of integers.
pub fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}
