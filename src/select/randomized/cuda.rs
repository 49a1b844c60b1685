//! randomizedSelect on CUDA (`kernels/randomized_select.cu`).
//!
//! A sample of `s = 2^16` elements (one from each of `s` equal strides, at a hashed offset)
//! gives two splitters, selected in the sample by radix select, that bracket rank `k` with
//! high probability: the sample ranks `p·s ± (4σ + 2)` for `p = (k + ½) / n` and
//! `σ = √(s·p·(1 − p))`. One fused pass over the input counts the keys below the lower splitter
//! and those equal to each splitter, counts the NaNs, and copies the elements strictly between
//! the splitters (about `8 / √s ≈ 3 %` of `n`) with one atomic per block. A rank that falls on
//! a splitter's duplicates is that splitter; one between them is selected among the copies by
//! radix select. When the bracket misses the rank or the copies outgrow the workspace, the rank
//! is selected by radix select over the whole input: the result is always exact. Inputs under
//! 2^20 go to radix select directly.
//!
//! Workspace: `n / 16` elements for the copies, the sample, and radix select's workspace for
//! the copies (at most `n / 128` keys).

use cudarc::driver::PushKernelArg;

use crate::device::cuda::driver_error;
use crate::device::cuda::kernels::{kernel_name, RANDOMIZED_SELECT};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::select::radix;

const BLOCK: u32 = 256;
/// Sample size.
const SAMPLE: usize = 1 << 16;
/// Inputs shorter than this go to radix select directly.
const MIN_N: usize = 1 << 20;
/// Seed of the sample positions.
const SEED: u64 = 0x5EED_0F5A_3F1E;

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
    let (s, n64) = (SAMPLE, n as u64);
    let mut sample = dev.alloc::<T>(s, "the randomized select sample")?;
    let sample_fn = dev.function(&RANDOMIZED_SELECT, &kernel_name("rnd_sample", T::DTYPE))?;
    let (s64, seed) = (s as u64, SEED);
    let mut launch = stream.launch_builder(&sample_fn);
    launch
        .arg(buf.as_slice())
        .arg(&n64)
        .arg(&mut sample)
        .arg(&s64)
        .arg(&seed);
    // SAFETY: rnd_sample_T(const T* x, u64 n, T* sample, u64 s, u64 seed): x holds n >= s
    // elements and every position i * (n / s) + (< n / s) is below n; sample holds s.
    unsafe { launch.launch(config(s.div_ceil(BLOCK as usize), BLOCK)) }
        .map_err(|e| driver_error("launching rnd_sample", e))?;
    let cap = n / 16;
    let mut cand = dev.alloc::<T>(cap, "the randomized select copies")?;
    let pass_fn = dev.function(&RANDOMIZED_SELECT, &kernel_name("rnd_pass", T::DTYPE))?;
    let blocks = stride_blocks(
        n.div_ceil(16 / std::mem::size_of::<T>()),
        BLOCK,
        dev.multiprocessors(),
        8,
    );
    let mut values = Vec::with_capacity(ranks.len());
    let mut nans = 0;
    for &k in ranks {
        let (lo, hi) = splitters(dev, &sample, k, n)?;
        let mut counters = dev.alloc_zeros::<u64>(5, "the randomized select counters")?;
        let cap64 = cap as u64;
        let mut launch = stream.launch_builder(&pass_fn);
        launch
            .arg(buf.as_slice())
            .arg(&n64)
            .arg(&lo)
            .arg(&hi)
            .arg(&mut cand)
            .arg(&cap64)
            .arg(&mut counters);
        // SAFETY: rnd_pass_T(const T* x, u64 n, K lo, K hi, T* cand, u64 cap, u64* counters):
        // x holds n elements, cand `cap` (writes at positions >= cap are skipped), counters 5.
        unsafe { launch.launch(config(blocks, BLOCK)) }
            .map_err(|e| driver_error("launching rnd_pass", e))?;
        let c = stream
            .clone_dtoh(&counters)
            .map_err(|e| driver_error("reading the randomized select counts", e))?;
        let (below, between, eq_lo, eq_hi) =
            (c[0] as usize, c[1] as usize, c[3] as usize, c[4] as usize);
        nans = c[2] as usize;
        // Ranks in order: below lo, equal to lo, strictly between, equal to hi, above.
        let first_between = below + eq_lo;
        let first_hi = first_between + between;
        let value = if k < below || k >= first_hi + eq_hi {
            // The bracket missed.
            radix::cuda::multiselect(buf, &[k])?.0[0]
        } else if k < first_between {
            T::from_key(lo)
        } else if k >= first_hi {
            T::from_key(hi)
        } else if between <= cap {
            let copies = cand.slice(0..between);
            radix::cuda::multiselect_in(dev, &copies, &[k - first_between])?.0[0]
        } else {
            radix::cuda::multiselect(buf, &[k])?.0[0]
        };
        values.push(value);
    }
    Ok((values, nans))
}

/// The keys of two sample elements bracketing rank `k` of `n` with high probability (the
/// smallest and largest keys when the bracket reaches an end of the sample).
fn splitters<T: Element>(
    dev: &crate::device::CudaDevice,
    sample: &cudarc::driver::CudaSlice<T>,
    k: usize,
    n: usize,
) -> Result<(T::Key, T::Key)> {
    let s = sample.len() as f64;
    let p = (k as f64 + 0.5) / n as f64;
    let width = 4.0 * (s * p * (1.0 - p)).sqrt() + 2.0;
    let (r_lo, r_hi) = (p * s - width, p * s + width);
    let mut wanted = Vec::with_capacity(2);
    if r_lo >= 0.0 {
        wanted.push(r_lo as usize);
    }
    if r_hi < s - 1.0 {
        wanted.push(r_hi.ceil() as usize);
    }
    let picked = if wanted.is_empty() {
        Vec::new()
    } else {
        radix::cuda::multiselect_in(dev, &sample.as_view(), &wanted)?.0
    };
    let lo = if r_lo >= 0.0 {
        picked[0].to_key()
    } else {
        T::Key::MIN
    };
    let hi = if r_hi < s - 1.0 {
        picked[picked.len() - 1].to_key()
    } else {
        T::Key::MAX
    };
    Ok((lo, hi))
}
