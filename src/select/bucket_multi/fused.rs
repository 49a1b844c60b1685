//! Fused bucket multiselection on CUDA (`kernels/fused_multiselect.cu`): bucketMultiSelect's
//! count and write in one pass over the input, the buckets to write predicted by a count over
//! a subset of it.
//!
//! - A one-block plan reads a 16384-element sample: coarse bins of equal width (a power of
//!   two) cover its key range, one more below it, and each bin gets a power of two of equal
//!   buckets (about its share of the sample; 16384 buckets in all), so that a key's bucket is
//!   one shared-table read, a shift and an add: no search, no minimum and maximum pass. Keys
//!   below and above the bins and the largest key (every NaN) have buckets of their own.
//! - A subset count reads one 64-byte piece in `G` (hashed; `G` of 16, 8, 4 or 2, the sparsest
//!   whose expected kept share is at most 7 %), counting every bucket; its prefix sums, scaled,
//!   place each wanted rank within `4.5σ` of the subset estimate, and the buckets that window
//!   touches are marked.
//! - The fused pass counts every element in its bucket and appends the keys of the marked
//!   buckets to a workspace: the mark is the shared counter's top bit, so the atomic that
//!   counts a key also says whether to keep it. At 2^28 values and 101 percentiles about 8 % of
//!   the keys are kept.
//! - Exact bucket totals give each rank's bucket; each such ("active") bucket gets a segment of
//!   a second workspace, one pass over the first moves their keys there, and one block per rank
//!   narrows its segment by 8-bit digits while more than 4096 keys remain, then sorts them on
//!   chip.
//!
//! Everything runs on the stream without a round trip; the host reads the status word and the
//! results with one copy, and uses the results when the status is clear. When the prediction
//! missed a rank's bucket, a workspace would overflow, or an
//! active bucket holds more than 2^20 keys (heavily repeated values), the status says so and
//! the ranks are selected by iterative bucket multiselection instead: the result is exact, and
//! the extra cost is bounded by the work done before (about two reads of the input).
//!
//! Runs with more than [`MAX_RANKS`] distinct ranks, or whose expected kept share exceeds 11 %
//! even with `G = 2` (the windows grow as `√n` per rank: 101 percentiles need about 2^24
//! values), take the exact form, up to [`MAX_EXACT_RANKS`] distinct ranks: the plan, then a pass
//! counting every element, whose exact totals give each rank's bucket; a second pass appends
//! the keys of those buckets, and the gather and the final step follow as above. Two reads of
//! the input and no prediction; 1001 percentiles keep about 6 % of it. (Moving the keys straight
//! to their segments from the second pass, each block to its place in each, was slower: every
//! key a scattered write whose sector the streaming input evicts before it fills.) Runs on fewer than [`MIN_LEN`]
//! values or with more ranks are iterative bucket multiselections, as are runs whose form
//! failed.
//!
//! Workspace: `n / 6` keys for the kept keys, up to `8·r·n / 16384` keys for the active
//! buckets' segments (the exact form: `n / 3`), per-block bucket counts (`64 KiB` a block of
//! the fused pass), and about `300 KiB` of words (the exact form: `900 KiB`).

use super::iterative;
use crate::device::cuda::driver_error;
use crate::device::cuda::kernels::fused_multiselect::{
    fms_append, fms_choose, fms_count, fms_final, fms_fused, fms_gather, fms_plan, fms_predict,
    fms_settle, fms_subset, fms_totals, gather_shared, BLOCK, BUCKETS, CHOICE, MARK_WORDS,
    ONE_BLOCK, PARAMS, TABLE, TOTAL_GROUP,
};
use crate::device::cuda::kernels::{as_u32_words, kernel_name, key_suffix, FUSED_MULTISELECT};
use crate::device::cuda::launch::{allow_shared, config, shaped, shared_memory};
use crate::device::cuda::{CudaDevice, MemoryNeed};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::select::prediction;
use cudarc::driver::{CudaFunction, CudaSlice, CudaViewMut};

pub(crate) use crate::device::cuda::kernels::fused_multiselect::MAX_RANKS;

/// Distinct ranks an exact run takes: their buckets hold about an eighth of the input.
pub(crate) const MAX_EXACT_RANKS: usize = 2048;

