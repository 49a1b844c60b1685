//! The scale estimates of the fits and their correction factors, as R's robustbase (`ltsReg`)
//! and MASS (`lqs`) define them.
//!
//! **Consistency factor** of a trimmed scale that keeps the fraction `a` of the data
//! (robustbase's `.MCDcons(1, a)`, under the square root):
//!
//! ```text
//! c(a) = 1 / sqrt(1 - 2 q phi(q) / a),   q = qnorm((1 + a) / 2)
//! ```
//!
//! which is `sqrt(a / pchisq(qchisq(a, 1), 3))` written with the normal distribution: for
//! `q^2 = qchisq(a, 1)`, `pchisq(q^2, 3) = a - 2 q phi(q)`. A normal sample's sum of the `a n`
//! smallest squared residuals, divided by `a n`, estimates `sigma^2 / c(a)^2`.
//!
//! **Small-sample factors** (robustbase's `LTScnp2` for the raw scale and `LTScnp2.rew` for the
//! reweighted one, from Pison, Van Aelst and Willems 2002): `1 / f(alpha, n)`, where
//! `f(0.5, n) = 1 - exp(k0) / n^k1` and `f(0.875, n)` likewise with other constants, linearly
//! interpolated in `alpha` (towards 1 at `alpha = 1` above 0.875). The constants depend on the
//! number of slopes `q` (`p` less the intercept): fitted values for `q = 0` (intercept only) and
//! `q = 1`, with and without an intercept, and for `q >= 2` the solution of a 2x2 system fitted to
//! the simulated factors at `q^2` times 3 and 5. For `q = 0` the interpolated value is
//! square-rooted, as in robustbase.

use crate::regression::normal::{normal_pdf, normal_quantile};

/// The cut-off of robustbase's "01.original" weights for LTS: `qnorm(0.9875)`; a residual gets
/// weight 1 when `|r / scale| <= LTS_CUTOFF`.
pub(crate) fn lts_cutoff() -> f64 {
    normal_quantile(0.9875)
}

/// The cut-off of MASS `lqs`'s scale: residuals with `|r| <= 2.5 s` count.
pub(crate) const LMS_CUTOFF: f64 = 2.5;

/// The consistency factor `c(a)` of a scale from the fraction `a` (in `(0, 1)`) of smallest
/// squared residuals; 1 for `a >= 1`.
pub(crate) fn consistency(a: f64) -> f64 {
    if a >= 1.0 {
        return 1.0;
    }
    let q = normal_quantile(0.5 * (1.0 + a));
    1.0 / (1.0 - 2.0 * q * normal_pdf(q) / a).sqrt()
}

/// The fitted constants of one small-sample correction: for `q = 0`, `q = 1` (with and without
/// intercept) `(exp(k0), k1)` pairs at alpha 0.5 and 0.875; for `q >= 2` the `(c1, c2)` of the
/// two simulated points (at `3 q^2` and `5 q^2`) at alpha 0.5 and 0.875.
struct Table {
    /// `q = 0`: `[(k0, k1) at 0.5, (k0, k1) at 0.875]`.
    location: [(f64, f64); 2],
    /// `q = 1` with an intercept.
    one_intercept: [(f64, f64); 2],
    /// `q = 1` without an intercept.
    one_origin: [(f64, f64); 2],
    /// `q >= 2` with an intercept: `[at 0.5, at 0.875]`, each `[(c1, c2) at 3, (c1, c2) at 5]`.
    many_intercept: [[(f64, f64); 2]; 2],
    /// `q >= 2` without an intercept.
    many_origin: [[(f64, f64); 2]; 2],
    /// Whether the `q = 0` value is square-rooted only inside `[0.5, 1)` (raw) or always
    /// (reweighted).
    raw: bool,
}

/// robustbase's `LTScnp2` constants.
const RAW: Table = Table {
    location: [
        (0.262_024_211_897_096, 0.604_756_680_630_497),
        (-0.351_584_646_688_712, 1.016_465_675_024_86),
    ],
    one_intercept: [
        (0.630_869_217_886_906, 0.650_789_250_442_946),
        (0.565_065_391_014_791, 1.030_441_990_125_09),
    ],
    one_origin: [
        (-0.018_177_745_231_532_1, 0.697_629_772_271_099),
        (-0.310_122_738_776_431, 1.062_416_159_231_72),
    ],
    many_intercept: [
        [
            (-0.746_945_886_714_663, 0.562_649_371_926_89),
            (-0.535_478_048_924_724, 0.543_323_462_033_445),
        ],
        [
            (-0.458_580_153_984_614, 1.122_360_711_044_03),
            (-0.267_178_168_108_996, 1.102_247_878_115_4),
        ],
    ],
    many_origin: [
        [
            (-0.487_338_281_979_106, 0.405_511_279_418_594),
            (-0.340_762_058_011, 0.379_723_605_449_88),
        ],
        [
            (-0.251_778_730_491_252, 0.883_966_931_611_758),
            (-0.146_660_023_184_295, 0.862_929_403_407_61),
        ],
    ],
    raw: true,
};

