//! SampleSelect on CUDA (`kernels/sample_select.cu`), exact and approximate.
//!
//! A level over `m` candidates launches five kernels: `ss_sample` (one block gathers
//! [`SAMPLE`] keys, one from each of equal strides at a hashed offset, sorts them with a bitonic
//! network in shared memory and keeps up to 127 distinct splitters, laid out as an implicit
//! binary search tree); `ss_count` (every candidate walks the tree in shared memory, its bucket
//! is stored as a one-byte oracle and counted in per-warp shared histograms, with warp
//! aggregation when the sample had repeats; each block writes its 256 counts); `ss_scan`
//! (prefix sums of each bucket's per-block counts); `ss_choose` (one block finds the bucket of
//! every rank and places the selected buckets' regions); one copy of the rank's buckets and
//! counts back to the host, which decides; `ss_filter` (each selected bucket's candidates are
//! copied to their own 16-byte aligned region, their places given by the prefix sums and a
//! warp-aggregated shared counter).
//!
//! Buckets `2j + 1` hold the values equal to splitter `j` (the paper's equality buckets, for
//! every splitter), so a rank among repeated values ends at once with its splitter, and the
//! buckets `2j` between splitters never hold a splitter: every level shrinks. Ranks in the same
//! bucket are selected together at the next level.
//!
//! Multiselection descends into every bucket that holds a wanted rank, level by level (Ribizel
//! & Anzt's recursion, breadth first): the parts of a level (the selected buckets of the level
//! above) are each sampled, counted, scanned and chosen without waiting for one another, one
//! read brings all their counts back, and all their selected buckets are copied into one buffer
//! for the next level. So a level costs one round trip whatever the number of ranks. Parts of
//! at most 16384 candidates are sorted on chip together, one block each (the input itself when
//! it holds at most [`SAMPLE`]: `ss_sort_select`). A part whose largest selected bucket holds
//! more than half of its candidates, or a level below [`MAX_LEVELS`], is finished by radix
//! select over its candidates, so adversarial inputs cost time, never exactness.
//!
//! Approximate selection runs one level without oracles (see [`approximate`]).
//!
//! Workspace of a multiselection: at each level the oracles of its candidates (one byte each:
//! `n` at the first), `256 ·` (count blocks) `u64` per-block counts per part (at most 8 blocks
//! per multiprocessor each), and the copies of the selected buckets (each about `m / 128` for a
//! part of `m`; at most `m`, rounded up to 16 bytes per bucket), kept until the next level's
//! copies are written; `O(parts + ranks)` small words.

use cudarc::driver::{CudaSlice, CudaView};

use crate::device::cuda::kernels::sample_select::{
    ss_choose, ss_count, ss_filter, ss_sample, ss_scan, ss_sort_select, BLOCK, BUCKETS, COUNT_NANS,
    SAMPLE, SLOTS, SORT_THREADS, SPLIT_WORDS, WORD_M, WRITE_ORACLES,
};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice, MemoryNeed};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};
use crate::select::approximate::{closest_splitter, exact, Approximate};
use crate::select::bucket_multi::engine::{sort_select, SortJob, SORT_CAP};
use crate::select::bucket_multi::workspace::sort_select as sort_select_workspace;
use crate::select::radix;

/// Levels deeper than this are finished by radix select.
const MAX_LEVELS: usize = 8;
/// Seed of the sample positions (each level adds its depth).
const SEED: u64 = 0x5A3F_1E5E_C0DE;

/// A rank sought among a level's candidates, and the slot of its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wanted {
    /// The rank among the candidates.
    rank: usize,
    /// Where its result goes.
    slot: usize,
}

/// What the host learns from a level: each bucket's size and, per rank, its bucket, its rank
/// inside the bucket and (equality buckets) the splitter's key.
#[derive(Debug)]
struct LevelCounts {
    /// Candidates per bucket.
    totals: Vec<u64>,
    /// Per rank: (bucket, rank inside it, splitter key as `u64`).
    found: Vec<(usize, usize, u64)>,
}

