//! Figures of data at the ends of the `f64` range: a power of two that the x coordinates are
//! multiplied by before drawing, so that a range wider than `f64::MAX` (data near ±1.7e308)
//! or as narrow as the spacing of subnormal numbers (data near 4.9e-324) and the densities over
//! it are ordinary numbers. Multiplying by a power of two is exact; the tick labels show the
//! data's own values.

use super::labels::tick;

/// Ranges at least this wide are drawn scaled.
const WIDEST: f64 = 1e200;
/// Ranges at most this wide are drawn scaled.
const NARROWEST: f64 = 1e-200;

/// The factor `2^exp` that a figure's coordinates are multiplied by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Scale {
    exp: i32,
}

impl Scale {
    /// No scaling.
    pub(super) const ONE: Scale = Scale { exp: 0 };

    /// The scale of a figure over `[lo, hi]` (finite, `lo < hi`): [`Scale::ONE`] for ordinary
    /// ranges; for ranges wider than 1e200 or narrower than 1e-200, the power of two that
    /// brings the width to at least 1 and below 2.
    pub(super) fn for_range(lo: f64, hi: f64) -> Scale {
        let width = hi - lo;
        if width.is_finite() && (NARROWEST..=WIDEST).contains(&width) {
            return Scale::ONE;
        }
        let exp = if width.is_finite() {
            -floor_log2(width)
        } else {
            // hi/2 - lo/2 is finite: half the width.
            -floor_log2(hi / 2.0 - lo / 2.0) - 1
        };
        Scale { exp }
    }

    /// `x` in the figure's coordinates: `x · 2^exp`.
    pub(super) fn apply(self, x: f64) -> f64 {
        times_pow2(x, self.exp)
    }

    /// The scale of densities over the scaled coordinates: their inverse, `2^-exp`.
    pub(super) fn of_density(self) -> Scale {
        Scale { exp: -self.exp }
    }

    /// The tick label of the figure's coordinate `v` on an axis whose labels are about `step`
    /// apart: the value `v · 2^-exp`, compact (`1.70e308`, `4.94e-324`), even where that value
    /// is beyond the range of `f64`.
    pub(super) fn label(self, v: f64, step: f64) -> String {
        if self.exp == 0 {
            return tick(v, step);
        }
        let value = times_pow2(v, -self.exp);
        if value.is_normal() || v == 0.0 {
            tick(value, times_pow2(step, -self.exp))
        } else {
            scientific(v, -self.exp)
        }
    }
}

/// `2^exp` for `-1022 <= exp <= 1023`, exactly.
///
/// Panics outside that range (a bug in the caller).
pub(super) fn pow2(exp: i32) -> f64 {
    assert!((-1022..=1023).contains(&exp), "2^{exp} is not a normal f64");
    f64::from_bits(((exp + 1023) as u64) << 52)
}

/// `floor(log2(x))` of a finite `x > 0`, subnormal or not, exactly.
fn floor_log2(x: f64) -> i32 {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        let fraction = bits & ((1 << 52) - 1);
        -1075 + (64 - fraction.leading_zeros() as i32)
    } else {
        biased - 1023
    }
}

/// `x · 2^exp`, exact unless the result overflows or is subnormal.
fn times_pow2(mut x: f64, mut exp: i32) -> f64 {
    while exp != 0 && x != 0.0 && x.is_finite() {
        let step = exp.clamp(-1000, 1000);
        x *= pow2(step);
        exp -= step;
    }
    x
}

/// `v · 2^exp` (finite `v != 0`) as `1.70e308`, computed through logarithms: the value itself
/// may be beyond the range of `f64`.
fn scientific(v: f64, exp: i32) -> String {
    let log10 = v.abs().log10() + f64::from(exp) * std::f64::consts::LOG10_2;
    let mut exponent = log10.floor();
    let mut mantissa = 10f64.powf(log10 - exponent);
    if format!("{mantissa:.2}") == "10.00" {
        mantissa = 1.0;
        exponent += 1.0;
    }
    let sign = if v < 0.0 { "-" } else { "" };
    format!("{sign}{mantissa:.2}e{exponent}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_ranges_are_not_scaled() {
        assert_eq!(Scale::for_range(0.0, 1.0), Scale::ONE);
        assert_eq!(Scale::for_range(-1e150, 1e150), Scale::ONE);
        assert_eq!(Scale::for_range(1e-150, 2e-150), Scale::ONE);
        assert_eq!(Scale::ONE.label(0.25, 0.05), "0.25");
    }

    #[test]
    fn ranges_at_the_ends_of_f64_are_scaled_to_a_width_of_one_to_two() {
        for (lo, hi) in [
            (-1.7e308, 1.7e308),
            (-f64::MAX, f64::MAX),
            (0.0, 1e250),
            (5e-324, 1e-322),
            (-5e-324, 5e-324),
            (1e-300, 1e-300 + 1e-310),
        ] {
            let scale = Scale::for_range(lo, hi);
            let width = scale.apply(hi) - scale.apply(lo);
            assert!((1.0..2.0).contains(&width), "[{lo:?}, {hi:?}]: {width}");
            assert_eq!(times_pow2(scale.apply(hi), -scale.exp), hi);
        }
    }

    #[test]
    fn labels_are_compact_even_beyond_f64() {
        let huge = Scale::for_range(-1.7e308, 1.7e308);
        let v = huge.apply(1.7e308);
        assert_eq!(huge.label(v, huge.apply(2e307)), "1.70e308");
        assert_eq!(huge.label(huge.apply(-1.7e308), 1.0), "-1.70e308");
        assert_eq!(huge.label(0.0, 1.0), "0");
        let tiny = Scale::for_range(5e-324, 1e-322);
        assert_eq!(tiny.label(tiny.apply(5e-324), 0.1), "4.94e-324");
        // Densities over subnormal data exceed f64::MAX.
        assert_eq!(tiny.of_density().label(1.0, 0.1), "1.27e322");
        assert_eq!(scientific(-9.999, 0), "-1.00e1");
        assert_eq!(pow2(-1022), f64::MIN_POSITIVE);
        assert_eq!(floor_log2(5e-324), -1074);
        assert_eq!(floor_log2(f64::MIN_POSITIVE), -1022);
        assert_eq!(floor_log2(f64::MAX), 1023);
        assert_eq!(floor_log2(1.5), 0);
    }
}
