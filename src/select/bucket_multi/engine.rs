//! The launches of bucket multiselection (`kernels/bucket_multiselect.cu`): the first look at
//! the input (sample, extremes), a level's count and choice, the two ways of writing the active
//! buckets out, the small segments' sorts and the segments' extremes.
//!
//! A level is one count pass (`bms_count_T`: every element of a block's chunk to a bucket of its
//! segment, counted in shared memory, the block's counts written to `partial`), the bucket totals
//! (`bms_totals`), and a one-block choice (`bms_choose`: prefix sums, the bucket of every rank,
//! the active buckets' mask and list), whose results come back in one read. The write that
//! follows reads the same chunks again.

use cudarc::driver::{CudaSlice, CudaView, DeviceRepr, LaunchConfig, PushKernelArg};

use super::plan::{Layout, SAMPLE};
use crate::device::cuda::kernels::{kernel_name, key_suffix, BUCKET_MULTISELECT};
use crate::device::cuda::launch::{allow_shared, config, shaped, shared_memory, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice};
use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};

/// Threads of the count and write kernels (`BMS_BLOCK`).
const BLOCK: u32 = 512;
/// Threads of the choice (`BMS_CHOOSE`).
const CHOOSE_BLOCK: u32 = 1024;
/// Threads of the small sorts (`BMS_SORT_THREADS`) and of the sample (`BMS_SAMPLE`).
const SORT_THREADS: u32 = 1024;
/// Threads of the totals and extremes kernels.
const SMALL_BLOCK: u32 = 256;
/// The on-chip sort sizes: each job goes to the smallest that holds it (the largest keeps its
/// keys in dynamic shared memory).
const SORT_SIZES: [usize; 3] = [512, 4096, SORT_CAP];
/// The most elements sorted on chip (`BMS_SORT_BIG`).
pub(crate) const SORT_CAP: usize = 16384;
/// The most buckets of a level.
const MAX_BUCKETS: usize = 16384;
/// The fewest buckets of a level.
const MIN_BUCKETS: usize = 1024;
/// Shared memory left to the kernels' static arrays and the driver, per block.
const SHARED_RESERVE: usize = 4096;
/// The most elements of one block of the extremes kernel.
const MINMAX_CHUNK: u64 = 1 << 16;
/// "No region": an active bucket whose elements are not written (`BMS_NONE`).
pub(crate) const NONE: u64 = u64::MAX;
/// Seed of the sample positions.
const SEED: u64 = 0xB0C4_E7A1_5EED;

/// The kernels' device and the shape of their launches.
pub(crate) struct Engine<'a> {
    /// The device.
    pub dev: &'a CudaDevice,
    /// The most buckets of a level: as many `u32` counters as leave room for three count
    /// blocks on a multiprocessor, at most [`MAX_BUCKETS`].
    pub buckets: u32,
    /// Count blocks resident on the whole device (the first level's chunks).
    pub count_blocks: usize,
    /// The most dynamic shared memory a write block takes (two of them fit a multiprocessor).
    write_shared: usize,
}

/// What a level's choice found, and its device buffers for the write that follows.
pub(crate) struct Level {
    /// The level's descriptors.
    pub layout: Layout,
    /// The active buckets, ascending: (bucket, elements).
    pub actives: Vec<(u64, u64)>,
    /// Per rank (in the order given): (its active bucket's index in `actives`, its rank inside).
    pub info: Vec<(usize, u64)>,
    /// The elements of the level's last bucket.
    pub last_total: u64,
    /// Each element's bucket within its segment (`None` when the device had no room: the write
    /// then classifies the elements again).
    oracles: Option<CudaSlice<u16>>,
    /// The chunk, segment and interval words, then the ranks, in one buffer.
    words: CudaSlice<u64>,
    /// Where the segment, interval and rank words start in `words`.
    offsets: [usize; 3],
    partial: CudaSlice<u32>,
    /// The choice's output: the active count, the active list, the ranks' places.
    out: CudaSlice<u64>,
}

/// The input's smallest and largest keys and its NaN count.
pub(crate) type Extremes = (u64, u64, usize);