/// Inputs shorter than this are iterative bucket multiselections.
pub(crate) const MIN_LEN: usize = 1 << 20;
/// Shared memory the fused pass needs besides its counters (its table and warp stages).
const PASS_STATIC_SHARED: usize = 42 * 1024;
/// The kept share the subset's group is chosen for.
const KEPT_TARGET: f64 = 0.07;
/// The kept share above which a run is not fused (the workspace holds `n / 6` keys, and the
/// prediction fails the run above 80 % of it).
const KEPT_LIMIT: f64 = 0.11;
/// The segments' workspace holds this many times a rank's share of buckets' keys
/// (`n / buckets` a bucket on average).
const SEGMENT_SLACK: usize = 8;
/// Seed of the sample and the subset.
const SEED: u64 = 0x000F_05ED_B0C4_E75E;

/// Offsets (in u64 words) of the run's zeroed words (the marks, `u32` words, are a buffer of
/// their own; the status is the low half of its word).
struct Layout {
    totals: usize,
    count: usize,
    params: usize,
    status: usize,
    choice: usize,
    results: usize,
    starts: usize,
    ranks: usize,
    act: usize,
    info: usize,
    segs: usize,
    len: usize,
}

impl Layout {
    /// The layout for `r` ranks, from the subset's totals (the exact form: the active buckets'
    /// sizes) at 0. The status, the choice and the results are adjacent: the host reads them
    /// with one copy.
    fn new(r: usize) -> Layout {
        let totals = BUCKETS;
        let count = totals + BUCKETS;
        let params = count + 1;
        let status = params + PARAMS;
        let choice = status + 1;
        let results = choice + CHOICE;
        let starts = results + r;
        let ranks = starts + BUCKETS + 1;
        let act = ranks + r;
        let info = act + 4 * r;
        let segs = info + 2 * r;
        Layout {
            totals,
            count,
            params,
            status,
            choice,
            results,
            starts,
            ranks,
            act,
            info,
            segs,
            len: segs + BUCKETS + 1,
        }
    }
}

/// A run's words split into their regions (see [`Layout`]).
struct Regions<'a> {
    /// The subset's totals (the exact form: the active buckets' sizes).
    first: CudaViewMut<'a, u64>,
    totals: CudaViewMut<'a, u64>,
    count: CudaViewMut<'a, u64>,
    params: CudaViewMut<'a, u64>,
    status: CudaViewMut<'a, u64>,
    choice: CudaViewMut<'a, u64>,
    results: CudaViewMut<'a, u64>,
    starts: CudaViewMut<'a, u64>,
    ranks: CudaViewMut<'a, u64>,
    act: CudaViewMut<'a, u64>,
    info: CudaViewMut<'a, u64>,
    segs: CudaViewMut<'a, u64>,
}

/// Splits a run's `words` (a `CudaSlice<u64>` of at least `lay.len`) by `lay` into `$out`, a
/// [`Regions`] borrowing them; the intermediate views live in the caller's scope.
macro_rules! split_regions {
    ($lay:expr, $words:expr => $out:ident) => {
        let lay: &Layout = &$lay;
        let (first, mut rest) = $words.split_at_mut(lay.totals);
        let (totals, mut rest) = rest.split_at_mut(lay.count - lay.totals);
        let (count, mut rest) = rest.split_at_mut(lay.params - lay.count);
        let (params, mut rest) = rest.split_at_mut(lay.status - lay.params);
        let (status, mut rest) = rest.split_at_mut(lay.choice - lay.status);
        let (choice, mut rest) = rest.split_at_mut(lay.results - lay.choice);
        let (results, mut rest) = rest.split_at_mut(lay.starts - lay.results);
        let (starts, mut rest) = rest.split_at_mut(lay.ranks - lay.starts);
        let (ranks, mut rest) = rest.split_at_mut(lay.act - lay.ranks);
        let (act, mut rest) = rest.split_at_mut(lay.info - lay.act);
        let (info, segs) = rest.split_at_mut(lay.segs - lay.info);
        let $out = Regions {
            first,
            totals,
            count,
            params,
            status,
            choice,
            results,
            starts,
            ranks,
            act,
            info,
            segs,
        };
    };
}

