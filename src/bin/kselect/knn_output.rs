//! What `kselect knn` prints and writes: the table or JSON array of leave-one-out errors, the
//! predictions as CSV (or a `.npy` array), their JSON object, and the summary of a run that
//! wrote them to a file.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use kselect::io::write_npy;
use kselect::{Device, Error, Result};
use serde::Serialize;

use crate::cli::KnnArgs;
use crate::knn::{Label, Outcome, Predictions, Results};
use crate::output::{aligned, json_line, nums, Num, RunFields};
use crate::output_files::{write_replacing, FileKind};

/// Whether predictions written to `path` go to a `.npy` array (`.npy` or `.npy.gz`) rather
/// than CSV.
pub fn is_npy(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    name.ends_with(".npy") || name.ends_with(".npy.gz")
}

/// The name of the error measured: `mse` or `misclassification`.
fn error_name(args: &KnnArgs) -> &'static str {
    if args.classify {
        "misclassification"
    } else {
        "mse"
    }
}

/// The position of the best score: the lowest error, ties to the smallest k (then to the first
/// given).
fn best(scores: &[kselect::knn::LooScore]) -> Option<usize> {
    (0..scores.len()).min_by(|&a, &b| {
        let (a, b) = (&scores[a], &scores[b]);
        a.error.total_cmp(&b.error).then(a.k.cmp(&b.k))
    })
}

/// The lines that describe the data, the model and the device.
fn header(args: &KnnArgs, out: &Outcome, device: &Device) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "file:       {} ({} rows)", out.file, out.rows);
    if let (Some(query), Results::Predictions(p)) = (&out.query, &out.results) {
        let _ = writeln!(s, "query:      {query} ({} rows)", p.rows());
    }
    let task = if args.classify {
        "classification"
    } else {
        "regression"
    };
    let _ = writeln!(
        s,
        "model:      knn {task}, {} ~ {}{}",
        out.model.response,
        out.model.predictors.join(" + "),
        if args.standardize {
            " (predictors standardized)"
        } else {
            ""
        }
    );
    let k = match &out.results {
        Results::Predictions(_) => format!("k = {}, ", args.k[0]),
        Results::Scores(_) => String::new(),
    };
    let _ = writeln!(
        s,
        "neighbours: {k}{} weights, {}",
        args.weights.name(),
        args.metric.name()
    );
    let _ = writeln!(
        s,
        "backend:    {}, {:.6} s",
        device.description(),
        out.seconds
    );
    s
}

/// The readable leave-one-out table: the header, then k and error, the best marked.
pub fn scores_table(args: &KnnArgs, out: &Outcome, device: &Device) -> String {
    let Results::Scores(scores) = &out.results else {
        return String::new();
    };
    let mut s = header(args, out, device);
    s.push('\n');
    let best = best(scores);
    let rows: Vec<Vec<String>> = scores
        .iter()
        .enumerate()
        .map(|(i, score)| {
            vec![
                score.k.to_string(),
                Num::of_f64(score.error).text().to_string(),
                if Some(i) == best { "*" } else { "" }.to_string(),
            ]
        })
        .collect();
    let error = format!("leave-one-out {}", error_name(args));
    aligned(&mut s, &["k", &error, "best"], &rows);
    s
}

/// The JSON array of `--json` without `--query`: `{k, error, metric, best}` per k.
pub fn scores_json(args: &KnnArgs, out: &Outcome) -> Result<String> {
    #[derive(Serialize)]
    struct Score<'a> {
        k: usize,
        error: Num,
        metric: &'a str,
        best: bool,
    }

    let Results::Scores(scores) = &out.results else {
        return Ok(String::new());
    };
    let best = best(scores);
    let items: Vec<Score<'_>> = scores
        .iter()
        .enumerate()
        .map(|(i, score)| Score {
            k: score.k,
            error: Num::of_f64(score.error),
            metric: error_name(args),
            best: Some(i) == best,
        })
        .collect();
    json_line(&items)
}

