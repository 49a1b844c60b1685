//! The GPU engine against the CPU's: evaluations (ties at the threshold included), C-steps,
//! least squares on row subsets and LMS scores. They skip without a GPU and fail when
//! `KSELECT_REQUIRE_GPU=1`.

use super::csteps::evaluate;
use super::*;
use crate::device::cuda::tests::gpu;
use crate::regression::csteps::{squared_residuals, subset_rows, trim, Work};
use crate::regression::design::{dot, Design};
use crate::regression::engine::{least_squares_on, CpuEngine};

/// A small deterministic generator of uniforms in `[-1, 1)`.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// `n` rows of `k` predictors, `y` a plane with noise and a fifth of the rows far off it.
fn noisy(n: usize, k: usize, seed: u64) -> Design<'static> {
    let mut g = Lcg(seed);
    let x: Vec<f64> = (0..n * k).map(|_| 3.0 * g.next()).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let plane: f64 = x[i * k..(i + 1) * k].iter().sum::<f64>() + 1.0;
            plane + 0.1 * g.next() + if i % 5 == 0 { 40.0 } else { 0.0 }
        })
        .collect();
    Design::new(x, n, k, y, true).unwrap()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// The CPU's objective, `X_H'X_H` (upper triangle) and `X_H'r_H` of `b`'s `h`-subset.
fn cpu_sums(design: &Design, b: &[f64], h: usize) -> (f64, Vec<f64>, Vec<f64>) {
    let (rows, p) = (design.rows(), design.p);
    let mut work = Work::new(p);
    squared_residuals(rows, b, &mut work.r2);
    let t = trim(&work, h).unwrap();
    let mut idx = Vec::new();
    subset_rows(&work.r2, &t, h, &mut idx);
    let mut xtx = vec![0.0; p * p];
    let mut xtr = vec![0.0; p];
    for &i in &idx {
        let x = rows.row(i);
        let r = rows.y[i] - dot(x, b);
        for a in 0..p {
            xtr[a] += x[a] * r;
            for c in a..p {
                xtx[a * p + c] += x[a] * x[c];
            }
        }
    }
    (t.objective, xtx, xtr)
}

fn assert_sums_match(design: &Design, gpu: &mut GpuEngine<'_>, bs: &[Vec<f64>], h: usize) {
    let evals = evaluate(gpu, h, bs).unwrap();
    for (b, eval) in bs.iter().zip(evals) {
        let eval = eval.expect("finite residuals");
        let (objective, xtx, xtr) = cpu_sums(design, b, h);
        assert!(
            rel(eval.objective, objective) < 1e-11,
            "{} vs {objective}",
            eval.objective
        );
        let scale = xtx.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for (g, c) in eval.xtx.iter().zip(&xtx) {
            assert!((g - c).abs() <= 1e-11 * scale, "X'X {g} vs {c}");
        }
        let scale = xtr.iter().fold(1e-300f64, |a, v| a.max(v.abs()));
        for (g, c) in eval.xtr.iter().zip(&xtr) {
            assert!((g - c).abs() <= 1e-9 * scale, "X'r {g} vs {c}");
        }
    }
}

#[test]
fn evaluations_match_the_cpu() {
    let Some(dev) = gpu() else { return };
    let design = noisy(20_000, 4, 1);
    let mut engine = GpuEngine::new(&dev, &design).unwrap();
    let mut g = Lcg(2);
    let bs: Vec<Vec<f64>> = (0..7)
        .map(|_| (0..design.p).map(|_| g.next()).collect())
        .collect();
    assert_sums_match(&design, &mut engine, &bs, 10_003);
}

#[test]
fn sums_match_the_cpu_with_either_gram_kernel() {
    let Some(dev) = gpu() else { return };
    // p = 13, the largest of the kernel a warp a tile, then p = 14 and 30 (a block a tile);
    // row counts that end inside a tile.
    for (k, n) in [(12, 10_007), (13, 9_999), (29, 4_001)] {
        let design = noisy(n, k, k as u64);
        let mut engine = GpuEngine::new(&dev, &design).unwrap();
        let mut g = Lcg(k as u64 + 100);
        let bs: Vec<Vec<f64>> = (0..3)
            .map(|_| (0..design.p).map(|_| g.next()).collect())
            .collect();
        assert_sums_match(&design, &mut engine, &bs, (n + design.p).div_ceil(2));
    }
}

