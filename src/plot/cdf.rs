//! The CDF figure: the estimated CDF over the cumulative histogram of the data.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::density::DensityEstimate;
use crate::error::Result;

use super::chart::{curve, frame, histogram, legend, line, ESTIMATE, SMOOTHED};
use super::histogram::Histogram;
use super::labels::kernels;
use super::render::{plot, Drawn, Figure};
use super::scale::Scale;
use super::sources::Sources;
use super::PlotOptions;

/// Draws the estimated CDF over the cumulative normalized histogram into `path` (`.png` or
/// `.svg`), as in Blanchard et al.'s Fig. 5(b).
///
/// The figure shows, over the histogram's range: for each bin the fraction of the values at
/// or below its right edge; the piecewise-linear CDF of the estimate, with its jumps at point
/// masses; and, unless `options.smoothed` is false, the smoothed CDF.
///
/// Errors as [`plot_pdf`](super::plot_pdf) does.
///
/// ```
/// use kselect::density::DensityEstimate;
/// use kselect::plot::{plot_cdf, Histogram, PlotOptions};
/// use kselect::NanPolicy;
///
/// let data = [1, 2, 2, 3, 3, 3, 4, 4, 5, 9];
/// let est = DensityEstimate::new(&[0.0, 0.25, 0.5, 0.75, 1.0], &[1.0, 2.25, 3.0, 4.0, 9.0])?;
/// let hist = Histogram::over_support(&data, &est, 100, NanPolicy::Error)?;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("cdf.png");
/// plot_cdf(&path, &est, &hist, &PlotOptions { width: 640, height: 400, ..PlotOptions::default() })?;
/// assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
/// # Ok::<(), kselect::Error>(())
/// ```
pub fn plot_cdf(
    path: impl AsRef<Path>,
    estimate: &DensityEstimate,
    histogram: &Histogram,
    options: &PlotOptions,
) -> Result<()> {
    plot::<CdfFigure>(path.as_ref(), estimate, histogram, options)
}

/// The figure [`plot_cdf`] draws.
struct CdfFigure;

impl Figure for CdfFigure {
    fn draw<DB: DrawingBackend>(sources: &Sources, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let hist = &*sources.histogram;
        let (lo, hi) = hist.range();
        let mut chart = frame(root, sources, 1.04, "cumulative probability", Scale::ONE)?;
        histogram(
            &mut chart,
            hist,
            &hist.cumulative(),
            "cumulative histogram of the data",
        )?;
        let order_statistics = sources.estimate.order_statistics();
        let estimate = cdf_line(&sources.estimate, lo, hi);
        let label = format!("CDF from {order_statistics} order statistics (piecewise linear)");
        line(&mut chart, estimate, ESTIMATE, label)?;
        if let Some(s) = &sources.smoothed {
            let label = format!("smoothed CDF ({})", kernels(sources.options.bandwidth));
            line(&mut chart, curve(lo, hi, |x| s.cdf(x)), SMOOTHED, label)?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    }
}

/// The line of the piecewise-linear CDF of `estimate` over `[lo, hi]`, vertical at its jumps.
fn cdf_line(estimate: &DensityEstimate, lo: f64, hi: f64) -> Vec<(f64, f64)> {
    let mut line = vec![(lo, estimate.cdf_left(lo)), (lo, estimate.cdf(lo))];
    let mut values: Vec<f64> = estimate
        .values()
        .iter()
        .copied()
        .filter(|&v| lo < v && v < hi)
        .collect();
    values.dedup();
    for v in values {
        line.push((v, estimate.cdf_left(v)));
        line.push((v, estimate.cdf(v)));
    }
    line.push((hi, estimate.cdf_left(hi)));
    line.push((hi, estimate.cdf(hi)));
    line
}
