//! The measurement operators of compressed sensing: the DCT against its definition evaluated
//! directly, dense products against plain loops, the adjoint identity `<A x, y> = <x, A^T y>`
//! for every ensemble, the ensembles' documented draws and statistics, determinism from the
//! seed, and the errors of bad arguments.

#[macro_use]
mod common;

use common::recovery::{products, recovery_error};
use common::SplitMix64;
use kselect::recovery::{
    sparse_signal, DenseMatrix, Ensemble, LinearOperator, Operator, Real, SignalKind, SparseBinary,
    SubsampledDct,
};
use kselect::RecoveryError;
use ndarray::Array2;

const ENSEMBLES: [Ensemble; 5] = [
    Ensemble::Gaussian,
    Ensemble::Sign,
    Ensemble::Dct,
    Ensemble::Sparse { d: 7 },
    Ensemble::Sparse { d: 1 },
];

const DCT_LENGTHS: [usize; 8] = [1, 2, 3, 5, 8, 16, 100, 1024];

fn random_vec<T: Real>(rng: &mut SplitMix64, len: usize) -> Vec<T> {
    (0..len).map(|_| T::of(rng.normal())).collect()
}

fn to_f64<T: Real>(v: &[T]) -> Vec<f64> {
    v.iter().map(|&a| kselect::Element::to_f64(a)).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// `|a - b| / |b|` (the Euclidean norms), or `|a - b|` when `b` is 0.
fn relative_error(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let diff: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let scale = norm(b);
    if scale == 0.0 {
        norm(&diff)
    } else {
        norm(&diff) / scale
    }
}

/// `cos(pi (2j + 1) k / (2n))` with the argument reduced exactly modulo a full turn.
fn dct_cos(n: usize, j: usize, k: usize) -> f64 {
    let turns = ((2 * j + 1) * k) % (4 * n);
    (std::f64::consts::PI * turns as f64 / (2.0 * n as f64)).cos()
}

fn dct_scale(n: usize, k: usize) -> f64 {
    if k == 0 {
        (1.0 / n as f64).sqrt()
    } else {
        (2.0 / n as f64).sqrt()
    }
}

/// The orthonormal DCT-II by its definition, `O(n^2)`.
fn direct_dct2(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    (0..n)
        .map(|k| dct_scale(n, k) * (0..n).map(|j| x[j] * dct_cos(n, j, k)).sum::<f64>())
        .collect()
}

/// The orthonormal DCT-III (the transpose of the DCT-II) by its definition.
fn direct_dct3(z: &[f64]) -> Vec<f64> {
    let n = z.len();
    (0..n)
        .map(|j| {
            (0..n)
                .map(|k| dct_scale(n, k) * z[k] * dct_cos(n, j, k))
                .sum::<f64>()
        })
        .collect()
}

fn full_dct<T: Real>(n: usize) -> SubsampledDct<T> {
    SubsampledDct::new(n, (0..n).collect()).unwrap()
}

fn check_dct_against_definition<T: Real>(tolerance: f64) {
    let mut rng = SplitMix64::new(11);
    for n in DCT_LENGTHS {
        let dct = full_dct::<T>(n);
        assert_eq!(dct.shape(), (n, n));
        let x = random_vec::<T>(&mut rng, n);
        let (y, back) = products(&dct, &x, &x);
        let e = relative_error(&to_f64(&y), &direct_dct2(&to_f64(&x)));
        assert!(e < tolerance, "DCT-II of length {n}: relative error {e}");
        let e = relative_error(&to_f64(&back), &direct_dct3(&to_f64(&x)));
        assert!(e < tolerance, "DCT-III of length {n}: relative error {e}");
    }
}

typed_tests!(check_dct_against_definition:
    dct_matches_its_definition_f64 = f64(1e-12),
    dct_matches_its_definition_f32 = f32(1e-5),
);

#[test]
fn dct_of_basis_vectors_is_the_matrix() {
    // Every entry of C for a few lengths, one column at a time.
    for n in [1, 2, 3, 6, 7] {
        let dct = full_dct::<f64>(n);
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            let mut column = vec![0.0; n];
            dct.apply(&e, &mut column);
            for (k, &c) in column.iter().enumerate() {
                let expected = dct_scale(n, k) * dct_cos(n, j, k);
                assert!((c - expected).abs() < 1e-15, "C[{k}][{j}] of length {n}");
            }
        }
    }
}

