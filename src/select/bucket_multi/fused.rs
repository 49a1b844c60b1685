//! Fused bucket multiselection on CUDA (`kernels/fused_multiselect.cu`): bucketMultiSelect's
//! count and write in one pass over the input, the buckets to write predicted by a count over
//! a subset of it.
//!
//! - A one-block plan reads a 16384-element sample: its key range cut into 1024 equal coarse
//!   bins, each given a power of two of equal buckets (about its share of the sample; 16384
//!   buckets in all), so that a key's bucket is one shared-table read: no search, no minimum and
//!   maximum pass. Keys below the sample's range, above it, and the largest key (every NaN)
//!   have buckets of their own.
//! - A subset count reads one 32-byte sector in `G` (hashed; `G` of 16, 8, 4 or 2, the sparsest
//!   whose expected kept share is at most 7 %), counting every bucket; its prefix sums, scaled,
//!   place each wanted rank within `4.5σ` of the subset estimate, and the buckets that window
//!   touches are marked.
//! - The fused pass counts every element in its bucket and appends the keys of the marked
//!   buckets to a workspace: the mark is the shared counter's top bit, so the atomic that
//!   counts a key also says whether to keep it. At 2^28 values and 101 percentiles about 8 % of
//!   the keys are kept.
//! - Exact bucket totals give each rank's bucket; those buckets are split into equal key parts
//!   and the workspace is counted and filtered once more (a second, smaller level), and one
//!   block per rank sorts its part's keys on chip.
//!
//! Everything runs on the stream without a round trip; the host reads the results and a status
//! word once. When the prediction missed a rank's bucket, the workspace would overflow, or a
//! final part is too large to sort (heavily repeated values), the status says so and the ranks
//! are selected by iterative bucket multiselection instead: the result is always exact, and
//! the extra cost is bounded by the work done before (about two reads of the input).
//!
//! Runs with more than [`MAX_RANKS`] distinct ranks, on fewer than [`MIN_LEN`] values, or whose
//! expected kept share exceeds 11 % even with `G = 2` (the windows grow as `√n` per rank: 101
//! percentiles need about 2^24 values) are iterative bucket multiselections.
//!
//! Workspace: `n / 6` keys for the kept keys, per-block bucket counts (`64 KiB` a block of the
//! fused pass), and about `600 KiB` of words.

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{DevicePtr, PushKernelArg};

use super::engine::allow_shared;
use super::iterative;
use crate::device::cuda::driver_error;
use crate::device::cuda::kernels::{kernel_name, FUSED_MULTISELECT};
use crate::device::cuda::launch::config;
use crate::device::cuda::CudaDevice;
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::select::sort_choose::cuda::key_suffix;
use cudarc::driver::LaunchConfig;

/// Distinct ranks a fused run takes (each final block reads the whole second workspace).
pub(crate) const MAX_RANKS: usize = 256;
/// Inputs shorter than this are iterative bucket multiselections.
pub(crate) const MIN_LEN: usize = 1 << 20;
/// Threads of the passes (`FMS_BLOCK`).
const BLOCK: u32 = 512;
/// Threads of the one-block kernels (`FMS_PLAN_THREADS`) and of the final blocks.
const ONE_BLOCK: u32 = 1024;
/// Buckets at most (`FMS_BUCKETS`).
const BUCKETS: usize = 16384;
/// Second-level counters at most (`FMS_PARTS_MAX`).
const PARTS_MAX: usize = 16384;
/// Entries of the plan's table (`FMS_TABLE`).
const TABLE: usize = 1026;
/// Shared memory the fused pass needs besides its counters (its table and warp stages).
const PASS_STATIC_SHARED: usize = 24 * 1024;
/// Blocks a multiprocessor for the second level.
const LEVEL2_BLOCKS_PER_SM: usize = 2;
/// Blocks of partial counts one thread of `fms_totals` adds (`FMS_TOTAL_GROUP`).
const TOTAL_GROUP: usize = 16;
/// Half-width of a rank's predicted window in standard deviations (the prediction kernel's and
/// the kept-share estimate's).
const SIGMAS: f64 = 4.5;
/// The kept share the subset's group is chosen for.
const KEPT_TARGET: f64 = 0.07;
/// The kept share above which a run is not fused (the workspace holds `n / 6` keys, and the
/// prediction fails the run above 80 % of it).
const KEPT_LIMIT: f64 = 0.11;
/// Seed of the sample and the subset.
const SEED: u64 = 0x000F_05ED_B0C4_E75E;

