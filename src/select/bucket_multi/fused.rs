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
//! Everything runs on the stream without a round trip; the host reads the results and a status
//! word once. When the prediction missed a rank's bucket, a workspace would overflow, or an
//! active bucket holds more than 2^20 keys (heavily repeated values), the status says so and
//! the ranks are selected by iterative bucket multiselection instead: the result is exact, and
//! the extra cost is bounded by the work done before (about two reads of the input).
//!
//! Runs with more than [`MAX_RANKS`] distinct ranks, on fewer than [`MIN_LEN`] values, or whose
//! expected kept share exceeds 11 % even with `G = 2` (the windows grow as `√n` per rank: 101
//! percentiles need about 2^24 values) are iterative bucket multiselections.
//!
//! Workspace: `n / 6` keys for the kept keys, up to `8·r·n / 16384` keys for the active
//! buckets' segments, per-block bucket counts (`64 KiB` a block of the fused pass), and about
//! `300 KiB` of words.

use cudarc::driver::{DevicePtr, PushKernelArg};

use super::iterative;
use crate::device::cuda::driver_error;
use crate::device::cuda::kernels::{kernel_name, key_suffix, FUSED_MULTISELECT};
use crate::device::cuda::launch::{allow_shared, config, shaped, shared_memory};
use crate::device::cuda::CudaDevice;
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::select::prediction;

/// Distinct ranks a fused run takes (`FMS_MAX_RANKS`).
pub(crate) const MAX_RANKS: usize = 256;
/// Inputs shorter than this are iterative bucket multiselections.
pub(crate) const MIN_LEN: usize = 1 << 20;
/// Threads of the passes (`FMS_BLOCK`).
const BLOCK: u32 = 512;
/// Threads of the one-block kernels (`FMS_PLAN_THREADS`) and of the final blocks.
const ONE_BLOCK: u32 = 1024;
/// Buckets at most (`FMS_BUCKETS`).
const BUCKETS: usize = 16384;
/// Entries of the plan's table (`FMS_TABLE`), one word each.
const TABLE: usize = 1026;
/// Shared memory the fused pass needs besides its counters (its table and warp stages).
const PASS_STATIC_SHARED: usize = 42 * 1024;
/// Blocks of partial counts one thread of `fms_totals` adds (`FMS_TOTAL_GROUP`).
const TOTAL_GROUP: usize = 16;
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

/// Offsets (in u64 words) of the run's zeroed words.
struct Layout {
    sub_totals: usize,
    totals: usize,
    count: usize,
    marks: usize,
    status: usize,
    params: usize,
    choice: usize,
    results: usize,
    starts: usize,
    ranks: usize,
    act: usize,
    info: usize,
    len: usize,
}

impl Layout {
    /// The layout for `r` ranks. The status, parameters, choice and results are adjacent: the
    /// host reads them with one copy.
    fn new(r: usize) -> Layout {
        let sub_totals = 0;
        let totals = sub_totals + BUCKETS;
        let count = totals + BUCKETS;
        let marks = count + 1;
        let status = marks + BUCKETS / 64;
        let params = status + 1;
        let choice = params + 4;
        let results = choice + 3;
        let starts = results + r;
        let ranks = starts + BUCKETS + 1;
        let act = ranks + r;
        let info = act + 4 * r;
        Layout {
            sub_totals,
            totals,
            count,
            marks,
            status,
            params,
            choice,
            results,
            starts,
            ranks,
            act,
            info,
            len: info + 2 * r,
        }
    }
}

