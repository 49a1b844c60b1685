//! Sparse recovery: every algorithm recovers k-sparse signals well inside the recovery region,
//! in f32 and f64; the stopping rules, the edge cases and the errors.

#[macro_use]
mod common;

use common::recovery::{
    assert_close_to_scale, assert_recovered_as_alone, measure, products, recovery_error,
    relative_error,
};
use common::SplitMix64;
use kselect::recovery::{
    sparse_signal, Algorithm, DeviceOperator, Ensemble, LinearOperator, Real, Recovery, SignalKind,
    Solver, StopReason, ALGORITHMS,
};
use kselect::RecoveryError;

/// A dense Gaussian matrix, N(0, 1/m) entries, row-major.
struct Gaussian<T> {
    a: Vec<T>,
    m: usize,
    n: usize,
}

fn uniform(rng: &mut SplitMix64) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

fn normal(rng: &mut SplitMix64) -> f64 {
    let (u1, u2) = (uniform(rng), uniform(rng));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

impl<T: Real> Gaussian<T> {
    fn new(m: usize, n: usize, seed: u64) -> Gaussian<T> {
        let mut rng = SplitMix64::new(seed);
        let scale = 1.0 / (m as f64).sqrt();
        let a = (0..m * n)
            .map(|_| T::of(normal(&mut rng) * scale))
            .collect();
        Gaussian { a, m, n }
    }
}

impl<T: Real> LinearOperator<T> for Gaussian<T> {
    fn shape(&self) -> (usize, usize) {
        (self.m, self.n)
    }
    fn apply(&self, x: &[T], y: &mut [T]) {
        for (i, y) in y.iter_mut().enumerate() {
            let row = &self.a[i * self.n..(i + 1) * self.n];
            *y = row
                .iter()
                .zip(x)
                .fold(T::zero(), |acc, (&a, &b)| acc + a * b);
        }
    }
    fn adjoint(&self, y: &[T], x: &mut [T]) {
        x.iter_mut().for_each(|v| *v = T::zero());
        for (i, &yi) in y.iter().enumerate() {
            let row = &self.a[i * self.n..(i + 1) * self.n];
            for (x, &a) in x.iter_mut().zip(row) {
                *x += a * yi;
            }
        }
    }
}

/// A k-sparse signal: k distinct positions, N(0, 1) or +-1 values.
fn signal<T: Real>(n: usize, k: usize, signs: bool, seed: u64) -> Vec<T> {
    let mut rng = SplitMix64::new(seed);
    let mut positions: Vec<usize> = (0..n).collect();
    for i in 0..k {
        let j = i + (rng.next_u64() % (n - i) as u64) as usize;
        positions.swap(i, j);
    }
    let mut x = vec![T::zero(); n];
    for &i in &positions[..k] {
        let v = if signs {
            if rng.next_u64() & 1 == 0 {
                1.0
            } else {
                -1.0
            }
        } else {
            normal(&mut rng)
        };
        x[i] = T::of(v);
    }
    x
}

fn support_of<T: Real>(x: &[T]) -> Vec<usize> {
    (0..x.len()).filter(|&i| x[i] != T::zero()).collect()
}

fn check_recovery<T: Real>(found: &Recovery<T>, x: &[T], bound: f64, what: &str) {
    assert!(
        found.stop.is_success(),
        "{what}: stopped by {} after {} iterations, residuals ending {:?}",
        found.stop,
        found.iterations,
        &found.residuals[found.residuals.len().saturating_sub(3)..]
    );
    let err = relative_error(&found.solution, x);
    assert!(err < bound, "{what}: relative error {err:e}");
    assert_eq!(found.support, support_of(x), "{what}: support");
    assert_eq!(found.residuals.len(), found.iterations + 1, "{what}");
}

/// Measures `x` with `op`, solves for it by `algorithm` with `k` nonzeros, and checks the
/// recovery (see [`check_recovery`]).
fn recovers<T: Real>(
    op: &dyn LinearOperator<T>,
    (algorithm, k): (Algorithm, usize),
    x: &[T],
    bound: f64,
    what: &str,
) {
    let y = measure(op, x);
    let found = Solver::new(algorithm, k).solve(op, &y).unwrap();
    check_recovery(&found, x, bound, what);
}

fn recovers_well_inside_the_region<T: Real>(bound: f64) {
    // n = 256, m = 128 (delta = 1/2), k = 12 (rho < 0.1): every algorithm recovers; plain
    // IHT, whose step 1 / |A|^2 is short (about 0.17 here), within a smaller region: k = 5.
    let (m, n) = (128, 256);
    let op = Gaussian::<T>::new(m, n, 7);
    for (trial, signs) in [(0, false), (1, true), (2, false), (3, true)] {
        for algorithm in ALGORITHMS {
            let k = if algorithm == Algorithm::Iht { 5 } else { 12 };
            let x = signal::<T>(n, k, signs, 100 + trial);
            let what = format!("{algorithm}, trial {trial}, signs {signs}");
            recovers(&op, (algorithm, k), &x, bound, &what);
        }
    }
}

typed_tests!(recovers_well_inside_the_region:
    every_algorithm_recovers_f64 = f64(1e-8),
    every_algorithm_recovers_f32 = f32(1e-3),
);

/// Calls `check(algorithm, k, x, what)` for each algorithm and a signal `x` of each kind
/// (seeds from `seed` on) for an `ensemble` operator of `n` columns: `k` = 16 nonzeros, 6 for
/// plain IHT, whose step 1 / |A|^2 keeps it in a smaller region. With the sparse matrices
/// (nonnegative entries) |A|^2 is the mean direction's, about 14 for 256 x 512, and the step
/// too short to leave the first support: IHT is not run there.
fn for_each_problem<T: Real>(
    ensemble: Ensemble,
    n: usize,
    seed: u64,
    mut check: impl FnMut(Algorithm, usize, &[T], &str),
) {
    for (trial, kind) in [SignalKind::Gaussian, SignalKind::Sign]
        .into_iter()
        .enumerate()
    {
        for algorithm in ALGORITHMS {
            if (algorithm, ensemble.name()) == (Algorithm::Iht, "sparse") {
                continue;
            }
            let k = if algorithm == Algorithm::Iht { 6 } else { 16 };
            let x = sparse_signal::<T>(n, k, kind, seed + trial as u64).unwrap();
            check(
                algorithm,
                k,
                &x,
                &format!("{ensemble}, {kind} signal, {algorithm}"),
            );
        }
    }
}

fn every_ensemble_recovers<T: Real>(bound: f64) {
    let (m, n) = (256, 512);
    for ensemble in [
        Ensemble::Gaussian,
        Ensemble::Sign,
        Ensemble::Dct,
        Ensemble::Sparse { d: 7 },
    ] {
        let op = ensemble.generate::<T>(m, n, 11).unwrap();
        for_each_problem::<T>(ensemble, n, 500, |algorithm, k, x, what| {
            recovers(&op, (algorithm, k), x, bound, what);
        });
    }
}

typed_tests!(every_ensemble_recovers:
    every_ensemble_recovers_f64 = f64(1e-8),
    every_ensemble_recovers_f32 = f32(1e-3),
);

#[test]
fn a_batch_equals_single_solves() {
    let (m, n, k) = (64, 128, 5);
    let op = Gaussian::<f64>::new(m, n, 3);
    let mut ys = Vec::new();
    for t in 0..6 {
        ys.extend(measure(&op, &signal::<f64>(n, k, t % 2 == 0, 40 + t)));
    }
    for algorithm in ALGORITHMS {
        let solver = Solver::new(algorithm, k);
        let batch = solver.solve_many(&op, &ys).unwrap();
        for (t, found) in batch.iter().enumerate() {
            let alone = solver.solve(&op, &ys[t * m..(t + 1) * m]).unwrap();
            assert_eq!(found, &alone, "{algorithm}, problem {t}");
        }
    }
}

#[test]
fn edge_cases_have_defined_results() {
    let op = Gaussian::<f64>::new(20, 40, 1);
    let x = signal::<f64>(40, 3, false, 9);
    let y = measure(&op, &x);
    // k = 0: zero, said so.
    let found = Solver::new(Algorithm::Niht, 0).solve(&op, &y).unwrap();
    assert_eq!(found.solution, vec![0.0; 40]);
    assert_eq!(found.stop, StopReason::ZeroSparsity);
    // y = 0: zero, converged at once.
    for algorithm in ALGORITHMS {
        let found = Solver::new(algorithm, 3).solve(&op, &[0.0; 20]).unwrap();
        assert_eq!((found.solution, found.iterations), (vec![0.0; 40], 0));
        assert_eq!(found.stop, StopReason::Converged);
    }
    // k = n: every entry free (underdetermined), a defined stop and finite values.
    for algorithm in ALGORITHMS {
        let found = Solver::new(algorithm, 40)
            .max_iterations(50)
            .solve(&op, &y)
            .unwrap();
        assert!(found.solution.iter().all(|v| v.is_finite()), "{algorithm}");
        assert!(found.support.len() <= 40);
    }
    // The iteration limit.
    let found = Solver::new(Algorithm::Iht, 3)
        .max_iterations(2)
        .solve(&op, &y)
        .unwrap();
    assert_eq!(found.stop, StopReason::MaxIterations);
    assert_eq!(found.iterations, 2);
}

#[test]
fn bad_input_is_a_clear_error() {
    let op = Gaussian::<f32>::new(4, 8, 1);
    let solver = Solver::new(Algorithm::Niht, 2);
    let e = recovery_error(solver.solve(&op, &[0.0; 3]));
    assert_eq!(e, RecoveryError::Measurements { given: 3, m: 4 });
    assert!(e
        .to_string()
        .contains("3 measurements given for an operator of 4 rows"));
    let e = recovery_error(solver.solve(&op, &[0.0, f32::INFINITY, 0.0, 0.0]));
    let want = RecoveryError::NonFiniteMeasurement {
        index: 1,
        problem: None,
        value: f64::INFINITY,
    };
    assert_eq!(e, want);
    assert!(e.to_string().contains("measurement 1 is inf"), "{e}");
    let e = recovery_error(Solver::new(Algorithm::Htp, 9).solve(&op, &[0.0; 4]));
    assert_eq!(e, RecoveryError::Sparsity { k: 9, n: 8 });
    let e = recovery_error(solver.clone().tolerance(0.0).solve(&op, &[1.0; 4]));
    let want = RecoveryError::OutOfRange {
        setting: "the tolerance",
        value: 0.0,
        range: "positive and finite",
    };
    assert_eq!(e, want);
    let step = Solver::new(Algorithm::Iht, 2).step(f64::NAN);
    match recovery_error(step.solve(&op, &[1.0; 4])) {
        RecoveryError::OutOfRange { setting, value, .. } => {
            assert!(setting == "the step" && value.is_nan())
        }
        e => panic!("{e:?}"),
    }
    let e = recovery_error(solver.solve_many(&op, &[0.0; 6]));
    assert_eq!(e, RecoveryError::WholeProblems { len: 6, m: 4 });
    let mut ys = vec![0.0f32; 8];
    ys[6] = f32::NAN;
    let e = recovery_error(solver.solve_many(&op, &ys));
    let RecoveryError::NonFiniteMeasurement {
        index: 2,
        problem: Some(1),
        value,
    } = e
    else {
        panic!("{e:?}")
    };
    assert!(value.is_nan());
    assert!(
        e.to_string().contains("measurement 2 of problem 1 is NaN"),
        "{e}"
    );
}

#[test]
fn far_outside_the_region_the_solvers_stop_for_a_reason() {
    // k close to m: no recovery; every solver stops (not by the iteration limit) and says why.
    let (m, n, k) = (30, 120, 25);
    let op = Gaussian::<f64>::new(m, n, 5);
    let x = signal::<f64>(n, k, false, 77);
    let y = measure(&op, &x);
    for algorithm in ALGORITHMS {
        let found = Solver::new(algorithm, k)
            .max_iterations(3000)
            .solve(&op, &y)
            .unwrap();
        assert!(found.solution.iter().all(|v| v.is_finite()), "{algorithm}");
        assert!(found.iterations <= 3000, "{algorithm}");
        assert!(
            relative_error(&found.solution, &x) > 1e-3 || found.stop.is_success(),
            "{algorithm}"
        );
    }
}

fn the_gpu_recovers_as_the_cpu<T: Real>(bound: f64) {
    let Some(device) = common::cuda_device() else {
        eprintln!("skipped (no CUDA device)");
        return;
    };
    let (m, n) = (256, 512);
    for ensemble in [
        Ensemble::Gaussian,
        Ensemble::Sign,
        Ensemble::Sparse { d: 7 },
    ] {
        let op = ensemble.generate::<T>(m, n, 21).unwrap();
        let on_gpu = DeviceOperator::upload(&op, &device).unwrap();
        assert_eq!(on_gpu.shape(), (m, n));
        for_each_problem::<T>(ensemble, n, 700, |algorithm, k, x, what| {
            let y = measure(&op, x);
            let solver = Solver::new(algorithm, k);
            let gpu = solver.solve_on(&on_gpu, &y).unwrap();
            let what = format!("{what} on the GPU");
            check_recovery(&gpu, x, bound, &what);
            let cpu = solver.solve(&op, &y).unwrap();
            assert_eq!(gpu.support, cpu.support, "{what}: support as on the CPU");
        });
    }
    // A batch of problems on the device, and the errors.
    let op = Ensemble::Gaussian.generate::<T>(64, 128, 3).unwrap();
    let on_gpu = DeviceOperator::upload(&op, &device).unwrap();
    let solver = Solver::new(Algorithm::Niht, 4);
    let e = recovery_error(solver.solve_on(&on_gpu, &[T::zero(); 63]));
    assert_eq!(e, RecoveryError::Measurements { given: 63, m: 64 });
    let zero = solver.solve_on(&on_gpu, &[T::zero(); 64]).unwrap();
    assert_eq!((zero.iterations, zero.stop), (0, StopReason::Converged));
}

typed_tests!(the_gpu_recovers_as_the_cpu:
    the_gpu_recovers_as_the_cpu_f64 = f64(1e-8),
    the_gpu_recovers_as_the_cpu_f32 = f32(1e-3),
);

#[test]
fn an_operator_is_uploaded_to_a_cuda_device_only() {
    let op = Ensemble::Gaussian.generate::<f64>(8, 16, 1).unwrap();
    let e = recovery_error(DeviceOperator::upload(&op, &kselect::Device::Cpu));
    let RecoveryError::NotCuda { what, .. } = e else {
        panic!("{e:?}")
    };
    assert_eq!(what, "DeviceOperator::upload");
    assert!(e.to_string().contains("CUDA device"), "{e}");
}

#[test]
fn least_squares_in_f32_does_not_blow_up_on_nearly_dependent_columns() {
    // Subspace pursuit's first least squares once diverged here (residual 9e6) in f32: the
    // conjugate gradients went on below the type's precision. Steps that raise the residual
    // are now undone.
    let op = Ensemble::Sparse { d: 7 }
        .generate::<f32>(256, 512, 21)
        .unwrap();
    let x = sparse_signal::<f32>(512, 16, SignalKind::Sign, 701).unwrap();
    for algorithm in [
        Algorithm::SubspacePursuit,
        Algorithm::Htp,
        Algorithm::Cosamp,
    ] {
        recovers(&op, (algorithm, 16), &x, 1e-3, &format!("{algorithm}"));
    }
}

fn device_products_equal_the_cpu<T: Real>(tol: f64) {
    let Some(device) = common::cuda_device() else {
        eprintln!("skipped (no CUDA device)");
        return;
    };
    let mut cases = vec![];
    for n in [1usize, 2, 3, 5, 8, 100, 1024, 1000] {
        cases.push((Ensemble::Dct, n.div_ceil(3).max(1), n));
    }
    cases.push((Ensemble::Dct, 1024, 1024));
    cases.push((Ensemble::Gaussian, 33, 70));
    cases.push((Ensemble::Sparse { d: 3 }, 40, 90));
    for (ensemble, m, n) in cases {
        let op = ensemble.generate::<T>(m, n, 5).unwrap();
        let on_gpu = DeviceOperator::upload(&op, &device).unwrap();
        let x = sparse_signal::<T>(n, n.div_ceil(2), SignalKind::Gaussian, 9).unwrap();
        let y = sparse_signal::<T>(m, m.div_ceil(2), SignalKind::Gaussian, 10).unwrap();
        let (ax, aty) = products(&op, &x, &y);
        let xd = kselect::DeviceBuffer::from_host(&device, &x).unwrap();
        let yd = kselect::DeviceBuffer::from_host(&device, &y).unwrap();
        let mut axd = kselect::DeviceBuffer::from_host(&device, &vec![T::zero(); m]).unwrap();
        let mut atyd = kselect::DeviceBuffer::from_host(&device, &vec![T::zero(); n]).unwrap();
        on_gpu.apply(&xd, &mut axd).unwrap();
        on_gpu.adjoint(&yd, &mut atyd).unwrap();
        let close = |a: &[T], b: &[T], what: &str| {
            assert_close_to_scale(a, b, tol, &format!("{ensemble} {m} x {n} {what}"));
        };
        close(&axd.to_host().unwrap(), &ax, "A x");
        close(&atyd.to_host().unwrap(), &aty, "A^T y");
        if m != n {
            let e = recovery_error(on_gpu.apply(&yd, &mut axd));
            let want = RecoveryError::ProductLength {
                m,
                n,
                len_in: n,
                len_out: m,
                input: m,
                output: m,
            };
            assert_eq!(e, want);
        }
    }
}

typed_tests!(device_products_equal_the_cpu:
    device_products_equal_the_cpu_f64 = f64(1e-12),
    device_products_equal_the_cpu_f32 = f32(1e-5),
);

fn a_gpu_batch_solves_each_problem_as_alone<T: Real>(tol: f64) {
    let Some(device) = common::cuda_device() else {
        eprintln!("skipped (no CUDA device)");
        return;
    };
    let (m, n, count) = (128, 256, 24);
    for ensemble in [Ensemble::Gaussian, Ensemble::Sparse { d: 7 }, Ensemble::Dct] {
        let op = ensemble.generate::<T>(m, n, 31).unwrap();
        let on_gpu = DeviceOperator::upload(&op, &device).unwrap();
        for algorithm in [Algorithm::Niht, Algorithm::Iht, Algorithm::Htp] {
            if (algorithm, ensemble.name()) == (Algorithm::Iht, "sparse") {
                continue;
            }
            let k = if algorithm == Algorithm::Iht { 4 } else { 10 };
            // Problems of every sparsity up to well past the region, and one of y = 0.
            let mut ys = vec![T::zero(); count * m];
            let mut signals = Vec::new();
            for (p, y) in ys.chunks_mut(m).enumerate() {
                let nonzeros = match p {
                    5 => 0,
                    _ if p % 4 == 0 => k / 2,
                    _ if p % 4 == 1 => k,
                    _ => 1 + p % (3 * k),
                };
                let kind = [SignalKind::Gaussian, SignalKind::Sign][p % 2];
                let x = sparse_signal::<T>(n, nonzeros, kind, 900 + p as u64).unwrap();
                y.copy_from_slice(&measure(&op, &x));
                signals.push((nonzeros, x));
            }
            let solver = Solver::new(algorithm, k).max_iterations(800);
            let batch = solver.solve_many_on(&on_gpu, &ys).unwrap();
            assert_eq!(batch.len(), count);
            for (p, (found, (nonzeros, x))) in batch.iter().zip(&signals).enumerate() {
                let what = format!("{ensemble} {algorithm} problem {p} of the batch");
                let alone = solver.solve_on(&on_gpu, &ys[p * m..(p + 1) * m]).unwrap();
                assert_eq!(found.solution.len(), n, "{what}");
                assert!(found.support.len() <= k, "{what}");
                assert_eq!(found.residuals.len(), found.iterations + 1, "{what}");
                if *nonzeros == 0 {
                    assert_eq!(found, &alone, "{what}");
                    assert!(found.solution.iter().all(|v| *v == T::zero()), "{what}");
                } else if *nonzeros <= k / 2 {
                    // Well inside the region: recovered, as alone.
                    let bound = if tol < 1e-9 { 1e-8 } else { 1e-3 };
                    let within = (bound, tol);
                    assert_recovered_as_alone((found, &alone), x, within, (&what, "batch"));
                    if *nonzeros == k / 2 && k / 2 > 0 && algorithm != Algorithm::Htp {
                        // The entries kept beyond the signal's are rounding noise, where a
                        // product in another order may choose others: the signal's are kept.
                        let signal = support_of(x);
                        assert!(signal.iter().all(|i| found.support.contains(i)), "{what}");
                    }
                }
                if *nonzeros == k {
                    // Exactly k nonzeros: the same support, stop and iterations as alone.
                    assert_eq!(found.support, alone.support, "{what}");
                    assert_eq!(found.stop, alone.stop, "{what}");
                    assert_eq!(found.iterations, alone.iterations, "{what}");
                }
            }
        }
    }
    // Every problem stopped at once, and the errors of a batch.
    let op = Ensemble::Gaussian.generate::<T>(16, 32, 3).unwrap();
    let on_gpu = DeviceOperator::upload(&op, &device).unwrap();
    let solver = Solver::new(Algorithm::Niht, 3);
    let zeros = solver.solve_many_on(&on_gpu, &[T::zero(); 48]).unwrap();
    assert!(zeros
        .iter()
        .all(|z| z.stop == StopReason::Converged && z.iterations == 0));
    assert!(solver.solve_many_on(&on_gpu, &[]).unwrap().is_empty());
    let e = recovery_error(solver.solve_many_on(&on_gpu, &[T::zero(); 17]));
    assert!(
        matches!(e, RecoveryError::WholeProblems { len: 17, .. }),
        "{e}"
    );
    let mut bad = vec![T::one(); 32];
    bad[20] = T::of(f64::NAN);
    let e = recovery_error(solver.solve_many_on(&on_gpu, &bad));
    let problem = Some(1);
    assert!(matches!(e, RecoveryError::NonFiniteMeasurement { problem: p, .. } if p == problem));
    let capped = Solver::new(Algorithm::Niht, 3).max_iterations(0);
    let none = capped.solve_many_on(&on_gpu, &[T::one(); 32]).unwrap();
    let alone = capped.solve_on(&on_gpu, &[T::one(); 16]).unwrap();
    assert_eq!(
        (none[1].stop, none[1].iterations),
        (alone.stop, alone.iterations)
    );
}

typed_tests!(a_gpu_batch_solves_each_problem_as_alone:
    a_gpu_batch_solves_each_problem_as_alone_f64 = f64(1e-9),
    a_gpu_batch_solves_each_problem_as_alone_f32 = f32(1e-4),
);
