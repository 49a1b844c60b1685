//! The output of `kselect quantiles`: the JSON object and the table.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::output::{aligned, json_list, json_object, json_string, summary, Num, Summary};
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
    json_object(fields)
}

/// The readable output: a summary, then the table of probabilities and quantiles.
pub fn table(ctx: &Context<'_>, out: &Outcome) -> String {
    let mut s = summary(&Summary {
        file: ctx.file,
        format: ctx.format,
        column: ctx.column,
        nan_policy: ctx.nan_policy,
        backend: ctx.backend,
        device: ctx.device,
        n: out.n,
        dtype: &out.dtype,
        nan_count: out.nan_count,
        algorithm: &out.algorithm,
        seconds: out.seconds,
    });
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
