//! Launchers of `kernels/bucket_multiselect.cu` (bucketMultiSelect and its iterative form) and
//! the records of a level's descriptor words: chunks, segments, intervals and sort jobs, each a
//! fixed run of `u64` words the kernels read by index.
//!
//! The element kernels are instantiated for every element type, and a level after the first
//! runs them over keys (the unsigned type of the key's width); their launchers take the element
//! type `E` and name the instance from it (`E::DTYPE`), with the keys they write of type `K`.

use std::mem::size_of;

use cudarc::driver::{CudaSlice, CudaView};

use super::{kernel_name, key_suffix, OrNull, BUCKET_MULTISELECT};
use crate::element::{Element, RadixKey};

/// Threads of the count and write kernels (`BMS_BLOCK`).
pub(crate) const BLOCK: u32 = 512;
/// Threads of the one-block choice (`BMS_CHOOSE`).
pub(crate) const CHOOSE_THREADS: u32 = 1024;
/// Threads of the small sorts (`BMS_SORT_THREADS`).
pub(crate) const SORT_THREADS: u32 = 1024;
/// The sample of the first level (`BMS_SAMPLE`), sorted by one block of as many threads.
pub(crate) const SAMPLE: usize = 1024;
/// The largest on-chip sort, its keys in dynamic shared memory (`BMS_SORT_BIG`).
pub(crate) const SORT_BIG: usize = 16384;
/// "No region": an active bucket whose elements are not written (`BMS_NONE`).
pub(crate) const NONE: u64 = u64::MAX;
/// Bins of the kernels' interval lookup table (`BMS_TABLE`).
pub(crate) const TABLE_BINS: u64 = 4096;
/// The most intervals of one segment (`BMS_MAX_IV`).
pub(crate) const MAX_INTERVALS: usize = 48;
/// Chunks of a total-counting thread (`BMS_TOTAL_GROUP`).
pub(crate) const TOTAL_GROUP: usize = 32;
/// Words of a chunk descriptor (`CH_WORDS`).
pub(crate) const CHUNK_WORDS: usize = 4;
/// Words of a segment descriptor (`SEG_WORDS`).
pub(crate) const SEGMENT_WORDS: usize = 8;
/// Words of an interval descriptor (`IV_WORDS`).
pub(crate) const INTERVAL_WORDS: usize = 4;
/// Words of a sort job.
pub(crate) const JOB_WORDS: usize = 4;

/// A chunk of a level: the elements block `b` of the count and write kernels reads (`CH_WORDS`
/// words).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// Its first element.
    pub begin: u64,
    /// One past its last element.
    pub end: u64,
    /// Its segment (for the extremes kernel: the pair of `mm` it combines into).
    pub segment: u64,
    /// Where its per-bucket counts start in the level's partial counts.
    pub counts: u64,
}

/// A segment of a level: elements with their own intervals and buckets (`SEG_WORDS` words).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Its first interval.
    pub first_interval: u64,
    /// Its number of intervals (at most [`MAX_INTERVALS`]).
    pub intervals: u64,
    /// Its first bucket among the level's.
    pub first_bucket: u64,
    /// Its number of buckets.
    pub buckets: u64,
    /// Its first chunk.
    pub first_chunk: u64,
    /// One past its last chunk.
    pub chunk_end: u64,
    /// The interval lookup table's base key (the second interval's lowest key).
    pub lookup_base: u64,
    /// The shift that maps keys above the base onto the table's [`TABLE_BINS`] bins.
    pub lookup_shift: u64,
}

/// The projection of one interval of a segment (`IV_WORDS` words).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IntervalWords {
    /// Its lowest key.
    pub lo: u64,
    /// The 32-bit multiplier of the projection.
    pub mult: u64,
    /// Its first bucket within the segment.
    pub first_bucket: u64,
    /// Its buckets, with the offsets' right shift at bit 32 and the identity flag at bit 40.
    pub shape: u64,
}

