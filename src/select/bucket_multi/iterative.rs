//! Iterative bucket multiselection on CUDA: bucketMultiSelect's first level, then instead of
//! the final sort the active buckets are split again, level after level (the second phase of
//! Blanchard et al.'s DIBMS, 2024, on one GPU), until every rank is known.
//!
//! The first level needs no pass for the extremes: the sample's extremes bound the 16 kernel
//! density intervals, and two buckets hold everything below and above them. The active buckets
//! of a level are written out each to its own region (the per-block segmented write), so that
//! the next level's segments are those regions: each becomes one interval (its bucket's exact
//! key range, from the projection's inverse) with buckets allotted in proportion to its size,
//! at least two each. Every level narrows each segment's key range by its bucket count, so the
//! levels are bounded by the key width even on repeated values; and a segment that holds one key
//! is a value at once:
//!
//! - stopping rule for repeated values: a segment whose level did not shrink it (all its
//!   elements fell in one bucket), or one of the two outer buckets, has its smallest and
//!   largest keys read (one pass over it); equal extremes answer its ranks, else they become its
//!   next interval. (The paper stops after two levels without shrinking and takes the value;
//!   reading the extremes makes that decision exact.)
//! - segments of at most 16384 elements are sorted on chip, one block each, all of a level in
//!   one launch;
//! - after [`MAX_DEPTH`] levels the ranks left go to radix select over the input, so the worst
//!   case is bounded.
//!
//! Workspace: a level's `u16` oracles (2 bytes per candidate: `2 n` at the first level; without
//! room for them the write classifies the candidates again); each level's written buckets
//! (about `ranks · n / B` keys after the first level, for `B` buckets, up to 16384, shrinking by
//! about `B / ranks` per level), kept while the levels below it run; the per-block counts
//! (`4 B` bytes per count block); the bucket totals and starts (`16 B` bytes); `O(ranks)` words.

use cudarc::driver::{CudaSlice, CudaView, DeviceRepr};

use super::engine::{Level, NONE, SORT_CAP};
use super::plan::{self, Bounds, Interval, SegmentPlan};
use super::run::{candidates, sort_jobs, Candidate, Run};
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;

/// Levels after the first before the ranks left go to radix select on the input.
pub(crate) const MAX_DEPTH: usize = 16;
/// Later levels' chunks are at least this long.
const MIN_LATER_CHUNK: usize = 1 << 12;
const _: () = assert!(MIN_LATER_CHUNK >= super::engine::SHORTEST_CHUNK);

/// Segments of one buffer waiting for their next step.
struct Work<K: DeviceRepr> {
    /// The written buckets.
    keys: CudaSlice<K>,
    /// Each segment's start in `keys` and what is known of it.
    segments: Vec<(u64, Candidate)>,
    /// Levels so far.
    depth: usize,
}

/// The elements of `ranks` (not empty, all `< buf.len()`) by iterative bucket multiselection,
/// and the NaN count (the first level's bucket of the NaN key) when that level ran.
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, Option<usize>)> {
    let n = buf.len();
    let mut run = Run::new(buf, ranks)?;
    if n <= SORT_CAP {
        run.sort_input()?;
        return Ok((run.finish(ranks)?, None));
    }
    let x = buf.as_slice().as_view();
    let (sample, _) = run.eng.first_look(&x, false)?;
    let (level, first) = run.first_level(&sample, Bounds::Open)?;
    // The first level's last bucket holds exactly the largest key: for floats, every NaN's.
    let nans = if T::DTYPE.is_float() {
        level.last_total as usize
    } else {
        0
    };
    let mut stack = Vec::new();
    if let Some(work) = write_out(&mut run, &x, &level, first, 1)? {
        stack.push(work);
    }
    drop(level);
    while let Some(work) = stack.pop() {
        step(&mut run, work, &mut stack)?;
    }
    Ok((run.finish(ranks)?, Some(nans)))
}

