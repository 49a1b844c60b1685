//! The CUDA backend: NaN scans and dispatch to the algorithms' CUDA parts.

use crate::device::cuda::driver_error;
use crate::device::cuda::kernels::reduce::{count_nan, NanCount};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::nan::NanScan;
use crate::select::{bucket_multi, Algorithm};

/// From this size on, `Auto` runs randomizedSelect for one rank on CUDA; below it, radix select.
/// Measured on an H200 (`BENCHMARKS.md`): randomizedSelect's fixed cost (the sample, its
/// splitters and three waits for counts) makes it slower than radix select up to 2^24 values
/// and faster from 2^26 on, on every distribution.
const AUTO_RANDOMIZED_FROM: usize = 1 << 25;

/// Up to this many distinct ranks, `Auto` runs the one-rank algorithm once per rank (one or
/// two passes over the input each); more go to a multiselection.
const AUTO_ONE_RANK_UP_TO: usize = 2;

/// Inputs up to this many values are sorted on chip by one block of the bucket
/// multiselections, faster than any sort&choose; many ranks go there.
const AUTO_SORT_ON_CHIP_UP_TO: usize = 16384;
/// Fused bucket multiselection from this many values (measured on an H200: at 2^22 it ties
/// the iterative form, from 2^24 it is 1.1 to 1.9 times faster on continuous data).
const AUTO_FUSED_FROM: usize = 1 << 23;

/// Equal parts of the rank range that [`RankSpread::clusters`] counts.
const SPREAD_PARTS: usize = 4096;

/// How many ranks a selection wants and how they spread over `0..n`: what `Auto` decides by
/// besides `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RankSpread {
    /// Distinct ranks.
    pub distinct: usize,
    /// How many of [`SPREAD_PARTS`] equal parts of `0..n` hold a rank (the buckets a
    /// multiselection's first level must keep grow with this, not with the ranks).
    pub clusters: usize,
}

impl RankSpread {
    /// The spread of `ranks` (any order, repeats allowed) over `0..n`.
    pub(crate) fn of(n: usize, ranks: &[usize]) -> RankSpread {
        let mut sorted = ranks.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let part = |k: usize| (k as u128 * SPREAD_PARTS as u128 / n.max(1) as u128) as usize;
        let mut parts: Vec<usize> = sorted.iter().map(|&k| part(k)).collect();
        parts.dedup();
        RankSpread {
            distinct: sorted.len(),
            clusters: parts.len(),
        }
    }

    /// `count` distinct ranks spread evenly.
    pub(crate) fn even(count: usize) -> RankSpread {
        RankSpread {
            distinct: count,
            clusters: count.min(SPREAD_PARTS),
        }
    }
}

/// What `Algorithm::Auto` runs on CUDA for `n` values and ranks spread as `spread`.
///
/// - At most [`AUTO_ONE_RANK_UP_TO`] distinct ranks: the one-rank algorithm per rank,
///   randomizedSelect from [`AUTO_RANDOMIZED_FROM`] values, radix select below.
/// - Ranks so dense that sorting is as cheap (at least `n / 16` of them, spread rather than
///   clustered: in at least half as many parts of the rank range as they could fill) in more
///   than [`AUTO_SORT_ON_CHIP_UP_TO`] values: sort&choose.
/// - Up to 2048 distinct ranks from [`AUTO_FUSED_FROM`] values: fused bucket multiselection (up
///   to 256, one pass over the input after a subset count; where that prediction cannot pay, an
///   exact count and a scatter of the ranks' buckets; it runs the iterative form itself where
///   both fail).
/// - Otherwise iterative bucket multiselection: two passes over the input whatever the number
///   of ranks, then work on the buckets that hold them (their number grows with the ranks'
///   spread, not their count).
///
/// The many-rank thresholds are set from the methods' pass counts; `benches/gpu_select.rs`
/// (`--percentiles`, `--clustered`) measures them.
pub(crate) fn auto_algorithm(n: usize, spread: RankSpread) -> Algorithm {
    if spread.distinct <= AUTO_ONE_RANK_UP_TO {
        if n >= AUTO_RANDOMIZED_FROM {
            Algorithm::Randomized
        } else {
            Algorithm::Radix
        }
    } else if n > AUTO_SORT_ON_CHIP_UP_TO
        && spread.distinct >= n / 16
        && spread.clusters >= spread.distinct.min(SPREAD_PARTS) / 2
    {
        Algorithm::SortChoose
    } else if n >= AUTO_FUSED_FROM && spread.distinct <= bucket_multi::fused::MAX_EXACT_RANKS {
        Algorithm::FusedMultiselect
    } else {
        Algorithm::IterativeBucketMultiselect
    }
}