#[test]
fn subset_fits_and_residuals_match_the_cpu() {
    let Some(dev) = gpu() else { return };
    let design = noisy(20_011, 6, 7);
    let h = (design.n + design.p).div_ceil(2);
    let mut cpu = CpuEngine::new(&design).unwrap();
    let mut engine = GpuEngine::new(&dev, &design).unwrap();
    let mut g = Lcg(8);
    let b: Vec<f64> = (0..design.p).map(|_| 1.0 + 0.1 * g.next()).collect();
    let want = cpu.fit_subset(h, &b).unwrap().unwrap();
    let got = engine.fit_subset(h, &b).unwrap().unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 1e-10 * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
    let want = cpu.residuals(&b).unwrap();
    let got = engine.residuals(&b).unwrap();
    assert_eq!(got.len(), design.n);
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{g} vs {w}");
    }
    // The h-th smallest square is one of the squares of the residuals read back.
    let (r, t) = engine.trimmed_residuals(&b, h).unwrap();
    assert_eq!(r, got);
    let mut squares: Vec<f64> = r.iter().map(|v| v * v).collect();
    squares.sort_by(f64::total_cmp);
    assert_eq!(t, Some(squares[h - 1]));
    let (_, want_t) = cpu.trimmed_residuals(&b, h).unwrap();
    assert!(rel(t.unwrap(), want_t.unwrap()) < 1e-10);
}

#[test]
fn the_device_rank_check_refuses_what_the_host_refuses() {
    let Some(dev) = gpu() else { return };
    let n = 70_001;
    let mut g = Lcg(11);
    let independent: Vec<f64> = (0..n * 3).map(|_| g.next()).collect();
    // Column 2 twice column 0, then column 1 a shift of column 0 (dependent on the intercept
    // only).
    let doubled: Vec<f64> = independent
        .chunks(3)
        .flat_map(|r| [r[0], r[1], 2.0 * r[0]])
        .collect();
    let shifted: Vec<f64> = independent
        .chunks(3)
        .flat_map(|r| [r[0], r[0] + 5.0, r[2]])
        .collect();
    let y: Vec<f64> = (0..n).map(|i| i as f64).collect();
    for (x, intercept) in [
        (&independent, true),
        (&independent, false),
        (&doubled, true),
        (&doubled, false),
        (&shifted, true),
    ] {
        let design = Design::new(x, n, 3, &y, intercept).unwrap();
        let host = design.check_rank_on_host().map_err(|e| e.to_string());
        let device = GpuEngine::new(&dev, &design)
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(device, host, "intercept {intercept}");
    }
}

