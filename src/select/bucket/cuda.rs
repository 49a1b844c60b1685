//! bucketSelect on CUDA (`kernels/bucket_select.cu`), after Alabi et al. (2012).
//!
//! One pass finds the smallest and largest key of the finite values and counts NaN, `-inf`
//! and `+inf` apart (they are the extreme keys, so a rank that lands on them is answered at
//! once, as is every rank when the finite values are all one key). Then, per rank:
//!
//! - **Phase I.** Every finite value is projected onto `B` equal-width buckets between the
//!   extremes ([`Projection`], in `f64`; `B` is as many `u32` counters as the device's shared
//!   memory holds with two blocks per multiprocessor: `2^14` on an A100 or H100), counted in
//!   shared memory per block and merged into a global histogram. One block on the device
//!   scans it for the bucket holding the rank, and a block-aggregated append copies that
//!   bucket's values (with their extreme keys) out of the input. One read back of the state.
//! - **Phase II**, when more than [`Tuning::finish`] candidates remain: the copy is counted
//!   again, in place, with the range shrunk to the chosen bucket's exact key range (the keys
//!   the monotone projection sends to it, found on the device by a warp-wide search), for at
//!   most [`Tuning::levels`] levels, each deciding on the device whether to go on. The last
//!   bucket is compacted into a small buffer. One read back.
//! - **Exact finish**: radix select ([`radix::cuda::multiselect_in`]) on the compacted
//!   candidates, or on the Phase I copy.
//!
//! Degenerate inputs stop early and finish exactly: a range the projection cannot separate
//! (`-0.0` next to `+0.0`, 64-bit integers that round to one `f64`, a range so small that
//! `B / range` overflows), a chosen bucket too large for the copy (the paper's bucket killer,
//! ones and twos, a few huge outliers: radix select on the input, after two passes), Phase II
//! levels that keep more than half of their candidates twice in a row, or the level limit
//! (radix select on the copy). Inputs shorter than [`Tuning::direct_below`] go to radix
//! select directly.
//!
//! Workspace: the Phase I copy of `n / 8` elements, a compaction buffer of
//! `min(2^16, n / 8)` elements, the `B`-entry `u64` histogram
//! (128 KiB for `B = 2^14`) and 16 words of state and statistics; plus radix select's
//! workspace when it finishes (`2·max(m / 16, 2^16)` keys for `m` candidates: at most
//! `max(n / 64, 2^17)` keys on the copy, `n / 8` keys on the input, the latter after the copy
//! buffers are freed). In all, at most `n / 4` elements' worth beyond small constants.

use cudarc::driver::{CudaSlice, CudaView, LaunchConfig};

use crate::device::cuda::kernels::bucket_select::{
    bkt_choose, bkt_copy, bkt_count, bkt_init, bkt_minmax, BktState, ACTIVE, BLOCK, CHOOSE_BLOCK,
    DONE,
};
use crate::device::cuda::kernels::{kernel_name, BUCKET_SELECT};
use crate::device::cuda::launch::{allow_shared, config, shaped, shared_memory, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice, MemoryNeed};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::select::bucket::Projection;
use crate::select::census::Census;
use crate::select::radix;

/// The fewest buckets (one per thread of the choice).
const MIN_BUCKETS: u32 = CHOOSE_BLOCK;
/// The most buckets (the choice scans them in one block; more gain little).
const MAX_BUCKETS: u32 = 1 << 14;
/// Shared memory a block needs besides its counters (the driver's reserve, static arrays).
const SHARED_RESERVE: usize = 2048;

/// The thresholds of the method.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tuning {
    /// Inputs shorter than this go to radix select directly.
    pub direct_below: usize,
    /// At most this many candidates are finished by radix select (no further level).
    pub finish: usize,
    /// The Phase I copy holds `n / copy_divisor` elements; a larger bucket is finished by
    /// radix select on the input.
    pub copy_divisor: usize,
    /// The most Phase II levels.
    pub levels: usize,
}

impl Tuning {
    /// The defaults.
    pub(crate) const DEFAULT: Tuning = Tuning {
        direct_below: 1 << 10,
        finish: 1 << 16,
        copy_divisor: 8,
        levels: 3,
    };

    /// The capacity of the Phase I copy for `n` values.
    fn copy_capacity(&self, n: usize) -> usize {
        n / self.copy_divisor.max(1)
    }

