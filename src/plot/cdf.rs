//! The CDF figure: the estimated CDF over the cumulative histogram of the data.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::density::{DensityEstimate, SmoothedDensity};
use crate::error::Result;

use super::chart::{self, frame, grid, legend, ESTIMATE, HISTOGRAM, SMOOTHED};
use super::histogram::Histogram;
use super::labels::{count, kernels};
use super::render::{render, Figure};
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
    let smoothed = options.smoothed_estimate(estimate)?;
    let figure = CdfFigure {
        estimate,
        histogram,
        smoothed,
        options,
    };
    render(path.as_ref(), options, &figure)
}

struct CdfFigure<'a> {
    estimate: &'a DensityEstimate,
    histogram: &'a Histogram,
    smoothed: Option<SmoothedDensity>,
    options: &'a PlotOptions,
}

impl CdfFigure<'_> {
    /// The line of the piecewise-linear CDF over `[lo, hi]`, vertical at its jumps.
    fn line(&self, lo: f64, hi: f64) -> Vec<(f64, f64)> {
        let est = self.estimate;
        let mut line = vec![(lo, est.cdf_left(lo)), (lo, est.cdf(lo))];
        let mut values: Vec<f64> = est
            .values()
            .iter()
            .copied()
            .filter(|&v| lo < v && v < hi)
            .collect();
        values.dedup();
        for v in values {
            line.push((v, est.cdf_left(v)));
            line.push((v, est.cdf(v)));
        }
        line.push((hi, est.cdf_left(hi)));
        line.push((hi, est.cdf(hi)));
        line
    }
}

impl Figure for CdfFigure<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let hist = self.histogram;
        let (lo, hi) = hist.range();
        let cumulative = hist.cumulative();
        let mut chart = frame(
            root,
            self.options,
            (lo, hi),
            (0.0, 1.04),
            "cumulative probability",
        )?;
        chart
            .draw_series((0..hist.bins()).map(|i| {
                let (a, b) = hist.edges(i);
                Rectangle::new([(a, 0.0), (b, cumulative[i])], HISTOGRAM.filled())
            }))?
            .label(format!(
                "cumulative histogram of the data ({}, {})",
                count(hist.total(), "value"),
                count(hist.bins() as u64, "bin")
            ))
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], HISTOGRAM.filled()));
        chart
            .draw_series(LineSeries::new(self.line(lo, hi), ESTIMATE.stroke_width(2)))?
            .label(format!(
                "CDF from {} order statistics (piecewise linear)",
                self.estimate.order_statistics()
            ))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], ESTIMATE.stroke_width(2)));
        if let Some(s) = &self.smoothed {
            let curve: Vec<(f64, f64)> = grid(lo, hi, chart::CURVE_POINTS)
                .map(|x| (x, s.cdf(x)))
                .collect();
            chart
                .draw_series(LineSeries::new(curve, SMOOTHED.stroke_width(2)))?
                .label(format!("smoothed CDF ({})", kernels(s)))
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], SMOOTHED.stroke_width(2))
                });
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    }
}