#[test]
fn residual_rows_match_the_cpu_in_one_pass_or_by_a_product() {
    let Some(dev) = gpu() else { return };
    // 16 candidates are the most of the one-pass kernel, 17 take the product; p = 13 is its
    // largest model, p = 14 takes the product whatever the count; rows end inside a tile.
    for (k, n, counts) in [
        (3, 1_001, &[1, 5, 16, 17][..]),
        (12, 4_099, &[2, 16]),
        (13, 70, &[3]),
    ] {
        let design = noisy(n, k, 40 + k as u64);
        let mut engine = GpuEngine::new(&dev, &design).unwrap();
        let mut g = Lcg(k as u64);
        for &c in counts {
            let bs: Vec<Vec<f64>> = (0..c)
                .map(|_| (0..design.p).map(|_| g.next()).collect())
                .collect();
            let rows = design.rows();
            for (op, f) in [
                (Residual::Square, (|r: f64| r * r) as fn(f64) -> f64),
                (Residual::Signed, |r| r),
                (Residual::Absolute, f64::abs),
            ] {
                engine.residual_rows(&bs, op).unwrap();
                let got = engine.dev.read(engine.rows.as_slice(), "a test").unwrap();
                for (j, b) in bs.iter().enumerate() {
                    for i in 0..n {
                        let want = f(rows.y[i] - dot(rows.row(i), b));
                        let v = got[j * n + i];
                        assert!(
                            (v - want).abs() <= 1e-12 * want.abs().max(1.0),
                            "p {} c {c} {op:?} row {i} of {j}: {v} vs {want}",
                            design.p
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn c_steps_resumed_from_their_results_take_the_same_steps() {
    let Some(dev) = gpu() else { return };
    let design = noisy(30_000, 3, 9);
    let h = (design.n + design.p).div_ceil(2);
    let mut g = Lcg(10);
    let start: Vec<Candidate> = (0..4)
        .map(|_| Candidate {
            b: (0..design.p).map(|_| g.next()).collect(),
            objective: f64::INFINITY,
        })
        .collect();
    let mut engine = GpuEngine::new(&dev, &design).unwrap();
    let whole = engine.step_all(h, start.clone(), 12).unwrap();
    let mut engine = GpuEngine::new(&dev, &design).unwrap();
    let first = engine.step_all(h, start, 2).unwrap();
    let resumed = engine.step_all(h, first, 10).unwrap();
    assert_eq!(whole.len(), resumed.len());
    for (w, r) in whole.iter().zip(&resumed) {
        assert_eq!(w.b, r.b);
        assert_eq!(w.objective.to_bits(), r.objective.to_bits());
    }
}

#[test]
fn ties_at_the_threshold_are_taken_in_index_order() {
    let Some(dev) = gpu() else { return };
    // Seven groups of identical rows: their residuals tie exactly, and h ends inside a group.
    let n = 700;
    let x: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                100.0 + i as f64
            } else {
                3.0 + 2.0 * (i % 7) as f64
            }
        })
        .collect();
    let design = Design::new(&x, n, 1, &y, true).unwrap();
    // x has mean 3 and standard deviation 2: the line y = 3 + 2 x is 9 + 4 z in standardized
    // coordinates. Moved a little, it leaves the groups residuals -0.003 - 0.01 z of distinct
    // sizes; with 67 clean rows a group, h = 351 ends inside the sixth.
    let b = vec![9.003, 4.01];
    let h = 351;
    let mut engine = GpuEngine::new(&dev, &design).unwrap();
    assert_sums_match(&design, &mut engine, std::slice::from_ref(&b), h);
    let eval = evaluate(&mut engine, h, &[b])
        .unwrap()
        .pop()
        .unwrap()
        .unwrap();
    assert_eq!(eval.xtx[0], h as f64, "the subset holds exactly h rows");
}

#[test]
fn c_steps_match_the_cpu() {
    let Some(dev) = gpu() else { return };
    let design = noisy(30_000, 3, 3);
    let h = (design.n + design.p).div_ceil(2);
    let mut g = Lcg(4);
    let start: Vec<Candidate> = (0..5)
        .map(|_| Candidate {
            b: (0..design.p).map(|_| g.next()).collect(),
            objective: f64::INFINITY,
        })
        .collect();
    let cpu = CpuEngine::new(&design)
        .unwrap()
        .step_all(h, start.clone(), 20)
        .unwrap();
    let gpu = GpuEngine::new(&dev, &design)
        .unwrap()
        .step_all(h, start, 20)
        .unwrap();
    assert_eq!(cpu.len(), gpu.len());
    for (c, g) in cpu.iter().zip(&gpu) {
        assert!(
            rel(g.objective, c.objective) < 1e-9,
            "{} vs {}",
            g.objective,
            c.objective
        );
    }
}

#[test]
fn least_squares_on_rows_match_the_cpu() {
    let Some(dev) = gpu() else { return };
    let design = noisy(5_000, 5, 5);
    let idx: Vec<usize> = (0..design.n).filter(|i| i % 5 != 0 && i % 7 != 3).collect();
    let want = least_squares_on(&design, &idx).unwrap();
    let mut engine = GpuEngine::new(&dev, &design).unwrap();
    for start in [vec![0.0; design.p], want.iter().map(|v| v * 1.01).collect()] {
        let got = engine.fit_rows(&idx, &start).unwrap().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-10 * w.abs().max(1.0),
                "{got:?} vs {want:?}"
            );
        }
    }
    assert!(engine.fit_rows(&[1, 2], &want).unwrap().is_none());
}

#[test]
fn lms_scores_match_the_cpu() {
    let Some(dev) = gpu() else { return };
    for intercept in [true, false] {
        let mut g = Lcg(6);
        let (n, k) = (3_000, 2);
        let x: Vec<f64> = (0..n * k).map(|_| g.next()).collect();
        let y: Vec<f64> = (0..n)
            .map(|i| x[2 * i] - x[2 * i + 1] + 0.2 * g.next())
            .collect();
        let design = Design::new(&x, n, k, &y, intercept).unwrap();
        let h = n / 2 + design.p.div_ceil(2);
        let fits: Vec<Vec<f64>> = (0..50)
            .map(|_| (0..design.p).map(|_| g.next()).collect())
            .collect();
        let cpu = CpuEngine::new(&design)
            .unwrap()
            .score_lms(h, fits.clone())
            .unwrap();
        let gpu = GpuEngine::new(&dev, &design)
            .unwrap()
            .score_lms(h, fits)
            .unwrap();
        for (c, g) in cpu.iter().zip(&gpu) {
            let (c, g) = (c.as_ref().unwrap(), g.as_ref().unwrap());
            assert!(
                rel(g.objective, c.objective) < 1e-9,
                "{} vs {}",
                g.objective,
                c.objective
            );
            assert!(
                (g.b[0] - c.b[0]).abs() < 1e-9,
                "intercept {} vs {}",
                g.b[0],
                c.b[0]
            );
        }
    }
}
