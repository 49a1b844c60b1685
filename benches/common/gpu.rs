//! CUDA device 0 for the GPU benchmarks, their inputs on it, and timing with CUDA events. A
//! benchmark includes it with `#[path = "common/gpu.rs"] mod gpu;`.

// Not every benchmark uses every helper.
#![allow(dead_code)]

use kselect::{CudaDevice, Device, DeviceBuffer, Element, GpuTimer};

/// CUDA device 0; without one, a note on stderr naming the benchmark `bench` and `None`, or
/// exit status 1 where `KSELECT_REQUIRE_GPU=1`.
pub fn device_or_exit(bench: &str) -> Option<CudaDevice> {
    match CudaDevice::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            eprintln!("{bench}: no GPU ({e})");
            if std::env::var("KSELECT_REQUIRE_GPU").as_deref() == Ok("1") {
                std::process::exit(1);
            }
            None
        }
    }
}

/// [`device_or_exit`], its description printed (`device: ...`) when there is one.
pub fn device_printed(bench: &str) -> Option<CudaDevice> {
    let gpu = device_or_exit(bench)?;
    println!("device: {}", describe(&gpu));
    Some(gpu)
}

/// The GPU's name, architecture and number of SMs, as the benchmarks print them.
pub fn describe(gpu: &CudaDevice) -> String {
    format!(
        "{} ({}, {} SMs)",
        gpu.name(),
        gpu.arch(),
        gpu.multiprocessors()
    )
}

/// The CPU's model name (from `/proc/cpuinfo` where there is one) and its threads.
pub fn describe_cpu() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("cpu: {model} ({} threads)", rayon::current_num_threads())
}

/// The device of a `--device` option (`cpu` or `cuda`) and its description; `None` where
/// there is no GPU for `cuda` (see [`device_or_exit`], which names the benchmark `bench`).
/// Another name exits with status 2.
pub fn named_device(name: &str, bench: &str) -> Option<(Device, String)> {
    match name {
        "cpu" => Some((Device::Cpu, describe_cpu())),
        "cuda" => {
            let gpu = device_or_exit(bench)?;
            let description = describe(&gpu);
            Some((Device::Cuda(gpu), description))
        }
        other => {
            eprintln!("unknown device {other} (cpu or cuda)");
            std::process::exit(2);
        }
    }
}

/// The times in ms of `reps` calls `f(run)`, each between CUDA events, after `warmups` calls
/// that are not timed.
pub fn event_times(
    gpu: &CudaDevice,
    warmups: usize,
    reps: usize,
    mut f: impl FnMut(usize) -> kselect::Result<()>,
) -> kselect::Result<Vec<f64>> {
    for r in 0..warmups {
        f(r)?;
    }
    let mut times = Vec::with_capacity(reps);
    for r in 0..reps {
        let timer = GpuTimer::start(gpu)?;
        f(r)?;
        times.push(timer.stop()? as f64);
    }
    Ok(times)
}

/// An input on the device: copies of it totalling at least 512 MiB (1 to 8), for the timed runs
/// to rotate among so that L2 never holds the input.
pub struct Copies<T: Element> {
    bufs: Vec<DeviceBuffer<T>>,
}

impl<T: Element> Copies<T> {
    pub fn upload(device: &Device, data: &[T]) -> kselect::Result<Self> {
        let bytes = std::mem::size_of_val(data);
        let copies = (512usize << 20).div_ceil(bytes.max(1)).clamp(1, 8);
        let bufs = (0..copies)
            .map(|_| DeviceBuffer::from_host(device, data))
            .collect::<kselect::Result<_>>()?;
        Ok(Copies { bufs })
    }

    /// The size of the input in bytes.
    pub fn bytes(&self) -> usize {
        self.bufs[0].len() * std::mem::size_of::<T>()
    }

    /// The copy of run `r`.
    pub fn get(&self, r: usize) -> &DeviceBuffer<T> {
        &self.bufs[r % self.bufs.len()]
    }

    /// The times in ms of [`DeviceBuffer::sum`], one read of the input: the floor of every
    /// operation on it (see [`event_times`]).
    pub fn floor_times(
        &self,
        gpu: &CudaDevice,
        warmups: usize,
        reps: usize,
    ) -> kselect::Result<Vec<f64>> {
        event_times(gpu, warmups, reps, |r| self.get(r).sum().map(|_| ()))
    }
}
