//! Histograms of the data, normalized to compare with an estimated PDF and CDF.

use rayon::prelude::*;

use crate::density::{DensityError, DensityEstimate};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::NanPolicy;

use super::scale::{pow2, Scale};

/// The most bins a histogram may have.
///
/// ```
/// use kselect::{plot::{Histogram, MAX_BINS}, NanPolicy};
/// assert!(Histogram::new(&[1.0], 0.0, 2.0, MAX_BINS + 1, NanPolicy::Error).is_err());
/// ```
pub const MAX_BINS: usize = 100_000;

/// Counts of values in equal bins over `[lo, hi]` (the last bin includes `hi`), and of the
/// values below and above, so that it normalizes by all the values.
///
/// ```
/// use kselect::plot::Histogram;
/// use kselect::NanPolicy;
///
/// let h = Histogram::new(&[0.5, 1.5, 1.7, 9.0, -3.0], 0.0, 2.0, 2, NanPolicy::Error)?;
/// assert_eq!(h.counts(), &[1, 2]);
/// assert_eq!((h.below(), h.above(), h.total()), (1, 1, 5));
/// assert_eq!(h.densities(), vec![0.2, 0.4]);   // count / (total · bin width)
/// assert_eq!(h.cumulative(), vec![0.4, 0.8]);  // fraction <= each bin's right edge
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    lo: f64,
    hi: f64,
    counts: Vec<u64>,
    below: u64,
    above: u64,
    total: u64,
}

