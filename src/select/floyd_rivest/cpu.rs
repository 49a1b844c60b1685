//! Floyd–Rivest selection in one pass: pivots from a sample bracket the ranks.
//!
//! A deterministic sample of `s = n^(2/3)` keys (runs of one cache line at random offsets in
//! equal strides, gathered by several threads) gives two pivot keys `lo <= hi` that bracket the
//! requested ranks with high probability (three standard deviations of the sample rank on
//! either side); both pivots are selected in the sample by this same algorithm, recursively, in
//! one pass over it. One pass over the data (parallel chunks) then counts the values `< lo` and
//! `> hi` and copies the keys of those in `[lo, hi]`: a group of 64 blocks of 32 values is
//! counted branch-free (the counts stay in vector registers; the x86-64 build has an AVX2 copy
//! of the scan, chosen at run time), then only the blocks of the group with a hit are looked at
//! again, while still in the L1 cache. The counts and the (small) copy tell which of five parts
//! (`< lo`, `== lo`, between, `== hi`, `> hi`) holds each rank, and the ranks between the
//! pivots are selected in the copy (by this same algorithm when the copy is long, by
//! quickselect otherwise). If many values equal a pivot (the copy outgrows four times its
//! expected size), a chunk is rescanned with four counts and copies only the values strictly
//! between, so duplicates cost no workspace. When the bracket misses a rank, the same step runs
//! again on the known side with a wider bracket; after two misses the bracket is the whole
//! known key interval, so the result is always exact and the number of passes small. Nearby
//! ranks share one pass.
//!
//! The pass compares values with the element type's own `<`, which vectorizes; that agrees
//! with key order because the pivots are numbers (NaN values compare false with both pivots:
//! they are the values neither counted nor copied, and their key lies above both pivots). Only
//! when a float pivot is a zero (`-0.0 == +0.0` as values) does the pass compare keys instead
//! (and count NaNs apart).
//!
//! Workspace: the sample (`n^(2/3)` keys) and the bracket copy, expected `O(n / sqrt(s))` keys
//! (`O(n^(2/3))`, about `0.8 %` of `n` at `n = 2^26`) and at most `n` in the worst case (data
//! the sample misrepresents). Inputs shorter than [`SMALL`] are selected on a copy of their keys
//! (`n` keys).

use crate::element::{DType, Element, RadixKey};
use crate::select::host::{
    key_pred, key_succ, map_chunks, max_number_key, min_number_key, sample_runs,
};
use crate::select::quick_multiselect::multiselect_keys;

/// Inputs shorter than this are selected on a copy of their keys.
pub(crate) const SMALL: usize = 1 << 12;

/// Ranks further apart than `n / CLUSTER_GAP` get brackets (passes) of their own.
const CLUSTER_GAP: usize = 256;

/// With more groups of nearby ranks than this, one bracket spans all ranks (one pass and a
/// larger copy instead of many passes).
const MAX_CLUSTERS: usize = 16;

/// The bracket's half-width in standard deviations of the sample rank, on the first attempt.
const SIGMAS: f64 = 3.0;

/// Seed of the sampling positions.
const SEED: u64 = 0x5EED_F10D;

/// The elements of `ranks` (each `< data.len()`, any order, repeats allowed), in the order given.
pub(crate) fn multiselect<T: Element>(data: &[T], ranks: &[usize], parallel: bool) -> Vec<T> {
    multiselect_counting_nans(data, ranks, parallel).0
}

/// [`multiselect`], and the number of NaNs of `data`, counted by the selection's own pass over
/// the data (so a caller needs no separate scan for its NaN policy).
pub(crate) fn multiselect_counting_nans<T: Element>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<T>, usize) {
    let mut unique = ranks.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let (found, nans) = select_unique(data, &unique, parallel, CLUSTER_GAP);
    let values = ranks
        .iter()
        .map(|k| T::from_key(found[unique.binary_search(k).expect("requested rank")]))
        .collect();
    (values, nans)
}

