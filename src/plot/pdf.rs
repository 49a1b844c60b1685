//! The PDF figure: the estimated PDF over the normalized histogram of the data.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::density::{DensityEstimate, SmoothedDensity};
use crate::error::Result;

use super::chart::{self, frame, grid, legend, ESTIMATE, HISTOGRAM, POINT_MASS, SMOOTHED};
use super::histogram::Histogram;
use super::labels::{count, kernels};
use super::render::{render, Figure};
use super::PlotOptions;

/// Draws the estimated PDF over the normalized histogram into `path` (`.png` or `.svg`), as in
/// Blanchard et al.'s Fig. 5(a).
///
/// The figure shows, over the histogram's range: the histogram normalized to a density
/// (`count / (total · bin width)`); the piecewise-constant PDF of the estimate; its point
/// masses as stems of height `probability / bin width` (the height their probability adds to
/// the histogram bar it falls in); and, unless `options.smoothed` is false, the smoothed PDF
/// (biweight kernels of `options.bandwidth`).
///
/// Errors with `Error::InvalidArgument` for a file name that does not end in `.png` or `.svg`
/// or bad options, and `Error::Plot` when drawing or writing the file fails.
///
/// ```
/// use kselect::density::DensityEstimate;
/// use kselect::plot::{plot_pdf, Histogram, PlotOptions};
/// use kselect::{NanPolicy, QuantileMethod, Selector};
///
/// let data: Vec<f64> = (0..10_000).map(|i| ((i * 7919) % 10_000) as f64 / 100.0).collect();
/// let probs: Vec<f64> = (0..=20).map(|i| i as f64 / 20.0).collect();
/// let est = DensityEstimate::from_data(&Selector::new(), &data, &probs, QuantileMethod::Linear)?;
/// let hist = Histogram::over_support(&data, &est, 50, NanPolicy::Error)?;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("pdf.svg");
/// plot_pdf(&path, &est, &hist, &PlotOptions { title: "Uniform data".into(), ..PlotOptions::default() })?;
/// assert!(std::fs::read_to_string(&path).unwrap().contains("Uniform data"));
/// # Ok::<(), kselect::Error>(())
/// ```
pub fn plot_pdf(
    path: impl AsRef<Path>,
    estimate: &DensityEstimate,
    histogram: &Histogram,
    options: &PlotOptions,
) -> Result<()> {
    let smoothed = options.smoothed_estimate(estimate)?;
    let figure = PdfFigure {
        estimate,
        histogram,
        smoothed,
        options,
    };
    render(path.as_ref(), options, &figure)
}

struct PdfFigure<'a> {
    estimate: &'a DensityEstimate,
    histogram: &'a Histogram,
    smoothed: Option<SmoothedDensity>,
    options: &'a PlotOptions,
}

impl PdfFigure<'_> {
    /// The step line of the piecewise-constant PDF over `[lo, hi]`.
    fn steps(&self, lo: f64, hi: f64) -> Vec<(f64, f64)> {
        let mut breaks: Vec<f64> = vec![lo];
        breaks.extend(self.estimate.values().iter().filter(|&&v| lo < v && v < hi));
        breaks.push(hi);
        breaks.dedup();
        let mut line = Vec::with_capacity(2 * breaks.len());
        for w in breaks.windows(2) {
            let density = self.estimate.pdf(w[0] * 0.5 + w[1] * 0.5);
            line.push((w[0], density));
            line.push((w[1], density));
        }
        line
    }
}

impl Figure for PdfFigure<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let hist = self.histogram;
        let (lo, hi) = hist.range();
        let densities = hist.densities();
        let bars: Vec<(f64, f64, f64)> = (0..hist.bins())
            .map(|i| {
                let (a, b) = hist.edges(i);
                (a, b, densities[i])
            })
            .collect();
        let steps = self.steps(lo, hi);
        let width = hist.bin_width();
        let masses: Vec<(f64, f64)> = self
            .estimate
            .point_masses()
            .into_iter()
            .filter(|&(x, _)| lo <= x && x <= hi)
            .map(|(x, mass)| (x, mass / width))
            .collect();
        let curve: Option<Vec<(f64, f64)>> = self.smoothed.as_ref().map(|s| {
            grid(lo, hi, chart::CURVE_POINTS)
                .map(|x| (x, s.pdf(x)))
                .collect()
        });

        let top = bars
            .iter()
            .map(|b| b.2)
            .chain(steps.iter().map(|p| p.1))
            .chain(masses.iter().map(|p| p.1))
            .chain(curve.iter().flatten().map(|p| p.1))
            .filter(|y| y.is_finite())
            .fold(0.0, f64::max);
        let top = if top > 0.0 { top * 1.12 } else { 1.0 };

        let mut chart = frame(
            root,
            self.options,
            (lo, hi),
            (0.0, top),
            "probability density",
        )?;
        chart
            .draw_series(
                bars.iter()
                    .map(|&(a, b, h)| Rectangle::new([(a, 0.0), (b, h)], HISTOGRAM.filled())),
            )?
            .label(format!(
                "histogram of the data, normalized ({}, {})",
                count(hist.total(), "value"),
                count(hist.bins() as u64, "bin")
            ))
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], HISTOGRAM.filled()));
        chart
            .draw_series(LineSeries::new(steps, ESTIMATE.stroke_width(2)))?
            .label(format!(
                "PDF from {} order statistics (piecewise constant)",
                self.estimate.order_statistics()
            ))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], ESTIMATE.stroke_width(2)));
        if !masses.is_empty() {
            chart.draw_series(masses.iter().map(|&(x, h)| {
                PathElement::new(vec![(x, 0.0), (x, h)], POINT_MASS.stroke_width(2))
            }))?;
            chart
                .draw_series(
                    masses
                        .iter()
                        .map(|&(x, h)| Circle::new((x, h), 4, POINT_MASS.filled())),
                )?
                .label(format!(
                    "{} point mass{} (probability / bin width)",
                    masses.len(),
                    if masses.len() == 1 { "" } else { "es" }
                ))
                .legend(|(x, y)| Circle::new((x + 10, y), 4, POINT_MASS.filled()));
        }
        if let (Some(curve), Some(s)) = (curve, &self.smoothed) {
            chart
                .draw_series(LineSeries::new(curve, SMOOTHED.stroke_width(2)))?
                .label(format!("smoothed PDF ({})", kernels(s)))
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], SMOOTHED.stroke_width(2))
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}
