//! What a first pass over the data learns: the non-finite values and the range of the finite
//! ones' keys (the CPU's `finite_census`, the GPU's census kernels, the cutting-plane search).

use crate::element::{Element, RadixKey};
use crate::select::host::{max_number_key, min_number_key};

/// What a first pass learns: the non-finite values and the range of the finite values' keys.
///
/// ```
/// use kselect::select::cutting_plane::Census;
/// let c = Census { neg_inf: 1, pos_inf: 0, nan: 2, min: 3u32, max: 9u32 };
/// assert_eq!(c.neg_inf + c.pos_inf + c.nan, 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Census<K> {
    /// Values equal to `-inf`.
    pub neg_inf: usize,
    /// Values equal to `+inf`.
    pub pos_inf: usize,
    /// NaN values.
    pub nan: usize,
    /// The smallest key of a finite value (meaningless when there is none).
    pub min: K,
    /// The largest key of a finite value (meaningless when there is none).
    pub max: K,
}

impl<K: RadixKey> Census<K> {
    /// The number of finite values among `n`.
    pub(crate) fn finite(&self, n: usize) -> usize {
        n - self.neg_inf - self.pos_inf - self.nan
    }

    /// Rank `k` of `n` values as a rank among the finite values (`Ok`), or the key of the
    /// answer when it is `-inf`, `+inf` or NaN (`Err`).
    pub(crate) fn finite_rank<T: Element<Key = K>>(&self, n: usize, k: usize) -> Result<usize, K> {
        let finite = self.finite(n);
        if k < self.neg_inf {
            Err(min_number_key::<T>())
        } else if k < self.neg_inf + finite {
            Ok(k - self.neg_inf)
        } else if k < self.neg_inf + finite + self.pos_inf {
            Err(max_number_key::<T>())
        } else {
            Err(K::MAX)
        }
    }
}
