//! What the PDF and CDF figures share: colours, fonts, the frame of axes and the legend.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::font::FAMILY;
use super::labels::tick;
use super::PlotOptions;

/// The histogram bars.
pub(super) const HISTOGRAM: RGBColor = RGBColor(171, 196, 222);
/// The estimate from the order statistics.
pub(super) const ESTIMATE: RGBColor = RGBColor(200, 32, 32);
/// Point masses.
pub(super) const POINT_MASS: RGBColor = RGBColor(120, 20, 120);
/// The smoothed estimate.
pub(super) const SMOOTHED: RGBColor = RGBColor(20, 120, 50);

/// The number of points at which smooth curves are evaluated.
pub(super) const CURVE_POINTS: usize = 1500;

/// A chart with `f64` axes.
pub(super) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The white background, the title, the axes with their descriptions and a light grid.
pub(super) fn frame<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    options: &PlotOptions,
    x: (f64, f64),
    y: (f64, f64),
    y_desc: &str,
) -> Result<Chart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(&options.title, (FAMILY, 24))
        .margin(18)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)?;
    let x_step = (x.1 - x.0) / 12.0;
    let y_step = (y.1 - y.0) / 10.0;
    let x_format = move |v: &f64| tick(*v, x_step);
    let y_format = move |v: &f64| tick(*v, y_step);
    chart
        .configure_mesh()
        .x_desc(&options.x_label)
        .y_desc(y_desc)
        .x_labels(12)
        .y_labels(10)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .bold_line_style(RGBColor(222, 222, 222))
        .light_line_style(RGBColor(244, 244, 244))
        .draw()?;
    Ok(chart)
}

/// The legend box at `position`.
pub(super) fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    position: SeriesLabelPosition,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    chart
        .configure_series_labels()
        .position(position)
        .margin(12)
        .label_font((FAMILY, 15))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .draw()
}

/// `n` evenly spaced points from `lo` to `hi`, both included.
pub(super) fn grid(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    let step = (hi - lo) / (n - 1) as f64;
    (0..n).map(move |i| if i + 1 == n { hi } else { lo + step * i as f64 })
}
