//! What the PDF and CDF figures share: colours, fonts, the frame of axes, the series of the
//! histogram and of lines, and the legend.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::font::FAMILY;
use super::histogram::Histogram;
use super::labels::count;
use super::render::Drawn;
use super::scale::Scale;
use super::sources::Sources;

/// The histogram bars.
const HISTOGRAM: RGBColor = RGBColor(171, 196, 222);
/// The estimate from the order statistics.
pub(super) const ESTIMATE: RGBColor = RGBColor(200, 32, 32);
/// Point masses.
pub(super) const POINT_MASS: RGBColor = RGBColor(120, 20, 120);
/// The smoothed estimate.
pub(super) const SMOOTHED: RGBColor = RGBColor(20, 120, 50);

/// The number of points at which smooth curves are evaluated.
const CURVE_POINTS: usize = 1500;

/// A chart with `f64` axes.
pub(super) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The white background, the title, the axes with their descriptions and a light grid: x over
/// the histogram's range, y from 0 to `top`, described as `y_desc`. The tick labels show the
/// data's values: x coordinates scaled by the sources' scale, y coordinates by `y_scale`.
pub(super) fn frame<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    sources: &Sources,
    top: f64,
    y_desc: &str,
    y_scale: Scale,
) -> Drawn<DB, Chart<'a, DB>> {
    let options = sources.options;
    let x = sources.histogram.range();
    let y = (0.0, top);
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(&options.title, (FAMILY, 24))
        .margin(18)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)?;
    let x_step = (x.1 - x.0) / 12.0;
    let y_step = (y.1 - y.0) / 10.0;
    let x_scale = sources.scale;
    let x_format = move |v: &f64| x_scale.label(*v, x_step);
    let y_format = move |v: &f64| y_scale.label(*v, y_step);
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

/// The bars of `histogram`, one a bin at the height in `heights`, as a series whose legend
/// entry is `description` followed by the numbers of values and bins.
pub(super) fn histogram<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    histogram: &Histogram,
    heights: &[f64],
    description: &str,
) -> Drawn<DB> {
    chart
        .draw_series((0..histogram.bins()).map(|i| {
            let (a, b) = histogram.edges(i);
            Rectangle::new([(a, 0.0), (b, heights[i])], HISTOGRAM.filled())
        }))?
        .label(format!(
            "{description} ({}, {})",
            count(histogram.total(), "value"),
            count(histogram.bins() as u64, "bin")
        ))
        .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], HISTOGRAM.filled()));
    Ok(())
}

/// `points` joined by a line of `color`, as a series whose legend entry is `label`.
pub(super) fn line<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    label: String,
) -> Drawn<DB> {
    chart
        .draw_series(LineSeries::new(points, color.stroke_width(2)))?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    Ok(())
}

/// The legend box at `position`.
pub(super) fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    position: SeriesLabelPosition,
) -> Drawn<DB> {
    chart
        .configure_series_labels()
        .position(position)
        .margin(12)
        .label_font((FAMILY, 15))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .draw()
}

/// The points `(x, f(x))` of a smooth curve over `[lo, hi]`, at evenly spaced `x` with both
/// ends included.
pub(super) fn curve(lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
    grid(lo, hi, CURVE_POINTS).map(|x| (x, f(x))).collect()
}

/// `n` evenly spaced points from `lo` to `hi`, both included.
fn grid(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    let step = (hi - lo) / (n - 1) as f64;
    (0..n).map(move |i| if i + 1 == n { hi } else { lo + step * i as f64 })
}
