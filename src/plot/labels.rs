//! Numbers as short, readable text for axes and legends.

use crate::density::Bandwidth;

/// How the kernels of the smoothed estimate are chosen by `bandwidth`, for a legend.
pub(super) fn kernels(bandwidth: Bandwidth) -> String {
    match bandwidth {
        Bandwidth::Fixed(h) => format!("biweight kernel, half-width {}", short(h)),
        Bandwidth::Local(factor) => format!(
            "biweight kernels, half-width {} × local spacing",
            short(factor)
        ),
    }
}

/// `n` and the noun, plural unless `n` is 1: `count(3, "bin") == "3 bins"`.
pub(super) fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A tick label for `v` on an axis whose labels are about `step` apart: as many decimals as
/// the step needs, an exponent for very large or very small magnitudes.
pub(super) fn tick(v: f64, step: f64) -> String {
    let magnitude = v.abs();
    if v == 0.0 {
        return "0".to_string();
    }
    if magnitude >= 1e7 || (step > 0.0 && step < 1e-5) {
        return format!("{v:.2e}");
    }
    let decimals = if step >= 1.0 || step <= 0.0 || !step.is_finite() {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 8.0) as usize
    };
    format!("{v:.decimals$}")
}

/// `x` with about three significant digits.
pub(super) fn short(x: f64) -> String {
    let magnitude = x.abs();
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    if !(1e-3..1e6).contains(&magnitude) {
        return format!("{x:.2e}");
    }
    let decimals = (2.0 - magnitude.log10().floor()).max(0.0) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_short_numbers() {
        assert_eq!(tick(0.0, 0.5), "0");
        assert_eq!(tick(-40.0, 20.0), "-40");
        assert_eq!(tick(0.25, 0.05), "0.25");
        assert_eq!(tick(0.3, 0.1), "0.3");
        assert_eq!(tick(0.0123, 0.0025), "0.012");
        assert_eq!(tick(3e9, 1e9), "3.00e9");
        assert_eq!(short(12.345), "12.3");
        assert_eq!(short(0.012345), "0.0123");
        assert_eq!(short(1234.4), "1234");
        assert_eq!(short(2.5e-7), "2.50e-7");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(1.5), "1.5");
        assert_eq!(short(2.0), "2");
        assert_eq!(short(120.0), "120");
        assert_eq!(count(1, "bin"), "1 bin");
        assert_eq!(count(100, "bin"), "100 bins");
    }
}
