//! QuickSelect on CUDA (`kernels/quick_select.cu`), one selection per rank.
//!
//! A level over `m` candidates: `qs_pivot` (one block) sorts a sample of up to 1024 keys, one
//! from each of equal strides at a hashed offset, and takes its median as the pivot; `qs_pass`
//! counts the keys below, equal to and above it and bipartitions the others into a workspace
//! buffer in the same pass (those below grow from its front, those above from its back, places
//! reserved by one pair of atomics per block and trip); the host reads the three counts. A rank
//! among the pivot's copies ends at once; otherwise the side holding it is the next level, and
//! the rank is shifted past the smaller keys when it is the upper side. The two workspace
//! buffers alternate (ping-pong); the upper side starts where its block's 16-byte vector does,
//! and the pass skips the keys before it. At most [`FINISH`] candidates are selected by radix
//! select; so are the candidates after [`MAX_LEVELS`] levels or [`MAX_POOR_LEVELS`] levels
//! that kept more than 15/16 of them (adversarial inputs), so the result is always exact.
//!
//! Workspace: two buffers of `n` and of the first level's kept side (at most `n`, about
//! `n / 2`) elements, five words of state, and radix select's workspace for the last
//! candidates (copied to an aligned buffer first when they start inside a vector).

use cudarc::driver::{CudaSlice, CudaView};

use crate::device::cuda::kernels::quick_select::{qs_pass, qs_pivot, QuickState};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice, MemoryNeed};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};
use crate::select::radix;

/// Threads of the pass kernel.
const BLOCK: u32 = 256;
/// Threads of the one-block pivot kernel.
const PIVOT_THREADS: u32 = 512;
/// Candidate sets of at most this many are selected by radix select.
pub(crate) const FINISH: usize = 1 << 14;
/// Levels after which the candidates are selected by radix select.
const MAX_LEVELS: usize = 64;
/// Levels keeping more than 15/16 of their candidates after which radix select finishes.
const MAX_POOR_LEVELS: usize = 4;
/// Seed of the sample positions (each level adds its number).
const SEED: u64 = 0x0051_C4A5_E1EC_7000;

/// The most device memory [`multiselect`] takes on `dev` for `n` values of `T` (whatever the
/// number of ranks: they run one after another): the two candidate buffers, the state, and the
/// last candidates' aligned copy (at most `n`) with radix select's workspace over them.
pub(crate) fn workspace<T: Element>(dev: &CudaDevice, n: usize, ranks: usize) -> MemoryNeed {
    if n <= FINISH {
        return radix::cuda::workspace::<T>(dev, n, ranks);
    }
    MemoryNeed::of::<T>(n)
        .and(MemoryNeed::of::<T>(n))
        .and(MemoryNeed::of::<QuickState>(1))
        .and(MemoryNeed::of::<T>(n))
        .and(radix::cuda::workspace::<T>(dev, n, 1))
}

/// The elements of `ranks` (not empty, all `< buf.len()`) and the number of NaNs of the input.
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    let n = buf.len();
    if n <= FINISH {
        return radix::cuda::multiselect(buf, ranks);
    }
    let dev = buf.device();
    let mut quick = Quick::<T>::new(dev, n)?;
    let input = buf.as_slice().as_view();
    let mut values = Vec::with_capacity(ranks.len());
    for (i, &k) in ranks.iter().enumerate() {
        values.push(quick.select(&input, k, i == 0)?);
    }
    Ok((values, quick.nans))
}

/// Where a level's candidates are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The input.
    Input,
    /// The first workspace buffer (`n` elements).
    First,
    /// The second workspace buffer.
    Second,
}

/// A level's candidates: elements `start + skip .. end` of a buffer (`start` a whole number
/// of 16-byte vectors, so the pass may load from it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Candidates {
    /// The buffer.
    source: Source,
    /// The first element the pass reads.
    start: usize,
    /// Elements read but not candidates.
    skip: usize,
    /// One past the last candidate.
    end: usize,
}

impl Candidates {
    /// How many candidates.
    fn len(&self) -> usize {
        self.end - self.start - self.skip
    }
}

/// What a level's counts leave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The rank is the pivot's key.
    Pivot,
    /// The rank (given) is among the candidates of a side.
    Side(Candidates, usize),
}