    /// The capacity of the Phase II compaction buffer for `n` values.
    fn compact_capacity(&self, n: usize) -> usize {
        self.finish.min(self.copy_capacity(n))
    }
}

/// The elements of `ranks` by bucketSelect, one selection each, and the number of NaNs of the
/// input (`ranks` not empty, all below `buf.len()`).
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    multiselect_tuned(buf, ranks, &Tuning::DEFAULT)
}

/// The most device memory [`multiselect`] takes on `dev` for `n` values of `T` and `ranks`
/// ranks: the statistics, the state, the histogram (at most [`MAX_BUCKETS`] counts), the copy
/// and the compaction buffer with radix select over the copies; then radix select over the
/// input for the ranks left to it.
pub(crate) fn workspace<T: Element>(dev: &CudaDevice, n: usize, ranks: usize) -> MemoryNeed {
    let tuning = Tuning::DEFAULT;
    let on_input = radix::cuda::workspace::<T>(dev, n, ranks);
    if n < tuning.direct_below.max(1) {
        return on_input;
    }
    let copies = tuning.copy_capacity(n);
    let levels = MemoryNeed::of::<BktState>(1)
        .and(MemoryNeed::of::<u64>(MAX_BUCKETS as usize))
        .and(MemoryNeed::of::<T>(copies))
        .and(MemoryNeed::of::<T>(tuning.compact_capacity(n)))
        .and(radix::cuda::workspace::<T>(dev, copies, 1));
    MemoryNeed::of::<u64>(5).and(levels.or(on_input))
}

/// [`multiselect`] with explicit thresholds.
fn multiselect_tuned<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
    tuning: &Tuning,
) -> Result<(Vec<T>, usize)> {
    let n = buf.len();
    if n < tuning.direct_below.max(1) {
        return radix::cuda::multiselect(buf, ranks);
    }
    let dev = buf.device();
    let kernels = Kernels::load::<T>(dev)?;
    let x = buf.as_slice().as_view();
    let stats = kernels.minmax::<T>(dev, &x)?;
    let mut values = vec![T::default(); ranks.len()];
    // (slot, rank) of the ranks finished by radix select on the input.
    let mut on_input: Vec<(usize, usize)> = Vec::new();
    {
        let mut work = Workspace::<T>::new(dev, n, kernels.buckets, tuning)?;
        for (slot, &k) in ranks.iter().enumerate() {
            let value = match start::<T>(&stats, n, k, kernels.buckets) {
                Start::Answer(key) => Some(T::from_key(key)),
                Start::Input => None,
                Start::Levels { k, count } => {
                    work.phase_one(&kernels, &x, &stats, k, count, tuning)?
                }
            };
            match value {
                Some(v) => values[slot] = v,
                None => on_input.push((slot, k)),
            }
        }
    }
    if !on_input.is_empty() {
        let ks: Vec<usize> = on_input.iter().map(|&(_, k)| k).collect();
        let (found, _) = radix::cuda::multiselect(buf, &ks)?;
        for (&(slot, _), v) in on_input.iter().zip(found) {
            values[slot] = v;
        }
    }
    Ok((values, stats.nan))
}

/// The number of buckets for a device with `per_block` bytes of shared memory per block (the
/// opt-in maximum) and `per_sm` per multiprocessor: the largest power of two of `u32`
/// counters that lets two blocks share a multiprocessor, within
/// `MIN_BUCKETS..=MAX_BUCKETS`.
fn bucket_count(per_block: usize, per_sm: usize) -> u32 {
    let budget = per_block.min((per_sm / 2).saturating_sub(SHARED_RESERVE));
    let fit = (budget / 4).max(1);
    let pow = 1usize << (usize::BITS - 1 - fit.leading_zeros());
    pow.clamp(MIN_BUCKETS as usize, MAX_BUCKETS as usize) as u32
}

/// Blocks of a counting pass over `len` elements: enough to fill the device, and enough that
/// no block counts `2^30` elements or more (its counters are `u32`).
fn count_blocks(len: usize, vec: usize, multiprocessors: usize, per_sm: usize) -> usize {
    stride_blocks(len.div_ceil(vec), BLOCK, multiprocessors, per_sm).max(len.div_ceil(1 << 30))
}

