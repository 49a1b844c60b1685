//! bucketMultiSelect (Blanchard et al. 2016) on the CPU: many ranks in two passes over the
//! data, whatever their number.
//!
//! 1. A sample of the data fits a piecewise-linear projection onto buckets of about equal
//!    population ([`Piecewise`]; the paper's kernel density intervals).
//! 2. One pass counts the values per bucket (several threads, per-chunk counts; NaNs have a
//!    bucket of their own, so the pass counts them too).
//! 3. The counts tell which bucket holds each rank and the rank within it.
//! 4. A second pass copies the keys of those buckets (a few thousandths of the data per
//!    bucket; with AVX-512, the wanted buckets are a bitmap tested in registers, or gathered
//!    beyond 4096 buckets, and the wanted values are packed by a vector compress: [`avx512`]),
//!    and each bucket's copy is selected in for its ranks (quickMultiSelect, or Floyd–Rivest
//!    when the copy is long), in parallel over buckets.
//!
//! With few ranks on a long input (the windows below keep at most 8 % of the data), steps
//! 2 and 4 are one pass: a count over a subset of the data (one run of 1024 values in each
//! group of 4 to 32) places each rank within a window of positions, and the fused pass counts
//! every bucket and copies the values of the buckets those windows meet
//! ([`predicted`]); the ranks' buckets are then copied from those values. A
//! rank whose bucket the windows missed sends the copy back to the data: exact either way.
//!
//! A bucket whose keys can only be one key (NaN's, or a bucket narrower than the spacing of
//! the values) needs no copy: every rank in it is that key. A bucket much fuller than the
//! sample predicted (heavy repeats of a value, data the sample misrepresents) is copied all
//! the same and selected in by Floyd–Rivest, which handles repeated values in one pass: the
//! result is exact for any input, at the cost of a larger copy.
//!
//! Unlike bracketing each rank from a sample (Floyd–Rivest, whose copy per rank grows like
//! `n / sqrt(sample)`), the copy here is exact: the counts are known before anything is
//! copied, so it is about `ranks · n / B` values for `B` buckets.
//!
//! Workspace: `B` counters per chunk (`B` between 4096 and 32768, growing with the number of
//! ranks, at most `n / 16`), the sample (`n / 128` values, 2^12 to 2^15), and the copies of
//! the ranks' buckets: expected `ranks · n / B` keys, at most `n` (heavy repeats), plus what
//! Floyd–Rivest needs in a long copy.

mod avx512;
pub(crate) mod estimate;
mod multi_pass;
mod piecewise;
mod predicted;

use rayon::prelude::*;

use crate::element::{Element, RadixKey};
use crate::select::bucket_multi::cpu::avx512::Bitmap;
use crate::select::bucket_multi::cpu::multi_pass::{count, count_keep, extract, Slots};
use crate::select::bucket_multi::cpu::piecewise::{Piecewise, Real};
use crate::select::floyd_rivest;
use crate::select::host::{chunk_len, sample_runs, use_parallel};
use crate::select::quick_multiselect::multiselect_keys;

/// Inputs shorter than this go to Floyd–Rivest (which selects short ones on a key copy).
pub(crate) const MIN_LEN: usize = 1 << 14;

/// Sample size: at most this, and about `n / SAMPLE_SHARE` for short inputs (whose passes
/// cost little more than fitting a full sample).
const SAMPLE: usize = 1 << 15;

/// See [`SAMPLE`].
const SAMPLE_SHARE: usize = 128;

/// Seed of the sampling positions.
const SEED: u64 = 0xB0C4_E75E;

/// Copies at least this long are selected in by Floyd–Rivest, shorter ones by quickMultiSelect.
const LONG_COPY: usize = 1 << 16;

/// The elements of `ranks` (each `< data.len()`, any order, repeats allowed) in the order
/// given, and the number of NaNs in `data` (counted by the first pass).
pub(crate) fn multiselect_counting_nans<T: Element>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<T>, usize) {
    if data.len() < MIN_LEN {
        return floyd_rivest::multiselect_counting_nans(data, ranks, parallel);
    }
    let mut unique = ranks.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let (found, nans) = if T::Key::BITS == 32 {
        select_sorted::<T, u32, f32>(data, &unique, parallel)
    } else {
        select_sorted::<T, u64, f64>(data, &unique, parallel)
    };
    let values = ranks
        .iter()
        .map(|k| T::from_key(found[unique.binary_search(k).expect("requested rank")]))
        .collect();
    (values, nans)
}

/// The number of buckets for `n` values and `ranks` ranks: enough that the ranks' buckets
/// hold a small part of the data, few enough that the counters stay in a core's caches.
pub(crate) fn bucket_target(n: usize, ranks: usize) -> usize {
    (16 * ranks).clamp(1 << 12, 1 << 15).min(n / 16)
}