/// The keys of the sorted, unique `ranks` and the number of NaNs ([`select_sorted`] with the
/// sample held as the unsigned integer of the key's width); ranks more than `n / gap` apart get
/// passes of their own.
fn select_unique<T: Element>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
    gap: usize,
) -> (Vec<T::Key>, usize) {
    if T::Key::BITS == 32 {
        select_sorted::<T, u32>(data, ranks, parallel, gap)
    } else {
        select_sorted::<T, u64>(data, ranks, parallel, gap)
    }
}

/// The keys of the sorted, unique `ranks`, and the number of NaNs; the sample is held as `W`
/// (the unsigned integer of the key's width), so that its pivots are selected by this same
/// algorithm.
fn select_sorted<T: Element, W: Element>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
    gap: usize,
) -> (Vec<T::Key>, usize) {
    let n = data.len();
    if n < SMALL {
        let nans = data.iter().filter(|x| x.is_nan()).count();
        let mut keys: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
        return (multiselect_keys(&mut keys, ranks, false), nans);
    }
    let mut clusters = Vec::new();
    let mut start = 0;
    while start < ranks.len() {
        let mut end = start + 1;
        while end < ranks.len() && ranks[end] - ranks[end - 1] <= n / gap {
            end += 1;
        }
        clusters.push(&ranks[start..end]);
        start = end;
    }
    if clusters.len() > MAX_CLUSTERS {
        clusters = vec![ranks];
    }
    let mut search = Search::<T, W>::new(data, parallel);
    let keys: Vec<T::Key> = clusters.into_iter().flat_map(|c| search.solve(c)).collect();
    let nans = match search.nans {
        Some(nans) => nans,
        None => data.iter().filter(|x| x.is_nan()).count(),
    };
    (keys, nans)
}

/// The counts of one pass around the pivots `lo <= hi`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    /// Values `< lo`.
    lt_lo: usize,
    /// Values `<= lo`.
    le_lo: usize,
    /// Values `< hi`.
    lt_hi: usize,
    /// Values `<= hi`.
    le_hi: usize,
    /// NaN values (counted above both pivots).
    nans: usize,
}

/// Ranks that a pass left outside its bracket, with what is known about their keys.
struct Task {
    /// Every answer key is `>= low`.
    low: u64,
    /// Every answer key is `<= high`.
    high: u64,
    /// The number of keys `< low`.
    below: usize,
    /// The number of keys `<= high`.
    upto: usize,
    /// The ranks (sorted, unique, all in `below..upto`).
    ranks: Vec<usize>,
    /// How many brackets have missed these ranks already.
    attempt: u32,
}

/// One selection over `data`: the input and its sample (keys as `W`).
struct Search<'a, T: Element, W: Element> {
    /// The input.
    data: &'a [T],
    /// Whether passes may use several threads.
    parallel: bool,
    /// The sample's keys (drawn on first use).
    sample: Option<Vec<W>>,
    /// The NaNs of the input, once a pass has counted them.
    nans: Option<usize>,
}

impl<'a, T: Element, W: Element> Search<'a, T, W> {
    /// A search over `data` (`data.len() >= SMALL`).
    fn new(data: &'a [T], parallel: bool) -> Self {
        Search {
            data,
            parallel,
            sample: None,
            nans: None,
        }
    }

    /// The sample size for `n` values: `n^(2/3)` (a larger sample would shrink the bracket
    /// copy, but its gather and pivot selection cost more than the copy saves).
    fn sample_size(n: usize) -> usize {
        ((n as f64).powf(2.0 / 3.0) as usize).clamp(64, n)
    }

    /// The keys of `ranks` (sorted, unique, close together), in order.
    fn solve(&mut self, ranks: &[usize]) -> Vec<T::Key> {
        let n = self.data.len();
        let mut answers: Vec<(usize, T::Key)> = Vec::with_capacity(ranks.len());
        let mut tasks = vec![Task {
            low: T::Key::MIN.to_u64(),
            high: T::Key::MAX.to_u64(),
            below: 0,
            upto: n,
            ranks: ranks.to_vec(),
            attempt: 0,
        }];
        while let Some(task) = tasks.pop() {
            self.step(task, &mut answers, &mut tasks);
        }
        answers.sort_unstable_by_key(|&(k, _)| k);
        answers.into_iter().map(|(_, key)| key).collect()
    }

