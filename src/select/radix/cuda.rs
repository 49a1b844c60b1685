//! MSD radix select on CUDA (`kernels/radix_select.cu`), 8 bits a pass from the top.
//!
//! Per rank: `rsel_init`, then for each digit a histogram pass over the candidates and a
//! one-block `rsel_choose`; the selected key is fixed when the last digit is. Candidates are
//! copied to a workspace once they fit, so later passes read only them.
//!
//! Two forms (Alabi et al.): the copying form (`Algorithm::Radix`) copies the candidates to a
//! workspace once they fit, so later passes read only them; the in-place form
//! (`Algorithm::RadixInPlace`) reads the whole input in every pass and needs no workspace beyond
//! the histogram, for inputs that leave no room on the device.
//!
//! Workspace of the copying form: two candidate buffers of `min(n, max(n / 16, 65536))` keys, a
//! 256-entry histogram and a few words of state.

use cudarc::driver::{CudaSlice, CudaView, PushKernelArg};

use crate::device::cuda::kernels::{kernel_name, key_suffix, RADIX_SELECT};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;

const BLOCK: u32 = 256;
/// Blocks a multiprocessor for digit passes that read the input.
const INPUT_PASS_BLOCKS_PER_SM: usize = 8;
/// `SelState` of the kernel in `u64` words (64 bytes).
pub(crate) const STATE_WORDS: usize = 8;
/// The word of `SelState` holding the NaN count.
pub(crate) const NANS_WORD: usize = 7;

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

/// [`multiselect`] in the in-place form: no candidate is ever copied, every digit pass reads
/// the whole input and skips the keys that left the running (those not matching the prefix
/// fixed so far; the input itself is not changed). Workspace: the state and the histogram only.
pub(crate) fn multiselect_in_place<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    select_with_capacity(buf.device(), &buf.as_slice().as_view(), ranks, 0)
}

/// The device buffers of one radix selection: two candidate buffers of `cap` keys each, the
/// selection state (`STATE_WORDS` words) and the 256-entry digit histogram.
pub(crate) struct Workspace<'a, K: cudarc::driver::DeviceRepr> {
    /// Candidate buffer 0 (the state's source 1).
    pub cand0: &'a mut CudaSlice<K>,
    /// Candidate buffer 1 (source 2).
    pub cand1: &'a mut CudaSlice<K>,
    /// `SelState`.
    pub state: &'a mut CudaSlice<u64>,
    /// The digit histogram, zero between passes.
    pub hist: &'a mut CudaSlice<u64>,
    /// Keys each candidate buffer holds.
    pub cap: usize,
}

/// Launches the digit passes of one selection from the state the workspace holds (set by
/// `rsel_init`, or by another kernel that leaves its candidates in buffer 0): per digit, from
/// the most significant, a histogram pass over the source (the input `x` or a buffer) and a
/// one-block choice that writes the selected key to `results[slot]` after the last digit.
/// Each pass runs `blocks_per_sm` blocks a multiprocessor (or fewer for a short input): a full
/// grid for passes that read the input, a small one for passes over candidates only, where the
/// blocks' histogram merges would cost more than the keys.
pub(crate) fn digit_passes<T: Element>(
    dev: &CudaDevice,
    x: &CudaView<'_, T>,
    work: &mut Workspace<'_, T::Key>,
    results: &mut CudaSlice<T::Key>,
    slot: usize,
    blocks_per_sm: usize,
) -> Result<()> {
    let stream = dev.stream();
    let pass = dev.function(&RADIX_SELECT, &kernel_name("rsel_pass", T::DTYPE))?;
    let choose = dev.function(
        &RADIX_SELECT,
        &format!("rsel_choose_{}", key_suffix::<T::Key>()),
    )?;
    let n = x.len();
    let vec = 16 / std::mem::size_of::<T>();
    let blocks = stride_blocks(n.div_ceil(vec), BLOCK, dev.multiprocessors(), blocks_per_sm);
    let (n64, cap64, slot64) = (n as u64, work.cap as u64, slot as u64);
    for digit in 0..T::Key::BITS / 8 {
        let shift = T::Key::BITS - 8 * (digit + 1);
        let mut launch = stream.launch_builder(&pass);
        launch
            .arg(x)
            .arg(&n64)
            .arg(&mut *work.cand0)
            .arg(&mut *work.cand1)
            .arg(&mut *work.state)
            .arg(&mut *work.hist)
            .arg(&shift);
        // SAFETY: rsel_pass_T(const T* x, u64 n, K* buf0, K* buf1, SelState*, u64* hist,
        // u32): x holds n elements; each buffer holds `cap` keys and a pass writes into one
        // only when the candidates (rsel_choose's count) are at most `cap`.
        unsafe { launch.launch(config(blocks, BLOCK)) }
            .map_err(|e| driver_error("launching rsel_pass", e))?;
        let mut launch = stream.launch_builder(&choose);
        launch
            .arg(&mut *work.state)
            .arg(&mut *work.hist)
            .arg(&shift)
            .arg(&cap64)
            .arg(&mut *results)
            .arg(&slot64);
        // SAFETY: rsel_choose_K(SelState*, u64* hist, u32, u64, K* result, u64 slot): one
        // block of 256 threads (one per digit); slot < results.len().
        unsafe { launch.launch(config(1, BLOCK)) }
            .map_err(|e| driver_error("launching rsel_choose", e))?;
    }
    Ok(())
}

/// [`multiselect`] over the elements of a view (all of them; `ranks` below its length).
pub(crate) fn multiselect_in<T: Element>(
    dev: &CudaDevice,
    x: &CudaView<'_, T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    select_with_capacity(dev, x, ranks, workspace_capacity(x.len()))
}

/// Radix selections of `ranks` over a view, copying the candidates once at most `cap` remain
/// (never when `cap` is 0).
fn select_with_capacity<T: Element>(
    dev: &CudaDevice,
    x: &CudaView<'_, T>,
    ranks: &[usize],
    cap: usize,
) -> Result<(Vec<T>, usize)> {
    let stream = dev.stream();
    let n = x.len();
    let mut cand0 = dev.alloc::<T::Key>(cap, "radix select candidates")?;
    let mut cand1 = dev.alloc::<T::Key>(cap, "radix select candidates")?;
    let mut state = dev.alloc_zeros::<u64>(STATE_WORDS, "radix select state")?;
    let mut hist = dev.alloc_zeros::<u64>(256, "radix select histogram")?;
    let mut results = dev.alloc_zeros::<T::Key>(ranks.len(), "radix select results")?;
    let init = dev.function(&RADIX_SELECT, "rsel_init")?;
    let (n64, cap64) = (n as u64, cap as u64);
    let mut work = Workspace {
        cand0: &mut cand0,
        cand1: &mut cand1,
        state: &mut state,
        hist: &mut hist,
        cap,
    };
    for (slot, &k) in ranks.iter().enumerate() {
        let k64 = k as u64;
        let mut launch = stream.launch_builder(&init);
        launch
            .arg(&mut *work.state)
            .arg(&mut *work.hist)
            .arg(&k64)
            .arg(&n64)
            .arg(&cap64);
        // SAFETY: rsel_init(SelState*, u64* hist, u64, u64, u64): state holds the 64 bytes of
        // SelState, hist 256 entries.
        unsafe { launch.launch(config(1, BLOCK)) }
            .map_err(|e| driver_error("launching rsel_init", e))?;
        digit_passes(
            dev,
            x,
            &mut work,
            &mut results,
            slot,
            INPUT_PASS_BLOCKS_PER_SM,
        )?;
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
