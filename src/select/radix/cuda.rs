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

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use crate::device::cuda::kernels::radix_select::{
    rsel_choose, rsel_init, rsel_pass, rsel_small, small_work_words, SelState, RADIX, SMALL_BLOCK,
    SMALL_CAP,
};
use crate::device::cuda::kernels::{kernel_name, OrNull, RADIX_SELECT};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice, MemoryNeed};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;

const BLOCK: u32 = 256;
/// Blocks a multiprocessor for digit passes that read the input.
const INPUT_PASS_BLOCKS_PER_SM: usize = 8;

/// Inputs up to this many values are selected in one launch ([`select_short`]) where the
/// device holds the blocks at once.
const SHORT_UP_TO: usize = 1 << 21;

/// How many candidate keys each workspace buffer holds for `n` values.
pub(crate) fn workspace_capacity(n: usize) -> usize {
    n.min((n / 16).max(1 << 16))
}

/// The most device memory [`multiselect_in`] takes on `dev` for `n` values of `T` and `ranks`
/// ranks: the two candidate buffers, the state, the histogram and the results.
pub(crate) fn workspace<T: Element>(dev: &CudaDevice, n: usize, ranks: usize) -> MemoryNeed {
    let _ = dev;
    workspace_with_capacity::<T>(n, workspace_capacity(n), ranks)
}

/// The most device memory [`multiselect_in_place`] takes for `ranks` ranks (whatever `n`).
pub(crate) fn workspace_in_place<T: Element>(
    dev: &CudaDevice,
    n: usize,
    ranks: usize,
) -> MemoryNeed {
    let _ = dev;
    workspace_with_capacity::<T>(n, 0, ranks)
}

/// The buffers of [`select_with_capacity`] for candidate buffers of `cap` keys: those of the
/// digit passes, or of one launch for a short input ([`select_short`]: its results and, on
/// several blocks, the zeroed words of one pair of ranks).
fn workspace_with_capacity<T: Element>(n: usize, cap: usize, ranks: usize) -> MemoryNeed {
    let results = MemoryNeed::of::<u64>(ranks + 1);
    if n <= SMALL_CAP {
        return results;
    }
    let short = results.and(MemoryNeed::of::<u32>(small_work_words::<T::Key>(2)));
    if n > SHORT_UP_TO {
        return passes_workspace::<T>(cap, ranks);
    }
    short.or(passes_workspace::<T>(cap, ranks))
}

/// The buffers of the digit passes with candidate buffers of `cap` keys.
fn passes_workspace<T: Element>(cap: usize, ranks: usize) -> MemoryNeed {
    MemoryNeed::of::<T::Key>(cap)
        .and(MemoryNeed::of::<T::Key>(cap))
        .and(MemoryNeed::of::<SelState>(1))
        .and(MemoryNeed::of::<u64>(RADIX))
        .and(MemoryNeed::of::<u64>(ranks + 1))
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
/// selection state and the 256-entry digit histogram.
pub(crate) struct Workspace<'a, K: cudarc::driver::DeviceRepr> {
    /// Candidate buffer 0 (the state's source 1).
    pub cand0: &'a mut CudaSlice<K>,
    /// Candidate buffer 1 (source 2).
    pub cand1: &'a mut CudaSlice<K>,
    /// The selection's state.
    pub state: &'a mut CudaSlice<SelState>,
    /// The digit histogram, zero between passes.
    pub hist: &'a mut CudaSlice<u64>,
    /// Keys each candidate buffer holds.
    pub cap: usize,
}

