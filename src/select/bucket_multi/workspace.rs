//! The most device memory the bucket multiselections take: a level (its descriptors, per-block
//! counts, oracles and choice), the writes of its active buckets, and the runs built of them.
//!
//! The bounds follow the allocations of `engine`, `run`, `bms` and `iterative`: what a run keeps
//! (the results) is added to the largest of its phases, and every phase adds the buffers alive
//! at once.

use super::engine::{Engine, SHORTEST_CHUNK, SORT_CAP};
use super::plan::SAMPLE;
use crate::device::cuda::kernels::bucket_multiselect::{
    CHUNK_WORDS, INTERVAL_WORDS, SEGMENT_WORDS,
};
use crate::device::cuda::{CudaDevice, MemoryNeed};
use crate::element::Element;
use crate::error::Result;
use crate::select::{radix, sort_choose};

/// The most device memory of a level over `len` elements in at most `segments` segments that
/// hold `ranks` ranks, before its write: the descriptors, the per-block counts (each chunk of a
/// segment counts the segment's buckets; a level has at most twice the engine's count blocks
/// and one more a segment, none shorter than [`SHORTEST_CHUNK`] unless its segment is), the
/// oracles and the choice's buffers.
fn level(eng: &Engine<'_>, len: usize, ranks: usize, segments: usize) -> MemoryNeed {
    let buckets = eng.buckets as usize;
    let target = 2 * eng.count_blocks;
    let chunks = target + segments;
    let descriptors = MemoryNeed::of::<u64>(
        CHUNK_WORDS * chunks + SEGMENT_WORDS * segments + INTERVAL_WORDS * buckets + ranks,
    );
    let partial = MemoryNeed::of::<u32>(buckets * (target.min(len / SHORTEST_CHUNK) + 1));
    let mask = MemoryNeed::of::<u32>(buckets / 32 + 1);
    let choice = MemoryNeed::of::<u64>(buckets)
        .and(MemoryNeed::of::<u64>(buckets + 1))
        .and(MemoryNeed::of::<u64>(ranks))
        .and(mask)
        .and(mask)
        .and(MemoryNeed::of::<u64>(2 + 4 * ranks));
    descriptors
        .and(partial)
        .and(MemoryNeed::of::<u16>(len))
        .and(choice)
}

/// The most device memory of either write of a level's active buckets (at most `len` keys of
/// `T` and `ranks` active buckets): the keys written and the write's own words.
fn write<T: Element>(eng: &Engine<'_>, len: usize, ranks: usize) -> MemoryNeed {
    let segmented = MemoryNeed::of::<u64>(ranks).and(MemoryNeed::of::<u64>(ranks));
    let flags = MemoryNeed::of::<u32>(eng.buckets as usize / 32 + 1).and(MemoryNeed::of::<u64>(1));
    MemoryNeed::of::<T::Key>(len).and(segmented.or(flags))
}

/// The most device memory of the on-chip sorts of jobs holding `ranks` ranks (one size class at
/// a time: four words a job and two a rank).
pub(crate) fn sort_select(ranks: usize) -> MemoryNeed {
    MemoryNeed::of::<u64>(6 * ranks)
}

/// The most device memory of the first look at the input: the sample and the extremes.
fn first_look<T: Element>() -> MemoryNeed {
    MemoryNeed::of::<T::Key>(SAMPLE).and(MemoryNeed::of::<u64>(3))
}

/// What a run keeps from start to end (its results), and its end: radix select over the input
/// for the ranks sent there.
fn around_run<T: Element>(
    dev: &CudaDevice,
    n: usize,
    ranks: usize,
    body: MemoryNeed,
) -> MemoryNeed {
    MemoryNeed::of::<T::Key>(ranks).and(body.or(radix::cuda::workspace::<T>(dev, n, ranks)))
}

/// The most device memory iterative bucket multiselection takes on `dev` for `n` values of `T`
/// and `ranks` ranks. After the first level and its write, the written buffers alive at once
/// hold at most `2n` keys (the buffer being split, the buffers waiting, which are disjoint from
/// it, and the ones written from it), at most one buffer a rank.
pub(crate) fn iterative<T: Element>(
    dev: &CudaDevice,
    n: usize,
    ranks: usize,
) -> Result<MemoryNeed> {
    let eng = Engine::new(dev, T::DTYPE.name())?;
    if n <= SORT_CAP {
        return Ok(around_run::<T>(dev, n, ranks, sort_select(ranks)));
    }
    let segments = ranks.min(eng.buckets as usize / 2).max(1);
    let first = level(&eng, n, ranks, 1).and(write::<T>(&eng, n, ranks));
    let loose_extremes = MemoryNeed::of::<u64>(CHUNK_WORDS * (n / SORT_CAP + ranks))
        .and(MemoryNeed::of::<u64>(2 * ranks));
    let steps = MemoryNeed::of::<T::Key>(n)
        .and(write::<T>(&eng, n, ranks))
        .and(MemoryNeed::bytes(ranks * MemoryNeed::GRANULE))
        .and(
            level(&eng, n, ranks, segments)
                .or(loose_extremes)
                .or(sort_select(ranks)),
        );
    Ok(around_run::<T>(
        dev,
        n,
        ranks,
        first_look::<T>().or(first).or(steps),
    ))
}

/// The most device memory bucketMultiSelect takes on `dev` for `n` values of `T` and `ranks`
/// ranks: the first level and its write, then the written keys sorted on chip or by a radix
/// sort with the gather of the ranks.
pub(crate) fn bms<T: Element>(dev: &CudaDevice, n: usize, ranks: usize) -> Result<MemoryNeed> {
    let eng = Engine::new(dev, T::DTYPE.name())?;
    if n <= SORT_CAP {
        return Ok(around_run::<T>(dev, n, ranks, sort_select(ranks)));
    }
    let first = level(&eng, n, ranks, 1).and(write::<T>(&eng, n, ranks));
    let sort = sort_choose::cuda::sort_workspace::<T::Key>(n, false)
        .or(sort_choose::cuda::gather_workspace::<T>(ranks))
        .or(sort_select(ranks));
    let reduced = MemoryNeed::of::<T::Key>(n).and(sort);
    Ok(around_run::<T>(
        dev,
        n,
        ranks,
        first_look::<T>().or(first).or(reduced),
    ))
}