    /// One bracket and one pass for `task`: answers what it can, queues the misses.
    fn step(&mut self, task: Task, answers: &mut Vec<(usize, T::Key)>, tasks: &mut Vec<Task>) {
        let max_num = max_number_key::<T>().to_u64();
        if task.low > max_num || task.low == task.high {
            // Only NaN keys (all equal to `Key::MAX`) lie above the largest number key.
            let key = if task.low > max_num {
                T::Key::MAX
            } else {
                T::Key::from_u64(task.low)
            };
            answers.extend(task.ranks.iter().map(|&k| (k, key)));
            return;
        }
        let (lo, hi, expected) = self.bracket(&task);
        let (lo, hi) = sanitize::<T>(lo, hi);
        let (counts, buffer) = pass::<T, W>(self.data, lo, hi, expected, self.parallel);
        self.nans = Some(counts.nans);
        let mut below = Vec::new();
        let mut above = Vec::new();
        let mut inside = Vec::new();
        for &k in &task.ranks {
            if k < counts.lt_lo {
                below.push(k);
            } else if k < counts.le_lo {
                answers.push((k, lo));
            } else if k < counts.lt_hi {
                inside.push(k - counts.le_lo);
            } else if k < counts.le_hi {
                answers.push((k, hi));
            } else if hi.to_u64() == max_num {
                answers.push((k, T::Key::MAX));
            } else {
                above.push(k);
            }
        }
        if !inside.is_empty() {
            let keys = select_in_copy::<T, W>(buffer, &inside, self.parallel, self.data.len());
            answers.extend(
                inside
                    .iter()
                    .zip(keys)
                    .map(|(&r, key)| (r + counts.le_lo, key)),
            );
        }
        if !below.is_empty() {
            tasks.push(Task {
                low: task.low,
                high: key_pred(lo).to_u64(),
                below: task.below,
                upto: counts.lt_lo,
                ranks: below,
                attempt: task.attempt + 1,
            });
        }
        if !above.is_empty() {
            tasks.push(Task {
                low: key_succ(hi).to_u64(),
                high: task.high,
                below: counts.le_hi,
                upto: task.upto,
                ranks: above,
                attempt: task.attempt + 1,
            });
        }
    }

    /// Pivot keys bracketing the ranks of `task` with high probability (the whole known
    /// interval after two misses), selected from the sample by this same algorithm.
    fn bracket(&mut self, task: &Task) -> (T::Key, T::Key, f64) {
        let (low, high) = (T::Key::from_u64(task.low), T::Key::from_u64(task.high));
        let whole = (low, high, 1.0);
        if task.attempt >= 2 {
            return whole;
        }
        let (data, parallel) = (self.data, self.parallel);
        let sample = self.sample.get_or_insert_with(|| {
            let run = (64 / std::mem::size_of::<T>()).max(1);
            sample_runs(data, Self::sample_size(data.len()), run, SEED, parallel)
        });
        let window: Vec<W>;
        let pool: &[W] = if task.attempt == 0 {
            sample
        } else {
            let inside = |w: &W| (task.low..=task.high).contains(&w.to_key().to_u64());
            window = sample.iter().copied().filter(inside).collect();
            &window
        };
        let s = pool.len();
        let m = task.upto - task.below;
        if s < 16 || m == 0 {
            return whole;
        }
        let spread = SIGMAS * (1u32 << (2 * task.attempt)) as f64;
        let position = |k: usize| -> (f64, f64) {
            let p = ((k - task.below) as f64 + 0.5) / m as f64;
            let sd = (s as f64 * p * (1.0 - p)).sqrt();
            (p * s as f64, spread * sd + 1.0)
        };
        let (centre_lo, width_lo) = position(task.ranks[0]);
        let (centre_hi, width_hi) = position(task.ranks[task.ranks.len() - 1]);
        let r_lo = centre_lo - width_lo;
        let r_hi = centre_hi + width_hi;
        let mut wanted = Vec::with_capacity(2);
        if r_lo >= 0.0 {
            wanted.push(r_lo as usize);
        }
        if r_hi < s as f64 {
            wanted.push((r_hi as usize).max(r_lo.max(0.0) as usize));
        }
        // One pass for both pivots: they are close together in the sample.
        let picked: Vec<T::Key> = select_unique(pool, &wanted, parallel, 1)
            .0
            .into_iter()
            .map(|w| T::Key::from_u64(w.to_u64()))
            .collect();
        let lo = if r_lo >= 0.0 { picked[0] } else { low };
        let hi = if r_hi < s as f64 {
            picked[picked.len() - 1]
        } else {
            high
        };
        let lo = lo.max(low);
        let expected = (r_hi.min(s as f64) - r_lo.max(0.0) + 1.0) / s as f64 * m as f64
            / self.data.len() as f64;
        (lo, hi.min(high).max(lo), expected)
    }
}