/// The most device memory [`multiselect`] takes on `dev` for `n` values of `T` and `ranks`
/// ranks: the run's own buffers and sorted results, then at each level the level before, the
/// level's splitters, per-block counts, totals, regions, rank buckets and oracles, the copies
/// of its selected buckets (at most its candidates, 16 bytes of rounding a bucket, one bucket a
/// rank), and radix select over a part or the on-chip sorts. A level has at most one part a
/// rank, each of more than [`SORT_CAP`] candidates below the first level.
pub(crate) fn workspace<T: Element>(dev: &CudaDevice, n: usize, ranks: usize) -> MemoryNeed {
    let own = MemoryNeed::of::<u8>(1)
        .and(MemoryNeed::of::<u64>(BUCKETS * grid::<T>(dev, n)))
        .and(MemoryNeed::of::<T::Key>(SPLIT_WORDS))
        .and(MemoryNeed::of::<u64>(BUCKETS))
        .and(MemoryNeed::of::<u64>(1));
    let on_chip = MemoryNeed::of::<u64>(ranks).and(MemoryNeed::of::<u64>(3 * ranks));
    if n <= SAMPLE {
        return own.and(on_chip);
    }
    let parts = ranks.min(n / SORT_CAP + 1);
    let vec = 16 / std::mem::size_of::<T>();
    let blocks = (parts * grid::<T>(dev, n)).min(n.div_ceil(vec * BLOCK as usize) + parts);
    let copies = MemoryNeed::of::<T>(n).and(MemoryNeed::bytes(16 * ranks));
    let level = MemoryNeed::of::<u64>(ranks)
        .and(MemoryNeed::of::<T::Key>(SPLIT_WORDS * parts))
        .and(MemoryNeed::of::<u64>(BUCKETS * blocks))
        .and(MemoryNeed::of::<u64>(BUCKETS * parts))
        .and(MemoryNeed::of::<u64>(BUCKETS * parts))
        .and(MemoryNeed::of::<u64>(BUCKETS * parts + 3 * ranks))
        .and(MemoryNeed::of::<u8>(n));
    let finish = radix::cuda::workspace::<T>(dev, n, ranks)
        .or(sort_select_workspace(ranks))
        .or(on_chip);
    own.and(MemoryNeed::of::<T::Key>(ranks))
        .and(copies)
        .and(level)
        .and(copies)
        .and(finish)
}

/// The elements of `ranks` (not empty, all `< buf.len()`) and the number of NaNs of the input.
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    let n = buf.len();
    let mut order: Vec<usize> = ranks.to_vec();
    order.sort_unstable();
    order.dedup();
    let wanted: Vec<Wanted> = order
        .iter()
        .enumerate()
        .map(|(slot, &rank)| Wanted { rank, slot })
        .collect();
    let mut run = Run::<T>::new(buf.device(), n)?;
    run.results = vec![None; wanted.len()];
    run.solve(&buf.as_slice().as_view(), &wanted)?;
    let nans = run.nan_count()?;
    let mut values = Vec::with_capacity(ranks.len());
    for &k in ranks {
        let slot = order.binary_search(&k).unwrap_or(0);
        match run.results.get(slot).copied().flatten() {
            Some(v) => values.push(v),
            None => return Err(inconsistent("a rank was left without a result")),
        }
    }
    Ok((values, nans))
}

