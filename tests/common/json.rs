//! Reading the numbers of JSON arrays in tests: the integers exactly, the floats with the
//! strings `"inf"`, `"-inf"` and `"nan"` that kselect writes for the non-finite values.

use serde_json::Value;

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