/// Launches the digit passes of one selection from the state the workspace holds (set by
/// `rsel_init`, or by another kernel that leaves its candidates in buffer 0): per digit, from
/// the most significant, a histogram pass over the source (the input `x` or a buffer) and a
/// one-block choice that writes the selected key to `results[slot]` and the NaN count to
/// `results[nans_at]` after the last digit.
/// Each pass runs `blocks_per_sm` blocks a multiprocessor (or fewer for a short input): a full
/// grid for passes that read the input, a small one for passes over candidates only, where the
/// blocks' histogram merges would cost more than the keys.
pub(crate) fn digit_passes<T: Element>(
    dev: &CudaDevice,
    x: &CudaView<'_, T>,
    work: &mut Workspace<'_, T::Key>,
    results: &mut CudaViewMut<'_, u64>,
    slot: usize,
    nans_at: usize,
    blocks_per_sm: usize,
) -> Result<()> {
    let n = x.len();
    let vec = 16 / std::mem::size_of::<T>();
    let blocks = stride_blocks(n.div_ceil(vec), BLOCK, dev.multiprocessors(), blocks_per_sm);
    for digit in 0..T::Key::BITS / 8 {
        let shift = T::Key::BITS - 8 * (digit + 1);
        rsel_pass(
            dev,
            config(blocks, BLOCK),
            x,
            n as u64,
            work.cand0,
            work.cand1,
            work.state,
            work.hist,
            shift,
        )?;
        rsel_choose::<T::Key>(
            dev,
            config(1, RADIX as u32),
            work.state,
            work.hist,
            shift,
            work.cap as u64,
            results,
            slot as u64,
            nans_at as u64,
        )?;
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
    let n = x.len();
    if n <= SMALL_CAP || (n <= SHORT_UP_TO && n <= short_capacity::<T>(dev)?) {
        return select_short(dev, x, ranks);
    }
    let mut cand0 = dev.alloc::<T::Key>(cap, "radix select candidates")?;
    let mut cand1 = dev.alloc::<T::Key>(cap, "radix select candidates")?;
    // Both are set by `rsel_init` before any pass reads them.
    let mut state = dev.alloc::<SelState>(1, "radix select state")?;
    let mut hist = dev.alloc::<u64>(RADIX, "radix select histogram")?;
    let r = ranks.len();
    let mut out = dev.result_words(r + 1, "radix select results")?;
    let mut results = out.view_mut(0..r + 1);
    let mut work = Workspace {
        cand0: &mut cand0,
        cand1: &mut cand1,
        state: &mut state,
        hist: &mut hist,
        cap,
    };
    for (slot, &k) in ranks.iter().enumerate() {
        rsel_init(
            dev,
            config(1, BLOCK),
            work.state,
            work.hist,
            k as u64,
            n as u64,
            cap as u64,
        )?;
        digit_passes(
            dev,
            x,
            &mut work,
            &mut results,
            slot,
            r,
            INPUT_PASS_BLOCKS_PER_SM,
        )?;
    }
    let words = out.read()?;
    Ok((elements_of(&words[..r]), words[r] as usize))
}

/// The elements whose keys, widened to `u64`, a kernel wrote as result words.
pub(crate) fn elements_of<T: Element>(words: &[u64]) -> Vec<T> {
    words
        .iter()
        .map(|&w| T::from_key(T::Key::from_u64(w)))
        .collect()
}

/// The most elements the one-launch selection takes on `dev` for elements `T`: [`SMALL_CAP`]
/// a block, as many blocks as the device holds at once.
fn short_capacity<T: Element>(dev: &CudaDevice) -> Result<usize> {
    let f = dev.function(&RADIX_SELECT, &kernel_name("rsel_small", T::DTYPE))?;
    let per_sm = f
        .occupancy_max_active_blocks_per_multiprocessor(SMALL_BLOCK, 0, None)
        .map_err(|e| driver_error("reading the short selection's occupancy", e))?
        as usize;
    Ok(per_sm * dev.multiprocessors() * SMALL_CAP)
}

/// Radix selections of `ranks` over a short view (at most [`short_capacity`] elements): one
/// launch a pair of ranks, on one block a [`SMALL_CAP`] elements, each writing its keys and the
/// NaN count after them (the next pair's keys overwrite that count, the last one stays), one
/// read of them all (from a mailbox: no copy, see [`CudaDevice::result_words`]).
fn select_short<T: Element>(
    dev: &CudaDevice,
    x: &CudaView<'_, T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    let r = ranks.len();
    let blocks = x.len().div_ceil(SMALL_CAP).max(1);
    let mut out = dev.result_words(r + 1, "the short selection's results")?;
    for (pair, ks) in ranks.chunks(2).enumerate() {
        let at = 2 * pair;
        let mut work = match blocks {
            1 => None,
            _ => Some(dev.alloc_zeros::<u32>(
                small_work_words::<T::Key>(ks.len()),
                "the short selection's counts",
            )?),
        };
        rsel_small(
            dev,
            config(blocks, SMALL_BLOCK),
            x,
            x.len() as u64,
            ks[0] as u64,
            ks[ks.len() - 1] as u64,
            ks.len() as u32,
            &mut out.view_mut(at..at + ks.len() + 1),
            OrNull(work.as_mut()),
        )?;
    }
    let words = out.read()?;
    Ok((elements_of(&words[..r]), words[r] as usize))
}

/// Tests of the one-launch selection of short inputs against a sort.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::cuda::tests::gpu;

    /// `n` values, each one of `distinct` levels picked by a multiplicative hash of its index.
    fn values(n: usize, distinct: u64) -> Vec<f64> {
        (0..n as u64)
            .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) % distinct)
            .map(|v| v as f64 - (distinct / 2) as f64)
            .collect()
    }

    /// Any number of the registers' slots filled, on one block or several, selects what the
    /// sort gives, repeated values and NaNs included, for one rank and for pairs.
    #[test]
    fn short_selections_match_the_sort() {
        let Some(dev) = gpu() else { return };
        for n in [
            1, 200, 1000, 1024, 1500, 2049, 4096, 5000, 12000, 16384, 16385, 40000,
        ] {
            for distinct in [n as u64, 7] {
                let mut data = values(n, distinct);
                if n > 100 {
                    data[n / 3] = f64::NAN;
                }
                let buf = DeviceBuffer::from_host_on(&dev, &data).unwrap();
                let mut sorted = data.clone();
                sorted.sort_by(f64::total_cmp);
                let ranks = [0, n / 2, n - 1, n / 7, n / 2];
                let (got, nans) = select_short(&dev, &buf.as_slice().as_view(), &ranks).unwrap();
                let want: Vec<u64> = ranks.iter().map(|&k| sorted[k].to_bits()).collect();
                let got: Vec<u64> = got.iter().map(|v| v.to_bits()).collect();
                assert_eq!(got, want, "n = {n}, {distinct} levels");
                assert_eq!(nans, usize::from(n > 100), "n = {n}");
            }
        }
    }
}
