//! Tests of the solvers on host data: exactness on hard inputs, the transform on huge values,
//! and the comparison methods' behaviour.

use argmin::core::{Executor, State};
use argmin::solver::brent::BrentOpt;

use super::*;

/// A deterministic spread of `n` values in `[0, 1)`.
fn uniform(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (i as f64 * 0.618_033_988_749_894_9).fract())
        .collect()
}

/// The exact element by sorting keys.
fn reference<T: crate::Element>(data: &[T], k: usize) -> T {
    let mut keys: Vec<_> = data.iter().map(|x| x.to_key()).collect();
    keys.sort_unstable();
    T::from_key(keys[k])
}

/// Huge outliers: exact under either transform, and the sign-log transform needs few steps.
#[test]
fn outliers_are_exact_and_cheap_when_transformed() {
    let mut data = uniform(200_000);
    for i in 0..5 {
        data[i * 1000] = 1e300;
    }
    data[3] = -1e299;
    let k = data.len() / 2;
    let want = reference(&data, k);
    let (x, plain) = select_host(HostData::new(&data), k, Some(Transform::Identity)).unwrap();
    assert_eq!(x, want);
    let (x, logged) = select_host(HostData::new(&data), k, None).unwrap();
    assert_eq!(x, want);
    assert_eq!(logged.transform, Some(Transform::SignLog));
    assert!(logged.reductions <= 12, "{logged:?}");
    assert!(
        logged.reductions <= plain.reductions,
        "{logged:?} vs {plain:?}"
    );
}

/// Kelley without the hybrid finds the minimiser itself, exactly, on every rank tried.
#[test]
fn kelley_alone_finds_the_minimiser() {
    let data = uniform(10_001);
    for k in [0, 1, 17, 5000, 9999, 10_000] {
        let p = CheckLoss::new(HostData::new(&data), k).unwrap();
        let solver = Kelley::new(p.lower(), p.upper());
        let r = Executor::new(p, solver)
            .configure(|s| s.max_iters(200))
            .run()
            .unwrap();
        match r.solver.outcome().unwrap() {
            Outcome::Minimiser { y, .. } => assert_eq!(y, reference(&data, k)),
            other => panic!("k = {k}: {other:?}"),
        }
    }
}

/// How far in ranks Brent's method, run for at most `iters` steps on the untransformed
/// objective, ends from the element of rank `k` of `data`.
fn brent_rank_gap(data: &[f64], k: usize, iters: u64) -> usize {
    let p = CheckLoss::new(HostData::new(data), k)
        .unwrap()
        .with_transform(Transform::Identity);
    let solver = BrentOpt::new(p.lower(), p.upper()).set_tolerance(1e-8, 1e-12);
    let r = Executor::new(p, solver)
        .configure(|s| s.max_iters(iters))
        .run()
        .unwrap();
    let y = *r.state.get_best_param().unwrap();
    r.problem.problem.unwrap().rank_gap(y).unwrap()
}

/// Brent's method gives an approximate point; on huge outliers it does not reach the answer.
#[test]
fn brent_is_approximate_and_degrades_on_outliers() {
    let data = uniform(10_000);
    assert!(brent_rank_gap(&data, 5000, 200) <= 2);

    let mut data = uniform(10_000);
    data[0] = 1e300;
    assert!(brent_rank_gap(&data, 5000, 50) > 0);
}

/// Bisection on the subgradient converges on plain data and needs many steps on outliers.
#[test]
fn bisection_steps_grow_with_the_range() {
    let mut data = uniform(10_000);
    let run = |data: &[f64]| {
        let p = CheckLoss::new(HostData::new(data), 5000).unwrap();
        let solver = Bisection::new(p.lower(), p.upper(), 0.0);
        let r = Executor::new(p, solver)
            .configure(|s| s.max_iters(3000))
            .run()
            .unwrap();
        let y = *r.state.get_param().unwrap();
        let p = r.problem.problem.unwrap();
        (p.rank_gap(y).unwrap(), p.reductions())
    };
    let (gap, plain) = run(&data);
    assert_eq!(gap, 0);
    data[0] = 1e300;
    let (gap, outlier) = run(&data);
    assert_eq!(gap, 0);
    assert!(outlier > plain + 500, "{outlier} vs {plain}");
}