/// The elements of `ranks` (not empty, all `< buf.len()`) and the NaN count.
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, Option<usize>)> {
    let mut distinct = ranks.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if buf.len() < MIN_LEN || distinct.len() > MAX_EXACT_RANKS {
        return iterative::multiselect(buf, ranks);
    }
    let mut outcome = Err(0);
    if distinct.len() <= MAX_RANKS {
        outcome = fused_run(buf, &distinct)?;
    }
    if outcome == Err(0) {
        outcome = exact_run(buf, &distinct)?;
    }
    match outcome {
        Ok((keys, top)) => {
            let values = ranks
                .iter()
                .map(|k| {
                    let slot = distinct.binary_search(k).unwrap_or(0);
                    T::from_key(T::Key::from_u64(keys[slot]))
                })
                .collect();
            let nans = if T::DTYPE.is_float() { top } else { 0 };
            Ok((values, Some(nans)))
        }
        Err(_) => iterative::multiselect(buf, ranks),
    }
}

/// The expected share of the input the fused pass keeps for the distinct `ranks` of `n` when
/// the subset reads one piece in `group` (see [`prediction::kept_share`]).
fn kept_share(n: usize, ranks: &[usize], group: usize) -> f64 {
    prediction::kept_share(n, ranks, 1.0 / group as f64, BUCKETS)
}

/// The subset's group (it reads one 64-byte piece in `group`): the sparsest of 16, 8, 4, 2
/// whose expected kept share is at most [`KEPT_TARGET`], or `None` when even reading half the
/// input would keep more than [`KEPT_LIMIT`] (then the fused run cannot pay).
pub(crate) fn subset_group(n: usize, ranks: &[usize]) -> Option<u32> {
    for group in [16usize, 8, 4] {
        if kept_share(n, ranks, group) <= KEPT_TARGET {
            return Some(group as u32);
        }
    }
    (kept_share(n, ranks, 2) <= KEPT_LIMIT).then_some(2)
}

/// The buckets the device's shared memory allows the fused pass (two blocks a multiprocessor).
fn bucket_budget(dev: &CudaDevice) -> Result<usize> {
    let (per_block, per_sm) = shared_memory(dev)?;
    let room = per_block.min(per_sm / 2).saturating_sub(PASS_STATIC_SHARED) / 4;
    Ok(room.min(BUCKETS))
}

/// What a fused run found: the keys of the ranks (by rank index) and how many elements have
/// the largest key; or the status bits of a failed run (`FMS_MISSED`, ...; 0 when the run was
/// not tried).
pub(crate) type Outcome = std::result::Result<(Vec<u64>, usize), u32>;

/// The most device memory [`multiselect`] takes on `dev` for `n` values of `T` and `ranks`
/// ranks: a fused run's buffers (its words, marks, table and slots, the per-block counts of at
/// most `2048 / BLOCK` blocks a multiprocessor, the kept keys and the active buckets' keys, each
/// at most `n / 6`), an exact run's (the same buffers, the two workspaces at most `n / 3` keys
/// each), or iterative bucket multiselection where neither goes or both fail; each after the
/// other.
pub(crate) fn workspace<T: Element>(
    dev: &CudaDevice,
    n: usize,
    ranks: usize,
) -> Result<MemoryNeed> {
    let iterative = super::workspace::iterative::<T>(dev, n, ranks)?;
    if n < MIN_LEN || ranks > MAX_EXACT_RANKS {
        return Ok(iterative);
    }
    let blocks = dev.multiprocessors().max(1) * (2048 / BLOCK as usize);
    let exact = MemoryNeed::of::<u64>(Layout::new(ranks).len)
        .and(MemoryNeed::of::<u32>(MARK_WORDS))
        .and(MemoryNeed::of::<u32>(TABLE))
        .and(MemoryNeed::of::<u16>(BUCKETS))
        .and(MemoryNeed::of::<u32>(blocks * BUCKETS))
        .and(MemoryNeed::of::<T::Key>(exact_capacity(n)))
        .and(MemoryNeed::of::<T::Key>(exact_capacity(n)));
    if ranks > MAX_RANKS {
        return Ok(exact.or(iterative));
    }
    let cap = n / 6;
    let predicted = MemoryNeed::of::<u64>(Layout::new(ranks).len)
        .and(MemoryNeed::of::<u32>(MARK_WORDS))
        .and(MemoryNeed::of::<u32>(TABLE))
        .and(MemoryNeed::of::<u16>(BUCKETS))
        .and(MemoryNeed::of::<u32>(blocks * BUCKETS))
        .and(MemoryNeed::of::<T::Key>(cap))
        .and(MemoryNeed::of::<T::Key>(cap));
    Ok(predicted.or(exact).or(iterative))
}