/// A segment sorted on chip by one block, and its wanted ranks (`JOB_WORDS` words).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Job {
    /// Its first element.
    pub start: u64,
    /// Its number of elements.
    pub len: u64,
    /// Its first rank in the ranks' and slots' arrays.
    pub ranks_begin: u64,
    /// One past its last rank there.
    pub ranks_end: u64,
}

const _: () = assert!(size_of::<Chunk>() == 8 * CHUNK_WORDS);
const _: () = assert!(size_of::<Segment>() == 8 * SEGMENT_WORDS);
const _: () = assert!(size_of::<IntervalWords>() == 8 * INTERVAL_WORDS);
const _: () = assert!(size_of::<Job>() == 8 * JOB_WORDS);

impl Chunk {
    /// Its words, in the kernels' order.
    pub(crate) fn words(&self) -> [u64; CHUNK_WORDS] {
        [self.begin, self.end, self.segment, self.counts]
    }
}

impl Segment {
    /// Its words, in the kernels' order.
    pub(crate) fn words(&self) -> [u64; SEGMENT_WORDS] {
        [
            self.first_interval,
            self.intervals,
            self.first_bucket,
            self.buckets,
            self.first_chunk,
            self.chunk_end,
            self.lookup_base,
            self.lookup_shift,
        ]
    }
}

impl IntervalWords {
    /// The words of an interval from `lo` with `buckets` buckets from `first_bucket` of its
    /// segment, the multiplier `mult`, offsets shifted right by `shift` (below 256) and the
    /// identity projection when `identity`.
    pub(crate) fn new(
        lo: u64,
        mult: u32,
        first_bucket: u64,
        buckets: u32,
        shift: u32,
        identity: bool,
    ) -> IntervalWords {
        IntervalWords {
            lo,
            mult: mult as u64,
            first_bucket,
            shape: buckets as u64 | (shift as u64) << 32 | (identity as u64) << 40,
        }
    }

    /// Its words, in the kernels' order.
    pub(crate) fn words(&self) -> [u64; INTERVAL_WORDS] {
        [self.lo, self.mult, self.first_bucket, self.shape]
    }
}

impl Job {
    /// Its words, in the kernels' order.
    pub(crate) fn words(&self) -> [u64; JOB_WORDS] {
        [self.start, self.len, self.ranks_begin, self.ranks_end]
    }
}