/// Approximate selection of rank `k` (`k < len <= buf.len()`, `len` the number of values
/// ranks refer to): one level's splitter closest to `k` and its exact rank range, and the
/// number of NaNs of the input. Inputs of at most [`SAMPLE`] values are selected exactly.
pub(crate) fn approximate<T: Element>(
    buf: &DeviceBuffer<T>,
    k: usize,
    len: usize,
) -> Result<(Approximate<T>, usize)> {
    let n = buf.len();
    let x = buf.as_slice().as_view();
    let mut run = Run::<T>::new(buf.device(), n)?;
    if n <= SAMPLE {
        let (key, lo, hi) = run.sort_select(&x, &[k], true)?[0];
        let nans = run.nan_count()?;
        return Ok((exact(T::from_key(key), k, lo, hi), nans));
    }
    run.count_level(&x, 0, COUNT_NANS)?;
    let totals = run
        .dev
        .read(&run.totals, "the SampleSelect bucket counts")?;
    let split = run.dev.read(&run.split, "the SampleSelect splitters")?;
    let nans = run.nan_count()?;
    let m = split[WORD_M].to_u64() as usize;
    if m == 0 || m >= SLOTS {
        return Err(inconsistent("the splitter count is out of range"));
    }
    match closest_splitter(&totals, m, k, len) {
        Some((j, lo, hi)) => Ok((exact(T::from_key(split[SLOTS + j]), k, lo, hi), nans)),
        None => {
            // Every splitter is a NaN left out of the ranks: select exactly instead.
            let value = multiselect(buf, &[k])?.0[0];
            let (lo, hi) = run.rank_range(&x, value.to_key())?;
            Ok((exact(value, k, lo, hi), nans))
        }
    }
}

/// An error for device results that contradict each other (a bug, reported, never a panic).
fn inconsistent(what: &str) -> Error {
    Error::Cuda {
        context: "SampleSelect".to_string(),
        message: format!("inconsistent device results: {what}"),
    }
}

/// The workspace of one selection.
struct Run<'a, T: Element> {
    /// The device.
    dev: &'a CudaDevice,
    /// The single level of approximate selection stores no oracles: one byte.
    oracles: CudaSlice<u8>,
    /// Per-block bucket counts of a single level over the input, `BUCKETS` rows of `grid(n)`.
    partial: CudaSlice<u64>,
    /// A single level's split array.
    split: CudaSlice<T::Key>,
    /// A single level's bucket totals.
    totals: CudaSlice<u64>,
    /// The NaN count of the input.
    nans: CudaSlice<u64>,
    /// The results, by slot.
    results: Vec<Option<T>>,
}

impl<'a, T: Element> Run<'a, T> {
    /// Allocates a single level's workspace for `n` values (the levels of a multiselection
    /// allocate their own).
    fn new(dev: &'a CudaDevice, n: usize) -> Result<Self> {
        let blocks = grid::<T>(dev, n);
        Ok(Run {
            dev,
            oracles: dev.alloc::<u8>(1, "SampleSelect oracles")?,
            partial: dev.alloc::<u64>(BUCKETS * blocks, "SampleSelect block counts")?,
            split: dev.alloc::<T::Key>(SPLIT_WORDS, "SampleSelect splitters")?,
            totals: dev.alloc::<u64>(BUCKETS, "SampleSelect bucket counts")?,
            nans: dev.alloc_zeros::<u64>(1, "SampleSelect NaN count")?,
            results: Vec::new(),
        })
    }

    /// The NaN count of the input (after the first level or on-chip sort).
    fn nan_count(&self) -> Result<usize> {
        Ok(self.dev.read(&self.nans, "the NaN count")?[0] as usize)
    }