/// robustbase's `LTScnp2.rew` constants.
const REWEIGHTED: Table = Table {
    location: [
        (1.110_981_434_150_27, 1.518_289_027_045_3),
        (-0.660_467_767_728_61, 0.889_395_958_318_88),
    ],
    one_intercept: [
        (1.586_096_541_996_05, 1.463_401_625_264_68),
        (0.391_653_958_727_332, 1.031_674_874_833_16),
    ],
    one_origin: [
        (0.632_985_238_765_7, 1.403_618_797_880_14),
        (-0.642_240_988_645_469, 0.926_325_452_943_084),
    ],
    many_intercept: [
        [
            (-0.773_365_715_932_083, 2.020_139_964_063_46),
            (-0.337_571_678_986_723, 2.020_374_674_548_33),
        ],
        [
            (-0.474_174_840_843_602, 1.396_817_157_049_56),
            (-0.276_640_353_112_907, 1.425_432_422_876_77),
        ],
    ],
    many_origin: [
        [
            (-0.417_574_780_492_848, 1.839_588_763_413_67),
            (-0.175_753_709_374_146, 1.831_380_949_799_9),
        ],
        [
            (-0.267_522_855_927_958, 1.175_599_845_339_74),
            (-0.161_200_683_014_406, 1.216_750_198_539_61),
        ],
    ],
    raw: false,
};

/// The small-sample factor of the raw LTS scale (robustbase's `LTScnp2`), for `p` coefficients
/// (counting the intercept), `n` rows and coverage `alpha` in `[0.5, 1)`.
pub(crate) fn small_sample_raw(p: usize, intercept: bool, n: usize, alpha: f64) -> f64 {
    small_sample(&RAW, p, intercept, n, alpha)
}

/// The small-sample factor of the reweighted LTS scale (robustbase's `LTScnp2.rew`).
pub(crate) fn small_sample_reweighted(p: usize, intercept: bool, n: usize, alpha: f64) -> f64 {
    small_sample(&REWEIGHTED, p, intercept, n, alpha)
}

fn small_sample(table: &Table, p: usize, intercept: bool, n: usize, alpha: f64) -> f64 {
    let q = p - usize::from(intercept);
    let n = n as f64;
    let at = |k0: f64, k1: f64| 1.0 - k0.exp() / n.powf(k1);
    let (f500, f875) = match q {
        0 => (
            at(table.location[0].0, table.location[0].1),
            at(table.location[1].0, table.location[1].1),
        ),
        1 => {
            let t = if intercept {
                &table.one_intercept
            } else {
                &table.one_origin
            };
            (at(t[0].0, t[0].1), at(t[1].0, t[1].1))
        }
        _ => {
            let t = if intercept {
                &table.many_intercept
            } else {
                &table.many_origin
            };
            let (k0, k1) = solve_pair(&t[0], q as f64);
            let (m0, m1) = solve_pair(&t[1], q as f64);
            (at(k0, k1), at(m0, m1))
        }
    };
    let f = if alpha <= 0.875 {
        f500 + (f875 - f500) / 0.375 * (alpha - 0.5)
    } else {
        f875 + (1.0 - f875) / 0.125 * (alpha - 0.875)
    };
    let f = if q == 0 && (!table.raw || alpha < 1.0) {
        f.sqrt()
    } else {
        f
    };
    1.0 / f
}

/// The `(k0, k1)` of `f(n) = 1 - exp(k0) / n^k1` through two simulated points: for each
/// `(c1, c2)` at `m q^2` (`m` = 3, 5), `k0 - k1 ln(m q^2) = ln(-c1 / q^c2)`.
fn solve_pair(points: &[(f64, f64); 2], q: f64) -> (f64, f64) {
    let y0 = (-points[0].0 / q.powf(points[0].1)).ln();
    let y1 = (-points[1].0 / q.powf(points[1].1)).ln();
    let l0 = (3.0 * q * q).ln();
    let l1 = (5.0 * q * q).ln();
    let k1 = (y0 - y1) / (l1 - l0);
    (y0 + l0 * k1, k1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs()
    }

    /// Values from R 4.2.2 / robustbase 0.95-0 (`LTScnp2`, `LTScnp2.rew`, `.MCDcons`).
    #[test]
    fn against_robustbase() {
        // LTScnp2(4, TRUE, 21, 0.5), LTScnp2.rew(4, TRUE, 21, 0.5)
        assert!(close(small_sample_raw(4, true, 21, 0.5), RAW_4_21, 1e-13));
        assert!(close(
            small_sample_reweighted(4, true, 21, 0.5),
            REW_4_21,
            1e-13
        ));
        assert!(close(small_sample_raw(2, true, 47, 0.5), RAW_2_47, 1e-13));
        assert!(close(
            small_sample_reweighted(2, true, 47, 0.5),
            REW_2_47,
            1e-13
        ));
        assert!(close(small_sample_raw(1, true, 38, 0.5), RAW_1_38, 1e-13));
        assert!(close(
            small_sample_raw(3, false, 50, 0.7),
            RAW_3_50_NOINT,
            1e-13
        ));
        assert!(close(
            small_sample_reweighted(1, false, 30, 0.9),
            REW_1_30_NOINT,
            1e-13
        ));
        // sqrt(.MCDcons(1, 13/21))
        assert!(close(consistency(13.0 / 21.0), MCDCONS_13_21.sqrt(), 1e-13));
    }

    const RAW_4_21: f64 = 1.884_166_448_631_609_9;
    const REW_4_21: f64 = 1.144_674_239_390_126_6;
    const RAW_2_47: f64 = 1.181_182_728_950_837_4;
    const REW_2_47: f64 = 1.017_763_524_330_321_1;
    const RAW_1_38: f64 = 1.080_854_404_861_825_8;
    const RAW_3_50_NOINT: f64 = 1.143_040_837_984_252;
    const REW_1_30_NOINT: f64 = 1.018_355_777_549_242;
    const MCDCONS_13_21: f64 = 4.334_875_396_070_096;
}
