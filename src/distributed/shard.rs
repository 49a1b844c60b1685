//! A rank's own data and the local passes distributed selection makes over it: statistics,
//! a sample, a sketch of the bucket counts, bucket counts, and the reduction to the active
//! buckets.
//!
//! After the first reduction a rank keeps only the keys of its elements in active buckets;
//! later passes read those. A first count told which buckets will likely be active copies
//! their keys, and the reduction reads the copy instead of the data when it holds every active
//! bucket. The passes over host memory run on the thread pool.

use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::random::SplitMix64;
use crate::select::host::{map_chunks, zip_chunks};

use super::plan::BucketPlan;

/// What a rank reports of its data before selection starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LocalStats {
    /// Values held.
    pub len: u64,
    /// NaNs among them.
    pub nans: u64,
    /// Index of the first NaN (`u64::MAX` when none).
    pub first_nan: u64,
    /// Values that ranks count (NaNs left out under `Omit`).
    pub included: u64,
    /// Smallest key of the included values (`u64::MAX` when none).
    pub min: u64,
    /// Largest key of the included values (0 when none).
    pub max: u64,
}

impl LocalStats {
    pub(crate) const WORDS: usize = 6;

    pub(crate) fn to_words(self) -> Vec<u64> {
        vec![
            self.len,
            self.nans,
            self.first_nan,
            self.included,
            self.min,
            self.max,
        ]
    }

    pub(crate) fn from_words(w: &[u64]) -> Option<Self> {
        (w.len() == Self::WORDS).then(|| LocalStats {
            len: w[0],
            nans: w[1],
            first_nan: w[2],
            included: w[3],
            min: w[4],
            max: w[5],
        })
    }
}

/// Values of a run a sketch reads whole.
pub(crate) const SKETCH_PIECE: usize = 16;
/// Runs of a group, of which a sketch reads one.
pub(crate) const SKETCH_GROUP: usize = 16;

/// The run a sketch reads in group `g` (below [`SKETCH_GROUP`]): a hash of `g`, so that a
/// period in the data does not line up with the runs read (`SketchPlaces` in
/// kernels/distributed.cu is the same).
pub(crate) fn sketch_run(g: u64) -> usize {
    let mut h = (g as u32 ^ (g >> 32) as u32).wrapping_mul(0x9E37_79B1);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h as usize % SKETCH_GROUP
}

/// A sketch's counts of `counted` of a rank's `len` values, scaled to all of them, with
/// `counted` after them (the form [`Shard::sketch`] returns). The running sums are scaled, so
/// that rounding leaves the total unbiased (rounding each count would drop its fraction every
/// time the scale is a little above a whole number).
pub(crate) fn scaled_sketch(counts: &[u64], counted: u64, len: u64) -> Vec<u64> {
    let scale = |c: u128| (c * len as u128 + counted as u128 / 2) / counted.max(1) as u128;
    let mut below = 0u128;
    let mut scaled_below = 0u128;
    counts
        .iter()
        .map(|&c| {
            below += c as u128;
            let upto = scale(below);
            let estimate = upto - scaled_below;
            scaled_below = upto;
            estimate as u64
        })
        .chain(std::iter::once(counted))
        .collect()
}

/// The keys a count copied: those of the buckets it was told to keep.
pub(crate) struct Copied<C> {
    /// The keys (however the shard holds them).
    pub keys: C,
    /// Whether each bucket's keys were copied.
    pub kept: Vec<bool>,
}

impl<C> Copied<C> {
    /// A copy of the keys of the buckets `keep` (ascending numbers below `buckets`).
    pub(crate) fn new(keys: C, buckets: usize, keep: &[usize]) -> Self {
        let mut kept = vec![false; buckets];
        for &b in keep {
            kept[b] = true;
        }
        Copied { keys, kept }
    }

    /// Whether the copy holds every key of the `active` buckets.
    pub(crate) fn holds(&self, active: &[usize]) -> bool {
        active.iter().all(|&b| self.kept.get(b) == Some(&true))
    }
}

/// The local passes of distributed selection over one rank's data.
pub(crate) trait Shard<T: Element> {
    /// The number of values the rank holds.
    fn len(&self) -> u64;

