//! LTS and LMS regression against R (robustbase 0.95-0 `ltsReg`, MASS 7.3-58 `lqs`) on the
//! classic data sets of `datasets/robust`, on simulated contaminated data, and on bad input.
//!
//! Acceptance on each data set: the LTS objective equals or beats robustbase's exhaustive one
//! (relative 1e-9); when it equals, the reweighted coefficients (1e-6 relative), the outlier rows
//! and both scales match `ltsReg`. The LMS objective equals or beats `lqs`'s over all
//! `p`-subsets.

use std::path::{Path, PathBuf};

use kselect::io::{read_csv_column, ColumnVisitor};
use kselect::regression::{Lms, Lts, Method, RegressionFit};
use kselect::{Element, Error};
use serde_json::Value;

fn robust_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/robust")
}

struct ToF64;
impl ColumnVisitor for ToF64 {
    type Output = Vec<f64>;
    fn visit<T: Element>(self, data: &[T]) -> Vec<f64> {
        data.iter().map(|v| v.to_f64()).collect()
    }
}

/// One data set of `references.json`: the design and R's results.
struct Case {
    name: String,
    x: Vec<f64>,
    y: Vec<f64>,
    n: usize,
    k: usize,
    reference: Value,
}

fn cases() -> Vec<Case> {
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

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

fn assert_close(name: &str, what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{name}: {what} lengths");
    let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for (j, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1e-3 * scale),
            "{name}: {what}[{j}] = {g}, R has {w}"
        );
    }
}

