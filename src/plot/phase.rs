//! The picture of a phase-transition experiment: the first algorithm's fraction of successes
//! in each cell, shaded, and every algorithm's 50% curve over it.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::density::DensityError;
use crate::error::Result;
use crate::recovery::PhaseDiagram;

use super::font::FAMILY;
use super::render::{render, Drawing, Drawn};

/// The curves' colours, one an algorithm, in turn.
const CURVES: [RGBColor; 6] = [
    RGBColor(200, 32, 32),
    RGBColor(20, 90, 200),
    RGBColor(20, 140, 60),
    RGBColor(150, 60, 170),
    RGBColor(220, 130, 20),
    RGBColor(60, 60, 60),
];
/// The shade of a cell where every trial succeeded.
const SUCCESS: RGBColor = RGBColor(150, 185, 225);

/// Draws `diagram` into `path` (`.png` or `.svg`): `delta = m / n` across, `rho = k / m` up,
/// the cells of the first algorithm shaded by their fraction of successes, the 50% curve of
/// each algorithm drawn over them with a legend. An error when the diagram has no algorithm
/// or the file cannot be written.
///
/// ```
/// use kselect::plot::plot_phase_diagram;
/// use kselect::recovery::{Algorithm, Ensemble, PhaseTransition};
/// let diagram = PhaseTransition::new(Ensemble::Gaussian, 48)
///     .deltas(vec![0.25, 0.5, 0.75]).rhos(vec![0.1, 0.3, 0.5, 0.7]).trials(2)
///     .algorithms(vec![Algorithm::Niht, Algorithm::Htp]).run::<f64>(&|_, _| {})?;
/// let dir = tempfile::tempdir().unwrap();
/// plot_phase_diagram(dir.path().join("phase.png"), &diagram)?;
/// # Ok::<(), kselect::Error>(())
/// ```
pub fn plot_phase_diagram(path: impl AsRef<Path>, diagram: &PhaseDiagram) -> Result<()> {
    if diagram.algorithms.is_empty() {
        return Err(DensityError::EmptyPhaseDiagram.into());
    }
    render(path.as_ref(), (900, 760), &Phase(diagram))
}

struct Phase<'a>(&'a PhaseDiagram);

impl Drawing for Phase<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let d = self.0;
        root.fill(&WHITE)?;
        let title = format!(
            "Phase transitions: {} operators, n = {}, {} nonzeros, {} trials a cell ({})",
            d.ensemble, d.n, d.signal, d.trials, d.dtype
        );
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FAMILY, 20))
            .margin(18)
            .x_label_area_size(55)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
        chart
            .configure_mesh()
            .x_desc("delta = m / n")
            .y_desc("rho = k / m")
            .x_labels(11)
            .y_labels(11)
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        // The first algorithm's cells, each over half the gaps to its neighbours.
        let first = &d.algorithms[0];
        let edges = |values: &[f64], i: usize| {
            let low = if i == 0 {
                values[0] - (values.get(1).map_or(0.05, |v| v - values[0])) / 2.0
            } else {
                (values[i - 1] + values[i]) / 2.0
            };
            let high = if i + 1 == values.len() {
                values[i]
                    + (values[i]
                        - if i > 0 {
                            values[i - 1]
                        } else {
                            values[i] - 0.1
                        })
                        / 2.0
            } else {
                (values[i] + values[i + 1]) / 2.0
            };
            (low.max(0.0), high.min(1.0))
        };
        let rhos = d.rhos.len();
        chart
            .draw_series(first.cells.iter().enumerate().map(|(c, cell)| {
                let (x0, x1) = edges(&d.deltas, c / rhos);
                let (y0, y1) = edges(&d.rhos, c % rhos);
                let f = cell.fraction();
                let shade = |full: u8| (255.0 - f * (255.0 - full as f64)).round() as u8;
                let color = RGBColor(shade(SUCCESS.0), shade(SUCCESS.1), shade(SUCCESS.2));
                Rectangle::new([(x0, y0), (x1, y1)], color.filled())
            }))?
            .label(format!("{}: fraction recovered (shaded)", first.algorithm))
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], SUCCESS.filled()));
        for (a, algorithm) in d.algorithms.iter().enumerate() {
            let color = CURVES[a % CURVES.len()];
            let points: Vec<(f64, f64)> = algorithm
                .curve
                .iter()
                .map(|p| (p.delta, p.rho.clamp(0.0, 1.0)))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(3)))?
                .label(format!("{}: 50% recovery", algorithm.algorithm))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3))
                });
            chart.draw_series(
                points
                    .into_iter()
                    .map(move |p| Circle::new(p, 4, color.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .margin(12)
            .label_font((FAMILY, 15))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(160, 160, 160))
            .draw()
    }
}
