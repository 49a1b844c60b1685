//! kselect's quantiles against numpy, bit for bit.
//!
//! `tests/data/quantile/golden.json` holds `numpy.quantile(x, qs, method=m)` for every method,
//! with `qs` a float64 array, for random, tied, infinite, signed-zero and large-integer inputs
//! of every element type. It is written by `scripts/gen_quantile_golden.py` (which needs
//! numpy); these tests only read it.

use std::collections::BTreeMap;

use kselect::{QuantileMethod, Selector};
use serde::Deserialize;

/// The golden file, embedded so that the test binary runs anywhere (a GPU machine too).
const GOLDEN: &str = include_str!("data/quantile/golden.json");

#[derive(Deserialize)]
struct Golden {
    numpy_version: String,
    methods: Vec<String>,
    qs: Vec<String>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    dtype: String,
    values: Vec<String>,
    zero_sign_ambiguous: bool,
    expected: BTreeMap<String, Vec<String>>,
}

fn load() -> Golden {
    serde_json::from_str(GOLDEN).unwrap_or_else(|e| panic!("tests/data/quantile/golden.json: {e}"))
}

fn f64_from_hex(s: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(s, 16).unwrap_or_else(|e| panic!("{s}: {e}")))
}

fn f32_from_hex(s: &str) -> f32 {
    f32::from_bits(u32::from_str_radix(s, 16).unwrap_or_else(|e| panic!("{s}: {e}")))
}

fn parse_all<T: std::str::FromStr>(values: &[String]) -> Vec<T>
where
    T::Err: std::fmt::Debug,
{
    values.iter().map(|v| v.parse().unwrap()).collect()
}

/// kselect's quantiles of one case, for every method in the file.
fn compute(case: &Case, qs: &[f64], method: QuantileMethod) -> Vec<f64> {
    let sel = Selector::new();
    let result = match case.dtype.as_str() {
        "f64" => {
            let data: Vec<f64> = case.values.iter().map(|v| f64_from_hex(v)).collect();
            sel.quantiles(&data, qs, method)
        }
        "f32" => {
            let data: Vec<f32> = case.values.iter().map(|v| f32_from_hex(v)).collect();
            sel.quantiles(&data, qs, method)
        }
        "i32" => sel.quantiles(&parse_all::<i32>(&case.values), qs, method),
        "i64" => sel.quantiles(&parse_all::<i64>(&case.values), qs, method),
        "u32" => sel.quantiles(&parse_all::<u32>(&case.values), qs, method),
        "u64" => sel.quantiles(&parse_all::<u64>(&case.values), qs, method),
        other => panic!("case {}: unknown dtype {other}", case.name),
    };
    result.unwrap_or_else(|e| panic!("case {} ({method}): {e}", case.name))
}

/// Bit-for-bit equality; any NaN equals any NaN; where the data holds both zeros, `-0.0`
/// equals `+0.0` (numpy's partition orders equal zeros arbitrarily).
fn same(got: f64, want: f64, zero_sign_ambiguous: bool) -> bool {
    got.to_bits() == want.to_bits()
        || (got.is_nan() && want.is_nan())
        || (zero_sign_ambiguous && got == 0.0 && want == 0.0)
}

/// Checks every case whose dtype passes `filter`; returns the number of values compared.
fn check(filter: impl Fn(&str) -> bool) -> usize {
    let golden = load();
    let qs: Vec<f64> = golden.qs.iter().map(|q| f64_from_hex(q)).collect();
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in golden.cases.iter().filter(|c| filter(&c.dtype)) {
        assert_eq!(
            case.expected.len(),
            QuantileMethod::ALL.len(),
            "case {}",
            case.name
        );
        for (name, expected) in &case.expected {
            let method: QuantileMethod = name.parse().unwrap();
            assert_eq!(method.name(), name);
            let got = compute(case, &qs, method);
            assert_eq!(got.len(), expected.len());
            for ((&q, &g), w) in qs.iter().zip(&got).zip(expected) {
                let want = f64_from_hex(w);
                compared += 1;
                if !same(g, want, case.zero_sign_ambiguous) {
                    failures.push(format!(
                        "{} / {name} / q={q:e}: kselect {g:e} ({:016x}), numpy {want:e} ({w})",
                        case.name,
                        g.to_bits()
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} quantiles differ from numpy {}; the first ones:\n{}",
        failures.len(),
        golden.numpy_version,
        failures[..failures.len().min(25)].join("\n")
    );
    compared
}

#[test]
fn golden_file_covers_every_method_and_dtype() {
    let golden = load();
    assert!(
        golden.numpy_version.starts_with("2."),
        "{}",
        golden.numpy_version
    );
    let names: Vec<&str> = QuantileMethod::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(golden.methods, names);
    assert!(golden.qs.len() >= 100);
    for dtype in ["f64", "f32", "i32", "i64", "u32", "u64"] {
        assert!(
            golden.cases.iter().any(|c| c.dtype == dtype),
            "no {dtype} case"
        );
    }
    for case in &golden.cases {
        let methods: Vec<&str> = case.expected.keys().map(String::as_str).collect();
        let mut sorted_names = names.clone();
        sorted_names.sort_unstable();
        assert_eq!(methods, sorted_names, "case {}", case.name);
    }
}

#[test]
fn golden_f64_bit_exact() {
    assert!(check(|d| d == "f64") > 0);
}

#[test]
fn golden_integers_bit_exact() {
    assert!(check(|d| !d.starts_with('f')) > 0);
}

/// numpy subtracts the two f32 neighbours in f32 before promoting to f64 (in kselect,
/// `Term::evaluate_as` called by the selector with the elements themselves).
#[test]
fn golden_f32_bit_exact() {
    assert!(check(|d| d == "f32") > 0);
}