/// The projection of the key range `[lo, hi]` of `T` onto `buckets` buckets.
fn projection_of<T: Element>(lo: T::Key, hi: T::Key, buckets: u32) -> Option<Projection> {
    Projection::new(
        T::from_key(lo).to_f64(),
        T::from_key(hi).to_f64(),
        buckets as usize,
    )
}

/// How a rank's selection starts once the input's statistics are known.
#[derive(Debug, PartialEq)]
enum Start<K> {
    /// The answer is this key (a non-finite value, or the only finite key).
    Answer(K),
    /// The projection cannot separate the finite values: radix select on the input.
    Input,
    /// Phase I, for rank `k` among the `count` finite values.
    Levels { k: usize, count: usize },
}

/// How rank `k` of `n` values starts, given the input's statistics.
fn start<T: Element>(stats: &Census<T::Key>, n: usize, k: usize, buckets: u32) -> Start<T::Key> {
    let k = match stats.finite_rank::<T>(n, k) {
        Ok(k) => k,
        Err(key) => return Start::Answer(key),
    };
    if stats.min == stats.max {
        Start::Answer(stats.min)
    } else if projection_of::<T>(stats.min, stats.max, buckets).is_none() {
        Start::Input
    } else {
        Start::Levels {
            k,
            count: stats.finite(n),
        }
    }
}

/// What follows Phase I, read from the state.
#[derive(Debug, PartialEq)]
enum AfterCopy<K> {
    /// Every copied value has this key.
    Answer(K),
    /// The bucket did not fit the copy (or the state is inconsistent): radix select on the
    /// input.
    Input,
    /// Radix select on the copy's `len` values, rank `k`.
    Copies { len: usize, k: usize },
    /// Phase II on the copy's `len` values, rank `k`, keys `lo..=hi`.
    Refine { len: usize, k: usize, lo: K, hi: K },
}

/// What follows Phase I, given the state, the copy's capacity and the bucket count.
fn after_copy<T: Element>(
    state: &BktState,
    cap: usize,
    tuning: &Tuning,
    buckets: u32,
) -> AfterCopy<T::Key> {
    let (count, k, copied) = (
        state.count as usize,
        state.k as usize,
        state.out_count as usize,
    );
    if state.status != ACTIVE || count > cap || copied != count || k >= count {
        return AfterCopy::Input;
    }
    let lo = T::Key::from_u64(state.out_min);
    let hi = T::Key::from_u64(state.out_max);
    if lo == hi {
        AfterCopy::Answer(lo)
    } else if count <= tuning.finish
        || tuning.levels == 0
        || projection_of::<T>(lo, hi, buckets).is_none()
    {
        AfterCopy::Copies { len: count, k }
    } else {
        AfterCopy::Refine {
            len: count,
            k,
            lo,
            hi,
        }
    }
}

/// What follows Phase II, read from the state.
#[derive(Debug, PartialEq)]
enum AfterRefine<K> {
    /// The last bucket is one key.
    Answer(K),
    /// Radix select on the `len` compacted values, rank `k`.
    Compacted { len: usize, k: usize },
    /// Radix select on the whole copy (the rank Phase II started from).
    Copies,
}

/// What follows Phase II, given the state and the compaction buffer's capacity.
fn after_refine<T: Element>(state: &BktState, cap: usize) -> AfterRefine<T::Key> {
    if state.status == DONE {
        return AfterRefine::Answer(T::Key::from_u64(state.result));
    }
    let (count, k, copied) = (
        state.count as usize,
        state.k as usize,
        state.out_count as usize,
    );
    if count <= cap && copied == count && k < count {
        AfterRefine::Compacted { len: count, k }
    } else {
        AfterRefine::Copies
    }
}

/// The launch shape of the counting pass for one element type.
struct Kernels {
    /// Buckets per level.
    buckets: u32,
    /// Resident counting blocks per multiprocessor.
    count_per_sm: usize,
}

impl Kernels {
    /// Sizes the histogram from the device's shared memory and allows `bkt_count_T` its
    /// counters.
    fn load<T: Element>(dev: &CudaDevice) -> Result<Kernels> {
        let count = dev.function(&BUCKET_SELECT, &kernel_name("bkt_count", T::DTYPE))?;
        dev.stream()
            .context()
            .bind_to_thread()
            .map_err(|e| driver_error("binding the context", e))?;
        let (per_block, per_sm) = shared_memory(dev)?;
        let buckets = bucket_count(per_block, per_sm);
        let bytes = buckets as usize * 4;
        allow_shared(&count, bytes)?;
        let count_per_sm = count
            .occupancy_max_active_blocks_per_multiprocessor(BLOCK, bytes, None)
            .map_err(|e| driver_error("reading the counting pass's occupancy", e))?
            .max(1) as usize;
        Ok(Kernels {
            buckets,
            count_per_sm,
        })
    }

