//! LTS and LMS regression on a CUDA GPU (`Lts::device`, `Lms::device`): the classic data sets
//! against R's references exactly as `tests/regression.rs` checks the CPU, simulated data with
//! 20% and 45% contamination at `n = 200_000`, and the GPU's fits against the CPU's on the same
//! data and seed.
//!
//! Every test skips (with a note) without a GPU, and fails when `KSELECT_REQUIRE_GPU=1` is set
//! and CUDA device 0 cannot be opened.
//!
//! The GPU runs the same search as the CPU from the same starts; its sums run in another order,
//! so its objectives differ from the CPU's by rounding (relative 1e-12 or so), and its fits agree
//! with the CPU's unless two candidates of the race are within that rounding of each other.

mod common;
mod robust;

use kselect::regression::{Lms, Lts, RegressionFit};
use kselect::{Device, Matrix};
use robust::*;

/// The GPU's LTS with the settings of `lts`, and the CPU's.
fn lts_both(
    lts: Lts,
    device: &Device,
    x: &[f64],
    n: usize,
    k: usize,
    y: &[f64],
) -> [RegressionFit; 2] {
    [
        lts.clone()
            .device(device.clone())
            .fit(Matrix::new(x, n, k), y)
            .unwrap(),
        lts.device(Device::Cpu)
            .fit(Matrix::new(x, n, k), y)
            .unwrap(),
    ]
}

/// The GPU's objective equals the CPU's (relative `1e-9`) and is not above it.
fn assert_same_objective(what: &str, gpu: &RegressionFit, cpu: &RegressionFit) {
    assert!(
        gpu.objective <= cpu.objective * (1.0 + 1e-9),
        "{what}: GPU objective {} above the CPU's {}",
        gpu.objective,
        cpu.objective
    );
    assert!(
        rel(gpu.objective, cpu.objective) < 1e-9,
        "{what}: GPU objective {} and CPU objective {} differ",
        gpu.objective,
        cpu.objective
    );
}

#[test]
fn lts_on_the_gpu_matches_robustbase_on_the_classic_data_sets() {
    let Some(device) = common::cuda_device() else {
        return;
    };
    for case in cases() {
        let [gpu, cpu] = lts_both(Lts::new(), &device, &case.x, case.n, case.k, &case.y);
        check_lts(&case, &gpu);
        assert_same_objective(&case.name, &gpu, &cpu);
        assert_eq!(gpu.outliers, cpu.outliers, "{}: outliers", case.name);
    }
}

#[test]
fn lts_on_the_gpu_matches_robustbase_with_other_settings() {
    let Some(device) = common::cuda_device() else {
        return;
    };
    // No intercept, alpha = 0.75, 0.9 and 1 (least squares on every row).
    check_other_settings(&Lts::new().device(device));
}

#[test]
fn lms_on_the_gpu_reaches_lqs_on_the_classic_data_sets() {
    let Some(device) = common::cuda_device() else {
        return;
    };
    for case in cases() {
        let lms = Lms::new().device(device.clone());
        check_lms(
            &case,
            &lms.fit(Matrix::new(&case.x, case.n, case.k), &case.y)
                .unwrap(),
        );
        // Without an intercept the scores skip the sort on the device.
        let k = case.k;
        let gpu = lms
            .intercept(false)
            .fit(Matrix::new(&case.x, case.n, k), &case.y)
            .unwrap();
        let cpu = Lms::new()
            .intercept(false)
            .fit(Matrix::new(&case.x, case.n, k), &case.y)
            .unwrap();
        assert!(
            gpu.objective <= cpu.objective * (1.0 + 1e-6),
            "{}: LMS without intercept: GPU {} above the CPU's {}",
            case.name,
            gpu.objective,
            cpu.objective
        );
    }
}

/// LTS on `n = 200_000` rows, 10 predictors and an intercept, with `frac` of the rows
/// contaminated (half vertical outliers, half bad leverage points): the GPU recovers the
/// coefficients and the contaminated rows, with the CPU's objective.
fn recovers_the_truth(frac: f64, seed: u64) {
    let Some(device) = common::cuda_device() else {
        return;
    };
    let beta = [1.0, 2.0, -1.0, 0.5, 3.0, -2.0, 1.5, -0.5, 0.25, -3.0, 2.5];
    let (n, k) = (200_000, 10);
    let (x, y) = contaminated(n, &beta, frac, seed);
    let [gpu, cpu] = lts_both(Lts::new().seed(seed), &device, &x, n, k, &y);
    assert_eq!((gpu.n, gpu.p), (n, 11));
    assert_near_beta("LTS on the GPU", &gpu, &beta, 0.05);
    let bad = (frac * n as f64) as usize;
    let flagged_bad = gpu.outliers.iter().filter(|&&i| i < bad).count();
    let flagged_clean = gpu.outliers.len() - flagged_bad;
    assert!(
        flagged_bad as f64 >= 0.99 * bad as f64,
        "{flagged_bad} of {bad}"
    );
    assert!(
        (flagged_clean as f64) < 0.04 * (n - bad) as f64,
        "{flagged_clean} clean rows flagged"
    );
    assert_same_objective(&format!("{frac} contaminated"), &gpu, &cpu);
}