impl Histogram {
    /// The histogram of `data` over `[lo, hi]` with `bins` equal bins.
    ///
    /// NaN follows `nan_policy`: `Error` refuses it (`Error::NanInInput`), `Omit` leaves it out
    /// of everything, `Last` counts it in the total (above every bin), as
    /// [`DensityEstimate::ks_distance`] does. Errors (`Error::Density`) unless
    /// `lo < hi` are finite and `1 <= bins <=` [`MAX_BINS`]; `Error::EmptyInput` when no value
    /// is left. Any finite range will do, even one wider than `f64::MAX` or with bins narrower
    /// than the spacing of subnormal numbers: values are counted without overflow.
    ///
    /// ```
    /// use kselect::{plot::Histogram, NanPolicy};
    /// let h = Histogram::new(&[1u32, 2, 2, 3], 0.5, 3.5, 3, NanPolicy::Error).unwrap();
    /// assert_eq!(h.counts(), &[1, 2, 1]);
    /// assert!(Histogram::new(&[1.0], 1.0, 1.0, 3, NanPolicy::Error).is_err());
    /// let wide = Histogram::new(&[-1.7e308, 0.0, 1.7e308], -1.7e308, 1.7e308, 2, NanPolicy::Error).unwrap();
    /// assert_eq!(wide.counts(), &[1, 2]);
    /// ```
    pub fn new<T: Element>(
        data: &[T],
        lo: f64,
        hi: f64,
        bins: usize,
        nan_policy: NanPolicy,
    ) -> Result<Self> {
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(DensityError::HistogramRange { lo, hi }.into());
        }
        if !(1..=MAX_BINS).contains(&bins) {
            return Err(DensityError::BinCount {
                bins,
                max: MAX_BINS,
            }
            .into());
        }
        let binning = Binning::new(lo, hi, bins);
        let tally = data
            .par_chunks(1 << 16)
            .map(|chunk| {
                let mut t = Tally::new(bins);
                for (i, x) in chunk.iter().enumerate() {
                    if x.is_nan() {
                        t.nans += 1;
                        t.first_nan.get_or_insert(i);
                        continue;
                    }
                    let x = x.to_f64();
                    if x < lo {
                        t.below += 1;
                    } else if x > hi {
                        t.above += 1;
                    } else {
                        t.counts[binning.bin(x)] += 1;
                    }
                }
                t
            })
            .collect::<Vec<Tally>>();
        let mut all = Tally::new(bins);
        for (chunk, t) in tally.into_iter().enumerate() {
            if all.first_nan.is_none() {
                all.first_nan = t.first_nan.map(|i| chunk * (1 << 16) + i);
            }
            all.nans += t.nans;
            all.below += t.below;
            all.above += t.above;
            for (a, c) in all.counts.iter_mut().zip(&t.counts) {
                *a += c;
            }
        }
        if let (NanPolicy::Error, Some(first_index)) = (nan_policy, all.first_nan) {
            return Err(Error::NanInInput {
                count: all.nans as usize,
                first_index,
            });
        }
        let numbers = data.len() as u64 - all.nans;
        if numbers == 0 {
            return Err(Error::EmptyInput);
        }
        let total = match nan_policy {
            NanPolicy::Last => data.len() as u64,
            _ => numbers,
        };
        Ok(Histogram {
            lo,
            hi,
            counts: all.counts,
            below: all.below,
            above: all.above,
            total,
        })
    }

    /// The histogram of `data` over the estimate's support, `bins` bins (the range is widened
    /// when the support is a single value). When every number in `data` is an integer, the
    /// bins are aligned to the integers instead — each bin holds the same number of integers,
    /// edges halfway between — with at most `bins` bins, fewer when there are fewer integers.
    ///
    /// ```
    /// use kselect::{density::DensityEstimate, plot::Histogram, NanPolicy};
    /// let data = [0, 1, 1, 2, 5, 9];
    /// let est = DensityEstimate::new(&[0.0, 1.0], &[0.0, 9.0]).unwrap();
    /// let h = Histogram::over_support(&data, &est, 5, NanPolicy::Error).unwrap();
    /// assert_eq!(h.range(), (-0.5, 9.5));           // 2 integers a bin
    /// assert_eq!(h.counts(), &[3, 1, 1, 0, 1]);
    /// ```
    pub fn over_support<T: Element>(
        data: &[T],
        estimate: &DensityEstimate,
        bins: usize,
        nan_policy: NanPolicy,
    ) -> Result<Self> {
        let (lo, hi) = estimate.support();
        let integers = data.par_iter().all(|x| {
            let v = x.to_f64();
            x.is_nan() || (v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0)
        });
        if integers && bins >= 1 {
            let span = hi - lo + 1.0; // the number of integers in [lo, hi]
            let width = (span / bins as f64).ceil().max(1.0);
            let count = ((span / width).ceil() as usize).max(1);
            let start = lo - 0.5;
            return Histogram::new(data, start, start + width * count as f64, count, nan_policy);
        }
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            let pad = (lo.abs() * 0.05).max(0.5);
            ((lo - pad).max(f64::MIN), (hi + pad).min(f64::MAX))
        };
        Histogram::new(data, lo, hi, bins, nan_policy)
    }

    /// The range `(lo, hi)`.
    ///
    /// ```
    /// let h = kselect::plot::Histogram::new(&[1.0], 0.0, 2.0, 4, kselect::NanPolicy::Error).unwrap();
    /// assert_eq!(h.range(), (0.0, 2.0));
    /// ```
    pub fn range(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// The number of bins.
    ///
    /// ```
    /// let h = kselect::plot::Histogram::new(&[1.0], 0.0, 2.0, 4, kselect::NanPolicy::Error).unwrap();
    /// assert_eq!(h.bins(), 4);
    /// ```
    pub fn bins(&self) -> usize {
        self.counts.len()
    }

    /// The width of a bin, without overflow where it is a finite number (infinite when it
    /// exceeds `f64::MAX`, zero when below the smallest subnormal).
    ///
    /// ```
    /// use kselect::{plot::Histogram, NanPolicy};
    /// let h = Histogram::new(&[1.0], 0.0, 2.0, 4, NanPolicy::Error).unwrap();
    /// assert_eq!(h.bin_width(), 0.5);
    /// let wide = Histogram::new(&[1.0], -1.5e308, 1.5e308, 4, NanPolicy::Error).unwrap();
    /// assert_eq!(wide.bin_width(), 7.5e307);
    /// ```
    pub fn bin_width(&self) -> f64 {
        let bins = self.bins() as f64;
        let width = (self.hi - self.lo) / bins;
        if width.is_finite() {
            width
        } else {
            self.hi / bins - self.lo / bins
        }
    }

    /// The same counts over the range multiplied by `scale` (chosen for this range, so that
    /// the result is finite).
    pub(super) fn scaled(&self, scale: Scale) -> Histogram {
        Histogram {
            lo: scale.apply(self.lo),
            hi: scale.apply(self.hi),
            ..self.clone()
        }
    }

    /// The edges `(left, right)` of bin `i` (`i < bins`).
    ///
    /// ```
    /// let h = kselect::plot::Histogram::new(&[1.0], 0.0, 2.0, 4, kselect::NanPolicy::Error).unwrap();
    /// assert_eq!(h.edges(1), (0.5, 1.0));
    /// assert_eq!(h.edges(3), (1.5, 2.0));
    /// ```
    pub fn edges(&self, i: usize) -> (f64, f64) {
        let right = if i + 1 >= self.bins() {
            self.hi
        } else {
            self.edge(i + 1)
        };
        (self.edge(i), right)
    }

    /// The left edge of bin `j`, `lo + j · width`, without overflow.
    fn edge(&self, j: usize) -> f64 {
        let offset = self.bin_width() * j as f64;
        if offset.is_finite() {
            self.lo + offset
        } else {
            let t = j as f64 / self.bins() as f64;
            self.lo * (1.0 - t) + self.hi * t
        }
    }

    /// The number of values in each bin.
    ///
    /// ```
    /// let h = kselect::plot::Histogram::new(&[1.0, 2.0], 0.0, 2.0, 2, kselect::NanPolicy::Error).unwrap();
    /// assert_eq!(h.counts(), &[0, 2]);
    /// ```
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The number of values below the range.
    ///
    /// ```
    /// let h = kselect::plot::Histogram::new(&[-1.0, 2.0], 0.0, 2.0, 2, kselect::NanPolicy::Error).unwrap();
    /// assert_eq!(h.below(), 1);
    /// ```
    pub fn below(&self) -> u64 {
        self.below
    }

    /// The number of values above the range (NaN counted under `NanPolicy::Last` is not).
    ///
    /// ```
    /// let h = kselect::plot::Histogram::new(&[3.0, 2.0], 0.0, 2.0, 2, kselect::NanPolicy::Error).unwrap();
    /// assert_eq!(h.above(), 1);
    /// ```
    pub fn above(&self) -> u64 {
        self.above
    }

    /// The number of values the histogram is normalized by: all numbers, and the NaNs under
    /// `NanPolicy::Last`.
    ///
    /// ```
    /// let h = kselect::plot::Histogram::new(&[1.0, f64::NAN], 0.0, 2.0, 2, kselect::NanPolicy::Last).unwrap();
    /// assert_eq!(h.total(), 2);
    /// ```
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The normalized histogram: `count / (total · bin width)` for each bin, a density that
    /// integrates to the fraction of the values inside the range.
    ///
    /// ```
    /// let h = kselect::plot::Histogram::new(&[0.1, 0.2, 0.7, 0.9], 0.0, 1.0, 2, kselect::NanPolicy::Error).unwrap();
    /// assert_eq!(h.densities(), vec![1.0, 1.0]);
    /// ```
    pub fn densities(&self) -> Vec<f64> {
        let norm = self.total as f64 * self.bin_width();
        self.counts.iter().map(|&c| c as f64 / norm).collect()
    }

    /// The cumulative normalized histogram: for each bin, the fraction of the values at or
    /// below its right edge (the empirical CDF there, up to values on an edge).
    ///
    /// ```
    /// let h = kselect::plot::Histogram::new(&[-5.0, 0.1, 0.7, 0.9], 0.0, 1.0, 2, kselect::NanPolicy::Error).unwrap();
    /// assert_eq!(h.cumulative(), vec![0.5, 1.0]);
    /// ```
    pub fn cumulative(&self) -> Vec<f64> {
        let total = self.total as f64;
        let mut sum = self.below;
        self.counts
            .iter()
            .map(|&c| {
                sum += c;
                sum as f64 / total
            })
            .collect()
    }
}

