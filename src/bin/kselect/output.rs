//! Printing: values as exact text, the JSON object and the table.

use std::any::Any;
use std::fmt::Write as _;
use std::io;

use kselect::{Device, Element, Error, Result};
use serde::{Serialize, Serializer};
use serde_json::ser::Formatter;

use crate::select::Outcome;
use crate::summary::{summary, Input, InputFields};

/// A value as text: integers exactly, finite floats with the fewest digits that read back as
/// the same value of their own type, non-finite floats as `inf`, `-inf`, `nan`. In JSON
/// ([`json_line`]) the same digits as a number, and the non-finite values as those strings.
#[derive(Clone, Debug, PartialEq)]
pub struct Num {
    text: String,
    value: Scalar,
}

/// A [`Num`]'s value in its own type, for the JSON serializer.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scalar {
    Signed(i64),
    Unsigned(u64),
    Single(f32),
    Double(f64),
    /// `inf`, `-inf` or `nan` (the text), which JSON has no number for.
    NonFinite,
}

impl Scalar {
    /// `x` in its own type: the six element types of the files.
    fn of<T: Element>(x: T) -> Scalar {
        let any: &dyn Any = &x;
        if let Some(&v) = any.downcast_ref::<f32>() {
            Scalar::Single(v)
        } else if let Some(&v) = any.downcast_ref::<i32>() {
            Scalar::Signed(v.into())
        } else if let Some(&v) = any.downcast_ref::<i64>() {
            Scalar::Signed(v)
        } else if let Some(&v) = any.downcast_ref::<u32>() {
            Scalar::Unsigned(v.into())
        } else if let Some(&v) = any.downcast_ref::<u64>() {
            Scalar::Unsigned(v)
        } else {
            // f64, the one element type left (exact).
            Scalar::Double(x.to_f64())
        }
    }
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
                value: Scalar::of(x),
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
            value: Scalar::NonFinite,
        }
    }

    /// As plain text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self.value {
            Scalar::Signed(v) => s.serialize_i64(v),
            Scalar::Unsigned(v) => s.serialize_u64(v),
            Scalar::Single(v) => s.serialize_f32(v),
            Scalar::Double(v) => s.serialize_f64(v),
            Scalar::NonFinite => s.serialize_str(&self.text),
        }
    }
}

/// Floats as [`Num`]s, for a JSON array.
pub fn nums(values: &[f64]) -> Vec<Num> {
    values.iter().map(|&v| Num::of_f64(v)).collect()
}

/// `value` as one line of JSON and a newline: a space after every `:` and `,`, and the floats
/// with the digits of their text ([`Num`]: Rust's shortest round-trip digits).
pub fn json_line<T: Serialize>(value: &T) -> Result<String> {
    let mut bytes = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, Spaced);
    value
        .serialize(&mut serializer)
        .map_err(|e| Error::InvalidArgument(format!("cannot write the JSON output: {e}")))?;
    bytes.push(b'\n');
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// serde_json's one-line layout with a space after `:` and `,`, and floats printed by Rust's
/// shortest round-trip formatting (`0.1`, `1e-7`, `1.0`), as the tables print them.
struct Spaced;

impl Formatter for Spaced {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.begin_array_value(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        write!(w, "{value:?}")
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        write!(w, "{value:?}")
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

/// The one JSON object of `--json`.
pub fn json(ctx: &Context<'_>, out: &Outcome) -> Result<String> {
    /// The `quantiles` field: the probabilities and their values.
    #[derive(Serialize)]
    struct Quantiles<'a> {
        q: Vec<Num>,
        values: &'a [Num],
    }

    #[derive(Serialize)]
    struct Select<'a> {
        #[serde(flatten)]
        input: InputFields<'a>,
        largest: bool,
        k: &'a [usize],
        ranks: &'a [usize],
        values: &'a [Num],
        #[serde(skip_serializing_if = "Option::is_none")]
        method: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        quantiles: Option<Quantiles<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        median: Option<&'a Num>,
        backend: &'a str,
        device: &'a str,
        algorithm: &'a str,
        seconds: f64,
    }

    let has_quantiles = !ctx.quantiles.is_empty();
    json_line(&Select {
        input: InputFields::new(&ctx.input, &out.measured),
        largest: ctx.largest,
        k: ctx.k,
        ranks: &out.ranks,
        values: &out.values,
        method: (has_quantiles || out.median.is_some()).then_some(ctx.method),
        quantiles: has_quantiles.then(|| Quantiles {
            q: nums(ctx.quantiles),
            values: &out.quantile_values,
        }),
        median: out.median.as_ref(),
        backend: ctx.input.backend,
        device: &ctx.input.device,
        algorithm: &out.measured.algorithm,
        seconds: out.measured.seconds,
    })
}

/// The last fields of a JSON object: where the command ran (`backend`, `cpu` or `cuda`, and
/// `device`) and the `seconds` it took.
#[derive(Serialize)]
pub struct RunFields {
    backend: &'static str,
    device: String,
    seconds: f64,
}

impl RunFields {
    /// The fields of a command that ran on `device` for `seconds`.
    pub fn new(device: &Device, seconds: f64) -> RunFields {
        RunFields {
            backend: device.backend_name(),
            device: device.description(),
            seconds,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_integers_exact_floats_in_their_own_digits_and_names_non_finite_values() {
        let values = [
            Num::of(u64::MAX),
            Num::of(i64::MIN),
            Num::of(0.1f32),
            Num::of(1e-7f64),
            Num::of(3.0f64),
            Num::of(-0.0f32),
            Num::of(f32::INFINITY),
            Num::of(f64::NEG_INFINITY),
            Num::of(f64::NAN),
        ];
        assert_eq!(
            json_line(&values).unwrap(),
            "[18446744073709551615, -9223372036854775808, 0.1, 1e-7, 3.0, -0.0, \"inf\", \
             \"-inf\", \"nan\"]\n"
        );
        let texts: Vec<&str> = values.iter().map(Num::text).collect();
        assert_eq!(texts[2..6], ["0.1", "1e-7", "3.0", "-0.0"]);
    }

    #[test]
    fn json_objects_are_one_line_with_spaces() {
        #[derive(Serialize)]
        struct Object<'a> {
            name: &'a str,
            sizes: [usize; 2],
            empty: [u8; 0],
        }
        let object = Object {
            name: "a \"b\"",
            sizes: [1, 2],
            empty: [],
        };
        assert_eq!(
            json_line(&object).unwrap(),
            "{\"name\": \"a \\\"b\\\"\", \"sizes\": [1, 2], \"empty\": []}\n"
        );
    }
}
