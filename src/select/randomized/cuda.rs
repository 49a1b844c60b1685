//! randomizedSelect on CUDA (`kernels/randomized_select.cu`).
//!
//! A sample of `s = 2^16` elements (one from each of `s` equal strides, at a hashed offset)
//! gives two splitters, selected in the sample by radix select, that bracket rank `k` with
//! high probability: the sample ranks `p·s ± (4σ + 2)` for `p = (k + ½) / n` and
//! `σ = √(s·p·(1 − p))`. One fused pass over the input counts the keys below the lower splitter
//! and the NaNs, and copies the keys of the bracket (at most about `4 / √s ≈ 1.6 %` of `n`),
//! each warp staging them in shared memory and writing them out with one atomic per few
//! hundred. The pass has two forms. The lean one copies the closed bracket `[lo, hi]` (one
//! subtraction and one comparison a key); it runs when the sample holds each splitter at most
//! 64 times. Otherwise (`lo = hi`, or a splitter the input seems to repeat often) the full form
//! copies only the keys strictly between the splitters and counts those equal to each, so that
//! a value repeated millions of times costs no workspace; a rank on a splitter's duplicates is
//! then that splitter. A rank among the copies is selected there by radix select, starting below
//! the leading digits the splitters share. When the bracket misses the rank or the copies
//! outgrow the workspace, the rank is selected by radix select over the whole input: the result
//! is always exact. Inputs under 2^20 go to radix select directly.
//!
//! Everything runs on the device's stream without a round trip: the sample's keys are gathered,
//! two one-block radix selections pick the splitters from the L2-resident sample, the pass reads
//! them from device memory, a one-block kernel places the rank among the counts and starts the
//! radix selection of the copies (`radix::cuda::digit_passes`), and the host reads the results
//! once at the end.
//!
//! Workspace: two buffers of `n / 32` keys (the copies, and radix select's second buffer among
//! them), the sample's 2^16 keys, and a few words.

use crate::device::cuda::kernels::radix_select::{SelState, RADIX};
use crate::device::cuda::kernels::randomized_select::{
    rnd_pass, rnd_resolve, rnd_sample, rnd_splitters, COUNTERS, MISSED, TOP_BINS,
};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{CudaDevice, MemoryNeed};
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::radix;
use crate::select::radix::cuda::{digit_passes, Workspace};

const BLOCK: u32 = 256;
/// Threads of the splitter selection's blocks (`RND_SPLIT_BLOCK`).
const SPLIT_BLOCK: u32 = 1024;
/// Sample size.
const SAMPLE: usize = 1 << 16;
/// Inputs shorter than this go to radix select directly.
const MIN_N: usize = 1 << 20;
/// Seed of the sample positions.
const SEED: u64 = 0x5EED_0F5A_3F1E;
/// Blocks of the pass per multiprocessor: many small ones balance the grid's tail.
const PASS_BLOCKS_PER_SM: usize = 16;
/// Blocks a multiprocessor for the radix passes over the copies (measured on an H200 at 2^28:
/// 2 a multiprocessor made the passes over the median's 4.2M copies 2.5 times slower than 8).
const COPIES_PASS_BLOCKS_PER_SM: usize = 8;

/// Keys each of the two candidate buffers holds for `n` values: about twice the expected copies of
/// a median's bracket (`8·√(s/4) / s ≈ n / 64`).
fn candidate_capacity(n: usize) -> usize {
    n / 32
}

/// The most device memory [`multiselect`] takes on `dev` for `n` values of `T` and `ranks`
/// ranks: the sample and its histogram, the two copy buffers, the state, the splitters and
/// counters, the results and outcomes; and radix select over the input for the ranks the
/// bracket missed (while those are held).
pub(crate) fn workspace<T: Element>(dev: &CudaDevice, n: usize, ranks: usize) -> MemoryNeed {
    let on_input = radix::cuda::workspace::<T>(dev, n, ranks);
    if n < MIN_N {
        return on_input;
    }
    let cap = candidate_capacity(n);
    MemoryNeed::of::<T::Key>(SAMPLE)
        .and(MemoryNeed::of::<u32>(TOP_BINS))
        .and(MemoryNeed::of::<T::Key>(cap))
        .and(MemoryNeed::of::<T::Key>(cap))
        .and(MemoryNeed::of::<SelState>(1))
        .and(MemoryNeed::of::<u64>(RADIX))
        .and(MemoryNeed::of::<T::Key>(2))
        .and(MemoryNeed::of::<u64>(COUNTERS))
        .and(MemoryNeed::of::<T::Key>(ranks))
        .and(MemoryNeed::of::<u32>(ranks))
        .and(on_input)
}

