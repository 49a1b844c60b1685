//! Timing GPU work with CUDA events.

use cudarc::driver::CudaEvent;

use super::{driver_error, CudaDevice};
use crate::error::Result;

/// Times work queued on a device's stream with a pair of CUDA events.
///
/// ```no_run
/// use kselect::{CudaDevice, GpuTimer};
/// let gpu = CudaDevice::new(0)?;
/// let timer = GpuTimer::start(&gpu)?;
/// // ... queue work on the device ...
/// let ms = timer.stop()?;
/// assert!(ms >= 0.0);
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct GpuTimer {
    device: CudaDevice,
    start: CudaEvent,
}

fn timing_event(device: &CudaDevice) -> Result<CudaEvent> {
    device
        .stream()
        .context()
        .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(|e| driver_error("creating an event", e))
}

impl GpuTimer {
    /// Records the start event on the device's stream.
    pub fn start(device: &CudaDevice) -> Result<GpuTimer> {
        let start = timing_event(device)?;
        start
            .record(device.stream())
            .map_err(|e| driver_error("recording an event", e))?;
        Ok(GpuTimer {
            device: device.clone(),
            start,
        })
    }

    /// Records the stop event, waits for it, and returns the milliseconds between the two.
    pub fn stop(self) -> Result<f32> {
        let stop = timing_event(&self.device)?;
        stop.record(self.device.stream())
            .map_err(|e| driver_error("recording an event", e))?;
        stop.synchronize()
            .map_err(|e| driver_error("waiting for an event", e))?;
        self.start
            .elapsed_ms(&stop)
            .map_err(|e| driver_error("reading elapsed time", e))
    }
}