    /// Counts, NaNs and extremes of the data (`omit_nan`: NaNs are not included).
    fn stats(&mut self, omit_nan: bool) -> Result<LocalStats>;

    /// Up to `count` keys of included values drawn at random (seeded).
    fn sample(&mut self, count: usize, omit_nan: bool, seed: u64) -> Result<Vec<u64>>;

    /// An estimate of [`count`](Self::count) from about one value in [`SKETCH_GROUP`] (runs
    /// of [`SKETCH_PIECE`] at hashed places, or every value of a short part), each bucket's
    /// count scaled to all values, then the number of values read: the buckets' words and one.
    fn sketch(&mut self, plan: &BucketPlan<T>) -> Result<Vec<u64>>;

    /// How many of the current elements fall in each bucket of `plan`; when `keep` (ascending
    /// bucket numbers) is not empty, the keys of those buckets are also copied, and the next
    /// [`reduce`](Self::reduce) reads the copy instead when it holds every active bucket.
    fn count(&mut self, plan: &BucketPlan<T>, keep: &[usize]) -> Result<Vec<u64>>;

    /// Keeps only the current elements in the `active` buckets (ascending bucket numbers) and
    /// returns, for each active bucket, the largest key and the complement of the smallest
    /// (0 and 0 for a bucket this rank holds nothing of), so that both reduce by maximum.
    fn reduce(&mut self, plan: &BucketPlan<T>, active: &[usize]) -> Result<Vec<(u64, u64)>>;

    /// The keys of the current elements (the included values before any reduction), in
    /// ascending order; the shard is left with none.
    fn keys(&mut self, omit_nan: bool) -> Result<Vec<T::Key>>;
}

/// A rank's data in host memory.
pub(crate) struct HostShard<'a, T: Element> {
    data: &'a [T],
    reduced: Option<Vec<T::Key>>,
    copied: Option<Copied<Vec<T::Key>>>,
    parallel: bool,
}

impl<'a, T: Element> HostShard<'a, T> {
    pub(crate) fn new(data: &'a [T], parallel: bool) -> Self {
        HostShard {
            data,
            reduced: None,
            copied: None,
            parallel,
        }
    }

