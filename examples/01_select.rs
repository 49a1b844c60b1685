//! Order statistics of a vector on the CPU: a rank, the k-th largest, the median, many ranks.
//!
//! ```text
//! cargo run --release --example 01_select
//! ```

fn main() -> kselect::Result<()> {
    // 1,000,000 pseudo-random values.
    let mut state = 42u64;
    let data: Vec<f64> = (0..1_000_000)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect();

    let smallest_tenth = kselect::select(&data, 9)?;
    let largest = kselect::select_largest(&data, 0)?;
    let median = kselect::median(&data)?;
    let numpy_median = kselect::median_mean(&data)?;
    let deciles: Vec<usize> = (1..10).map(|d| d * data.len() / 10).collect();
    let values = kselect::multiselect(&data, &deciles)?;

    println!("10th smallest: {smallest_tenth}");
    println!("largest:       {largest}");
    println!("lower median:  {median}");
    println!("numpy median:  {numpy_median}");
    for (rank, value) in deciles.iter().zip(&values) {
        println!("rank {rank:>7}: {value}");
    }
    Ok(())
}
