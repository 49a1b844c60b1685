//! What both bucket multiselections share: the wanted ranks and their results, the first level
//! over the input, the reading of a level's active buckets as candidate segments, and the end
//! of a run (the results read back, the ranks left to radix select on the input).

use cudarc::driver::CudaSlice;

use super::engine::{inconsistent, Engine, Level, SortJob, SORT_CAP};
use super::plan::{self, Bounds, Origin, SegmentPlan};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::select::radix;

/// The first level's chunks are at least this many elements and twice the level's buckets, so
/// that counting pays for writing the counts.
const MIN_FIRST_CHUNK: usize = 1 << 12;
const _: () = assert!(MIN_FIRST_CHUNK >= super::engine::SHORTEST_CHUNK);

/// The active bucket of a level read as a candidate segment for the next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// Its index among the level's active buckets.
    pub active: usize,
    /// Its elements.
    pub count: u64,
    /// Its smallest possible key.
    pub lo: u64,
    /// Its largest possible key.
    pub hi: u64,
    /// Whether `lo..=hi` is known to fit its elements closely (else their extremes are worth
    /// a pass before the bucket is split again).
    pub tight: bool,
    /// The wanted ranks inside it and their slots.
    pub ranks: Vec<(u64, usize)>,
}

/// One multiselection on a device buffer.
pub(crate) struct Run<'a, T: Element> {
    /// The kernels.
    pub eng: Engine<'a>,
    /// The input.
    pub buf: &'a DeviceBuffer<T>,
    /// The distinct wanted ranks, ascending; a rank's index here is its slot.
    pub ranks: Vec<usize>,
    /// Results known on the host, by slot.
    pub found: Vec<Option<T::Key>>,
    /// Slots whose result a sort kernel writes to `results`.
    pub on_device: Vec<bool>,
    /// Results written on the device, by slot.
    pub results: CudaSlice<T::Key>,
    /// Slots left to radix select on the input.
    pub on_input: Vec<usize>,
}

impl<'a, T: Element> Run<'a, T> {
    /// A run for the wanted `ranks` (any order, repeats allowed, all below `buf.len()`).
    pub(crate) fn new(buf: &'a DeviceBuffer<T>, ranks: &[usize]) -> Result<Self> {
        let dev = buf.device();
        let eng = Engine::new(dev, T::DTYPE.name())?;
        let mut distinct = ranks.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let d = distinct.len();
        Ok(Run {
            eng,
            buf,
            results: dev.alloc_zeros::<T::Key>(d, "the multiselection results")?,
            ranks: distinct,
            found: vec![None; d],
            on_device: vec![false; d],
            on_input: Vec::new(),
        })
    }

    /// Sorts the whole input on chip (it holds at most [`SORT_CAP`] elements).
    pub(crate) fn sort_input(&mut self) -> Result<()> {
        let x = self.buf.as_slice().as_view();
        let job = SortJob {
            start: 0,
            len: x.len() as u64,
            ranks: self
                .ranks
                .iter()
                .enumerate()
                .map(|(slot, &k)| (k as u64, slot))
                .collect(),
        };
        for slot in 0..self.ranks.len() {
            self.on_device[slot] = true;
        }
        self.eng.sort_select(&x, &[job], &mut self.results)
    }

    /// The first level over the input: its intervals from `sample` within `bounds`, one
    /// segment, the count and the choice for every wanted rank. Returns the level and its
    /// candidates.
    pub(crate) fn first_level(
        &mut self,
        sample: &[u64],
        bounds: Bounds,
    ) -> Result<(Level, Vec<Candidate>)> {
        let x = self.buf.as_slice().as_view();
        let n = x.len() as u64;
        let planned = plan::first_level(sample, bounds, self.eng.buckets, T::Key::BITS);
        let origins: Vec<Origin> = planned.iter().map(|&(_, o)| o).collect();
        let intervals = planned.into_iter().map(|(iv, _)| iv).collect();
        let layout = plan::layout(
            vec![SegmentPlan {
                start: 0,
                len: n,
                intervals,
            }],
            self.eng.count_blocks,
            MIN_FIRST_CHUNK.max(2 * self.eng.buckets as usize),
        );
        let ranks: Vec<u64> = self.ranks.iter().map(|&k| k as u64).collect();
        let slots: Vec<usize> = (0..self.ranks.len()).collect();
        let level = self.eng.level(&x, layout, &ranks)?;
        let candidates = candidates(&level, &slots, |_, interval, _| {
            origins[interval] == Origin::Sample
        })?;
        Ok((level, candidates))
    }

