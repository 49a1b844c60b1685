//! `kselect threshold`: hard thresholding of an array, written to a file, generic over the
//! element type of the file.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use kselect::io::{write_npy, ColumnVisitor};
use kselect::{DType, Element, Result, Selector};
use serde::Serialize;

use crate::output::{json_line, Num};
use crate::output_files::{write_replacing, FileKind};

/// What to do.
pub struct Request<'a> {
    pub selector: &'a Selector,
    pub k: usize,
    /// Where the thresholded array goes.
    pub out: &'a Path,
}

/// What was done.
pub struct Outcome {
    pub dtype: DType,
    pub n: usize,
    pub k: usize,
    /// The kept entry of smallest magnitude: its value and index.
    pub threshold: Num,
    pub threshold_index: usize,
    /// The kept indices, ascending.
    pub support: Vec<usize>,
    /// Wall time of the thresholding alone (not of writing the file).
    pub seconds: f64,
}

impl ColumnVisitor for Request<'_> {
    type Output = Result<Outcome>;

    fn visit<T: Element>(self, data: &[T]) -> Result<Outcome> {
        let mut x = data.to_vec();
        let start = Instant::now();
        let threshold = self.selector.hard_threshold(&mut x, self.k)?;
        let seconds = start.elapsed().as_secs_f64();
        write_replacing(self.out, FileKind::Array, |path| write_npy(path, &x))?;
        Ok(Outcome {
            dtype: T::DTYPE,
            n: x.len(),
            k: self.k,
            threshold: Num::of(threshold.value),
            threshold_index: threshold.index,
            support: threshold.support,
            seconds,
        })
    }
}

/// The one JSON object of `--json`.
pub fn json(out: &Outcome, backend: &str) -> Result<String> {
    #[derive(Serialize)]
    struct Threshold<'a> {
        n: usize,
        k: usize,
        threshold: &'a Num,
        threshold_index: usize,
        support: &'a [usize],
        backend: &'a str,
        seconds: f64,
    }

    json_line(&Threshold {
        n: out.n,
        k: out.k,
        threshold: &out.threshold,
        threshold_index: out.threshold_index,
        support: &out.support,
        backend,
        seconds: out.seconds,
    })
}

/// The readable output: what was read, kept and written, the threshold and the support.
pub fn summary(file: &Path, written: &Path, out: &Outcome, device: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "file:      {} ({} values of type {})",
        file.display(),
        out.n,
        out.dtype
    );
    let _ = writeln!(
        s,
        "kept:      the {} of largest magnitude, the rest zeroed, written to {}",
        out.k,
        written.display()
    );
    let _ = writeln!(
        s,
        "threshold: {} at index {} (the kept entry of smallest magnitude)",
        out.threshold.text(),
        out.threshold_index
    );
    let _ = writeln!(s, "backend:   {device}, {:.6} s", out.seconds);
    let support: Vec<String> = out.support.iter().map(|i| i.to_string()).collect();
    let _ = writeln!(s, "support:   {}", support.join(" "));
    s
}