    /// Selects the `wanted` ranks of the input `x` level by level. Every part of a level (a
    /// selected bucket of the level above, or the input) is sampled, counted and chosen
    /// without waiting for the others; one read brings all their bucket counts back; their
    /// selected buckets are copied into the next level's buffer; parts of at most
    /// [`SORT_CAP`] candidates are sorted on chip together, one block each.
    fn solve(&mut self, x: &CudaView<'_, T>, wanted: &[Wanted]) -> Result<()> {
        let n = x.len();
        if n <= SAMPLE {
            let ranks: Vec<usize> = wanted.iter().map(|w| w.rank).collect();
            let found = self.sort_select(x, &ranks, true)?;
            for (w, (key, _, _)) in wanted.iter().zip(found) {
                self.results[w.slot] = Some(T::from_key(key));
            }
            return Ok(());
        }
        let mut sorted = self
            .dev
            .alloc_zeros::<T::Key>(self.results.len(), "SampleSelect sorted results")?;
        let mut sorted_slots: Vec<usize> = Vec::new();
        let mut level: Option<CudaSlice<T>> = None;
        let mut parts = vec![Part {
            start: 0,
            len: n,
            wanted: wanted.to_vec(),
        }];
        let mut depth = 0;
        while !parts.is_empty() {
            let buffer = level.take();
            let src = match &buffer {
                Some(b) => b.slice(..),
                None => x.slice(..),
            };
            let (small, big): (Vec<Part>, Vec<Part>) = parts
                .into_iter()
                .partition(|p| depth > 0 && p.len <= SORT_CAP);
            if !small.is_empty() {
                let jobs: Vec<SortJob> = small
                    .iter()
                    .map(|p| SortJob {
                        start: p.start as u64,
                        len: p.len as u64,
                        ranks: p.wanted.iter().map(|w| (w.rank as u64, w.slot)).collect(),
                    })
                    .collect();
                sort_select(self.dev, &src, &jobs, &mut sorted)?;
                sorted_slots.extend(small.iter().flat_map(|p| p.wanted.iter().map(|w| w.slot)));
            }
            if big.is_empty() {
                break;
            }
            if depth >= MAX_LEVELS {
                for p in &big {
                    self.finish_radix(&src.slice(p.start..p.start + p.len), &p.wanted)?;
                }
                break;
            }
            let (next, next_parts) = self.level(&src, &big, depth)?;
            level = next;
            parts = next_parts;
            depth += 1;
        }
        if !sorted_slots.is_empty() {
            let keys = self.dev.read(&sorted, "the sorted results")?;
            for slot in sorted_slots {
                self.results[slot] = Some(T::from_key(keys[slot]));
            }
        }
        Ok(())
    }