#[test]
fn lts_matches_robustbase_on_the_classic_data_sets() {
    for case in cases() {
        let r = &case.reference;
        let fit = Lts::new().fit(&case.x, case.n, case.k, &case.y).unwrap();
        let name = case.name.as_str();
        assert_eq!(fit.method, Method::Lts);
        assert_eq!(fit.h as u64, r["h"].as_u64().unwrap(), "{name}: h");
        assert_eq!(fit.p as u64, r["p"].as_u64().unwrap(), "{name}: p");
        let want = r["lts_objective"].as_f64().unwrap();
        assert!(
            fit.objective <= want * (1.0 + 1e-9),
            "{name}: LTS objective {} above R's {want}",
            fit.objective
        );
        if rel(fit.objective, want) > 1e-9 {
            // A strictly better optimum: nothing of robustbase's to compare.
            continue;
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
        assert!(
            rel(fit.raw_scale, raw_scale) < 1e-6,
            "{name}: raw scale {}",
            fit.raw_scale
        );
        assert!(rel(fit.scale, scale) < 1e-6, "{name}: scale {}", fit.scale);
        let outliers: Vec<usize> = r["ltsreg_outliers_0based"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(fit.outliers, outliers, "{name}: outliers");
        check_consistency(name, &fit, &case.y);
    }
}

/// Internal consistency of a fit: residuals, weights, outliers, subset.
fn check_consistency(name: &str, fit: &RegressionFit, y: &[f64]) {
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
type Setting = (
    &'static str,
    bool,
    f64,
    f64,
    &'static [f64],
    f64,
    f64,
    &'static [usize],
);
const OTHER_SETTINGS: &[Setting] = &[
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

#[test]
fn lts_matches_robustbase_with_other_settings() {
    let cases = cases();
    for &(name, intercept, alpha, objective, coefficients, raw_scale, scale, outliers) in
        OTHER_SETTINGS
    {
        let case = cases.iter().find(|c| c.name == name).unwrap();
        let fit = Lts::new()
            .intercept(intercept)
            .alpha(alpha)
            .fit(&case.x, case.n, case.k, &case.y)
            .unwrap();
        let what = format!("{name} (intercept {intercept}, alpha {alpha})");
        assert!(
            fit.objective <= objective * (1.0 + 1e-9),
            "{what}: {}",
            fit.objective
        );
        if rel(fit.objective, objective) > 1e-9 {
            continue;
        }
        assert_close(&what, "coefficients", &fit.coefficients, coefficients, 1e-9);
        assert!(
            rel(fit.raw_scale, raw_scale) < 1e-9,
            "{what}: raw scale {}",
            fit.raw_scale
        );
        assert!(rel(fit.scale, scale) < 1e-9, "{what}: scale {}", fit.scale);
        assert_eq!(fit.outliers, outliers, "{what}");
    }
}

/// MASS `lqs` scales (`$scale`) where our LMS reaches the same fit, from R 4.2.2 / MASS 7.3-58:
/// `lqs(x, y, method = "lqs", quantile = lms_h, nsamp = "exact")$scale`.
const LQS_SCALES: &[(&str, f64, f64)] = &[
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

#[test]
fn lms_reaches_lqs_on_the_classic_data_sets() {
    for case in cases() {
        let r = &case.reference;
        let name = case.name.as_str();
        let h = r["lms_h"].as_u64().unwrap() as usize;
        let fit = Lms::new().fit(&case.x, case.n, case.k, &case.y).unwrap();
        assert_eq!(fit.method, Method::Lms);
        assert_eq!(fit.h, h, "{name}: LMS h");
        let want = r["lms_objective_abs_residual"].as_f64().unwrap();
        assert!(
            fit.objective <= want * (1.0 + 1e-9),
            "{name}: LMS objective {} above lqs's {want}",
            fit.objective
        );
        check_consistency(name, &fit, &case.y);
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
}

// ---------------------------------------------------------------------------------------------
// Simulated data
// ---------------------------------------------------------------------------------------------

/// splitmix64 uniforms and Box–Muller normals.
struct Gen(u64);
impl Gen {
    fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        ((self.u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// `n` rows of `k` standard normal predictors, `y = beta0 + x beta + N(0, 1)`, and the first
/// `frac` of the rows contaminated: half vertical outliers (y + 50), half bad leverage points
/// (x far out, y on another plane).
fn contaminated(n: usize, beta: &[f64], frac: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
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

fn ols(x: &[f64], y: &[f64], n: usize, k: usize) -> Vec<f64> {
    // Least squares with an intercept: LTS with h = n (alpha = 1) is exactly that.
    Lts::new()
        .alpha(1.0)
        .fit(x, n, k, y)
        .unwrap()
        .raw_coefficients
}

#[test]
fn lts_recovers_the_truth_under_45_percent_contamination() {
    let beta = [1.0, 2.0, -1.0, 0.5, 3.0, -2.0];
    let (n, k) = (2000, 5);
    let (x, y) = contaminated(n, &beta, 0.45, 11);
    let fit = Lts::new().seed(5).fit(&x, n, k, &y).unwrap();
    assert_eq!(fit.p, 6);
    for (j, (b, t)) in fit.coefficients.iter().zip(&beta).enumerate() {
        assert!((b - t).abs() < 0.15, "LTS coefficient {j}: {b} vs {t}");
    }
    // The clean rows' residual spread is the error's (1). (`scale` itself is larger: its
    // consistency factor, robustbase's, assumes that the rows it keeps are the central part of
    // one normal sample, not all of the clean 55%.)
    let kept: Vec<f64> = (0..n)
        .filter(|&i| fit.weights[i] == 1.0)
        .map(|i| fit.residuals[i])
        .collect();
    let rms = (kept.iter().map(|r| r * r).sum::<f64>() / kept.len() as f64).sqrt();
    assert!((rms - 1.0).abs() < 0.1, "rms {rms}");
    // Almost every contaminated row is flagged, almost no clean one.
    let bad = 900;
    let flagged_bad = fit.outliers.iter().filter(|&&i| i < bad).count();
    let flagged_clean = fit.outliers.iter().filter(|&&i| i >= bad).count();
    assert!(flagged_bad >= 890, "{flagged_bad}");
    assert!(flagged_clean < 40, "{flagged_clean}");
    // Least squares is ruined by the same data.
    let ls = ols(&x, &y, n, k);
    let worst = ls
        .iter()
        .zip(&beta)
        .map(|(b, t)| (b - t).abs())
        .fold(0.0, f64::max);
    assert!(worst > 1.0, "OLS {ls:?}");
    // LMS resists too.
    let lms = Lms::new().seed(5).nsamp(500).fit(&x, n, k, &y).unwrap();
    for (b, t) in lms.coefficients.iter().zip(&beta) {
        assert!((b - t).abs() < 0.3, "LMS {:?}", lms.coefficients);
    }
}

#[test]
fn a_seed_gives_the_same_bits_on_any_number_of_threads() {
    let beta = [0.5, -1.0, 2.0, 1.0];
    // 700 rows: the nested subsampling of FAST-LTS; 150 rows for LMS.
    let (x, y) = contaminated(700, &beta, 0.3, 3);
    let (xs, ys) = contaminated(150, &beta, 0.3, 4);
    let run = |threads: usize, seed: u64| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                (
                    Lts::new().seed(seed).fit(&x, 700, 3, &y).unwrap(),
                    Lms::new()
                        .seed(seed)
                        .nsamp(300)
                        .fit(&xs, 150, 3, &ys)
                        .unwrap(),
                )
            })
    };
    let (a, la) = run(1, 17);
    let (b, lb) = run(3, 17);
    assert_eq!(a, b);
    assert_eq!(la, lb);
    for (u, v) in a.coefficients.iter().zip(&b.coefficients) {
        assert_eq!(u.to_bits(), v.to_bits());
    }
    // Small data (one stage, random starts) too.
    let one = Lts::new()
        .seed(2)
        .exhaustive_limit(0)
        .fit(&xs, 150, 3, &ys)
        .unwrap();
    let two = Lts::new()
        .seed(2)
        .exhaustive_limit(0)
        .fit(&xs, 150, 3, &ys)
        .unwrap();
    assert_eq!(one, two);
    assert_eq!(one.starts, 500);
}

#[test]
fn special_models() {
    // Location: intercept only.
    let y = [
        1.0, 1.2, 0.9, 1.1, 1.05, 0.95, 30.0, 31.0, -20.0, 1.02, 0.98,
    ];
    let fit = Lts::new().fit(&[], 11, 0, &y).unwrap();
    assert_eq!(fit.p, 1);
    assert!(
        (fit.coefficients[0] - 1.022).abs() < 0.02,
        "{:?}",
        fit.coefficients
    );
    assert_eq!(fit.outliers, vec![6, 7, 8]);
    let lms = Lms::new().fit(&[], 11, 0, &y).unwrap();
    assert!((lms.raw_coefficients[0] - 1.0).abs() < 0.1);
    // alpha = 1: least squares.
    let x = [0.0, 1.0, 2.0, 3.0, 4.0];
    let y = [0.1, 0.9, 2.1, 2.9, 4.2];
    let fit = Lts::new().alpha(1.0).fit(&x, 5, 1, &y).unwrap();
    assert_eq!(fit.h, 5);
    assert!((fit.raw_coefficients[1] - 1.02).abs() < 1e-12);
    // Regression through the origin.
    let x: Vec<f64> = (1..=12).map(f64::from).collect();
    let mut y: Vec<f64> = x.iter().map(|v| 1.5 * v).collect();
    y[2] = 100.0;
    let fit = Lts::new().intercept(false).fit(&x, 12, 1, &y).unwrap();
    assert!((fit.coefficients[0] - 1.5).abs() < 1e-12);
    assert!(fit.exact_fit);
    assert_eq!(fit.outliers, vec![2]);
}

#[test]
fn bad_input_is_an_error() {
    let lts = Lts::new();
    let lms = Lms::new();
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let y = [1.0, 2.0, 3.0, 4.0, 5.0, 7.0];
    let invalid = |r: kselect::Result<RegressionFit>| match r {
        Err(Error::InvalidArgument(msg)) => msg,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    // Empty, n <= p.
    assert!(invalid(lts.fit(&[], 0, 1, &[])).contains("n = 0"));
    assert!(invalid(lms.fit(&[], 0, 0, &[])).contains("n = 0"));
    assert!(invalid(lts.fit(&x[..2], 2, 1, &y[..2])).contains("too few"));
    assert!(invalid(lts.fit(&x, 2, 3, &y[..2])).contains("too few"));
    // Lengths.
    assert!(invalid(lts.fit(&x, 6, 1, &y[..5])).contains("y holds 5"));
    assert!(invalid(lms.fit(&x[..5], 6, 1, &y)).contains("x holds 5"));
    // NaN and infinity, named by row and column.
    let mut bad = x.to_vec();
    bad[4] = f64::NAN;
    assert!(invalid(lts.fit(&bad, 6, 1, &y)).contains("row 4, column 0"));
    let mut bad_y = y.to_vec();
    bad_y[1] = f64::INFINITY;
    assert!(invalid(lms.fit(&x, 6, 1, &bad_y)).contains("y[1]"));
    // A constant column with an intercept; collinear columns.
    let constant: Vec<f64> = x.iter().flat_map(|&v| [v, 3.0]).collect();
    assert!(invalid(lts.fit(&constant, 6, 2, &y)).contains("column 1 is constant"));
    let collinear: Vec<f64> = x.iter().flat_map(|&v| [v, 2.0 * v - 1.0]).collect();
    assert!(invalid(lms.fit(&collinear, 6, 2, &y)).contains("singular"));
    // Settings.
    assert!(invalid(lts.clone().alpha(0.3).fit(&x, 6, 1, &y)).contains("alpha"));
    assert!(invalid(lts.clone().alpha(f64::NAN).fit(&x, 6, 1, &y)).contains("alpha"));
    assert!(invalid(lts.clone().h(3).fit(&x, 6, 1, &y)).contains("h = 3"));
    assert!(invalid(lts.clone().h(7).fit(&x, 6, 1, &y)).contains("h = 7"));
    assert!(invalid(lts.clone().nsamp(0).fit(&x, 6, 1, &y)).contains("nsamp"));
    assert!(invalid(lms.clone().h(6).fit(&x, 6, 1, &y)).contains("h = 6"));
    assert!(invalid(lms.clone().h(1).fit(&x, 6, 1, &y)).contains("h = 1"));
    assert!(invalid(lms.clone().nsamp(0).fit(&x, 6, 1, &y)).contains("nsamp"));
    // No predictors and no intercept.
    assert!(invalid(lts.clone().intercept(false).fit(&[], 6, 0, &y)).contains("no coefficient"));
    // Degenerate designs: most rows repeated (every p-subset of the distinct rows is singular
    // but for two).
    let rep = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0];
    let ry = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    match lts.fit(&rep, 8, 1, &ry) {
        Ok(fit) => assert!(fit.coefficients.iter().all(|v| v.is_finite())),
        Err(Error::InvalidArgument(_)) => {}
        Err(other) => panic!("{other:?}"),
    }
    let _ = lms.fit(&rep, 8, 1, &ry);
}

#[test]
fn array_views_fit_like_slices() {
    let case = cases().into_iter().next().unwrap();
    let x = ndarray::Array2::from_shape_vec((case.n, case.k), case.x.clone()).unwrap();
    let y = ndarray::Array1::from(case.y.clone());
    let a = Lts::new().fit_array(x.view(), y.view()).unwrap();
    let b = Lts::new().fit(&case.x, case.n, case.k, &case.y).unwrap();
    assert_eq!(a, b);
    // A transposed (column-major) view is copied into rows.
    let xt = x.t().to_owned();
    let a = Lts::new().fit_array(xt.t(), y.view()).unwrap();
    assert_eq!(a, b);
}

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    /// Small designs from a few values (many ties, repeated and collinear rows, exact fits,
    /// huge and tiny magnitudes): every fit returns a result with finite numbers or an error.
    fn design() -> impl Strategy<Value = (usize, usize, bool, Vec<f64>, Vec<f64>)> {
        let value = prop_oneof![
            Just(0.0),
            Just(1.0),
            Just(-2.0),
            Just(3.5),
            Just(1e150),
            Just(-1e-150),
            -10.0..10.0f64,
        ];
        (1usize..14, 0usize..4, any::<bool>()).prop_flat_map(move |(n, k, intercept)| {
            (
                Just(n),
                Just(k),
                Just(intercept),
                proptest::collection::vec(value.clone(), n * k),
                proptest::collection::vec(value.clone(), n),
            )
        })
    }

    fn check(fit: kselect::Result<RegressionFit>) {
        match fit {
            Ok(fit) => {
                assert!(fit.coefficients.iter().all(|v| v.is_finite()), "{fit:?}");
                assert!(fit.objective.is_finite() && fit.objective >= 0.0, "{fit:?}");
                assert_eq!(fit.weights.len(), fit.n);
            }
            Err(Error::InvalidArgument(_)) => {}
            Err(other) => panic!("unexpected error {other:?}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn fits_never_panic((n, k, intercept, x, y) in design(), seed in 0u64..4) {
            check(Lts::new().intercept(intercept).seed(seed).fit(&x, n, k, &y));
            check(Lts::new().intercept(intercept).alpha(1.0).fit(&x, n, k, &y));
            check(Lms::new().intercept(intercept).seed(seed).fit(&x, n, k, &y));
        }
    }
}
