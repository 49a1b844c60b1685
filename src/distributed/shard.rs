//! A rank's own data and the local passes distributed selection makes over it: statistics,
//! a sample, bucket counts, and the reduction to the active buckets.
//!
//! After the first reduction a rank keeps only the keys of its elements in active buckets;
//! later passes read those. The passes over host memory run on the thread pool.

use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::random::SplitMix64;
use crate::select::host::map_chunks;

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

/// The local passes of distributed selection over one rank's data.
pub(crate) trait Shard<T: Element> {
    /// Counts, NaNs and extremes of the data (`omit_nan`: NaNs are not included).
    fn stats(&mut self, omit_nan: bool) -> Result<LocalStats>;

    /// Up to `count` keys of included values drawn at random (seeded).
    fn sample(&mut self, count: usize, omit_nan: bool, seed: u64) -> Result<Vec<u64>>;

    /// How many of the current elements fall in each bucket of `plan`.
    fn count(&mut self, plan: &BucketPlan<T>) -> Result<Vec<u64>>;

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
    parallel: bool,
}

impl<'a, T: Element> HostShard<'a, T> {
    pub(crate) fn new(data: &'a [T], parallel: bool) -> Self {
        HostShard {
            data,
            reduced: None,
            parallel,
        }
    }

    /// Runs `pass` over the current elements' keys, chunk by chunk.
    fn map_keys<R: Send>(
        &self,
        pass: impl Fn(&mut dyn Iterator<Item = T::Key>) -> R + Sync + Send,
    ) -> Vec<R> {
        match &self.reduced {
            Some(keys) => map_chunks(keys, self.parallel, |c| pass(&mut c.iter().copied())),
            None => map_chunks(self.data, self.parallel, |c| {
                pass(&mut c.iter().map(|v| v.to_key()))
            }),
        }
    }
}

impl<T: Element> Shard<T> for HostShard<'_, T> {
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

    fn count(&mut self, plan: &BucketPlan<T>) -> Result<Vec<u64>> {
        let buckets = plan.buckets();
        let parts = self.map_keys(|keys| {
            let mut h = vec![0u64; buckets];
            for k in keys {
                if let Some(b) = plan.bucket(k) {
                    h[b] += 1;
                }
            }
            h
        });
        let mut total = vec![0u64; buckets];
        for h in parts {
            for (t, c) in total.iter_mut().zip(h) {
                *t += c;
            }
        }
        Ok(total)
    }

    fn reduce(&mut self, plan: &BucketPlan<T>, active: &[usize]) -> Result<Vec<(u64, u64)>> {
        let mut slot = vec![u32::MAX; plan.buckets()];
        for (i, &b) in active.iter().enumerate() {
            slot[b] = i as u32;
        }
        let parts = self.map_keys(|keys| {
            let mut kept = Vec::new();
            let mut extremes = vec![(0u64, 0u64); active.len()];
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

/// Keys as little-endian bytes of their own width.
pub(crate) fn keys_to_bytes<K: RadixKey>(keys: &[K]) -> Vec<u8> {
    let width = (K::BITS / 8) as usize;
    let mut out = Vec::with_capacity(keys.len() * width);
    for k in keys {
        out.extend_from_slice(&k.to_u64().to_le_bytes()[..width]);
    }
    out
}

/// The inverse of [`keys_to_bytes`] (a trailing partial key is dropped).
pub(crate) fn bytes_to_keys<K: RadixKey>(bytes: &[u8]) -> Vec<K> {
    let width = (K::BITS / 8) as usize;
    bytes
        .chunks_exact(width)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..width].copy_from_slice(c);
            K::from_u64(u64::from_le_bytes(w))
        })
        .collect()
}
