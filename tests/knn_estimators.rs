//! The kNN estimators against scikit-learn's `KNeighborsRegressor` and `KNeighborsClassifier`
//! (the "estimators" cases of `tests/data/knn/sklearn_cases.json`) on every backend:
//! predictions, probabilities, leave-one-out predictions and errors, leave-one-out scores of
//! several `k` from one graph against each `k` on its own, leave-one-out against refitting
//! without the point on data full of ties, `f32` input, and the errors of bad input.

#[macro_use]
mod common;

use common::json::{f64s as floats, i64s as ints};
use common::sklearn::{self, matrix};
use kselect::knn::{
    FittedKnnClassifier, FittedKnnRegressor, KnnClassifier, KnnRegressor, LooScore, Metric, Points,
    Weights,
};
use kselect::{Device, Selector};
use serde_json::Value;

/// One estimator case of the cases file.
struct Case {
    name: String,
    classification: bool,
    metric: Metric,
    weights: Weights,
    k: usize,
    train: Vec<f64>,
    query: Vec<f64>,
    dim: usize,
    case: Value,
}

impl Case {
    fn regressor(&self, device: &Device) -> KnnRegressor {
        self.regressor_of(self.k, device)
    }

    fn classifier(&self, device: &Device) -> KnnClassifier {
        self.classifier_of(self.k, device)
    }

    /// The case's regressor with `k` neighbours.
    fn regressor_of(&self, k: usize, device: &Device) -> KnnRegressor {
        KnnRegressor::new(k)
            .weights(self.weights)
            .metric(self.metric)
            .device(device.clone())
    }

    /// The case's classifier with `k` neighbours.
    fn classifier_of(&self, k: usize, device: &Device) -> KnnClassifier {
        KnnClassifier::new(k)
            .weights(self.weights)
            .metric(self.metric)
            .device(device.clone())
    }

    fn y(&self) -> Vec<f64> {
        floats(&self.case["y_train"])
    }

    fn labels(&self) -> Vec<i64> {
        ints(&self.case["y_train"])
    }

    fn rows(&self) -> usize {
        self.train.len() / self.dim
    }

    fn x(&self) -> Points<'_, f64> {
        Points::new(&self.train, self.dim).unwrap()
    }

    fn q(&self) -> Points<'_, f64> {
        Points::new(&self.query, self.dim).unwrap()
    }

    /// Some neighbour counts for leave-one-out, out of order, repeated, up to `n - 1`.
    fn ks(&self) -> Vec<usize> {
        let top = self.rows() - 1;
        let mut ks = vec![self.k + 2, 1, self.k, 3, self.k, top, 2 * self.k + 1];
        ks.iter_mut().for_each(|k| *k = (*k).min(top));
        ks
    }
}

fn cases() -> Vec<Case> {
    let all = sklearn::cases();
    let cases: Vec<Case> = all["estimators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let (train, dim) = matrix(&case["x_train"]);
            let (query, query_dim) = matrix(&case["x_query"]);
            assert_eq!(dim, query_dim);
            Case {
                name: case["name"].as_str().unwrap().to_string(),
                classification: case["task"].as_str().unwrap() == "classification",
                metric: case["metric"].as_str().unwrap().parse().unwrap(),
                weights: case["weights"].as_str().unwrap().parse().unwrap(),
                k: case["k"].as_u64().unwrap() as usize,
                train,
                query,
                dim,
                case: case.clone(),
            }
        })
        .collect();
    assert!(cases.iter().any(|c| c.classification));
    assert!(cases.iter().any(|c| !c.classification));
    cases
}

/// `a` within `rel` of `b`, relative to `|b|`.
fn assert_close(a: &[f64], b: &[f64], rel: f64, what: &str) {
    assert_close_on(a, b, rel, 0.0, what);
}

/// `a` within `rel` of `b`, relative to the larger of `|b|` and `scale` (the size of the
/// responses, for predictions that cancel to near 0).
fn assert_close_on(a: &[f64], b: &[f64], rel: f64, scale: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= rel * y.abs().max(scale),
            "{what} [{i}]: {x} vs {y}"
        );
    }
}