/// Copies at least this long are selected in by this same algorithm (its passes use several
/// threads and little memory traffic), shorter ones by quickselect in place.
const RECURSE_COPY: usize = 1 << 16;

/// The keys of `ranks` (sorted, unique) among the keys `copy` (as `W`), a copy out of `parent`
/// values. Only a copy of at most half its parent is selected in by this same algorithm, so the
/// recursion ends even when a bracket keeps (nearly) everything — ranks spread over the whole
/// input share one bracket when they form many groups.
fn select_in_copy<T: Element, W: Element>(
    copy: Vec<W>,
    ranks: &[usize],
    parallel: bool,
    parent: usize,
) -> Vec<T::Key> {
    if copy.len() < RECURSE_COPY || copy.len() > parent / 2 {
        let mut keys: Vec<T::Key> = copy
            .iter()
            .map(|w| T::Key::from_u64(w.to_key().to_u64()))
            .collect();
        return multiselect_keys(&mut keys, ranks, false);
    }
    select_sorted::<W, W>(&copy, ranks, parallel, CLUSTER_GAP)
        .0
        .into_iter()
        .map(|k| T::Key::from_u64(k.to_u64()))
        .collect()
}

/// Keeps the pivot keys on numbers (the keys of NaN lie above the largest number key, and every
/// NaN has the largest key of all, so nothing is lost): the interval only grows, so the bracket
/// stays valid.
fn sanitize<T: Element>(lo: T::Key, hi: T::Key) -> (T::Key, T::Key) {
    let (min_num, max_num) = (min_number_key::<T>(), max_number_key::<T>());
    let lo = lo.clamp(min_num, max_num);
    (lo, hi.clamp(lo, max_num))
}

/// Whether comparing values with the element type's own `<` agrees with key order around the
/// pivot keys: always for integers; for floats unless a pivot is a zero (`-0.0 == +0.0` as
/// values). Pivots are never NaN (see [`sanitize`]); NaN values compare false with everything,
/// which counts them above both pivots, where their key is.
fn values_compare_as_keys<T: Element>(lo: T::Key, hi: T::Key) -> bool {
    if !matches!(T::DTYPE, DType::F32 | DType::F64) {
        return true;
    }
    let plus_zero = T::Key::from_u64(1 << (T::Key::BITS - 1));
    let minus_zero = key_pred(plus_zero);
    ![lo, hi].iter().any(|&k| k == plus_zero || k == minus_zero)
}

/// The key of `x` as the unsigned integer `W` of the key's width (same order).
#[inline(always)]
fn key_as<T: Element, W: Element>(x: T) -> W {
    W::from_key(W::Key::from_u64(x.to_key().to_u64()))
}

