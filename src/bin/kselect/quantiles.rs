//! `kselect quantiles`: the quantiles, the distribution they describe, its distance to the
//! data and its plots, generic over the element type of the file.

use std::path::PathBuf;
use std::time::Instant;

use kselect::density::{Bandwidth, DensityEstimate};
use kselect::io::ColumnVisitor;
use kselect::plot::{plot_cdf, plot_pdf, Histogram, PlotOptions};
use kselect::{Element, Error, NanPolicy, QuantileMethod, Result, Selector};

use crate::output::Num;
use crate::output_files::{write_replacing, FileKind};
use crate::summary::{Contents, Measured};

/// What to compute.
pub struct Request<'a> {
    pub selector: &'a Selector,
    pub nan_policy: NanPolicy,
    pub probs: &'a [f64],
    pub method: QuantileMethod,
    pub plots: Plots<'a>,
}

/// The plots asked for.
pub struct Plots<'a> {
    pub pdf: Option<&'a PathBuf>,
    pub cdf: Option<&'a PathBuf>,
    pub range: Option<(f64, f64)>,
    pub bins: usize,
    pub bandwidth: Option<f64>,
    /// What the values are: the column's name, or the file's.
    pub label: &'a str,
}

/// What was computed.
pub struct Outcome {
    /// The values of the file, the algorithm and its time.
    pub measured: Measured,
    /// The quantiles, one per probability.
    pub values: Vec<Num>,
    /// The Kolmogorov-Smirnov distance between the estimate and the data.
    pub ks_distance: f64,
}

impl ColumnVisitor for Request<'_> {
    type Output = Result<Outcome>;

    fn visit<T: Element>(self, data: &[T]) -> Result<Outcome> {
        let contents = Contents::of(data);
        let (n, nan_count) = (contents.n, contents.nan_count);
        let algorithm = self
            .selector
            .resolved_algorithm::<T>(n, 2 * self.probs.len())?
            .name()
            .to_string();

        let start = Instant::now();
        let quantiles = self.selector.quantiles(data, self.probs, self.method)?;
        let seconds = start.elapsed().as_secs_f64();

        if let Some(i) = quantiles.iter().position(|q| !q.is_finite()) {
            let (p, q) = (self.probs[i], quantiles[i]);
            let why = if q.is_nan() && nan_count > 0 && self.nan_policy == NanPolicy::Last {
                "NaN values are ordered last under --nan last; --nan omit leaves them out"
            } else if q.is_nan() {
                "it interpolates next to an infinite value, or between values more than \
                 f64::MAX apart, as numpy.quantile does; a discrete --method (lower, higher, \
                 nearest, inverted_cdf) or other --probs avoid that"
            } else {
                "the data holds infinite values; choose --probs whose quantiles are finite"
            };
            return Err(Error::InvalidArgument(format!(
                "the quantile at p = {p} is {q}: a distribution is estimated from finite \
                 quantiles only ({why})"
            )));
        }
        let estimate = DensityEstimate::new(self.probs, &quantiles)?;
        let ks_distance = estimate.ks_distance(data, self.nan_policy)?;
        self.plots
            .draw(data, &estimate, ks_distance, self.nan_policy)?;

        Ok(Outcome {
            measured: Measured {
                contents,
                algorithm,
                seconds,
            },
            values: quantiles.into_iter().map(Num::of_f64).collect(),
            ks_distance,
        })
    }
}

impl Plots<'_> {
    /// Draws the plots asked for.
    fn draw<T: Element>(
        &self,
        data: &[T],
        estimate: &DensityEstimate,
        ks_distance: f64,
        nan_policy: NanPolicy,
    ) -> Result<()> {
        if self.pdf.is_none() && self.cdf.is_none() {
            return Ok(());
        }
        let histogram = match self.range {
            Some((lo, hi)) => Histogram::new(data, lo, hi, self.bins, nan_policy)?,
            None => Histogram::over_support(data, estimate, self.bins, nan_policy)?,
        };
        let m = estimate.order_statistics();
        let options = PlotOptions {
            title: String::new(),
            x_label: self.label.to_string(),
            bandwidth: self
                .bandwidth
                .map_or(Bandwidth::default(), Bandwidth::Fixed),
            ..PlotOptions::default()
        };
        if let Some(path) = self.pdf {
            let options = PlotOptions {
                title: format!("{}: PDF estimated from {m} quantiles", self.label),
                ..options.clone()
            };
            write_replacing(path, FileKind::Plot, |path| {
                plot_pdf(path, estimate, &histogram, &options)
            })?;
        }
        if let Some(path) = self.cdf {
            let options = PlotOptions {
                title: format!(
                    "{}: CDF estimated from {m} quantiles (KS distance {:.4})",
                    self.label, ks_distance
                ),
                ..options
            };
            write_replacing(path, FileKind::Plot, |path| {
                plot_cdf(path, estimate, &histogram, &options)
            })?;
        }
        Ok(())
    }
}