    /// One level over the `parts` of `src` (each more than [`SAMPLE`] candidates, 16-byte
    /// aligned): per part a sample, a count (oracles, per-block counts; NaNs at depth 0), a scan
    /// and a choice, all launched before one read of every part's counts; then the results in
    /// equality buckets, radix select for parts that would not shrink by half, and the copies of
    /// the other parts' selected buckets into one new buffer. Returns it and its parts.
    fn level(
        &mut self,
        src: &CudaView<'_, T>,
        parts: &[Part],
        depth: usize,
    ) -> Result<(Option<CudaSlice<T>>, Vec<Part>)> {
        let stream = self.dev.stream();
        let count = parts.len();
        let blocks: Vec<usize> = parts.iter().map(|p| grid::<T>(self.dev, p.len)).collect();
        let prefix = |sizes: &mut dyn Iterator<Item = usize>| -> Vec<usize> {
            let mut at = 0;
            let mut out = vec![0];
            for size in sizes {
                at += size;
                out.push(at);
            }
            out
        };
        let partial_at = prefix(&mut blocks.iter().map(|&b| BUCKETS * b));
        let ranks_at = prefix(&mut parts.iter().map(|p| p.wanted.len()));
        let info_at = prefix(&mut parts.iter().map(|p| BUCKETS + 3 * p.wanted.len()));
        let ranks64: Vec<u64> = parts
            .iter()
            .flat_map(|p| p.wanted.iter().map(|w| w.rank as u64))
            .collect();
        let ranks_dev = stream
            .clone_htod(&ranks64)
            .map_err(|e| driver_error("copying ranks to the device", e))?;
        let mut split = self
            .dev
            .alloc::<T::Key>(SPLIT_WORDS * count, "SampleSelect splitters")?;
        let mut partial = self
            .dev
            .alloc::<u64>(partial_at[count], "SampleSelect block counts")?;
        let mut totals = self
            .dev
            .alloc::<u64>(BUCKETS * count, "SampleSelect bucket counts")?;
        let mut dest = self
            .dev
            .alloc::<u64>(BUCKETS * count, "SampleSelect filter regions")?;
        let mut info = self
            .dev
            .alloc::<u64>(info_at[count], "SampleSelect rank buckets")?;
        let mut oracles = self.dev.alloc::<u8>(src.len(), "SampleSelect oracles")?;
        let flags = WRITE_ORACLES | if depth == 0 { COUNT_NANS } else { 0 };
        for (i, p) in parts.iter().enumerate() {
            let view = src.slice(p.start..p.start + p.len);
            let (m64, seed) = (p.len as u64, SEED.wrapping_add(depth as u64));
            ss_sample(
                self.dev,
                config(1, SORT_THREADS),
                &view,
                m64,
                seed,
                &mut split.slice_mut(SPLIT_WORDS * i..SPLIT_WORDS * (i + 1)),
            )?;
            let split_i = split.slice(SPLIT_WORDS * i..SPLIT_WORDS * (i + 1));
            let mut partial_i = partial.slice_mut(partial_at[i]..partial_at[i + 1]);
            // Parts start on 16-byte bounds, and their oracles at the same offsets, so the
            // oracles' word stores stay aligned.
            ss_count(
                self.dev,
                config(blocks[i], BLOCK),
                &view,
                m64,
                &split_i,
                &mut oracles.slice_mut(p.start..p.start + p.len),
                &mut partial_i,
                &mut self.nans,
                flags,
            )?;
            ss_scan(
                self.dev,
                config(BUCKETS, BLOCK),
                &mut partial_i,
                blocks[i] as u64,
                &mut totals.slice_mut(BUCKETS * i..BUCKETS * (i + 1)),
            )?;
            ss_choose(
                self.dev,
                config(1, BUCKETS as u32),
                &totals.slice(BUCKETS * i..BUCKETS * (i + 1)),
                &split_i,
                &ranks_dev.slice(ranks_at[i]..ranks_at[i + 1]),
                p.wanted.len() as u64,
                &mut info.slice_mut(info_at[i]..info_at[i + 1]),
                &mut dest.slice_mut(BUCKETS * i..BUCKETS * (i + 1)),
            )?;
        }
        let host = self.dev.read(&info, "the SampleSelect buckets")?;
        let mut plans = Vec::with_capacity(count);
        for (i, p) in parts.iter().enumerate() {
            let words = &host[info_at[i]..info_at[i + 1]];
            let counts = LevelCounts {
                totals: words[..BUCKETS].to_vec(),
                found: words[BUCKETS..]
                    .chunks_exact(3)
                    .map(|c| (c[0] as usize, c[1] as usize, c[2]))
                    .collect(),
            };
            let plan = plan_filter::<T>(&counts, &p.wanted, p.len)?;
            for &(slot, key) in &plan.found {
                self.results[slot] = Some(T::from_key(T::Key::from_u64(key)));
            }
            plans.push(plan);
        }
        let mut next_parts = Vec::new();
        let mut bases = vec![None; count];
        let mut total = 0usize;
        for (i, (p, plan)) in parts.iter().zip(&plans).enumerate() {
            if plan.groups.is_empty() {
                continue;
            }
            if plan.largest > p.len / 2 {
                // No progress worth a copy: finish the open ranks over the part's candidates.
                let open: Vec<Wanted> = p
                    .wanted
                    .iter()
                    .filter(|w| !plan.found.iter().any(|&(slot, _)| slot == w.slot))
                    .copied()
                    .collect();
                self.finish_radix(&src.slice(p.start..p.start + p.len), &open)?;
                continue;
            }
            bases[i] = Some(total);
            for group in &plan.groups {
                next_parts.push(Part {
                    start: total + group.start,
                    len: group.len,
                    wanted: group.wanted.clone(),
                });
            }
            total += plan.total;
        }
        if next_parts.is_empty() {
            return Ok((None, next_parts));
        }
        let mut out = self
            .dev
            .alloc::<T>(total.max(1), "SampleSelect candidates")?;
        for (i, (p, plan)) in parts.iter().zip(&plans).enumerate() {
            let Some(base) = bases[i] else { continue };
            let view = src.slice(p.start..p.start + p.len);
            // The same grid as the part's ss_count over the same elements, so its per-block
            // prefix sums match; out holds the sum of the part's selected buckets' rounded
            // sizes (plan_filter), which bounds every place written.
            ss_filter(
                self.dev,
                config(blocks[i], BLOCK),
                &view,
                p.len as u64,
                &oracles.slice(p.start..p.start + p.len),
                &partial.slice(partial_at[i]..partial_at[i + 1]),
                &dest.slice(BUCKETS * i..BUCKETS * (i + 1)),
                &mut out.slice_mut(base..base + plan.total),
            )?;
        }
        Ok((Some(out), next_parts))
    }

