//! bucketSelect (Alabi et al. 2012) on the CPU and on CUDA: the values are projected linearly
//! onto equal-width buckets between the smallest and the largest candidate, the buckets are
//! counted, and the bucket holding the rank becomes the next candidate set.
//!
//! One selection a rank; bucketMultiSelect, for many ranks at once, is `select/bucket_multi/`.
//!
//! [`Projection`] is the arithmetic both backends share: `kernels/bucket_select.cu` computes
//! the same operations in the same order (without contraction into fused multiply-adds), so
//! the host can predict what the device will decide.

pub(crate) mod cpu;
pub(crate) mod cuda;

/// The linear projection of values onto `buckets` equal-width buckets.
///
/// `bucket(x) = min(floor((x·h − min·h) · buckets / (max·h − min·h)), buckets − 1)` in `f64`,
/// with `h = ½` when `max − min` overflows and `h = 1` otherwise. Every step is a rounded
/// monotone operation, so the bucket is monotone non-decreasing in `x`: each bucket holds a
/// contiguous range of keys, whatever the rounding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Projection {
    /// The smallest candidate (scaled by `half`).
    min: f64,
    /// Buckets per unit (of the scaled values).
    scale: f64,
    /// `0.5` when the range overflows `f64`, `1.0` otherwise.
    half: f64,
    /// The last bucket, `buckets - 1`.
    last: usize,
}

impl Projection {
    /// The projection of `[min, max]` (finite values, `min <= max`) onto `buckets` buckets
    /// (`buckets >= 1`); `None` when it cannot separate them (an empty range, or one so small
    /// that the scale overflows).
    pub(crate) fn new(min: f64, max: f64, buckets: usize) -> Option<Projection> {
        let half = if (max - min).is_finite() { 1.0 } else { 0.5 };
        let range = max * half - min * half;
        let scale = buckets as f64 / range;
        (range > 0.0 && scale.is_finite()).then_some(Projection {
            min: min * half,
            scale,
            half,
            last: buckets - 1,
        })
    }

    /// The bucket of a finite value (values below `min` go to bucket 0, above `max` to the
    /// last).
    #[inline(always)]
    pub(crate) fn bucket(self, x: f64) -> usize {
        (((x * self.half - self.min) * self.scale) as usize).min(self.last)
    }
}

selection! {
    /// bucketSelect, once for each rank.
    Bucket: CpuAndCuda,
    cpu: each_rank(cpu::select),
    cuda: counting_nans(cuda::multiselect), workspace(cuda::workspace)
}

/// Unit tests of the shared projection.
#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets are monotone, cover `[min, max]` and reject empty or unscalable ranges.
    #[test]
    fn projection_is_monotone_and_bounded() {
        let p = Projection::new(-3.0, 5.0, 1024).unwrap();
        assert_eq!(p.bucket(-3.0), 0);
        assert_eq!(p.bucket(5.0), 1023);
        assert_eq!(p.bucket(1.0), 512);
        let mut last = 0;
        for i in 0..=10_000 {
            let b = p.bucket(-3.0 + 8.0 * i as f64 / 10_000.0);
            assert!(b >= last && b < 1024);
            last = b;
        }
        assert!(Projection::new(1.0, 1.0, 1024).is_none());
        assert!(Projection::new(0.0, 5e-324, 1 << 14).is_none());
        let wide = Projection::new(-f64::MAX, f64::MAX, 1 << 14).unwrap();
        assert_eq!(wide.half, 0.5);
        assert_eq!(wide.bucket(-f64::MAX), 0);
        assert_eq!(wide.bucket(0.0), 1 << 13);
        assert_eq!(wide.bucket(f64::MAX), (1 << 14) - 1);
    }
}