/// The elements of `ranks` and the number of NaNs of the input (`ranks` not empty).
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    let n = buf.len();
    if n < MIN_N {
        return radix::cuda::multiselect(buf, ranks);
    }
    let dev = buf.device();
    let x = buf.as_slice().as_view();
    let s = SAMPLE;
    let mut sample = dev.alloc::<T::Key>(s, "the randomized select sample")?;
    let mut top_hist = dev.alloc_zeros::<u32>(TOP_BINS, "the sample's digit histogram")?;
    rnd_sample(
        dev,
        config(s.div_ceil(BLOCK as usize), BLOCK),
        &x,
        n as u64,
        &mut sample,
        s as u64,
        SEED,
        &mut top_hist,
    )?;

    let cap = candidate_capacity(n);
    let mut cand0 = dev.alloc::<T::Key>(cap, "the randomized select copies")?;
    let mut cand1 = dev.alloc::<T::Key>(cap, "the randomized select copies")?;
    let mut state = dev.alloc_zeros::<SelState>(1, "the selection state")?;
    let mut hist = dev.alloc_zeros::<u64>(RADIX, "the selection histogram")?;
    let mut bounds = dev.alloc::<T::Key>(2, "the splitters")?;
    let mut counters = dev.alloc::<u64>(COUNTERS, "the pass counters")?;
    let mut results = dev.alloc_zeros::<T::Key>(ranks.len(), "the results")?;
    let mut status = dev.alloc_zeros::<u32>(ranks.len(), "the outcomes")?;
    let pass_blocks = stride_blocks(
        n.div_ceil(16 / std::mem::size_of::<T>()),
        BLOCK,
        dev.multiprocessors(),
        PASS_BLOCKS_PER_SM,
    );
    let mut work = Workspace {
        cand0: &mut cand0,
        cand1: &mut cand1,
        state: &mut state,
        hist: &mut hist,
        cap,
    };
    for (slot, &k) in ranks.iter().enumerate() {
        let (r_lo, r_hi) = splitter_ranks(k, n, s);
        rnd_splitters(
            dev,
            config(2, SPLIT_BLOCK),
            &sample,
            s as u64,
            &top_hist,
            r_lo,
            r_hi,
            &mut bounds,
            &mut counters,
        )?;
        rnd_pass(
            dev,
            config(pass_blocks, BLOCK),
            &x,
            n as u64,
            &bounds,
            work.cand0,
            cap as u64,
            &mut counters,
        )?;
        rnd_resolve(
            dev,
            config(1, BLOCK),
            &bounds,
            &counters,
            k as u64,
            cap as u64,
            work.state,
            work.hist,
            &mut results,
            &mut status,
            slot as u64,
        )?;
        // Selects among the copies in buffer 0 (a source the passes find empty when the
        // rank was resolved or missed).
        digit_passes(
            dev,
            &x,
            &mut work,
            &mut results,
            slot,
            COPIES_PASS_BLOCKS_PER_SM,
        )?;
    }
    let keys = dev.read(&results, "the results")?;
    let outcomes = dev.read(&status, "the outcomes")?;
    let mut nans = dev.read(&state, "the selection state")?[0].nans as usize;
    let mut values: Vec<T> = keys.into_iter().map(T::from_key).collect();
    let missed: Vec<usize> = (0..ranks.len())
        .filter(|&slot| outcomes[slot] == MISSED)
        .collect();
    if !missed.is_empty() {
        // The bracket missed (or its copies overflowed): radix select over the whole input.
        let wanted: Vec<usize> = missed.iter().map(|&slot| ranks[slot]).collect();
        let (exact, counted) = radix::cuda::multiselect(buf, &wanted)?;
        for (&slot, value) in missed.iter().zip(exact) {
            values[slot] = value;
        }
        nans = counted;
    }
    Ok((values, nans))
}

/// The sample ranks of the two splitters for rank `k` of `n` with a sample of `s`:
/// `p·s ± (4σ + 2)` for `p = (k + ½) / n` and `σ = √(s·p·(1 − p))`. A rank outside the sample
/// is `u64::MAX`: that side of the bracket is open.
fn splitter_ranks(k: usize, n: usize, s: usize) -> (u64, u64) {
    let sf = s as f64;
    let p = (k as f64 + 0.5) / n as f64;
    let width = 4.0 * (sf * p * (1.0 - p)).sqrt() + 2.0;
    let (r_lo, r_hi) = (p * sf - width, p * sf + width);
    let lo = if r_lo >= 0.0 { r_lo as u64 } else { u64::MAX };
    let hi = if r_hi < sf - 1.0 {
        r_hi.ceil() as u64
    } else {
        u64::MAX
    };
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitter_ranks_bracket_the_rank() {
        let s = SAMPLE;
        let n = 1usize << 28;
        let (lo, hi) = splitter_ranks(n / 2, n, s);
        assert!(lo < (s / 2) as u64 && (s / 2) as u64 <= hi && hi < s as u64);
        // The copies' expected number stays well inside the capacity (its spread is ~3 %).
        let expected = (hi - lo) as f64 / s as f64 * n as f64;
        assert!(expected * 1.9 <= candidate_capacity(n) as f64, "{expected}");
        // The ends leave one side open.
        assert_eq!(splitter_ranks(0, n, s).0, u64::MAX);
        assert_eq!(splitter_ranks(n - 1, n, s).1, u64::MAX);
        assert!(splitter_ranks(0, n, s).1 < 16);
    }
}