    /// Radix select of the `wanted` ranks over the candidates `x`.
    fn finish_radix(&mut self, x: &CudaView<'_, T>, wanted: &[Wanted]) -> Result<()> {
        let ranks: Vec<usize> = wanted.iter().map(|w| w.rank).collect();
        let values = radix::cuda::multiselect_in(self.dev, x, &ranks)?.0;
        for (w, v) in wanted.iter().zip(values) {
            self.results[w.slot] = Some(v);
        }
        Ok(())
    }

    /// Sorts the at most [`SAMPLE`] candidates `x` on chip: per rank, its key and the ranks
    /// that key occupies. Counts the NaNs when `count_nans`.
    fn sort_select(
        &mut self,
        x: &CudaView<'_, T>,
        ranks: &[usize],
        count_nans: bool,
    ) -> Result<Vec<(T::Key, usize, usize)>> {
        let stream = self.dev.stream();
        let ranks64: Vec<u64> = ranks.iter().map(|&k| k as u64).collect();
        let ranks_dev = stream
            .clone_htod(&ranks64)
            .map_err(|e| driver_error("copying ranks to the device", e))?;
        let mut out = self
            .dev
            .alloc::<u64>(3 * ranks.len(), "SampleSelect sorted results")?;
        ss_sort_select(
            self.dev,
            config(1, SORT_THREADS),
            x,
            x.len() as u64,
            &ranks_dev,
            ranks.len() as u64,
            &mut out,
            &mut self.nans,
            count_nans as u32,
        )?;
        let host = self.dev.read(&out, "the sorted results")?;
        Ok(host
            .chunks_exact(3)
            .map(|c| (T::Key::from_u64(c[0]), c[1] as usize, c[2] as usize))
            .collect())
    }

    /// Launches a level's sample, count and scan over the candidates `x` (more than
    /// [`SAMPLE`]): the split array, oracles (with `WRITE_ORACLES`), per-block prefix sums and
    /// bucket totals are left on the device.
    fn count_level(&mut self, x: &CudaView<'_, T>, depth: usize, flags: u32) -> Result<()> {
        ss_sample(
            self.dev,
            config(1, SORT_THREADS),
            x,
            x.len() as u64,
            SEED.wrapping_add(depth as u64),
            &mut self.split.as_view_mut(),
        )?;
        self.count_scan(x, flags)
    }

    /// Launches the count over the split array and the scan of its per-block counts, over the
    /// candidates `x` (at most the `n` values the workspace was sized for); `flags` asks for no
    /// oracles, which this workspace has no room for.
    fn count_scan(&mut self, x: &CudaView<'_, T>, flags: u32) -> Result<()> {
        let blocks = grid::<T>(self.dev, x.len());
        ss_count(
            self.dev,
            config(blocks, BLOCK),
            x,
            x.len() as u64,
            &self.split.as_view(),
            &mut self.oracles.as_view_mut(),
            &mut self.partial.as_view_mut(),
            &mut self.nans,
            flags,
        )?;
        ss_scan(
            self.dev,
            config(BUCKETS, BLOCK),
            &mut self.partial.as_view_mut(),
            blocks as u64,
            &mut self.totals.as_view_mut(),
        )
    }

