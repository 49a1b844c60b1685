//! Compressed sensing: a signal of 2^14 entries with 400 nonzeros recovered exactly from 4096
//! rows of its discrete cosine transform by NIHT, HTP and CoSaMP; then the phase transitions
//! of the three algorithms with Gaussian matrices (n = 256), drawn into
//! `phase_transition.png`.
//!
//! ```text
//! cargo run --release --features plot --example 06_compressed_sensing
//! ```

use std::time::Instant;

use kselect::plot::plot_phase_diagram;
use kselect::recovery::{
    sparse_signal, Algorithm, Ensemble, LinearOperator, PhaseTransition, SignalKind, Solver,
};

fn main() -> kselect::Result<()> {
    let (n, m, k) = (1 << 14, 4096, 400);
    let a = Ensemble::Dct.generate::<f64>(m, n, 1)?;
    let x = sparse_signal::<f64>(n, k, SignalKind::Gaussian, 2)?;
    let mut y = vec![0.0; m];
    a.apply(&x, &mut y);
    println!("n = {n}, m = {m} DCT rows, k = {k} nonzeros");
    for algorithm in [Algorithm::Niht, Algorithm::Htp, Algorithm::Cosamp] {
        let start = Instant::now();
        let found = Solver::new(algorithm, k).solve(&a, &y)?;
        let error = found
            .solution
            .iter()
            .zip(&x)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!(
            "{:>7}: {} after {:4} iterations in {:6.3} s, largest error {error:.1e}",
            algorithm.name(),
            found.stop,
            found.iterations,
            start.elapsed().as_secs_f64()
        );
    }

    let grid: Vec<f64> = (1..10).map(|i| i as f64 / 10.0).collect();
    let rhos: Vec<f64> = (1..20).map(|i| i as f64 / 40.0).collect();
    let experiment = PhaseTransition::new(Ensemble::Gaussian, 256)
        .deltas(grid)
        .rhos(rhos)
        .trials(10)
        .algorithms(vec![Algorithm::Niht, Algorithm::Htp, Algorithm::Cosamp]);
    let start = Instant::now();
    let diagram = experiment.run::<f64>(&|_, _| {})?;
    println!(
        "\nphase transitions, Gaussian n = 256, {} problems an algorithm, {:.1} s",
        experiment.problems(),
        start.elapsed().as_secs_f64()
    );
    println!(
        "delta   {}",
        diagram
            .algorithms
            .iter()
            .map(|a| format!("{:>8}", a.algorithm))
            .collect::<String>()
    );
    for delta in &diagram.deltas {
        let row: String = diagram
            .algorithms
            .iter()
            .map(|a| match a.curve.iter().find(|p| p.delta == *delta) {
                Some(p) => format!("{:8.3}", p.rho),
                None => format!("{:>8}", "-"),
            })
            .collect();
        println!("{delta:5.2}   {row}");
    }
    plot_phase_diagram("phase_transition.png", &diagram)?;
    println!("\nthe 50% curves drawn in phase_transition.png");
    Ok(())
}