    /// The statistics of the input's values: extreme finite keys, NaN and infinity counts.
    fn minmax<T: Element>(&self, dev: &CudaDevice, x: &CudaView<'_, T>) -> Result<Census<T::Key>> {
        let mut stats = dev
            .stream()
            .clone_htod(&[u64::MAX, 0, 0, 0, 0])
            .map_err(|e| driver_error("initialising the bucket select statistics", e))?;
        bkt_minmax(
            dev,
            pass_shape::<T>(dev, x.len()),
            x,
            x.len() as u64,
            &mut stats,
        )?;
        let s = dev.read(&stats, "the bucket select statistics")?;
        Ok(Census {
            min: T::Key::from_u64(s[0]),
            max: T::Key::from_u64(s[1]),
            nan: s[2] as usize,
            neg_inf: s[3] as usize,
            pos_inf: s[4] as usize,
        })
    }
}

/// Elements of `T` per 16-byte vector load.
fn vec<T: Element>() -> usize {
    16 / std::mem::size_of::<T>()
}

/// The shape of a min/max or copy pass over `len` elements of `T`.
fn pass_shape<T: Element>(dev: &CudaDevice, len: usize) -> LaunchConfig {
    let blocks = stride_blocks(len.div_ceil(vec::<T>()), BLOCK, dev.multiprocessors(), 4);
    config(blocks, BLOCK)
}

/// The device memory of the selections of one call.
struct Workspace<'a, T: Element> {
    /// The device.
    dev: &'a CudaDevice,
    /// The selection state.
    state: CudaSlice<BktState>,
    /// The global histogram (zero between levels).
    hist: CudaSlice<u64>,
    /// The Phase I copy.
    copy: CudaSlice<T>,
    /// The Phase II compaction buffer.
    compact: CudaSlice<T>,
}

impl<'a, T: Element> Workspace<'a, T> {
    /// Allocates the state, the histogram and the copy buffers for `n` values.
    fn new(dev: &'a CudaDevice, n: usize, buckets: u32, tuning: &Tuning) -> Result<Self> {
        Ok(Workspace {
            dev,
            state: dev.alloc_zeros::<BktState>(1, "bucket select state")?,
            hist: dev.alloc_zeros::<u64>(buckets as usize, "bucket select histogram")?,
            copy: dev.alloc::<T>(tuning.copy_capacity(n), "bucket select copy")?,
            compact: dev.alloc::<T>(tuning.compact_capacity(n), "bucket select compaction")?,
        })
    }

    /// Phase I for rank `k` among the `count` finite values of `x`, then what follows; `None`
    /// when radix select on the input must finish.
    fn phase_one(
        &mut self,
        kernels: &Kernels,
        x: &CudaView<'_, T>,
        stats: &Census<T::Key>,
        k: usize,
        count: usize,
        tuning: &Tuning,
    ) -> Result<Option<T>> {
        self.init(stats.min.to_u64(), stats.max.to_u64(), k, count)?;
        self.count(kernels, x)?;
        self.choose(kernels, false, tuning.finish)?;
        let cap = self.copy.len();
        copy_launch(kernels, self.dev, x, &mut self.state, &mut self.copy, true)?;
        let state = self.read_state()?;
        match after_copy::<T>(&state, cap, tuning, kernels.buckets) {
            AfterCopy::Answer(key) => Ok(Some(T::from_key(key))),
            AfterCopy::Input => Ok(None),
            AfterCopy::Copies { len, k } => {
                let copies = self.copy.slice(0..len);
                Ok(Some(
                    radix::cuda::multiselect_in(self.dev, &copies, &[k])?.0[0],
                ))
            }
            AfterCopy::Refine { len, k, lo, hi } => {
                self.phase_two(kernels, len, k, lo, hi, tuning).map(Some)
            }
        }
    }

