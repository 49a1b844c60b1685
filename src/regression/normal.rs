//! The standard normal distribution: density, distribution function and quantile function, to
//! double precision, for the consistency factors of the robust scales.
//!
//! - [`erfc`]: a series for `|x| < 1` (all terms positive, no cancellation) and a continued
//!   fraction (modified Lentz) beyond.
//! - [`normal_cdf`] and [`normal_sf`] (the upper tail) through `erfc`, so that both tails keep
//!   their relative precision.
//! - [`normal_quantile`]: Acklam's rational approximation (relative error below 1.2e-9), then
//!   Halley steps on the exact distribution function, which bring it to full precision.

use std::f64::consts::{PI, SQRT_2};

/// `1 / sqrt(pi)`.
const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;

/// `1 / sqrt(2 pi)`.
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// The error function, `2/sqrt(pi) * integral_0^x exp(-t^2) dt`.
///
/// ```
/// use kselect::regression::normal::erf;
/// assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-15);
/// assert_eq!(erf(0.0), 0.0);
/// ```
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x.abs() < 1.0 {
        erf_series(x)
    } else if x > 0.0 {
        1.0 - erfc_fraction(x)
    } else {
        erfc_fraction(-x) - 1.0
    }
}

/// The complementary error function, `1 - erf(x)`, with its relative precision kept for large
/// `x` (where `erfc(x)` is tiny).
///
/// ```
/// use kselect::regression::normal::erfc;
/// assert!((erfc(3.0) / 2.209_049_699_858_544e-5 - 1.0).abs() < 1e-13);
/// assert_eq!(erfc(0.0), 1.0);
/// ```
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x >= 1.0 {
        erfc_fraction(x)
    } else if x > -1.0 {
        1.0 - erf_series(x)
    } else {
        2.0 - erfc_fraction(-x)
    }
}

/// `erf(x)` for `|x| < 1`: `2/sqrt(pi) * exp(-x^2) * sum_k (2x^2)^k x / (1*3*...*(2k+1))`.
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut k = 0.0;
    loop {
        k += 1.0;
        term *= 2.0 * x2 / (2.0 * k + 1.0);
        sum += term;
        if term.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    2.0 * FRAC_1_SQRT_PI * (-x2).exp() * sum
}

/// `erfc(x)` for `x >= 1`: `exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))`,
/// evaluated by the modified Lentz method.
fn erfc_fraction(x: f64) -> f64 {
    if x > 27.3 {
        return 0.0; // below the smallest subnormal
    }
    const TINY: f64 = 1e-300;
    // f = b0 + a1/(b1 + a2/(b2 + ...)) with b_k = x, a_k = k/2.
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..5000 {
        let a = k as f64 * 0.5;
        d = x + a * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = x + a / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    FRAC_1_SQRT_PI * (-x * x).exp() / f
}

/// The standard normal density `exp(-x^2/2) / sqrt(2 pi)`.
///
/// ```
/// use kselect::regression::normal::normal_pdf;
/// assert!((normal_pdf(0.0) - 0.398_942_280_401_432_7).abs() < 1e-16);
/// ```
pub fn normal_pdf(x: f64) -> f64 {
    FRAC_1_SQRT_2PI * (-0.5 * x * x).exp()
}

/// The standard normal distribution function `P(Z <= x)`.
///
/// ```
/// use kselect::regression::normal::normal_cdf;
/// assert!((normal_cdf(1.959_963_984_540_054) - 0.975).abs() < 1e-15);
/// assert!((normal_cdf(-10.0) / 7.619_853_024_160_527e-24 - 1.0).abs() < 1e-12);
/// ```
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / SQRT_2)
}

/// The standard normal upper tail `P(Z > x) = 1 - normal_cdf(x)`, precise where it is tiny.
///
/// ```
/// use kselect::regression::normal::normal_sf;
/// assert!((normal_sf(10.0) / 7.619_853_024_160_527e-24 - 1.0).abs() < 1e-12);
/// ```
pub fn normal_sf(x: f64) -> f64 {
    0.5 * erfc(x / SQRT_2)
}

