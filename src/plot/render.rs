//! Drawing a figure into a PNG or SVG file, whichever the file name asks for.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::density::DensityEstimate;
use crate::error::{Error, Result};

use super::font;
use super::format::ImageFormat;
use super::histogram::Histogram;
use super::sources::Sources;
use super::PlotOptions;

/// What drawing on the backend `DB` gives: `T`, or the backend's error.
pub(super) type Drawn<DB, T = ()> =
    std::result::Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A kind of figure (the PDF or the CDF) that can draw itself on any plotters backend.
pub(super) trait Figure {
    /// Draws the whole figure of `sources` on `root`.
    fn draw<DB: DrawingBackend>(sources: &Sources, root: &DrawingArea<DB, Shift>) -> Drawn<DB>;
}

/// Draws the figure `F` of `estimate` over `histogram` into `path` (PNG or SVG by its
/// extension) at the options' size.
pub(super) fn plot<F: Figure>(
    path: &Path,
    estimate: &DensityEstimate,
    histogram: &Histogram,
    options: &PlotOptions,
) -> Result<()> {
    let sources = Sources::new(estimate, histogram, options)?;
    let format = ImageFormat::from_path(path)?;
    options.validate()?;
    if !font::register() {
        return Err(plot_error(path, "the bundled font cannot be loaded"));
    }
    let size = (options.width, options.height);
    match format {
        ImageFormat::Png => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            F::draw(&sources, &root).map_err(|e| plot_error(path, e))?;
            root.present().map_err(|e| plot_error(path, e))
        }
        ImageFormat::Svg => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            F::draw(&sources, &root).map_err(|e| plot_error(path, e))?;
            root.present().map_err(|e| plot_error(path, e))
        }
    }
}

/// The `Error::Plot` of `path` with `message`.
fn plot_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Plot {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}
