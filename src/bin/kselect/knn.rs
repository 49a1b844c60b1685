//! `kselect knn`: the model's columns from a data file (a numeric response, or labels of text
//! or numbers), the predictors standardized when asked, and the leave-one-out scores or the
//! predictions of a query file on the chosen device, timed.

use std::cmp::Ordering;
use std::fmt;
use std::time::Instant;

use kselect::knn::{KnnClassifier, KnnRegressor, LooScore, Points};
use kselect::{Device, Error, Result};
use ndarray::Array2;
use serde::{Serialize, Serializer};

use crate::cli::KnnArgs;
use crate::open;
use crate::regression::{finite_column, predictors};
use crate::table::{row_major, Table};

/// A number as a label, ordered by value (labels are finite: no NaN to order).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Number(f64);

impl Eq for Number {}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Number) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A class label: every label of a response is a number, or every one is text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Label {
    /// A label of a column of numbers, ordered by value.
    Number(Number),
    /// A label of a column of text, ordered as a string.
    Text(String),
}

impl Label {
    /// The label as a number, for a `.npy` file; `None` for text.
    pub fn number(&self) -> Option<f64> {
        match self {
            Label::Number(Number(value)) => Some(*value),
            Label::Text(_) => None,
        }
    }
}

impl Serialize for Label {
    /// A number as the text shows it (whole numbers as integers), text as a string.
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Label::Number(Number(v)) if is_whole(*v) => s.serialize_i64(*v as i64),
            Label::Number(Number(v)) => s.serialize_f64(*v),
            Label::Text(text) => s.serialize_str(text),
        }
    }
}

/// Whether `v` is a whole number that an `i64` holds exactly (below 2^53 in magnitude).
fn is_whole(v: f64) -> bool {
    v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15
}

impl fmt::Display for Label {
    /// Whole numbers without a fraction (`3`, not `3.0`), other numbers with the fewest digits
    /// that read back as the same `f64`, text as it is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Number(Number(v)) if is_whole(*v) => {
                write!(f, "{}", *v as i64)
            }
            Label::Number(Number(v)) => write!(f, "{v:?}"),
            Label::Text(text) => f.write_str(text),
        }
    }
}

/// What is predicted: the response's values, or its labels.
enum Target {
    Values(Vec<f64>),
    Labels(Vec<Label>),
}

/// The columns of the model, checked against the training file.
pub struct Model {
    /// The response's column.
    pub response: String,
    /// The predictors' columns, in order.
    pub predictors: Vec<String>,
}

/// Each predictor's centre and scale: `(x - mean) / scale`.
struct Scaling {
    mean: Vec<f64>,
    scale: Vec<f64>,
}

impl Scaling {
    /// The mean and the population standard deviation of each of the `dim` columns of the
    /// row-major `x`, as scikit-learn's `StandardScaler` takes them: a column whose variance is
    /// within rounding of 0 (its `_is_constant_feature`) has scale 1.
    fn of(x: &[f64], dim: usize) -> Scaling {
        let n = (x.len() / dim) as f64;
        let column = |j: usize| x.iter().skip(j).step_by(dim);
        let mean: Vec<f64> = (0..dim).map(|j| column(j).sum::<f64>() / n).collect();
        let scale = (0..dim)
            .map(|j| {
                let var = column(j).map(|v| (v - mean[j]).powi(2)).sum::<f64>() / n;
                let bound = n * f64::EPSILON * var + (n * mean[j] * f64::EPSILON).powi(2);
                if var <= bound {
                    1.0
                } else {
                    var.sqrt()
                }
            })
            .collect();
        Scaling { mean, scale }
    }

    /// Scales the row-major `x` in place.
    fn apply(&self, x: &mut [f64]) {
        let dim = self.mean.len();
        for (i, v) in x.iter_mut().enumerate() {
            let j = i % dim;
            *v = (*v - self.mean[j]) / self.scale[j];
        }
    }
}

