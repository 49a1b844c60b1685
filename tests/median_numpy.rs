//! `Selector::median_mean` against `numpy.median` and `numpy.nanmedian`, bit for bit, on every
//! backend and algorithm (and from a device-resident buffer on CUDA): the inputs the median of
//! quantile 0.5 got wrong (`[inf, -10, 4]` as f32, `[inf, nan, nan, nan]` with NaN omitted),
//! the mean of the two middle values of every element type, infinities, overflow, NaN, n = 0,
//! 1 and 2, and cases of numpy's own `TestMedian` and `TestNanFunctions_Median`.
//!
//! Expected values are numpy's, pasted from the output of `scripts/median_numpy_cases.py`
//! (numpy 1.24; numpy 2.x computes the same), so these tests need no numpy. Where kselect
//! differs on purpose (a finite mean where numpy's sum overflows, an error where numpy returns
//! NaN for no numbers), the test says so.

#[macro_use]
mod common;

use common::algorithms_of;
use kselect::{DeviceBuffer, Element, Error, NanPolicy, Selector};

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;
const POLICIES: [NanPolicy; 3] = [NanPolicy::Error, NanPolicy::Omit, NanPolicy::Last];

/// Bit-for-bit equality; any NaN equals any NaN.
fn same(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

/// The data, shortened for messages.
fn describe<T: Element>(data: &[T]) -> String {
    if data.len() <= 12 {
        format!("{} {data:?}", T::DTYPE)
    } else {
        format!("{} values of type {}", data.len(), T::DTYPE)
    }
}

/// The median of `data` under `policy` by every algorithm of the selector's backend (and of a
/// device-resident copy on CUDA) is `want` bit for bit, and the input is unchanged.
fn assert_median<T: Element>(selector: &Selector, policy: NanPolicy, data: &[T], want: f64) {
    let keys_before: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
    let buffer = selector.device().is_cuda().then(|| {
        DeviceBuffer::from_host(selector.device(), data)
            .unwrap_or_else(|e| panic!("copying {} to the GPU: {e}", describe(data)))
    });
    for &algorithm in algorithms_of(selector) {
        let sel = selector.clone().algorithm(algorithm).nan_policy(policy);
        let what = || {
            let backend = sel.device().backend_name();
            format!("{backend} {algorithm} {policy:?} {}", describe(data))
        };
        let check = |got: f64, form: &str| {
            assert!(
                same(got, want),
                "{}{form}: got {got:e} ({:016x}), numpy {want:e} ({:016x})",
                what(),
                got.to_bits(),
                want.to_bits()
            );
        };
        let got = sel.median_mean(data);
        check(got.unwrap_or_else(|e| panic!("{}: {e}", what())), "");
        if let Some(buf) = &buffer {
            let got = sel.median_mean(buf);
            let got = got.unwrap_or_else(|e| panic!("{} (device-resident): {e}", what()));
            check(got, " (device-resident)");
        }
    }
    let keys_after: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
    assert_eq!(keys_before, keys_after, "the input was modified");
}

/// The median of `data` under `policy` is an error that `expected` accepts, by every algorithm
/// of the selector's backend (and from a device-resident copy on CUDA).
fn assert_median_fails<T: Element>(
    selector: &Selector,
    policy: NanPolicy,
    data: &[T],
    expected: impl Fn(&Error) -> bool,
) {
    let buffer = selector.device().is_cuda().then(|| {
        DeviceBuffer::from_host(selector.device(), data)
            .unwrap_or_else(|e| panic!("copying {} to the GPU: {e}", describe(data)))
    });
    for &algorithm in algorithms_of(selector) {
        let sel = selector.clone().algorithm(algorithm).nan_policy(policy);
        let what = format!(
            "{} {algorithm} {policy:?} {}",
            sel.device().backend_name(),
            describe(data)
        );
        match sel.median_mean(data) {
            Err(e) if expected(&e) => {}
            other => panic!("{what}: unexpected {other:?}"),
        }
        if let Some(buf) = &buffer {
            match sel.median_mean(buf) {
                Err(e) if expected(&e) => {}
                other => panic!("{what} (device-resident): unexpected {other:?}"),
            }
        }
    }
}

fn is_empty_input(e: &Error) -> bool {
    matches!(e, Error::EmptyInput)
}

// ---------------------------------------------------------------------------------------------
// The inputs the median of quantile 0.5 got wrong
// ---------------------------------------------------------------------------------------------

// numpy.median(numpy.array([inf, -10, 4], numpy.float32)) == 4; quantile 0.5 interpolated
// between 4 and inf and gave NaN.
backend_test!(
    median_of_f32_with_infinity_is_numpys,
    |selector: Selector| {
        for policy in POLICIES {
            assert_median(&selector, policy, &[f32::INFINITY, -10.0, 4.0], 4.0);
            assert_median(&selector, policy, &[f32::NEG_INFINITY, -10.0, 4.0], -10.0);
            assert_median(&selector, policy, &[INF, -10.0, 4.0], 4.0);
        }
    }
);

// numpy.nanmedian(numpy.array([inf, nan, nan, nan], numpy.float32)) == inf; quantile 0.5 of
// the one number left interpolated inf with itself and gave NaN.
backend_test!(
    nanmedian_of_infinity_and_nans_is_infinity,
    |selector: Selector| {
        let f32s = [f32::INFINITY, f32::NAN, f32::NAN, f32::NAN];
        assert_median(&selector, NanPolicy::Omit, &f32s, INF);
        assert_median(&selector, NanPolicy::Omit, &[-INF, NAN, NAN, NAN], -INF);
        // numpy.median (NaN propagates) and the default policy.
        assert_median(&selector, NanPolicy::Last, &f32s, NAN);
        assert_median_fails(&selector, NanPolicy::Error, &f32s, |e| {
            matches!(
                e,
                Error::NanInInput {
                    count: 3,
                    first_index: 1
                }
            )
        });
    }
);

// ---------------------------------------------------------------------------------------------
// The mean of the two middle values, as numpy computes it for each type
// ---------------------------------------------------------------------------------------------

backend_test!(
    median_of_two_middle_values_is_their_mean_like_numpy,
    |selector: Selector| {
        let s = &selector;
        for policy in POLICIES {
            // f64: (a + b) / 2.
            assert_median(s, policy, &[0.7, 0.1, 0.9, 0.2], 0.44999999999999996);
            assert_median(s, policy, &[5e-324, -1.0, 0.0, 3.0], 0.0);
            let wide = [1e16, 1.0000000000000002e16, 3e16, -1e16];
            assert_median(s, policy, &wide, 1e16);
            // f32: the sum rounded to f32, then halved (in f64 these would be
            // 0.15000000223517418, 0.44999999552965164, 7.006492321624085e-46 and 16777217).
            assert_median(s, policy, &[0.1f32, 0.2], f64::from(0.15f32));
            assert_median(s, policy, &[0.7f32, 0.1, 0.9, 0.2], f64::from(0.45f32));
            assert_median(s, policy, &[1e-45f32, 0.0, -1.0, 1.0], 0.0);
            let f32s = [16777216.0f32, 16777218.0, 0.0, 3e7];
            assert_median(s, policy, &f32s, 16777216.0);
        }
        // Integers: converted to f64 first, then (a + b) / 2.
        let i32s = [i32::MAX, i32::MAX - 1, i32::MIN, i32::MAX];
        assert_median(s, NanPolicy::Error, &i32s, 2147483646.5);
        assert_median(s, NanPolicy::Error, &[-7i32, 4], -1.5);
        let above_2_53 = [(1i64 << 53) + 1, (1 << 53) + 2, -1, 1 << 62];
        assert_median(s, NanPolicy::Error, &above_2_53, 9007199254740992.0);
        let above_2_62 = [(1i64 << 62) + 1, (1 << 62) + 3];
        assert_median(s, NanPolicy::Error, &above_2_62, 4.611686018427388e18);
        let top = [i64::MAX, i64::MAX - 1];
        assert_median(s, NanPolicy::Error, &top, 9.223372036854776e18);
        assert_median(s, NanPolicy::Error, &[i64::MIN, i64::MAX], 0.0);
        assert_median(s, NanPolicy::Error, &[(1i64 << 53) + 1, 5, -3], 5.0);
        assert_median(s, NanPolicy::Error, &[u32::MAX, 0], 2147483647.5);
        let u32s = [u32::MAX, u32::MAX - 1, 1, 2];
        assert_median(s, NanPolicy::Error, &u32s, 2147483648.0);
        let u64s = [u64::MAX, u64::MAX - 1];
        assert_median(s, NanPolicy::Error, &u64s, 1.8446744073709552e19);
        let u64s = [(1u64 << 53) + 1, (1 << 53) + 3, 0, u64::MAX];
        assert_median(s, NanPolicy::Error, &u64s, 9007199254740994.0);
    }
);

// numpy's sum overflows to inf (with a warning); kselect returns the finite mean, a / 2 + b / 2
// (the exact mean rounded, as the script checks).
backend_test!(
    median_of_overflowing_middle_values_is_their_finite_mean,
    |selector: Selector| {
        let s = &selector;
        assert_median(s, NanPolicy::Error, &[1e308, 1.5e308], 1.25e308);
        let negative = [-f64::MAX, -1.5e308, -f64::MAX, -1e308];
        assert_median(s, NanPolicy::Error, &negative, -1.648846567431158e308);
        assert_median(
            s,
            NanPolicy::Error,
            &[3e38f32, 3.2e38],
            f64::from(3.1e38f32),
        );
        assert_median(s, NanPolicy::Error, &[f32::MAX; 4], f64::from(f32::MAX));
        assert_median(s, NanPolicy::Error, &[f64::MAX, f64::MAX, 0.0], f64::MAX);
    }
);

backend_test!(
    median_of_opposite_infinities_is_nan_like_numpy,
    |selector: Selector| {
        let s = &selector;
        for policy in POLICIES {
            assert_median(s, policy, &[-INF, INF], NAN);
            assert_median(s, policy, &[-INF, -INF, INF, INF], NAN);
            assert_median(s, policy, &[f32::NEG_INFINITY, f32::INFINITY], NAN);
            assert_median(s, policy, &[1.0, INF], INF);
            assert_median(s, policy, &[-INF, 1.0, 2.0, INF], 1.5);
            assert_median(s, policy, &[f32::INFINITY; 2], INF);
        }
    }
);

// ---------------------------------------------------------------------------------------------
// n = 0, 1, 2 and NaN
// ---------------------------------------------------------------------------------------------

backend_test!(median_of_one_and_two_values, |selector: Selector| {
    let s = &selector;
    for policy in POLICIES {
        assert_median(s, policy, &[2.5], 2.5);
        assert_median(s, policy, &[-3.25f32, 1e-45], -1.625);
        // The middle value itself: -0.0 stays -0.0 (numpy 1.x's sum gives 0.0; equal values).
        assert_median(s, policy, &[-0.0], -0.0);
        assert_median(s, policy, &[-0.0f32, -0.0], -0.0);
    }
    assert_median(s, NanPolicy::Error, &[u64::MAX], 1.8446744073709552e19);
    assert_median(s, NanPolicy::Error, &[(1i64 << 53) + 1], 9007199254740992.0);
    assert_median(s, NanPolicy::Error, &[i32::MIN, i32::MIN], -2147483648.0);
});

// numpy.median([]) and numpy.nanmedian of all-NaN data are NaN with a warning; kselect's
// functions answer no numbers with Error::EmptyInput under every policy.
backend_test!(median_of_no_numbers_is_an_error, |selector: Selector| {
    let s = &selector;
    for policy in POLICIES {
        assert_median_fails(s, policy, &[] as &[f64], is_empty_input);
        assert_median_fails(s, policy, &[] as &[f32], is_empty_input);
        assert_median_fails(s, policy, &[] as &[i32], is_empty_input);
        assert_median_fails(s, policy, &[] as &[u64], is_empty_input);
    }
    assert_median_fails(s, NanPolicy::Omit, &[NAN, NAN], is_empty_input);
    assert_median_fails(s, NanPolicy::Omit, &[f32::NAN; 9], is_empty_input);
    assert_median(s, NanPolicy::Last, &[f32::NAN; 9], NAN);
});

// numpy.median is NaN when any value is NaN (TestMedian.test_nan_behavior), wherever the NaN
// is; numpy.nanmedian leaves them out.
backend_test!(
    median_with_nan_is_nan_under_last_like_numpy,
    |selector: Selector| {
        let s = &selector;
        let mut arange: Vec<f64> = (0..24).map(f64::from).collect();
        arange[2] = NAN;
        assert_median(s, NanPolicy::Last, &arange, NAN);
        assert_median(s, NanPolicy::Omit, &arange, 12.0);
        assert_median_fails(s, NanPolicy::Error, &arange, |e| {
            matches!(
                e,
                Error::NanInInput {
                    count: 1,
                    first_index: 2
                }
            )
        });
        // The middle values are numbers here; the NaN is the largest value.
        assert_median(s, NanPolicy::Last, &[1.0, 2.0, 3.0, NAN], NAN);
        assert_median(s, NanPolicy::Omit, &[1.0, 2.0, 3.0, NAN], 2.0);
        assert_median(s, NanPolicy::Last, &[f32::NAN, 1.0, 2.0, 3.0, 4.0], NAN);
        assert_median(s, NanPolicy::Last, &[5.0, f32::NAN, 1.0], NAN);
    }
);

// ---------------------------------------------------------------------------------------------
// numpy's own tests (numpy/lib/tests/test_function_base.py::TestMedian and
// test_nanfunctions.py::TestNanFunctions_Median), one slice at a time
// ---------------------------------------------------------------------------------------------

// test_basic, test_axis_keyword, test_overwrite_keyword.
backend_test!(numpy_median_basic_cases, |selector: Selector| {
    let s = &selector;
    let e = NanPolicy::Error;
    assert_median(s, e, &[0i64, 1], 0.5);
    assert_median(s, e, &[0i64, 1, 2, 3, 4, 5], 2.5);
    // arange(6).reshape(2, 3): columns, then rows.
    for (column, want) in [([0i64, 3], 1.5), ([1, 4], 2.5), ([2, 5], 3.5)] {
        assert_median(s, e, &column, want);
    }
    assert_median(s, e, &[0i64, 1, 2], 1.0);
    assert_median(s, e, &[3i64, 4, 5], 4.0);
    let a = [0.0444502, 0.0463301, 0.141249, 0.0606775];
    assert_median(s, e, &a, 0.053503800000000004);
    assert_median(s, e, &[0.0463301, 0.0444502, 0.141249], 0.0463301);
    assert_median(s, e, &[0.0444502, 0.141249, 0.0463301], 0.0463301);
    assert_median(s, NanPolicy::Last, &[0.0444502, NAN, 0.0463301], NAN);
    // a3 = [[2, 3], [0, 1], [6, 7], [4, 5]]: all of it, then its columns.
    assert_median(s, e, &[2i64, 3, 0, 1, 6, 7, 4, 5], 3.5);
    assert_median(s, e, &[2i64, 0, 6, 4], 3.0);
    assert_median(s, e, &[3i64, 1, 7, 5], 4.0);
    // arange(60, dtype=float32), shuffled.
    let mut a4: Vec<f32> = (0..60u8).map(f32::from).collect();
    common::SplitMix64::new(60).shuffle(&mut a4);
    assert_median(s, e, &a4, 29.5);
});

// test_result_values: the rows of _ndat, NaNs omitted; and all of _ndat.
backend_test!(numpy_nanmedian_result_values, |selector: Selector| {
    let ndat = [
        [0.6244, NAN, 0.2692, 0.0116, NAN, 0.1170],
        [0.5351, -0.9403, NAN, 0.2100, 0.4759, 0.2833],
        [NAN, NAN, NAN, 0.1042, NAN, -0.5954],
        [0.1610, NAN, NAN, 0.1859, 0.3146, NAN],
    ];
    let wants = [0.1931, 0.2833, -0.2456, 0.1859];
    for (row, want) in ndat.iter().zip(wants) {
        assert_median(&selector, NanPolicy::Omit, row, want);
        assert_median(&selector, NanPolicy::Last, row, NAN);
    }
    let all: Vec<f64> = ndat.concat();
    assert_median(&selector, NanPolicy::Omit, &all, 0.19795000000000001);
});

// test_float_special, for inf and -inf: slices with infinities and NaNs, NaNs omitted.
backend_test!(
    numpy_nanmedian_float_special_values,
    |selector: Selector| {
        let s = &selector;
        let o = NanPolicy::Omit;
        for sign in [1.0f32, -1.0] {
            let inf = sign * f32::INFINITY;
            let nan = f32::NAN;
            let a = [
                [inf, 7.0, -inf, -9.0],
                [-10.0, nan, nan, 5.0],
                [4.0, nan, nan, inf],
            ];
            let positive = sign > 0.0;
            let all = if positive { 4.5 } else { -2.5 };
            assert_median(s, o, &a.concat(), all);
            let columns = if positive {
                [4.0, 7.0, -INF, 5.0]
            } else {
                [-10.0, 7.0, INF, -9.0]
            };
            for (c, want) in columns.into_iter().enumerate() {
                let column: Vec<f32> = a.iter().map(|row| row[c]).collect();
                assert_median(s, o, &column, want);
            }
            let rows = [-1.0, -2.5, f64::from(inf)];
            for (row, want) in a.iter().zip(rows) {
                assert_median(s, o, row, want);
            }

            let inf = f64::from(inf);
            assert_median(s, o, &[inf, NAN, NAN, NAN], inf);
            assert_median(s, o, &[inf, NAN], inf);
            assert_median(s, o, &[NAN, NAN, inf, NAN, NAN, inf], inf);
            assert_median(s, o, &[NAN, NAN, inf], inf);
            assert_median(s, o, &[inf, inf], inf);
            assert_median(s, o, &[inf; 4], inf);
            // The all-NaN slices (numpy: NaN with a warning).
            assert_median_fails(s, o, &[NAN, NAN], is_empty_input);
            for i in 0..10 {
                for j in 1..10 {
                    let row: Vec<f64> = [vec![NAN; i], vec![inf; j]].concat();
                    assert_median(s, o, &row, inf);
                    assert_median(s, o, &row.repeat(2), inf);
                }
            }
        }
    }
);

/// `n` values of a 64-bit LCG seeded with `seed`: `((state >> 11) % 20011 - 10005) / 64`, NaN
/// where `(state >> 7) % 5 == 0` (as `lcg_values` in `scripts/median_numpy_cases.py`).
fn lcg_values(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if (state >> 7).is_multiple_of(5) {
                NAN
            } else {
                (((state >> 11) % 20011) as f64 - 10005.0) / 64.0
            }
        })
        .collect()
}