/// The next step after a pass over `m` candidates that wrote into `out` (`cap` elements):
/// `lt`, `eq`, `gt` keys below, equal to and above the pivot, rank `k`, vectors of `vec`.
fn next_step(
    counts: [usize; 3],
    m: usize,
    k: usize,
    out: Source,
    cap: usize,
    vec: usize,
) -> Result<Step> {
    let [lt, eq, gt] = counts;
    if lt + eq + gt != m || eq == 0 || lt + gt > cap {
        return Err(Error::Cuda {
            context: "QuickSelect".to_string(),
            message: format!("inconsistent pass counts {lt} + {eq} + {gt} for {m} candidates"),
        });
    }
    Ok(if k < lt {
        Step::Side(
            Candidates {
                source: out,
                start: 0,
                skip: 0,
                end: lt,
            },
            k,
        )
    } else if k < lt + eq {
        Step::Pivot
    } else {
        let first = cap - gt;
        let start = first / vec * vec;
        Step::Side(
            Candidates {
                source: out,
                start,
                skip: first - start,
                end: cap,
            },
            k - lt - eq,
        )
    })
}

/// The kernels, the workspace and the NaN count of the selections over one input.
struct Quick<'a, T: Element> {
    /// The device.
    dev: &'a CudaDevice,
    /// The first workspace buffer (`n` elements).
    first: CudaSlice<T>,
    /// The second, allocated when a level first reads the first (as long as that level).
    second: Option<CudaSlice<T>>,
    /// The level's state.
    state: CudaSlice<QuickState>,
    /// The input's NaN count (once the first selection's first pass ran).
    nans: usize,
}

impl<'a, T: Element> Quick<'a, T> {
    /// Loads the kernels and allocates the first workspace buffer for `n` values.
    fn new(dev: &'a CudaDevice, n: usize) -> Result<Self> {
        Ok(Quick {
            dev,
            first: dev.alloc::<T>(n, "QuickSelect candidates")?,
            second: None,
            state: dev.alloc_zeros::<QuickState>(1, "QuickSelect state")?,
            nans: 0,
        })
    }

    /// The element of rank `k` of `input`; the first pass counts the NaNs when `count_nans`.
    fn select(&mut self, input: &CudaView<'_, T>, k: usize, count_nans: bool) -> Result<T> {
        let vec = 16 / std::mem::size_of::<T>();
        let mut cands = Candidates {
            source: Source::Input,
            start: 0,
            skip: 0,
            end: input.len(),
        };
        let mut k = k;
        let mut poor = 0;
        for level in 0..MAX_LEVELS {
            let m = cands.len();
            if m <= FINISH || poor >= MAX_POOR_LEVELS {
                break;
            }
            let out = match cands.source {
                Source::First => Source::Second,
                Source::Input | Source::Second => Source::First,
            };
            if out == Source::Second && self.second.as_ref().is_none_or(|s| s.len() < m) {
                self.second = None;
                self.second = Some(self.dev.alloc::<T>(m, "QuickSelect candidates")?);
            }
            let count = count_nans && level == 0;
            let (pivot, counts, cap) = self.level(input, cands, out, level, count)?;
            match next_step(counts, m, k, out, cap, vec)? {
                Step::Pivot => return Ok(T::from_key(T::Key::from_u64(pivot))),
                Step::Side(next, rank) => {
                    if next.len() * 16 > m * 15 {
                        poor += 1;
                    }
                    cands = next;
                    k = rank;
                }
            }
        }
        self.finish(input, cands, k)
    }

