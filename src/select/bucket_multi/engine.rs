//! The launches of bucket multiselection (`kernels/bucket_multiselect.cu`): the first look at
//! the input (sample, extremes), a level's count and choice, the two ways of writing the active
//! buckets out, the small segments' sorts and the segments' extremes.
//!
//! A level is one count pass (`bms_count_T`: every element of a block's chunk to a bucket of its
//! segment, counted in shared memory, the block's counts written to `partial`), the bucket totals
//! (`bms_totals`), and a one-block choice (`bms_choose`: prefix sums, the bucket of every rank,
//! the active buckets' mask and list), whose results come back in one read. The write that
//! follows reads the same chunks again.

use std::mem::size_of;

use cudarc::driver::{CudaSlice, CudaView, LaunchConfig};

use super::plan::{Layout, SAMPLE};
use crate::device::cuda::kernels::bucket_multiselect::{
    bms_choose, bms_count, bms_minmax, bms_minmax_keys, bms_sample, bms_sort, bms_totals,
    bms_write, bms_write_flags, Chunk, IntervalWords, Job, Segment, BLOCK, CHOOSE_THREADS,
    CHUNK_WORDS, INTERVAL_WORDS, SEGMENT_WORDS, SORT_BIG, SORT_THREADS,
};
use crate::device::cuda::kernels::{OrNull, BUCKET_MULTISELECT};
use crate::device::cuda::launch::{allow_shared, config, shaped, shared_memory, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice};
use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};

pub(crate) use crate::device::cuda::kernels::bucket_multiselect::NONE;