// test_small_large: numpy's small and large code paths, NaNs omitted.
backend_test!(
    numpy_nanmedian_small_and_large_inputs,
    |selector: Selector| {
        for (n, want) in [
            (5, 111.421875),
            (20, -36.3125),
            (51, -14.203125),
            (200, -2.140625),
            (1000, -9.34375),
        ] {
            let mut data = lcg_values(n, n as u64);
            data[0] = 1.0;
            assert_median(&selector, NanPolicy::Omit, &data, want);
        }
    }
);

// test_scalar: numpy.nanmedian(0.) == 0.
backend_test!(numpy_nanmedian_of_zero, |selector: Selector| {
    for policy in POLICIES {
        assert_median(&selector, policy, &[0.0], 0.0);
    }
});

// ---------------------------------------------------------------------------------------------
// Large inputs (several threads, every algorithm) against a sort
// ---------------------------------------------------------------------------------------------

/// numpy's mean of two sorted f64 values (no overflow in these data).
fn sorted_median(data: &[f64]) -> f64 {
    let mut numbers: Vec<f64> = data.iter().copied().filter(|x| !x.is_nan()).collect();
    numbers.sort_by(f64::total_cmp);
    let n = numbers.len();
    (numbers[(n - 1) / 2] + numbers[n / 2]) / 2.0
}

backend_test!(
    median_of_large_inputs_is_the_mean_of_a_sorts_middle_values,
    |selector: Selector| {
        for n in [200_000, 200_001] {
            let mut rng = common::SplitMix64::new(n as u64);
            let data: Vec<f64> = (0..n)
                .map(|_| {
                    if rng.chance(0.01) {
                        NAN
                    } else {
                        rng.normal() * 1e3
                    }
                })
                .collect();
            assert_median(&selector, NanPolicy::Omit, &data, sorted_median(&data));
            assert_median(&selector, NanPolicy::Last, &data, NAN);
        }
    }
);