    /// Phase II on the copy's `len` values: rank `k` among them, keys `lo..=hi`.
    fn phase_two(
        &mut self,
        kernels: &Kernels,
        len: usize,
        k: usize,
        lo: T::Key,
        hi: T::Key,
        tuning: &Tuning,
    ) -> Result<T> {
        self.init(lo.to_u64(), hi.to_u64(), k, len)?;
        let copies = self.copy.slice(0..len);
        for _ in 0..tuning.levels {
            count_launch(kernels, self.dev, &copies, &self.state, &mut self.hist)?;
            choose_launch::<T>(
                kernels,
                self.dev,
                &mut self.state,
                &mut self.hist,
                true,
                tuning.finish,
            )?;
        }
        copy_launch(
            kernels,
            self.dev,
            &copies,
            &mut self.state,
            &mut self.compact,
            false,
        )?;
        let state = self.read_state()?;
        Ok(match after_refine::<T>(&state, self.compact.len()) {
            AfterRefine::Answer(key) => T::from_key(key),
            AfterRefine::Compacted { len, k } => {
                let last = self.compact.slice(0..len);
                radix::cuda::multiselect_in(self.dev, &last, &[k])?.0[0]
            }
            AfterRefine::Copies => radix::cuda::multiselect_in(self.dev, &copies, &[k])?.0[0],
        })
    }

    /// Starts a selection of rank `k` among `count` candidates with keys `lo..=hi`.
    fn init(&mut self, lo: u64, hi: u64, k: usize, count: usize) -> Result<()> {
        bkt_init(
            self.dev,
            config(1, 32),
            &mut self.state,
            lo,
            hi,
            k as u64,
            count as u64,
        )
    }

    /// One counting pass over `x`.
    fn count(&mut self, kernels: &Kernels, x: &CudaView<'_, T>) -> Result<()> {
        count_launch(kernels, self.dev, x, &self.state, &mut self.hist)
    }

    /// One choice of the bucket holding the rank.
    fn choose(&mut self, kernels: &Kernels, refine: bool, finish: usize) -> Result<()> {
        choose_launch::<T>(
            kernels,
            self.dev,
            &mut self.state,
            &mut self.hist,
            refine,
            finish,
        )
    }

    /// The state.
    fn read_state(&self) -> Result<BktState> {
        Ok(self.dev.read(&self.state, "the bucket select state")?[0])
    }
}

/// Launches `bkt_count_T` over `x`.
fn count_launch<T: Element>(
    kernels: &Kernels,
    dev: &CudaDevice,
    x: &CudaView<'_, T>,
    state: &CudaSlice<BktState>,
    hist: &mut CudaSlice<u64>,
) -> Result<()> {
    let buckets = kernels.buckets;
    let blocks = count_blocks(
        x.len(),
        vec::<T>(),
        dev.multiprocessors(),
        kernels.count_per_sm,
    );
    let shape = shaped(blocks, 1, BLOCK, buckets as usize * 4);
    bkt_count(dev, shape, x, x.len() as u64, state, hist, buckets)
}

/// Launches `bkt_choose_T` (one block).
fn choose_launch<T: Element>(
    kernels: &Kernels,
    dev: &CudaDevice,
    state: &mut CudaSlice<BktState>,
    hist: &mut CudaSlice<u64>,
    refine: bool,
    finish: usize,
) -> Result<()> {
    bkt_choose::<T>(
        dev,
        config(1, CHOOSE_BLOCK),
        state,
        hist,
        kernels.buckets,
        refine as u32,
        finish as u64,
    )
}

/// Launches `bkt_copy_T`: the candidates of `x` (in the chosen bucket when `by_bucket`) to
/// `out`.
fn copy_launch<T: Element>(
    kernels: &Kernels,
    dev: &CudaDevice,
    x: &CudaView<'_, T>,
    state: &mut CudaSlice<BktState>,
    out: &mut CudaSlice<T>,
    by_bucket: bool,
) -> Result<()> {
    let cap = out.len() as u64;
    bkt_copy(
        dev,
        pass_shape::<T>(dev, x.len()),
        x,
        x.len() as u64,
        state,
        out,
        cap,
        kernels.buckets,
        by_bucket as u32,
    )
}