/// The predictions for the query rows.
pub enum Predictions {
    /// Regression: one value a row.
    Values(Vec<f64>),
    /// Classification: one label a row, the classes in order, and each row's share of each
    /// class (rows x classes).
    Labels {
        predicted: Vec<Label>,
        classes: Vec<Label>,
        proba: Array2<f64>,
    },
}

impl Predictions {
    /// The number of rows predicted.
    pub fn rows(&self) -> usize {
        match self {
            Predictions::Values(values) => values.len(),
            Predictions::Labels { predicted, .. } => predicted.len(),
        }
    }
}

/// What was computed.
pub enum Results {
    /// The leave-one-out error of each k, in the order given.
    Scores(Vec<LooScore>),
    /// The predictions of the query rows.
    Predictions(Predictions),
}

/// A run: the model, what it gave, and its time.
pub struct Outcome {
    /// The training file (`<stdin>` for standard input).
    pub file: String,
    /// The number of training rows.
    pub rows: usize,
    /// The query file, with --query.
    pub query: Option<String>,
    /// The model's columns.
    pub model: Model,
    /// The scores or the predictions.
    pub results: Results,
    /// Wall time of the scoring or of the fit and the predictions (not of reading files).
    pub seconds: f64,
}

/// Reads the files, checks the model and scores or predicts on `device`.
pub fn run(args: &KnnArgs, device: Device) -> Result<Outcome> {
    let response = args.response.trim().to_string();
    let keep = if args.classify {
        vec![response.as_str()]
    } else {
        Vec::new()
    };
    let table = Table::read_with_text(open::open(&args.file)?, &keep)?;
    let model = Model {
        predictors: predictors(&table, &response, &args.predictors)?,
        response,
    };
    if model.predictors.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{}: no predictors: the file has no column of numbers besides the response \
             `{}` (--predictors names them)",
            table.name().display(),
            model.response
        )));
    }
    let target = if args.classify {
        Target::Labels(labels(&table, &model.response)?)
    } else {
        Target::Values(numeric_response(&table, &model.response)?)
    };
    if let (Target::Labels(labels), Some(out)) = (&target, &args.out) {
        if crate::knn_output::is_npy(out) && labels.iter().any(|l| l.number().is_none()) {
            return Err(Error::InvalidArgument(format!(
                "--out {}: a .npy file holds numbers, and the labels of `{}` are text; write \
                 the predictions to a .csv file",
                out.display(),
                model.response
            )));
        }
    }
    let dim = model.predictors.len();
    let mut x = predictor_values(&table, &model)?;
    let (query, mut query_x) = match &args.query {
        Some(file) => {
            let table = Table::read(open::open(file)?)?;
            let x = predictor_values(&table, &model)?;
            (Some(table.name().display().to_string()), Some(x))
        }
        None => (None, None),
    };
    if args.standardize {
        let scaling = Scaling::of(&x, dim);
        scaling.apply(&mut x);
        if let Some(q) = &mut query_x {
            scaling.apply(q);
        }
    }

    let regressor = || {
        KnnRegressor::new(args.k[0])
            .weights(args.weights)
            .metric(args.metric)
            .device(device.clone())
    };
    let classifier = || {
        KnnClassifier::new(args.k[0])
            .weights(args.weights)
            .metric(args.metric)
            .device(device.clone())
    };
    let start = Instant::now();
    let train = Points::from_vec(x, dim)?;
    let results = match (query_x, &target) {
        (None, Target::Values(y)) => {
            Results::Scores(regressor().leave_one_out_scores(train, y, &args.k)?)
        }
        (None, Target::Labels(labels)) => {
            Results::Scores(classifier().leave_one_out_scores(train, labels, &args.k)?)
        }
        (Some(q), Target::Values(y)) => {
            let fitted = regressor().fit(train, y)?;
            Results::Predictions(Predictions::Values(
                fitted.predict(Points::from_vec(q, dim)?)?,
            ))
        }
        (Some(q), Target::Labels(labels)) => {
            let fitted = classifier().fit(train, labels)?;
            let q = Points::from_vec(q, dim)?;
            Results::Predictions(Predictions::Labels {
                predicted: fitted.predict(q.clone())?,
                classes: fitted.classes().to_vec(),
                proba: fitted.predict_proba(q)?,
            })
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    Ok(Outcome {
        file: table.name().display().to_string(),
        rows: table_rows(&target),
        query,
        model,
        results,
        seconds,
    })
}

/// The number of training rows.
fn table_rows(target: &Target) -> usize {
    match target {
        Target::Values(y) => y.len(),
        Target::Labels(labels) => labels.len(),
    }
}

/// The predictors of `model` from `table`, row-major, every value finite.
fn predictor_values(table: &Table, model: &Model) -> Result<Vec<f64>> {
    let columns: Vec<Vec<f64>> = model
        .predictors
        .iter()
        .map(|name| finite_column(table, name, false))
        .collect::<Result<_>>()?;
    Ok(row_major(&columns))
}

/// The response of a regression: numbers, every one finite.
fn numeric_response(table: &Table, response: &str) -> Result<Vec<f64>> {
    finite_column(table, response, false).map_err(|e| match e {
        Error::Csv { .. } => Error::InvalidArgument(format!(
            "{e}; a regression needs a numeric response (--classify predicts labels, text \
             included)"
        )),
        other => other,
    })
}

/// The labels of the column `name`: its numbers when every value is one (finite), otherwise
/// its fields as text (none of them missing).
fn labels(table: &Table, name: &str) -> Result<Vec<Label>> {
    match finite_column(table, name, false) {
        Ok(values) => Ok(values
            .into_iter()
            .map(|v| Label::Number(Number(v)))
            .collect()),
        Err(Error::Csv { .. }) => {
            let fields = table.text(name)?;
            if let Some(row) = fields.iter().position(|f| is_missing(f)) {
                return Err(Error::InvalidArgument(format!(
                    "column `{name}` has a missing label at data row {row} (0-based): every \
                     training row needs its class"
                )));
            }
            Ok(fields.iter().cloned().map(Label::Text).collect())
        }
        Err(e) => Err(e),
    }
}

/// Whether a CSV field is a missing value (empty, `NA` or `NaN` in any case), as the CSV reader
/// reads one.
fn is_missing(field: &str) -> bool {
    field.is_empty() || field.eq_ignore_ascii_case("na") || field.eq_ignore_ascii_case("nan")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_is_that_of_standard_scaler() {
        // Columns: 1, 2, 3, 4 (mean 2.5, population sd sqrt(1.25)) and a constant 7.
        let x = [1.0, 7.0, 2.0, 7.0, 3.0, 7.0, 4.0, 7.0];
        let scaling = Scaling::of(&x, 2);
        assert_eq!(scaling.mean, [2.5, 7.0]);
        assert_eq!(scaling.scale, [1.25f64.sqrt(), 1.0]);
        let mut y = x;
        scaling.apply(&mut y);
        assert_eq!(y[1], 0.0);
        assert_eq!(y[0], -1.5 / 1.25f64.sqrt());
    }

    #[test]
    fn labels_print_as_written() {
        assert_eq!(Label::Number(Number(3.0)).to_string(), "3");
        assert_eq!(Label::Number(Number(-0.5)).to_string(), "-0.5");
        assert_eq!(Label::Number(Number(1e300)).to_string(), "1e300");
        let labels = [
            Label::Text("a b".into()),
            Label::Number(Number(3.0)),
            Label::Number(Number(-0.5)),
        ];
        assert_eq!(
            crate::output::json_line(&labels).unwrap(),
            "[\"a b\", 3, -0.5]\n"
        );
        assert!(Label::Number(Number(2.0)) < Label::Number(Number(10.0)));
        assert!(Label::Text("10".into()) < Label::Text("2".into()));
    }
}
