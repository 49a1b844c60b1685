//! Selection on a CUDA GPU from a device-resident buffer (no copy back), falling back to a note
//! when no GPU is present.
//!
//! ```text
//! cargo run --release --example 03_gpu
//! ```

use kselect::{Algorithm, Device, DeviceBuffer, Selector};

fn main() -> kselect::Result<()> {
    let device = match Device::cuda(0) {
        Ok(device) => device,
        Err(e) => {
            println!("no GPU here ({e}); the CPU gives the same answers: see 01_select");
            return Ok(());
        }
    };
    println!("on {}", device.description());
    let n = 1 << 26;
    let data: Vec<f32> = (0..n)
        .map(|i| ((i as u64 * 2654435761) % 1_000_003) as f32)
        .collect();
    let buf = DeviceBuffer::from_host(&device, &data)?;
    for algorithm in [Algorithm::Radix, Algorithm::SortChoose] {
        let sel = Selector::on(device.clone()).algorithm(algorithm);
        let start = std::time::Instant::now();
        let median = sel.select(&buf, n / 2)?;
        println!("{algorithm:>12}: median {median} in {:?}", start.elapsed());
    }
    println!("cpu check:    {}", kselect::select(&data, n / 2)?);
    Ok(())
}
