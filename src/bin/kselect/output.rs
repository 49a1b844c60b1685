//! Printing: values as exact text, the JSON object and the table.

use std::fmt::Write as _;

use kselect::Element;

use crate::select::Outcome;

/// A value as text: integers exactly, finite floats with the fewest digits that read back as
/// the same value of their own type, non-finite floats as `inf`, `-inf`, `nan`.
#[derive(Clone, Debug, PartialEq)]
pub struct Num {
    text: String,
    /// False for `inf`, `-inf` and `nan`, which JSON has no number for.
    finite: bool,
}

impl Num {
    /// The text of an element of the file.
    pub fn of<T: Element>(x: T) -> Num {
        if x.is_nan() {
            Num::special("nan")
        } else if T::DTYPE.is_float() && x.to_f64().is_infinite() {
            Num::special(if x.to_f64() > 0.0 { "inf" } else { "-inf" })
        } else {
            // Debug of f32/f64 is the shortest text that reads back as the same value (with an
            // exponent for very large and small magnitudes: valid JSON); of integers, exact.
            Num {
                text: format!("{x:?}"),
                finite: true,
            }
        }
    }

    /// The text of a computed `f64` (a quantile).
    pub fn of_f64(x: f64) -> Num {
        Num::of(x)
    }

    fn special(text: &str) -> Num {
        Num {
            text: text.to_string(),
            finite: false,
        }
    }

    /// As a JSON value: a number, or a string for the non-finite values.
    pub fn json(&self) -> String {
        if self.finite {
            self.text.clone()
        } else {
            format!("\"{}\"", self.text)
        }
    }

    /// As plain text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// What the output describes besides the outcome.
pub struct Context<'a> {
    pub file: &'a str,
    pub format: &'a str,
    pub column: Option<&'a str>,
    pub nan_policy: &'a str,
    pub largest: bool,
    pub k: &'a [usize],
    pub quantiles: &'a [f64],
    pub method: &'a str,
    pub backend: &'a str,
    pub device: &'a str,
}

/// What the readable output of every command begins with.
pub struct Summary<'a> {
    pub file: &'a str,
    pub format: &'a str,
    pub column: Option<&'a str>,
    pub nan_policy: &'a str,
    pub backend: &'a str,
    pub device: &'a str,
    /// Values in the file (NaNs included).
    pub n: usize,
    pub dtype: &'a dyn std::fmt::Display,
    pub nan_count: usize,
    pub algorithm: &'a str,
    pub seconds: f64,
}

/// The summary lines: the file, its values and NaNs, the backend, the algorithm and its time.
pub fn summary(sm: &Summary<'_>) -> String {
    let mut s = String::new();
    let column = sm
        .column
        .map(|c| format!(", column {c}"))
        .unwrap_or_default();
    let nans = match (sm.nan_count, sm.nan_policy) {
        (0, _) => String::new(),
        (count, "omit") => format!(", {count} NaN (omitted)"),
        (count, _) => format!(", {count} NaN (ordered last)"),
    };
    let _ = writeln!(s, "file:      {} ({}{column})", sm.file, sm.format);
    let _ = writeln!(s, "values:    {} of type {}{nans}", sm.n, sm.dtype);
    let _ = writeln!(s, "backend:   {} ({})", sm.backend, sm.device);
    let _ = writeln!(
        s,
        "algorithm: {}, {:.6} s for the selection",
        sm.algorithm, sm.seconds
    );
    s
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

pub fn json_list<I: IntoIterator<Item = String>>(items: I) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(", "))
}

/// The one JSON object of `--json`, built as text so that integers stay exact.
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
        ("largest", ctx.largest.to_string()),
        ("k", json_list(ctx.k.iter().map(|k| k.to_string()))),
        ("ranks", json_list(out.ranks.iter().map(|r| r.to_string()))),
        ("values", json_list(out.values.iter().map(Num::json))),
    ]);
    if !ctx.quantiles.is_empty() || out.median.is_some() {
        fields.push(("method", json_string(ctx.method)));
    }
    if !ctx.quantiles.is_empty() {
        fields.push((
            "quantiles",
            format!(
                "{{\"q\": {}, \"values\": {}}}",
                json_list(ctx.quantiles.iter().map(|&q| Num::of_f64(q).json())),
                json_list(out.quantile_values.iter().map(Num::json))
            ),
        ));
    }
    if let Some(median) = &out.median {
        fields.push(("median", median.json()));
    }
    fields.extend([
        ("backend", json_string(ctx.backend)),
        ("device", json_string(ctx.device)),
        ("algorithm", json_string(&out.algorithm)),
        ("seconds", Num::of_f64(out.seconds).json()),
    ]);
    json_object(fields)
}

/// A JSON object of `fields` (key, JSON value), in order, on one line.
pub fn json_object(fields: Vec<(&str, String)>) -> String {
    let body: Vec<String> = fields
        .into_iter()
        .map(|(key, value)| format!("{}: {value}", json_string(key)))
        .collect();
    format!("{{{}}}\n", body.join(", "))
}

/// The readable output: a summary, then a table per kind of result.
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
    if !ctx.k.is_empty() {
        s.push('\n');
        let rows: Vec<Vec<String>> = ctx
            .k
            .iter()
            .zip(&out.ranks)
            .zip(&out.values)
            .map(|((k, rank), value)| {
                if ctx.largest {
                    vec![k.to_string(), rank.to_string(), value.text().to_string()]
                } else {
                    vec![rank.to_string(), value.text().to_string()]
                }
            })
            .collect();
        let header: &[&str] = if ctx.largest {
            &["k (largest)", "rank", "value"]
        } else {
            &["rank", "value"]
        };
        aligned(&mut s, header, &rows);
    }
    if !ctx.quantiles.is_empty() || out.median.is_some() {
        s.push('\n');
        let mut rows: Vec<Vec<String>> = ctx
            .quantiles
            .iter()
            .zip(&out.quantile_values)
            .map(|(&q, value)| vec![Num::of_f64(q).text().to_string(), value.text().to_string()])
            .collect();
        if let Some(median) = &out.median {
            rows.push(vec!["median".to_string(), median.text().to_string()]);
        }
        let value_header = format!("value ({})", ctx.method);
        aligned(&mut s, &["q", &value_header], &rows);
    }
    s
}

/// Appends a table with right-aligned columns.
pub fn aligned(s: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| format!("{cell:>w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let _ = writeln!(s, "{}", line(header.to_vec()));
    for row in rows {
        let _ = writeln!(s, "{}", line(row.iter().map(String::as_str).collect()));
    }
}