/// Offsets (in u64 words) of the run's zeroed words.
struct Layout {
    sub_totals: usize,
    totals: usize,
    totals2: usize,
    count: usize,
    count2: usize,
    marks: usize,
    keep: usize,
    status: usize,
    params: usize,
    choice: usize,
    results: usize,
    starts: usize,
    ranks: usize,
    rank_bucket: usize,
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
        let totals2 = totals + BUCKETS;
        let count = totals2 + PARTS_MAX;
        let count2 = count + 1;
        let marks = count2 + 1;
        let keep = marks + BUCKETS / 64;
        let status = keep + PARTS_MAX / 64;
        let params = status + 1;
        let choice = params + 4;
        let results = choice + 3;
        let starts = results + r;
        let ranks = starts + BUCKETS + 1;
        let rank_bucket = ranks + r;
        let act = rank_bucket + r;
        let info = act + 2 * r;
        Layout {
            sub_totals,
            totals,
            totals2,
            count,
            count2,
            marks,
            keep,
            status,
            params,
            choice,
            results,
            starts,
            ranks,
            rank_bucket,
            act,
            info,
            len: info + 4 * r,
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
/// the subset reads one sector in `group`: each rank's window (`±4.5σ` of the subset's
/// estimate, `σ² = n·p·(1 − p)·(group − 1)`) plus about two buckets.
fn kept_share(n: usize, ranks: &[usize], group: usize) -> f64 {
    let nf = n as f64;
    let windows: f64 = ranks
        .iter()
        .map(|&k| {
            let p = (k as f64 + 0.5) / nf;
            2.0 * SIGMAS * (nf * p * (1.0 - p) * (group as f64 - 1.0)).sqrt()
        })
        .sum();
    windows / nf + 2.0 * ranks.len() as f64 / BUCKETS as f64
}

/// The subset's group (it reads one 32-byte sector in `group`): the sparsest of 16, 8, 4, 2
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

/// A launch of `blocks` (and `groups` along y) of `threads` with `shared` dynamic bytes.
fn shaped(blocks: usize, groups: usize, threads: u32, shared: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.max(1) as u32, groups.max(1) as u32, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: shared as u32,
    }
}

/// The buckets the device's shared memory allows the fused pass (two blocks a multiprocessor).
fn bucket_budget(dev: &CudaDevice) -> Result<usize> {
    let ctx = dev.stream().context();
    let per_block = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        .map_err(|e| driver_error("reading the shared memory per block", e))?
        .max(0) as usize;
    let per_sm = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
        .map_err(|e| driver_error("reading the shared memory per multiprocessor", e))?
        .max(0) as usize;
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
    let count2_fn = f(&format!("fms_count2_{suffix}"))?;
    let choose2_fn = f("fms_choose2")?;
    let append2_fn = f(&format!("fms_append2_{suffix}"))?;
    let final_fn = f(&format!("fms_final_{suffix}"))?;

    let pass_shared = max_buckets * 4;
    allow_shared(&subset_fn, pass_shared)?;
    allow_shared(&fused_fn, pass_shared)?;
    let level2_shared = PARTS_MAX * 4 + BUCKETS * 2;
    allow_shared(&count2_fn, level2_shared)?;
    allow_shared(&append2_fn, BUCKETS * 2)?;
    let per_sm = fused_fn
        .occupancy_max_active_blocks_per_multiprocessor(BLOCK, pass_shared, None)
        .map_err(|e| driver_error("reading the fused pass's occupancy", e))?
        .max(1) as usize;
    let sms = dev.multiprocessors().max(1);
    let blocks = sms * per_sm;
    let blocks2 = sms * LEVEL2_BLOCKS_PER_SM;

    let lay = Layout::new(r);
    let mut words = dev.alloc_zeros::<u64>(lay.len, "the fused multiselection words")?;
    let host_ranks: Vec<u64> = ranks.iter().map(|&k| k as u64).collect();
    stream
        .memcpy_htod(&host_ranks, &mut words.slice_mut(lay.ranks..lay.ranks + r))
        .map_err(|e| driver_error("copying the ranks", e))?;
    let table = dev.alloc::<u32>(TABLE, "the bucket table")?;
    let slots = dev.alloc::<u16>(BUCKETS, "the active bucket slots")?;
    let partial = dev.alloc::<u32>(blocks * max_buckets, "the per-block bucket counts")?;
    let partial2 = dev.alloc::<u32>(blocks2 * PARTS_MAX, "the second level's counts")?;
    let cap = n / 6;
    let copies = dev.alloc::<T::Key>(cap, "the kept keys")?;
    let cap2 = (r * 2 * FINAL_CAP).min(cap.max(1));
    let copies2 = dev.alloc::<T::Key>(cap2, "the final parts' keys")?;

    let (base, _w) = words.device_ptr(stream);
    let at = |off: usize| base + 8 * off as u64;
    let (n64, r64, cap64, cap2_64, seed) = (n as u64, r as u64, cap as u64, cap2 as u64, SEED);
    let sigmas = SIGMAS;
    let mb32 = max_buckets as u32;
    let (p_table, _t) = table.device_ptr(stream);
    let (p_slots, _s) = slots.device_ptr(stream);
    let (p_partial, _p) = partial.device_ptr(stream);
    let (p_partial2, _p2) = partial2.device_ptr(stream);
    let (p_copies, _c) = copies.device_ptr(stream);
    let (p_copies2, _c2) = copies2.device_ptr(stream);
    let (params, status) = (at(lay.params), at(lay.status));
    let launch_err = |what: &'static str| move |e| driver_error(what, e);
    // totals[c] = the sum of the per-block counts of counter c (zero on entry): the plan's
    // buckets (second = 0, words = its params) or the second level's (1, words = the choice).
    let add_totals =
        |partial: u64, blocks: usize, words: u64, second: u32, out: u64| -> Result<()> {
            let (blocks64, width) = (blocks as u64, if second == 0 { BUCKETS } else { PARTS_MAX });
            let mut l = stream.launch_builder(&totals_fn);
            l.arg(&partial)
                .arg(&blocks64)
                .arg(&words)
                .arg(&second)
                .arg(&out)
                .arg(&status);
            // SAFETY: fms_totals(const u32* partial, u64 blocks, const u64* words, u32 second,
            // u64* totals, const u32* status): partial holds blocks x (at most width) counts,
            // totals width words, words the params or the choice.
            unsafe { l.launch(shaped(width / 256, blocks.div_ceil(TOTAL_GROUP), 256, 0)) }
                .map_err(|e| driver_error("launching fms_totals", e))
                .map(|_| ())
        };

    // SAFETY (every launch below): the arguments are device pointers into the allocations above
    // with the sizes the kernels' comments state (words laid out by `Layout`: BUCKETS totals,
    // BUCKETS / 32 marks, PARTS_MAX / 32 keep bits, r ranks and results, 2 r active words, 4 r
    // info words; table TABLE entries; slots BUCKETS; partial blocks x max_buckets; partial2
    // blocks2 x PARTS_MAX; copies cap keys, copies2 cap2 keys); x holds n >= MIN_LEN elements,
    // 16-byte aligned; dynamic shared memory as allowed above.
    unsafe {
        let mut l = stream.launch_builder(&plan_fn);
        l.arg(&x)
            .arg(&n64)
            .arg(&seed)
            .arg(&mb32)
            .arg(&p_table)
            .arg(&params);
        l.launch(config(1, ONE_BLOCK))
            .map_err(launch_err("launching fms_plan"))?;

        let mut l = stream.launch_builder(&subset_fn);
        l.arg(&x)
            .arg(&n64)
            .arg(&p_table)
            .arg(&params)
            .arg(&group)
            .arg(&seed)
            .arg(&p_partial);
        l.launch(shaped(blocks, 1, BLOCK, pass_shared))
            .map_err(launch_err("launching fms_subset"))?;

        let sub_totals = at(lay.sub_totals);
        add_totals(p_partial, blocks, params, 0, sub_totals)?;

        let (ranks_p, starts, marks) = (at(lay.ranks), at(lay.starts), at(lay.marks));
        let mut l = stream.launch_builder(&predict_fn);
        l.arg(&sub_totals)
            .arg(&params)
            .arg(&ranks_p)
            .arg(&r64)
            .arg(&n64)
            .arg(&cap64)
            .arg(&sigmas)
            .arg(&starts)
            .arg(&marks)
            .arg(&status);
        l.launch(config(1, ONE_BLOCK))
            .map_err(launch_err("launching fms_predict"))?;

        let count = at(lay.count);
        let mut l = stream.launch_builder(&fused_fn);
        l.arg(&x)
            .arg(&n64)
            .arg(&p_table)
            .arg(&params)
            .arg(&marks)
            .arg(&p_partial)
            .arg(&p_copies)
            .arg(&cap64)
            .arg(&count)
            .arg(&status);
        l.launch(shaped(blocks, 1, BLOCK, pass_shared))
            .map_err(launch_err("launching fms_fused"))?;

        let totals = at(lay.totals);
        add_totals(p_partial, blocks, params, 0, totals)?;

        let (rank_bucket, act, info, choice, results) = (
            at(lay.rank_bucket),
            at(lay.act),
            at(lay.info),
            at(lay.choice),
            at(lay.results),
        );
        let mut l = stream.launch_builder(&choose_fn);
        l.arg(&totals)
            .arg(&p_table)
            .arg(&params)
            .arg(&marks)
            .arg(&ranks_p)
            .arg(&r64)
            .arg(&count)
            .arg(&cap64)
            .arg(&starts)
            .arg(&rank_bucket)
            .arg(&p_slots)
            .arg(&act)
            .arg(&info)
            .arg(&choice)
            .arg(&results)
            .arg(&status);
        l.launch(config(1, ONE_BLOCK))
            .map_err(launch_err("launching fms_choose"))?;

        let mut l = stream.launch_builder(&count2_fn);
        l.arg(&p_copies)
            .arg(&count)
            .arg(&cap64)
            .arg(&p_table)
            .arg(&params)
            .arg(&p_slots)
            .arg(&act)
            .arg(&choice)
            .arg(&p_partial2)
            .arg(&status);
        l.launch(shaped(blocks2, 1, BLOCK, level2_shared))
            .map_err(launch_err("launching fms_count2"))?;

        let totals2 = at(lay.totals2);
        add_totals(p_partial2, blocks2, choice, 1, totals2)?;

        let keep = at(lay.keep);
        let mut l = stream.launch_builder(&choose2_fn);
        l.arg(&totals2)
            .arg(&choice)
            .arg(&r64)
            .arg(&info)
            .arg(&keep)
            .arg(&status);
        l.launch(config(1, ONE_BLOCK))
            .map_err(launch_err("launching fms_choose2"))?;

        let count2 = at(lay.count2);
        let mut l = stream.launch_builder(&append2_fn);
        l.arg(&p_copies)
            .arg(&count)
            .arg(&cap64)
            .arg(&p_table)
            .arg(&params)
            .arg(&p_slots)
            .arg(&act)
            .arg(&choice)
            .arg(&keep)
            .arg(&p_copies2)
            .arg(&cap2_64)
            .arg(&count2)
            .arg(&status);
        l.launch(shaped(blocks2, 1, BLOCK, BUCKETS * 2))
            .map_err(launch_err("launching fms_append2"))?;

        let mut l = stream.launch_builder(&final_fn);
        l.arg(&p_copies2)
            .arg(&count2)
            .arg(&cap2_64)
            .arg(&p_table)
            .arg(&params)
            .arg(&p_slots)
            .arg(&act)
            .arg(&choice)
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

/// Keys a final block sorts on chip (`FMS_FINAL_CAP`).
pub(crate) const FINAL_CAP: usize = 4096;