/// One pass: the counts around the pivot keys `lo <= hi` and the keys strictly between them (as
/// `W`; several threads when `parallel` and the input is long). The values are compared as
/// values (vectorizes well) when that agrees with key order, and by key otherwise. `expected`
/// is the fraction of the values the bracket is expected to hold.
fn pass<T: Element, W: Element>(
    data: &[T],
    lo: T::Key,
    hi: T::Key,
    expected: f64,
    parallel: bool,
) -> (Counts, Vec<W>) {
    let keys = (
        W::from_key(W::Key::from_u64(lo.to_u64())),
        W::from_key(W::Key::from_u64(hi.to_u64())),
    );
    if values_compare_as_keys::<T>(lo, hi) {
        let (lo, hi) = (T::from_key(lo), T::from_key(hi));
        pass_by::<T, W, T, _, false>(data, |x| x, lo, hi, keys, expected, parallel)
    } else {
        let by = |x: T| x.to_key();
        pass_by::<T, W, T::Key, _, true>(data, by, lo, hi, keys, expected, parallel)
    }
}

/// [`pass`] comparing `by(x)` with the pivots `lo <= hi` (as `by` maps them; `keys` are their
/// keys as `W`).
fn pass_by<T, W, P, F, const COUNT_NANS: bool>(
    data: &[T],
    by: F,
    lo: P,
    hi: P,
    keys: (W, W),
    expected: f64,
    parallel: bool,
) -> (Counts, Vec<W>)
where
    T: Element,
    W: Element,
    P: PartialOrd + Copy + Sync,
    F: Fn(T) -> P + Sync + Send + Copy,
{
    let parts = map_chunks(data, parallel, |chunk| {
        let cap = (4.0 * expected * chunk.len() as f64) as usize + 4 * BLOCK;
        let found = if lo != hi {
            scan_inclusive_dispatch::<T, W, P, F, COUNT_NANS>(chunk, by, lo, hi, keys, cap)
        } else {
            None
        };
        found.unwrap_or_else(|| scan_exclusive_dispatch(chunk, by, lo, hi))
    });
    if parts.len() == 1 {
        return parts.into_iter().next().expect("one part");
    }
    let total: usize = parts.iter().map(|(_, b)| b.len()).sum();
    let mut counts = Counts::default();
    let mut buffer = Vec::with_capacity(total);
    for (c, b) in parts {
        counts.lt_lo += c.lt_lo;
        counts.le_lo += c.le_lo;
        counts.lt_hi += c.lt_hi;
        counts.le_hi += c.le_hi;
        counts.nans += c.nans;
        buffer.extend_from_slice(&b);
    }
    (counts, buffer)
}

