//! What a figure is drawn from: the estimate, the histogram of the data and the options.

use crate::density::{DensityEstimate, SmoothedDensity};
use crate::error::Result;

use super::histogram::Histogram;
use super::PlotOptions;

/// The estimate, the histogram of the data and the options that a figure is drawn from, with
/// the smoothed estimate that the options ask for.
pub(super) struct Sources<'a> {
    /// The estimate from the order statistics.
    pub(super) estimate: &'a DensityEstimate,
    /// The histogram of the data; its range is the figure's x range.
    pub(super) histogram: &'a Histogram,
    /// The smoothed estimate, unless the options leave it out.
    pub(super) smoothed: Option<SmoothedDensity>,
    /// The title, the description of the x axis and the size.
    pub(super) options: &'a PlotOptions,
}

impl<'a> Sources<'a> {
    /// Gathers what a figure is drawn from, smoothing the estimate if the options ask for it
    /// (an error when they ask for a bandwidth the estimate cannot be smoothed with).
    pub(super) fn new(
        estimate: &'a DensityEstimate,
        histogram: &'a Histogram,
        options: &'a PlotOptions,
    ) -> Result<Self> {
        Ok(Sources {
            estimate,
            histogram,
            smoothed: options.smoothed_estimate(estimate)?,
            options,
        })
    }
}
