//! What selection does with NaN.

use crate::element::Element;
use crate::error::{Error, Result};

/// What selection does when the input holds NaN values.
///
/// ```
/// use kselect::{NanPolicy, Selector};
/// let data = [3.0, f64::NAN, 1.0, 2.0];
/// assert!(Selector::new().select(&data, 0).is_err()); // the default is `Error`
/// let omit = Selector::new().nan_policy(NanPolicy::Omit);
/// assert_eq!(omit.select(&data, 2).unwrap(), 3.0); // ranks count the 3 numbers only
/// let last = Selector::new().nan_policy(NanPolicy::Last);
/// assert!(last.select(&data, 3).unwrap().is_nan()); // NaN orders after +inf, as numpy sorts
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NanPolicy {
    /// Refuse input that holds NaN, with [`Error::NanInInput`].
    #[default]
    Error,
    /// Leave NaNs out: ranks and quantiles refer to the other values only (numpy's `nan*`).
    Omit,
    /// Order NaNs after every number, as `numpy.sort` does: ranks count them.
    Last,
}

impl NanPolicy {
    /// The policy's name as the CLI spells it.
    ///
    /// ```
    /// assert_eq!(kselect::NanPolicy::Omit.name(), "omit");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            NanPolicy::Error => "error",
            NanPolicy::Omit => "omit",
            NanPolicy::Last => "last",
        }
    }
}

crate::names::parse_by_name!(
    NanPolicy,
    "NaN policy",
    [NanPolicy::Error, NanPolicy::Omit, NanPolicy::Last]
);

/// The NaNs of an input, as found by a scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NanScan {
    /// How many NaNs.
    pub count: usize,
    /// Index of the first one (`usize::MAX` when there is none).
    pub first_index: usize,
}

impl NanScan {
    pub(crate) const NONE: NanScan = NanScan {
        count: 0,
        first_index: usize::MAX,
    };
}

/// Counts the NaNs of a host slice (nothing to do for integers).
pub(crate) fn scan_host<T: Element>(data: &[T], parallel: bool) -> NanScan {
    use rayon::prelude::*;
    if !T::DTYPE.is_float() {
        return NanScan::NONE;
    }
    let count_chunk = |chunk: &[T]| chunk.iter().filter(|x| x.is_nan()).count();
    let count = if parallel && data.len() >= crate::select::PARALLEL_THRESHOLD {
        data.par_chunks(1 << 16).map(count_chunk).sum()
    } else {
        count_chunk(data)
    };
    let first_index = if count == 0 {
        usize::MAX
    } else {
        data.iter().position(|x| x.is_nan()).unwrap_or(usize::MAX)
    };
    NanScan { count, first_index }
}

/// The ranks an input offers under a policy, once its NaNs are known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RankSpace {
    /// The number of values ranks refer to (NaNs left out under `Omit`).
    pub len: usize,
}

impl RankSpace {
    /// Applies `policy` to an input of `n` values with the NaNs `scan` found.
    pub(crate) fn new(n: usize, scan: NanScan, policy: NanPolicy) -> Result<RankSpace> {
        let len = match policy {
            NanPolicy::Error if scan.count > 0 => {
                return Err(Error::NanInInput {
                    count: scan.count,
                    first_index: scan.first_index,
                })
            }
            NanPolicy::Error | NanPolicy::Omit => n - scan.count,
            NanPolicy::Last => n,
        };
        if len == 0 {
            return Err(Error::EmptyInput);
        }
        Ok(RankSpace { len })
    }
}
