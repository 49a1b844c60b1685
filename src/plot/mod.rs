//! Plots of estimated distributions over histograms of the data, as PNG or SVG files.
//!
//! Blanchard et al. (2016, Fig. 5) draw the PDF and the CDF estimated from order statistics
//! over a normalized histogram and a cumulative histogram of the data. [`plot_pdf`] and
//! [`plot_cdf`] draw the same figures for a [`DensityEstimate`](crate::density::DensityEstimate)
//! and a [`Histogram`], into a `.png` or `.svg` file (chosen by the extension). All text is
//! drawn with the font bundled in the library (DejaVu Sans, see [`font`]), so plotting needs
//! no fonts on the machine. Data at the ends of the `f64` range (near ±1.7e308, whose range is
//! wider than `f64::MAX`, or subnormal numbers, whose densities exceed it) are drawn in
//! coordinates scaled by a power of two, with tick labels that show the data's own values.
//! Failures to write the file are `Error::Plot`, one sentence that names the file.
//!
//! ```
//! use kselect::density::DensityEstimate;
//! use kselect::plot::{plot_cdf, plot_pdf, Histogram, PlotOptions};
//! use kselect::{NanPolicy, QuantileMethod, Selector};
//!
//! // A skewed sample: squares of evenly spread numbers.
//! let data: Vec<f32> = (0..50_000).map(|i| (((i * 7919) % 50_000) as f32 / 50_000.0).powi(2)).collect();
//! let probs: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).collect(); // the percentiles
//! let est = DensityEstimate::from_data(&Selector::new(), &data, &probs, QuantileMethod::Linear)?;
//! let hist = Histogram::new(&data, 0.0, 1.0, 100, NanPolicy::Error)?;
//! let options = PlotOptions {
//!     title: "Squares of uniform values".to_string(),
//!     x_label: "x".to_string(),
//!     ..PlotOptions::default()
//! };
//! let dir = tempfile::tempdir().unwrap();
//! plot_pdf(dir.path().join("pdf.png"), &est, &hist, &options)?;
//! plot_cdf(dir.path().join("cdf.svg"), &est, &hist, &options)?;
//! # Ok::<(), kselect::Error>(())
//! ```

mod cdf;
mod chart;
pub mod font;
mod format;
mod histogram;
mod labels;
mod pdf;
mod phase;
mod render;
mod scale;
mod sources;

pub use cdf::plot_cdf;
pub use format::ImageFormat;
pub use histogram::{Histogram, MAX_BINS};
pub use pdf::plot_pdf;
pub use phase::plot_phase_diagram;

use crate::density::{Bandwidth, DensityError};
use crate::error::Result;

/// What a plot shows besides the data and the estimate: title, axis label, size and the
/// smoothed curve.
///
/// ```
/// use kselect::plot::PlotOptions;
/// use kselect::density::Bandwidth;
/// let options = PlotOptions { title: "Delays".into(), bandwidth: Bandwidth::Fixed(2.0), ..PlotOptions::default() };
/// assert_eq!((options.width, options.height), (1000, 600));
/// assert!(options.smoothed);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PlotOptions {
    /// The title above the chart.
    pub title: String,
    /// The description of the x axis (the quantity plotted).
    pub x_label: String,
    /// The image width in pixels, 200 to 8000.
    pub width: u32,
    /// The image height in pixels, 150 to 8000.
    pub height: u32,
    /// Whether to draw the smoothed estimate too.
    pub smoothed: bool,
    /// The bandwidth of the smoothing kernels.
    pub bandwidth: Bandwidth,
}

impl Default for PlotOptions {
    /// A 1000 × 600 image with the smoothed estimate at the default (local) bandwidth.
    ///
    /// ```
    /// let options = kselect::plot::PlotOptions::default();
    /// assert_eq!(options.x_label, "value");
    /// assert_eq!(options.bandwidth, kselect::density::Bandwidth::Local(1.5));
    /// ```
    fn default() -> Self {
        PlotOptions {
            title: "Distribution estimated from order statistics".to_string(),
            x_label: "value".to_string(),
            width: 1000,
            height: 600,
            smoothed: true,
            bandwidth: Bandwidth::default(),
        }
    }
}

impl PlotOptions {
    /// Checks the size (`Error::Density`, [`DensityError::PlotSize`], when out of range).
    ///
    /// ```
    /// use kselect::plot::PlotOptions;
    /// assert!(PlotOptions::default().validate().is_ok());
    /// assert!(PlotOptions { width: 10, ..PlotOptions::default() }.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        if !(200..=8000).contains(&self.width) || !(150..=8000).contains(&self.height) {
            return Err(DensityError::PlotSize {
                width: self.width,
                height: self.height,
            }
            .into());
        }
        Ok(())
    }
}