    /// One level: the pivot of `cands` and the pass into `out`; returns the pivot's key, the
    /// counts below, equal and above, and the capacity of `out`.
    fn level(
        &mut self,
        input: &CudaView<'_, T>,
        cands: Candidates,
        out: Source,
        level: usize,
        count_nans: bool,
    ) -> Result<(u64, [usize; 3], usize)> {
        let Quick {
            dev,
            first,
            second,
            state,
            nans,
        } = self;
        let second = second.as_mut();
        let (x, dst): (CudaView<'_, T>, &mut CudaSlice<T>) = match (cands.source, out, second) {
            (Source::Input, Source::First, _) => (input.slice(cands.start..cands.end), first),
            (Source::Second, Source::First, Some(s)) => (s.slice(cands.start..cands.end), first),
            (Source::First, Source::Second, Some(s)) => (first.slice(cands.start..cands.end), s),
            _ => {
                return Err(Error::Cuda {
                    context: "QuickSelect".to_string(),
                    message: "no workspace buffer for a level".to_string(),
                })
            }
        };
        let (len, skip) = (x.len() as u64, cands.skip as u64);
        let seed = SEED.wrapping_add(level as u64);
        qs_pivot(dev, config(1, PIVOT_THREADS), &x, len, skip, seed, state)?;
        let cap = dst.len();
        let vec = 16 / std::mem::size_of::<T>();
        let blocks = stride_blocks(x.len().div_ceil(vec), BLOCK, dev.multiprocessors(), 8);
        qs_pass(
            dev,
            config(blocks, BLOCK),
            &x,
            len,
            skip,
            dst,
            cap as u64,
            state,
            count_nans as u32,
        )?;
        let counts = dev.read(state, "the QuickSelect counts")?[0];
        if count_nans {
            *nans = counts.nans as usize;
        }
        Ok((
            counts.pivot,
            [
                counts.below as usize,
                counts.equal as usize,
                counts.above as usize,
            ],
            cap,
        ))
    }

    /// Radix select of rank `k` among the candidates (copied to an aligned buffer first when
    /// they do not start on a vector boundary).
    fn finish(&mut self, input: &CudaView<'_, T>, cands: Candidates, k: usize) -> Result<T> {
        let buffer = match cands.source {
            Source::Input => input.slice(..),
            Source::First => self.first.slice(..),
            Source::Second => match &self.second {
                Some(s) => s.slice(..),
                None => {
                    return Err(Error::Cuda {
                        context: "QuickSelect".to_string(),
                        message: "the candidates' buffer is missing".to_string(),
                    })
                }
            },
        };
        let view = buffer.slice(cands.start + cands.skip..cands.end);
        let values = if cands.skip == 0 {
            radix::cuda::multiselect_in(self.dev, &view, &[k])?.0
        } else {
            let mut copy = self
                .dev
                .alloc::<T>(view.len(), "QuickSelect last candidates")?;
            self.dev
                .stream()
                .memcpy_dtod(&view, &mut copy)
                .map_err(|e| driver_error("copying the last candidates", e))?;
            radix::cuda::multiselect_in(self.dev, &copy.as_view(), &[k])?.0
        };
        Ok(values[0])
    }
}

/// Unit tests of the host-side planning.
#[cfg(test)]
mod tests {
    use super::*;

    /// The lower side starts at 0; the upper side starts on a vector boundary, skipping the
    /// keys before it; a rank among the pivot's copies ends.
    #[test]
    fn next_step_picks_the_side_of_the_rank() {
        let lower = next_step([10, 3, 20], 33, 9, Source::First, 40, 4).unwrap();
        assert_eq!(
            lower,
            Step::Side(
                Candidates {
                    source: Source::First,
                    start: 0,
                    skip: 0,
                    end: 10
                },
                9
            )
        );
        assert_eq!(
            next_step([10, 3, 20], 33, 12, Source::First, 40, 4).unwrap(),
            Step::Pivot
        );
        let upper = next_step([10, 3, 21], 34, 13, Source::Second, 41, 4).unwrap();
        let Step::Side(c, k) = upper else {
            panic!("{upper:?}")
        };
        assert_eq!((c.start, c.skip, c.end, c.len(), k), (20, 0, 41, 21, 0));
        let Step::Side(c, _) = next_step([10, 3, 21], 34, 13, Source::Second, 42, 4).unwrap()
        else {
            panic!()
        };
        assert_eq!((c.start % 4, c.start + c.skip, c.len()), (0, 21, 21));
    }

    /// Counts that do not add up are an error, never a wrong side.
    #[test]
    fn inconsistent_counts_are_errors() {
        assert!(next_step([1, 1, 1], 4, 0, Source::First, 4, 4).is_err());
        assert!(next_step([2, 0, 2], 4, 0, Source::First, 4, 4).is_err());
    }
}
