//! Drawing a figure into a PNG or SVG file, whichever the file name asks for.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{Error, Result};

use super::font;
use super::format::ImageFormat;
use super::PlotOptions;

/// A figure that can draw itself on any plotters backend.
pub(super) trait Figure {
    /// Draws the whole figure on `root`.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>>;
}

/// Draws `figure` into `path` (PNG or SVG by its extension) at the options' size.
pub(super) fn render<F: Figure>(path: &Path, options: &PlotOptions, figure: &F) -> Result<()> {
    let format = ImageFormat::from_path(path)?;
    options.validate()?;
    if !font::register() {
        return Err(plot_error(path, "the bundled font cannot be loaded"));
    }
    let size = (options.width, options.height);
    match format {
        ImageFormat::Png => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            figure.draw(&root).map_err(|e| plot_error(path, e))?;
            root.present().map_err(|e| plot_error(path, e))
        }
        ImageFormat::Svg => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            figure.draw(&root).map_err(|e| plot_error(path, e))?;
            root.present().map_err(|e| plot_error(path, e))
        }
    }
}

fn plot_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Plot {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}
