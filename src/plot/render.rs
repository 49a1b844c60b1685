//! Drawing a figure into a PNG or SVG file, whichever the file name asks for.

use std::marker::PhantomData;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_backend::DrawingErrorKind;

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
    options.validate()?;
    render(
        path,
        (options.width, options.height),
        &Of::<F>(&sources, PhantomData),
    )
}

/// A drawing that can be made on any plotters backend.
pub(super) trait Drawing {
    /// Draws the whole picture on `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB>;
}

/// A [`Figure`] of its sources, as a [`Drawing`].
struct Of<'a, F>(&'a Sources<'a>, PhantomData<F>);

impl<F: Figure> Drawing for Of<'_, F> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        F::draw(self.0, root)
    }
}

/// Draws `drawing` into `path` (PNG or SVG by its extension) at `size` pixels.
pub(super) fn render(path: &Path, size: (u32, u32), drawing: &impl Drawing) -> Result<()> {
    let format = ImageFormat::from_path(path)?;
    if !font::register() {
        return Err(plot_error(path, "the bundled font cannot be loaded"));
    }
    match format {
        ImageFormat::Png => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            let png = |e| plot_error(path, described(e, bitmap_message));
            drawing.draw(&root).map_err(png)?;
            root.present().map_err(png)
        }
        ImageFormat::Svg => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            let svg = |e| plot_error(path, described(e, std::io::Error::to_string));
            drawing.draw(&root).map_err(svg)?;
            root.present().map_err(svg)
        }
    }
}

/// The error of the PNG backend.
type BitMapError = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

/// A plotters error as one sentence, the backend's own error described by `backend` (plotters
/// prints some of them in Rust's debug notation).
fn described<E: std::error::Error + Send + Sync>(
    e: DrawingAreaErrorKind<E>,
    backend: impl Fn(&E) -> String,
) -> String {
    match e {
        DrawingAreaErrorKind::BackendError(DrawingErrorKind::DrawingError(e)) => backend(&e),
        DrawingAreaErrorKind::BackendError(DrawingErrorKind::FontError(e)) => {
            format!("the font failed: {e}")
        }
        DrawingAreaErrorKind::SharingError => "the drawing area is in use".to_string(),
        DrawingAreaErrorKind::LayoutError => "the chart does not fit the image".to_string(),
    }
}

/// The PNG backend's error, without Rust's debug notation.
fn bitmap_message(e: &BitMapError) -> String {
    match e {
        BitMapError::IOError(e) => e.to_string(),
        // The image crate's text of an I/O error is the I/O error's.
        BitMapError::ImageError(e) => e.to_string(),
        BitMapError::InvalidBuffer => "the pixel buffer has the wrong size".to_string(),
    }
}

/// The `Error::Plot` of `path` with `message`.
fn plot_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Plot {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::density::DensityEstimate;
    use crate::plot::{plot_cdf, plot_pdf, Histogram, PlotOptions};
    use crate::NanPolicy;

    #[test]
    fn plot_io_error_is_one_sentence() {
        let est = DensityEstimate::new(&[0.0, 1.0], &[0.0, 1.0]).unwrap();
        let hist = Histogram::new(&[0.0, 0.5, 1.0], 0.0, 1.0, 4, NanPolicy::Error).unwrap();
        let options = PlotOptions::default();
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        for name in ["/nonexistent/x.png", "/nonexistent/x.svg"] {
            for result in [
                plot_pdf(name, &est, &hist, &options),
                plot_cdf(name, &est, &hist, &options),
            ] {
                let message = result.unwrap_err().to_string();
                assert!(
                    message.starts_with(&format!("cannot write the plot {name}: ")),
                    "{message}"
                );
                assert!(
                    !message.contains("Error") && !message.contains("Os {"),
                    "{message}"
                );
                #[cfg(unix)]
                assert!(
                    message.ends_with("(os error 2)"),
                    "{message}: not {missing}"
                );
            }
        }
    }
}
