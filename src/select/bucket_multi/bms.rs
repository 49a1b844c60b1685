//! bucketMultiSelect (Blanchard, Chen & Kim 2016) on CUDA: the input's extremes and a sample of
//! 1024 give 16 kernel density intervals between them (a repeated pivot gets an interval of its
//! own); the buckets are shared equally among the intervals, each projected linearly; one pass
//! counts them per block, a one-block kernel finds the active buckets by prefix sums, a second
//! pass writes the active buckets' elements out, and sort&choose on that reduced vector gives
//! the ranks. A bucket that holds one key answers its ranks at once and is not written.
//!
//! The reduced vector is written by the per-block segmented write (each active bucket to its own
//! region, each block to its reserved places in it) when there are at most
//! [`SEGMENTED_UP_TO`] active buckets to write (4096 for 32-bit keys, 1024 for 64-bit ones), and
//! by the flag-based write (all of them appended in no order) above that. Segments of at most 16384 elements are then sorted on chip,
//! one block each; otherwise the whole reduced vector is radix sorted (`sort_keys`).
//!
//! Workspace: each element's bucket as a `u16` oracle (`2 n` bytes; without room for them the
//! write classifies the elements again), the reduced vector (the active buckets' elements:
//! about `ranks · n / B` keys for `B` buckets, up to 16384), the per-block counts (`4 B` bytes
//! per count block, two or three blocks per multiprocessor), the bucket totals and starts
//! (`16 B` bytes), the radix sort's second buffer when it sorts, and `O(ranks)` words.

use super::engine::SORT_CAP;
use super::plan::Bounds;
use super::run::{sort_jobs, Candidate, Run};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::select::sort_choose;

/// The most active buckets the per-block segmented write takes, for 32-bit and for 64-bit keys;
/// more go to the flag-based write. Blanchard et al. tuned this cutoff (their `α2`) per data
/// type on a K40. Ours was measured on an H200 by `measure_reduction_cutoff` (an ignored test
/// of this module: the whole selection with each write, 2^26 uniform values, evenly spaced
/// ranks): f32 was faster segmented up to 2048 ranks (3.78 against 3.91 ms) and with flags at
/// 8191 (6.17 against 6.46 ms); f64 segmented up to 512 (3.13 against 3.14 ms), with flags from
/// 2048 (6.01 against 6.28 ms). The cutoffs sit between.
pub(crate) const SEGMENTED_UP_TO: [usize; 2] = [4096, 1024];

/// How the active buckets are written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Reduction {
    /// By [`SEGMENTED_UP_TO`].
    Measured,
    /// Always the per-block segmented write.
    Segmented,
    /// Always the flag-based write.
    Flags,
}

/// The elements of `ranks` (not empty, all `< buf.len()`) by bucketMultiSelect, and the NaN
/// count when the extremes pass counted it.
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, Option<usize>)> {
    multiselect_with(buf, ranks, Reduction::Measured)
}

/// [`multiselect`] with the reduction chosen.
pub(crate) fn multiselect_with<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
    reduction: Reduction,
) -> Result<(Vec<T>, Option<usize>)> {
    let n = buf.len();
    let mut run = Run::new(buf, ranks)?;
    if n <= SORT_CAP {
        run.sort_input()?;
        return Ok((run.finish(ranks)?, None));
    }
    let x = buf.as_slice().as_view();
    let (sample, extremes) = run.eng.first_look(&x, true)?;
    let Some((min, max, nans)) = extremes else {
        return Err(super::engine::inconsistent("the extremes were not read"));
    };
    if min == max {
        // One value (the paper's shortcut).
        for slot in 0..run.ranks.len() {
            run.found[slot] = Some(T::Key::from_u64(min));
        }
        return Ok((run.finish(ranks)?, Some(nans)));
    }
    let (level, candidates) = run.first_level(&sample, Bounds::Exact { min, max })?;
    let mut dest = vec![super::engine::NONE; level.actives.len()];
    let mut kept: Vec<Candidate> = Vec::new();
    let mut total = 0u64;
    for c in candidates {
        if c.lo == c.hi {
            run.resolve(&c, c.lo);
        } else {
            dest[c.active] = total;
            total += c.count;
            kept.push(c);
        }
    }
    if kept.is_empty() {
        return Ok((run.finish(ranks)?, Some(nans)));
    }
    let segmented = match reduction {
        Reduction::Measured => kept.len() <= SEGMENTED_UP_TO[(T::Key::BITS == 64) as usize],
        Reduction::Segmented => true,
        Reduction::Flags => false,
    };
    let dev = buf.device();
    let starts: Vec<u64> = kept.iter().map(|c| dest[c.active]).collect();
    if segmented {
        let reduced = run
            .eng
            .write_segmented::<T, T::Key>(&x, &level, &dest, total as usize)?;
        drop(level);
        if kept.iter().all(|c| c.count as usize <= SORT_CAP) {
            let jobs = sort_jobs(&kept, &starts);
            run.eng
                .sort_select(&reduced.as_view(), &jobs, &mut run.results)?;
            run.mark_sorted(&jobs);
        } else {
            sort_and_choose(&mut run, dev, reduced, &kept, &starts)?;
        }
    } else {
        let keep: Vec<u64> = kept.iter().map(|c| level.actives[c.active].0).collect();
        let reduced = run
            .eng
            .write_flags::<T, T::Key>(&x, &level, &keep, total as usize)?;
        drop(level);
        sort_and_choose(&mut run, dev, reduced, &kept, &starts)?;
    }
    Ok((run.finish(ranks)?, Some(nans)))
}

/// sort&choose on the reduced vector: a radix sort of all its keys, then each rank at its
/// bucket's start in it plus its rank inside the bucket.
fn sort_and_choose<T: Element>(
    run: &mut Run<'_, T>,
    dev: &crate::device::cuda::CudaDevice,
    mut reduced: cudarc::driver::CudaSlice<T::Key>,
    kept: &[Candidate],
    starts: &[u64],
) -> Result<()> {
    sort_choose::cuda::sort_keys(dev, &mut reduced, None)?;
    let mut positions = Vec::new();
    let mut slots = Vec::new();
    for (c, &start) in kept.iter().zip(starts) {
        for &(inner, slot) in &c.ranks {
            positions.push((start + inner) as usize);
            slots.push(slot);
        }
    }
    let values = sort_choose::cuda::gather::<T>(dev, &reduced, &positions)?;
    for (slot, v) in slots.into_iter().zip(values) {
        run.found[slot] = Some(v.to_key());
    }
    Ok(())
}