/// The keys an exact run's segments hold at most: the active buckets' keys, about
/// `r / buckets` of the input (an eighth for the most ranks), more where the plan's buckets
/// are uneven (each bin's are a power of two: up to 1.4 times a bucket's share either way, and
/// halved where the powers overflow the budget) or its sample fits the input less well; a run
/// whose active buckets hold more fails (the iterative form runs).
fn exact_capacity(n: usize) -> usize {
    (n / 3).max(1)
}

/// Blocks of [`BLOCK`] threads of `f` a multiprocessor holds at once with `shared` bytes of
/// dynamic shared memory each (at least one).
fn occupancy(f: &CudaFunction, shared: usize) -> Result<usize> {
    Ok(
        f.occupancy_max_active_blocks_per_multiprocessor(BLOCK, shared, None)
            .map_err(|e| driver_error("reading a kernel's occupancy", e))?
            .max(1) as usize,
    )
}

/// A pass's grid: as many blocks of `f` as fit on the device at once with `shared` bytes of
/// dynamic shared memory each, and the multiprocessors.
fn pass_grid(dev: &CudaDevice, f: &CudaFunction, shared: usize) -> Result<(usize, usize)> {
    let sms = dev.multiprocessors().max(1);
    Ok((sms * occupancy(f, shared)?, sms))
}

/// The device buffers of a run, either form.
struct RunBuffers<K: RadixKey> {
    /// The run's zeroed words (see [`Layout`]), the ranks in place.
    words: CudaSlice<u64>,
    /// The bucket marks, zeroed.
    marks: CudaSlice<u32>,
    table: CudaSlice<u32>,
    /// Each bucket's active index.
    slots: CudaSlice<u16>,
    /// The per-block bucket counts.
    partial: CudaSlice<u32>,
    /// The kept keys' workspace.
    copies: CudaSlice<K>,
    /// The active buckets' segments.
    segments: CudaSlice<K>,
}

/// A run's buffers for `lay` and the distinct `ranks` (copied into the words), `partial`
/// per-block counts, `cap` kept keys and `cap2` keys of segments.
fn run_buffers<K: RadixKey>(
    dev: &CudaDevice,
    lay: &Layout,
    ranks: &[usize],
    partial: usize,
    cap: usize,
    cap2: usize,
) -> Result<RunBuffers<K>> {
    let mut words = dev.alloc_zeros::<u64>(lay.len, "the multiselection words")?;
    let host_ranks: Vec<u64> = ranks.iter().map(|&k| k as u64).collect();
    dev.stream()
        .memcpy_htod(
            &host_ranks,
            &mut words.slice_mut(lay.ranks..lay.ranks + ranks.len()),
        )
        .map_err(|e| driver_error("copying the ranks", e))?;
    Ok(RunBuffers {
        words,
        marks: dev.alloc_zeros::<u32>(MARK_WORDS, "the multiselection marks")?,
        table: dev.alloc::<u32>(TABLE, "the bucket table")?,
        slots: dev.alloc::<u16>(BUCKETS, "the active bucket slots")?,
        partial: dev.alloc::<u32>(partial, "the per-block bucket counts")?,
        copies: dev.alloc::<K>(cap.max(1), "the kept keys")?,
        segments: dev.alloc::<K>(cap2.max(1), "the active buckets' keys")?,
    })
}

