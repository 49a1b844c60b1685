//! Approximate selection (`Selector::select_approximate`): the returned value's rank range is
//! its range in the sorted data, the rank error is within one level's bound, and the NaN policy
//! applies as for exact selection — on every backend.

#[macro_use]
mod common;

use common::{corpus, Reference, TestElement};
use kselect::{DeviceBuffer, Error, NanPolicy, Selector};

/// The ranks `value` occupies in the sorted keys.
fn range_of<T: TestElement>(reference: &Reference<T>, value: T) -> (usize, usize) {
    let key = value.to_key();
    // The first rank whose key is not below `key` (`strict`: not above it).
    let first = |strict: bool| {
        let (mut a, mut b) = (0, reference.len());
        while a < b {
            let mid = (a + b) / 2;
            let k = reference.key(mid);
            if k < key || (strict && k == key) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        a
    };
    (first(false), first(true))
}

/// Checks every corpus case of `n` values of type `T` at a few ranks.
fn check_type<T: TestElement>(selector: &Selector, n: usize) {
    for case in corpus::<T>(n) {
        for policy in [NanPolicy::Last, NanPolicy::Omit] {
            let reference = match policy {
                NanPolicy::Omit => Reference::without_nan(&case.data),
                _ => Reference::new(&case.data),
            };
            let len = reference.len();
            if len == 0 {
                continue;
            }
            let sel = selector.clone().nan_policy(policy);
            let device_buf = if selector.device().is_cuda() {
                Some(DeviceBuffer::from_host(selector.device(), &case.data).unwrap())
            } else {
                None
            };
            for k in [0, len / 10, len / 2, len - 1] {
                let context = format!(
                    "{} {} {policy:?} k={k}",
                    selector.device().backend_name(),
                    case.label()
                );
                let a = sel
                    .select_approximate(&case.data, k)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                assert_eq!(a.k, k, "{context}");
                let (lo, hi) = range_of(&reference, a.value);
                assert!(lo < hi, "{context}: {:?} is not in the data", a.value);
                assert_eq!((a.rank_lo, a.rank_hi), (lo, hi), "{context}: {a:?}");
                assert!(a.rank_lo < len, "{context}: {a:?} beyond the ranks");
                assert!(a.rank_error() <= n / 32 + 1, "{context}: {a:?}");
                if n <= 2048 {
                    assert!(a.is_exact(), "{context}: small inputs are exact: {a:?}");
                    reference.check(a.value, k, &|| context.clone());
                }
                if let Some(buf) = &device_buf {
                    let d = sel
                        .select_approximate(buf, k)
                        .unwrap_or_else(|e| panic!("{context} (device-resident): {e}"));
                    assert_eq!(d.rank_lo, a.rank_lo, "{context} (device-resident)");
                }
            }
        }
    }
}

backend_test!(ranges_match_a_sort, |selector: Selector| {
    for n in [1, 2, 33, 2048, 2049, 4097, 65537] {
        check_type::<f32>(&selector, n);
        check_type::<f64>(&selector, n);
        check_type::<i32>(&selector, n);
        check_type::<i64>(&selector, n);
        check_type::<u32>(&selector, n);
        check_type::<u64>(&selector, n);
    }
    check_type::<f32>(&selector, 300_000);
    check_type::<u64>(&selector, 300_000);
});

backend_test!(errors_follow_the_nan_policy, |selector: Selector| {
    let mut data: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
    assert!(matches!(
        selector.select_approximate::<f64>(&[], 0),
        Err(Error::EmptyInput)
    ));
    assert!(matches!(
        selector.select_approximate(&data, 10_000),
        Err(Error::RankOutOfRange { .. })
    ));
    data[17] = f64::NAN;
    assert!(matches!(
        selector.select_approximate(&data, 5),
        Err(Error::NanInInput { .. })
    ));
    let omit = selector.clone().nan_policy(NanPolicy::Omit);
    assert!(matches!(
        omit.select_approximate(&data, 9_999),
        Err(Error::RankOutOfRange { .. })
    ));
    let a = omit.select_approximate(&data, 9_998).unwrap();
    assert!(!a.value.is_nan());
    let only_nan = vec![f32::NAN; 5000];
    assert!(matches!(
        omit.select_approximate(&only_nan, 0),
        Err(Error::EmptyInput)
    ));
    let last = selector.clone().nan_policy(NanPolicy::Last);
    let a = last.select_approximate(&only_nan, 4000).unwrap();
    assert!(a.value.is_nan() && a.is_exact() && (a.rank_lo, a.rank_hi) == (0, 5000));
});

backend_test!(
    mostly_nan_under_omit_gives_a_number,
    |selector: Selector| {
        // The sample may hold NaNs only: the answer must still be one of the numbers.
        let mut data = vec![f32::NAN; 100_000];
        for (i, x) in data.iter_mut().enumerate().step_by(997) {
            *x = i as f32;
        }
        let numbers = data.iter().filter(|x| !x.is_nan()).count();
        let omit = selector.clone().nan_policy(NanPolicy::Omit);
        for k in [0, numbers / 2, numbers - 1] {
            let a = omit.select_approximate(&data, k).unwrap();
            assert!(!a.value.is_nan(), "k={k}: {a:?}");
            assert!(a.rank_hi <= numbers, "k={k}: {a:?}");
            assert_eq!(a.rank_lo, (a.value as usize).div_ceil(997), "k={k}: {a:?}");
        }
    }
);