impl Level {
    /// Views of the chunk, segment and interval words.
    fn descriptors(&self) -> (CudaView<'_, u64>, CudaView<'_, u64>, CudaView<'_, u64>) {
        let [s, i, r] = self.offsets;
        (
            self.words.slice(..s),
            self.words.slice(s..i),
            self.words.slice(i..r),
        )
    }
}

/// A segment small enough to sort on chip, and its wanted ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SortJob {
    /// Its first element.
    pub start: u64,
    /// Its number of elements (at most [`SORT_CAP`]).
    pub len: u64,
    /// (rank inside the segment, result slot).
    pub ranks: Vec<(u64, usize)>,
}

/// The most buckets for `per_block` bytes of (opt-in) shared memory per block and `per_sm` per
/// multiprocessor: `u32` counters that let three count blocks share a multiprocessor, in
/// multiples of 1024, within [`MIN_BUCKETS`]..=[`MAX_BUCKETS`].
pub(crate) fn bucket_budget(per_block: usize, per_sm: usize) -> u32 {
    let fit = per_block.min(per_sm / 3).saturating_sub(SHARED_RESERVE) / 4;
    (fit / 1024 * 1024).clamp(MIN_BUCKETS, MAX_BUCKETS) as u32
}

/// The kernel-name suffix of keys used as elements: `u32` or `u64`.
pub(crate) fn key_dtype<K: RadixKey>() -> &'static str {
    if K::BITS == 32 {
        "u32"
    } else {
        "u64"
    }
}

/// An error for device results that contradict each other (a bug, reported, never a panic).
pub(crate) fn inconsistent(what: &str) -> Error {
    Error::Cuda {
        context: "bucket multiselection".to_string(),
        message: format!("inconsistent device results: {what}"),
    }
}

impl<'a> Engine<'a> {
    /// Sizes the buckets from the device's shared memory and the first level's grid from the
    /// count kernel's occupancy for elements named `dtype`.
    pub(crate) fn new(dev: &'a CudaDevice, dtype: &str) -> Result<Self> {
        dev.stream()
            .context()
            .bind_to_thread()
            .map_err(|e| driver_error("binding the context", e))?;
        let (per_block, per_sm) = shared_memory(dev)?;
        let buckets = bucket_budget(per_block, per_sm);
        let count = dev.function(&BUCKET_MULTISELECT, &format!("bms_count_{dtype}"))?;
        let bytes = buckets as usize * 4;
        allow_shared(&count, bytes)?;
        let per_sm_blocks = count
            .occupancy_max_active_blocks_per_multiprocessor(BLOCK, bytes, None)
            .map_err(|e| driver_error("reading the count kernel's occupancy", e))?
            .max(1) as usize;
        Ok(Engine {
            dev,
            buckets,
            count_blocks: dev.multiprocessors().max(1) * per_sm_blocks,
            write_shared: per_block.min(per_sm / 2).saturating_sub(SHARED_RESERVE),
        })
    }

