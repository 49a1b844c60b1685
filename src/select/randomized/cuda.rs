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

use cudarc::driver::{CudaSlice, PushKernelArg};

use crate::device::cuda::driver_error;
use crate::device::cuda::kernels::{kernel_name, key_suffix, RANDOMIZED_SELECT};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::radix;
use crate::select::radix::cuda::{digit_passes, Workspace, NANS_WORD, STATE_WORDS};

const BLOCK: u32 = 256;
/// Threads of the splitter selection's blocks (`RND_SPLIT_BLOCK`).
const SPLIT_BLOCK: u32 = 1024;
/// Sample size.
const SAMPLE: usize = 1 << 16;
/// Inputs shorter than this go to radix select directly.
const MIN_N: usize = 1 << 20;
/// Seed of the sample positions.
const SEED: u64 = 0x5EED_0F5A_3F1E;
/// Bins of the sample's first-digit histogram (`1 << RND_SPLIT_DIGIT`).
const TOP_BINS: usize = 1 << 11;
/// Blocks of the pass per multiprocessor: many small ones balance the grid's tail.
const PASS_BLOCKS_PER_SM: usize = 16;
/// Blocks a multiprocessor for the radix passes over the copies (measured on an H200 at 2^28:
/// 2 a multiprocessor made the passes over the median's 4.2M copies 2.5 times slower than 8).
const COPIES_PASS_BLOCKS_PER_SM: usize = 8;
/// The pass's counters and the splitters' duplicate counts (`RND_COUNTERS`).
const COUNTERS: usize = 7;
/// `rnd_resolve`'s outcome for a rank the bracket missed (`RND_MISSED`).
const MISSED: u32 = 3;

/// Keys each of the two candidate buffers holds for `n` values: about twice the expected copies of
/// a median's bracket (`8·√(s/4) / s ≈ n / 64`).
fn candidate_capacity(n: usize) -> usize {
    n / 32
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
    let stream = dev.stream();
    let x = buf.as_slice().as_view();
    let suffix = key_suffix::<T::Key>();
    let sample_fn = dev.function(&RANDOMIZED_SELECT, &kernel_name("rnd_sample", T::DTYPE))?;
    let split_fn = dev.function(&RANDOMIZED_SELECT, &format!("rnd_splitters_{suffix}"))?;
    let pass_fn = dev.function(&RANDOMIZED_SELECT, &kernel_name("rnd_pass", T::DTYPE))?;
    let resolve_fn = dev.function(&RANDOMIZED_SELECT, &format!("rnd_resolve_{suffix}"))?;

    let (s, n64) = (SAMPLE, n as u64);
    let mut sample = dev.alloc::<T::Key>(s, "the randomized select sample")?;
    let mut top_hist = dev.alloc_zeros::<u32>(TOP_BINS, "the sample's digit histogram")?;
    let (s64, seed) = (s as u64, SEED);
    let mut launch = stream.launch_builder(&sample_fn);
    launch
        .arg(&x)
        .arg(&n64)
        .arg(&mut sample)
        .arg(&s64)
        .arg(&seed)
        .arg(&mut top_hist);
    // SAFETY: rnd_sample_T(const T* x, u64 n, K* sample, u64 s, u64 seed, u32* top_hist): x
    // holds n >= s elements and every position i * (n / s) + (< n / s) is below n; sample
    // holds s keys, top_hist TOP_BINS zeroed counters.
    unsafe { launch.launch(config(s.div_ceil(BLOCK as usize), BLOCK)) }
        .map_err(|e| driver_error("launching rnd_sample", e))?;

    let cap = candidate_capacity(n);
    let mut cand0 = dev.alloc::<T::Key>(cap, "the randomized select copies")?;
    let mut cand1 = dev.alloc::<T::Key>(cap, "the randomized select copies")?;
    let mut state = dev.alloc_zeros::<u64>(STATE_WORDS, "the selection state")?;
    let mut hist = dev.alloc_zeros::<u64>(256, "the selection histogram")?;
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
    let cap64 = cap as u64;
    let mut work = Workspace {
        cand0: &mut cand0,
        cand1: &mut cand1,
        state: &mut state,
        hist: &mut hist,
        cap,
    };
    for (slot, &k) in ranks.iter().enumerate() {
        let (r_lo, r_hi) = splitter_ranks(k, n, s);
        let mut launch = stream.launch_builder(&split_fn);
        launch
            .arg(&sample)
            .arg(&s64)
            .arg(&top_hist)
            .arg(&r_lo)
            .arg(&r_hi)
            .arg(&mut bounds)
            .arg(&mut counters);
        // SAFETY: rnd_splitters_K(const K* sample, u64 s, const u32* top_hist, u64, u64, K*
        // bounds, u64* counters): two blocks of RND_SPLIT_BLOCK threads; sample holds s keys,
        // top_hist TOP_BINS counters, bounds 2, counters COUNTERS.
        unsafe { launch.launch(config(2, SPLIT_BLOCK)) }
            .map_err(|e| driver_error("launching rnd_splitters", e))?;
        let mut launch = stream.launch_builder(&pass_fn);
        launch
            .arg(&x)
            .arg(&n64)
            .arg(&bounds)
            .arg(&mut *work.cand0)
            .arg(&cap64)
            .arg(&mut counters);
        // SAFETY: rnd_pass_T(const T* x, u64 n, const K* bounds, K* cand, u64 cap, u64*
        // counters): x holds n elements, bounds 2 keys, cand `cap` (writes at positions >= cap
        // are skipped), counters COUNTERS.
        unsafe { launch.launch(config(pass_blocks, BLOCK)) }
            .map_err(|e| driver_error("launching rnd_pass", e))?;
        let (k64, slot64) = (k as u64, slot as u64);
        let mut launch = stream.launch_builder(&resolve_fn);
        launch
            .arg(&bounds)
            .arg(&counters)
            .arg(&k64)
            .arg(&cap64)
            .arg(&mut *work.state)
            .arg(&mut *work.hist)
            .arg(&mut results)
            .arg(&mut status)
            .arg(&slot64);
        // SAFETY: rnd_resolve_K(const K* bounds, const u64* counters, u64 k, u64 cap,
        // SelState*, u64* hist, K* result, u32* status, u64 slot): one block; state holds
        // SelState, hist 256 entries, slot < results.len() == status.len().
        unsafe { launch.launch(config(1, BLOCK)) }
            .map_err(|e| driver_error("launching rnd_resolve", e))?;
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
    let keys = read(stream, &results, "the results")?;
    let outcomes = read(stream, &status, "the outcomes")?;
    let words = read(stream, &state, "the selection state")?;
    let mut nans = words[NANS_WORD] as usize;
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

/// Copies a small device buffer to the host.
fn read<V: cudarc::driver::DeviceRepr + Default + Clone>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    buf: &CudaSlice<V>,
    what: &str,
) -> Result<Vec<V>> {
    stream
        .clone_dtoh(buf)
        .map_err(|e| driver_error(&format!("reading {what}"), e))
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