/// One exact run over the distinct, ascending `ranks` (see the module docs): a count pass, the
/// settlement of each rank's bucket, a pass appending those buckets' keys, the gather into
/// segments and the final step; no prediction, two reads of the input.
pub(crate) fn exact_run<T: Element>(buf: &DeviceBuffer<T>, ranks: &[usize]) -> Result<Outcome> {
    let dev = buf.device();
    let x = buf.as_slice().as_view();
    let n = x.len();
    let r = ranks.len();
    let max_buckets = bucket_budget(dev)?;
    if max_buckets < 4096 {
        return Ok(Err(0));
    }
    let suffix = key_suffix::<T::Key>();
    let f = |name: &str| dev.function(&FUSED_MULTISELECT, name);
    let count_fn = f(&kernel_name("fms_count", T::DTYPE))?;
    let append_fn = f(&kernel_name("fms_append", T::DTYPE))?;
    let gather_fn = f(&format!("fms_gather_{suffix}"))?;
    let pass_shared = max_buckets * 4;
    allow_shared(&count_fn, pass_shared)?;
    allow_shared(&append_fn, pass_shared)?;
    let gather_bytes = gather_shared(r);
    allow_shared(&gather_fn, gather_bytes)?;
    let (blocks, sms) = pass_grid(dev, &count_fn, pass_shared)?;
    let gather_blocks = sms * occupancy(&gather_fn, gather_bytes)?;

    let lay = Layout::new(r);
    let cap = exact_capacity(n);
    let RunBuffers {
        mut words,
        mut marks,
        mut table,
        mut slots,
        mut partial,
        mut copies,
        mut segments,
    } = run_buffers::<T::Key>(dev, &lay, ranks, blocks * max_buckets, cap, cap)?;

    {
        split_regions!(lay, words => regions);
        let Regions {
            first: mut sizes,
            mut totals,
            mut count,
            mut params,
            status: mut status_word,
            mut choice,
            mut results,
            mut starts,
            ranks: ranks_v,
            mut act,
            mut info,
            mut segs,
        } = regions;
        let mut status = as_u32_words(&mut status_word);
        let mut marks = marks.as_view_mut();
        let ranks_v = ranks_v.as_view();

        let (n64, r64, cap64) = (n as u64, r as u64, cap as u64);
        let pass = shaped(blocks, 1, BLOCK, pass_shared);
        fms_plan(
            dev,
            config(1, ONE_BLOCK),
            &x,
            n64,
            SEED,
            max_buckets as u32,
            &mut table,
            &mut params,
        )?;
        let params = params.as_view();
        fms_count(
            dev,
            pass,
            &x,
            n64,
            &table,
            &params,
            &mut partial,
            &status.as_view(),
        )?;
        fms_totals(
            dev,
            shaped(BUCKETS / 256, blocks.div_ceil(TOTAL_GROUP), 256, 0),
            &partial,
            blocks as u64,
            &params,
            &mut totals,
            &status.as_view(),
        )?;
        fms_settle::<T::Key>(
            dev,
            config(1, ONE_BLOCK),
            &totals.as_view(),
            &table,
            &params,
            &ranks_v,
            r64,
            cap64,
            &mut starts,
            &mut sizes,
            &mut segs,
            &mut marks,
            &mut slots,
            &mut act,
            &mut info,
            &mut choice,
            &mut results,
            &mut status,
        )?;
        fms_append(
            dev,
            pass,
            &x,
            n64,
            &table,
            &params,
            &marks.as_view(),
            &mut copies,
            cap64,
            &mut count,
            &status.as_view(),
        )?;
        fms_gather(
            dev,
            shaped(gather_blocks, 1, BLOCK, gather_bytes),
            &copies,
            &count.as_view(),
            cap64,
            &table,
            &params,
            &slots,
            &mut act,
            &choice.as_view(),
            r as u32,
            &mut segments,
            &status.as_view(),
        )?;
        fms_final(
            dev,
            config(r, ONE_BLOCK),
            &segments,
            &act.as_view(),
            &info.as_view(),
            &mut results,
            &mut status,
        )?;
    }
    read_outcome(dev, &words, &lay, r)
}

/// The outcome of a run from its words: the status, the choice and the results in one copy.
fn read_outcome(
    dev: &CudaDevice,
    words: &CudaSlice<u64>,
    lay: &Layout,
    r: usize,
) -> Result<Outcome> {
    let head = dev
        .stream()
        .clone_dtoh(&words.slice(lay.status..lay.results + r))
        .map_err(|e| driver_error("reading the multiselection results", e))?;
    // The status is the word's low half; its high half stays zero.
    let status = head[0] as u32;
    if status != 0 {
        return Ok(Err(status));
    }
    let choice = &head[lay.choice - lay.status..];
    let top = choice[2] as usize;
    Ok(Ok((choice[lay.results - lay.choice..].to_vec(), top)))
}