    /// Runs `pass` over the current elements' keys, chunk by chunk.
    fn map_keys<R: Send>(&self, pass: impl Fn(KeyChunk<'_, T>) -> R + Sync + Send) -> Vec<R> {
        match &self.reduced {
            Some(keys) => map_chunks(keys, self.parallel, |c| pass(KeyChunk::Keys(c))),
            None => map_chunks(self.data, self.parallel, |c| pass(KeyChunk::Values(c))),
        }
    }
}

/// A chunk of a rank's current elements: kept keys, or values of the data.
enum KeyChunk<'c, T: Element> {
    Keys(&'c [T::Key]),
    Values(&'c [T]),
}

/// A chunk's keys counted by bucket of `plan`, and those of the buckets marked in `kept`
/// copied (a function of the chunk's iterator, so that each form gets its own loop).
fn count_chunk<T: Element>(
    keys: impl Iterator<Item = T::Key>,
    plan: &BucketPlan<T>,
    kept: &[bool],
) -> (Vec<u64>, Vec<T::Key>) {
    let mut h = vec![0u64; plan.buckets()];
    let mut copy = Vec::new();
    for k in keys {
        if let Some(b) = plan.bucket(k) {
            h[b] += 1;
            if kept[b] {
                copy.push(k);
            }
        }
    }
    (h, copy)
}

/// A chunk's keys in the buckets with a `slot` (the others `u32::MAX`), and each slot's
/// largest key and complement of its smallest.
fn reduce_chunk<T: Element>(
    keys: impl Iterator<Item = T::Key>,
    plan: &BucketPlan<T>,
    slot: &[u32],
    slots: usize,
) -> (Vec<T::Key>, Vec<(u64, u64)>) {
    let mut kept = Vec::new();
    let mut extremes = vec![(0u64, 0u64); slots];
    for k in keys {
        let Some(b) = plan.bucket(k) else { continue };
        let s = slot[b];
        if s != u32::MAX {
            kept.push(k);
            let e = &mut extremes[s as usize];
            let w = k.to_u64();
            *e = (e.0.max(w), e.1.max(!w));
        }
    }
    (kept, extremes)
}

impl<T: Element> Shard<T> for HostShard<'_, T> {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }

    fn stats(&mut self, omit_nan: bool) -> Result<LocalStats> {
        let floats = T::DTYPE.is_float();
        let chunks = map_chunks(self.data, self.parallel, |c| {
            let (mut nans, mut first, mut min, mut max) = (0u64, u64::MAX, u64::MAX, 0u64);
            let offset = c.as_ptr() as usize;
            for (i, v) in c.iter().enumerate() {
                if floats && v.is_nan() {
                    nans += 1;
                    first = first.min(i as u64);
                    if omit_nan {
                        continue;
                    }
                }
                let k = v.to_key().to_u64();
                min = min.min(k);
                max = max.max(k);
            }
            (offset, nans, first, min, max)
        });
        let base = self.data.as_ptr() as usize;
        let size = std::mem::size_of::<T>().max(1);
        let mut s = LocalStats {
            len: self.data.len() as u64,
            nans: 0,
            first_nan: u64::MAX,
            included: 0,
            min: u64::MAX,
            max: 0,
        };
        for (offset, nans, first, min, max) in chunks {
            s.nans += nans;
            if first != u64::MAX && s.first_nan == u64::MAX {
                s.first_nan = ((offset - base) / size) as u64 + first;
            }
            s.min = s.min.min(min);
            s.max = s.max.max(max);
        }
        s.included = if omit_nan { s.len - s.nans } else { s.len };
        Ok(s)
    }

    fn sample(&mut self, count: usize, omit_nan: bool, seed: u64) -> Result<Vec<u64>> {
        let data = self.data;
        let mut out = Vec::with_capacity(count);
        if data.is_empty() {
            return Ok(out);
        }
        let mut rng = SplitMix64::new(seed);
        let mut tries = 4 * count + 16;
        while out.len() < count && tries > 0 {
            tries -= 1;
            let v = data[rng.below(data.len())];
            if !(omit_nan && v.is_nan()) {
                out.push(v.to_key().to_u64());
            }
        }
        Ok(out)
    }

    fn sketch(&mut self, plan: &BucketPlan<T>) -> Result<Vec<u64>> {
        let group = SKETCH_PIECE * SKETCH_GROUP;
        if self.reduced.is_some() || self.data.len() < group {
            let len = self.reduced.as_ref().map_or(self.data.len(), Vec::len) as u64;
            return Ok(scaled_sketch(&self.count(plan, &[])?, len, len));
        }
        let buckets = plan.buckets();
        // Groups from each chunk's start; a chunk's last partial group is not read.
        let parts = map_chunks(self.data, self.parallel, |c| {
            let mut h = vec![0u64; buckets];
            let groups = c.len() / group;
            for g in 0..groups {
                let start = g * group + sketch_run(g as u64) * SKETCH_PIECE;
                for v in &c[start..start + SKETCH_PIECE] {
                    if let Some(b) = plan.bucket(v.to_key()) {
                        h[b] += 1;
                    }
                }
            }
            (h, (groups * SKETCH_PIECE) as u64)
        });
        let mut total = vec![0u64; buckets];
        let mut counted = 0;
        for (h, c) in parts {
            counted += c;
            add_counts(&mut total, &h);
        }
        Ok(scaled_sketch(&total, counted, self.data.len() as u64))
    }

    fn count(&mut self, plan: &BucketPlan<T>, keep: &[usize]) -> Result<Vec<u64>> {
        let buckets = plan.buckets();
        let mut copied = Copied::new(Vec::new(), buckets, keep);
        let parts = self.map_keys(|chunk| match chunk {
            KeyChunk::Keys(k) => count_chunk(k.iter().copied(), plan, &copied.kept),
            KeyChunk::Values(v) => count_chunk(v.iter().map(|x| x.to_key()), plan, &copied.kept),
        });
        let mut total = vec![0u64; buckets];
        for (h, c) in parts {
            copied.keys.extend_from_slice(&c);
            add_counts(&mut total, &h);
        }
        self.copied = (!keep.is_empty()).then_some(copied);
        Ok(total)
    }

    fn reduce(&mut self, plan: &BucketPlan<T>, active: &[usize]) -> Result<Vec<(u64, u64)>> {
        if let Some(copied) = self.copied.take() {
            if copied.holds(active) {
                self.reduced = Some(copied.keys);
            }
        }
        let mut slot = vec![u32::MAX; plan.buckets()];
        for (i, &b) in active.iter().enumerate() {
            slot[b] = i as u32;
        }
        let slots = active.len();
        let parts = self.map_keys(|chunk| match chunk {
            KeyChunk::Keys(k) => reduce_chunk(k.iter().copied(), plan, &slot, slots),
            KeyChunk::Values(v) => reduce_chunk(v.iter().map(|x| x.to_key()), plan, &slot, slots),
        });
        let mut extremes = vec![(0u64, 0u64); active.len()];
        let mut kept = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
        for (k, e) in parts {
            kept.extend_from_slice(&k);
            for (a, b) in extremes.iter_mut().zip(e) {
                *a = (a.0.max(b.0), a.1.max(b.1));
            }
        }
        self.reduced = Some(kept);
        Ok(extremes)
    }

    fn keys(&mut self, omit_nan: bool) -> Result<Vec<T::Key>> {
        use rayon::prelude::*;
        let mut keys = match self.reduced.take() {
            Some(keys) => keys,
            None => map_chunks(self.data, self.parallel, |c| {
                c.iter()
                    .filter(|v| !(omit_nan && v.is_nan()))
                    .map(|v| v.to_key())
                    .collect::<Vec<_>>()
            })
            .concat(),
        };
        keys.par_sort_unstable();
        Ok(keys)
    }
}

/// `total[b] += counts[b]` for every bucket.
fn add_counts(total: &mut [u64], counts: &[u64]) {
    for (t, c) in total.iter_mut().zip(counts) {
        *t += c;
    }
}

/// Keys as little-endian bytes of their own width (many keys in parallel pieces).
pub(crate) fn keys_to_bytes<K: RadixKey>(keys: &[K]) -> Vec<u8> {
    let width = (K::BITS / 8) as usize;
    let mut out = vec![0u8; keys.len() * width];
    zip_chunks(&mut out, width, keys, 1, |o, k| {
        for (o, k) in o.chunks_exact_mut(width).zip(k) {
            o.copy_from_slice(&k.to_u64().to_le_bytes()[..width]);
        }
    });
    out
}

/// The inverse of [`keys_to_bytes`] (a trailing partial key is dropped; many keys in parallel).
pub(crate) fn bytes_to_keys<K: RadixKey>(bytes: &[u8]) -> Vec<K> {
    let width = (K::BITS / 8) as usize;
    let count = bytes.len() / width;
    let mut keys = vec![K::default(); count];
    zip_chunks(&mut keys, 1, &bytes[..count * width], width, |k, b| {
        for (k, c) in k.iter_mut().zip(b.chunks_exact(width)) {
            let mut w = [0u8; 8];
            w[..width].copy_from_slice(c);
            *k = K::from_u64(u64::from_le_bytes(w));
        }
    });
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scale a little above sixteen: rounding each count would lose a fraction of a value
    /// every bucket; the running sums keep the total at the rank's size.
    #[test]
    fn scaled_sketches_add_up_to_the_size() {
        let counts = vec![30u64; 8192];
        let counted = 30 * 8192;
        let len = 3_774_873;
        let scaled = scaled_sketch(&counts, counted, len);
        assert_eq!(scaled.len(), 8193);
        assert_eq!(scaled[8192], counted);
        assert_eq!(scaled[..8192].iter().sum::<u64>(), len);
        assert!(scaled[..8192].iter().all(|&e| (460..=461).contains(&e)));
        assert_eq!(scaled_sketch(&[0, 0], 0, 0), vec![0, 0, 0]);
    }
}