fn check_full_dct_is_orthonormal<T: Real>(tolerance: f64) {
    let mut rng = SplitMix64::new(12);
    for n in DCT_LENGTHS {
        let dct = full_dct::<T>(n);
        let x = random_vec::<T>(&mut rng, n);
        let mut y = vec![T::zero(); n];
        let mut back = vec![T::zero(); n];
        dct.apply(&x, &mut y);
        dct.adjoint(&y, &mut back);
        let e = relative_error(&to_f64(&back), &to_f64(&x));
        assert!(e < tolerance, "A^T A x of length {n}: relative error {e}");
        // Parseval.
        let e = (norm(&to_f64(&y)) - norm(&to_f64(&x))).abs() / norm(&to_f64(&x));
        assert!(e < tolerance, "|A x| of length {n}: relative error {e}");
    }
}

#[test]
fn full_dct_is_orthonormal() {
    check_full_dct_is_orthonormal::<f64>(1e-12);
    check_full_dct_is_orthonormal::<f32>(1e-5);
}

#[test]
fn subsampled_dct_keeps_its_rows() {
    let mut rng = SplitMix64::new(13);
    for n in [5, 16, 100, 1024] {
        let mut rows: Vec<usize> = (0..n).filter(|_| rng.chance(0.3)).collect();
        if rows.is_empty() {
            rows.push(n - 1);
        }
        let mut shuffled = rows.clone();
        rng.shuffle(&mut shuffled);
        let dct = SubsampledDct::<f64>::new(n, shuffled).unwrap();
        assert_eq!(dct.rows(), &rows[..]);
        assert_eq!(dct.len(), n);
        assert_eq!(dct.shape(), (rows.len(), n));

        let x = random_vec::<f64>(&mut rng, n);
        let mut y = vec![0.0; rows.len()];
        dct.apply(&x, &mut y);
        let full = direct_dct2(&x);
        let expected: Vec<f64> = rows.iter().map(|&r| full[r]).collect();
        assert!(relative_error(&y, &expected) < 1e-12, "A x of length {n}");

        let y = random_vec::<f64>(&mut rng, rows.len());
        let mut x = vec![f64::NAN; n];
        dct.adjoint(&y, &mut x);
        let mut z = vec![0.0; n];
        rows.iter().zip(&y).for_each(|(&r, &v)| z[r] = v);
        assert!(
            relative_error(&x, &direct_dct3(&z)) < 1e-12,
            "A^T y of length {n}"
        );

        // Orthonormal rows: A A^T = I.
        let mut again = vec![0.0; rows.len()];
        dct.apply(&x, &mut again);
        assert!(relative_error(&again, &y) < 1e-12, "A A^T y of length {n}");
    }
}

fn naive_products<T: Real>(
    data: &[T],
    m: usize,
    n: usize,
    x: &[T],
    y: &[T],
) -> (Vec<f64>, Vec<f64>) {
    let a = to_f64(data);
    let (x, y) = (to_f64(x), to_f64(y));
    let mut ax = vec![0.0; m];
    let mut aty = vec![0.0; n];
    for i in 0..m {
        for j in 0..n {
            ax[i] += a[i * n + j] * x[j];
            aty[j] += a[i * n + j] * y[i];
        }
    }
    (ax, aty)
}

fn check_dense_against_loops<T: Real>(tolerance: f64) {
    let mut rng = SplitMix64::new(21);
    for (m, n) in [
        (1, 1),
        (1, 40),
        (40, 1),
        (17, 33),
        (200, 700),
        (700, 30),
        (30, 3000),
    ] {
        let data = random_vec::<T>(&mut rng, m * n);
        let a = DenseMatrix::new(data.clone(), m, n).unwrap();
        assert_eq!((a.rows(), a.cols(), a.shape()), (m, n, (m, n)));
        assert_eq!(a.as_slice(), &data[..]);
        let x = random_vec::<T>(&mut rng, n);
        let y = random_vec::<T>(&mut rng, m);
        let (ax, aty) = products(&a, &x, &y);
        let (ax_ref, aty_ref) = naive_products(&data, m, n, &x, &y);
        let e = relative_error(&to_f64(&ax), &ax_ref);
        assert!(e < tolerance, "A x of {m} x {n}: relative error {e}");
        let e = relative_error(&to_f64(&aty), &aty_ref);
        assert!(e < tolerance, "A^T y of {m} x {n}: relative error {e}");
    }
}