/// Unit tests: the host's arithmetic and decisions on the CPU; the whole method against the
/// sort reference on a GPU (skipped without one, failing when `KSELECT_REQUIRE_GPU=1`).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::cuda::tests::gpu;
    use crate::select::host::testing::{inputs, many_level_inputs, Gen};
    use crate::select::sort_choose;

    /// The bucket counts of a few devices' shared memory.
    #[test]
    fn buckets_follow_shared_memory() {
        assert_eq!(bucket_count(232_448, 233_472), 1 << 14); // H100, H200
        assert_eq!(bucket_count(166_912, 167_936), 1 << 14); // A100
        assert_eq!(bucket_count(98_304, 98_304), 1 << 13); // V100
        assert_eq!(bucket_count(65_536, 65_536), 1 << 12); // T4
        assert_eq!(bucket_count(49_152, 0), MIN_BUCKETS);
        assert_eq!(bucket_count(usize::MAX, usize::MAX), MAX_BUCKETS);
        for (block, sm) in [(232_448, 233_472), (98_304, 98_304), (65_536, 65_536)] {
            let bytes = bucket_count(block, sm) as usize * 4;
            assert!(2 * (bytes + SHARED_RESERVE) <= sm && bytes <= block);
        }
    }

    /// Counting grids fill the device and keep every block's counts below `2^30`.
    #[test]
    fn counting_blocks_bound_the_counters() {
        assert_eq!(count_blocks(1, 4, 132, 3), 1);
        assert_eq!(count_blocks(1 << 28, 4, 132, 3), 396);
        assert_eq!(count_blocks((1 << 40) + 1, 2, 1, 1), (1 << 10) + 1);
    }

    /// Statistics of `keys`, as the min/max kernel computes them.
    fn stats_of(values: &[f32]) -> Census<u32> {
        let mut s = Census {
            neg_inf: 0,
            pos_inf: 0,
            nan: 0,
            min: u32::MAX,
            max: 0,
        };
        for &v in values {
            if v.is_nan() {
                s.nan += 1;
            } else if v == f32::NEG_INFINITY {
                s.neg_inf += 1;
            } else if v == f32::INFINITY {
                s.pos_inf += 1;
            } else {
                s.min = s.min.min(v.to_key());
                s.max = s.max.max(v.to_key());
            }
        }
        s
    }

    /// Ranks on non-finite values, one-key ranges and unprojectable ranges start apart.
    #[test]
    fn ranks_start_where_the_statistics_say() {
        let b = 1 << 14;
        let data = [f32::NAN, f32::NEG_INFINITY, 1.0, 2.0, f32::INFINITY, 3.0];
        let s = stats_of(&data);
        let n = data.len();
        assert_eq!(
            start::<f32>(&s, n, 0, b),
            Start::Answer(f32::NEG_INFINITY.to_key())
        );
        assert_eq!(start::<f32>(&s, n, 1, b), Start::Levels { k: 0, count: 3 });
        assert_eq!(start::<f32>(&s, n, 3, b), Start::Levels { k: 2, count: 3 });
        assert_eq!(
            start::<f32>(&s, n, 4, b),
            Start::Answer(f32::INFINITY.to_key())
        );
        assert_eq!(start::<f32>(&s, n, 5, b), Start::Answer(u32::MAX));
        let same = stats_of(&[5.0, f32::NAN, 5.0]);
        assert_eq!(start::<f32>(&same, 3, 1, b), Start::Answer(5f32.to_key()));
        let zeros = stats_of(&[-0.0, 0.0, 0.0]);
        assert_eq!(start::<f32>(&zeros, 3, 1, b), Start::Input);
        let big = Census {
            neg_inf: 0,
            pos_inf: 0,
            nan: 0,
            min: (i64::MAX - 100).to_key(),
            max: i64::MAX.to_key(),
        };
        assert_eq!(start::<i64>(&big, 10, 3, b), Start::Input);
    }

    /// A state after Phase I: `count` candidates, rank `k`, `copied` values with keys
    /// `lo..=hi`.
    fn copied_state(count: u64, k: u64, copied: u64, lo: u64, hi: u64) -> BktState {
        BktState {
            lo: 10,
            hi: 1 << 20,
            count,
            k,
            status: ACTIVE,
            out_count: copied,
            out_min: lo,
            out_max: hi,
            ..BktState::default()
        }
    }

    /// Phase I's outcomes: a one-key copy, a small copy, Phase II, an overflow, an
    /// inconsistent count, an unprojectable range.
    #[test]
    fn phase_one_outcomes() {
        let t = Tuning {
            finish: 100,
            ..Tuning::DEFAULT
        };
        let b = 1 << 14;
        let (one, two) = (1u32 << 20, 1u32 << 21);
        let key = |v: u32| v.to_key() as u64;
        assert_eq!(
            after_copy::<u32>(&copied_state(50, 7, 50, key(one), key(one)), 1000, &t, b),
            AfterCopy::Answer(one)
        );
        assert_eq!(
            after_copy::<u32>(&copied_state(50, 7, 50, key(one), key(two)), 1000, &t, b),
            AfterCopy::Copies { len: 50, k: 7 }
        );
        assert_eq!(
            after_copy::<u32>(&copied_state(500, 7, 500, key(one), key(two)), 1000, &t, b),
            AfterCopy::Refine {
                len: 500,
                k: 7,
                lo: one,
                hi: two
            }
        );
        let no_levels = Tuning { levels: 0, ..t };
        assert_eq!(
            after_copy::<u32>(
                &copied_state(500, 7, 500, key(one), key(two)),
                1000,
                &no_levels,
                b
            ),
            AfterCopy::Copies { len: 500, k: 7 }
        );
        assert_eq!(
            after_copy::<u32>(&copied_state(5000, 7, 0, u64::MAX, 0), 1000, &t, b),
            AfterCopy::Input
        );
        assert_eq!(
            after_copy::<u32>(&copied_state(500, 7, 499, key(one), key(two)), 1000, &t, b),
            AfterCopy::Input
        );
        assert_eq!(
            after_copy::<u32>(
                &copied_state(500, 500, 500, key(one), key(two)),
                1000,
                &t,
                b
            ),
            AfterCopy::Input
        );
        let mut stopped = copied_state(500, 7, 500, key(one), key(two));
        stopped.status = 1;
        assert_eq!(after_copy::<u32>(&stopped, 1000, &t, b), AfterCopy::Input);
        let (neg, pos) = ((-0.0f64).to_key(), 0.0f64.to_key());
        assert_eq!(
            after_copy::<f64>(&copied_state(500, 7, 500, neg, pos), 1000, &t, b),
            AfterCopy::Copies { len: 500, k: 7 }
        );
    }

    /// Phase II's outcomes: a one-key bucket, a compaction, and radix select on the copy.
    #[test]
    fn phase_two_outcomes() {
        let mut s = copied_state(40, 3, 40, 0, 9);
        assert_eq!(
            after_refine::<u32>(&s, 64),
            AfterRefine::Compacted { len: 40, k: 3 }
        );
        assert_eq!(after_refine::<u32>(&s, 39), AfterRefine::Copies);
        s.out_count = 0;
        assert_eq!(after_refine::<u32>(&s, 64), AfterRefine::Copies);
        s.status = DONE;
        s.result = 77;
        assert_eq!(after_refine::<u32>(&s, 64), AfterRefine::Answer(77));
    }

    /// The warp search of `bkt_choose` (`first_at_least`), step for step: 32 probes a step,
    /// lane `i` at `lo + i * (span / 32 + 1)` (capped at `hi`).
    fn warp_search(bucket: &dyn Fn(u64) -> usize, mut lo: u64, mut hi: u64, target: usize) -> u64 {
        let mut steps = 0;
        while lo < hi {
            steps += 1;
            assert!(
                steps <= 32,
                "the search must shrink the interval 32-fold a step"
            );
            let span = hi - lo;
            let step = span / 32 + 1;
            let points: Vec<u64> = (0..32u64)
                .map(|lane| {
                    let off = step * lane;
                    if off >= span {
                        hi
                    } else {
                        lo + off
                    }
                })
                .collect();
            match points.iter().position(|&p| bucket(p) >= target) {
                None => lo = points[31] + 1,
                Some(j) => {
                    lo = if j > 0 { points[j - 1] + 1 } else { lo };
                    hi = points[j];
                }
            }
        }
        lo
    }

    /// The key range of a bucket found by the warp search is exactly the keys the projection
    /// sends to it, for floats, wide ranges and 64-bit integers.
    #[test]
    fn bucket_key_ranges_are_exact() {
        fn check<T: Element>(lo: T, hi: T, buckets: u32) {
            let (lo, hi) = (lo.to_key(), hi.to_key());
            let p = projection_of::<T>(lo, hi, buckets).unwrap();
            let bucket = |key: u64| p.bucket(T::from_key(T::Key::from_u64(key)).to_f64());
            let (lo, hi) = (lo.to_u64(), hi.to_u64());
            let span = hi - lo;
            for target in [0, 1, buckets as usize / 3, buckets as usize - 1] {
                let first = warp_search(&bucket, lo, hi, target);
                assert!(bucket(first) >= target);
                assert!(first == lo || bucket(first - 1) < target);
                // Brute force over a few keys around the answer and across the range.
                for probe in (0..=64u64).map(|i| lo + (span / 64).saturating_mul(i).min(span)) {
                    assert_eq!(bucket(probe) >= target, probe >= first, "key {probe}");
                }
            }
        }
        check(-3.5f32, 1e6f32, 1 << 14);
        check(-f64::MAX, f64::MAX, 1 << 14);
        check(1e-300f64, 2e-300f64, 1 << 10);
        check(i64::MIN, i64::MAX, 1 << 14);
        check(0u64, 5000u64, 1 << 14);
        check(-7i32, 7i32, 1 << 10);
    }

    /// Thresholds that force every path: no shortcut, tiny finishes, a copy as large as the
    /// input (so that Phase II meets the adversarial inputs), one or many levels.
    const TUNINGS: [Tuning; 3] = [
        Tuning {
            direct_below: 0,
            ..Tuning::DEFAULT
        },
        Tuning {
            direct_below: 0,
            finish: 2,
            copy_divisor: 1,
            levels: 8,
        },
        Tuning {
            direct_below: 0,
            finish: 40,
            copy_divisor: 2,
            levels: 1,
        },
    ];

    /// Every adversarial input of one type, at several lengths and ranks, under every tuning.
    fn check_type<T: Gen>(dev: &CudaDevice) {
        for n in [1, 2, 33, 1000, 4099, 100_003] {
            for (name, data) in inputs::<T>(n, 7 + n as u64) {
                let keys = sort_choose::cpu::sorted_keys(&data, false);
                let nans = data.iter().filter(|x| x.is_nan()).count();
                let mut ranks = vec![0, n - 1, n / 2, n / 3, n * 7 / 8, n * 99 / 100, 1 % n];
                ranks.dedup();
                let buf = DeviceBuffer::from_host_on(dev, &data).unwrap();
                for tuning in &TUNINGS {
                    let (got, got_nans) = multiselect_tuned(&buf, &ranks, tuning)
                        .unwrap_or_else(|e| panic!("{} {name} n={n}: {e}", T::DTYPE));
                    assert_eq!(got_nans, nans, "{} {name} n={n}: NaN count", T::DTYPE);
                    for (&k, v) in ranks.iter().zip(&got) {
                        assert!(
                            v.to_key() == keys[k],
                            "{} {name} n={n} k={k} {tuning:?}: got {v:?}, want {:?}",
                            T::DTYPE,
                            T::from_key(keys[k])
                        );
                    }
                }
            }
        }
    }

    /// The method against sort&choose on every type and every path.
    #[test]
    fn gpu_matches_sort_on_every_path() {
        let Some(dev) = gpu() else { return };
        check_type::<f32>(&dev);
        check_type::<f64>(&dev);
        check_type::<i32>(&dev);
        check_type::<i64>(&dev);
        check_type::<u32>(&dev);
        check_type::<u64>(&dev);
    }

    /// Inputs that need several Phase II levels: clusters at ever smaller scales, and 64-bit
    /// integers a few apart among huge ones.
    #[test]
    fn gpu_runs_many_levels() {
        let Some(dev) = gpu() else { return };
        let (nested, ints) = many_level_inputs(200_000);
        fn run<T: Element>(dev: &CudaDevice, data: &[T]) {
            let keys = sort_choose::cpu::sorted_keys(data, false);
            let buf = DeviceBuffer::from_host_on(dev, data).unwrap();
            let n = data.len();
            let ranks: Vec<usize> = (0..40).map(|i| i * (n - 1) / 39).collect();
            for tuning in &TUNINGS {
                let (got, _) = multiselect_tuned(&buf, &ranks, tuning).unwrap();
                for (&k, v) in ranks.iter().zip(&got) {
                    assert!(v.to_key() == keys[k], "k={k} {tuning:?}: {v:?}");
                }
            }
        }
        run(&dev, &nested);
        run(&dev, &ints);
    }
}