/// After a level over `x`: the candidates of one key answer their ranks; the others are written
/// out (segmented) into a new buffer, the work of the next step.
fn write_out<T: Element, E: Element>(
    run: &mut Run<'_, T>,
    x: &CudaView<'_, E>,
    level: &Level,
    candidates: Vec<Candidate>,
    depth: usize,
) -> Result<Option<Work<T::Key>>> {
    let mut dest = vec![NONE; level.actives.len()];
    let mut segments = Vec::new();
    let mut total = 0u64;
    for c in candidates {
        if c.lo == c.hi {
            run.resolve(&c, c.lo);
        } else {
            dest[c.active] = total;
            segments.push((total, c.clone()));
            total += c.count;
        }
    }
    if segments.is_empty() {
        return Ok(None);
    }
    let keys = run
        .eng
        .write_segmented::<E, T::Key>(x, level, &dest, total as usize)?;
    Ok(Some(Work {
        keys,
        segments,
        depth,
    }))
}

/// One step on a buffer's segments: the extremes of the loose ones, then each segment is
/// answered (one key), sorted on chip (small), sent to the input (too deep), or split by a new
/// level (in batches of at most half as many segments as buckets).
fn step<T: Element>(
    run: &mut Run<'_, T>,
    mut work: Work<T::Key>,
    stack: &mut Vec<Work<T::Key>>,
) -> Result<()> {
    let keys = work.keys.as_view();
    let loose: Vec<usize> = (0..work.segments.len())
        .filter(|&i| {
            let c = &work.segments[i].1;
            !c.tight && c.count as usize > SORT_CAP
        })
        .collect();
    if !loose.is_empty() {
        let spans: Vec<(u64, u64)> = loose
            .iter()
            .map(|&i| (work.segments[i].0, work.segments[i].1.count))
            .collect();
        let extremes = run.eng.extremes(&keys, &spans)?;
        for (&i, (lo, hi)) in loose.iter().zip(extremes) {
            let c = &mut work.segments[i].1;
            c.lo = lo;
            c.hi = hi;
            c.tight = true;
        }
    }
    let mut small = Vec::new();
    let mut split = Vec::new();
    for (start, c) in &work.segments {
        if c.lo == c.hi {
            run.resolve(c, c.lo);
        } else if c.count as usize <= SORT_CAP {
            small.push((*start, c.clone()));
        } else if work.depth >= MAX_DEPTH {
            run.send_to_input(&c.ranks);
        } else {
            split.push((*start, c.clone()));
        }
    }
    if !small.is_empty() {
        let starts: Vec<u64> = small.iter().map(|(s, _)| *s).collect();
        let cands: Vec<Candidate> = small.into_iter().map(|(_, c)| c).collect();
        let jobs = sort_jobs(&cands, &starts);
        run.eng.sort_select(&keys, &jobs, &mut run.results)?;
        run.mark_sorted(&jobs);
    }
    let per_batch = (run.eng.buckets / 2).max(1) as usize;
    for batch in split.chunks(per_batch) {
        if let Some(next) = split_level(run, &keys, batch, work.depth + 1)? {
            stack.push(next);
        }
    }
    Ok(())
}

/// A level over some segments of one buffer: each its own interval with buckets in proportion
/// to its size; then the write of its active buckets.
fn split_level<T: Element>(
    run: &mut Run<'_, T>,
    keys: &CudaView<'_, T::Key>,
    batch: &[(u64, Candidate)],
    depth: usize,
) -> Result<Option<Work<T::Key>>> {
    let counts: Vec<u64> = batch.iter().map(|(_, c)| c.count).collect();
    let buckets = plan::allot(&counts, run.eng.buckets);
    let plans: Vec<SegmentPlan> = batch
        .iter()
        .zip(&buckets)
        .map(|((start, c), &b)| SegmentPlan {
            start: *start,
            len: c.count,
            intervals: vec![Interval::new(c.lo, c.hi, b)],
        })
        .collect();
    let layout = plan::layout(plans, 2 * run.eng.count_blocks, MIN_LATER_CHUNK);
    let (mut ranks, mut slots) = (Vec::new(), Vec::new());
    let mut offset = 0u64;
    for (_, c) in batch {
        for &(inner, slot) in &c.ranks {
            ranks.push(offset + inner);
            slots.push(slot);
        }
        offset += c.count;
    }
    let level = run.eng.level(keys, layout, &ranks)?;
    let cands = candidates(&level, &slots, |s, _, count| {
        count < level.layout.plans[s].len
    })?;
    write_out(run, keys, &level, cands, depth)
}