    /// The sorted keys of a [`SAMPLE`]-element sample of `x` (at least that long) and, when
    /// `extremes`, its smallest and largest keys and NaN count: one read-back.
    pub(crate) fn first_look<T: Element>(
        &self,
        x: &CudaView<'_, T>,
        extremes: bool,
    ) -> Result<(Vec<u64>, Option<Extremes>)> {
        let stream = self.dev.stream();
        let n64 = x.len() as u64;
        let mut sample = self
            .dev
            .alloc::<T::Key>(SAMPLE, "the multiselection sample")?;
        let f = self
            .dev
            .function(&BUCKET_MULTISELECT, &kernel_name("bms_sample", T::DTYPE))?;
        let seed = SEED;
        let mut launch = stream.launch_builder(&f);
        launch.arg(x).arg(&n64).arg(&seed).arg(&mut sample);
        // SAFETY: bms_sample_T(const T* x, u64 n, u64 seed, K* out): one block of BMS_SAMPLE
        // threads; x holds n >= SAMPLE elements and every sampled position is below n; out
        // holds SAMPLE keys.
        unsafe { launch.launch(config(1, SORT_THREADS)) }
            .map_err(|e| driver_error("launching bms_sample", e))?;
        let mut stats = None;
        if extremes {
            let mut words = stream
                .clone_htod(&[u64::MAX, 0, 0])
                .map_err(|e| driver_error("initialising the extremes", e))?;
            let f = self
                .dev
                .function(&BUCKET_MULTISELECT, &kernel_name("bms_minmax", T::DTYPE))?;
            let vec = 16 / std::mem::size_of::<T>();
            let blocks = stride_blocks(
                x.len().div_ceil(vec),
                SMALL_BLOCK,
                self.dev.multiprocessors(),
                8,
            );
            let mut launch = stream.launch_builder(&f);
            launch.arg(x).arg(&n64).arg(&mut words);
            // SAFETY: bms_minmax_T(const T* x, u64 n, u64* stats): x holds n elements (16-byte
            // aligned), stats 3 words.
            unsafe { launch.launch(config(blocks, SMALL_BLOCK)) }
                .map_err(|e| driver_error("launching bms_minmax", e))?;
            let host = stream
                .clone_dtoh(&words)
                .map_err(|e| driver_error("reading the extremes", e))?;
            stats = Some((host[0], host[1], host[2] as usize));
        }
        let keys = stream
            .clone_dtoh(&sample)
            .map_err(|e| driver_error("reading the sample", e))?;
        Ok((keys.into_iter().map(|k| k.to_u64()).collect(), stats))
    }