#[test]
fn dense_products_match_plain_loops() {
    check_dense_against_loops::<f64>(1e-13);
    check_dense_against_loops::<f32>(1e-5);
}

#[test]
fn dense_from_array_of_any_layout() {
    let a = Array2::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as f64);
    let row_major = DenseMatrix::from_array(a.view()).unwrap();
    assert_eq!(row_major.as_slice(), a.as_slice().unwrap());
    let t = DenseMatrix::from_array(a.t()).unwrap();
    assert_eq!((t.rows(), t.cols()), (4, 3));
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(t.as_slice()[i * 3 + j], a[[j, i]]);
        }
    }
    let strided = a.slice(ndarray::s![.., ..;2]);
    let s = DenseMatrix::from_array(strided).unwrap();
    assert_eq!(s.as_slice(), &[0.0, 2.0, 10.0, 12.0, 20.0, 22.0]);
}

/// `<A x, y>` against `<x, A^T y>` for random `x`, `y`, relative to `|A x| |y| + |x| |A^T y|`.
fn adjoint_gap<T: Real>(a: &dyn LinearOperator<T>, rng: &mut SplitMix64) -> f64 {
    let (m, n) = a.shape();
    let x = random_vec::<T>(rng, n);
    let y = random_vec::<T>(rng, m);
    let (ax, aty) = products(a, &x, &y);
    let (x, y, ax, aty) = (to_f64(&x), to_f64(&y), to_f64(&ax), to_f64(&aty));
    let scale = norm(&ax) * norm(&y) + norm(&x) * norm(&aty);
    (dot(&ax, &y) - dot(&x, &aty)).abs() / scale
}

fn check_adjointness<T: Real>(tolerance: f64) {
    let mut rng = SplitMix64::new(31);
    for ensemble in ENSEMBLES {
        for (m, n) in [(7, 7), (20, 50), (64, 256), (37, 101), (250, 1000)] {
            let a = ensemble.generate::<T>(m, n, 5).unwrap();
            assert_eq!(a.shape(), (m, n));
            for _ in 0..3 {
                let gap = adjoint_gap(&a, &mut rng);
                assert!(gap < tolerance, "{ensemble} {m} x {n}: adjoint gap {gap}");
            }
        }
    }
    // And directly built operators.
    let sparse = SparseBinary::<T>::new(3, 4, 2, vec![0, 1, 1, 2, 0, 2, 2, 1]).unwrap();
    assert!(adjoint_gap(&sparse, &mut rng) < tolerance);
}

typed_tests!(check_adjointness:
    adjoint_is_the_adjoint_f64 = f64(1e-10),
    adjoint_is_the_adjoint_f32 = f32(1e-4),
);

#[test]
fn gaussian_columns_have_unit_norm_on_average() {
    let (m, n) = (512, 256);
    let Operator::Dense(a) = Ensemble::Gaussian.generate::<f64>(m, n, 2024).unwrap() else {
        panic!("a Gaussian operator is a dense matrix");
    };
    let data = a.as_slice();
    let mean_sq: f64 = (0..n)
        .map(|j| (0..m).map(|i| data[i * n + j].powi(2)).sum::<f64>())
        .sum::<f64>()
        / n as f64;
    assert!(
        (mean_sq - 1.0).abs() < 0.05,
        "mean squared column norm {mean_sq}"
    );
    let mean: f64 = data.iter().sum::<f64>() / data.len() as f64;
    assert!(
        mean.abs() < 5.0 / (m as f64 * (m * n) as f64).sqrt(),
        "mean {mean}"
    );
}

