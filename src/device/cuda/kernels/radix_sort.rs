//! Launchers of `kernels/radix_sort.cu`: the LSD radix sort of keys and of key–value pairs,
//! 8 bits a pass.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use super::{key_suffix, RADIX_SORT};
use crate::element::RadixKey;

/// Digits of a pass: the count table has this many rows of one column a block.
pub(crate) const RADIX: usize = 256;
/// Threads of a block of the scan (`RS_SCAN_THREADS`), the most blocks a pass may have.
pub(crate) const SCAN_THREADS: u32 = 1024;

launchers! {
    /// Counts the digit at `shift` of each block's `chunk` of keys into the block's column of
    /// `counts` (`RADIX` rows of one entry a block), and adds each digit's count to
    /// `totals[digit]` (zero before the pass).
    fn rs_histogram[K: RadixKey](keys: dev &CudaSlice<K>, n: val u64, chunk: val u64, shift: val u32,
                                 counts: dev &mut CudaSlice<u64>,
                                 totals: dev &mut CudaViewMut<'_, u64>)
        from RADIX_SORT as format!("rs_histogram_{}", key_suffix::<K>());
        requires keys.len() as u64 >= n, shift < K::BITS,
            counts.len() as u64 >= RADIX as u64 * n.div_ceil(chunk.max(1)),
            totals.len() >= RADIX;

    /// Turns the count table (`RADIX` rows of `blocks` entries) into exclusive offsets, in
    /// place: one block of [`SCAN_THREADS`] threads a row, the smaller digits' keys from
    /// `totals`.
    fn rs_scan(counts: dev &mut CudaSlice<u64>, blocks: val u64, totals: dev &CudaView<'_, u64>)
        from RADIX_SORT as "rs_scan";
        requires @shape: shape.grid_dim.0 as usize == RADIX && shape.block_dim.0 == SCAN_THREADS,
            blocks <= SCAN_THREADS as u64, counts.len() as u64 >= RADIX as u64 * blocks,
            totals.len() >= RADIX;

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
