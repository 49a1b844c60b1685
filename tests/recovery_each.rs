//! One operator a problem (B operators of one ensemble): `Solver::solve_each` on the CPU and
//! stacks of operators (`DeviceOperator::upload_each`) on a GPU solve each problem as alone, with
//! its own operator; the stacks' products are each member's; mismatched stacks are clear errors.

#[macro_use]
mod common;

use common::recovery::{
    assert_close_to_scale, assert_recovered_as_alone, measure, products, recovery_error,
};
use kselect::recovery::{
    sparse_signal, Algorithm, DeviceOperator, Ensemble, LinearOperator, Operator, OperatorKind,
    PhaseTransition, Real, Recovery, SignalKind, Solver, StopReason, ALGORITHMS,
};
use kselect::{DeviceBuffer, RecoveryError};

/// The error of `given` problems for `operators` operators.
fn problems_for(given: usize, operators: usize) -> RecoveryError {
    RecoveryError::OneEach {
        what: "problems",
        given,
        operators,
    }
}

/// `count` operators of `ensemble`, seeds `seed, seed + 1, ...`.
fn operators<T: Real>(
    ensemble: Ensemble,
    (m, n): (usize, usize),
    count: usize,
    seed: u64,
) -> Vec<Operator<T>> {
    (0..count as u64)
        .map(|c| ensemble.generate::<T>(m, n, seed + c).unwrap())
        .collect()
}

/// Signals of several sparsities (none, k / 2, k and beyond) and their measurements, one for
/// each operator.
fn problems<T: Real>(ops: &[Operator<T>], k: usize, seed: u64) -> (Vec<Vec<T>>, Vec<T>) {
    let n = ops[0].shape().1;
    let mut signals = Vec::new();
    let mut ys = Vec::new();
    for (p, op) in ops.iter().enumerate() {
        let nonzeros = match p % 4 {
            _ if p == 3 => 0,
            0 => k / 2,
            1 => k,
            _ => (1 + p % (3 * k)).min(n),
        };
        let kind = [SignalKind::Gaussian, SignalKind::Sign][p % 2];
        let x = sparse_signal::<T>(n, nonzeros, kind, seed + p as u64).unwrap();
        ys.extend(measure(op, &x));
        signals.push(x);
    }
    (signals, ys)
}

#[test]
fn solve_each_equals_single_solves_on_the_cpu() {
    let (m, n, k) = (40, 100, 5);
    for ensemble in [Ensemble::Gaussian, Ensemble::Dct, Ensemble::Sparse { d: 5 }] {
        let ops = operators::<f64>(ensemble, (m, n), 7, 11);
        let (_, ys) = problems(&ops, k, 60);
        for algorithm in ALGORITHMS {
            let solver = Solver::new(algorithm, k).max_iterations(500);
            let each = solver.solve_each(&ops, &ys).unwrap();
            assert_eq!(each.len(), ops.len());
            for (c, (found, op)) in each.iter().zip(&ops).enumerate() {
                let alone = solver.solve(op, &ys[c * m..(c + 1) * m]).unwrap();
                assert_eq!(found, &alone, "{ensemble} {algorithm}, problem {c}");
            }
        }
    }
}

#[test]
fn solve_each_checks_its_operators_and_problems() {
    let ops = operators::<f64>(Ensemble::Gaussian, (10, 20), 3, 1);
    let solver = Solver::new(Algorithm::Niht, 2);
    let e = recovery_error(solver.solve_each(&ops, &[0.0; 20]));
    assert_eq!(e, problems_for(2, 3));
    assert!(
        e.to_string().contains("2 problems given for 3 operators"),
        "{e}"
    );
    let e = recovery_error(solver.solve_each(&ops, &[0.0; 25]));
    assert_eq!(e, RecoveryError::WholeProblems { len: 25, m: 10 });
    let mut mixed = ops.clone();
    mixed.push(Ensemble::Gaussian.generate::<f64>(10, 21, 9).unwrap());
    let e = recovery_error(solver.solve_each(&mixed, &[0.0; 40]));
    let want = RecoveryError::ShapeMismatch {
        index: 3,
        shape: (10, 21),
        first: (10, 20),
    };
    assert_eq!(e, want);
    assert!(e.to_string().contains("operator 3 is 10 x 21"), "{e}");
    let none: [Operator<f64>; 0] = [];
    assert!(solver.solve_each(&none, &[]).unwrap().is_empty());
    let e = recovery_error(solver.solve_each(&none, &[1.0]));
    assert_eq!(e, RecoveryError::NoOperators { measurements: 1 });
    let mut bad = vec![0.0; 30];
    bad[25] = f64::INFINITY;
    let e = recovery_error(solver.solve_each(&ops, &bad));
    let want = RecoveryError::NonFiniteMeasurement {
        index: 5,
        problem: Some(2),
        value: f64::INFINITY,
    };
    assert_eq!(e, want);
}

