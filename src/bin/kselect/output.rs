//! Printing: values as exact text, the JSON object and the table.

use std::fmt::Write as _;

use kselect::{Device, Element};

use crate::select::Outcome;
use crate::summary::{leading_json_fields, summary, Input};

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
    /// The file and the device.
    pub input: Input,
    /// Whether `k` counts from the largest value.
    pub largest: bool,
    /// The ranks as given.
    pub k: &'a [usize],
    /// The quantile probabilities asked for.
    pub quantiles: &'a [f64],
    /// The name of the quantile method.
    pub method: &'a str,
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
    let mut fields = leading_json_fields(&ctx.input, &out.measured);
    fields.extend([
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
        ("backend", json_string(ctx.input.backend)),
        ("device", json_string(&ctx.input.device)),
        ("algorithm", json_string(&out.measured.algorithm)),
        ("seconds", Num::of_f64(out.measured.seconds).json()),
    ]);
    json_object(fields)
}

/// The last fields of a JSON object: where the command ran (`backend`, `cpu` or `cuda`, and
/// `device`) and the `seconds` it took.
pub fn run_fields(device: &Device, seconds: f64) -> [(&'static str, String); 3] {
    [
        ("backend", json_string(device.backend_name())),
        ("device", json_string(&device.description())),
        ("seconds", Num::of_f64(seconds).json()),
    ]
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
    let mut s = summary(&ctx.input, &out.measured);
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
