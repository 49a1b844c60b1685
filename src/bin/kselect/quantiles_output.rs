//! The output of `kselect quantiles`: the JSON object and the table.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::output::{aligned, json_list, json_object, json_string, Num};
use crate::quantiles::Outcome;
use crate::summary::{leading_json_fields, summary, Input};

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
pub fn json(ctx: &Context<'_>, out: &Outcome) -> String {
    let mut fields = leading_json_fields(&ctx.input, &out.measured);
    fields.extend([
        (
            "probs",
            json_list(ctx.probs.iter().map(|&p| Num::of_f64(p).json())),
        ),
        ("values", json_list(out.values.iter().map(Num::json))),
        ("method", json_string(ctx.method)),
        ("backend", json_string(ctx.input.backend)),
        ("device", json_string(&ctx.input.device)),
        ("algorithm", json_string(&out.measured.algorithm)),
        ("ks_distance", Num::of_f64(out.ks_distance).json()),
    ]);
    if let Some(path) = ctx.plot {
        fields.push(("plot", json_string(&path.display().to_string())));
    }
    if let Some(path) = ctx.cdf_plot {
        fields.push(("cdf_plot", json_string(&path.display().to_string())));
    }
    fields.push(("seconds", Num::of_f64(out.measured.seconds).json()));
    json_object(fields)
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
