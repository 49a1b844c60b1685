//! What a figure is drawn from: the estimate, the histogram of the data and the options, in
//! the figure's coordinates.

use std::borrow::Cow;

use crate::density::{Bandwidth, DensityError, DensityEstimate, SmoothedDensity};
use crate::error::Result;

use super::histogram::Histogram;
use super::scale::Scale;
use super::PlotOptions;

/// The estimate, the histogram of the data and the options that a figure is drawn from, with
/// the smoothed estimate that the options ask for. The estimate and the histogram are in the
/// figure's coordinates: the data's own, or multiplied by `scale` for data at the ends of the
/// `f64` range.
pub(super) struct Sources<'a> {
    /// The estimate from the order statistics.
    pub(super) estimate: Cow<'a, DensityEstimate>,
    /// The histogram of the data; its range is the figure's x range.
    pub(super) histogram: Cow<'a, Histogram>,
    /// The smoothed estimate, unless the options leave it out.
    pub(super) smoothed: Option<SmoothedDensity>,
    /// The title, the description of the x axis and the size.
    pub(super) options: &'a PlotOptions,
    /// What the data's x coordinates are multiplied by.
    pub(super) scale: Scale,
}

impl<'a> Sources<'a> {
    /// Gathers what a figure is drawn from, smoothing the estimate if the options ask for it
    /// (an error when they ask for a bandwidth the estimate cannot be smoothed with).
    pub(super) fn new(
        estimate: &'a DensityEstimate,
        histogram: &'a Histogram,
        options: &'a PlotOptions,
    ) -> Result<Self> {
        let (lo, hi) = histogram.range();
        let scale = Scale::for_range(lo, hi);
        let (estimate, histogram, bandwidth) = if scale == Scale::ONE {
            (
                Cow::Borrowed(estimate),
                Cow::Borrowed(histogram),
                options.bandwidth,
            )
        } else {
            (
                Cow::Owned(scaled_estimate(estimate, scale, (lo, hi))?),
                Cow::Owned(histogram.scaled(scale)),
                scaled_bandwidth(options.bandwidth, scale),
            )
        };
        let smoothed = if options.smoothed {
            Some(estimate.smoothed(bandwidth)?)
        } else {
            None
        };
        Ok(Sources {
            estimate,
            histogram,
            smoothed,
            options,
            scale,
        })
    }
}

/// `estimate` with its values multiplied by `scale`; an error when one of them is then beyond
/// `f64` (data far outside a narrow `range`).
fn scaled_estimate(
    estimate: &DensityEstimate,
    scale: Scale,
    range: (f64, f64),
) -> Result<DensityEstimate> {
    let values: Vec<f64> = estimate.values().iter().map(|&v| scale.apply(v)).collect();
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(DensityError::RangeTooNarrow {
            lo: range.0,
            hi: range.1,
            value: estimate.values()[i],
        }
        .into());
    }
    DensityEstimate::new(estimate.probs(), &values)
}

/// `bandwidth` in the scaled coordinates: a fixed half-width scaled (within the finite
/// numbers), a factor of the local spacing as it is.
fn scaled_bandwidth(bandwidth: Bandwidth, scale: Scale) -> Bandwidth {
    match bandwidth {
        Bandwidth::Fixed(h) => Bandwidth::Fixed(scale.apply(h).clamp(f64::MIN_POSITIVE, f64::MAX)),
        local => local,
    }
}
