//! A rank's data in the memory of its GPU: the local passes of distributed selection as
//! kernels (`kernels/distributed.cu`), with the bucket of every key computed exactly as on the
//! host, so that CPU and GPU ranks can work together.

use cudarc::driver::{CudaSlice, LaunchConfig};

use crate::device::cuda::download::download_vec;
use crate::device::cuda::kernels::distributed::{
    dist_count, dist_count_copy, dist_count_keys, dist_count_keys_no_ids, dist_count_no_ids,
    dist_gather, dist_offsets, dist_reduce, dist_reduce_ids, dist_reduce_ids_keys,
    dist_reduce_keys, dist_sketch, dist_stats, dist_totals, BLOCK, COPY_BUCKETS, ID_BUCKETS,
    MAX_BLOCKS,
};
use crate::device::cuda::kernels::NULL;
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};
use crate::random::SplitMix64;
use crate::select::sort_choose::cuda::{sort_keys, to_keys};

use super::plan::BucketPlan;
use super::shard::{scaled_sketch, Copied, LocalStats, Shard, SKETCH_GROUP, SKETCH_PIECE};

/// Bucket counts a block keeps in shared memory at most (40 KB of `u32`, beside the plan of at
/// most 6 KB the kernel copies there: under 48 KB, the most a block gets without opting in).
const SHARED_BUCKETS: usize = 10 * 1024;

/// Keys on the device, the first `len` of a buffer that may be longer.
type Keys<K> = (CudaSlice<K>, usize);

/// A rank's data on its GPU.
pub(crate) struct DeviceShard<'a, T: Element> {
    data: &'a DeviceBuffer<T>,
    reduced: Option<Keys<T::Key>>,
    /// The last pass's counts: this rank's per bucket, and per block and bucket on the device
    /// (the reduction's blocks take the same tiles and write where these counts say).
    counts: Vec<u64>,
    partial: Option<Partial>,
    /// This rank's sketch of the pass (its buckets' estimated counts), for the room a copy
    /// takes.
    sketch: Vec<u64>,
    /// The keys the last count copied.
    copied: Option<Copied<Keys<T::Key>>>,
}

/// Per-block bucket counts of a pass: `blocks` rows of the plan's buckets.
struct Partial {
    counts: CudaSlice<u32>,
    blocks: usize,
    /// Every input's bucket (`u16::MAX` for none), where the plan has fewer buckets.
    ids: Option<CudaSlice<u16>>,
    /// The pass's plan on the device as the count read it, for the reduction by the same plan.
    plan: CudaSlice<u64>,
}

impl<'a, T: Element> DeviceShard<'a, T> {
    pub(crate) fn new(data: &'a DeviceBuffer<T>) -> Self {
        DeviceShard {
            data,
            reduced: None,
            counts: Vec::new(),
            partial: None,
            sketch: Vec::new(),
            copied: None,
        }
    }

    fn dev(&self) -> &CudaDevice {
        self.data.device()
    }

    /// Elements of the current data.
    fn current_len(&self) -> usize {
        self.reduced.as_ref().map_or(self.data.len(), |r| r.1)
    }

    fn blocks(&self, n: usize) -> usize {
        stride_blocks(n, BLOCK, self.dev().multiprocessors(), 8)
    }

    /// Blocks of the count and the reduction over `n` inputs, which take tiles of eight inputs
    /// a thread in turn (`TILE` in kernels/distributed.cu): four blocks a multiprocessor, at
    /// most one a tile.
    fn tile_blocks(&self, n: usize) -> usize {
        n.div_ceil(8 * BLOCK as usize)
            .clamp(1, (4 * self.dev().multiprocessors()).min(MAX_BLOCKS))
    }