/// A stack's products against each member's on the CPU.
fn stack_products_are_each_members<T: Real>(tol: f64) {
    let Some(device) = common::cuda_device() else {
        eprintln!("skipped (no CUDA device)");
        return;
    };
    for (ensemble, m, n) in [
        (Ensemble::Gaussian, 33, 70),
        (Ensemble::Sign, 8, 8),
        (Ensemble::Sparse { d: 3 }, 40, 90),
        (Ensemble::Dct, 100, 1000),
    ] {
        let count = 5;
        let ops = operators::<T>(ensemble, (m, n), count, 40);
        let stack = DeviceOperator::upload_each(&ops, &device).unwrap();
        assert_eq!((stack.shape(), stack.operators()), ((m, n), count));
        let xs: Vec<T> = (0..count)
            .flat_map(|c| {
                sparse_signal::<T>(n, n.div_ceil(2), SignalKind::Gaussian, c as u64).unwrap()
            })
            .collect();
        let ys: Vec<T> = (0..count)
            .flat_map(|c| {
                sparse_signal::<T>(m, m.div_ceil(2), SignalKind::Gaussian, 9 + c as u64).unwrap()
            })
            .collect();
        let xd = DeviceBuffer::from_host(&device, &xs).unwrap();
        let yd = DeviceBuffer::from_host(&device, &ys).unwrap();
        let mut axd = DeviceBuffer::from_host(&device, &vec![T::zero(); count * m]).unwrap();
        let mut atyd = DeviceBuffer::from_host(&device, &vec![T::zero(); count * n]).unwrap();
        stack.apply_many(&xd, &mut axd).unwrap();
        stack.adjoint_many(&yd, &mut atyd).unwrap();
        let (ax, aty) = (axd.to_host().unwrap(), atyd.to_host().unwrap());
        for (c, op) in ops.iter().enumerate() {
            let (want_ax, want_aty) =
                products(op, &xs[c * n..(c + 1) * n], &ys[c * m..(c + 1) * m]);
            for (got, want, what) in [
                (&ax[c * m..(c + 1) * m], &want_ax, "A x"),
                (&aty[c * n..(c + 1) * n], &want_aty, "A^T y"),
            ] {
                assert_close_to_scale(got, want, tol, &format!("{ensemble} member {c} {what}"));
            }
        }
        // One vector too few, and single products, are errors on a stack.
        let mut short =
            DeviceBuffer::from_host(&device, &vec![T::zero(); (count - 1) * m]).unwrap();
        let fewer = DeviceBuffer::from_host(&device, &xs[..(count - 1) * n]).unwrap();
        let e = recovery_error(stack.apply_many(&fewer, &mut short));
        let want = RecoveryError::OneEach {
            what: "vectors",
            given: count - 1,
            operators: count,
        };
        assert_eq!(e, want);
        let one = DeviceBuffer::from_host(&device, &xs[..n]).unwrap();
        let mut out = DeviceBuffer::from_host(&device, &vec![T::zero(); m]).unwrap();
        let e = recovery_error(stack.apply(&one, &mut out));
        assert!(matches!(e, RecoveryError::Stacked { operators, .. } if operators == count));
        assert!(e.to_string().contains("apply_many"), "{e}");
    }
}

typed_tests!(stack_products_are_each_members:
    stack_products_are_each_members_f64 = f64(1e-12),
    stack_products_are_each_members_f32 = f32(1e-5),
);

