//! LTS and LMS regression against R (robustbase 0.95-0 `ltsReg`, MASS 7.3-58 `lqs`) on the
//! classic data sets of `datasets/robust`, on simulated contaminated data, and on bad input.
//!
//! Acceptance on each data set: the LTS objective equals or beats robustbase's exhaustive one
//! (relative 1e-9); when it equals, the reweighted coefficients (1e-6 relative), the outlier rows
//! and both scales match `ltsReg`. The LMS objective equals or beats `lqs`'s over all
//! `p`-subsets.

mod robust;

use kselect::regression::{Lms, LmsCoverage, Lts, Method, RegressionError, RegressionFit};
use kselect::{Error, Matrix};
use robust::*;

#[test]
fn lts_matches_robustbase_on_the_classic_data_sets() {
    for case in cases() {
        check_lts(&case, &Lts::new().fit(case.matrix(), &case.y).unwrap());
    }
}

#[test]
fn lts_matches_robustbase_with_other_settings() {
    check_other_settings(&Lts::new());
}

#[test]
fn lms_reaches_lqs_on_the_classic_data_sets() {
    for case in cases() {
        check_lms(&case, &Lms::new().fit(case.matrix(), &case.y).unwrap());
    }
}

#[test]
fn lms_reaches_lqs_lms_with_its_coverage_on_the_classic_data_sets() {
    // MASS lqs(method = "lms") minimizes the floor((n + 1) / 2)-th absolute residual.
    for case in cases() {
        let fit = Lms::new()
            .coverage(LmsCoverage::Median)
            .fit(case.matrix(), &case.y)
            .unwrap();
        let r = &case.reference;
        assert_eq!(fit.h, r["lqs_lms_h"].as_u64().unwrap() as usize);
        assert_eq!(fit.h, case.n.div_ceil(2));
        let want = r["lqs_lms_objective_abs_residual"].as_f64().unwrap();
        assert!(
            fit.objective <= want * (1.0 + 1e-9),
            "{}: LMS objective {} above lqs(method = \"lms\")'s {want}",
            case.name,
            fit.objective
        );
    }
}

#[test]
fn lms_accepts_every_coverage_from_p_plus_one_to_n() {
    let case = cases().into_iter().find(|c| c.name == "stackloss").unwrap();
    let p = case.k + 1;
    for h in p + 1..=case.n {
        let fit = Lms::new()
            .h(h)
            .fit(case.matrix(), &case.y)
            .unwrap_or_else(|e| panic!("h = {h}: {e}"));
        assert_eq!(fit.h, h);
        assert!(
            fit.objective.is_finite() && fit.raw_scale.is_finite(),
            "h = {h}"
        );
        let mut abs: Vec<f64> = fit.raw_residuals.iter().map(|v| v.abs()).collect();
        abs.sort_by(f64::total_cmp);
        assert!((abs[h - 1] - fit.objective).abs() <= 1e-12, "h = {h}");
    }
    // h = n: the minimax fit of every row, whose largest residual is the objective; it has a
    // positive scale, so not every row is flagged.
    let all = Lms::new().h(case.n).fit(case.matrix(), &case.y).unwrap();
    assert!(all.raw_scale > 0.0 && all.outliers.len() < case.n);
    for (h, want) in [(p, "h = 4"), (case.n + 1, "h = 22")] {
        let err = Lms::new().h(h).fit(case.matrix(), &case.y).unwrap_err();
        assert!(err.to_string().contains(want), "{err}");
    }
}

#[test]
fn lms_coverage_of_the_largest_integer_is_a_clear_error() {
    let case = cases().into_iter().find(|c| c.name == "stackloss").unwrap();
    match Lms::new().h(usize::MAX).fit(case.matrix(), &case.y) {
        Err(Error::Regression(
            err @ RegressionError::Coverage {
                method: Method::Lms,
                h: usize::MAX,
                low: 5,
                n: 21,
                p: 4,
            },
        )) => {
            let message = err.to_string();
            assert!(
                message.contains(&format!("h = {}", usize::MAX)),
                "{message}"
            );
        }
        other => panic!("expected a coverage error, got {other:?}"),
    }
}

#[test]
fn lms_with_fewer_rows_than_coefficients_says_so() {
    // 3 rows, 3 predictors and the intercept: p = 4 needs at least 5 rows.
    let x = [1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 5.0, 1.0, 4.0];
    let y = [1.0, 2.0, 3.0];
    let message = Lms::new()
        .fit(Matrix::new(&x, 3, 3), &y)
        .unwrap_err()
        .to_string();
    assert!(!message.contains(" is not in ["), "{message}");
    assert!(
        message.contains("3 rows") || message.contains("have 3"),
        "{message}"
    );
}