    /// The ranks `lo..hi` the key `key` occupies in `x` (more than [`SAMPLE`] values): one
    /// count over a split array with that key as the only splitter.
    fn rank_range(&mut self, x: &CudaView<'_, T>, key: T::Key) -> Result<(usize, usize)> {
        let layout = split_layout(&[key]);
        self.dev
            .stream()
            .memcpy_htod(&layout, &mut self.split)
            .map_err(|e| driver_error("copying a splitter to the device", e))?;
        self.count_scan(x, 0)?;
        let totals = self
            .dev
            .read(&self.totals, "the SampleSelect bucket counts")?;
        let lo = totals[0] as usize;
        Ok((lo, lo + totals[1] as usize))
    }
}

/// Blocks of the count and filter kernels over `m` candidates.
fn grid<T: Element>(dev: &CudaDevice, m: usize) -> usize {
    let vec = 16 / std::mem::size_of::<T>();
    stride_blocks(m.div_ceil(vec).max(1), BLOCK, dev.multiprocessors(), 8)
}

/// One selected bucket: its region in the filter's output and the ranks sought in it.
#[derive(Debug, PartialEq, Eq)]
struct Group {
    /// The first element of its region.
    start: usize,
    /// Its number of candidates.
    len: usize,
    /// The ranks inside it.
    wanted: Vec<Wanted>,
}

/// The host's reading of a level.
#[derive(Debug, PartialEq, Eq)]
struct FilterPlan {
    /// Results found in equality buckets: (slot, key).
    found: Vec<(usize, u64)>,
    /// The selected buckets in bucket order.
    groups: Vec<Group>,
    /// The filter output's length (regions rounded up to 16 bytes).
    total: usize,
    /// The largest selected bucket.
    largest: usize,
}

/// Reads a level's counts (checked against `m` candidates): results in equality buckets, and
/// the regions of the selected buckets exactly as `ss_choose` placed them.
fn plan_filter<T: Element>(
    counts: &LevelCounts,
    wanted: &[Wanted],
    m: usize,
) -> Result<FilterPlan> {
    let align = 16 / std::mem::size_of::<T>();
    let sum: u64 = counts.totals.iter().sum();
    if sum != m as u64 || counts.found.len() != wanted.len() {
        return Err(inconsistent("the bucket counts do not add up"));
    }
    let mut found = Vec::new();
    let mut by_bucket: Vec<Vec<Wanted>> = vec![Vec::new(); BUCKETS];
    for (w, &(bucket, inner, key)) in wanted.iter().zip(&counts.found) {
        if bucket >= BUCKETS - 1 || inner as u64 >= counts.totals[bucket] {
            return Err(inconsistent("a rank fell outside its bucket"));
        }
        if bucket % 2 == 1 {
            found.push((w.slot, key));
        } else {
            by_bucket[bucket].push(Wanted {
                rank: inner,
                slot: w.slot,
            });
        }
    }
    let mut groups = Vec::new();
    let (mut total, mut largest) = (0usize, 0usize);
    for (bucket, inner) in by_bucket.into_iter().enumerate() {
        if inner.is_empty() {
            continue;
        }
        let len = counts.totals[bucket] as usize;
        groups.push(Group {
            start: total,
            len,
            wanted: inner,
        });
        total += len.div_ceil(align) * align;
        largest = largest.max(len);
    }
    Ok(FilterPlan {
        found,
        groups,
        total,
        largest,
    })
}

/// The split array `ss_count` reads, for the given sorted, distinct splitters (1 to 127): the
/// slots in heap order, the slots in ascending order (padded with the largest key), the
/// number of splitters and a zero aggregation flag — the layout `ss_sample` writes.
fn split_layout<K: RadixKey>(splitters: &[K]) -> Vec<K> {
    let mut words = vec![K::MAX; SPLIT_WORDS];
    words[SLOTS..SLOTS + splitters.len()].copy_from_slice(splitters);
    for i in 0..SLOTS - 1 {
        words[i] = words[SLOTS + inorder(i)];
    }
    words[WORD_M] = K::from_u64(splitters.len() as u64);
    words[WORD_M + 1] = K::from_u64(0);
    words
}

