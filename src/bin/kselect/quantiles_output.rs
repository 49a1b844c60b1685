//! The output of `kselect quantiles`: the JSON object and the table.

use std::fmt::Write as _;
use std::path::PathBuf;

use kselect::Result;
use serde::Serialize;

use crate::output::{aligned, json_line, nums, Num};
use crate::quantiles::Outcome;
use crate::summary::{summary, Input, InputFields};

/// What the output describes besides the outcome.
pub struct Context<'a> {
    /// The file and the device.
    pub input: Input,
    /// The probabilities of the quantiles.
    pub probs: &'a [f64],
    /// The name of the quantile method.
    pub method: &'a str,
    /// The PDF plot written, if any.
    pub plot: Option<&'a PathBuf>,
    /// The CDF plot written, if any.
    pub cdf_plot: Option<&'a PathBuf>,
}

/// The one JSON object of `--json`.
pub fn json(ctx: &Context<'_>, out: &Outcome) -> Result<String> {
    #[derive(Serialize)]
    struct Quantiles<'a> {
        #[serde(flatten)]
        input: InputFields<'a>,
        probs: Vec<Num>,
        values: &'a [Num],
        method: &'a str,
        backend: &'a str,
        device: &'a str,
        algorithm: &'a str,
        ks_distance: Num,
        #[serde(skip_serializing_if = "Option::is_none")]
        plot: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cdf_plot: Option<String>,
        seconds: f64,
    }

    let path = |p: Option<&PathBuf>| p.map(|p| p.display().to_string());
    json_line(&Quantiles {
        input: InputFields::new(&ctx.input, &out.measured),
        probs: nums(ctx.probs),
        values: &out.values,
        method: ctx.method,
        backend: ctx.input.backend,
        device: &ctx.input.device,
        algorithm: &out.measured.algorithm,
        ks_distance: Num::of_f64(out.ks_distance),
        plot: path(ctx.plot),
        cdf_plot: path(ctx.cdf_plot),
        seconds: out.measured.seconds,
    })
}

/// The readable output: a summary, then the table of probabilities and quantiles.
pub fn table(ctx: &Context<'_>, out: &Outcome) -> String {
    let mut s = summary(&ctx.input, &out.measured);
    let _ = writeln!(
        s,
        "estimate:  piecewise-linear CDF through {} quantiles; Kolmogorov-Smirnov distance \
         to the data {}",
        ctx.probs.len(),
        Num::of_f64(out.ks_distance).text()
    );
    for (what, path) in [("PDF plot", ctx.plot), ("CDF plot", ctx.cdf_plot)] {
        if let Some(path) = path {
            let _ = writeln!(s, "{what}:  {}", path.display());
        }
    }
    s.push('\n');
    let rows: Vec<Vec<String>> = ctx
        .probs
        .iter()
        .zip(&out.values)
        .map(|(&p, value)| vec![Num::of_f64(p).text().to_string(), value.text().to_string()])
        .collect();
    let value_header = format!("quantile ({})", ctx.method);
    aligned(&mut s, &["p", &value_header], &rows);
    s
}