/// Declares `$name`, which runs `$scan` compiled for AVX2 (as `$avx2`) when the CPU has it
/// (twice the vector width of the x86-64 baseline, and the counts stay in registers), else as
/// it is. Both take `$scan`'s generics (with its const parameter, if any) and arguments.
macro_rules! with_avx2 {
    ($(#[$meta:meta])* fn $name:ident, $avx2:ident = $scan:ident<$(const $c:ident: $ct:ty)?>
        ($($arg:ident: $ty:ty),*) -> $ret:ty;) => {
        $(#[$meta])*
        fn $name<T, W, P, F, $(const $c: $ct)?>($($arg: $ty),*) -> $ret
        where
            T: Element,
            W: Element,
            P: PartialOrd + Copy,
            F: Fn(T) -> P + Copy,
        {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (detected at run time just above).
                return unsafe { $avx2::<T, W, P, F, $($c)?>($($arg),*) };
            }
            $scan::<T, W, P, F, $($c)?>($($arg),*)
        }

        #[doc = concat!("[`", stringify!($scan), "`] compiled with AVX2 enabled (callers check ")]
        #[doc = "the CPU supports it)."]
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn $avx2<T, W, P, F, $(const $c: $ct)?>($($arg: $ty),*) -> $ret
        where
            T: Element,
            W: Element,
            P: PartialOrd + Copy,
            F: Fn(T) -> P + Copy,
        {
            $scan::<T, W, P, F, $($c)?>($($arg),*)
        }
    };
}

with_avx2! {
    /// [`scan_inclusive`], compiled for AVX2 when the CPU has it.
    fn scan_inclusive_dispatch, scan_inclusive_avx2 = scan_inclusive<const COUNT_NANS: bool>
        (chunk: &[T], by: F, lo: P, hi: P, keys: (W, W), cap: usize) -> Option<(Counts, Vec<W>)>;
}

with_avx2! {
    /// [`scan_exclusive`], compiled for AVX2 when the CPU has it.
    fn scan_exclusive_dispatch, scan_exclusive_avx2 = scan_exclusive<>
        (chunk: &[T], by: F, lo: P, hi: P) -> (Counts, Vec<W>);
}

/// Values per block of a scan: a block is looked at again only when it holds a value inside
/// the bracket.
const BLOCK: usize = 32;

/// Blocks per group of a scan: a group is counted, then its blocks with a hit are copied.
const GROUP: usize = 64;

/// Values per stretch of a scan whose per-lane `u32` counts are summed (they cannot overflow).
const STRETCH: usize = (GROUP * BLOCK) << 14;

/// The positions (bits) of the values of `block` for which `keep` holds.
#[inline(always)]
fn block_mask<T: Copy>(block: &[T], keep: impl Fn(T) -> bool) -> u32 {
    let mut mask = 0u32;
    for (i, &x) in block.iter().enumerate().take(BLOCK) {
        mask |= (keep(x) as u32) << i;
    }
    mask
}

/// Appends the keys (as `W`) of the values of `block` at the set bits of `mask`.
#[inline(always)]
fn push_masked<T: Element, W: Element>(out: &mut Vec<W>, block: &[T], mut mask: u32) {
    while mask != 0 {
        out.push(key_as(block[mask.trailing_zeros() as usize]));
        mask &= mask - 1;
    }
}

/// The fast scan of one chunk: counts `< lo` and `> hi` (two comparisons a value, counted per
/// lane across blocks) and copies the keys (as `W`) of the values in `[lo, hi]`, then sorts
/// out those equal to a pivot (`keys`) from the (small) copy. A group of blocks is counted
/// branch-free first, then only its blocks with a hit are looked at again. NaN values compare
/// false with both pivots: by value (`COUNT_NANS` false) they are what is neither counted nor
/// copied, by key (`COUNT_NANS`) their key lies above `hi` and they are counted apart. `None`
/// when more than about `cap` values would be copied (many values equal to a pivot).
#[inline(always)]
fn scan_inclusive<T, W, P, F, const COUNT_NANS: bool>(
    chunk: &[T],
    by: F,
    lo: P,
    hi: P,
    keys: (W, W),
    cap: usize,
) -> Option<(Counts, Vec<W>)>
where
    T: Element,
    W: Element,
    P: PartialOrd + Copy,
    F: Fn(T) -> P + Copy,
{
    let inside = |x: T| {
        let p = by(x);
        (p >= lo) & (p <= hi)
    };
    // Reserved up front: the copy never moves (and a page is touched only when written).
    let mut copy: Vec<W> = Vec::with_capacity(cap.min(chunk.len()) + GROUP * BLOCK);
    let (mut lt_lo, mut gt_hi, mut nans) = (0usize, 0usize, 0usize);
    for stretch in chunk.chunks(STRETCH) {
        let (mut below, mut above, mut nan) = ([0u32; BLOCK], [0u32; BLOCK], [0u32; BLOCK]);
        for group in stretch.chunks(GROUP * BLOCK) {
            let mut hits = [0u8; GROUP];
            let mut n_hits = 0;
            let mut blocks = group.chunks_exact(BLOCK);
            for (b, block) in (&mut blocks).enumerate() {
                let mut out = 0u32;
                for i in 0..BLOCK {
                    let x = block[i];
                    let p = by(x);
                    let is_below = p < lo;
                    let is_above = p > hi;
                    below[i] += is_below as u32;
                    above[i] += is_above as u32;
                    if COUNT_NANS {
                        nan[i] += x.is_nan() as u32;
                    }
                    out |= (!(is_below | is_above)) as u32;
                }
                // `n_hits <= b < GROUP`.
                hits[n_hits & (GROUP - 1)] = b as u8;
                n_hits += (out != 0) as usize;
            }
            // The group is still in the L1 cache.
            for &b in &hits[..n_hits] {
                let block = &group[b as usize * BLOCK..][..BLOCK];
                push_masked(&mut copy, block, block_mask(block, inside));
            }
            if copy.len() > cap {
                return None;
            }
            for &x in blocks.remainder() {
                let p = by(x);
                lt_lo += (p < lo) as usize;
                gt_hi += (p > hi) as usize;
                if COUNT_NANS {
                    nans += x.is_nan() as usize;
                }
                if inside(x) {
                    copy.push(key_as(x));
                }
            }
        }
        lt_lo += below.iter().map(|&c| c as usize).sum::<usize>();
        gt_hi += above.iter().map(|&c| c as usize).sum::<usize>();
        nans += nan.iter().map(|&c| c as usize).sum::<usize>();
    }
    let le_hi = lt_lo + copy.len();
    if !COUNT_NANS {
        nans = chunk.len() - le_hi - gt_hi;
    }
    // Sort out the keys equal to a pivot (counted), in place.
    let (mut eq_lo, mut eq_hi, mut kept) = (0, 0, 0);
    for i in 0..copy.len() {
        let w = copy[i];
        let (is_lo, is_hi) = (w == keys.0, w == keys.1);
        eq_lo += is_lo as usize;
        eq_hi += is_hi as usize;
        copy[kept] = w;
        kept += !(is_lo | is_hi) as usize;
    }
    copy.truncate(kept);
    let counts = Counts {
        lt_lo,
        le_lo: lt_lo + eq_lo,
        lt_hi: le_hi - eq_hi,
        le_hi,
        nans,
    };
    Some((counts, copy))
}

/// The robust scan of one chunk: four counts a value (`< lo`, `<= lo`, `< hi`, `<= hi`) and
/// copies of the keys (as `W`) strictly between the pivots only, so that values equal to a
/// pivot cost no workspace.
#[inline(always)]
fn scan_exclusive<T, W, P, F>(chunk: &[T], by: F, lo: P, hi: P) -> (Counts, Vec<W>)
where
    T: Element,
    W: Element,
    P: PartialOrd + Copy,
    F: Fn(T) -> P + Copy,
{
    let between = |x: T| {
        let p = by(x);
        (p > lo) & (p < hi)
    };
    let mut counts = Counts::default();
    let mut copy: Vec<W> = Vec::new();
    let mut blocks = chunk.chunks_exact(BLOCK);
    for block in &mut blocks {
        let (mut lt_lo, mut le_lo, mut lt_hi, mut le_hi, mut nan, mut any) =
            (0u32, 0u32, 0u32, 0u32, 0u32, false);
        for &x in block {
            let p = by(x);
            lt_lo += (p < lo) as u32;
            le_lo += (p <= lo) as u32;
            lt_hi += (p < hi) as u32;
            le_hi += (p <= hi) as u32;
            nan += x.is_nan() as u32;
            any |= (p > lo) & (p < hi);
        }
        counts.nans += nan as usize;
        counts.lt_lo += lt_lo as usize;
        counts.le_lo += le_lo as usize;
        counts.lt_hi += lt_hi as usize;
        counts.le_hi += le_hi as usize;
        if any {
            push_masked(&mut copy, block, block_mask(block, between));
        }
    }
    for &x in blocks.remainder() {
        let p = by(x);
        counts.lt_lo += (p < lo) as usize;
        counts.le_lo += (p <= lo) as usize;
        counts.lt_hi += (p < hi) as usize;
        counts.le_hi += (p <= hi) as usize;
        counts.nans += x.is_nan() as usize;
        if between(x) {
            copy.push(key_as(x));
        }
    }
    (counts, copy)
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;
    use crate::select::host::testing::{inputs, matches_sort_on_adversarial_inputs};
    use crate::select::sort_choose;

    matches_sort_on_adversarial_inputs!(multiselect multiselect);

    /// Several ranks at once (repeats, neighbours, extremes) agree with sort&choose.
    #[test]
    fn multiselect_matches_sort() {
        let mut rng = SplitMix64::new(4);
        for n in [SMALL - 1, SMALL, 50_000] {
            for (name, data) in inputs::<f32>(n, 11) {
                let keys = sort_choose::cpu::sorted_keys(&data, false);
                let mut ranks: Vec<usize> = (0..5).map(|_| rng.below(n)).collect();
                ranks.extend([0, n - 1, n / 2, n / 2 + 1, n / 2]);
                let got = multiselect(&data, &ranks, true);
                for (&k, g) in ranks.iter().zip(got) {
                    assert_eq!(g.to_key(), keys[k], "{name} n={n} k={k}");
                }
            }
        }
    }

    /// The fast and the robust scan agree, by value and by key, with or without a cap overflow.
    #[test]
    fn scans_agree() {
        let mut rng = SplitMix64::new(8);
        let data: Vec<f32> = (0..5000)
            .map(|i| match i % 7 {
                0 => -0.0,
                1 => 0.0,
                2 => f32::NAN,
                _ => rng.below(40) as f32 - 20.0,
            })
            .collect();
        let pivots = [
            (-3.0f32, 5.0f32),
            (-0.0, 0.0),
            (0.0, 7.0),
            (2.0, 2.0),
            (-20.0, 19.0),
        ];
        for (lo, hi) in pivots {
            let (lo_key, hi_key) = (lo.to_key(), hi.to_key());
            let keys_w = (lo_key, hi_key);
            let by_key = |x: f32| x.to_key();
            let (want, mut want_keys): (Counts, Vec<u32>) =
                scan_exclusive(&data, by_key, lo_key, hi_key);
            want_keys.sort_unstable();
            for cap in [0, data.len()] {
                let by_keys =
                    scan_inclusive::<_, _, _, _, true>(&data, by_key, lo_key, hi_key, keys_w, cap);
                let dispatched = scan_inclusive_dispatch::<_, _, _, _, true>(
                    &data, by_key, lo_key, hi_key, keys_w, cap,
                );
                let mut found = vec![by_keys, dispatched];
                if values_compare_as_keys::<f32>(lo_key, hi_key) {
                    let id = |x: f32| x;
                    found.push(scan_inclusive::<_, _, _, _, false>(
                        &data, id, lo, hi, keys_w, cap,
                    ));
                    found.push(scan_inclusive_dispatch::<_, _, _, _, false>(
                        &data, id, lo, hi, keys_w, cap,
                    ));
                }
                for (got, mut keys) in found.into_iter().flatten() {
                    keys.sort_unstable();
                    assert_eq!((got, &keys), (want, &want_keys), "{lo} {hi} cap {cap}");
                }
            }
            let (got, mut keys): (Counts, Vec<u32>) = pass(&data, lo_key, hi_key, 0.01, false);
            keys.sort_unstable();
            assert_eq!((got, keys), (want, want_keys.clone()), "{lo} {hi}");
            let below = data.iter().filter(|x| x.to_key() < lo_key).count();
            assert_eq!(want.lt_lo, below);
            let nans = data.iter().filter(|x| x.is_nan()).count();
            assert_eq!(want.nans, nans);
        }
    }

    /// Ranks spread over the whole input in many groups share one bracket that keeps nearly
    /// everything; the copy is then selected in directly (this recursed without end).
    #[test]
    fn spread_ranks_end() {
        let n = 1 << 17;
        let data: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 1000.0).collect();
        let ranks: Vec<usize> = (0..40).map(|i| i * (n - 1) / 39).collect();
        let keys = sort_choose::cpu::sorted_keys(&data, false);
        let got = multiselect(&data, &ranks, true);
        for (&k, g) in ranks.iter().zip(got) {
            assert_eq!(g.to_key(), keys[k], "k={k}");
        }
    }

    /// A sample that misrepresents the data still gives exact results.
    #[test]
    fn misses_are_recovered() {
        // Data whose sample misrepresents it: the sampled positions hold small values.
        let n = 1 << 15;
        let stride = n / Search::<u32, u32>::sample_size(n);
        let data: Vec<u32> = (0..n as u32)
            .map(|i| {
                if (i as usize).is_multiple_of(stride) {
                    i
                } else {
                    u32::MAX - i
                }
            })
            .collect();
        let keys = sort_choose::cpu::sorted_keys(&data, false);
        for k in [0, 1, n / 2, n - 1] {
            assert_eq!(select_one(&data, k, false), keys[k]);
        }
    }
}
