//! Launchers of `kernels/reduce.cu`: the NaN count, the one-read floor (a sum), key
//! conversions and gathers.

use cudarc::driver::CudaSlice;

use super::{kernel_name, key_suffix, REDUCE};
use crate::element::{Element, RadixKey};

device_state! {
    /// The NaNs of a float input: how many, and the first one's index.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct NanCount[16] {
        /// NaNs seen.
        pub count: u64,
        /// The smallest index of a NaN (`u64::MAX` when there is none).
        pub first: u64,
    }
}

impl Default for NanCount {
    /// No NaN, which `count_nan` starts from.
    fn default() -> Self {
        NanCount {
            count: 0,
            first: u64::MAX,
        }
    }
}

launchers! {
    /// Adds the NaNs of `x` (a float type) into `out` (which starts as [`NanCount::default`]).
    fn count_nan[T: Element](x: dev &CudaSlice<T>, n: val u64, out: dev &mut CudaSlice<NanCount>)
        from REDUCE as kernel_name("count_nan", T::DTYPE);
        requires T::DTYPE.is_float(), x.len() as u64 >= n, !out.is_empty();

    /// Adds the sum of `x` in double precision to `out[0]`, reading every element once with
    /// 16-byte loads (the floor selection times are compared with).
    fn sum[T: Element](x: dev &CudaSlice<T>, n: val u64, out: dev &mut CudaSlice<f64>)
        from REDUCE as kernel_name("sum", T::DTYPE);
        requires x.len() as u64 >= n, !out.is_empty();

    /// `keys[i] = to_key(x[i])` for `i < n`.
    fn to_keys[T: Element](x: dev &CudaSlice<T>, keys: dev &mut CudaSlice<T::Key>, n: val u64)
        from REDUCE as kernel_name("to_keys", T::DTYPE);
        requires x.len() as u64 >= n, keys.len() as u64 >= n;

    /// `x[i] = from_key(keys[i])` for `i < n`.
    fn from_keys[T: Element](keys: dev &CudaSlice<T::Key>, x: dev &mut CudaSlice<T>, n: val u64)
        from REDUCE as kernel_name("from_keys", T::DTYPE);
        requires keys.len() as u64 >= n, x.len() as u64 >= n;

    /// `out[j] = keys[ranks[j]]` for `j < m` (every rank below `keys.len()`).
    fn gather[K: RadixKey](keys: dev &CudaSlice<K>, ranks: dev &CudaSlice<u64>, out: dev &mut CudaSlice<K>,
                           m: val u64)
        from REDUCE as format!("gather_{}", key_suffix::<K>());
        requires ranks.len() as u64 >= m, out.len() as u64 >= m;
}