/// The ranks that fall into one bucket.
struct Wanted {
    /// The bucket.
    bucket: usize,
    /// Values in the buckets before it.
    below: usize,
    /// Values in it.
    size: usize,
    /// Indexes of its ranks among the sorted unique ranks.
    first: usize,
    /// One past the last.
    end: usize,
}

/// The keys of the sorted, unique `ranks` and the number of NaNs; keys are copied as `W` (the
/// unsigned integer of the key's width), the projection computes in `F`.
fn select_sorted<T: Element, W: Element, F: Real>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<T::Key>, usize) {
    let n = data.len();
    let p = fit::<T, F>(data, bucket_target(n, ranks.len()), parallel);
    let (par, len) = chunking(n, parallel);
    // With a subset's prediction, one pass counts and copies the predicted buckets' values.
    let fused = predicted::group(n, ranks, p.buckets()).map(|group| {
        let marked = predicted::marks(data, &p, ranks, group, par);
        let chunks: Vec<&[T]> = data.chunks(len).collect();
        let (parts, kept) = count_keep_chunks(&chunks, &p, &marked, par);
        (marked, chunks, parts, kept)
    });
    let (parts, totals) = match &fused {
        Some((_, _, parts, _)) => (parts.clone(), sum_counts(parts, p.buckets())),
        None => count_buckets(data, &p, parallel),
    };
    let nans = if T::DTYPE.is_float() {
        totals[p.top]
    } else {
        0
    };

    // Which bucket holds each rank.
    let mut wanted: Vec<Wanted> = Vec::new();
    let mut below = 0;
    let mut i = 0;
    for (bucket, &size) in totals.iter().enumerate() {
        let first = i;
        while i < ranks.len() && ranks[i] < below + size {
            i += 1;
        }
        if i > first {
            wanted.push(Wanted {
                bucket,
                below,
                size,
                first,
                end: i,
            });
        }
        below += size;
    }

    let mut found: Vec<Option<T::Key>> = vec![None; ranks.len()];
    let average = n / p.buckets();
    let mut to_copy: Vec<&Wanted> = Vec::new();
    for w in &wanted {
        let single = if w.bucket == p.top {
            // NaN's bucket: every NaN has the largest key.
            Some((T::Key::MAX, T::Key::MAX))
        } else if w.size > average {
            p.key_range::<T>(w.bucket).filter(|(lo, hi)| lo == hi)
        } else {
            None
        };
        if let Some((key, _)) = single {
            found[w.first..w.end].fill(Some(key));
        } else {
            to_copy.push(w);
        }
    }

    if !to_copy.is_empty() {
        let solve = |chunks: &[&[T]]| {
            select_in_buckets::<T, W, F>(chunks, &p, &parts, par, &to_copy, ranks, parallel)
        };
        let answers = match &fused {
            // Every bucket to copy was kept: the copies come from the kept values.
            Some((marked, _, _, kept)) if to_copy.iter().all(|w| marked[w.bucket]) => {
                let kept: Vec<&[T]> = kept.iter().map(Vec::as_slice).collect();
                solve(&kept)
            }
            Some((_, chunks, _, _)) => solve(chunks),
            None => solve(&data.chunks(len).collect::<Vec<_>>()),
        };
        for (w, keys) in to_copy.iter().zip(answers) {
            for (slot, key) in found[w.first..w.end].iter_mut().zip(keys) {
                *slot = Some(key);
            }
        }
    }
    let keys = found
        .into_iter()
        .map(|k| k.expect("every rank is answered"))
        .collect();
    (keys, nans)
}

/// Whether the passes over `n` values run on several threads, and their chunk length.
fn chunking(n: usize, parallel: bool) -> (bool, usize) {
    let par = use_parallel(parallel, n);
    (par, if par { chunk_len(n) } else { n })
}

/// The counting pass: the counts of `p`'s buckets per chunk of `data` (chunks as
/// [`chunking`] makes them) and in all.
pub(crate) fn count_buckets<T: Element, F: Real>(
    data: &[T],
    p: &Piecewise<F>,
    parallel: bool,
) -> (Vec<Vec<u32>>, Vec<usize>) {
    let (par, len) = chunking(data.len(), parallel);
    let count_chunk = |chunk: &[T]| {
        let mut counts = vec![0u32; p.buckets()];
        count(p, chunk, &mut counts);
        counts
    };
    let parts: Vec<Vec<u32>> = if par {
        data.par_chunks(len).map(count_chunk).collect()
    } else {
        vec![count_chunk(data)]
    };
    let totals = sum_counts(&parts, p.buckets());
    (parts, totals)
}

/// The sums over chunks of per-chunk counts of `buckets` buckets.
fn sum_counts(parts: &[Vec<u32>], buckets: usize) -> Vec<usize> {
    let mut totals = vec![0usize; buckets];
    for part in parts {
        for (t, &c) in totals.iter_mut().zip(part) {
            *t += c as usize;
        }
    }
    totals
}