    /// The per-block counts of a pass of `blocks` blocks over `buckets` buckets (written whole
    /// by blocks counting in shared memory, else zeroed for their atomics), their launch
    /// (shared memory for the counters when they fit), and whether they fit.
    fn count_rows(
        &self,
        blocks: usize,
        buckets: usize,
    ) -> Result<(CudaSlice<u32>, LaunchConfig, u32)> {
        let dev = self.dev();
        let shared_ok = (buckets <= SHARED_BUCKETS) as u32;
        let mut cfg = config(blocks, BLOCK);
        let rows = match shared_ok {
            1 => {
                cfg.shared_mem_bytes = (buckets * 4) as u32;
                dev.alloc::<u32>(blocks * buckets, "the blocks' counts")?
            }
            _ => dev.alloc_zeros::<u32>(blocks * buckets, "the blocks' counts")?,
        };
        Ok((rows, cfg, shared_ok))
    }

    /// `counts[..buckets]` = the column sums of the `blocks` rows of `partial`.
    fn totals(
        &self,
        partial: &CudaSlice<u32>,
        blocks: usize,
        buckets: usize,
        counts: &mut CudaSlice<u64>,
    ) -> Result<()> {
        let cfg = config(buckets.div_ceil(BLOCK as usize), BLOCK);
        dist_totals(
            self.dev(),
            cfg,
            partial,
            blocks as u32,
            buckets as u32,
            counts,
        )
    }

    /// The room for a copy of the buckets `keep` of `n` inputs: what this rank's sketch
    /// estimates they hold, a quarter more and some, at most `n`.
    fn copy_room(&self, keep: &[usize], n: usize) -> usize {
        let estimate: u64 = keep
            .iter()
            .map(|&b| self.sketch.get(b).copied().unwrap_or(n as u64))
            .sum();
        let room = estimate + estimate / 4 + 8 * (estimate as f64).sqrt() as u64 + (1 << 16);
        room.min(n as u64) as usize
    }

    /// The plan as the counts read it: its bins when it is binned (`p` = 0), else its
    /// intervals (`p` of them).
    fn upload_count_plan(&self, plan: &BucketPlan<T>) -> Result<(CudaSlice<u64>, u32)> {
        match plan.device_table() {
            Some(words) => self
                .dev()
                .stream()
                .clone_htod(&words)
                .map(|t| (t, 0))
                .map_err(|e| driver_error("copying the bucket plan", e)),
            None => Ok((self.upload_plan(plan)?, plan.intervals() as u32)),
        }
    }

    /// The plan's intervals on the device.
    fn upload_plan(&self, plan: &BucketPlan<T>) -> Result<CudaSlice<u64>> {
        let words = plan.device_words();
        self.dev()
            .stream()
            .clone_htod(&words)
            .map_err(|e| driver_error("copying the bucket plan", e))
    }
}

