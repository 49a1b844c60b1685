//! `kselect topk`: the k largest or smallest values of every row, with their indices, generic
//! over the element type of the file.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use kselect::io::npy::NpyArray;
use kselect::io::ColumnVisitor;
use kselect::{DType, Element, Error, Matrix, Result, Selector, TopKOptions, TopKOrder};
use serde::Serialize;

use crate::output::{aligned, json_line, Num};

/// The rows of the array: a 1-D array is one row, or rows of `cols` values; a 2-D array is its
/// rows (and `cols`, if given, must be its number of columns).
pub fn rows_of(array: &NpyArray, cols: Option<usize>) -> Result<(usize, usize)> {
    match (&array.shape[..], cols) {
        ([n], None) => Ok((1, *n)),
        ([n], Some(c)) if n % c == 0 => Ok((n / c, c)),
        ([n], Some(c)) => Err(Error::InvalidArgument(format!(
            "--cols {c}: the array's {n} values are not whole rows of {c} (the length must be a \
             multiple of --cols)"
        ))),
        ([r, c], None) => Ok((*r, *c)),
        ([r, c], Some(given)) if given == *c => Ok((*r, *c)),
        ([r, c], Some(given)) => Err(Error::InvalidArgument(format!(
            "--cols {given} does not match the 2-D array's {r} x {c} shape (--cols reads a 1-D \
             array as rows)"
        ))),
        (shape, _) => Err(Error::InvalidArgument(format!(
            "an array of {} dimensions: topk reads 1-D and 2-D arrays",
            shape.len()
        ))),
    }
}

/// What to take.
pub struct Request<'a> {
    pub selector: &'a Selector,
    /// Rows and columns.
    pub rows: (usize, usize),
    pub k: usize,
    pub options: TopKOptions,
}

/// What was taken.
pub struct Outcome {
    pub dtype: DType,
    pub rows: usize,
    pub cols: usize,
    pub k: usize,
    /// Row-major, `k` a row.
    pub values: Vec<Num>,
    pub indices: Vec<usize>,
    /// Wall time of the top-k alone.
    pub seconds: f64,
}

impl ColumnVisitor for Request<'_> {
    type Output = Result<Outcome>;

    fn visit<T: Element>(self, data: &[T]) -> Result<Outcome> {
        let start = Instant::now();
        let (rows, cols) = self.rows;
        let top = self
            .selector
            .top_k_rows(Matrix::new(data, rows, cols), self.k, self.options)?;
        let seconds = start.elapsed().as_secs_f64();
        let (values, indices) = top.into_parts();
        Ok(Outcome {
            dtype: T::DTYPE,
            rows,
            cols,
            k: self.k,
            values: values.into_iter().map(Num::of).collect(),
            indices,
            seconds,
        })
    }
}

/// The one JSON object of `--json`.
pub fn json(out: &Outcome, backend: &str) -> Result<String> {
    #[derive(Serialize)]
    struct TopK<'a> {
        rows: usize,
        k: usize,
        values: Vec<&'a [Num]>,
        indices: Vec<&'a [usize]>,
        backend: &'a str,
        seconds: f64,
    }

    let width = out.k.max(1);
    json_line(&TopK {
        rows: out.rows,
        k: out.k,
        values: out.values.chunks(width).collect(),
        indices: out.indices.chunks(width).collect(),
        backend,
        seconds: out.seconds,
    })
}

/// The readable output: what was read and done, then a table of row, position, index, value.
pub fn table(file: &Path, out: &Outcome, options: TopKOptions, device: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "file:      {} ({} row(s) of {} value(s), type {})",
        file.display(),
        out.rows,
        out.cols,
        out.dtype
    );
    let which = match options.order {
        TopKOrder::Largest => "largest",
        TopKOrder::Smallest => "smallest",
    };
    let order = if options.sorted {
        "sorted by value"
    } else {
        "in index order"
    };
    let _ = writeln!(s, "top-k:     the {} {which} of each row, {order}", out.k);
    let _ = writeln!(s, "backend:   {device}, {:.6} s", out.seconds);
    s.push('\n');
    let rows: Vec<Vec<String>> = out
        .values
        .iter()
        .zip(&out.indices)
        .enumerate()
        .map(|(j, (value, index))| {
            vec![
                (j / out.k).to_string(),
                (j % out.k).to_string(),
                index.to_string(),
                value.text().to_string(),
            ]
        })
        .collect();
    aligned(&mut s, &["row", "#", "index", "value"], &rows);
    s
}