// ---------------------------------------------------------------------------------------------
// Simulated data
// ---------------------------------------------------------------------------------------------

fn ols(x: &[f64], y: &[f64], n: usize, k: usize) -> Vec<f64> {
    // Least squares with an intercept: LTS with h = n (alpha = 1) is exactly that.
    Lts::new()
        .alpha(1.0)
        .fit(Matrix::new(x, n, k), y)
        .unwrap()
        .raw_coefficients
}

#[test]
fn lts_recovers_the_truth_under_45_percent_contamination() {
    let beta = [1.0, 2.0, -1.0, 0.5, 3.0, -2.0];
    let (n, k) = (2000, 5);
    let (x, y) = contaminated(n, &beta, 0.45, 11);
    let fit = Lts::new().seed(5).fit(Matrix::new(&x, n, k), &y).unwrap();
    assert_eq!(fit.p, 6);
    assert_near_beta("LTS", &fit, &beta, 0.15);
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
    let lms = Lms::new()
        .seed(5)
        .nsamp(500)
        .fit(Matrix::new(&x, n, k), &y)
        .unwrap();
    assert_near_beta("LMS", &lms, &beta, 0.3);
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
                    Lts::new()
                        .seed(seed)
                        .fit(Matrix::new(&x, 700, 3), &y)
                        .unwrap(),
                    Lms::new()
                        .seed(seed)
                        .nsamp(300)
                        .fit(Matrix::new(&xs, 150, 3), &ys)
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
        .fit(Matrix::new(&xs, 150, 3), &ys)
        .unwrap();
    let two = Lts::new()
        .seed(2)
        .exhaustive_limit(0)
        .fit(Matrix::new(&xs, 150, 3), &ys)
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
    let fit = Lts::new().fit(Matrix::new(&[], 11, 0), &y).unwrap();
    assert_eq!(fit.p, 1);
    assert!(
        (fit.coefficients[0] - 1.022).abs() < 0.02,
        "{:?}",
        fit.coefficients
    );
    assert_eq!(fit.outliers, vec![6, 7, 8]);
    let lms = Lms::new().fit(Matrix::new(&[], 11, 0), &y).unwrap();
    assert!((lms.raw_coefficients[0] - 1.0).abs() < 0.1);
    // alpha = 1: least squares.
    let x = [0.0, 1.0, 2.0, 3.0, 4.0];
    let y = [0.1, 0.9, 2.1, 2.9, 4.2];
    let fit = Lts::new()
        .alpha(1.0)
        .fit(Matrix::new(&x, 5, 1), &y)
        .unwrap();
    assert_eq!(fit.h, 5);
    assert!((fit.raw_coefficients[1] - 1.02).abs() < 1e-12);
    // Regression through the origin.
    let x: Vec<f64> = (1..=12).map(f64::from).collect();
    let mut y: Vec<f64> = x.iter().map(|v| 1.5 * v).collect();
    y[2] = 100.0;
    let fit = Lts::new()
        .intercept(false)
        .fit(Matrix::new(&x, 12, 1), &y)
        .unwrap();
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
        Err(Error::Regression(err)) => err,
        other => panic!("expected a RegressionError, got {other:?}"),
    };
    use RegressionError as E;
    // Empty, n <= p.
    assert_eq!(invalid(lts.fit(Matrix::new(&[], 0, 1), &[])), E::NoRows);
    assert_eq!(invalid(lms.fit(Matrix::new(&[], 0, 0), &[])), E::NoRows);
    let too_few = |n, p| E::TooFewRows {
        n,
        p,
        intercept: true,
    };
    assert_eq!(
        invalid(lts.fit(Matrix::new(&x[..2], 2, 1), &y[..2])),
        too_few(2, 2)
    );
    assert_eq!(
        invalid(lts.fit(Matrix::new(&x, 2, 3), &y[..2])),
        too_few(2, 4)
    );
    assert_eq!(
        invalid(lms.fit(Matrix::new(&x, 2, 3), &y[..2])),
        too_few(2, 4)
    );
    assert!(invalid(lts.fit(Matrix::new(&x[..2], 2, 1), &y[..2]))
        .to_string()
        .contains("too few"));
    // Lengths.
    let err = invalid(lts.fit(Matrix::new(&x, 6, 1), &y[..5]));
    assert_eq!(err, E::YLength { len: 5, n: 6 });
    assert!(err.to_string().contains("y holds 5"), "{err}");
    let err = invalid(lms.fit(Matrix::new(&x[..5], 6, 1), &y));
    assert_eq!(err, E::XLength { len: 5, n: 6, k: 1 });
    assert!(err.to_string().contains("x holds 5"), "{err}");
    // NaN and infinity, named by row and column.
    let mut bad = x.to_vec();
    bad[4] = f64::NAN;
    let err = invalid(lts.fit(Matrix::new(&bad, 6, 1), &y));
    assert!(
        matches!(err, E::NonFinite { row: 4, column: Some(0), value } if value.is_nan()),
        "{err:?}"
    );
    assert!(err.to_string().contains("row 4, column 0"), "{err}");
    let mut bad_y = y.to_vec();
    bad_y[1] = f64::INFINITY;
    let err = invalid(lms.fit(Matrix::new(&x, 6, 1), &bad_y));
    assert_eq!(
        err,
        E::NonFinite {
            row: 1,
            column: None,
            value: f64::INFINITY
        }
    );
    assert!(err.to_string().contains("y[1]"), "{err}");
    // A constant column with an intercept; collinear columns; a spread that overflows.
    let constant: Vec<f64> = x.iter().flat_map(|&v| [v, 3.0]).collect();
    let err = invalid(lts.fit(Matrix::new(&constant, 6, 2), &y));
    assert_eq!(
        err,
        E::ConstantColumn {
            column: 1,
            value: 3.0,
            intercept: true
        }
    );
    assert!(err.to_string().contains("column 1 is constant"), "{err}");
    let collinear: Vec<f64> = x.iter().flat_map(|&v| [v, 2.0 * v - 1.0]).collect();
    let err = invalid(lms.fit(Matrix::new(&collinear, 6, 2), &y));
    assert_eq!(
        err,
        E::Collinear {
            column: Some(1),
            intercept: true
        }
    );
    assert!(err.to_string().contains("singular"), "{err}");
    let huge = [1e300, -1e300, 1e300, -1e300, 1.0, 2.0];
    let err = invalid(lts.fit(Matrix::new(&huge, 6, 1), &y));
    assert_eq!(
        err,
        E::Unscalable {
            column: 0,
            spread: f64::INFINITY
        }
    );
    assert!(err.to_string().contains("cannot be standardized"), "{err}");
    // Settings.
    assert_eq!(
        invalid(lts.clone().alpha(0.3).fit(Matrix::new(&x, 6, 1), &y)),
        E::Alpha { alpha: 0.3 }
    );
    let err = invalid(lts.clone().alpha(f64::NAN).fit(Matrix::new(&x, 6, 1), &y));
    assert!(
        matches!(err, E::Alpha { alpha } if alpha.is_nan()),
        "{err:?}"
    );
    assert!(err.to_string().contains("alpha"), "{err}");
    let coverage = |method, h, low| E::Coverage {
        method,
        h,
        low,
        n: 6,
        p: 2,
    };
    for (fit, method, h, low) in [
        (
            lts.clone().h(3).fit(Matrix::new(&x, 6, 1), &y),
            Method::Lts,
            3,
            4,
        ),
        (
            lts.clone().h(7).fit(Matrix::new(&x, 6, 1), &y),
            Method::Lts,
            7,
            4,
        ),
        (
            lms.clone().h(7).fit(Matrix::new(&x, 6, 1), &y),
            Method::Lms,
            7,
            3,
        ),
        (
            lms.clone().h(2).fit(Matrix::new(&x, 6, 1), &y),
            Method::Lms,
            2,
            3,
        ),
    ] {
        let err = invalid(fit);
        assert_eq!(err, coverage(method, h, low));
        assert!(err.to_string().contains(&format!("h = {h}")), "{err}");
    }
    for fit in [
        lts.clone().nsamp(0).fit(Matrix::new(&x, 6, 1), &y),
        lms.clone().nsamp(0).fit(Matrix::new(&x, 6, 1), &y),
    ] {
        let err = invalid(fit);
        assert_eq!(err, E::Nsamp { nsamp: 0 });
        assert!(err.to_string().contains("nsamp"), "{err}");
    }
    // No predictors and no intercept.
    let err = invalid(lts.clone().intercept(false).fit(Matrix::new(&[], 6, 0), &y));
    assert_eq!(err, E::NoCoefficients);
    assert!(err.to_string().contains("no coefficient"), "{err}");
    // Degenerate designs: most rows repeated (every p-subset of the distinct rows is singular
    // but for two).
    let rep = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0];
    let ry = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    match lts.fit(Matrix::new(&rep, 8, 1), &ry) {
        Ok(fit) => assert!(fit.coefficients.iter().all(|v| v.is_finite())),
        Err(Error::Regression(RegressionError::NoStartFits { .. })) => {}
        Err(other) => panic!("{other:?}"),
    }
    let _ = lms.fit(Matrix::new(&rep, 8, 1), &ry);
}

