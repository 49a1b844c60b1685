//! MSD radix select on CUDA (`kernels/radix_select.cu`), 8 bits a pass from the top.
//!
//! Per rank: `rsel_init`, then for each digit a histogram pass over the candidates and a
//! one-block `rsel_choose`; the selected key is fixed when the last digit is. Candidates are
//! copied to a workspace once they fit, so later passes read only them.
//!
//! Workspace: two candidate buffers of `min(n, max(n / 16, 65536))` keys, a 256-entry
//! histogram and a few words of state.

use cudarc::driver::{CudaView, PushKernelArg};

use crate::device::cuda::kernels::{kernel_name, RADIX_SELECT};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::select::sort_choose::cuda::key_suffix;

const BLOCK: u32 = 256;
/// `SelState` of the kernel in `u64` words (64 bytes).
const STATE_WORDS: usize = 8;
/// The word of `SelState` holding the NaN count.
const NANS_WORD: usize = 7;

/// How many candidate keys each workspace buffer holds for `n` values.
pub(crate) fn workspace_capacity(n: usize) -> usize {
    n.min((n / 16).max(1 << 16))
}

/// The elements of `ranks`, one radix selection each, and the number of NaNs of the input
/// (counted by the first pass; `ranks` must not be empty).
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    multiselect_in(buf.device(), &buf.as_slice().as_view(), ranks)
}

/// [`multiselect`] over the elements of a view (all of them; `ranks` below its length).
pub(crate) fn multiselect_in<T: Element>(
    dev: &CudaDevice,
    x: &CudaView<'_, T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    let stream = dev.stream();
    let n = x.len();
    let cap = workspace_capacity(n);
    let mut cand0 = dev.alloc::<T::Key>(cap, "radix select candidates")?;
    let mut cand1 = dev.alloc::<T::Key>(cap, "radix select candidates")?;
    let mut state = dev.alloc_zeros::<u64>(STATE_WORDS, "radix select state")?;
    let mut hist = dev.alloc_zeros::<u64>(256, "radix select histogram")?;
    let mut results = dev.alloc_zeros::<T::Key>(ranks.len(), "radix select results")?;
    let init = dev.function(&RADIX_SELECT, "rsel_init")?;
    let pass = dev.function(&RADIX_SELECT, &kernel_name("rsel_pass", T::DTYPE))?;
    let choose = dev.function(
        &RADIX_SELECT,
        &format!("rsel_choose_{}", key_suffix::<T::Key>()),
    )?;
    let vec = 16 / std::mem::size_of::<T>();
    let blocks = stride_blocks(n.div_ceil(vec), BLOCK, dev.multiprocessors(), 8);
    let (n64, cap64) = (n as u64, cap as u64);
    for (slot, &k) in ranks.iter().enumerate() {
        let (k64, slot64) = (k as u64, slot as u64);
        let mut launch = stream.launch_builder(&init);
        launch
            .arg(&mut state)
            .arg(&mut hist)
            .arg(&k64)
            .arg(&n64)
            .arg(&cap64);
        // SAFETY: rsel_init(SelState*, u64* hist, u64, u64, u64): state holds the 64 bytes of
        // SelState, hist 256 entries.
        unsafe { launch.launch(config(1, BLOCK)) }
            .map_err(|e| driver_error("launching rsel_init", e))?;
        for digit in 0..T::Key::BITS / 8 {
            let shift = T::Key::BITS - 8 * (digit + 1);
            let mut launch = stream.launch_builder(&pass);
            launch
                .arg(x)
                .arg(&n64)
                .arg(&mut cand0)
                .arg(&mut cand1)
                .arg(&mut state)
                .arg(&mut hist)
                .arg(&shift);
            // SAFETY: rsel_pass_T(const T* x, u64 n, K* buf0, K* buf1, SelState*, u64* hist,
            // u32): x holds n elements; each buffer holds `cap` keys and a pass writes into one
            // only when the candidates (rsel_choose's count) are at most `cap`.
            unsafe { launch.launch(config(blocks, BLOCK)) }
                .map_err(|e| driver_error("launching rsel_pass", e))?;
            let mut launch = stream.launch_builder(&choose);
            launch
                .arg(&mut state)
                .arg(&mut hist)
                .arg(&shift)
                .arg(&cap64)
                .arg(&mut results)
                .arg(&slot64);
            // SAFETY: rsel_choose_K(SelState*, u64* hist, u32, u64, K* result, u64 slot): one
            // block of 256 threads (one per digit); slot < results.len().
            unsafe { launch.launch(config(1, BLOCK)) }
                .map_err(|e| driver_error("launching rsel_choose", e))?;
        }
    }
    let keys = stream
        .clone_dtoh(&results)
        .map_err(|e| driver_error("copying results", e))?;
    let words = stream
        .clone_dtoh(&state)
        .map_err(|e| driver_error("copying the selection state", e))?;
    Ok((
        keys.into_iter().map(T::from_key).collect(),
        words[NANS_WORD] as usize,
    ))
}