#[test]
fn gaussian_and_sign_entries_are_the_documented_draws() {
    let (m, n, seed) = (9, 5, 77);
    let mut rng = SplitMix64::new(seed);
    let Operator::Dense(sign) = Ensemble::Sign.generate::<f32>(m, n, seed).unwrap() else {
        panic!("a sign operator is a dense matrix");
    };
    for &v in sign.as_slice() {
        let expected = if rng.next_u64() >> 63 == 0 {
            1.0 / 3.0
        } else {
            -1.0 / 3.0
        };
        assert_eq!(v, expected as f32);
    }

    let mut rng = SplitMix64::new(seed);
    let Operator::Dense(gaussian) = Ensemble::Gaussian.generate::<f64>(m, n, seed).unwrap() else {
        panic!("a Gaussian operator is a dense matrix");
    };
    let mut expected = Vec::new();
    while expected.len() < m * n {
        let (a, b) = (rng.next_u64(), rng.next_u64());
        let u1 = ((a >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64);
        let u2 = (b >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let r = (-2.0 * u1.ln()).sqrt();
        let angle = 2.0 * std::f64::consts::PI * u2;
        expected.push(r * angle.cos() / 3.0);
        expected.push(r * angle.sin() / 3.0);
    }
    assert_eq!(gaussian.as_slice(), &expected[..m * n]);
}

#[test]
fn sign_entries_are_exactly_plus_or_minus_one_over_sqrt_m() {
    for m in [1, 2, 3, 100, 512] {
        let Operator::Dense(a) = Ensemble::Sign.generate::<f32>(m, 64, 3).unwrap() else {
            panic!("a sign operator is a dense matrix");
        };
        let s = (1.0 / (m as f64).sqrt()) as f32;
        assert!(a.as_slice().iter().all(|&v| v == s || v == -s), "m = {m}");
        let positive = a.as_slice().iter().filter(|&&v| v > 0.0).count();
        let total = a.as_slice().len();
        // Binomial(total, 1/2): within 5 standard deviations.
        let sd = (total as f64).sqrt() / 2.0;
        assert!(
            (positive as f64 - total as f64 / 2.0).abs() < 5.0 * sd,
            "m = {m}"
        );
    }
}

#[test]
fn dct_ensemble_takes_distinct_rows() {
    for (m, n) in [(1, 1), (5, 5), (10, 100), (100, 1000)] {
        let Operator::Dct(a) = Ensemble::Dct.generate::<f64>(m, n, 8).unwrap() else {
            panic!("a DCT operator is a subsampled DCT");
        };
        assert_eq!(a.len(), n);
        assert_eq!(a.rows().len(), m);
        assert!(a.rows().windows(2).all(|w| w[0] < w[1]));
        assert!(a.rows().iter().all(|&r| r < n));
    }
    // Every row is as likely: 20 rows of 40 over 400 seeds take each row about 200 times.
    let mut hits = vec![0usize; 40];
    for seed in 0..400 {
        let Operator::Dct(a) = Ensemble::Dct.generate::<f32>(20, 40, seed).unwrap() else {
            panic!("a DCT operator is a subsampled DCT");
        };
        a.rows().iter().for_each(|&r| hits[r] += 1);
    }
    assert!(hits.iter().all(|&h| (140..260).contains(&h)), "{hits:?}");
}

#[test]
fn sparse_columns_have_exactly_d_distinct_rows() {
    for (m, n, d) in [(1, 5, 1), (8, 8, 8), (30, 100, 7), (200, 1000, 12)] {
        let a = Ensemble::Sparse { d }.generate::<f64>(m, n, 4).unwrap();
        let Operator::Sparse(ref s) = a else {
            panic!("a sparse operator is a SparseBinary");
        };
        assert_eq!(s.nonzeros_per_column(), d);
        assert_eq!(s.rows_of_columns().len(), n * d);
        for column in s.rows_of_columns().chunks(d) {
            assert!(column.windows(2).all(|w| w[0] < w[1]), "{column:?}");
            assert!(column.iter().all(|&r| r < m));
        }
        // Each column is d entries 1/sqrt(d): A e_j has d nonzeros and unit norm.
        let mut e = vec![0.0; n];
        let mut column = vec![0.0; m];
        for j in [0, n / 2, n - 1] {
            e.iter_mut().for_each(|v| *v = 0.0);
            e[j] = 1.0;
            a.apply(&e, &mut column);
            let nonzeros: Vec<usize> = (0..m).filter(|&i| column[i] != 0.0).collect();
            assert_eq!(nonzeros, &s.rows_of_columns()[j * d..(j + 1) * d]);
            let expected = 1.0 / (d as f64).sqrt();
            assert!(nonzeros
                .iter()
                .all(|&i| (column[i] - expected).abs() < 1e-15));
        }
    }
}

#[test]
fn sparse_binary_products_match_plain_loops() {
    let mut rng = SplitMix64::new(41);
    let (m, n, d) = (50, 9000, 3);
    let mut rows = Vec::new();
    for _ in 0..n {
        let mut column: Vec<usize> = Vec::new();
        while column.len() < d {
            let r = rng.below(m);
            if !column.contains(&r) {
                column.push(r);
            }
        }
        rows.extend(column);
    }
    let a = SparseBinary::<f64>::new(m, n, d, rows.clone()).unwrap();
    assert_eq!(a.rows_of_columns(), &rows[..]);
    let mut dense = vec![0.0; m * n];
    let s = 1.0 / (d as f64).sqrt();
    for (j, column) in rows.chunks(d).enumerate() {
        column.iter().for_each(|&i| dense[i * n + j] = s);
    }
    let x = random_vec::<f64>(&mut rng, n);
    let y = random_vec::<f64>(&mut rng, m);
    let (ax_ref, aty_ref) = naive_products(&dense, m, n, &x, &y);
    let (ax, aty) = products(&a, &x, &y);
    assert!(relative_error(&ax, &ax_ref) < 1e-13);
    assert!(relative_error(&aty, &aty_ref) < 1e-13);
}

#[test]
fn same_seed_same_operator_other_seed_other_operator() {
    for ensemble in ENSEMBLES {
        let a = ensemble.generate::<f32>(16, 64, 1).unwrap();
        assert_eq!(
            a,
            ensemble.generate::<f32>(16, 64, 1).unwrap(),
            "{ensemble}"
        );
        assert_ne!(
            a,
            ensemble.generate::<f32>(16, 64, 2).unwrap(),
            "{ensemble}"
        );
        // f64 and f32 operators are drawn alike.
        let b = ensemble.generate::<f64>(16, 64, 1).unwrap();
        let mut rng = SplitMix64::new(9);
        let x = random_vec::<f32>(&mut rng, 64);
        let mut ya = vec![0.0f32; 16];
        let mut yb = vec![0.0f64; 16];
        a.apply(&x, &mut ya);
        b.apply(&to_f64(&x), &mut yb);
        assert!(relative_error(&to_f64(&ya), &yb) < 1e-5, "{ensemble}");
    }
}

#[test]
fn sparse_signals_are_deterministic_and_k_sparse() {
    for kind in [SignalKind::Gaussian, SignalKind::Sign] {
        for (n, k) in [(1, 0), (1, 1), (10, 3), (1000, 50), (64, 64)] {
            let x = sparse_signal::<f64>(n, k, kind, 5).unwrap();
            assert_eq!(x.len(), n);
            assert_eq!(x.iter().filter(|v| **v != 0.0).count(), k, "{kind} {n} {k}");
            assert_eq!(x, sparse_signal::<f64>(n, k, kind, 5).unwrap());
            if kind == SignalKind::Sign {
                assert!(x.iter().all(|v| [-1.0, 0.0, 1.0].contains(v)));
            }
            let y = sparse_signal::<f32>(n, k, kind, 5).unwrap();
            let rounded: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            assert_eq!(y, rounded, "{kind}: f32 signals are the f64 ones rounded");
        }
        let a = sparse_signal::<f64>(1000, 20, kind, 1).unwrap();
        let b = sparse_signal::<f64>(1000, 20, kind, 2).unwrap();
        assert_ne!(a, b);
    }
    let x = sparse_signal::<f64>(100_000, 20_000, SignalKind::Gaussian, 3).unwrap();
    let values: Vec<f64> = x.into_iter().filter(|v| *v != 0.0).collect();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let var = values.iter().map(|v| v * v).sum::<f64>() / values.len() as f64;
    assert!(
        mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
        "{mean} {var}"
    );
}

fn check_many<T: Real>() {
    let mut rng = SplitMix64::new(51);
    let count = 5;
    for ensemble in ENSEMBLES {
        let a = ensemble.generate::<T>(24, 80, 6).unwrap();
        let (m, n) = a.shape();
        let xs = random_vec::<T>(&mut rng, count * n);
        let ys = random_vec::<T>(&mut rng, count * m);
        let mut many = vec![T::zero(); count * m];
        a.apply_many(&xs, &mut many);
        let mut one = vec![T::zero(); m];
        for (x, y) in xs.chunks(n).zip(many.chunks(m)) {
            a.apply(x, &mut one);
            assert_eq!(y, &one[..], "{ensemble}");
        }
        let mut many = vec![T::zero(); count * n];
        a.adjoint_many(&ys, &mut many);
        let mut one = vec![T::zero(); n];
        for (y, x) in ys.chunks(m).zip(many.chunks(n)) {
            a.adjoint(y, &mut one);
            assert_eq!(x, &one[..], "{ensemble}");
        }
    }
}

#[test]
fn apply_many_is_apply_of_each() {
    check_many::<f32>();
    check_many::<f64>();
}

/// Asserts `result` is an error whose message contains every one of `words`.
fn assert_error<T: std::fmt::Debug>(result: kselect::Result<T>, words: &[&str]) {
    match result {
        Ok(v) => panic!("expected an error mentioning {words:?}, got {v:?}"),
        Err(e) => {
            let message = e.to_string();
            for w in words {
                assert!(message.contains(w), "`{message}` does not mention `{w}`");
            }
        }
    }
}

/// Asserts the message of `e` contains every one of `words`.
fn says(e: RecoveryError, words: &[&str]) {
    assert_error::<()>(Err(e.into()), words);
}

/// Asserts `result` is the recovery error `want`, whose message contains every one of `words`.
fn is<T: std::fmt::Debug>(result: kselect::Result<T>, want: RecoveryError, words: &[&str]) {
    let e = recovery_error(result);
    assert_eq!(e, want);
    says(e, words);
}

#[test]
fn bad_arguments_are_errors_that_say_what_to_fix() {
    use RecoveryError::*;
    // Dense matrices.
    is(
        DenseMatrix::new(vec![1.0f64; 5], 2, 3),
        MatrixValues {
            rows: 2,
            cols: 3,
            expected: 6,
            given: 5,
        },
        &["6 values", "5"],
    );
    let e = recovery_error(DenseMatrix::<f64>::new(vec![], 0, 3));
    assert!(matches!(e, EmptyOperator { m: 0, n: 3, .. }), "{e}");
    says(e, &["at least one measurement", "m = 0"]);
    let e = recovery_error(DenseMatrix::<f32>::new(vec![], 3, 0));
    assert!(matches!(e, EmptyOperator { m: 3, n: 0, .. }), "{e}");
    let e = recovery_error(DenseMatrix::new(
        vec![0.0, 1.0, 2.0, f32::NAN, 4.0, 5.0],
        2,
        3,
    ));
    let NonFiniteEntry {
        row: 1,
        column: 0,
        value,
    } = e
    else {
        panic!("{e:?}")
    };
    assert!(value.is_nan());
    says(e, &["row 1", "column 0", "finite"]);
    let e = recovery_error(DenseMatrix::new(vec![0.0, f64::NEG_INFINITY], 1, 2));
    let want = NonFiniteEntry {
        row: 0,
        column: 1,
        value: f64::NEG_INFINITY,
    };
    assert_eq!(e, want);
    let a = Array2::from_elem((2, 2), f64::INFINITY);
    let e = recovery_error(DenseMatrix::from_array(a.view()));
    assert!(
        matches!(
            e,
            NonFiniteEntry {
                row: 0,
                column: 0,
                ..
            }
        ),
        "{e}"
    );

    // DCTs.
    let e = recovery_error(SubsampledDct::<f64>::new(0, vec![0]));
    assert!(matches!(e, EmptyOperator { m: 1, n: 0, .. }), "{e}");
    says(e, &["n = 0"]);
    let e = recovery_error(SubsampledDct::<f64>::new(4, vec![]));
    assert!(matches!(e, EmptyOperator { m: 0, n: 4, .. }), "{e}");
    is(
        SubsampledDct::<f64>::new(4, vec![0, 4]),
        RowOutOfRange {
            column: None,
            row: 4,
            rows: 4,
        },
        &["row 4", "0 <= row < 4"],
    );
    let e = recovery_error(SubsampledDct::<f64>::new(4, vec![3, 1, 3]));
    assert_eq!(
        e,
        RepeatedRow {
            column: None,
            row: 3
        }
    );
    says(e, &["row 3", "twice"]);

    // Sparse matrices.
    let e = recovery_error(SparseBinary::<f64>::new(4, 0, 1, vec![]));
    assert!(matches!(e, EmptyOperator { m: 4, n: 0, .. }), "{e}");
    is(
        SparseBinary::<f64>::new(4, 2, 0, vec![]),
        NonzerosPerColumn { d: 0, m: 4 },
        &["d = 0"],
    );
    let e = recovery_error(SparseBinary::<f64>::new(2, 2, 3, vec![0; 6]));
    assert_eq!(e, NonzerosPerColumn { d: 3, m: 2 });
    is(
        SparseBinary::<f64>::new(4, 2, 2, vec![0, 1, 2]),
        RowIndices {
            n: 2,
            d: 2,
            expected: 4,
            given: 3,
        },
        &["4 row indices", "3"],
    );
    is(
        SparseBinary::<f64>::new(4, 2, 2, vec![0, 1, 2, 4]),
        RowOutOfRange {
            column: Some(1),
            row: 4,
            rows: 4,
        },
        &["column 1", "row 4"],
    );
    is(
        SparseBinary::<f64>::new(4, 2, 2, vec![3, 3, 2, 1]),
        RepeatedRow {
            column: Some(0),
            row: 3,
        },
        &["row 3 is given twice in column 0"],
    );

    // Ensembles.
    for ensemble in ENSEMBLES {
        let e = recovery_error(ensemble.generate::<f32>(0, 10, 0));
        assert!(matches!(e, EmptyOperator { m: 0, n: 10, .. }), "{e}");
        let e = recovery_error(ensemble.generate::<f64>(10, 0, 0));
        assert!(matches!(e, EmptyOperator { m: 10, n: 0, .. }), "{e}");
    }
    is(
        Ensemble::Dct.generate::<f64>(11, 10, 0),
        DctRows { m: 11, n: 10 },
        &["m <= n"],
    );
    is(
        Ensemble::Sparse { d: 11 }.generate::<f64>(10, 100, 0),
        NonzerosPerColumn { d: 11, m: 10 },
        &["d = 11", "1 <= d <= 10"],
    );
    let e = recovery_error(Ensemble::Sparse { d: 0 }.generate::<f64>(10, 100, 0));
    assert_eq!(e, NonzerosPerColumn { d: 0, m: 10 });
    assert_error(
        "gauss".parse::<Ensemble>(),
        &["gauss", "gaussian, sign, dct, sparse"],
    );
    assert_error("sparse:0".parse::<Ensemble>(), &["positive integer"]);
    assert_error("sparse:many".parse::<Ensemble>(), &["positive integer"]);

    // Signals.
    is(
        sparse_signal::<f64>(5, 6, SignalKind::Sign, 0),
        Sparsity { k: 6, n: 5 },
        &["k = 6", "k <= 5"],
    );
    let e = recovery_error(sparse_signal::<f32>(0, 0, SignalKind::Gaussian, 0));
    let want = Empty {
        what: "a signal",
        item: "entry",
    };
    assert_eq!(e, want);
    assert_error(
        "uniform".parse::<SignalKind>(),
        &["uniform", "known: gaussian, sign"],
    );
}

#[test]
fn names_parse_and_print() {
    assert_eq!("gaussian".parse::<Ensemble>().unwrap(), Ensemble::Gaussian);
    assert_eq!("sign".parse::<Ensemble>().unwrap(), Ensemble::Sign);
    assert_eq!("dct".parse::<Ensemble>().unwrap(), Ensemble::Dct);
    assert_eq!(
        "sparse".parse::<Ensemble>().unwrap(),
        Ensemble::Sparse { d: 7 }
    );
    assert_eq!(
        "sparse:12".parse::<Ensemble>().unwrap(),
        Ensemble::Sparse { d: 12 }
    );
    for ensemble in ENSEMBLES {
        assert_eq!(ensemble.to_string().parse::<Ensemble>().unwrap(), ensemble);
    }
    assert_eq!(Ensemble::Sparse { d: 12 }.name(), "sparse");
    for kind in [SignalKind::Gaussian, SignalKind::Sign] {
        assert_eq!(kind.to_string().parse::<SignalKind>().unwrap(), kind);
        assert_eq!(kind.name().parse::<SignalKind>().unwrap(), kind);
    }
}