/// Counts the NaNs of a float buffer on the device.
pub(crate) fn nan_scan<T: Element>(buf: &DeviceBuffer<T>) -> Result<NanScan> {
    let n = buf.len();
    if !T::DTYPE.is_float() || n == 0 {
        return Ok(NanScan::NONE);
    }
    let dev = buf.device();
    let mut out = dev
        .stream()
        .clone_htod(&[NanCount::default()])
        .map_err(|e| driver_error("initialising the NaN count", e))?;
    let shape = config(stride_blocks(n, 256, dev.multiprocessors(), 8), 256);
    count_nan(dev, shape, buf.as_slice(), n as u64, &mut out)?;
    let found = dev.read(&out, "the NaN count")?[0];
    Ok(NanScan {
        count: found.count as usize,
        first_index: if found.count == 0 {
            usize::MAX
        } else {
            found.first as usize
        },
    })
}

/// Unit tests of `Auto`'s choice.
#[cfg(test)]
mod tests {
    use super::*;

    /// Spread counts the parts of the rank range that hold ranks, repeats and order aside.
    #[test]
    fn spread_counts_distinct_ranks_and_parts() {
        let n = 1 << 20;
        let percentiles: Vec<usize> = (0..=100).map(|p| p * (n - 1) / 100).collect();
        assert_eq!(
            RankSpread::of(n, &percentiles),
            RankSpread {
                distinct: 101,
                clusters: 101
            }
        );
        let clustered: Vec<usize> = (0..1000).map(|i| n / 2 + i % 100).collect();
        assert_eq!(
            RankSpread::of(n, &clustered),
            RankSpread {
                distinct: 100,
                clusters: 1
            }
        );
        assert_eq!(RankSpread::of(5, &[4, 0, 4]).distinct, 2);
    }

    /// One or two ranks keep the one-rank algorithms; up to 2048 on large inputs go to the fused
    /// bucket multiselection, more to the iterative one, or to sort&choose when they cover the
    /// input densely.
    #[test]
    fn auto_follows_ranks_and_spread() {
        let one = RankSpread::even(1);
        assert_eq!(auto_algorithm(1 << 28, one), Algorithm::Randomized);
        assert_eq!(auto_algorithm(1 << 20, one), Algorithm::Radix);
        let many = RankSpread::even(101);
        assert_eq!(auto_algorithm(1 << 28, many), Algorithm::FusedMultiselect);
        assert_eq!(
            auto_algorithm(1 << 22, many),
            Algorithm::IterativeBucketMultiselect
        );
        assert_eq!(
            auto_algorithm(1 << 28, RankSpread::even(1001)),
            Algorithm::FusedMultiselect
        );
        assert_eq!(
            auto_algorithm(1 << 28, RankSpread::even(4095)),
            Algorithm::IterativeBucketMultiselect
        );
        assert_eq!(
            auto_algorithm(1000, many),
            Algorithm::IterativeBucketMultiselect,
            "sorted on chip"
        );
        assert_eq!(
            auto_algorithm(100_000, RankSpread::even(16_000)),
            Algorithm::SortChoose
        );
        let dense_cluster = RankSpread {
            distinct: 1 << 16,
            clusters: 3,
        };
        assert_eq!(
            auto_algorithm(1 << 20, dense_cluster),
            Algorithm::IterativeBucketMultiselect
        );
        let dense = RankSpread::of(1 << 20, &(0..1 << 20).step_by(8).collect::<Vec<_>>());
        assert_eq!(auto_algorithm(1 << 20, dense), Algorithm::SortChoose);
    }
}