/// The bin of a value of `[lo, hi]`: `(x·c - lo·c) · bins / (hi·c - lo·c)`, where `c` is a
/// power of two that keeps the width and the factor finite and normal: 1 unless the width
/// exceeds `f64::MAX` (then 2^-1024, which brings it to between 1 and 4) or is so small that
/// `bins / width` overflows (then 2^1022).
#[derive(Clone, Copy, Debug)]
struct Binning {
    c: f64,
    lo: f64,
    factor: f64,
    bins: usize,
}

impl Binning {
    fn new(lo: f64, hi: f64, bins: usize) -> Binning {
        let width = hi - lo;
        let c = if !width.is_finite() {
            pow2(-1022) / 4.0
        } else if !(bins as f64 / width).is_finite() {
            pow2(1022)
        } else {
            1.0
        };
        Binning {
            c,
            lo: lo * c,
            factor: bins as f64 / (hi * c - lo * c),
            bins,
        }
    }

    /// The bin of `x`, `lo <= x <= hi` (the last bin includes `hi`).
    fn bin(&self, x: f64) -> usize {
        (((x * self.c - self.lo) * self.factor) as usize).min(self.bins - 1)
    }
}

/// Counts of one chunk of the data.
struct Tally {
    counts: Vec<u64>,
    below: u64,
    above: u64,
    nans: u64,
    first_nan: Option<usize>,
}