/// Every rank of small inputs with ties, zeros and non-finite values.
#[test]
fn every_rank_of_small_hard_inputs() {
    let inputs: Vec<Vec<f64>> = vec![
        vec![0.0, -0.0, 0.0, -0.0, 1.0, -1.0],
        vec![f64::NEG_INFINITY, 1.0, f64::NAN, 2.0, f64::INFINITY, 2.0],
        vec![5.0; 9],
        vec![-f64::MAX, f64::MAX, 0.0, 1e-310, -1e-310],
        vec![1e300, 1e300, 1.0, 2.0, 3.0, -1e300],
    ];
    for data in &inputs {
        for k in 0..data.len() {
            let (x, _) = select_host(HostData::new(data), k, None).unwrap();
            assert_eq!(
                x.to_bits(),
                reference(data, k).to_bits(),
                "{data:?} k = {k}"
            );
            let (x, _) = select_host(HostData::new(data), k, Some(Transform::Identity)).unwrap();
            assert_eq!(
                x.to_bits(),
                reference(data, k).to_bits(),
                "{data:?} k = {k}"
            );
        }
    }
    let wide: Vec<u64> = (0..3000).map(|i| u64::MAX - (i % 5) * 3).collect();
    for k in [0, 600, 1200, 2999] {
        assert_eq!(
            select_host(HostData::new(&wide), k, None).unwrap().0,
            reference(&wide, k)
        );
    }
    let wide: Vec<i64> = (0..3000).map(|i| i64::MIN + (i % 5)).collect();
    for k in [0, 600, 1200, 2999] {
        assert_eq!(
            select_host(HostData::new(&wide), k, None).unwrap().0,
            reference(&wide, k)
        );
    }
}

/// Each failure of the search is its own [`CuttingPlaneError`], with its numbers.
#[test]
fn failures_are_cutting_plane_errors() {
    use super::problem::Exact;
    use crate::Error;
    let cut = |r: crate::Result<_>| match r {
        Err(Error::CuttingPlane(e)) => e,
        other => panic!("expected a CuttingPlaneError, got {other:?}"),
    };
    // Nothing to minimise: one point, or a rank on a non-finite value.
    let single = [2.0f64; 4];
    assert_eq!(
        cut(CheckLoss::new(HostData::new(&single), 1).map(|_| ())),
        CuttingPlaneError::NoSearch { k: 1 }
    );
    let with_inf = [1.0, 2.0, 3.0, f64::INFINITY];
    assert_eq!(
        cut(CheckLoss::new(HostData::new(&with_inf), 3).map(|_| ())),
        CuttingPlaneError::NoSearch { k: 3 }
    );
    // The objective at a point that is not finite.
    let data = uniform(100);
    let problem = CheckLoss::new(HostData::new(&data), 50).unwrap();
    let err = cut(problem.evaluate(f64::NEG_INFINITY).map(|_| ()));
    assert_eq!(
        err,
        CuttingPlaneError::NonFinitePoint {
            y: f64::NEG_INFINITY
        }
    );
    assert!(err.to_string().contains("not -inf"), "{err}");
    // The solver's own errors, and kselect's errors back through it.
    let err = cut(Err(from_argmin(argmin::core::Error::msg("diverged"))));
    assert_eq!(
        err,
        CuttingPlaneError::Solver {
            message: "diverged".to_string()
        }
    );
    assert!(matches!(
        from_argmin(problem::to_argmin(Error::EmptyInput)),
        Error::EmptyInput
    ));
    // Finishing outside the values: an empty bracket, a minimiser no value equals.
    let host = HostData::new(&data);
    let err = cut(host.between(2.0, 3.0, 0, 4, 0).map(|_| ()));
    assert_eq!(
        err,
        CuttingPlaneError::RankOutsideBracket { rank: 4, count: 0 }
    );
    assert!(err.to_string().contains("rank 4"), "{err}");
    assert_eq!(
        cut(host.at(2.5, 0, 0, 1).map(|_| ())),
        CuttingPlaneError::NoValueAtMinimiser { y: 2.5 }
    );
    assert_eq!(
        Error::from(CuttingPlaneError::ProblemLost).to_string(),
        "invalid argument: the cutting-plane problem was lost"
    );
}