#[test]
fn lts_on_the_gpu_recovers_the_truth_under_20_percent_contamination() {
    recovers_the_truth(0.2, 21);
}

#[test]
fn lts_on_the_gpu_recovers_the_truth_under_45_percent_contamination() {
    recovers_the_truth(0.45, 22);
}

#[test]
fn gpu_and_cpu_fits_agree() {
    let Some(device) = common::cuda_device() else {
        return;
    };
    let beta = [0.5, -1.0, 2.0, 1.0, -0.5];
    // Pairwise exchanges (n < 600), nested subsamples, and the race of candidates (n >= 5000).
    for (n, seed) in [(400, 1), (3_000, 2), (20_000, 3)] {
        let (x, y) = contaminated(n, &beta, 0.3, seed);
        for intercept in [true, false] {
            let lts = Lts::new().seed(seed).intercept(intercept);
            let [gpu, cpu] = lts_both(lts, &device, &x, n, 4, &y);
            let what = format!("n = {n}, intercept {intercept}");
            assert_same_objective(&what, &gpu, &cpu);
            assert_eq!(gpu.outliers, cpu.outliers, "{what}: outliers");
            assert_eq!(gpu.best_subset, cpu.best_subset, "{what}: best subset");
        }
    }
}

#[test]
fn exact_fits_on_the_gpu() {
    let Some(device) = common::cuda_device() else {
        return;
    };
    // 70% of the rows exactly on a plane of small integers, repeated rows among them: many
    // residuals tie at the threshold, and the subsets take them by index.
    let n = 5_000;
    let x: Vec<f64> = (0..n)
        .flat_map(|i| [((i * 7) % 13) as f64, ((i * 3) % 11) as f64])
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            if i % 10 < 3 {
                50.0 + i as f64
            } else {
                1.0 + 2.0 * x[2 * i] - x[2 * i + 1]
            }
        })
        .collect();
    let [gpu, cpu] = lts_both(Lts::new(), &device, &x, n, 2, &y);
    assert!(gpu.exact_fit);
    let off: Vec<usize> = (0..n).filter(|i| i % 10 < 3).collect();
    assert_eq!(gpu.outliers, off);
    assert_eq!(gpu.outliers, cpu.outliers);
    assert_near_beta("LTS", &gpu, &[1.0, 2.0, -1.0], 1e-9);
}

#[test]
fn lms_on_the_gpu_resists_45_percent_contamination() {
    let Some(device) = common::cuda_device() else {
        return;
    };
    let beta = [1.0, 2.0, -1.0, 0.5, 3.0, -2.0];
    let (n, k) = (2_000, 5);
    let (x, y) = contaminated(n, &beta, 0.45, 11);
    let fit = Lms::new()
        .seed(5)
        .nsamp(500)
        .device(device)
        .fit(Matrix::new(&x, n, k), &y)
        .unwrap();
    assert_near_beta("LMS", &fit, &beta, 0.3);
    assert_eq!(fit.starts, 500);
}

#[test]
fn wide_models_fit_on_the_cpu() {
    let Some(device) = common::cuda_device() else {
        return;
    };
    // 41 predictors and an intercept: more than the GPU kernels take, so the CPU fits.
    let beta: Vec<f64> = (0..42).map(|j| (j % 5) as f64 - 2.0).collect();
    let (n, k) = (200, 41);
    let (x, y) = contaminated(n, &beta, 0.1, 7);
    let lts = Lts::new().nsamp(50);
    let [gpu, cpu] = lts_both(lts, &device, &x, n, k, &y);
    assert_eq!(gpu, cpu);
}

#[test]
fn lms_on_the_gpu_fits_large_data_as_the_cpu_does() {
    let Some(device) = common::cuda_device() else {
        return;
    };
    // Above 8192 rows the starts are scored on a subsample and the best refined on all rows,
    // their scores on the GPU.
    let beta = [1.0, 2.0, -1.0, 0.5, 3.0, -2.0];
    let (n, k) = (100_000, 5);
    let (x, y) = contaminated(n, &beta, 0.3, 7);
    let gpu = Lms::new()
        .device(device)
        .fit(Matrix::new(&x, n, k), &y)
        .unwrap();
    let cpu = Lms::new().fit(Matrix::new(&x, n, k), &y).unwrap();
    assert_near_beta("LMS", &gpu, &beta, 0.1);
    // The same search: rounding alone tells the scores apart (a descent may stop a step
    // sooner or later).
    assert!(
        (gpu.objective - cpu.objective).abs() <= 1e-2 * cpu.objective,
        "GPU {} and CPU {}",
        gpu.objective,
        cpu.objective
    );
}