launchers! {
    /// A level's count pass, one block of [`BLOCK`] threads a chunk: each element of the
    /// chunk to its bucket within the chunk's segment (its interval by the lookup table, then
    /// that interval's projection), counted in dynamic shared memory (one `u32` a bucket of the
    /// segment) and written to `partial` from the chunk's counts offset; with oracles, each
    /// element's bucket is also stored there as a `u16`.
    fn bms_count[E: Element](x: dev &CudaView<'_, E>, chunks: dev &CudaView<'_, u64>,
                             segs: dev &CudaView<'_, u64>,
                             ivs: dev &CudaView<'_, u64>,
                             partial: dev &mut CudaSlice<u32>,
                             oracles: dev OrNull<&mut CudaSlice<u16>>)
        from BUCKET_MULTISELECT as kernel_name("bms_count", E::DTYPE);
        requires @shape: shape.block_dim == (BLOCK, 1, 1),
            shape.grid_dim.0 as usize * CHUNK_WORDS <= chunks.len(),
            chunks.len() % CHUNK_WORDS == 0,
            segs.len() % SEGMENT_WORDS == 0, ivs.len() % INTERVAL_WORDS == 0,
            oracles.given_len().is_none_or(|len| len >= x.len());

    /// `totals[j] +=` the counts of bucket `j` in one group of [`TOTAL_GROUP`] chunks of its
    /// segment (`blockIdx.y` the group), one thread a bucket of the `nb` of the level's `nsegs`
    /// segments; `totals` zero on entry.
    fn bms_totals(partial: dev &CudaSlice<u32>, chunks: dev &CudaView<'_, u64>,
                  segs: dev &CudaView<'_, u64>, nsegs: val u64, nb: val u64,
                  totals: dev &mut CudaSlice<u64>)
        from BUCKET_MULTISELECT as "bms_totals";
        requires chunks.len() % CHUNK_WORDS == 0,
            segs.len() as u64 >= SEGMENT_WORDS as u64 * nsegs,
            totals.len() as u64 >= nb;

    /// The choice of a level, one block of [`CHOOSE_THREADS`] threads: from the `nb` bucket
    /// totals and the `r` wanted ranks (ascending, distinct, below the totals' sum), the
    /// buckets' starts (`nb + 1`), each rank's bucket, the active buckets' mask and its words'
    /// prefix counts (`nb / 32 + 1` words each), and in `out` (`2 + 4 r` words) the active
    /// count, the last bucket's total, the active list (bucket, total) and each rank's place
    /// (active index, rank inside).
    fn bms_choose(totals: dev &CudaSlice<u64>, nb: val u64, ranks: dev &CudaView<'_, u64>,
                  r: val u64, starts: dev &mut CudaSlice<u64>,
                  rank_bucket: dev &mut CudaSlice<u64>, mask: dev &mut CudaSlice<u32>,
                  prefix: dev &mut CudaSlice<u32>, out: dev &mut CudaSlice<u64>)
        from BUCKET_MULTISELECT as "bms_choose";
        requires @shape: shape.block_dim == (CHOOSE_THREADS, 1, 1),
            nb >= 1, totals.len() as u64 >= nb, starts.len() as u64 > nb,
            ranks.len() as u64 >= r, rank_bucket.len() as u64 >= r, mask.len() as u64 > nb / 32,
            prefix.len() as u64 > nb / 32, out.len() as u64 >= 2 + 4 * r;

    /// The per-block segmented write, one block of [`BLOCK`] threads a chunk of the level
    /// counted before: the keys of the chunk's elements whose bucket is active with an active
    /// index in `a_lo..a_hi` go to `out[dest[a] + place]`, each block reserving its places in a
    /// bucket's region with one atomic on `cursor[a]` (`dest[a] == NONE` skips bucket `a`).
    /// `act` is the ascending active list (bucket, total) of `act_count` buckets. Dynamic
    /// shared memory: the window's bases and counters, and a `u16` slot a bucket of the
    /// segment.
    fn bms_write[E: Element, K: RadixKey](x: dev &CudaView<'_, E>,
                                          chunks: dev &CudaView<'_, u64>,
                                          segs: dev &CudaView<'_, u64>,
                                          ivs: dev &CudaView<'_, u64>,
                                          partial: dev &CudaSlice<u32>,
                                          oracles: dev OrNull<&CudaSlice<u16>>,
                                          act: dev &CudaView<'_, u64>,
                                          act_count: val u64,
                                          dest: dev &CudaSlice<u64>,
                                          cursor: dev &mut CudaSlice<u64>,
                                          out: dev &mut CudaSlice<K>, a_lo: val u64,
                                          a_hi: val u64)
        from BUCKET_MULTISELECT as kernel_name("bms_write", E::DTYPE);
        requires @shape: shape.block_dim == (BLOCK, 1, 1),
            shape.grid_dim.0 as usize * CHUNK_WORDS <= chunks.len(),
            size_of::<K>() == size_of::<E>(),
            chunks.len() % CHUNK_WORDS == 0,
            segs.len() % SEGMENT_WORDS == 0, ivs.len() % INTERVAL_WORDS == 0,
            oracles.given_len().is_none_or(|len| len >= x.len()),
            act.len() as u64 >= 2 * act_count,
            dest.len() as u64 >= act_count, cursor.len() as u64 >= act_count, a_lo < a_hi,
            a_hi <= act_count;

    /// The flag-based write, one block of [`BLOCK`] threads a chunk of the level counted
    /// before: the keys of the chunk's elements whose bucket's bit is set in `keep` are
    /// appended to `out` in no particular order (writes at or past `cap` skipped), counted in
    /// `out_count`.
    fn bms_write_flags[E: Element, K: RadixKey](x: dev &CudaView<'_, E>,
                                                chunks: dev &CudaView<'_, u64>,
                                                segs: dev &CudaView<'_, u64>,
                                                ivs: dev &CudaView<'_, u64>,
                                                oracles: dev OrNull<&CudaSlice<u16>>,
                                                keep: dev &CudaSlice<u32>,
                                                out: dev &mut CudaSlice<K>,
                                                cap: val u64,
                                                out_count: dev &mut CudaSlice<u64>)
        from BUCKET_MULTISELECT as kernel_name("bms_write_flags", E::DTYPE);
        requires @shape: shape.block_dim == (BLOCK, 1, 1),
            shape.grid_dim.0 as usize * CHUNK_WORDS <= chunks.len(),
            size_of::<K>() == size_of::<E>(),
            chunks.len() % CHUNK_WORDS == 0,
            segs.len() % SEGMENT_WORDS == 0, ivs.len() % INTERVAL_WORDS == 0,
            oracles.given_len().is_none_or(|len| len >= x.len()), out.len() as u64 >= cap,
            !out_count.is_empty();

    /// Sorts segments of at most `CAP` (512, 4096 or [`SORT_BIG`]) elements on chip, one block
    /// of [`SORT_THREADS`] threads a job, and writes `results[slots[q]]` = the key of rank
    /// `inner[q]` of the job's segment for the job's ranks `q`; the largest size keeps its
    /// keys in dynamic shared memory.
    fn bms_sort[E: Element, K: RadixKey, const CAP: usize](x: dev &CudaView<'_, E>,
                                                           jobs: dev &CudaView<'_, u64>,
                                                           inner: dev &CudaView<'_, u64>,
                                                           slots: dev &CudaView<'_, u64>,
                                                           results: dev &mut CudaSlice<K>)
        from BUCKET_MULTISELECT as kernel_name(&format!("bms_sort{CAP}"), E::DTYPE);
        requires @shape: shape.block_dim == (SORT_THREADS, 1, 1),
            shape.grid_dim.0 as usize * JOB_WORDS <= jobs.len(),
            size_of::<K>() == size_of::<E>(), matches!(CAP, 512 | 4096 | SORT_BIG),
            jobs.len() % JOB_WORDS == 0,
            inner.len() == slots.len();

    /// `stats[0]` = the smallest key of `x[0..n)` (atomic minimum; `u64::MAX` on entry),
    /// `stats[1]` = the largest (atomic maximum; 0 on entry), `stats[2] +=` its NaNs.
    fn bms_minmax[E: Element](x: dev &CudaView<'_, E>, n: val u64,
                              stats: dev &mut CudaSlice<u64>)
        from BUCKET_MULTISELECT as kernel_name("bms_minmax", E::DTYPE);
        requires x.len() as u64 >= n, stats.len() >= 3;

    /// `out` = the sorted keys of a [`SAMPLE`]-element sample of `x[0..n)` (`n >= SAMPLE`), one
    /// element from each of equal strides at an offset hashed from `seed`. One block of
    /// [`SAMPLE`] threads.
    fn bms_sample[E: Element, K: RadixKey](x: dev &CudaView<'_, E>, n: val u64,
                                           seed: val u64, out: dev &mut CudaSlice<K>)
        from BUCKET_MULTISELECT as kernel_name("bms_sample", E::DTYPE);
        requires @shape: shape.block_dim == (SAMPLE as u32, 1, 1),
            size_of::<K>() == size_of::<E>(), x.len() as u64 >= n, n >= SAMPLE as u64,
            out.len() >= SAMPLE;

    /// The smallest and largest keys of segments: block `b` reduces chunk `b` of `keys` and
    /// combines into `mm[2 s]` (atomic minimum) and `mm[2 s + 1]` (atomic maximum) for the
    /// chunk's segment `s` (`u64::MAX` and 0 on entry).
    fn bms_minmax_keys[K: RadixKey](keys: dev &CudaView<'_, K>, chunks: dev &CudaSlice<u64>,
                                    mm: dev &mut CudaSlice<u64>)
        from BUCKET_MULTISELECT as format!("bms_minmax_keys_{}", key_suffix::<K>());
        requires chunks.len().is_multiple_of(CHUNK_WORDS),
            mm.len().is_multiple_of(2);
}