/// The elements of `ranks` (not empty, all `< buf.len()`) and the NaN count.
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, Option<usize>)> {
    let mut distinct = ranks.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if buf.len() < MIN_LEN || distinct.len() > MAX_RANKS {
        return iterative::multiselect(buf, ranks);
    }
    match fused_run(buf, &distinct)? {
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

/// One fused run over the distinct, ascending `ranks` (see the module docs).
pub(crate) fn fused_run<T: Element>(buf: &DeviceBuffer<T>, ranks: &[usize]) -> Result<Outcome> {
    let dev = buf.device();
    let stream = dev.stream();
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
    let plan_fn = f(&kernel_name("fms_plan", T::DTYPE))?;
    let subset_fn = f(&kernel_name("fms_subset", T::DTYPE))?;
    let fused_fn = f(&kernel_name("fms_fused", T::DTYPE))?;
    let totals_fn = f("fms_totals")?;
    let predict_fn = f("fms_predict")?;
    let choose_fn = f(&format!("fms_choose_{suffix}"))?;
    let gather_fn = f(&format!("fms_gather_{suffix}"))?;
    let final_fn = f(&format!("fms_final_{suffix}"))?;

    let pass_shared = max_buckets * 4;
    allow_shared(&subset_fn, pass_shared)?;
    allow_shared(&fused_fn, pass_shared)?;
    let gather_shared = BUCKETS * 2;
    allow_shared(&gather_fn, gather_shared)?;
    let per_sm = fused_fn
        .occupancy_max_active_blocks_per_multiprocessor(BLOCK, pass_shared, None)
        .map_err(|e| driver_error("reading the fused pass's occupancy", e))?
        .max(1) as usize;
    let gather_per_sm = gather_fn
        .occupancy_max_active_blocks_per_multiprocessor(BLOCK, gather_shared, None)
        .map_err(|e| driver_error("reading the gather's occupancy", e))?
        .max(1) as usize;
    let sms = dev.multiprocessors().max(1);
    let blocks = sms * per_sm;

    let lay = Layout::new(r);
    let mut words = dev.alloc_zeros::<u64>(lay.len, "the fused multiselection words")?;
    let host_ranks: Vec<u64> = ranks.iter().map(|&k| k as u64).collect();
    stream
        .memcpy_htod(&host_ranks, &mut words.slice_mut(lay.ranks..lay.ranks + r))
        .map_err(|e| driver_error("copying the ranks", e))?;
    let table = dev.alloc::<u32>(TABLE, "the bucket table")?;
    let slots = dev.alloc::<u16>(BUCKETS, "the active bucket slots")?;
    let partial = dev.alloc::<u32>(blocks * max_buckets, "the per-block bucket counts")?;
    let cap = n / 6;
    let copies = dev.alloc::<T::Key>(cap, "the kept keys")?;
    let cap2 = (r * SEGMENT_SLACK * (n / max_buckets)).clamp(1, cap.max(1));
    let segments = dev.alloc::<T::Key>(cap2, "the active buckets' keys")?;

    let (base, _w) = words.device_ptr(stream);
    let at = |off: usize| base + 8 * off as u64;
    let (n64, r64, cap64, cap2_64, seed) = (n as u64, r as u64, cap as u64, cap2 as u64, SEED);
    let (sigmas, mb32, blocks64) = (prediction::SIGMAS, max_buckets as u32, blocks as u64);
    let (p_table, _t) = table.device_ptr(stream);
    let (p_slots, _s) = slots.device_ptr(stream);
    let (p_partial, _p) = partial.device_ptr(stream);
    let (p_copies, _c) = copies.device_ptr(stream);
    let (p_segments, _c2) = segments.device_ptr(stream);
    let (params, status, count) = (at(lay.params), at(lay.status), at(lay.count));
    let (ranks_p, starts, marks) = (at(lay.ranks), at(lay.starts), at(lay.marks));
    let (act, info, choice, results) = (at(lay.act), at(lay.info), at(lay.choice), at(lay.results));
    let (sub_totals, totals) = (at(lay.sub_totals), at(lay.totals));
    let launch_err = |what: &'static str| move |e| driver_error(what, e);
    let one_block = config(1, ONE_BLOCK);
    let pass = shaped(blocks, 1, BLOCK, pass_shared);
    // One thread a bucket, one row of threads a group of TOTAL_GROUP blocks' counts.
    let totals_shape = shaped(BUCKETS / 256, blocks.div_ceil(TOTAL_GROUP), 256, 0);

    // SAFETY (every launch below): the arguments are device pointers into the allocations above
    // with the sizes the kernels' comments state (words laid out by `Layout`: BUCKETS totals
    // twice, BUCKETS / 32 marks, r ranks and results, BUCKETS + 1 starts, 4 r active words, 2 r
    // info words; table TABLE words; slots BUCKETS; partial blocks x max_buckets;
    // copies cap keys, segments cap2 keys); x holds n >= MIN_LEN elements, 16-byte aligned;
    // dynamic shared memory as allowed above.
    unsafe {
        let mut l = stream.launch_builder(&plan_fn);
        l.arg(&x)
            .arg(&n64)
            .arg(&seed)
            .arg(&mb32)
            .arg(&p_table)
            .arg(&params);
        l.launch(one_block)
            .map_err(launch_err("launching fms_plan"))?;

        let mut l = stream.launch_builder(&subset_fn);
        l.arg(&x)
            .arg(&n64)
            .arg(&p_table)
            .arg(&params)
            .arg(&group)
            .arg(&seed);
        l.arg(&p_partial);
        l.launch(pass).map_err(launch_err("launching fms_subset"))?;

        let mut l = stream.launch_builder(&totals_fn);
        l.arg(&p_partial)
            .arg(&blocks64)
            .arg(&params)
            .arg(&sub_totals)
            .arg(&status);
        l.launch(totals_shape)
            .map_err(launch_err("launching fms_totals"))?;

        let mut l = stream.launch_builder(&predict_fn);
        l.arg(&sub_totals)
            .arg(&params)
            .arg(&ranks_p)
            .arg(&r64)
            .arg(&n64);
        l.arg(&cap64)
            .arg(&sigmas)
            .arg(&starts)
            .arg(&marks)
            .arg(&status);
        l.launch(one_block)
            .map_err(launch_err("launching fms_predict"))?;

        let mut l = stream.launch_builder(&fused_fn);
        l.arg(&x)
            .arg(&n64)
            .arg(&p_table)
            .arg(&params)
            .arg(&marks)
            .arg(&p_partial);
        l.arg(&p_copies).arg(&cap64).arg(&count).arg(&status);
        l.launch(pass).map_err(launch_err("launching fms_fused"))?;

        let mut l = stream.launch_builder(&totals_fn);
        l.arg(&p_partial)
            .arg(&blocks64)
            .arg(&params)
            .arg(&totals)
            .arg(&status);
        l.launch(totals_shape)
            .map_err(launch_err("launching fms_totals"))?;

        let mut l = stream.launch_builder(&choose_fn);
        l.arg(&totals)
            .arg(&p_table)
            .arg(&params)
            .arg(&marks)
            .arg(&ranks_p)
            .arg(&r64);
        l.arg(&count)
            .arg(&cap64)
            .arg(&cap2_64)
            .arg(&starts)
            .arg(&p_slots)
            .arg(&act);
        l.arg(&info).arg(&choice).arg(&results).arg(&status);
        l.launch(one_block)
            .map_err(launch_err("launching fms_choose"))?;

        let mut l = stream.launch_builder(&gather_fn);
        l.arg(&p_copies)
            .arg(&count)
            .arg(&cap64)
            .arg(&p_table)
            .arg(&params)
            .arg(&p_slots);
        l.arg(&act).arg(&choice).arg(&p_segments).arg(&status);
        l.launch(shaped(sms * gather_per_sm, 1, BLOCK, gather_shared))
            .map_err(launch_err("launching fms_gather"))?;

        let mut l = stream.launch_builder(&final_fn);
        l.arg(&p_segments)
            .arg(&act)
            .arg(&info)
            .arg(&results)
            .arg(&status);
        l.launch(config(r, ONE_BLOCK))
            .map_err(launch_err("launching fms_final"))?;
    }
    drop(_w);
    let head = stream
        .clone_dtoh(&words.slice(lay.status..lay.results + r))
        .map_err(|e| driver_error("reading the fused multiselection results", e))?;
    if head[0] != 0 {
        return Ok(Err(head[0] as u32));
    }
    let top = head[lay.choice + 2 - lay.status] as usize;
    Ok(Ok((head[lay.results - lay.status..].to_vec(), top)))
}