impl<T: Element> Shard<T> for DeviceShard<'_, T> {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }

    fn stats(&mut self, omit_nan: bool) -> Result<LocalStats> {
        let dev = self.dev();
        let stream = dev.stream();
        let n = self.data.len();
        let mut out = stream
            .clone_htod(&[0u64, u64::MAX, u64::MAX, 0])
            .map_err(|e| driver_error("initialising the statistics", e))?;
        if n > 0 {
            dist_stats(
                dev,
                config(self.blocks(n), BLOCK),
                self.data.as_slice(),
                n as u64,
                omit_nan as u32,
                &mut out,
            )?;
        }
        let s = dev.read(&out, "the statistics")?;
        let included = if omit_nan { n as u64 - s[0] } else { n as u64 };
        Ok(LocalStats {
            len: n as u64,
            nans: s[0],
            first_nan: s[1],
            included,
            min: s[2],
            max: s[3],
        })
    }

    fn sample(&mut self, count: usize, omit_nan: bool, seed: u64) -> Result<Vec<u64>> {
        let n = self.data.len();
        if n == 0 || count == 0 {
            return Ok(Vec::new());
        }
        // Positions drawn on the host, as many again to skip NaNs; keys gathered on the GPU.
        let mut rng = SplitMix64::new(seed);
        let draws = if omit_nan { 4 * count + 16 } else { count };
        let positions: Vec<u64> = (0..draws).map(|_| rng.below(n) as u64).collect();
        let dev = self.dev();
        let stream = dev.stream();
        let pos = stream
            .clone_htod(&positions)
            .map_err(|e| driver_error("copying the sample positions", e))?;
        let mut keys = dev.alloc::<u64>(draws, "the sample")?;
        // The positions are below n.
        dist_gather(
            dev,
            config(self.blocks(draws), BLOCK),
            self.data.as_slice(),
            &pos,
            draws as u64,
            &mut keys,
        )?;
        let keys = dev.read(&keys, "the sample")?;
        let nan_key = T::Key::MAX.to_u64();
        let is_nan = |k: u64| T::DTYPE.is_float() && k == nan_key;
        Ok(keys
            .into_iter()
            .filter(|&k| !(omit_nan && is_nan(k)))
            .take(count)
            .collect())
    }

    fn sketch(&mut self, plan: &BucketPlan<T>) -> Result<Vec<u64>> {
        let n = self.current_len();
        let buckets = plan.buckets();
        let places = n / (SKETCH_PIECE * SKETCH_GROUP) * SKETCH_PIECE;
        if self.reduced.is_some() || places == 0 || plan.intervals() == 0 || buckets == 0 {
            // A short part (or kept keys): counted whole.
            self.sketch = self.count(plan, &[])?;
            return Ok(scaled_sketch(&self.sketch, n as u64, n as u64));
        }
        let dev = self.dev();
        let blocks = self.tile_blocks(places);
        let (mut partial, cfg, shared_ok) = self.count_rows(blocks, buckets)?;
        // Every total is written.
        let mut counts = dev.alloc::<u64>(buckets, "the sketch's counts")?;
        let (iv, p) = self.upload_count_plan(plan)?;
        plan_fits(p, false)?;
        let b = buckets as u32;
        let x = self.data.as_slice();
        // `places` is the sketch's places of all `n` inputs.
        dist_sketch(
            dev,
            cfg,
            x,
            places as u64,
            &iv,
            p,
            b,
            shared_ok,
            &mut partial,
        )?;
        self.totals(&partial, blocks, buckets, &mut counts)?;
        let counts = download_vec(dev, &counts.slice(..), "the sketch's counts")?;
        let scaled = scaled_sketch(&counts, places as u64, n as u64);
        self.sketch = scaled[..buckets].to_vec();
        Ok(scaled)
    }

    fn count(&mut self, plan: &BucketPlan<T>, keep: &[usize]) -> Result<Vec<u64>> {
        let data = self.data;
        let dev = data.device();
        let buckets = plan.buckets();
        let n = self.current_len();
        self.partial = None;
        self.copied = None;
        self.counts = vec![0; buckets];
        if n == 0 || plan.intervals() == 0 || buckets == 0 {
            return Ok(self.counts.clone());
        }
        let blocks = self.tile_blocks(n);
        // A copy of the kept buckets' keys, in the first pass (of the data itself), while a
        // block's counts stay below the mark in their top bit.
        let copying = !keep.is_empty()
            && self.reduced.is_none()
            && buckets <= COPY_BUCKETS
            && (n as u64) < (blocks as u64) << 31;
        let (mut partial, cfg, shared_ok) = self.count_rows(blocks, buckets)?;
        // The totals, and after them the number of keys copied (zeroed for its atomics).
        let mut counts = dev.alloc_zeros::<u64>(buckets + 1, "the bucket counts")?;
        let (iv, p) = self.upload_count_plan(plan)?;
        plan_fits(p, self.reduced.is_some())?;
        let (n64, b) = (n as u64, buckets as u32);
        let mut ids = None;
        let mut copy = None;
        let part = &mut partial;
        if copying {
            let mut words = vec![0u32; buckets.div_ceil(32)];
            for &k in keep {
                words[k / 32] |= 1 << (k % 32);
            }
            let marks = dev
                .stream()
                .clone_htod(&words)
                .map_err(|e| driver_error("copying the buckets to keep", e))?;
            let room = self.copy_room(keep, n);
            let mut out = dev.alloc::<T::Key>(room.max(1), "the copied keys")?;
            let mut copied = counts.slice_mut(buckets..);
            let x = self.data.as_slice();
            let cap = room as u64;
            // Counted in shared memory: `buckets` is at most COPY_BUCKETS.
            let (o, c) = (&mut out, &mut copied);
            dist_count_copy::<T>(dev, cfg, x, n64, &iv, p, b, part, &marks, o, cap, c)?;
            copy = Some((out, room));
        } else {
            if buckets < ID_BUCKETS {
                ids = Some(dev.alloc::<u16>(n, "the inputs' buckets")?);
            }
            match (&self.reduced, &mut ids) {
                (Some((keys, _)), Some(ids)) => {
                    dist_count_keys::<T>(dev, cfg, keys, n64, &iv, p, b, shared_ok, part, ids)?
                }
                (Some((keys, _)), None) => dist_count_keys_no_ids::<T>(
                    dev, cfg, keys, n64, &iv, p, b, shared_ok, part, NULL,
                )?,
                (None, Some(ids)) => {
                    let x = self.data.as_slice();
                    dist_count(dev, cfg, x, n64, &iv, p, b, shared_ok, part, ids)?
                }
                (None, None) => {
                    let x = self.data.as_slice();
                    dist_count_no_ids(dev, cfg, x, n64, &iv, p, b, shared_ok, part, NULL)?
                }
            }
        }
        self.totals(&partial, blocks, buckets, &mut counts)?;
        let mut all = download_vec(dev, &counts.slice(..), "the bucket counts")?;
        let copied = all.pop().unwrap_or(0);
        self.counts = all;
        // A copy that ran out of room is dropped: the reduction reads the data.
        if let Some((out, room)) = copy {
            if copied <= room as u64 {
                self.copied = Some(Copied::new((out, copied as usize), buckets, keep));
            }
        }
        self.partial = Some(Partial {
            counts: partial,
            blocks,
            ids,
            plan: iv,
        });
        Ok(self.counts.clone())
    }

    fn reduce(&mut self, plan: &BucketPlan<T>, active: &[usize]) -> Result<Vec<(u64, u64)>> {
        if let Some(copied) = self.copied.take() {
            if copied.holds(active) {
                // The copy's per-block counts place the reduction's writes; its counts of the
                // active buckets are the data's.
                self.reduced = Some(copied.keys);
                self.count(plan, &[])?;
            }
        }
        let data = self.data;
        let dev = data.device();
        let stream = dev.stream();
        let mut slot = vec![u32::MAX; plan.buckets().max(1)];
        let mut kept = 0u64;
        for (i, &b) in active.iter().enumerate() {
            slot[b] = i as u32;
            kept += self.counts.get(b).copied().unwrap_or(0);
        }
        let mut out = dev.alloc::<T::Key>(kept as usize, "the kept keys")?;
        let mut extremes = dev.alloc_zeros::<u64>((2 * active.len()).max(1), "the extremes")?;
        let n = self.current_len();
        if let (true, Some(part)) = (n > 0 && kept > 0, &self.partial) {
            // The slot of every bucket, then the active buckets' numbers: one copy.
            let slot_count = slot.len();
            slot.extend(active.iter().map(|&b| b as u32));
            let slot_and_list = stream
                .clone_htod(&slot)
                .map_err(|e| driver_error("copying the active buckets", e))?;
            let (slots, list) = (
                slot_and_list.slice(..slot_count),
                slot_and_list.slice(slot_count..),
            );
            // Without the inputs' buckets, the reduction finds them from the plan's intervals (a
            // binned plan's count read its bins instead).
            let intervals = match (&part.ids, plan.device_table()) {
                (None, Some(_)) => Some(self.upload_plan(plan)?),
                _ => None,
            };
            let iv = intervals.as_ref().unwrap_or(&part.plan);
            let mut offsets = dev.alloc::<u64>(part.blocks + 1, "the blocks' offsets")?;
            let (rows, b, a) = (
                part.blocks as u32,
                plan.buckets() as u32,
                active.len() as u32,
            );
            // One block scans the blocks' counts (at most MAX_BLOCKS of them).
            dist_offsets(
                dev,
                config(1, 1024),
                &part.counts,
                rows,
                b,
                &list,
                a,
                &mut offsets,
            )?;
            let (n64, p) = (n as u64, plan.intervals() as u32);
            // The same inputs, blocks, threads and plan as the count whose per-block counts gave
            // `offsets`: block b writes its kept inputs within out[offsets[b]..offsets[b + 1]],
            // and the `kept` of all blocks fill `out`.
            let cfg = config(part.blocks, BLOCK);
            let (out, ext) = (&mut out, &mut extremes);
            match (&self.reduced, &part.ids) {
                (Some((keys, _)), Some(ids)) => dist_reduce_ids_keys::<T>(
                    dev, cfg, keys, ids, n64, b, &slots, a, &offsets, out, ext,
                )?,
                (None, Some(ids)) => {
                    let x = self.data.as_slice();
                    dist_reduce_ids(dev, cfg, x, ids, n64, b, &slots, a, &offsets, out, ext)?
                }
                (Some((keys, _)), None) => dist_reduce_keys::<T>(
                    dev, cfg, keys, n64, iv, p, &slots, a, &offsets, out, ext,
                )?,
                (None, None) => {
                    let x = self.data.as_slice();
                    dist_reduce(dev, cfg, x, n64, iv, p, &slots, a, &offsets, out, ext)?
                }
            }
        }
        let e = dev.read(&extremes, "the extremes")?;
        self.reduced = Some((out, kept as usize));
        self.partial = None;
        Ok(e.chunks_exact(2)
            .take(active.len())
            .map(|w| (w[0], w[1]))
            .collect())
    }

    fn keys(&mut self, omit_nan: bool) -> Result<Vec<T::Key>> {
        let data = self.data;
        let dev = data.device();
        let mut keys = match self.reduced.take() {
            Some((keys, len)) if len < keys.len() => dev
                .stream()
                .clone_dtod(&keys.slice(..len))
                .map_err(|e| driver_error("copying the kept keys", e))?,
            Some((keys, _)) => keys,
            None => to_keys(data)?,
        };
        sort_keys(dev, &mut keys, None)?;
        let mut host = download_vec(dev, &keys.slice(..), "the keys")?;
        if omit_nan && T::DTYPE.is_float() {
            // NaN keys are the largest: sorted last.
            let nan = T::Key::MAX;
            while host.last() == Some(&nan) {
                host.pop();
            }
        }
        Ok(host)
    }
}

/// Whether a count's plan (`p` = 0: binned, else `p` intervals) is of a kind its kernels
/// take: the counts over the data compile only the binned loop (the first pass's), those over
/// kept keys both (the later passes' intervals, and the first pass's bins again when the
/// reduction recounts the keys the count copied).
fn plan_fits(p: u32, over_kept_keys: bool) -> Result<()> {
    if p != 0 && !over_kept_keys {
        return Err(Error::Communication(
            "a pass's bucket plan does not fit its data: intervals over the data".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::plan_fits;

    /// A count over the data takes a binned plan (`p` = 0) only; one over kept keys either
    /// kind (the copy of a binned first pass is recounted by its bins). Intervals over the
    /// data are refused before a kernel that compiled only the binned loop runs.
    #[test]
    fn each_count_takes_its_kinds_of_plan() {
        assert!(plan_fits(0, false).is_ok());
        assert!(plan_fits(5, true).is_ok());
        assert!(plan_fits(0, true).is_ok());
        assert!(plan_fits(5, false).is_err());
    }
}