#[test]
fn a_design_no_start_determines_is_an_error() {
    // 200 rows, all but the last at x = 1: one random pair of rows is singular (but for the
    // pairs with the last row, which this seed does not draw).
    let n = 200;
    let mut x = vec![1.0; n];
    x[n - 1] = 2.0;
    let y: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let fit = Lms::new()
        .nsamp(1)
        .exhaustive_limit(0)
        .seed(3)
        .fit(Matrix::new(&x, n, 1), &y);
    match fit {
        Err(Error::Regression(
            err @ RegressionError::NoStartFits {
                p: 2,
                singular: 1,
                starts: 1,
            },
        )) => assert!(err.to_string().contains("degenerate"), "{err}"),
        other => panic!("expected NoStartFits, got {other:?}"),
    }
}

#[test]
fn array_views_fit_like_slices() {
    let case = cases().into_iter().next().unwrap();
    let x = ndarray::Array2::from_shape_vec((case.n, case.k), case.x.clone()).unwrap();
    let y = ndarray::Array1::from(case.y.clone());
    let a = Lts::new().fit(x.view(), y.view()).unwrap();
    let b = Lts::new().fit(case.matrix(), &case.y).unwrap();
    assert_eq!(a, b);
    // A transposed (column-major) view is copied into rows.
    let xt = x.t().to_owned();
    let a = Lts::new().fit(xt.t(), y.view()).unwrap();
    assert_eq!(a, b);
    // Rows with a gap after each: the gaps are never read.
    let stride = case.k + 2;
    let mut padded = vec![f64::NAN; case.n * stride];
    for (row, values) in padded.chunks_mut(stride).zip(case.x.chunks(case.k)) {
        row[..case.k].copy_from_slice(values);
    }
    let strided = Matrix::new(&padded, case.n, case.k).with_stride(stride);
    assert_eq!(Lts::new().fit(strided, &case.y).unwrap(), b);
    // Contiguous rows must hold exactly n x k values; y exactly n.
    let short = Matrix::new(&case.x[1..], case.n, case.k);
    assert!(Lts::new().fit(short, &case.y).is_err());
    let long = [case.x.as_slice(), &[1.0]].concat();
    assert!(Lts::new()
        .fit(Matrix::new(&long, case.n, case.k), &case.y)
        .is_err());
    let too_few = &case.y[1..];
    assert!(Lts::new().fit(case.matrix(), too_few).is_err());
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
            Err(Error::Regression(_)) => {}
            Err(other) => panic!("unexpected error {other:?}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn fits_never_panic((n, k, intercept, x, y) in design(), seed in 0u64..4) {
            check(Lts::new().intercept(intercept).seed(seed).fit(Matrix::new(&x, n, k), &y));
            check(Lts::new().intercept(intercept).alpha(1.0).fit(Matrix::new(&x, n, k), &y));
            check(Lms::new().intercept(intercept).seed(seed).fit(Matrix::new(&x, n, k), &y));
        }
    }
}

