//! The output of `kselect quantiles`: the JSON object and the table.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::output::{aligned, json_list, json_string, Num};
use crate::quantiles::Outcome;

/// What the output describes besides the outcome.
pub struct Context<'a> {
    pub file: &'a str,
    pub format: &'a str,
    pub column: Option<&'a str>,
    pub nan_policy: &'a str,
    pub probs: &'a [f64],
    pub method: &'a str,
    pub backend: &'a str,
    pub device: &'a str,
    pub plot: Option<&'a PathBuf>,
    pub cdf_plot: Option<&'a PathBuf>,
}

/// The one JSON object of `--json`.
pub fn json(ctx: &Context<'_>, out: &Outcome) -> String {
    let mut fields: Vec<(&str, String)> = vec![
        ("file", json_string(ctx.file)),
        ("format", json_string(ctx.format)),
    ];
    if let Some(column) = ctx.column {
        fields.push(("column", json_string(column)));
    }
    fields.extend([
        ("dtype", json_string(out.dtype.name())),
        ("n", out.n.to_string()),
        ("nan_count", out.nan_count.to_string()),
        ("nan_policy", json_string(ctx.nan_policy)),
        (
            "probs",
            json_list(ctx.probs.iter().map(|&p| Num::of_f64(p).json())),
        ),
        ("values", json_list(out.values.iter().map(Num::json))),
        ("method", json_string(ctx.method)),
        ("backend", json_string(ctx.backend)),
        ("device", json_string(ctx.device)),
        ("algorithm", json_string(&out.algorithm)),
        ("ks_distance", Num::of_f64(out.ks_distance).json()),
    ]);
    if let Some(path) = ctx.plot {
        fields.push(("plot", json_string(&path.display().to_string())));
    }
    if let Some(path) = ctx.cdf_plot {
        fields.push(("cdf_plot", json_string(&path.display().to_string())));
    }
    fields.push(("seconds", Num::of_f64(out.seconds).json()));
    let body: Vec<String> = fields
        .into_iter()
        .map(|(key, value)| format!("{}: {value}", json_string(key)))
        .collect();
    format!("{{{}}}\n", body.join(", "))
}

/// The readable output: a summary, then the table of probabilities and quantiles.
pub fn table(ctx: &Context<'_>, out: &Outcome) -> String {
    let mut s = String::new();
    let column = ctx
        .column
        .map(|c| format!(", column {c}"))
        .unwrap_or_default();
    let nans = match (out.nan_count, ctx.nan_policy) {
        (0, _) => String::new(),
        (count, "omit") => format!(", {count} NaN (omitted)"),
        (count, _) => format!(", {count} NaN (ordered last)"),
    };
    let _ = writeln!(s, "file:      {} ({}{column})", ctx.file, ctx.format);
    let _ = writeln!(s, "values:    {} of type {}{nans}", out.n, out.dtype);
    let _ = writeln!(s, "backend:   {} ({})", ctx.backend, ctx.device);
    let _ = writeln!(
        s,
        "algorithm: {}, {:.6} s for the selection",
        out.algorithm, out.seconds
    );
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