impl Tally {
    fn new(bins: usize) -> Self {
        Tally {
            counts: vec![0; bins],
            below: 0,
            above: 0,
            nans: 0,
            first_nan: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_value_once_across_chunks() {
        let n = 3 * (1 << 16) + 17;
        let data: Vec<f32> = (0..n)
            .map(|i| {
                if i == 70_000 || i == 150_000 {
                    f32::NAN
                } else {
                    ((i * 7919) % 1000) as f32 - 100.0
                }
            })
            .collect();
        let h = Histogram::new(&data, 0.0, 800.0, 8, NanPolicy::Omit).unwrap();
        assert_eq!(
            h.counts().iter().sum::<u64>() + h.below() + h.above(),
            n as u64 - 2
        );
        assert_eq!(h.total(), n as u64 - 2);
        let mut want = [0u64; 8];
        for x in data.iter().filter(|x| (0.0..=800.0).contains(*x)) {
            want[((*x / 100.0) as usize).min(7)] += 1;
        }
        assert_eq!(h.counts(), &want);
        let cumulative = h.cumulative();
        assert!(
            (cumulative[7] - (n as u64 - 2 - h.above()) as f64 / h.total() as f64).abs() < 1e-15
        );
        match Histogram::new(&data, 0.0, 800.0, 8, NanPolicy::Error) {
            Err(Error::NanInInput { count, first_index }) => {
                assert_eq!((count, first_index), (2, 70_000))
            }
            other => panic!("{other:?}"),
        }
        let last = Histogram::new(&data, 0.0, 800.0, 8, NanPolicy::Last).unwrap();
        assert_eq!(last.total(), n as u64);
    }

    #[test]
    fn bad_ranges_and_bins() {
        let d = [1.0];
        for (lo, hi) in [(1.0, 0.0), (f64::NAN, 1.0), (0.0, f64::INFINITY)] {
            match Histogram::new(&d, lo, hi, 3, NanPolicy::Error) {
                Err(Error::Density(DensityError::HistogramRange { lo: l, hi: h })) => {
                    assert_eq!((l.to_bits(), h.to_bits()), (lo.to_bits(), hi.to_bits()))
                }
                other => panic!("{lo} {hi}: {other:?}"),
            }
        }
        for bins in [0, MAX_BINS + 1] {
            assert!(matches!(
                Histogram::new(&d, 0.0, 1.0, bins, NanPolicy::Error),
                Err(Error::Density(DensityError::BinCount { bins: b, max: MAX_BINS })) if b == bins
            ));
        }
        assert!(matches!(
            Histogram::new(&[f64::NAN], 0.0, 1.0, 1, NanPolicy::Omit),
            Err(Error::EmptyInput)
        ));
    }

    #[test]
    fn ranges_wider_than_f64_max_and_bins_narrower_than_subnormal_spacing() {
        let huge = [-1.7e308, -1e308, 0.0, 1e308, 1.7e308];
        let h = Histogram::new(&huge, -1.7e308, 1.7e308, 4, NanPolicy::Error).unwrap();
        assert_eq!(h.counts(), &[2, 0, 1, 2]);
        assert_eq!(h.bin_width(), 8.5e307);
        let (left, right) = h.edges(2);
        assert_eq!(left, 0.0);
        assert!((right / 8.5e307 - 1.0).abs() < 1e-15, "{right:?}");
        assert_eq!(h.edges(3).1, 1.7e308);
        let h = Histogram::new(&huge, -f64::MAX, f64::MAX, 1, NanPolicy::Error).unwrap();
        assert_eq!(h.counts(), &[5]);
        // 1 to 4 times the smallest subnormal, in bins of half its spacing.
        let tiny: Vec<f64> = (1..=4).map(f64::from_bits).collect();
        let h = Histogram::new(&tiny, tiny[0], tiny[3], 6, NanPolicy::Error).unwrap();
        assert_eq!(h.counts(), &[1, 0, 1, 0, 1, 1]);
        let h = Histogram::new(&tiny, tiny[0], tiny[3], 3, NanPolicy::Error).unwrap();
        assert_eq!(h.counts(), &[1, 1, 2]);
        let message = Histogram::new(&tiny, 1e300, 1e300, 3, NanPolicy::Error)
            .unwrap_err()
            .to_string();
        assert!(message.contains("[1e300, 1e300]"), "{message}");
    }

    #[test]
    fn over_support_of_integers_and_of_a_single_value() {
        let est = DensityEstimate::new(&[0.0, 1.0], &[-43.0, 1301.0]).unwrap();
        let data = [-43.0, 0.0, 1301.0, f64::NAN];
        let h = Histogram::over_support(&data, &est, 100, NanPolicy::Omit).unwrap();
        // 1345 integers, 14 a bin: 97 bins from -43.5.
        assert_eq!(h.bin_width(), 14.0);
        assert_eq!(h.bins(), 97);
        assert_eq!(h.range().0, -43.5);
        assert_eq!(h.counts().iter().sum::<u64>(), 3);
        let est = DensityEstimate::new(&[0.0, 1.0], &[2.5, 2.5]).unwrap();
        let h = Histogram::over_support(&[2.5], &est, 10, NanPolicy::Error).unwrap();
        assert_eq!(h.range(), (2.0, 3.0));
        let h = Histogram::over_support(
            &[0.25, 0.5],
            &DensityEstimate::new(&[0.0, 1.0], &[0.25, 0.5]).unwrap(),
            10,
            NanPolicy::Error,
        )
        .unwrap();
        assert_eq!(h.range(), (0.25, 0.5));
    }
}