#[test]
fn nsamp_beyond_the_bound_is_refused_at_once() {
    let case = cases().into_iter().find(|c| c.name == "hbk").unwrap();
    let (x, y, n, k) = (&case.x, &case.y, case.n, case.k);
    let too_many = kselect::regression::MAX_NSAMP + 1;
    let started = std::time::Instant::now();
    let refused = |fit: kselect::Result<RegressionFit>| match fit {
        Err(Error::Regression(err)) => err,
        other => panic!("expected a RegressionError, got {other:?}"),
    };
    let err = refused(
        Lts::new()
            .nsamp(1_000_000_000_000)
            .fit(Matrix::new(x, n, k), y),
    );
    assert_eq!(
        err,
        RegressionError::Nsamp {
            nsamp: 1_000_000_000_000
        }
    );
    assert!(err.to_string().contains("nsamp = 1000000000000"), "{err}");
    let err = refused(Lms::new().nsamp(too_many).fit(Matrix::new(x, n, k), y));
    assert_eq!(err, RegressionError::Nsamp { nsamp: too_many });
    assert!(err.to_string().contains("more than the 10000000"), "{err}");
    let rows = 200_000;
    let xs: Vec<f64> = (0..rows).map(|i| (i % 977) as f64).collect();
    let ys: Vec<f64> = xs.iter().map(|v| 2.0 * v + 1.0).collect();
    // Every pair of rows as a start, when that is more than the bound.
    let err = refused(
        Lts::new()
            .exhaustive_limit(u64::MAX)
            .fit(Matrix::new(&xs, rows, 1), &ys),
    );
    assert_eq!(
        err,
        RegressionError::TooManyStarts {
            n: rows,
            p: 2,
            count: (rows as u64) * (rows as u64 - 1) / 2,
            limit: u64::MAX
        }
    );
    assert!(
        err.to_string().contains("lower the exhaustive limit"),
        "{err}"
    );
    // LMS: the starts times the rows.
    let err = refused(
        Lms::new()
            .nsamp(10_000_000)
            .fit(Matrix::new(&xs, rows, 1), &ys),
    );
    assert_eq!(
        err,
        RegressionError::LmsWork {
            starts: 10_000_000,
            n: rows
        }
    );
    assert!(err.to_string().contains("at most 5000000 starts"), "{err}");
    assert!(started.elapsed().as_secs() < 5, "refused before any work");
}