/// The predictions as CSV: a header (`row,prediction`, then `proba_<class>` per class), then a
/// line per query row.
pub fn predictions_csv(predictions: &Predictions) -> Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut record = |fields: Vec<String>| {
        writer
            .write_record(&fields)
            .map_err(|e| Error::InvalidArgument(format!("cannot write the CSV text: {e}")))
    };
    match predictions {
        Predictions::Values(values) => {
            record(vec!["row".into(), "prediction".into()])?;
            for (row, v) in values.iter().enumerate() {
                record(vec![row.to_string(), Num::of_f64(*v).text().to_string()])?;
            }
        }
        Predictions::Labels {
            predicted,
            classes,
            proba,
        } => {
            let mut names = vec!["row".to_string(), "prediction".to_string()];
            names.extend(classes.iter().map(|c| format!("proba_{c}")));
            record(names)?;
            for (row, (label, shares)) in predicted.iter().zip(proba.rows()).enumerate() {
                let mut fields = vec![row.to_string(), label.to_string()];
                fields.extend(shares.iter().map(|&p| Num::of_f64(p).text().to_string()));
                record(fields)?;
            }
        }
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| Error::InvalidArgument(format!("cannot write the CSV text: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Writes the predictions to `path`: a 1-D `.npy` array of `f8` (see [`is_npy`]), or CSV
/// ([`predictions_csv`], gzip-compressed when the name ends in `.gz`).
pub fn write_predictions(path: &Path, predictions: &Predictions) -> Result<()> {
    if is_npy(path) {
        let values: Vec<f64> = match predictions {
            Predictions::Values(values) => values.clone(),
            Predictions::Labels { predicted, .. } => predicted
                .iter()
                .map(|label| label.number().unwrap_or(f64::NAN))
                .collect(),
        };
        return write_replacing(path, FileKind::Array, |p| write_npy(p, &values));
    }
    let text = predictions_csv(predictions)?;
    let gz = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    write_replacing(path, FileKind::Table, |p| {
        let io = |source| Error::Io {
            path: p.to_path_buf(),
            source,
        };
        let file = std::fs::File::create(p).map_err(io)?;
        if gz {
            let mut encoder = flate2::write::GzEncoder::new(file, flate2::Compression::default());
            encoder
                .write_all(text.as_bytes())
                .and_then(|()| encoder.finish().map(drop))
                .map_err(io)
        } else {
            let mut file = file;
            file.write_all(text.as_bytes()).map_err(io)
        }
    })
}

/// The one JSON object of `--json` with `--query`: the model, and the predictions unless they
/// were written to `--out`.
pub fn predictions_json(args: &KnnArgs, out: &Outcome, device: &Device) -> Result<String> {
    #[derive(Serialize)]
    struct Model<'a> {
        file: &'a str,
        query: &'a str,
        response: &'a str,
        predictors: &'a [String],
        task: &'a str,
        k: usize,
        weights: &'a str,
        metric: &'a str,
        standardize: bool,
        rows: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        classes: Option<&'a [Label]>,
        #[serde(skip_serializing_if = "Option::is_none")]
        out: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        predictions: Option<Predicted<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        proba: Option<Vec<Vec<Num>>>,
        #[serde(flatten)]
        run: RunFields,
    }

    /// The predicted values (regression) or labels (classification).
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Predicted<'a> {
        Values(Vec<Num>),
        Labels(&'a [Label]),
    }

    let Results::Predictions(predictions) = &out.results else {
        return Ok(String::new());
    };
    let classes = match predictions {
        Predictions::Values(_) => None,
        Predictions::Labels { classes, .. } => Some(classes.as_slice()),
    };
    // The predictions are listed unless they were written to `--out`.
    let (predicted, proba) = match (&args.out, predictions) {
        (Some(_), _) => (None, None),
        (None, Predictions::Values(values)) => (Some(Predicted::Values(nums(values))), None),
        (
            None,
            Predictions::Labels {
                predicted, proba, ..
            },
        ) => (
            Some(Predicted::Labels(predicted)),
            Some(
                proba
                    .rows()
                    .into_iter()
                    .map(|row| row.iter().map(|&p| Num::of_f64(p)).collect())
                    .collect(),
            ),
        ),
    };
    json_line(&Model {
        file: &out.file,
        query: out.query.as_deref().unwrap_or_default(),
        response: &out.model.response,
        predictors: &out.model.predictors,
        task: if args.classify {
            "classification"
        } else {
            "regression"
        },
        k: args.k[0],
        weights: args.weights.name(),
        metric: args.metric.name(),
        standardize: args.standardize,
        rows: predictions.rows(),
        classes,
        out: args.out.as_ref().map(|path| path.display().to_string()),
        predictions: predicted,
        proba,
        run: RunFields::new(device, out.seconds),
    })
}

/// The readable output of a run that wrote its predictions to `written`.
pub fn summary(args: &KnnArgs, out: &Outcome, device: &Device, written: &Path) -> String {
    let mut s = header(args, out, device);
    let format = if is_npy(written) {
        "a 1-D f8 .npy array of the predictions"
    } else {
        "CSV: row, prediction"
    };
    let probabilities = if args.classify && !is_npy(written) {
        ", proba_<class> per class"
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "written:    {} ({format}{probabilities})",
        written.display()
    );
    s
}
