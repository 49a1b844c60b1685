//! The PDF figure: the estimated PDF over the normalized histogram of the data.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::density::DensityEstimate;
use crate::error::Result;

use super::chart::{curve, frame, histogram, legend, line, Chart, ESTIMATE, POINT_MASS, SMOOTHED};
use super::histogram::Histogram;
use super::labels::kernels;
use super::render::{plot, Drawn, Figure};
use super::sources::Sources;
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
/// Errors with `Error::Density` for a file name that does not end in `.png` or `.svg` or bad
/// options, and `Error::Plot` when drawing or writing the file fails.
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
    plot::<PdfFigure>(path.as_ref(), estimate, histogram, options)
}

/// The figure [`plot_pdf`] draws.
struct PdfFigure;

impl Figure for PdfFigure {
    fn draw<DB: DrawingBackend>(sources: &Sources, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let hist = &*sources.histogram;
        let (lo, hi) = hist.range();
        let densities = hist.densities();
        let steps = pdf_steps(&sources.estimate, lo, hi);
        let width = hist.bin_width();
        let masses: Vec<(f64, f64)> = sources
            .estimate
            .point_masses()
            .into_iter()
            .filter(|&(x, _)| lo <= x && x <= hi)
            .map(|(x, mass)| (x, mass / width))
            .collect();
        let smoothed_curve = sources
            .smoothed
            .as_ref()
            .map(|s| curve(lo, hi, |x| s.pdf(x)));

        let top = densities
            .iter()
            .copied()
            .chain(steps.iter().map(|p| p.1))
            .chain(masses.iter().map(|p| p.1))
            .chain(smoothed_curve.iter().flatten().map(|p| p.1))
            .filter(|y| y.is_finite())
            .fold(0.0, f64::max);
        let top = if top > 0.0 { top * 1.12 } else { 1.0 };

        let y_scale = sources.scale.of_density();
        let mut chart = frame(root, sources, top, "probability density", y_scale)?;
        histogram(
            &mut chart,
            hist,
            &densities,
            "histogram of the data, normalized",
        )?;
        let order_statistics = sources.estimate.order_statistics();
        let label = format!("PDF from {order_statistics} order statistics (piecewise constant)");
        line(&mut chart, steps, ESTIMATE, label)?;
        if !masses.is_empty() {
            point_masses(&mut chart, &masses)?;
        }
        if let Some(points) = smoothed_curve {
            let label = format!("smoothed PDF ({})", kernels(sources.options.bandwidth));
            line(&mut chart, points, SMOOTHED, label)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}

/// The step line of the piecewise-constant PDF of `estimate` over `[lo, hi]`.
fn pdf_steps(estimate: &DensityEstimate, lo: f64, hi: f64) -> Vec<(f64, f64)> {
    let mut breaks: Vec<f64> = vec![lo];
    breaks.extend(estimate.values().iter().filter(|&&v| lo < v && v < hi));
    breaks.push(hi);
    breaks.dedup();
    let mut line = Vec::with_capacity(2 * breaks.len());
    for w in breaks.windows(2) {
        let density = estimate.pdf(w[0] * 0.5 + w[1] * 0.5);
        line.push((w[0], density));
        line.push((w[1], density));
    }
    line
}

/// The point masses `(x, height)` as stems topped by dots, with one legend entry for all.
fn point_masses<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    masses: &[(f64, f64)],
) -> Drawn<DB> {
    chart.draw_series(
        masses
            .iter()
            .map(|&(x, h)| PathElement::new(vec![(x, 0.0), (x, h)], POINT_MASS.stroke_width(2))),
    )?;
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
    Ok(())
}
