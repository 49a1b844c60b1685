//! Launchers of `kernels/radix_sort.cu`: the LSD radix sort of keys and of key–value pairs,
//! 8 bits a pass.

use cudarc::driver::CudaSlice;

use super::{key_suffix, RADIX_SORT};
use crate::element::RadixKey;

/// Digits of a pass: the count table has this many rows of one column a block.
pub(crate) const RADIX: usize = 256;

launchers! {
    /// Counts the digit at `shift` of each block's `chunk` of keys into the block's column of
    /// `counts` (`RADIX` rows of one entry a block).
    fn rs_histogram[K: RadixKey](keys: dev &CudaSlice<K>, n: val u64, chunk: val u64, shift: val u32,
                                 counts: dev &mut CudaSlice<u64>)
        from RADIX_SORT as format!("rs_histogram_{}", key_suffix::<K>());
        requires keys.len() as u64 >= n, shift < K::BITS,
            counts.len() as u64 >= RADIX as u64 * n.div_ceil(chunk.max(1));

    /// Turns the count table into exclusive offsets, in place (one block of 1024 threads).
    fn rs_scan(counts: dev &mut CudaSlice<u64>, len: val u64)
        from RADIX_SORT as "rs_scan";
        requires counts.len() as u64 >= len;

    /// Scatters each block's chunk of keys stably to the offsets of their digit at `shift`.
    fn rs_scatter[K: RadixKey](keys_in: dev &CudaSlice<K>, keys_out: dev &mut CudaSlice<K>, n: val u64,
                               chunk: val u64, shift: val u32, offsets: dev &CudaSlice<u64>)
        from RADIX_SORT as format!("rs_scatter_{}", key_suffix::<K>());
        requires keys_in.len() as u64 >= n, keys_out.len() as u64 >= n, shift < K::BITS,
            offsets.len() as u64 >= RADIX as u64 * n.div_ceil(chunk.max(1));

    /// [`rs_scatter`] moving a `u32` value with each key.
    fn rs_scatter_pairs[K: RadixKey](keys_in: dev &CudaSlice<K>, keys_out: dev &mut CudaSlice<K>,
                                     vals_in: dev &CudaSlice<u32>, vals_out: dev &mut CudaSlice<u32>,
                                     n: val u64, chunk: val u64, shift: val u32,
                                     offsets: dev &CudaSlice<u64>)
        from RADIX_SORT as format!("rs_scatter_pairs_{}", key_suffix::<K>());
        requires keys_in.len() as u64 >= n, keys_out.len() as u64 >= n,
            vals_in.len() as u64 >= n, vals_out.len() as u64 >= n, shift < K::BITS,
            offsets.len() as u64 >= RADIX as u64 * n.div_ceil(chunk.max(1));
}
