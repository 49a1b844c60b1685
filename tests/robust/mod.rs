//! What the regression tests share: the data sets of `datasets/robust` with R's references,
//! the checks of a fit against them, and simulated contaminated data.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kselect::io::{read_csv_column, ColumnVisitor};
use kselect::regression::{Lts, Method, RegressionFit};
use kselect::Element;
use kselect::Matrix;
use serde_json::Value;

/// The data sets: in the source tree the binary was built from, or (a binary run elsewhere from
/// a copy of the repository's root) under the working directory.
pub fn robust_dir() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/robust");
    if built.is_dir() {
        built
    } else {
        PathBuf::from("datasets/robust")
    }
}

struct ToF64;
impl ColumnVisitor for ToF64 {
    type Output = Vec<f64>;
    fn visit<T: Element>(self, data: &[T]) -> Vec<f64> {
        data.iter().map(|v| v.to_f64()).collect()
    }
}

/// One data set of `references.json`: the design and R's results.
pub struct Case {
    pub name: String,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub n: usize,
    pub k: usize,
    pub reference: Value,
}

impl Case {
    /// The case's predictors, `n x k` row-major.
    pub fn matrix(&self) -> Matrix<'_, f64> {
        Matrix::new(&self.x, self.n, self.k)
    }
}

pub fn cases() -> Vec<Case> {
    let dir = robust_dir();
    let text = std::fs::read_to_string(dir.join("references.json")).unwrap();
    let refs: Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for name in ["stackloss", "starsCYG", "hbk", "wood", "Animals2"] {
        let r = &refs[name];
        let path = dir.join(r["file"].as_str().unwrap());
        let column = |c: &str| read_csv_column(&path, Some(c)).unwrap().values.visit(ToF64);
        let log = r["log_transform"].as_bool().unwrap();
        let tr = |v: Vec<f64>| -> Vec<f64> {
            if log {
                v.into_iter().map(f64::ln).collect()
            } else {
                v
            }
        };
        let y = tr(column(r["response"].as_str().unwrap()));
        let preds: Vec<Vec<f64>> = r["predictors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| tr(column(p.as_str().unwrap())))
            .collect();
        let n = y.len();
        let k = preds.len();
        let x: Vec<f64> = (0..n)
            .flat_map(|i| preds.iter().map(move |c| c[i]))
            .collect();
        assert_eq!(n as u64, r["n"].as_u64().unwrap());
        out.push(Case {
            name: name.to_string(),
            x,
            y,
            n,
            k,
            reference: r.clone(),
        });
    }
    out
}

pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

pub fn assert_close(name: &str, what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{name}: {what} lengths");
    let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for (j, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1e-3 * scale),
            "{name}: {what}[{j}] = {g}, R has {w}"
        );
    }
}

/// Every coefficient of `fit` within `tol` (absolute) of the true `beta`.
pub fn assert_near_beta(what: &str, fit: &RegressionFit, beta: &[f64], tol: f64) {
    for (j, (b, t)) in fit.coefficients.iter().zip(beta).enumerate() {
        assert!(
            (b - t).abs() < tol,
            "{what} coefficient {j}: {b} vs {t} (all: {:?})",
            fit.coefficients
        );
    }
}

/// Internal consistency of a fit: residuals, weights, outliers, subset.
pub fn check_consistency(name: &str, fit: &RegressionFit, y: &[f64]) {
    assert_eq!(fit.residuals.len(), fit.n, "{name}");
    assert_eq!(fit.weights.len(), fit.n, "{name}");
    assert_eq!(fit.best_subset.len(), fit.h, "{name}");
    let zeros: Vec<usize> = (0..fit.n).filter(|&i| fit.weights[i] == 0.0).collect();
    assert_eq!(zeros, fit.outliers, "{name}");
    let ys: f64 = y.iter().map(|v| v.abs()).fold(0.0, f64::max);
    // The objective is the sum of the squares of the raw residuals over the best subset.
    if fit.method == Method::Lts {
        let s: f64 = fit
            .best_subset
            .iter()
            .map(|&i| fit.raw_residuals[i] * fit.raw_residuals[i])
            .sum();
        assert!(
            (s - fit.objective).abs() <= 1e-12 * (fit.objective + ys * ys * 1e-6),
            "{name}"
        );
    }
}

