//! What `kselect lts` and `kselect lms` print: the JSON object, or a summary, the table of
//! coefficients and the outlier rows.

use std::fmt::Write as _;

use kselect::regression::{Method, RegressionFit};
use kselect::Result;
use serde::Serialize;

use crate::output::{aligned, json_line, nums, Num};
use crate::regression::{Model, Outcome};

/// The outlier rows the readable output lists; `--json` lists them all.
const LISTED_OUTLIERS: usize = 200;

/// What the output describes besides the fit.
pub struct Context<'a> {
    /// The file as given on the command line.
    pub file: String,
    /// `csv` or `npy`.
    pub format: &'static str,
    /// The model's columns.
    pub model: &'a Model,
    /// The seed of the random starts.
    pub seed: u64,
    /// `cpu` or `cuda`.
    pub backend: &'static str,
    /// The device's description.
    pub device: String,
}

/// What the objective of a method is.
fn objective_meaning(method: Method) -> &'static str {
    match method {
        Method::Lts => "the sum of the h smallest squared residuals",
        Method::Lms => "the h-th smallest absolute residual",
    }
}

/// The one JSON object of `--json`.
pub fn json(ctx: &Context<'_>, out: &Outcome) -> Result<String> {
    #[derive(Serialize)]
    struct Fit<'a> {
        file: &'a str,
        method: &'a str,
        response: String,
        terms: Vec<String>,
        log: &'a [String],
        n: usize,
        p: usize,
        h: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        alpha: Option<Num>,
        coefficients: Vec<Num>,
        raw_coefficients: Vec<Num>,
        objective: Num,
        raw_scale: Num,
        scale: Num,
        outliers: &'a [usize],
        /// 0 for the rows the reweighted fit left out, 1 for the others.
        weights: Vec<u8>,
        starts: usize,
        exhaustive: bool,
        exact_fit: bool,
        seed: u64,
        backend: &'a str,
        seconds: f64,
    }

    let fit = &out.fit;
    let model = ctx.model;
    json_line(&Fit {
        file: &ctx.file,
        method: fit.method.name(),
        response: model.label(&model.response),
        terms: model.terms(),
        log: &model.log,
        n: fit.n,
        p: fit.p,
        h: fit.h,
        alpha: (fit.method == Method::Lts).then(|| Num::of_f64(fit.alpha)),
        coefficients: nums(&fit.coefficients),
        raw_coefficients: nums(&fit.raw_coefficients),
        objective: Num::of_f64(fit.objective),
        raw_scale: Num::of_f64(fit.raw_scale),
        scale: Num::of_f64(fit.scale),
        outliers: &fit.outliers,
        weights: fit.weights.iter().map(|&w| u8::from(w != 0.0)).collect(),
        starts: fit.starts,
        exhaustive: fit.exhaustive,
        exact_fit: fit.exact_fit,
        seed: ctx.seed,
        backend: ctx.backend,
        seconds: out.seconds,
    })
}

/// `x` with 8 significant digits, without an exponent for magnitudes from 1e-5 to 1e9.
fn decimal(x: f64) -> String {
    if !x.is_finite() {
        return Num::of_f64(x).text().to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let magnitude = x.abs().log10().floor() as i32;
    if (-5..9).contains(&magnitude) {
        format!("{x:.*}", (7 - magnitude).max(0) as usize)
    } else {
        format!("{x:.7e}")
    }
}

/// The readable output: the file and the model, the fit's summary, the coefficients' table and
/// the outlier rows.
pub fn table(ctx: &Context<'_>, out: &Outcome) -> String {
    let fit = &out.fit;
    let model = ctx.model;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "file:       {} ({}, {} rows)",
        ctx.file, ctx.format, fit.n
    );
    let mut right: Vec<String> = model.predictors.iter().map(|p| model.label(p)).collect();
    if model.intercept {
        right.insert(0, "1".to_string());
    }
    let _ = writeln!(
        s,
        "model:      {}, {} ~ {}",
        fit.method.name(),
        model.label(&model.response),
        right.join(" + ")
    );
    let coverage = match fit.method {
        Method::Lts => format!(" (alpha {})", Num::of_f64(fit.alpha).text()),
        Method::Lms => String::new(),
    };
    let _ = writeln!(
        s,
        "coverage:   n = {}, p = {}, h = {}{coverage}",
        fit.n, fit.p, fit.h
    );
    let _ = writeln!(s, "starts:     {}", starts(fit, ctx.seed));
    let _ = writeln!(
        s,
        "objective:  {} ({})",
        decimal(fit.objective),
        objective_meaning(fit.method)
    );
    let _ = writeln!(
        s,
        "scale:      {} raw, {} reweighted{}",
        decimal(fit.raw_scale),
        decimal(fit.scale),
        if fit.exact_fit {
            " (an exact fit: at least h rows lie on it)"
        } else {
            ""
        }
    );
    let _ = writeln!(s, "backend:    {}, {:.6} s", ctx.device, out.seconds);
    s.push('\n');

    let terms = model.terms();
    // Term names left-aligned: padded to one width, which the right alignment keeps.
    let width = terms
        .iter()
        .map(|t| t.chars().count())
        .chain(["term".len()])
        .max()
        .unwrap_or(0);
    let rows: Vec<Vec<String>> = terms
        .iter()
        .zip(fit.coefficients.iter().zip(&fit.raw_coefficients))
        .map(|(term, (&b, &raw))| vec![format!("{term:<width$}"), decimal(b), decimal(raw)])
        .collect();
    let header = format!("{:<width$}", "term");
    aligned(&mut s, &[&header, "coefficient", "raw coefficient"], &rows);
    s.push('\n');
    let _ = writeln!(s, "{}", outliers(fit));
    s
}

/// How the starts were chosen.
fn starts(fit: &RegressionFit, seed: u64) -> String {
    if fit.starts == 0 {
        "none: the fit is exact by construction".to_string()
    } else if fit.exhaustive {
        format!("every {}-subset of rows ({})", fit.p, fit.starts)
    } else {
        format!("{} random {}-subsets, seed {seed}", fit.starts, fit.p)
    }
}

/// The line of outlier rows, the first [`LISTED_OUTLIERS`] of them listed.
fn outliers(fit: &RegressionFit) -> String {
    let count = fit.outliers.len();
    if count == 0 {
        return "outliers:   none (every row has weight 1)".to_string();
    }
    let listed: Vec<String> = fit
        .outliers
        .iter()
        .take(LISTED_OUTLIERS)
        .map(|i| i.to_string())
        .collect();
    let more = if count > LISTED_OUTLIERS {
        format!(
            " ... ({} more; --json lists them all)",
            count - LISTED_OUTLIERS
        )
    } else {
        String::new()
    };
    format!(
        "outliers:   {count} of {} rows (0-based, weight 0): {}{more}",
        fit.n,
        listed.join(" ")
    )
}
