//! Quantiles by numpy's definitions, with an explicit NaN policy.
//!
//! ```text
//! cargo run --release --example 02_quantiles
//! ```

use kselect::{NanPolicy, QuantileMethod, Selector};

fn main() -> kselect::Result<()> {
    let delays = [
        12.0,
        f64::NAN,
        -3.0,
        45.0,
        0.0,
        7.0,
        180.0,
        2.0,
        f64::NAN,
        15.0,
    ];
    let sel = Selector::new().nan_policy(NanPolicy::Omit);
    let qs = [0.1, 0.25, 0.5, 0.75, 0.9];
    for method in [
        QuantileMethod::Linear,
        QuantileMethod::InvertedCdf,
        QuantileMethod::MedianUnbiased,
    ] {
        let values = sel.quantiles(&delays, &qs, method)?;
        println!("{method:>24}: {values:?}");
    }
    // The default policy refuses NaN with a clear error.
    match Selector::new().quantiles(&delays, &qs, QuantileMethod::Linear) {
        Err(e) => println!("default policy: {e}"),
        Ok(v) => println!("unexpected: {v:?}"),
    }
    Ok(())
}
