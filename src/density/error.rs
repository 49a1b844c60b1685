//! [`DensityError`]: why a distribution cannot be estimated, smoothed or plotted from what it
//! was given — the order statistics, the bandwidth, the histogram and plot settings.

use std::path::PathBuf;

/// Why a density estimate, its smoothing, or a plot of it cannot be made from what it was
/// given (`kselect::Error::Density`). The messages name the numbers involved.
///
/// ```
/// use kselect::density::{DensityError, DensityEstimate};
/// use kselect::Error;
/// let err = DensityEstimate::new(&[0.0, 0.5, 1.0], &[1.0, 2.0]).unwrap_err();
/// assert!(matches!(err, Error::Density(DensityError::LengthMismatch { probs: 3, values: 2 })));
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DensityError {
    /// Fewer than two order statistics.
    #[error("a distribution is estimated from at least 2 order statistics, got {count}")]
    TooFewPoints {
        /// The order statistics given.
        count: usize,
    },
    /// Probabilities that do not strictly increase.
    #[error("the probabilities must be strictly increasing: {next} follows {previous}")]
    ProbabilitiesNotIncreasing {
        /// The earlier probability.
        previous: f64,
        /// The one after it, not above it.
        next: f64,
    },
    /// Another number of probabilities than of order statistics.
    #[error("{probs} probabilities but {values} order statistics")]
    LengthMismatch {
        /// The probabilities.
        probs: usize,
        /// The order statistics.
        values: usize,
    },
    /// An order statistic that is NaN or infinite.
    #[error(
        "the order statistic at p = {p} is {value}: a distribution is estimated from finite \
         order statistics only"
    )]
    NonFiniteValue {
        /// Its probability.
        p: f64,
        /// Its value.
        value: f64,
    },
    /// Order statistics that decrease.
    #[error(
        "the order statistics must not decrease: {value:?} at p = {p} follows {previous:?} at \
         p = {previous_p}"
    )]
    ValuesDecrease {
        /// The earlier order statistic.
        previous: f64,
        /// Its probability.
        previous_p: f64,
        /// The one after it, below it.
        value: f64,
        /// Its probability.
        p: f64,
    },
    /// A smoothing bandwidth that is not finite and positive.
    #[error("the bandwidth of the smoothing kernels must be finite and positive, got {value:?}")]
    Bandwidth {
        /// The bandwidth's number.
        value: f64,
    },
    /// A histogram range that is not finite `lo < hi`.
    #[error("a histogram's range needs finite lo < hi, not [{lo:?}, {hi:?}]")]
    HistogramRange {
        /// Its lower end.
        lo: f64,
        /// Its upper end.
        hi: f64,
    },
    /// A histogram of no bin or too many.
    #[error("a histogram has 1 to {max} bins, not {bins}")]
    BinCount {
        /// The bins asked for.
        bins: usize,
        /// The most bins a histogram has.
        max: usize,
    },
    /// A plot range so narrow that an order statistic scaled to it is beyond `f64`.
    #[error(
        "the plot range [{lo:?}, {hi:?}] is too narrow to draw with an order statistic as far \
         out as {value:?}: choose a wider range"
    )]
    RangeTooNarrow {
        /// The range's lower end.
        lo: f64,
        /// The range's upper end.
        hi: f64,
        /// The order statistic.
        value: f64,
    },
    /// A plot size out of range.
    #[error("a plot is 200 to 8000 pixels wide and 150 to 8000 high, not {width} × {height}")]
    PlotSize {
        /// The width asked for.
        width: u32,
        /// The height asked for.
        height: u32,
    },
    /// A plot file name that does not end in `.png` or `.svg`.
    #[error("{}: a plot file name ends in .png or .svg", .path.display())]
    ImageExtension {
        /// The file name.
        path: PathBuf,
    },
    /// A phase diagram of no algorithm.
    #[error("a phase diagram with no algorithm has nothing to draw")]
    EmptyPhaseDiagram,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::density::{Bandwidth, DensityEstimate};
    use crate::Error;

    fn density<T: std::fmt::Debug>(result: crate::Result<T>) -> DensityError {
        match result {
            Err(Error::Density(e)) => e,
            other => panic!("not a density argument error: {other:?}"),
        }
    }

    #[test]
    fn estimates_name_the_failed_check_with_its_numbers() {
        let new = DensityEstimate::new;
        assert_eq!(
            density(new(&[0.5], &[2.0])),
            DensityError::TooFewPoints { count: 1 }
        );
        assert_eq!(
            density(new(&[0.0, 0.5, 0.5], &[1.0, 2.0, 3.0])),
            DensityError::ProbabilitiesNotIncreasing {
                previous: 0.5,
                next: 0.5
            }
        );
        assert_eq!(
            density(new(&[0.0, 1.0], &[1.0, 2.0, 3.0])),
            DensityError::LengthMismatch {
                probs: 2,
                values: 3
            }
        );
        assert_eq!(
            density(new(&[0.0, 1.0], &[1.0, f64::INFINITY])),
            DensityError::NonFiniteValue {
                p: 1.0,
                value: f64::INFINITY
            }
        );
        assert_eq!(
            density(new(&[0.0, 0.5, 1.0], &[1.0, 3.0, 2.0])),
            DensityError::ValuesDecrease {
                previous: 3.0,
                previous_p: 0.5,
                value: 2.0,
                p: 1.0
            }
        );
        let est = new(&[0.0, 1.0], &[0.0, 10.0]).unwrap();
        assert_eq!(
            density(est.smoothed(Bandwidth::Fixed(-1.0))),
            DensityError::Bandwidth { value: -1.0 }
        );
    }

    #[test]
    fn messages_keep_the_invalid_argument_prefix_and_the_numbers() {
        let cases = [
            (
                DensityError::ValuesDecrease {
                    previous: 3.0,
                    previous_p: 0.5,
                    value: 2.0,
                    p: 1.0,
                },
                "invalid argument: the order statistics must not decrease: 2.0 at p = 1 follows \
                 3.0 at p = 0.5",
            ),
            (
                DensityError::BinCount { bins: 0, max: 9 },
                "invalid argument: a histogram has 1 to 9 bins, not 0",
            ),
            (
                DensityError::PlotSize {
                    width: 10,
                    height: 150,
                },
                "invalid argument: a plot is 200 to 8000 pixels wide and 150 to 8000 high, not \
                 10 × 150",
            ),
            (
                DensityError::ImageExtension {
                    path: "a/b.jpg".into(),
                },
                "invalid argument: a/b.jpg: a plot file name ends in .png or .svg",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(Error::from(e).to_string(), want);
        }
    }
}