/// robustbase with other settings, from R 4.2.2 / robustbase 0.95-0 (`ltsReg(x, y, ...)` with
/// `nsamp = "exact"`, or 5000 for hbk): (data set, intercept, alpha, objective, coefficients,
/// raw scale, scale, outliers).
pub type Setting = (
    &'static str,
    bool,
    f64,
    f64,
    &'static [f64],
    f64,
    f64,
    &'static [usize],
);
pub const OTHER_SETTINGS: &[Setting] = &[
    (
        "stackloss",
        false,
        0.5,
        16.328_645_173_75,
        &[1.019_326_820_857, 0.417_977_041_955_5, -0.610_553_672_329_5],
        4.206_239_516_611,
        4.473_102_632_74,
        &[],
    ),
    (
        "stackloss",
        true,
        0.75,
        20.400_800_254_13,
        &[
            -37.652_458_900_77,
            0.797_685_560_065_9,
            0.577_340_457_393_3,
            -0.067_060_176_898_35,
        ],
        2.235_501_781_551,
        1.935_054_119_284,
        &[0, 2, 3, 20],
    ),
    (
        "stackloss",
        true,
        1.0,
        178.829_961_598_4,
        &[
            -39.919_674_420_12,
            0.715_640_200_485_3,
            1.295_286_124_389,
            -0.152_122_519_148_6,
        ],
        3.243_363_918_185,
        2.990_233_783_489,
        &[20],
    ),
    (
        "hbk",
        true,
        0.75,
        12.070_402_659_12,
        &[
            -0.180_461_628_650_8,
            0.081_378_710_688_19,
            0.039_901_812_523_17,
            -0.051_665_577_076_57,
        ],
        0.831_148_256_704_5,
        0.752_537_022_857_3,
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    ),
    (
        "wood",
        true,
        0.9,
        0.003_380_213_421_72,
        &[
            0.351_693_085_837_4,
            0.401_210_565_044_7,
            -1.850_847_179_122,
            -0.194_573_287_016_8,
            -0.004_590_397_897_985,
            0.300_288_457_831,
        ],
        0.022_379_676_900_34,
        0.022_876_368_469_02,
        &[10],
    ),
];

/// MASS `lqs` scales (`$scale`) where our LMS reaches the same fit, from R 4.2.2 / MASS 7.3-58:
/// `lqs(x, y, method = "lqs", quantile = lms_h, nsamp = "exact")$scale`.
pub const LQS_SCALES: &[(&str, f64, f64)] = &[
    (
        "stackloss",
        0.692_724_042_776_807_6,
        0.843_411_140_379_922_5,
    ),
    ("starsCYG", 0.376_089_720_546_348_5, 0.366_175_661_922_820_5),
    ("hbk", 0.594_830_410_817_516_5, 0.633_740_118_945_624_2),
    ("wood", 0.004_676_775_081_493_503, 0.006_608_495_590_149_596),
    ("Animals2", 0.581_381_524_916_320_8, 0.662_450_792_606_342_3),
];