/// The sorted position of heap node `i` of the complete tree of depth 7 (`ss_inorder`).
fn inorder(i: usize) -> usize {
    let depth = (usize::BITS - 1 - (i + 1).leading_zeros()) as usize;
    let p = i + 1 - (1 << depth);
    ((2 * p + 1) << (6 - depth)) - 1
}

/// A part of a level: `len` candidates from `start` (a 16-byte bound) of the level's buffer,
/// and the ranks sought among them.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Part {
    /// Its first candidate.
    start: usize,
    /// Its number of candidates.
    len: usize,
    /// The ranks among them.
    wanted: Vec<Wanted>,
}

/// Unit tests of the host-side layout and planning.
#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's tree walk (`ss_bucket`) over a split array, step for step.
    fn walk<K: RadixKey>(split: &[K], key: K) -> usize {
        let mut i = 0;
        for _ in 0..7 {
            i = 2 * i + 1 + (split[i] <= key) as usize;
        }
        let m = split[WORD_M].to_u64() as usize;
        let j = (i - (SLOTS - 1)).min(m);
        let equal = j > 0 && split[SLOTS + j - 1] == key;
        2 * j - equal as usize
    }

    /// The heap order of the sorted slots: the root is the middle, leaves the even positions.
    #[test]
    fn inorder_positions() {
        assert_eq!((inorder(0), inorder(1), inorder(2)), (63, 31, 95));
        let mut seen: Vec<usize> = (0..SLOTS - 1).map(inorder).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..SLOTS - 1).collect::<Vec<_>>());
    }

    /// Walking the tree gives the range bucket between splitters or the splitter's equality
    /// bucket, for every number of splitters, padding ignored (also for the largest key).
    #[test]
    fn tree_walk_finds_every_bucket() {
        for m in [1usize, 2, 3, 63, 64, 100, 126, 127] {
            for top in [false, true] {
                let mut splitters: Vec<u32> = (0..m as u32).map(|i| 10 * i + 10).collect();
                if top {
                    *splitters.last_mut().unwrap() = u32::MAX;
                }
                let split = split_layout(&splitters);
                let keys = (0..10 * m as u32 + 20).chain([u32::MAX - 1, u32::MAX]);
                for key in keys {
                    let j = splitters.partition_point(|&s| s <= key);
                    let equal = j > 0 && splitters[j - 1] == key;
                    assert_eq!(walk(&split, key), 2 * j - equal as usize, "m={m} key={key}");
                }
            }
        }
    }

    /// Equality buckets give results; range buckets get aligned regions in bucket order.
    #[test]
    fn plan_places_regions_like_the_kernel() {
        let mut totals = vec![0u64; BUCKETS];
        totals[..5].copy_from_slice(&[5, 2, 7, 1, 9]);
        let counts = LevelCounts {
            totals,
            found: vec![(0, 4, 0), (1, 1, 77), (4, 0, 0), (4, 8, 0)],
        };
        let wanted: Vec<Wanted> = [4, 6, 15, 23]
            .iter()
            .enumerate()
            .map(|(slot, &rank)| Wanted { rank, slot })
            .collect();
        let plan = plan_filter::<f32>(&counts, &wanted, 24).unwrap();
        assert_eq!(plan.found, vec![(1, 77)]);
        assert_eq!(plan.groups.len(), 2);
        assert_eq!((plan.groups[0].start, plan.groups[0].len), (0, 5));
        assert_eq!((plan.groups[1].start, plan.groups[1].len), (8, 9));
        assert_eq!(plan.groups[1].wanted[1], Wanted { rank: 8, slot: 3 });
        assert_eq!((plan.total, plan.largest), (20, 9));
        assert!(plan_filter::<f32>(&counts, &wanted, 25).is_err());
    }
}