    /// A level over the elements `x` (of the kernels' type `dtype`) described by `layout`: the
    /// count pass, the totals and the choice for the ascending, distinct `ranks` (positions in
    /// the concatenation of the layout's segments). One read-back.
    pub(crate) fn level<E: DeviceRepr>(
        &self,
        dtype: &str,
        x: &CudaView<'_, E>,
        layout: Layout,
        ranks: &[u64],
    ) -> Result<Level> {
        let stream = self.dev.stream();
        let mut host = Vec::with_capacity(
            layout.chunks.len() + layout.segments.len() + layout.intervals.len() + ranks.len(),
        );
        host.extend_from_slice(&layout.chunks);
        let offsets = [
            host.len(),
            host.len() + layout.segments.len(),
            host.len() + layout.segments.len() + layout.intervals.len(),
        ];
        host.extend_from_slice(&layout.segments);
        host.extend_from_slice(&layout.intervals);
        host.extend_from_slice(ranks);
        let words = stream
            .clone_htod(&host)
            .map_err(|e| driver_error("copying a level's descriptors to the device", e))?;
        let chunks = words.slice(..offsets[0]);
        let segments = words.slice(offsets[0]..offsets[1]);
        let intervals = words.slice(offsets[1]..offsets[2]);
        let ranks_dev = words.slice(offsets[2]..);
        let mut partial = self
            .dev
            .alloc::<u32>(layout.partial_len, "the per-block bucket counts")?;
        let mut oracles = match self.dev.alloc::<u16>(x.len(), "the bucket oracles") {
            Ok(o) => Some(o),
            Err(Error::OutOfDeviceMemory { .. }) => None,
            Err(e) => return Err(e),
        };
        let count = self
            .dev
            .function(&BUCKET_MULTISELECT, &format!("bms_count_{dtype}"))?;
        let shared = layout.max_segment_buckets * 4;
        allow_shared(&count, self.buckets as usize * 4)?;
        let mut launch = stream.launch_builder(&count);
        let null = 0u64;
        launch
            .arg(x)
            .arg(&chunks)
            .arg(&segments)
            .arg(&intervals)
            .arg(&mut partial);
        match oracles.as_mut() {
            Some(o) => launch.arg(o),
            None => launch.arg(&null),
        };
        // SAFETY: bms_count_E(const E* x, const u64* chunks, const u64* segs, const u64* ivs,
        // u32* partial, u16* oracles): one block per chunk; every chunk lies inside x (a 16-byte
        // aligned buffer) and inside its segment; each block writes its segment's buckets (at
        // most max_segment_buckets, the dynamic shared counters allowed above) at its chunk's
        // offset, all within partial_len; every segment has at most MAX_INTERVALS intervals;
        // oracles is null or as long as x (and 16-byte aligned), written at its chunks' indices.
        unsafe { launch.launch(shaped(layout.chunk_count(), 1, BLOCK, shared)) }
            .map_err(|e| driver_error("launching bms_count", e))?;

        let nb = layout.buckets;
        let mut totals = self.dev.alloc_zeros::<u64>(nb, "the bucket totals")?;
        let totals_fn = self.dev.function(&BUCKET_MULTISELECT, "bms_totals")?;
        let (nsegs, nb64) = (layout.segment_count() as u64, nb as u64);
        let mut launch = stream.launch_builder(&totals_fn);
        launch
            .arg(&partial)
            .arg(&chunks)
            .arg(&segments)
            .arg(&nsegs)
            .arg(&nb64)
            .arg(&mut totals);
        let cfg = LaunchConfig {
            grid_dim: (
                nb.div_ceil(SMALL_BLOCK as usize) as u32,
                layout.total_groups.max(1) as u32,
                1,
            ),
            block_dim: (SMALL_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: bms_totals(const u32* partial, const u64* chunks, const u64* segs, u64 nsegs,
        // u64 nb, u64* totals): one thread per bucket (threads past nb return); each reads its
        // segment's chunks' counts, within partial_len; totals holds nb zeroed words.
        unsafe { launch.launch(cfg) }.map_err(|e| driver_error("launching bms_totals", e))?;

        let r = ranks.len();
        let mask_words = nb / 32 + 1;
        let mut starts = self.dev.alloc::<u64>(nb + 1, "the bucket starts")?;
        let mut rank_bucket = self.dev.alloc::<u64>(r, "the ranks' buckets")?;
        let mut mask = self
            .dev
            .alloc::<u32>(mask_words, "the active buckets' mask")?;
        let mut prefix = self
            .dev
            .alloc::<u32>(mask_words, "the active buckets' counts")?;
        let mut out = self.dev.alloc::<u64>(2 + 4 * r, "the active buckets")?;
        let choose = self.dev.function(&BUCKET_MULTISELECT, "bms_choose")?;
        let r64 = r as u64;
        let mut launch = stream.launch_builder(&choose);
        launch
            .arg(&totals)
            .arg(&nb64)
            .arg(&ranks_dev)
            .arg(&r64)
            .arg(&mut starts)
            .arg(&mut rank_bucket)
            .arg(&mut mask)
            .arg(&mut prefix)
            .arg(&mut out);
        // SAFETY: bms_choose(const u64* totals, u64 nb, const u64* ranks, u64 r, u64* starts,
        // u64* rank_bucket, u32* mask, u32* prefix, u64* out): one block of BMS_CHOOSE
        // threads; totals holds nb words, starts nb + 1, ranks and rank_bucket r, mask and
        // prefix nb / 32 + 1, out 2 + 4r; the ranks are ascending and below the totals' sum.
        unsafe { launch.launch(config(1, CHOOSE_BLOCK)) }
            .map_err(|e| driver_error("launching bms_choose", e))?;
        let out_host = stream
            .clone_dtoh(&out)
            .map_err(|e| driver_error("reading the active buckets", e))?;
        let active_count = out_host[0] as usize;
        if active_count > r || (r > 0 && active_count == 0) {
            return Err(inconsistent("the active bucket count"));
        }
        let actives: Vec<(u64, u64)> = (0..active_count)
            .map(|a| (out_host[2 + 2 * a], out_host[3 + 2 * a]))
            .collect();
        let info: Vec<(usize, u64)> = (0..r)
            .map(|i| {
                (
                    out_host[2 + 2 * r + 2 * i] as usize,
                    out_host[3 + 2 * r + 2 * i],
                )
            })
            .collect();
        for &(a, inner) in &info {
            match actives.get(a) {
                Some(&(bucket, count)) if inner < count && (bucket as usize) < nb => {}
                _ => return Err(inconsistent("a rank fell outside its bucket")),
            }
        }
        Ok(Level {
            layout,
            actives,
            info,
            last_total: out_host[1],
            oracles,
            words,
            offsets,
            partial,
            out,
        })
    }

    /// The per-block segmented write after `level` over the same `x`: the keys of active bucket
    /// `a` go to `dest[a]..dest[a] + count` of a new buffer of `len` keys (`dest[a] == NONE`
    /// skips the bucket). Launches as many passes as the active buckets need windows of the
    /// shared memory.
    pub(crate) fn write_segmented<E: DeviceRepr, K: DeviceRepr>(
        &self,
        dtype: &str,
        x: &CudaView<'_, E>,
        level: &Level,
        dest: &[u64],
        len: usize,
    ) -> Result<CudaSlice<K>> {
        let stream = self.dev.stream();
        let mut out = self.dev.alloc::<K>(len, "the active buckets' elements")?;
        let active_count = level.actives.len();
        if len == 0 || active_count == 0 {
            return Ok(out);
        }
        let dest_dev = stream
            .clone_htod(dest)
            .map_err(|e| driver_error("copying the regions to the device", e))?;
        let mut cursor = self
            .dev
            .alloc_zeros::<u64>(active_count, "the region cursors")?;
        let f = self
            .dev
            .function(&BUCKET_MULTISELECT, &format!("bms_write_{dtype}"))?;
        let slots_bytes = (2 * level.layout.max_segment_buckets).next_multiple_of(8);
        let window = (self.write_shared.saturating_sub(slots_bytes) / 12).clamp(1, 0xfffe);
        let act = level.out.slice(2..);
        let act_count = active_count as u64;
        let (chunks, segments, intervals) = level.descriptors();
        let mut a_lo = 0usize;
        while a_lo < active_count {
            let a_hi = (a_lo + window).min(active_count);
            if dest[a_lo..a_hi].iter().all(|&d| d == NONE) {
                a_lo = a_hi;
                continue;
            }
            let shared = (a_hi - a_lo) * 12 + slots_bytes;
            allow_shared(&f, self.write_shared)?;
            let (lo64, hi64) = (a_lo as u64, a_hi as u64);
            let mut launch = stream.launch_builder(&f);
            let null = 0u64;
            launch
                .arg(x)
                .arg(&chunks)
                .arg(&segments)
                .arg(&intervals)
                .arg(&level.partial);
            match level.oracles.as_ref() {
                Some(o) => launch.arg(o),
                None => launch.arg(&null),
            };
            launch
                .arg(&act)
                .arg(&act_count)
                .arg(&dest_dev)
                .arg(&mut cursor)
                .arg(&mut out)
                .arg(&lo64)
                .arg(&hi64);
            // SAFETY: bms_write_E(const E* x, chunks, segs, ivs, const u32* partial, const u16*
            // oracles, const u64* act, u64 act_count, const u64* dest, u64* cursor, K* out, u64
            // a_lo, u64 a_hi): the level's grid over the same x, and its oracles (or null);
            // act (the ascending active list), dest and cursor
            // hold act_count entries; each block reserves exactly its counted elements of a
            // bucket inside [dest[a], dest[a] + count), so writes stay below len; the dynamic
            // shared memory holds the window's bases and counters (fewer than 2^16) and a u16
            // slot per bucket of the largest segment, within write_shared (allowed above).
            unsafe { launch.launch(shaped(level.layout.chunk_count(), 1, BLOCK, shared)) }
                .map_err(|e| driver_error("launching bms_write", e))?;
            a_lo = a_hi;
        }
        Ok(out)
    }

    /// The flag-based write after `level` over the same `x`: the keys of the buckets `keep` (a
    /// subset of the active ones, holding `len` elements) in no particular order.
    pub(crate) fn write_flags<E: DeviceRepr, K: DeviceRepr>(
        &self,
        dtype: &str,
        x: &CudaView<'_, E>,
        level: &Level,
        keep: &[u64],
        len: usize,
    ) -> Result<CudaSlice<K>> {
        let stream = self.dev.stream();
        let mut out = self.dev.alloc::<K>(len, "the active buckets' elements")?;
        if len == 0 {
            return Ok(out);
        }
        let mut words = vec![0u32; level.layout.buckets / 32 + 1];
        for &b in keep {
            words[(b / 32) as usize] |= 1 << (b % 32);
        }
        let keep_dev = stream
            .clone_htod(&words)
            .map_err(|e| driver_error("copying the kept buckets to the device", e))?;
        let mut count = self.dev.alloc_zeros::<u64>(1, "the written count")?;
        let f = self
            .dev
            .function(&BUCKET_MULTISELECT, &format!("bms_write_flags_{dtype}"))?;
        let cap = len as u64;
        let mut launch = stream.launch_builder(&f);
        let (chunks, segments, intervals) = level.descriptors();
        let null = 0u64;
        launch.arg(x).arg(&chunks).arg(&segments).arg(&intervals);
        match level.oracles.as_ref() {
            Some(o) => launch.arg(o),
            None => launch.arg(&null),
        };
        launch
            .arg(&keep_dev)
            .arg(&mut out)
            .arg(&cap)
            .arg(&mut count);
        // SAFETY: bms_write_flags_E(const E* x, chunks, segs, ivs, const u16* oracles, const u32*
        // keep, K* out, u64 cap, u64* out_count): the level's grid over the same x, and its
        // oracles (or null); keep covers every bucket of the level; writes at or past cap are
        // skipped.
        unsafe { launch.launch(config(level.layout.chunk_count(), BLOCK)) }
            .map_err(|e| driver_error("launching bms_write_flags", e))?;
        let written = stream
            .clone_dtoh(&count)
            .map_err(|e| driver_error("reading the written count", e))?;
        if written[0] != cap {
            return Err(inconsistent("the flag-based write's count"));
        }
        Ok(out)
    }

    /// Sorts each job's segment of `x` on chip and writes the key of each wanted rank to
    /// `results[slot]` ([`sort_select`]).
    pub(crate) fn sort_select<E: DeviceRepr, K: DeviceRepr>(
        &self,
        dtype: &str,
        x: &CudaView<'_, E>,
        jobs: &[SortJob],
        results: &mut CudaSlice<K>,
    ) -> Result<()> {
        sort_select(self.dev, dtype, x, jobs, results)
    }

    /// The smallest and largest key of each segment `(start, len)` of `keys`: one read-back.
    pub(crate) fn extremes<K: RadixKey>(
        &self,
        keys: &CudaView<'_, K>,
        segments: &[(u64, u64)],
    ) -> Result<Vec<(u64, u64)>> {
        let stream = self.dev.stream();
        let mut chunks = Vec::new();
        for (s, &(start, len)) in segments.iter().enumerate() {
            let mut at = start;
            while at < start + len {
                let end = (at + MINMAX_CHUNK).min(start + len);
                chunks.extend_from_slice(&[at, end, s as u64, 0]);
                at = end;
            }
        }
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        if chunks.chunks_exact(4).any(|c| c[1] as usize > keys.len()) {
            return Err(inconsistent("a segment outside its buffer"));
        }
        let chunks_dev = stream
            .clone_htod(&chunks)
            .map_err(|e| driver_error("copying the segments to the device", e))?;
        let init: Vec<u64> = segments.iter().flat_map(|_| [u64::MAX, 0]).collect();
        let mut mm = stream
            .clone_htod(&init)
            .map_err(|e| driver_error("initialising the extremes", e))?;
        let f = self.dev.function(
            &BUCKET_MULTISELECT,
            &format!("bms_minmax_keys_{}", key_suffix::<K>()),
        )?;
        let mut launch = stream.launch_builder(&f);
        launch.arg(keys).arg(&chunks_dev).arg(&mut mm);
        // SAFETY: bms_minmax_keys_K(const K* keys, const u64* chunks, u64* mm): one block per
        // chunk, every chunk inside keys (checked above), mm two words per segment.
        unsafe { launch.launch(config(chunks.len() / 4, SMALL_BLOCK)) }
            .map_err(|e| driver_error("launching bms_minmax_keys", e))?;
        let host = stream
            .clone_dtoh(&mm)
            .map_err(|e| driver_error("reading the extremes", e))?;
        Ok(host.chunks_exact(2).map(|w| (w[0], w[1])).collect())
    }
}

/// Sorts each job's segment of `x` (elements of the kernels' type `dtype`, whose keys are `K`)
/// on chip and writes the key of each wanted rank to `results[slot]`: one launch per size class
/// (up to 512, 4096 and [`SORT_CAP`] elements), one block per job, no read-back.
pub(crate) fn sort_select<E: DeviceRepr, K: DeviceRepr>(
    dev: &CudaDevice,
    dtype: &str,
    x: &CudaView<'_, E>,
    jobs: &[SortJob],
    results: &mut CudaSlice<K>,
) -> Result<()> {
    let stream = dev.stream();
    for (c, &cap) in SORT_SIZES.iter().enumerate() {
        let below = if c == 0 { 0 } else { SORT_SIZES[c - 1] };
        let class: Vec<&SortJob> = jobs
            .iter()
            .filter(|j| (below + 1..=cap).contains(&(j.len as usize)) && !j.ranks.is_empty())
            .collect();
        if class.is_empty() {
            continue;
        }
        let (mut words, mut inner, mut slots) = (Vec::new(), Vec::new(), Vec::new());
        for job in &class {
            let r0 = inner.len() as u64;
            for &(k, slot) in &job.ranks {
                inner.push(k);
                slots.push(slot as u64);
            }
            words.extend_from_slice(&[job.start, job.len, r0, inner.len() as u64]);
        }
        if slots.iter().any(|&s| s as usize >= results.len())
            || class
                .iter()
                .any(|j| j.ranks.iter().any(|&(k, _)| k >= j.len))
            || class.iter().any(|j| (j.start + j.len) as usize > x.len())
        {
            return Err(inconsistent("a sort job outside its segment"));
        }
        let (w, i) = (words.len(), words.len() + inner.len());
        words.extend_from_slice(&inner);
        words.extend_from_slice(&slots);
        let all = stream
            .clone_htod(&words)
            .map_err(|e| driver_error("copying the sort jobs to the device", e))?;
        let f = dev.function(&BUCKET_MULTISELECT, &format!("bms_sort{cap}_{dtype}"))?;
        let shared = if cap == SORT_CAP {
            let bytes = cap * std::mem::size_of::<K>();
            allow_shared(&f, bytes)?;
            bytes
        } else {
            0
        };
        let (jobs_dev, inner_dev, slots_dev) = (all.slice(..w), all.slice(w..i), all.slice(i..));
        let mut launch = stream.launch_builder(&f);
        launch
            .arg(x)
            .arg(&jobs_dev)
            .arg(&inner_dev)
            .arg(&slots_dev)
            .arg(&mut *results);
        // SAFETY: bms_sortN_E(const E* x, const u64* jobs, const u64* inner, const u64* slots,
        // K* results): one block of BMS_SORT_THREADS per job; every job lies inside x and
        // holds at most N elements, every inner rank is below its job's length and every slot
        // below results.len() (checked above); the largest size's N keys are the dynamic
        // shared memory allowed above.
        unsafe { launch.launch(shaped(class.len(), 1, SORT_THREADS, shared)) }
            .map_err(|e| driver_error("launching bms_sort", e))?;
    }
    Ok(())
}

/// Unit tests of the launch shapes.
#[cfg(test)]
mod tests {
    use super::*;

    /// The buckets of a few devices' shared memory.
    #[test]
    fn buckets_follow_shared_memory() {
        assert_eq!(bucket_budget(232_448, 233_472), 16384); // H100, H200
        assert_eq!(bucket_budget(166_912, 167_936), 12288); // A100
        assert_eq!(bucket_budget(49_152, 65_536), 4096); // 48 KiB per block
        assert_eq!(bucket_budget(0, 0), 1024);
    }
}