/// One fused run over the distinct, ascending `ranks` (see the module docs).
pub(crate) fn fused_run<T: Element>(buf: &DeviceBuffer<T>, ranks: &[usize]) -> Result<Outcome> {
    let dev = buf.device();
    let x = buf.as_slice().as_view();
    let n = x.len();
    let r = ranks.len();
    let max_buckets = bucket_budget(dev)?;
    let Some(group) = subset_group(n, ranks) else {
        return Ok(Err(0));
    };
    if max_buckets < 4096 {
        return Ok(Err(0));
    }
    let suffix = key_suffix::<T::Key>();
    let f = |name: &str| dev.function(&FUSED_MULTISELECT, name);
    let subset_fn = f(&kernel_name("fms_subset", T::DTYPE))?;
    let fused_fn = f(&kernel_name("fms_fused", T::DTYPE))?;
    let gather_fn = f(&format!("fms_gather_{suffix}"))?;

    let pass_shared = max_buckets * 4;
    allow_shared(&subset_fn, pass_shared)?;
    allow_shared(&fused_fn, pass_shared)?;
    let gather_bytes = gather_shared(r);
    allow_shared(&gather_fn, gather_bytes)?;
    let (blocks, sms) = pass_grid(dev, &fused_fn, pass_shared)?;
    let gather_per_sm = occupancy(&gather_fn, gather_bytes)?;

    let lay = Layout::new(r);
    let cap = n / 6;
    let cap2 = (r * SEGMENT_SLACK * (n / max_buckets)).clamp(1, cap.max(1));
    let RunBuffers {
        mut words,
        mut marks,
        mut table,
        mut slots,
        mut partial,
        mut copies,
        mut segments,
    } = run_buffers::<T::Key>(dev, &lay, ranks, blocks * max_buckets, cap, cap2)?;

    {
        split_regions!(lay, words => regions);
        let Regions {
            first: mut sub_totals,
            mut totals,
            mut count,
            mut params,
            status: mut status_word,
            mut choice,
            mut results,
            mut starts,
            ranks: ranks_v,
            mut act,
            mut info,
            ..
        } = regions;
        let mut status = as_u32_words(&mut status_word);
        let mut marks = marks.as_view_mut();
        let ranks_v = ranks_v.as_view();

        let (n64, r64, cap64) = (n as u64, r as u64, cap as u64);
        let one_block = config(1, ONE_BLOCK);
        let pass = shaped(blocks, 1, BLOCK, pass_shared);
        // One thread a bucket, one row of threads a group of TOTAL_GROUP blocks' counts.
        let totals_shape = shaped(BUCKETS / 256, blocks.div_ceil(TOTAL_GROUP), 256, 0);

        fms_plan(
            dev,
            one_block,
            &x,
            n64,
            SEED,
            max_buckets as u32,
            &mut table,
            &mut params,
        )?;
        let params = params.as_view();
        fms_subset(
            dev,
            pass,
            &x,
            n64,
            &table,
            &params,
            group,
            SEED,
            &mut partial,
        )?;
        fms_totals(
            dev,
            totals_shape,
            &partial,
            blocks as u64,
            &params,
            &mut sub_totals,
            &status.as_view(),
        )?;
        fms_predict(
            dev,
            one_block,
            &sub_totals.as_view(),
            &params,
            &ranks_v,
            r64,
            n64,
            cap64,
            prediction::SIGMAS,
            &mut starts,
            &mut marks,
            &mut status,
        )?;
        fms_fused(
            dev,
            pass,
            &x,
            n64,
            &table,
            &params,
            &marks.as_view(),
            &mut partial,
            &mut copies,
            cap64,
            &mut count,
            &status.as_view(),
        )?;
        fms_totals(
            dev,
            totals_shape,
            &partial,
            blocks as u64,
            &params,
            &mut totals,
            &status.as_view(),
        )?;
        fms_choose::<T::Key>(
            dev,
            one_block,
            &totals.as_view(),
            &table,
            &params,
            &marks.as_view(),
            &ranks_v,
            r64,
            &count.as_view(),
            cap64,
            cap2 as u64,
            &mut starts,
            &mut slots,
            &mut act,
            &mut info,
            &mut choice,
            &mut results,
            &mut status,
        )?;
        fms_gather(
            dev,
            shaped(sms * gather_per_sm, 1, BLOCK, gather_bytes),
            &copies,
            &count.as_view(),
            cap64,
            &table,
            &params,
            &slots,
            &mut act,
            &choice.as_view(),
            r as u32,
            &mut segments,
            &status.as_view(),
        )?;
        fms_final(
            dev,
            config(r, ONE_BLOCK),
            &segments,
            &act.as_view(),
            &info.as_view(),
            &mut results,
            &mut status,
        )?;
    }
    read_outcome(dev, &words, &lay, r)
}