/// Threads of the totals and extremes kernels.
const SMALL_BLOCK: u32 = 256;
/// The on-chip sort sizes: each job goes to the smallest that holds it (the largest keeps its
/// keys in dynamic shared memory).
const SORT_SIZES: [usize; 3] = [512, 4096, SORT_CAP];
/// The most elements sorted on chip (`BMS_SORT_BIG`).
pub(crate) const SORT_CAP: usize = SORT_BIG;
/// The most buckets of a level.
const MAX_BUCKETS: usize = 16384;
/// The fewest buckets of a level.
const MIN_BUCKETS: usize = 1024;
/// Shared memory left to the kernels' static arrays and the driver, per block.
const SHARED_RESERVE: usize = 4096;
/// The most elements of one block of the extremes kernel.
const MINMAX_CHUNK: u64 = 1 << 16;
/// Seed of the sample positions.
const SEED: u64 = 0xB0C4_E7A1_5EED;
/// No level's chunk is shorter than this unless its segment is (the workspace bounds count on
/// it).
pub(crate) const SHORTEST_CHUNK: usize = 1 << 12;

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
        let dev = self.dev;
        let n64 = x.len() as u64;
        let mut sample = dev.alloc::<T::Key>(SAMPLE, "the multiselection sample")?;
        bms_sample(dev, config(1, SAMPLE as u32), x, n64, SEED, &mut sample)?;
        let mut stats = None;
        if extremes {
            let mut words = dev
                .stream()
                .clone_htod(&[u64::MAX, 0, 0])
                .map_err(|e| driver_error("initialising the extremes", e))?;
            let vec = 16 / size_of::<T>();
            let blocks =
                stride_blocks(x.len().div_ceil(vec), SMALL_BLOCK, dev.multiprocessors(), 8);
            bms_minmax(dev, config(blocks, SMALL_BLOCK), x, n64, &mut words)?;
            let host = dev.read(&words, "the extremes")?;
            stats = Some((host[0], host[1], host[2] as usize));
        }
        let keys = dev.read(&sample, "the sample")?;
        Ok((keys.into_iter().map(|k| k.to_u64()).collect(), stats))
    }

    /// A level over the elements `x` described by `layout`: the count pass, the totals and the
    /// choice for the ascending, distinct `ranks` (positions in the concatenation of the
    /// layout's segments). One read-back.
    pub(crate) fn level<E: Element>(
        &self,
        x: &CudaView<'_, E>,
        layout: Layout,
        ranks: &[u64],
    ) -> Result<Level> {
        let dev = self.dev;
        let mut host = Vec::with_capacity(
            layout.chunks.len() * CHUNK_WORDS
                + layout.segments.len() * SEGMENT_WORDS
                + layout.intervals.len() * INTERVAL_WORDS
                + ranks.len(),
        );
        host.extend(layout.chunks.iter().flat_map(Chunk::words));
        let chunk_words = host.len();
        host.extend(layout.segments.iter().flat_map(Segment::words));
        let segment_end = host.len();
        host.extend(layout.intervals.iter().flat_map(IntervalWords::words));
        let offsets = [chunk_words, segment_end, host.len()];
        host.extend_from_slice(ranks);
        let words = dev
            .stream()
            .clone_htod(&host)
            .map_err(|e| driver_error("copying a level's descriptors to the device", e))?;
        let chunks = words.slice(..offsets[0]);
        let segments = words.slice(offsets[0]..offsets[1]);
        let intervals = words.slice(offsets[1]..offsets[2]);
        let ranks_dev = words.slice(offsets[2]..);
        let mut partial = dev.alloc::<u32>(layout.partial_len, "the per-block bucket counts")?;
        let mut oracles = match dev.alloc::<u16>(x.len(), "the bucket oracles") {
            Ok(o) => Some(o),
            Err(Error::OutOfDeviceMemory { .. }) => None,
            Err(e) => return Err(e),
        };
        let count = dev.function(
            &BUCKET_MULTISELECT,
            &format!("bms_count_{}", E::DTYPE.name()),
        )?;
        let shared = layout.max_segment_buckets * 4;
        allow_shared(&count, self.buckets as usize * 4)?;
        bms_count(
            dev,
            shaped(layout.chunk_count(), 1, BLOCK, shared),
            x,
            &chunks,
            &segments,
            &intervals,
            &mut partial,
            OrNull(oracles.as_mut()),
        )?;

        let nb = layout.buckets;
        let mut totals = dev.alloc_zeros::<u64>(nb, "the bucket totals")?;
        let totals_shape = LaunchConfig {
            grid_dim: (
                nb.div_ceil(SMALL_BLOCK as usize) as u32,
                layout.total_groups.max(1) as u32,
                1,
            ),
            block_dim: (SMALL_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        bms_totals(
            dev,
            totals_shape,
            &partial,
            &chunks,
            &segments,
            layout.segment_count() as u64,
            nb as u64,
            &mut totals,
        )?;

        let r = ranks.len();
        let mask_words = nb / 32 + 1;
        let mut starts = dev.alloc::<u64>(nb + 1, "the bucket starts")?;
        let mut rank_bucket = dev.alloc::<u64>(r, "the ranks' buckets")?;
        let mut mask = dev.alloc::<u32>(mask_words, "the active buckets' mask")?;
        let mut prefix = dev.alloc::<u32>(mask_words, "the active buckets' counts")?;
        let mut out = dev.alloc::<u64>(2 + 4 * r, "the active buckets")?;
        bms_choose(
            dev,
            config(1, CHOOSE_THREADS),
            &totals,
            nb as u64,
            &ranks_dev,
            r as u64,
            &mut starts,
            &mut rank_bucket,
            &mut mask,
            &mut prefix,
            &mut out,
        )?;
        let out_host = dev.read(&out, "the active buckets")?;
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
    pub(crate) fn write_segmented<E: Element, K: RadixKey>(
        &self,
        x: &CudaView<'_, E>,
        level: &Level,
        dest: &[u64],
        len: usize,
    ) -> Result<CudaSlice<K>> {
        let dev = self.dev;
        let mut out = dev.alloc::<K>(len, "the active buckets' elements")?;
        let active_count = level.actives.len();
        if len == 0 || active_count == 0 {
            return Ok(out);
        }
        let dest_dev = dev
            .stream()
            .clone_htod(dest)
            .map_err(|e| driver_error("copying the regions to the device", e))?;
        let mut cursor = dev.alloc_zeros::<u64>(active_count, "the region cursors")?;
        let f = dev.function(
            &BUCKET_MULTISELECT,
            &format!("bms_write_{}", E::DTYPE.name()),
        )?;
        let slots_bytes = (2 * level.layout.max_segment_buckets).next_multiple_of(8);
        let window = (self.write_shared.saturating_sub(slots_bytes) / 12).clamp(1, 0xfffe);
        let act = level.out.slice(2..);
        let (chunks, segments, intervals) = level.descriptors();
        let oracles = || OrNull(level.oracles.as_ref());
        let mut a_lo = 0usize;
        while a_lo < active_count {
            let a_hi = (a_lo + window).min(active_count);
            if dest[a_lo..a_hi].iter().all(|&d| d == NONE) {
                a_lo = a_hi;
                continue;
            }
            let shared = (a_hi - a_lo) * 12 + slots_bytes;
            allow_shared(&f, self.write_shared)?;
            bms_write(
                dev,
                shaped(level.layout.chunk_count(), 1, BLOCK, shared),
                x,
                &chunks,
                &segments,
                &intervals,
                &level.partial,
                oracles(),
                &act,
                active_count as u64,
                &dest_dev,
                &mut cursor,
                &mut out,
                a_lo as u64,
                a_hi as u64,
            )?;
            a_lo = a_hi;
        }
        Ok(out)
    }

    /// The flag-based write after `level` over the same `x`: the keys of the buckets `keep` (a
    /// subset of the active ones, holding `len` elements) in no particular order.
    pub(crate) fn write_flags<E: Element, K: RadixKey>(
        &self,
        x: &CudaView<'_, E>,
        level: &Level,
        keep: &[u64],
        len: usize,
    ) -> Result<CudaSlice<K>> {
        let dev = self.dev;
        let mut out = dev.alloc::<K>(len, "the active buckets' elements")?;
        if len == 0 {
            return Ok(out);
        }
        let mut words = vec![0u32; level.layout.buckets / 32 + 1];
        for &b in keep {
            words[(b / 32) as usize] |= 1 << (b % 32);
        }
        let keep_dev = dev
            .stream()
            .clone_htod(&words)
            .map_err(|e| driver_error("copying the kept buckets to the device", e))?;
        let mut count = dev.alloc_zeros::<u64>(1, "the written count")?;
        let cap = len as u64;
        let (chunks, segments, intervals) = level.descriptors();
        bms_write_flags(
            dev,
            config(level.layout.chunk_count(), BLOCK),
            x,
            &chunks,
            &segments,
            &intervals,
            OrNull(level.oracles.as_ref()),
            &keep_dev,
            &mut out,
            cap,
            &mut count,
        )?;
        let written = dev.read(&count, "the written count")?;
        if written[0] != cap {
            return Err(inconsistent("the flag-based write's count"));
        }
        Ok(out)
    }

    /// Sorts each job's segment of `x` on chip and writes the key of each wanted rank to
    /// `results[slot]` ([`sort_select`]).
    pub(crate) fn sort_select<E: Element, K: RadixKey>(
        &self,
        x: &CudaView<'_, E>,
        jobs: &[SortJob],
        results: &mut CudaSlice<K>,
    ) -> Result<()> {
        sort_select(self.dev, x, jobs, results)
    }

    /// The smallest and largest key of each segment `(start, len)` of `keys`: one read-back.
    pub(crate) fn extremes<K: RadixKey>(
        &self,
        keys: &CudaView<'_, K>,
        segments: &[(u64, u64)],
    ) -> Result<Vec<(u64, u64)>> {
        let dev = self.dev;
        let mut chunks = Vec::new();
        for (s, &(start, len)) in segments.iter().enumerate() {
            let mut at = start;
            while at < start + len {
                let end = (at + MINMAX_CHUNK).min(start + len);
                chunks.push(Chunk {
                    begin: at,
                    end,
                    segment: s as u64,
                    counts: 0,
                });
                at = end;
            }
        }
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        if chunks.iter().any(|c| c.end as usize > keys.len()) {
            return Err(inconsistent("a segment outside its buffer"));
        }
        let words: Vec<u64> = chunks.iter().flat_map(Chunk::words).collect();
        let chunks_dev = dev
            .stream()
            .clone_htod(&words)
            .map_err(|e| driver_error("copying the segments to the device", e))?;
        let init: Vec<u64> = segments.iter().flat_map(|_| [u64::MAX, 0]).collect();
        let mut mm = dev
            .stream()
            .clone_htod(&init)
            .map_err(|e| driver_error("initialising the extremes", e))?;
        bms_minmax_keys(
            dev,
            config(chunks.len(), SMALL_BLOCK),
            keys,
            &chunks_dev,
            &mut mm,
        )?;
        let host = dev.read(&mm, "the extremes")?;
        Ok(host.chunks_exact(2).map(|w| (w[0], w[1])).collect())
    }
}

/// Sorts each job's segment of `x` (elements whose keys are `K`) on chip and writes the key of each wanted rank to `results[slot]`: one launch per size class
/// (up to 512, 4096 and [`SORT_CAP`] elements), one block per job, no read-back.
pub(crate) fn sort_select<E: Element, K: RadixKey>(
    dev: &CudaDevice,
    x: &CudaView<'_, E>,
    jobs: &[SortJob],
    results: &mut CudaSlice<K>,
) -> Result<()> {
    sort_class::<E, K, 512>(dev, x, jobs, 0, results)?;
    sort_class::<E, K, 4096>(dev, x, jobs, SORT_SIZES[0], results)?;
    sort_class::<E, K, SORT_CAP>(dev, x, jobs, SORT_SIZES[1], results)
}

/// The launch of [`sort_select`] for the jobs of more than `below` and at most `CAP` elements.
fn sort_class<E: Element, K: RadixKey, const CAP: usize>(
    dev: &CudaDevice,
    x: &CudaView<'_, E>,
    jobs: &[SortJob],
    below: usize,
    results: &mut CudaSlice<K>,
) -> Result<()> {
    let class: Vec<&SortJob> = jobs
        .iter()
        .filter(|j| (below + 1..=CAP).contains(&(j.len as usize)) && !j.ranks.is_empty())
        .collect();
    if class.is_empty() {
        return Ok(());
    }
    let (mut words, mut inner, mut slots) = (Vec::new(), Vec::new(), Vec::new());
    for job in &class {
        let r0 = inner.len() as u64;
        for &(k, slot) in &job.ranks {
            inner.push(k);
            slots.push(slot as u64);
        }
        let desc = Job {
            start: job.start,
            len: job.len,
            ranks_begin: r0,
            ranks_end: inner.len() as u64,
        };
        words.extend_from_slice(&desc.words());
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
    let all = dev
        .stream()
        .clone_htod(&words)
        .map_err(|e| driver_error("copying the sort jobs to the device", e))?;
    let shared = if CAP == SORT_CAP {
        let bytes = CAP * size_of::<K>();
        let f = dev.function(
            &BUCKET_MULTISELECT,
            &format!("bms_sort{CAP}_{}", E::DTYPE.name()),
        )?;
        allow_shared(&f, bytes)?;
        bytes
    } else {
        0
    };
    let (jobs_dev, inner_dev, slots_dev) = (all.slice(..w), all.slice(w..i), all.slice(i..));
    bms_sort::<E, K, CAP>(
        dev,
        shaped(class.len(), 1, SORT_THREADS, shared),
        x,
        &jobs_dev,
        &inner_dev,
        &slots_dev,
        results,
    )
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