/// `found` (from a stack) against `alone` (the same problem solved alone) and the signal `x`
/// of `nonzeros` entries. With `k` nonzeros, the same support, stop and iterations; where `k`
/// is large (the last problems converge slowly, a product in another order may cross the
/// tolerance an iteration or two apart), iterations within 5%.
fn as_alone<T: Real>(
    found: &Recovery<T>,
    alone: &Recovery<T>,
    (x, k, tol): (&[T], usize, f64),
    what: &str,
) {
    let nonzeros = x.iter().filter(|v| v.as_f64() != 0.0).count();
    assert_eq!(found.solution.len(), x.len(), "{what}");
    assert!(found.support.len() <= k, "{what}");
    assert_eq!(found.residuals.len(), found.iterations + 1, "{what}");
    if nonzeros == 0 {
        assert_eq!(found, alone, "{what}");
    } else if nonzeros <= k / 2 {
        let bound = if tol < 1e-6 { 1e-8 } else { 1e-3 };
        assert_recovered_as_alone((found, alone), x, (bound, tol), (what, "stack"));
    }
    if nonzeros == k {
        assert_eq!(found.support, alone.support, "{what}");
        assert_eq!(found.stop, alone.stop, "{what}");
        let slack = if k > 32 { alone.iterations / 20 } else { 0 };
        assert!(
            found.iterations.abs_diff(alone.iterations) <= slack,
            "{what}: {} iterations, {} alone",
            found.iterations,
            alone.iterations
        );
    }
}

fn a_stack_solves_each_problem_as_alone<T: Real>(tol: f64) {
    let Some(device) = common::cuda_device() else {
        eprintln!("skipped (no CUDA device)");
        return;
    };
    let (n, count) = (256, 12);
    // Supports of a quarter of n or fewer read their columns of each dense matrix; k = 70
    // (inside the recovery region with m = 240) takes the batched products.
    for (m, k) in [(128, 4), (128, 10), (240, 70)] {
        for ensemble in [
            Ensemble::Gaussian,
            Ensemble::Sign,
            Ensemble::Sparse { d: 7 },
            Ensemble::Dct,
        ] {
            let ops = operators::<T>(ensemble, (m, n), count, 70);
            let stack = DeviceOperator::upload_each(&ops, &device).unwrap();
            for algorithm in [Algorithm::Niht, Algorithm::Iht, Algorithm::Htp] {
                let sparse = ensemble.name() == "sparse";
                if algorithm == Algorithm::Iht && (sparse || k > 4) {
                    continue;
                }
                let (signals, ys) = problems(&ops, k, 300);
                let solver = Solver::new(algorithm, k).max_iterations(800);
                let found = solver.solve_many_on(&stack, &ys).unwrap();
                assert_eq!(found.len(), count);
                for (c, (f, op)) in found.iter().zip(&ops).enumerate() {
                    let what = format!("{ensemble} {algorithm} k = {k}, problem {c} of a stack");
                    let one = DeviceOperator::upload(op, &device).unwrap();
                    let alone = solver.solve_on(&one, &ys[c * m..(c + 1) * m]).unwrap();
                    as_alone(f, &alone, (&signals[c], k, tol), &what);
                }
            }
        }
    }
}

typed_tests!(a_stack_solves_each_problem_as_alone:
    a_stack_solves_each_problem_as_alone_f64 = f64(1e-9),
    a_stack_solves_each_problem_as_alone_f32 = f32(1e-4),
);