/// Asserts that a regressor's predictions and leave-one-out predictions, `got`, are within
/// `rel` of `want`'s, relative to the larger of `|want|` and the largest magnitude of `y`.
fn assert_predictions_close(
    got: [Vec<f64>; 2],
    want: [Vec<f64>; 2],
    rel: f64,
    y: &[f64],
    what: &str,
) {
    let scale = largest(y);
    for (got, want) in got.iter().zip(&want) {
        assert_close_on(got, want, rel, scale, what);
    }
}

/// The largest magnitude of `v`.
fn largest(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// The mean squared error of predictions.
fn mse(predictions: &[f64], y: &[f64]) -> f64 {
    predictions
        .iter()
        .zip(y)
        .map(|(p, t)| (p - t) * (p - t))
        .sum::<f64>()
        / y.len() as f64
}

/// The fraction of predictions that are not the label.
fn misclassified(predictions: &[i64], labels: &[i64]) -> f64 {
    predictions
        .iter()
        .zip(labels)
        .filter(|(p, l)| p != l)
        .count() as f64
        / labels.len() as f64
}

fn check_regression(case: &Case, device: &Device) {
    let name = &case.name;
    let y = case.y();
    let model = case.regressor(device).fit(case.x(), &y).unwrap();
    assert_eq!(model.n_neighbors(), case.k);
    let predictions = model.predict(case.q()).unwrap();
    assert_close(
        &predictions,
        &floats(&case.case["predict"]),
        1e-9,
        &format!("{name}: predict"),
    );
    let loo = model.leave_one_out().unwrap();
    assert_close(
        &loo,
        &floats(&case.case["loo_predict"]),
        1e-9,
        &format!("{name}: leave_one_out"),
    );
    let error = check_loo_scores(
        case,
        |ks| {
            case.regressor(device)
                .leave_one_out_scores(case.x(), &y, ks)
                .unwrap()
        },
        |k| {
            let model = case.regressor_of(k, device).fit(case.x(), &y).unwrap();
            mse(&model.leave_one_out().unwrap(), &y)
        },
    );
    assert_eq!(error, mse(&loo, &y), "{name}: loo_error of loo");
}

/// Checks the leave-one-out scores of `case`, `scores(ks)` those of `ks` from one graph: of
/// `[case.k]`, the case's `loo_error` (returned); of [`Case::ks`], each `alone(k)`, the error of
/// `k` fitted and left out on its own.
fn check_loo_scores(
    case: &Case,
    scores: impl Fn(&[usize]) -> Vec<LooScore>,
    alone: impl Fn(usize) -> f64,
) -> f64 {
    let name = &case.name;
    let score = scores(&[case.k]);
    assert_eq!(score.len(), 1);
    assert_eq!(score[0].k, case.k);
    assert_close(
        &[score[0].error],
        &[case.case["loo_error"].as_f64().unwrap()],
        1e-9,
        &format!("{name}: loo_error"),
    );

    // Several k from one graph: the same as each k fitted and left out on its own.
    let ks = case.ks();
    let separate: Vec<LooScore> = ks
        .iter()
        .map(|&k| LooScore { k, error: alone(k) })
        .collect();
    assert_eq!(scores(&ks), separate, "{name}: scores of ks {ks:?}");
    score[0].error
}

fn check_classification(case: &Case, device: &Device) {
    let name = &case.name;
    let labels = case.labels();
    let model: FittedKnnClassifier<f64, i64> =
        case.classifier(device).fit(case.x(), &labels).unwrap();
    assert_eq!(model.n_neighbors(), case.k);
    assert_eq!(model.classes(), &ints(&case.case["classes"])[..], "{name}");
    assert_eq!(
        model.predict(case.q()).unwrap(),
        ints(&case.case["predict"]),
        "{name}: predict"
    );
    let proba = model.predict_proba(case.q()).unwrap();
    let (want, classes) = matrix(&case.case["predict_proba"]);
    assert_eq!(
        proba.shape(),
        &[case.query.len() / case.dim, classes],
        "{name}"
    );
    for (i, (a, b)) in proba.iter().zip(&want).enumerate() {
        assert!((a - b).abs() <= 1e-12, "{name}: proba [{i}]: {a} vs {b}");
    }
    let loo = model.leave_one_out().unwrap();
    assert_eq!(
        loo,
        ints(&case.case["loo_predict"]),
        "{name}: leave_one_out"
    );
    check_loo_scores(
        case,
        |ks| {
            case.classifier(device)
                .leave_one_out_scores(case.x(), &labels, ks)
                .unwrap()
        },
        |k| {
            let model = case
                .classifier_of(k, device)
                .fit(case.x(), &labels)
                .unwrap();
            misclassified(&model.leave_one_out().unwrap(), &labels)
        },
    );
}

backend_test!(estimators_equal_scikit_learn, |selector: Selector| {
    let device = selector.device().clone();
    for case in cases() {
        if case.classification {
            check_classification(&case, &device);
        } else {
            check_regression(&case, &device);
        }
    }
});

/// The training and query points of a case rounded to `f32`.
fn as_f32(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

backend_test!(
    f32_points_match_f64_points_of_the_same_values,
    |selector: Selector| {
        let device = selector.device().clone();
        for case in cases() {
            let name = &case.name;
            let (train, query) = (as_f32(&case.train), as_f32(&case.query));
            let train64: Vec<f64> = train.iter().map(|&x| x as f64).collect();
            let query64: Vec<f64> = query.iter().map(|&x| x as f64).collect();
            let x32 = Points::new(&train, case.dim).unwrap();
            let q32 = Points::new(&query, case.dim).unwrap();
            let x64 = Points::new(&train64, case.dim).unwrap();
            let q64 = Points::new(&query64, case.dim).unwrap();
            // Both rank by the same canonical distances; only the f32 distances, and so the
            // distance weights, are rounded.
            let tolerance = match case.weights {
                Weights::Uniform => 0.0,
                Weights::Distance => 1e-6,
            };
            if case.classification {
                let labels = case.labels();
                let m32 = case.classifier(&device).fit(x32, &labels).unwrap();
                let m64 = case.classifier(&device).fit(x64, &labels).unwrap();
                let (p32, p64) = (
                    m32.predict_proba(q32.clone()).unwrap(),
                    m64.predict_proba(q64.clone()).unwrap(),
                );
                for (a, b) in p32.iter().zip(&p64) {
                    assert!((a - b).abs() <= tolerance, "{name}: proba {a} vs {b}");
                }
                if case.weights == Weights::Uniform {
                    assert_eq!(m32.predict(q32).unwrap(), m64.predict(q64).unwrap());
                    assert_eq!(m32.leave_one_out().unwrap(), m64.leave_one_out().unwrap());
                }
            } else {
                let y = case.y();
                let m32: FittedKnnRegressor<f32> = case.regressor(&device).fit(x32, &y).unwrap();
                let m64 = case.regressor(&device).fit(x64, &y).unwrap();
                assert_predictions_close(
                    [m32.predict(q32).unwrap(), m32.leave_one_out().unwrap()],
                    [m64.predict(q64).unwrap(), m64.leave_one_out().unwrap()],
                    tolerance,
                    &y,
                    &format!("{name}: f32"),
                );
            }
        }
    }
);

backend_test!(
    f32_binary_grid_cases_equal_scikit_learn,
    |selector: Selector| {
        // Coordinates on a grid of 2^-10 in [-4, 4] are exact in f32.
        let device = selector.device().clone();
        let mut seen = 0;
        for case in cases().into_iter().filter(|c| c.name.contains("exact")) {
            seen += 1;
            let name = &case.name;
            let train = as_f32(&case.train);
            let query = as_f32(&case.query);
            assert!(train.iter().zip(&case.train).all(|(&a, &b)| a as f64 == b));
            let array =
                ndarray::Array2::from_shape_vec((train.len() / case.dim, case.dim), train).unwrap();
            let q = Points::new(&query, case.dim).unwrap();
            if case.classification {
                let model = case
                    .classifier(&device)
                    .fit(array.view(), &case.labels())
                    .unwrap();
                assert_eq!(
                    model.predict(q).unwrap(),
                    ints(&case.case["predict"]),
                    "{name}"
                );
                assert_eq!(
                    model.leave_one_out().unwrap(),
                    ints(&case.case["loo_predict"]),
                    "{name}"
                );
            } else {
                let y = case.y();
                let model = case.regressor(&device).fit(array.view(), &y).unwrap();
                assert_predictions_close(
                    [model.predict(q).unwrap(), model.leave_one_out().unwrap()],
                    [
                        floats(&case.case["predict"]),
                        floats(&case.case["loo_predict"]),
                    ],
                    1e-6,
                    &y,
                    &format!("{name}: f32"),
                );
            }
        }
        assert_eq!(seen, 2);
    }
);

backend_test!(zero_distances_share_all_the_weight, |selector: Selector| {
    let device = selector.device().clone();
    // Two copies of the query among the neighbours: they share the weight equally.
    let x = Points::new(&[0.0f64, 0.0, 1.0, 0.0, 3.0], 1).unwrap();
    let model = KnnRegressor::new(4)
        .weights(Weights::Distance)
        .device(device.clone())
        .fit(x.clone(), &[1.0, 3.0, 100.0, 5.0, 1000.0])
        .unwrap();
    let q = Points::new(&[0.0, 2.0], 1).unwrap();
    let want_far = (100.0 + 1000.0 + 0.5 * (1.0 + 3.0)) / 3.0;
    assert_close(
        &model.predict(q.clone()).unwrap(),
        &[3.0, want_far],
        1e-15,
        "zero distances",
    );
    // Leaving one copy out leaves the other two at distance 0.
    assert_eq!(model.leave_one_out().unwrap()[0], 4.0);

    let classifier = KnnClassifier::new(4)
        .weights(Weights::Distance)
        .device(device)
        .fit(x, &["b", "a", "c", "c", "c"])
        .unwrap();
    let proba = classifier.predict_proba(q.clone()).unwrap();
    assert_eq!(proba.row(0).to_vec(), vec![1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]);
    // Three-way tie at 0: the smallest label.
    assert_eq!(classifier.predict(q).unwrap()[0], "a");
});

backend_test!(similarities_take_uniform_weights, |selector: Selector| {
    let device = selector.device().clone();
    let x = Points::new(&[1.0f64, 0.0, 0.0, 1.0, 3.0, 3.0], 2).unwrap();
    let model = KnnRegressor::new(2)
        .metric(Metric::InnerProduct)
        .device(device.clone())
        .fit(x.clone(), &[1.0, 2.0, 3.0])
        .unwrap();
    // Largest inner products with (1, 0): (3, 3) then (1, 0).
    assert_eq!(
        model.predict(Points::new(&[1.0, 0.0], 2).unwrap()).unwrap(),
        vec![2.0]
    );
    let regressor = KnnRegressor::new(1)
        .weights(Weights::Distance)
        .metric(Metric::InnerProduct)
        .device(device.clone());
    let classifier = KnnClassifier::new(1)
        .weights(Weights::Distance)
        .metric(Metric::InnerProduct)
        .device(device.clone());
    for weighted in [
        regressor.fit(x.clone(), &[1.0, 2.0, 3.0]).map(|_| ()),
        classifier.fit(x.clone(), &[1, 2, 3]).map(|_| ()),
        classifier
            .leave_one_out_scores(x.clone(), &[1, 2, 3], &[1])
            .map(|_| ()),
    ] {
        let e = weighted.unwrap_err().to_string();
        assert!(
            e.contains("inner_product") && e.contains("similarity") && e.contains("distance"),
            "{e}"
        );
    }
});

backend_test!(a_single_class_is_fine, |selector: Selector| {
    let x = Points::new(&[0.0f32, 1.0, 2.0], 1).unwrap();
    let model = KnnClassifier::new(2)
        .device(selector.device().clone())
        .fit(x.clone(), &["only"; 3])
        .unwrap();
    assert_eq!(model.classes(), &["only"]);
    let q = Points::new(&[5.0, -1.0], 1).unwrap();
    assert_eq!(model.predict(q.clone()).unwrap(), vec!["only"; 2]);
    assert_eq!(
        model.predict_proba(q).unwrap().into_raw_vec_and_offset().0,
        vec![1.0; 2]
    );
    assert_eq!(model.leave_one_out().unwrap(), vec!["only"; 3]);
    let scores = KnnClassifier::new(1)
        .leave_one_out_scores(x, &["only"; 3], &[2, 1])
        .unwrap();
    assert_eq!(
        scores,
        vec![LooScore { k: 2, error: 0.0 }, LooScore { k: 1, error: 0.0 }]
    );
});

/// The message of an error, asserting it holds every one of `words`.
fn assert_error<T: std::fmt::Debug>(result: kselect::Result<T>, words: &[&str]) {
    let e = result.unwrap_err();
    assert!(
        matches!(
            e,
            kselect::Error::Knn(_) | kselect::Error::UnknownName { .. }
        ),
        "not an invalid argument: {e:?}"
    );
    let message = e.to_string();
    for word in words {
        assert!(message.contains(word), "`{word}` not in: {message}");
    }
}

backend_test!(bad_input_is_a_clear_error, |selector: Selector| {
    let device = selector.device().clone();
    let data = [0.0f64, 1.0, 2.0, 3.0];
    let x = || Points::new(&data, 1).unwrap();
    let y = [1.0, 2.0, 3.0, 4.0];
    let labels = [1, 1, 2, 2];
    let reg = |k| KnnRegressor::new(k).device(device.clone());
    let clf = |k| KnnClassifier::new(k).device(device.clone());

    // n_neighbors.
    assert_error(reg(0).fit(x(), &y), &["n_neighbors = 0"]);
    assert_error(clf(0).fit(x(), &labels), &["n_neighbors = 0"]);
    assert_error(reg(5).fit(x(), &y), &["n_neighbors = 5", "4 points"]);
    assert_error(clf(5).fit(x(), &labels), &["n_neighbors = 5", "4 points"]);
    assert!(reg(4).fit(x(), &y).is_ok());

    // Leave-one-out needs k <= n - 1.
    let loo = ["leave-one-out", "k = 4", "there are 4", "n - 1"];
    assert_error(reg(4).fit(x(), &y).unwrap().leave_one_out(), &loo);
    assert_error(clf(4).fit(x(), &labels).unwrap().leave_one_out(), &loo);
    assert_error(reg(1).leave_one_out_scores(x(), &y, &[1, 4]), &loo);
    assert_error(clf(1).leave_one_out_scores(x(), &labels, &[4]), &loo);
    let one = Points::new(&[1.0f64], 1).unwrap();
    assert_eq!(
        reg(1)
            .fit(one.clone(), &[2.0])
            .unwrap()
            .predict(x())
            .unwrap(),
        vec![2.0; 4]
    );
    assert_error(
        reg(1).fit(one, &[2.0]).unwrap().leave_one_out(),
        &["k = 1", "there are 1"],
    );

    // ks.
    assert_error(
        reg(1).leave_one_out_scores(x(), &y, &[]),
        &["ks", "at least one"],
    );
    assert_error(clf(1).leave_one_out_scores(x(), &labels, &[]), &["ks"]);
    assert_error(
        reg(1).leave_one_out_scores(x(), &y, &[2, 0]),
        &["ks", "k = 0"],
    );
    assert_error(clf(1).leave_one_out_scores(x(), &labels, &[0]), &["k = 0"]);

    // Lengths of y and labels.
    assert_error(reg(1).fit(x(), &y[..3]), &["y has 3 values", "4 points"]);
    assert_error(
        clf(1).fit(x(), &[1, 2, 3, 4, 5]),
        &["labels has 5 values", "4 points"],
    );
    assert_error(
        reg(1).leave_one_out_scores(x(), &y[..2], &[1]),
        &["y has 2"],
    );
    assert_error(
        clf(1).leave_one_out_scores(x(), &labels[..1], &[1]),
        &["labels has 1"],
    );

    // Non-finite y.
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let y = [1.0, 2.0, bad, 4.0];
        assert_error(reg(1).fit(x(), &y), &["y[2]", "not finite"]);
        assert_error(reg(1).leave_one_out_scores(x(), &y, &[1]), &["y[2]"]);
    }

    // An empty training set.
    let empty = Points::<f64>::new(&[], 2).unwrap();
    assert_error(reg(1).fit(empty.clone(), &[]), &["training set is empty"]);
    assert_error(
        clf(1).fit(empty.clone(), &[0u8; 0]),
        &["training set is empty"],
    );
    assert_error(
        reg(1).leave_one_out_scores(empty, &[], &[1]),
        &["training set is empty"],
    );

    // The search's own errors pass through: queries of another dimension, empty queries,
    // non-finite coordinates.
    let model = reg(2).fit(x(), &y).unwrap();
    let classifier = clf(2).fit(x(), &labels).unwrap();
    let q2 = Points::new(&[0.0, 0.0], 2).unwrap();
    assert_error(model.predict(q2.clone()), &["2 coordinates", "have 1"]);
    assert_error(classifier.predict(q2.clone()), &["2 coordinates", "have 1"]);
    assert_error(classifier.predict_proba(q2), &["2 coordinates", "have 1"]);
    assert_error(
        model.predict(Points::new(&[], 1).unwrap()),
        &["query set is empty"],
    );
    assert_error(
        classifier.predict(Points::new(&[f64::NAN], 1).unwrap()),
        &["query 0", "non-finite"],
    );
    assert_error(
        reg(1).fit(Points::new(&[0.0, f64::INFINITY], 1).unwrap(), &[1.0, 2.0]),
        &["reference point 1", "non-finite"],
    );

    // Weights by name.
    assert_error(
        "inverse".parse::<Weights>(),
        &["inverse", "uniform", "distance"],
    );
});

backend_test!(
    leave_one_out_equals_refitting_without_the_point,
    |selector: Selector| {
        // Small integer coordinates: many equal distances and duplicate points, where the order
        // of equal distances (by the lower index) decides the neighbours.
        let device = selector.device().clone();
        let mut rng = common::SplitMix64::new(41);
        let (n, dim) = (30, 2);
        let x: Vec<f64> = (0..n * dim).map(|_| rng.below(4) as f64).collect();
        let y: Vec<f64> = (0..n).map(|_| rng.below(100) as f64 / 8.0).collect();
        let labels: Vec<usize> = (0..n).map(|_| rng.below(3)).collect();
        let without = |i: usize| -> Vec<f64> {
            (0..n)
                .filter(|&j| j != i)
                .flat_map(|j| x[j * dim..(j + 1) * dim].to_vec())
                .collect()
        };
        for metric in [Metric::Euclidean, Metric::Manhattan] {
            for weights in [Weights::Uniform, Weights::Distance] {
                for k in [1, 2, 5, 9] {
                    let what = format!("{metric} {weights} k = {k}");
                    let reg = KnnRegressor::new(k)
                        .weights(weights)
                        .metric(metric)
                        .device(device.clone());
                    let clf = KnnClassifier::new(k)
                        .weights(weights)
                        .metric(metric)
                        .device(device.clone());
                    let points = Points::new(&x, dim).unwrap();
                    let reg_loo = reg
                        .fit(points.clone(), &y)
                        .unwrap()
                        .leave_one_out()
                        .unwrap();
                    let clf_loo = clf.fit(points, &labels).unwrap().leave_one_out().unwrap();
                    for i in 0..n {
                        let rest = without(i);
                        let rest = Points::new(&rest, dim).unwrap();
                        let query = Points::new(&x[i * dim..(i + 1) * dim], dim).unwrap();
                        let y_rest: Vec<f64> = (0..n).filter(|&j| j != i).map(|j| y[j]).collect();
                        let l_rest: Vec<usize> =
                            (0..n).filter(|&j| j != i).map(|j| labels[j]).collect();
                        let r = reg.fit(rest.clone(), &y_rest).unwrap();
                        assert_eq!(r.predict(query.clone()).unwrap()[0], reg_loo[i], "{what}");
                        let c = clf.fit(rest, &l_rest).unwrap();
                        assert_eq!(c.predict(query).unwrap()[0], clf_loo[i], "{what}");
                    }
                }
            }
        }
    }
);
