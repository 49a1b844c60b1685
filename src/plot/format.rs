//! The image formats, chosen by the file name's extension.

use std::path::Path;

use crate::density::DensityError;
use crate::error::Result;

/// The image format of a plot file.
///
/// ```
/// use kselect::plot::ImageFormat;
/// use std::path::Path;
/// assert_eq!(ImageFormat::from_path(Path::new("pdf.png")).unwrap(), ImageFormat::Png);
/// assert_eq!(ImageFormat::from_path(Path::new("out/CDF.SVG")).unwrap(), ImageFormat::Svg);
/// assert!(ImageFormat::from_path(Path::new("plot.jpg")).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    /// A PNG bitmap (`.png`).
    Png,
    /// An SVG drawing (`.svg`): text stays text.
    Svg,
}

impl ImageFormat {
    /// The format named by `path`'s extension, `.png` or `.svg` (any case); any other is an
    /// `Error::Density` ([`DensityError::ImageExtension`]).
    ///
    /// ```
    /// use kselect::plot::ImageFormat;
    /// assert!(ImageFormat::from_path(std::path::Path::new("no-extension")).is_err());
    /// ```
    pub fn from_path(path: &Path) -> Result<Self> {
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("png") => Ok(ImageFormat::Png),
            Some("svg") => Ok(ImageFormat::Svg),
            _ => Err(DensityError::ImageExtension {
                path: path.to_path_buf(),
            }
            .into()),
        }
    }

    /// The extension, `"png"` or `"svg"`.
    ///
    /// ```
    /// assert_eq!(kselect::plot::ImageFormat::Svg.extension(), "svg");
    /// ```
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Svg => "svg",
        }
    }
}