    /// Records the result `key` for every rank of a candidate.
    pub(crate) fn resolve(&mut self, candidate: &Candidate, key: u64) {
        for &(_, slot) in &candidate.ranks {
            self.found[slot] = Some(T::Key::from_u64(key));
        }
    }

    /// Sends the ranks of a candidate to radix select on the input.
    pub(crate) fn send_to_input(&mut self, ranks: &[(u64, usize)]) {
        self.on_input.extend(ranks.iter().map(|&(_, slot)| slot));
    }

    /// Marks the slots of sort jobs as answered on the device.
    pub(crate) fn mark_sorted(&mut self, jobs: &[SortJob]) {
        for job in jobs {
            for &(_, slot) in &job.ranks {
                self.on_device[slot] = true;
            }
        }
    }

    /// The results in the order of `given` (the ranks as asked): reads the device's results,
    /// runs radix select on the input for the ranks sent there.
    pub(crate) fn finish(mut self, given: &[usize]) -> Result<Vec<T>> {
        if self.on_device.iter().any(|&d| d) {
            let keys = self
                .eng
                .dev
                .read(&self.results, "the multiselection results")?;
            for (slot, key) in keys.into_iter().enumerate() {
                if self.on_device[slot] && self.found[slot].is_none() {
                    self.found[slot] = Some(key);
                }
            }
        }
        if !self.on_input.is_empty() {
            self.on_input.sort_unstable();
            self.on_input.dedup();
            let wanted: Vec<usize> = self.on_input.iter().map(|&s| self.ranks[s]).collect();
            let (values, _) = radix::cuda::multiselect(self.buf, &wanted)?;
            for (&slot, v) in self.on_input.iter().zip(values) {
                self.found[slot] = Some(v.to_key());
            }
        }
        given
            .iter()
            .map(|k| {
                let slot = self
                    .ranks
                    .binary_search(k)
                    .map_err(|_| inconsistent("a rank"))?;
                self.found[slot]
                    .map(T::from_key)
                    .ok_or_else(|| inconsistent("a rank was left without a result"))
            })
            .collect()
    }
}

/// The candidates of a level: one per active bucket, with its key range (from the projection's
/// inverse), whether that range is tight (`tight(segment, interval, count)`), and the ranks in
/// it (`slots[i]` is the slot of the level's rank `i`).
pub(crate) fn candidates(
    level: &Level,
    slots: &[usize],
    tight: impl Fn(usize, usize, u64) -> bool,
) -> Result<Vec<Candidate>> {
    let mut out: Vec<Candidate> = level
        .actives
        .iter()
        .enumerate()
        .map(|(a, &(bucket, count))| {
            let (s, i, _) = level.layout.locate(bucket);
            let (lo, hi) = level
                .layout
                .keys_of(bucket)
                .ok_or_else(|| inconsistent("an active bucket holds no key"))?;
            Ok(Candidate {
                active: a,
                count,
                lo,
                hi,
                tight: tight(s, i, count),
                ranks: Vec::new(),
            })
        })
        .collect::<Result<_>>()?;
    for (&(a, inner), &slot) in level.info.iter().zip(slots) {
        out[a].ranks.push((inner, slot));
    }
    Ok(out)
}

/// Sort jobs for the candidates at `starts` of a buffer (those with a region).
pub(crate) fn sort_jobs(candidates: &[Candidate], starts: &[u64]) -> Vec<SortJob> {
    candidates
        .iter()
        .zip(starts)
        .filter(|(c, _)| c.count as usize <= SORT_CAP && !c.ranks.is_empty())
        .map(|(c, &start)| SortJob {
            start,
            len: c.count,
            ranks: c.ranks.clone(),
        })
        .collect()
}