/// The standard normal quantile function: the `x` with `P(Z <= x) = prob` (R's `qnorm`).
/// `-inf` at 0, `+inf` at 1, NaN outside `[0, 1]`.
///
/// ```
/// use kselect::regression::normal::normal_quantile;
/// assert!((normal_quantile(0.9875) - 2.241_402_727_604_947).abs() < 1e-14);
/// assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
/// assert_eq!(normal_quantile(0.5), 0.0);
/// ```
pub fn normal_quantile(prob: f64) -> f64 {
    if prob.is_nan() || !(0.0..=1.0).contains(&prob) {
        return f64::NAN;
    }
    if prob == 0.0 {
        return f64::NEG_INFINITY;
    }
    if prob == 1.0 {
        return f64::INFINITY;
    }
    if prob == 0.5 {
        return 0.0;
    }
    // Work in the lower tail, where `prob` is exact, and mirror.
    if prob > 0.5 {
        return -lower_quantile(1.0 - prob);
    }
    lower_quantile(prob)
}

/// The quantile of `lower <= 0.5`.
fn lower_quantile(lower: f64) -> f64 {
    let mut x = acklam(lower);
    // Halley steps on F(x) - lower, with F the lower tail (precise for x < 0).
    for _ in 0..3 {
        let e = normal_cdf(x) - lower;
        let u = e * (2.0 * PI).sqrt() * (0.5 * x * x).exp();
        let step = u / (1.0 + 0.5 * x * u);
        x -= step;
        if step.abs() <= 1e-16 * x.abs() {
            break;
        }
    }
    x
}

/// Acklam's rational approximation of the normal quantile of `lower` (`<= 0.5`).
fn acklam(lower: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const P_LOW: f64 = 0.024_25;
    if lower < P_LOW {
        let q = (-2.0 * lower.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else {
        let q = lower - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from R 4.2.2 (`pnorm`, `qnorm`, `2*pnorm(-x*sqrt(2))` for erfc).
    #[test]
    fn against_r() {
        let cdf = [
            (-8.0, 6.220_960_574_271_785e-16),
            (-3.0, 1.349_898_031_630_094_6e-3),
            (-1.0, 0.158_655_253_931_457_05),
            (0.3, 0.617_911_422_188_952_7),
            (2.5, 0.993_790_334_674_223_8),
        ];
        for (x, want) in cdf {
            let got = normal_cdf(x);
            assert!(
                (got / want - 1.0).abs() < 1e-13,
                "pnorm({x}) = {got}, want {want}"
            );
        }
        let quantiles = [
            (1e-10, -6.361_340_902_404_056),
            (0.01, -2.326_347_874_040_841),
            (0.3, -0.524_400_512_708_041_2),
            (0.75, 0.674_489_750_196_081_7),
            (0.999, 3.090_232_306_167_813_5),
        ];
        for (p, want) in quantiles {
            let got = normal_quantile(p);
            assert!(
                (got - want).abs() < 1e-13 * want.abs().max(1.0),
                "qnorm({p}) = {got}"
            );
        }
    }

    #[test]
    fn quantile_inverts_cdf() {
        for i in 1..1000 {
            let p = i as f64 / 1000.0;
            let x = normal_quantile(p);
            assert!((normal_cdf(x) - p).abs() <= 4e-15 * p, "{p}");
        }
        assert!(normal_quantile(-0.1).is_nan());
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
    }

    #[test]
    fn erf_is_continuous_at_the_switch() {
        // Across the switch from the series to the continued fraction.
        let below = erf(1.0 - 1e-9);
        let at = erf(1.0);
        let slope = 2.0 / std::f64::consts::PI.sqrt() * (-1.0f64).exp();
        assert!((at - below - slope * 1e-9).abs() < 1e-15);
        assert!((erfc(-2.5) - (2.0 - erfc(2.5))).abs() < 1e-16);
        assert_eq!(erfc(40.0), 0.0);
    }
}
