//! Robust regression of the stackloss data: LTS (robustbase `ltsReg`'s conventions) and LMS
//! (MASS `lqs`'s), next to ordinary least squares, with the rows they flag.
//!
//! ```text
//! cargo run --release --features io --example 04_lts
//! ```

use std::path::Path;

use kselect::io::{read_csv_column, ColumnVisitor};
use kselect::regression::{Lms, Lts, RegressionFit};
use kselect::Element;
use kselect::Matrix;

/// A CSV column as `f64`, whatever type it was read as.
struct ToF64;
impl ColumnVisitor for ToF64 {
    type Output = Vec<f64>;
    fn visit<T: Element>(self, data: &[T]) -> Vec<f64> {
        data.iter().map(|v| v.to_f64()).collect()
    }
}

fn main() -> kselect::Result<()> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/robust/stackloss.csv");
    let names = ["Air.Flow", "Water.Temp", "Acid.Conc."];
    let columns: Vec<Vec<f64>> = names
        .iter()
        .map(|c| Ok(read_csv_column(&path, Some(c))?.values.visit(ToF64)))
        .collect::<kselect::Result<_>>()?;
    let y = read_csv_column(&path, Some("stack.loss"))?
        .values
        .visit(ToF64);
    let (n, k) = (y.len(), names.len());
    // Row-major predictors: x[i * k + j] is row i, column j.
    let x: Vec<f64> = (0..n)
        .flat_map(|i| columns.iter().map(move |c| c[i]))
        .collect();

    let lts = Lts::new().fit(Matrix::new(&x, n, k), &y)?;
    let lms = Lms::new().fit(Matrix::new(&x, n, k), &y)?;
    let ols = Lts::new().alpha(1.0).fit(Matrix::new(&x, n, k), &y)?; // h = n: least squares

    println!("stackloss: n = {n}, p = {} (with the intercept)\n", lts.p);
    println!(
        "{:<12} {:>12} {:>12} {:>12} {:>12}",
        "coefficient", "LTS raw", "LTS rew.", "LMS raw", "OLS"
    );
    let labels = std::iter::once("(Intercept)").chain(names);
    for (j, label) in labels.enumerate() {
        println!(
            "{label:<12} {:>12.5} {:>12.5} {:>12.5} {:>12.5}",
            lts.raw_coefficients[j],
            lts.coefficients[j],
            lms.raw_coefficients[j],
            ols.raw_coefficients[j]
        );
    }
    println!();
    summary("LTS", &lts, "sum of the h smallest squared residuals");
    summary("LMS", &lms, "h-th smallest absolute residual");

    println!(
        "\n{:>4} {:>6} {:>10} {:>10} {:>7}",
        "row", "y", "LTS resid", "r / scale", "weight"
    );
    for (i, (yi, r)) in y.iter().zip(&lts.residuals).enumerate() {
        let w = lts.weights[i];
        println!(
            "{i:>4} {yi:>6} {r:>10.4} {:>10.3} {w:>7}{}",
            r / lts.scale,
            if w == 0.0 { "  outlier" } else { "" }
        );
    }
    Ok(())
}

fn summary(name: &str, fit: &RegressionFit, objective: &str) {
    println!(
        "{name}: h = {}, objective ({objective}) = {:.6}, raw scale = {:.4}, scale = {:.4}",
        fit.h, fit.objective, fit.raw_scale, fit.scale
    );
    println!(
        "     {} starts{}, outliers (0-based rows): {:?}",
        fit.starts,
        if fit.exhaustive {
            " (every p-subset)"
        } else {
            ""
        },
        fit.outliers
    );
}