/// splitmix64 uniforms and Box–Muller normals.
pub struct Gen(pub u64);
impl Gen {
    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn uniform(&mut self) -> f64 {
        ((self.u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// `n` rows of `k` standard normal predictors, `y = beta0 + x beta + N(0, 1)`, and the first
/// `frac` of the rows contaminated: half vertical outliers (y + 50), half bad leverage points
/// (x far out, y on another plane).
pub fn contaminated(n: usize, beta: &[f64], frac: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let k = beta.len() - 1;
    let mut g = Gen(seed);
    let mut x = Vec::with_capacity(n * k);
    let mut y = Vec::with_capacity(n);
    let bad = (frac * n as f64) as usize;
    for i in 0..n {
        let row: Vec<f64> = (0..k).map(|_| g.normal()).collect();
        let clean = beta[0] + row.iter().zip(&beta[1..]).map(|(a, b)| a * b).sum::<f64>();
        if i < bad / 2 {
            x.extend_from_slice(&row);
            y.push(clean + 50.0 + 5.0 * g.normal());
        } else if i < bad {
            let far: Vec<f64> = row.iter().map(|v| 10.0 + 0.5 * v).collect();
            y.push(-20.0 + far.iter().sum::<f64>() * -3.0 + g.normal());
            x.extend_from_slice(&far);
        } else {
            x.extend_from_slice(&row);
            y.push(clean + g.normal());
        }
    }
    (x, y)
}

/// Checks an LTS fit of `case` (default settings) against robustbase: the objective equals or
/// beats `lts_objective` (relative 1e-9); when it equals it, the coefficients (1e-6 relative),
/// the scales and the outlier rows match `ltsReg`'s.
pub fn check_lts(case: &Case, fit: &RegressionFit) {
    let r = &case.reference;
    let name = case.name.as_str();
    assert_eq!(fit.method, Method::Lts);
    assert_eq!(fit.h as u64, r["h"].as_u64().unwrap(), "{name}: h");
    assert_eq!(fit.p as u64, r["p"].as_u64().unwrap(), "{name}: p");
    let want = r["lts_objective"].as_f64().unwrap();
    let above = format!("{name}: LTS objective {} above R's {want}", fit.objective);
    if !matches_or_beats(fit.objective, want, &above) {
        // A strictly better optimum: nothing of robustbase's to compare.
        return;
    }
    assert_close(
        name,
        "raw coefficients",
        &fit.raw_coefficients,
        &floats(&r["lts_raw_coefficients"]),
        1e-6,
    );
    assert_close(
        name,
        "coefficients",
        &fit.coefficients,
        &floats(&r["ltsreg_coefficients"]),
        1e-6,
    );
    let raw_scale = r["ltsreg_raw_scale"].as_f64().unwrap();
    let scale = r["ltsreg_scale"].as_f64().unwrap();
    assert_scales(name, fit, (raw_scale, scale), 1e-6);
    let outliers: Vec<usize> = r["ltsreg_outliers_0based"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(fit.outliers, outliers, "{name}: outliers");
    check_consistency(name, fit, &case.y);
}

/// Asserts that the objective `got` is at most `want` (relative 1e-9; `above` says what is
/// wrong otherwise) and returns whether it matches `want` (relative 1e-9) rather than beats it.
fn matches_or_beats(got: f64, want: f64, above: &str) -> bool {
    assert!(got <= want * (1.0 + 1e-9), "{above}");
    rel(got, want) <= 1e-9
}

/// Asserts that the raw scale and the scale of `fit` are within relative `tol` of `want`
/// (raw scale, scale); `what` names the fit.
fn assert_scales(what: &str, fit: &RegressionFit, want: (f64, f64), tol: f64) {
    assert!(
        rel(fit.raw_scale, want.0) < tol,
        "{what}: raw scale {}",
        fit.raw_scale
    );
    assert!(rel(fit.scale, want.1) < tol, "{what}: scale {}", fit.scale);
}

/// Fits every setting of [`OTHER_SETTINGS`] with `lts` (its other settings left as they are)
/// and checks the fit against robustbase's.
pub fn check_other_settings(lts: &Lts) {
    let cases = cases();
    for &(name, intercept, alpha, objective, coefficients, raw_scale, scale, outliers) in
        OTHER_SETTINGS
    {
        let case = cases.iter().find(|c| c.name == name).unwrap();
        let fit = lts
            .clone()
            .intercept(intercept)
            .alpha(alpha)
            .fit(case.matrix(), &case.y)
            .unwrap();
        let what = format!("{name} (intercept {intercept}, alpha {alpha})");
        let above = format!("{what}: {}", fit.objective);
        if !matches_or_beats(fit.objective, objective, &above) {
            continue;
        }
        assert_close(&what, "coefficients", &fit.coefficients, coefficients, 1e-9);
        assert_scales(&what, &fit, (raw_scale, scale), 1e-9);
        assert_eq!(fit.outliers, outliers, "{what}");
    }
}

/// Checks an LMS fit of `case` (default settings) against MASS `lqs`: the objective at
/// `lms_h` equals or beats `lms_objective_abs_residual`; when it equals it, the scales match.
pub fn check_lms(case: &Case, fit: &RegressionFit) {
    let r = &case.reference;
    let name = case.name.as_str();
    let h = r["lms_h"].as_u64().unwrap() as usize;
    assert_eq!(fit.method, Method::Lms);
    assert_eq!(fit.h, h, "{name}: LMS h");
    let want = r["lms_objective_abs_residual"].as_f64().unwrap();
    assert!(
        fit.objective <= want * (1.0 + 1e-9),
        "{name}: LMS objective {} above lqs's {want}",
        fit.objective
    );
    check_consistency(name, fit, &case.y);
    // The objective is the h-th smallest absolute raw residual.
    let mut abs: Vec<f64> = fit.raw_residuals.iter().map(|v| v.abs()).collect();
    abs.sort_by(f64::total_cmp);
    assert!((abs[h - 1] - fit.objective).abs() <= 1e-15 * want.max(1.0));
    if rel(fit.objective, want) <= 1e-9 {
        let &(_, s1, s2) = LQS_SCALES.iter().find(|(n, _, _)| *n == name).unwrap();
        assert!(
            rel(fit.raw_scale, s1) < 1e-6,
            "{name}: lqs scale {}",
            fit.raw_scale
        );
        // lqs's second scale depends on which rows its fit flags: compare when the raw fits
        // agree.
        let lqs = floats(&r["lms_coefficients"]);
        let same = fit
            .raw_coefficients
            .iter()
            .zip(&lqs)
            .all(|(a, b)| (a - b).abs() <= 1e-6 * b.abs().max(1e-3));
        if same {
            assert!(
                rel(fit.scale, s2) < 1e-6,
                "{name}: lqs second scale {}",
                fit.scale
            );
        }
    }
}