#[test]
fn progress_reports_every_stage_and_leaves_the_fit_unchanged() {
    use kselect::regression::{FitProgress, FitStage};
    use std::sync::{Arc, Mutex};
    let case = cases().into_iter().find(|c| c.name == "hbk").unwrap();
    let (x, y, n, k) = (&case.x, &case.y, case.n, case.k);
    let seen: Arc<Mutex<Vec<FitProgress>>> = Arc::default();
    let log = Arc::clone(&seen);
    let with = Lms::new()
        .progress(move |r| log.lock().unwrap().push(r))
        .fit(Matrix::new(x, n, k), y)
        .unwrap();
    assert_eq!(with, Lms::new().fit(Matrix::new(x, n, k), y).unwrap());
    // Every stage in order, each ending with all its units done.
    let stages_in_order = |seen: &[FitProgress]| {
        let order = [
            FitStage::Setup,
            FitStage::Starts,
            FitStage::Refinement,
            FitStage::Reweighting,
        ];
        let mut at = 0;
        for r in seen {
            while order[at] != r.stage {
                at += 1;
                assert!(at < order.len(), "{:?} out of order", r.stage);
            }
        }
        for stage in order {
            let last = seen.iter().rev().find(|r| r.stage == stage).unwrap();
            assert_eq!(last.done, last.total, "{stage:?}");
        }
    };
    stages_in_order(&seen.lock().unwrap());
    let log: Arc<Mutex<Vec<FitProgress>>> = Arc::default();
    let sink = Arc::clone(&log);
    let lts = Lts::new().progress(move |r| sink.lock().unwrap().push(r));
    assert_eq!(
        lts.fit(Matrix::new(x, n, k), y).unwrap(),
        Lts::new().fit(Matrix::new(x, n, k), y).unwrap()
    );
    stages_in_order(&log.lock().unwrap());
    // Large enough for the subsampled starts and the race of the candidates.
    let n = 6000;
    let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 6007) as f64 / 60.0).collect();
    let y: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, v)| {
            2.0 * v - 1.0
                + if i % 7 == 0 {
                    40.0
                } else {
                    0.01 * (i % 13) as f64
                }
        })
        .collect();
    log.lock().unwrap().clear();
    lts.fit(Matrix::new(&x, n, 1), &y).unwrap();
    stages_in_order(&log.lock().unwrap());
}

#[test]
fn lms_on_large_data_recovers_the_truth() {
    // Above 8192 rows the starts are scored on a subsample, the best refined on all rows.
    let beta = [1.0, 2.0, -1.0, 0.5];
    let (n, k) = (30_000, 3);
    let (x, y) = contaminated(n, &beta, 0.4, 3);
    let fit = Lms::new().seed(9).fit(Matrix::new(&x, n, k), &y).unwrap();
    assert_near_beta("LMS", &fit, &beta, 0.1);
    assert_eq!(
        fit,
        Lms::new().seed(9).fit(Matrix::new(&x, n, k), &y).unwrap(),
        "the same bits"
    );
    // The objective is the h-th smallest absolute residual of the raw fit.
    let mut abs: Vec<f64> = fit.raw_residuals.iter().map(|v| v.abs()).collect();
    abs.sort_by(f64::total_cmp);
    assert_eq!(abs[fit.h - 1], fit.objective);
}
