//! randomizedSelect on CUDA (`kernels/randomized_select.cu`).
//!
//! A sample of `s = 2^16` elements (one from each of `s` equal strides, at a hashed offset) gives
//! two splitters, selected in the sample by radix select, that bracket rank `k` with high
//! probability: the sample ranks `p·s ± (4σ + 2)` for `p = (k + ½) / n` and `σ = √(s·p·(1 − p))`.
//! One fused pass over the input counts the keys below the lower splitter and the NaNs, and copies
//! the keys of the bracket less the lower splitter (at most about `4 / √s ≈ 1.6 %` of `n`), each
//! warp staging them in shared memory and writing them out with one atomic per few hundred. The
//! pass has two forms. The lean one copies the closed bracket `[lo, hi]` (one subtraction and one
//! comparison a key); it runs when the sample holds each splitter at most 64 times. Otherwise
//! (`lo = hi`, or a splitter the input seems to repeat often) the full form copies only the keys
//! strictly between the splitters and counts those equal to each, so that a value repeated millions
//! of times costs no workspace; a rank on a splitter's duplicates is then that splitter. A rank
//! among the copies is selected there by radix select, starting below the leading digits that the
//! bracket's width leaves zero (a median's copies of uniform f32 take three digits instead of four,
//! f64 six instead of eight). When the bracket misses the rank or the copies outgrow the workspace,
//! the rank is selected by radix select over the whole input: the result is always exact. Inputs
//! under 2^20 go to radix select directly.
//!
//! Everything runs on the device's stream without a round trip: the sample's keys are gathered,
//! two one-block radix selections pick the splitters from the L2-resident sample, the pass reads
//! them from device memory, a one-block kernel places the rank among the counts and starts the
//! radix selection of the copies (`radix::cuda::digit_passes`), and the host reads the results
//! (the keys, each rank's outcome and the NaN count, from a mailbox when they fit one) once at the
//! end.
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
use crate::select::radix::cuda::{digit_passes, elements_of, Workspace};

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
        .and(MemoryNeed::of::<u64>(2 * ranks + 1))
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
    // The state and the histogram are set by `rnd_resolve` before the passes read them.
    let mut state = dev.alloc::<SelState>(1, "the selection state")?;
    let mut hist = dev.alloc::<u64>(RADIX, "the selection histogram")?;
    let mut bounds = dev.alloc::<T::Key>(2, "the splitters")?;
    let mut counters = dev.alloc::<u64>(COUNTERS, "the pass counters")?;
    // Each rank's key, each rank's outcome, the NaN count.
    let r = ranks.len();
    let mut out = dev.result_words(2 * r + 1, "the results")?;
    let mut words = out.view_mut(0..2 * r + 1);
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
            &mut words,
            slot as u64,
            r as u64,
        )?;
        // Selects among the copies in buffer 0 (a source the passes find empty when the
        // rank was resolved or missed).
        digit_passes(
            dev,
            &x,
            &mut work,
            &mut words,
            slot,
            2 * r,
            COPIES_PASS_BLOCKS_PER_SM,
        )?;
    }
    let words = out.read()?;
    let mut values: Vec<T> = elements_of(&words[..r]);
    let mut nans = words[2 * r] as usize;
    let missed: Vec<usize> = (0..r).filter(|&slot| words[r + slot] == MISSED).collect();
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
    use crate::device::cuda::tests::gpu;

    /// Multiselects `ranks` of `data` on `dev` and compares the keys and the NaN count with a
    /// sort's.
    fn check_against_a_sort<T: Element>(dev: &CudaDevice, data: &[T], ranks: &[usize], what: &str) {
        let buf = DeviceBuffer::from_host_on(dev, data).unwrap();
        let mut keys: Vec<T::Key> = data.iter().map(|v| v.to_key()).collect();
        keys.sort_unstable();
        let (got, nans) = multiselect(&buf, ranks).unwrap();
        let got: Vec<T::Key> = got.iter().map(|v| v.to_key()).collect();
        let want: Vec<T::Key> = ranks.iter().map(|&k| keys[k]).collect();
        assert_eq!(got, want, "{what}");
        assert_eq!(nans, data.iter().filter(|v| v.is_nan()).count(), "{what}");
    }

    /// A hash of `i` in `[0, 2^bits)`.
    fn hashed(i: usize, bits: u32) -> u64 {
        (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)
    }

    /// The copies, keys less the lower splitter, select what a sort gives: brackets across an
    /// exponent (uniform f32 about 0.5) and across the sign (i64 about 0), brackets open on one
    /// side (the ends, NaNs among the keys), and splitters the sample repeats (the full form).
    #[test]
    fn copies_less_the_lower_splitter_select_what_a_sort_gives() {
        let Some(dev) = gpu() else { return };
        let n = (1usize << 21) + 5;
        let mut uniform: Vec<f32> = (0..n)
            .map(|i| hashed(i, 24) as f32 / (1u32 << 24) as f32)
            .collect();
        uniform[17] = f32::NAN;
        uniform[n / 3] = f32::NAN;
        let ranks = [0, 1, n / 100, n / 2, n / 2 + 1, n - 4, n - 3];
        check_against_a_sort(&dev, &uniform, &ranks, "uniform f32");
        let signed: Vec<i64> = (0..n)
            .map(|i| hashed(i, 40) as i64 - (1i64 << 39))
            .collect();
        check_against_a_sort(&dev, &signed, &[0, n / 2, n - 1], "i64 about 0");
        let levels: Vec<f64> = (0..n).map(|i| hashed(i, 7) as f64 - 60.0).collect();
        check_against_a_sort(&dev, &levels, &[0, n / 3, n / 2, n - 1], "128 levels");
        let wide: Vec<u32> = (0..n).map(|i| hashed(i, 32) as u32).collect();
        check_against_a_sort(&dev, &wide, &[n / 2, n - 1], "u32 over every digit");
    }

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