/// The fused pass over `chunks`: per chunk, the counts of `p`'s buckets and the values of the
/// marked buckets (input order).
fn count_keep_chunks<T: Element, F: Real>(
    chunks: &[&[T]],
    p: &Piecewise<F>,
    marked: &[bool],
    par: bool,
) -> (Vec<Vec<u32>>, Vec<Vec<T>>) {
    let one = |chunk: &&[T]| {
        let mut counts = vec![0u32; p.buckets()];
        let kept = count_keep(p, chunk, marked, &mut counts);
        (counts, kept)
    };
    if par {
        chunks.par_iter().map(one).unzip()
    } else {
        chunks.iter().map(one).unzip()
    }
}

/// The sample's length for `n` values.
fn sample_len(n: usize) -> usize {
    (n / SAMPLE_SHARE).clamp(1 << 12, SAMPLE).min(n)
}

/// The projection fitted to a sample of `data` with about `buckets` buckets.
pub(crate) fn fit<T: Element, F: Real>(data: &[T], buckets: usize, parallel: bool) -> Piecewise<F> {
    let run = (64 / std::mem::size_of::<T>()).max(1);
    let sample: Vec<T> = sample_runs::<T, T>(data, sample_len(data.len()), run, SEED, parallel);
    Piecewise::fit(&sample, buckets)
}

/// The keys of the sorted, unique `ranks` in the buckets of `to_copy`, one list per bucket,
/// from a pass over `chunks` (the data's chunks as the count pass had them, or the values each
/// kept: `parts` are the chunks' counts, and a chunk holds every value of each bucket to copy
/// that its part counts). Each chunk puts its keys in its own copy, grouped by bucket; each
/// bucket's pieces are then joined and selected in, bucket by bucket (in parallel over
/// buckets when `par`).
fn select_in_buckets<T: Element, W: Element, F: Real>(
    chunks: &[&[T]],
    p: &Piecewise<F>,
    parts: &[Vec<u32>],
    par: bool,
    to_copy: &[&Wanted],
    ranks: &[usize],
    parallel: bool,
) -> Vec<Vec<T::Key>> {
    let mut of_bucket = vec![Slots::NONE; p.buckets()];
    for (slot, w) in to_copy.iter().enumerate() {
        of_bucket[w.bucket] = slot as u32;
    }
    let bits = Bitmap::of(of_bucket.iter().map(|&s| s != Slots::NONE));
    // Per chunk and slot: where the slot's keys start in the chunk's copy (and the copy's
    // length last).
    let starts: Vec<Vec<usize>> = parts
        .iter()
        .map(|counts| {
            let mut start = Vec::with_capacity(to_copy.len() + 1);
            let mut total = 0;
            for w in to_copy {
                start.push(total);
                total += counts[w.bucket] as usize;
            }
            start.push(total);
            start
        })
        .collect();
    let copy_chunk = |(chunk, start): (&&[T], &Vec<usize>)| {
        let slots = Slots {
            of_bucket: &of_bucket,
            start: start[..to_copy.len()].to_vec(),
            total: start[to_copy.len()],
            bits: Some(&bits),
        };
        extract::<T, W, F>(p, chunk, slots)
    };
    let copies: Vec<Vec<W>> = if par {
        chunks
            .par_iter()
            .zip(starts.par_iter())
            .map(copy_chunk)
            .collect()
    } else {
        chunks.iter().zip(&starts).map(copy_chunk).collect()
    };
    let solve = |(slot, w): (usize, &&Wanted)| -> Vec<T::Key> {
        let pieces = copies
            .iter()
            .zip(&starts)
            .map(|(copy, start)| &copy[start[slot]..start[slot + 1]]);
        let local: Vec<usize> = ranks[w.first..w.end].iter().map(|&k| k - w.below).collect();
        select_in_pieces::<T, W>(pieces, w.size, &local, parallel)
    };
    if par {
        to_copy.par_iter().enumerate().map(solve).collect()
    } else {
        to_copy.iter().enumerate().map(solve).collect()
    }
}

/// The keys (of `T`) of the sorted, unique `ranks` among the keys of `pieces` (as `W`; `len`
/// in all), joined first.
fn select_in_pieces<'a, T: Element, W: Element>(
    pieces: impl Iterator<Item = &'a [W]>,
    len: usize,
    ranks: &[usize],
    parallel: bool,
) -> Vec<T::Key> {
    let as_key = |k: u64| T::Key::from_u64(k);
    if len < LONG_COPY {
        let mut keys: Vec<W::Key> = Vec::with_capacity(len);
        for piece in pieces {
            keys.extend(piece.iter().map(|w| w.to_key()));
        }
        multiselect_keys(&mut keys, ranks, false)
            .into_iter()
            .map(|k| as_key(k.to_u64()))
            .collect()
    } else {
        let mut copy: Vec<W> = Vec::with_capacity(len);
        for piece in pieces {
            copy.extend_from_slice(piece);
        }
        floyd_rivest::multiselect(&copy, ranks, parallel)
            .into_iter()
            .map(|w| as_key(w.to_key().to_u64()))
            .collect()
    }
}
