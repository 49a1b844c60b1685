//! Where a rank lies, estimated from a random subset of the data: the window of positions that
//! the fused multiselections (GPU and CPU) keep the keys of, and the share of the data those
//! windows cover.
//!
//! A subset holding a fraction `f` of `n` values, its count below a value scaled by `1 / f`,
//! estimates that value's rank with a standard deviation of `√(n·p·(1 − p)·(1 − f) / f)` at
//! rank fraction `p` (the subset taken as a random sample of its size). A window of
//! [`SIGMAS`] of them each side misses a rank about once in 10^5 ranks; a miss costs time,
//! never exactness (the caller checks every rank against the exact counts).

/// Half-width of a rank's window in standard deviations of the subset's estimate.
pub(crate) const SIGMAS: f64 = 4.5;

/// The half-width, in positions among `n`, of rank `k`'s window when a subset holding
/// `fraction` of the values estimates it.
pub(crate) fn half_width(n: usize, k: usize, fraction: f64) -> f64 {
    let nf = n as f64;
    let p = (k as f64 + 0.5) / nf;
    SIGMAS * (nf * p * (1.0 - p) * (1.0 - fraction) / fraction).sqrt()
}

/// The expected share of `n` values that the windows of the ascending `ranks` cover (windows
/// that overlap count once), with `buckets` buckets of about equal population (the ends of a
/// run of overlapping windows round out to whole buckets: about two more a run).
pub(crate) fn kept_share(n: usize, ranks: &[usize], fraction: f64, buckets: usize) -> f64 {
    let (mut covered, mut runs, mut end) = (0.0, 0usize, f64::NEG_INFINITY);
    for &k in ranks {
        let w = half_width(n, k, fraction);
        let (a, b) = (k as f64 - w, k as f64 + w);
        if a > end {
            covered += b - a;
            runs += 1;
        } else if b > end {
            covered += b - end;
        }
        end = end.max(b);
    }
    covered / n as f64 + 2.0 * runs as f64 / buckets as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The median's window from a quarter of 2^28 values: 4.5 σ, σ = √(2^28 / 4 · 3).
    #[test]
    fn the_median_window_follows_the_binomial_deviation() {
        let n = 1usize << 28;
        let w = half_width(n, n / 2, 0.25);
        let sigma = ((n as f64) * 0.25 * 3.0).sqrt();
        assert!((w - SIGMAS * sigma).abs() < 1e-6 * w, "{w}");
    }

    /// The share grows with the ranks and shrinks with the subset and the buckets.
    #[test]
    fn kept_share_is_monotone() {
        let n = 1usize << 26;
        let ranks: Vec<usize> = (0..101).map(|i| i * (n - 1) / 100).collect();
        let base = kept_share(n, &ranks, 0.125, 4096);
        assert!(kept_share(n, &ranks[..50], 0.125, 4096) < base);
        assert!(kept_share(n, &ranks, 0.25, 4096) < base);
        assert!(kept_share(n, &ranks, 0.125, 16384) < base);
        assert!(base > 0.0 && base < 1.0, "{base}");
    }

    /// Neighbouring ranks (the two of each linear quantile) cover what one of them does.
    #[test]
    fn overlapping_windows_count_once() {
        let n = 1usize << 26;
        let single: Vec<usize> = (0..101).map(|i| i * (n - 2) / 100).collect();
        let pairs: Vec<usize> = single.iter().flat_map(|&k| [k, k + 1]).collect();
        let (a, b) = (
            kept_share(n, &single, 0.125, 4096),
            kept_share(n, &pairs, 0.125, 4096),
        );
        assert!(b >= a && b < a * 1.001, "{a} {b}");
    }
}