#[test]
fn mismatched_stacks_are_clear_errors() {
    let Some(device) = common::cuda_device() else {
        eprintln!("skipped (no CUDA device)");
        return;
    };
    let e = recovery_error(DeviceOperator::<f32>::upload_each(&[], &device));
    assert!(
        matches!(
            e,
            RecoveryError::Empty {
                item: "operator",
                ..
            }
        ),
        "{e}"
    );
    let mut ops = operators::<f32>(Ensemble::Gaussian, (16, 32), 3, 1);
    ops.push(Ensemble::Dct.generate::<f32>(16, 32, 4).unwrap());
    let e = recovery_error(DeviceOperator::upload_each(&ops, &device));
    let want = RecoveryError::KindMismatch {
        index: 3,
        kind: OperatorKind::Dct,
        first: OperatorKind::Dense,
    };
    assert_eq!(e, want);
    assert!(
        e.to_string().contains("operator 3 is a subsampled DCT"),
        "{e}"
    );
    let mut sparse = operators::<f32>(Ensemble::Sparse { d: 3 }, (16, 32), 2, 1);
    sparse.push(
        Ensemble::Sparse { d: 4 }
            .generate::<f32>(16, 32, 4)
            .unwrap(),
    );
    let e = recovery_error(DeviceOperator::upload_each(&sparse, &device));
    let want = RecoveryError::KindMismatch {
        index: 2,
        kind: OperatorKind::Sparse { d: 4 },
        first: OperatorKind::Sparse { d: 3 },
    };
    assert_eq!(e, want);
    ops.pop();
    ops.push(Ensemble::Gaussian.generate::<f32>(16, 33, 4).unwrap());
    let e = recovery_error(DeviceOperator::upload_each(&ops, &device));
    let want = RecoveryError::ShapeMismatch {
        index: 3,
        shape: (16, 33),
        first: (16, 32),
    };
    assert_eq!(e, want);
    assert!(DeviceOperator::upload_each(&ops[..1], &kselect::Device::Cpu).is_err());
    ops.pop();
    let stack = DeviceOperator::upload_each(&ops, &device).unwrap();
    let solver = Solver::new(Algorithm::Niht, 2);
    let e = recovery_error(solver.solve_many_on(&stack, &[0.0; 32]));
    assert_eq!(e, problems_for(2, 3));
    let e = recovery_error(solver.solve_on(&stack, &[0.0; 16]));
    let want = RecoveryError::Stacked {
        operators: 3,
        instead: "solve_many_on",
    };
    assert_eq!(e, want);
    let zeros = solver.solve_many_on(&stack, &[0.0; 48]).unwrap();
    assert!(zeros
        .iter()
        .all(|z| z.stop == StopReason::Converged && z.iterations == 0));
}

#[test]
fn a_phase_transition_on_the_gpu_counts_as_on_the_cpu() {
    let experiment = PhaseTransition::new(Ensemble::Gaussian, 128)
        .deltas(vec![0.25, 0.5])
        .rhos(vec![0.05, 0.3, 0.6, 0.9])
        .trials(6)
        .algorithms(vec![Algorithm::Niht, Algorithm::Htp]);
    let e = recovery_error(experiment.run_on::<f64>(&kselect::Device::Cpu, &|_, _| {}));
    assert!(matches!(e, RecoveryError::NotCuda { .. }), "{e}");
    assert!(e.to_string().contains("CUDA device"), "{e}");
    let Some(device) = common::cuda_device() else {
        eprintln!("skipped (no CUDA device)");
        return;
    };
    let cpu = experiment.run::<f64>(&|_, _| {}).unwrap();
    let seen = std::sync::Mutex::new(Vec::new());
    let gpu = experiment
        .run_on::<f64>(&device, &|done, total| {
            seen.lock().unwrap().push((done, total))
        })
        .unwrap();
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.last(), Some(&(96, 96)), "{seen:?}");
    for (c, g) in cpu.algorithms.iter().zip(&gpu.algorithms) {
        assert_eq!(c.algorithm, g.algorithm);
        for (a, b) in c.cells.iter().zip(&g.cells) {
            assert_eq!((a.m, a.k, a.trials), (b.m, b.k, b.trials));
            // The same problems: a trial may tip only at the edge of success.
            assert!(
                a.successes.abs_diff(b.successes) <= 1,
                "{} delta {} rho {}: {} on the CPU, {} on the GPU",
                c.algorithm,
                a.delta,
                a.rho,
                a.successes,
                b.successes
            );
        }
        // Well inside the region every trial succeeds, far outside none.
        assert_eq!(g.cells[0].successes, 6, "{}", g.algorithm);
        assert_eq!(g.cells[3].successes, 0, "{}", g.algorithm);
    }
}
