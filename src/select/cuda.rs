//! The CUDA backend: NaN scans and dispatch to the algorithms' CUDA parts.

use cudarc::driver::PushKernelArg;

use crate::device::cuda::driver_error;
use crate::device::cuda::kernels::{kernel_name, REDUCE};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::nan::NanScan;
use crate::select::{
    bucket, cutting_plane, quick, radix, randomized, sample, sort_choose, Algorithm,
};

/// From this size on, `Auto` runs randomizedSelect on CUDA; below it, radix select. Measured
/// on an H200 (`BENCHMARKS.md`): randomizedSelect's fixed cost (the sample, its splitters and
/// three waits for counts) makes it slower than radix select up to 2^24 values and faster from
/// 2^26 on, on every distribution.
const AUTO_RANDOMIZED_FROM: usize = 1 << 25;

/// What `Algorithm::Auto` runs on CUDA for `n` values.
pub(crate) fn auto_algorithm(n: usize, _ranks: usize) -> Algorithm {
    if n >= AUTO_RANDOMIZED_FROM {
        Algorithm::Randomized
    } else {
        Algorithm::Radix
    }
}

/// Counts the NaNs of a float buffer on the device.
pub(crate) fn nan_scan<T: Element>(buf: &DeviceBuffer<T>) -> Result<NanScan> {
    let n = buf.len();
    if !T::DTYPE.is_float() || n == 0 {
        return Ok(NanScan::NONE);
    }
    let dev = buf.device();
    let stream = dev.stream();
    let mut out = stream
        .clone_htod(&[0u64, u64::MAX])
        .map_err(|e| driver_error("initialising the NaN count", e))?;
    let f = dev.function(&REDUCE, &kernel_name("count_nan", T::DTYPE))?;
    let n64 = n as u64;
    let mut launch = stream.launch_builder(&f);
    launch.arg(buf.as_slice()).arg(&n64).arg(&mut out);
    // SAFETY: count_nan_T(const T*, u64 n, u64* out): the buffer holds n elements, out 2 words.
    unsafe { launch.launch(config(stride_blocks(n, 256, dev.multiprocessors(), 8), 256)) }
        .map_err(|e| driver_error("launching count_nan", e))?;
    let host = stream
        .clone_dtoh(&out)
        .map_err(|e| driver_error("reading the NaN count", e))?;
    Ok(NanScan {
        count: host[0] as usize,
        first_index: if host[0] == 0 {
            usize::MAX
        } else {
            host[1] as usize
        },
    })
}

/// The elements of `ranks` (all `< buf.len()`, not empty) by `algorithm` on the buffer's
/// device, and the NaN count when the algorithm counted it on the way (radix select,
/// randomizedSelect and bucketSelect do).
pub(crate) fn multiselect<T: Element>(
    algorithm: Algorithm,
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, Option<usize>)> {
    match algorithm {
        Algorithm::Auto => multiselect(auto_algorithm(buf.len(), ranks.len()), buf, ranks),
        Algorithm::SortChoose => Ok((sort_choose::cuda::multiselect(buf, ranks)?, None)),
        Algorithm::Radix => {
            let (values, nans) = radix::cuda::multiselect(buf, ranks)?;
            Ok((values, Some(nans)))
        }
        Algorithm::RadixInPlace => {
            let (values, nans) = radix::cuda::multiselect_in_place(buf, ranks)?;
            Ok((values, Some(nans)))
        }
        Algorithm::Randomized => {
            let (values, nans) = randomized::cuda::multiselect(buf, ranks)?;
            Ok((values, Some(nans)))
        }
        Algorithm::Bucket => {
            let (values, nans) = bucket::cuda::multiselect(buf, ranks)?;
            Ok((values, Some(nans)))
        }
        Algorithm::Sample => {
            let (values, nans) = sample::cuda::multiselect(buf, ranks)?;
            Ok((values, Some(nans)))
        }
        Algorithm::Quick => {
            let (values, nans) = quick::cuda::multiselect(buf, ranks)?;
            Ok((values, Some(nans)))
        }
        Algorithm::CuttingPlane => {
            let (values, nans) = cutting_plane::multiselect(buf, ranks)?;
            Ok((values, Some(nans)))
        }
        other => Err(Error::UnsupportedAlgorithm {
            algorithm: other.name().to_string(),
            backend: "cuda".to_string(),
            available: Algorithm::names(Algorithm::cuda_algorithms()),
        }),
    }
}
