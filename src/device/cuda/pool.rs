//! The device's memory pool: what the crate's buffers hold of it, memory kept ready for later
//! calls, and the upper bounds ([`MemoryNeed`]) the algorithms give of their workspace.
//!
//! Every device buffer the crate allocates comes from the device's default stream-ordered pool,
//! which keeps freed memory mapped (see `retaining_pool`). So a workspace is allocated once: a
//! later call of the same size takes it from the pool again, and [`CudaDevice::reserve`] maps
//! what a query ([`crate::Selector::workspace_bytes`]) says before the first call.

use cudarc::driver::sys::{CUmemPool_attribute, CUmemoryPool};

use super::{driver_error, CudaDevice};
use crate::error::Result;

/// Bytes one buffer of `len` elements of `T` takes from the pool: its size rounded up to
/// [`MemoryNeed::GRANULE`].
fn buffer_bytes<T>(len: usize) -> usize {
    (len.max(1) * std::mem::size_of::<T>()).next_multiple_of(MemoryNeed::GRANULE)
}

/// An upper bound of the device memory a computation allocates while it runs, in bytes: built
/// from its buffers, those alive together added ([`MemoryNeed::and`]) and those alive one after
/// another taking the larger ([`MemoryNeed::or`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct MemoryNeed(usize);

impl MemoryNeed {
    /// Nothing.
    pub(crate) const NONE: MemoryNeed = MemoryNeed(0);
    /// Every buffer is counted as a multiple of this many bytes (the pool's allocations are
    /// aligned to at most this).
    pub(crate) const GRANULE: usize = 512;

    /// One buffer of `len` elements of `T`.
    pub(crate) fn of<T>(len: usize) -> MemoryNeed {
        MemoryNeed(buffer_bytes::<T>(len))
    }

    /// `bytes` of small buffers, counted as they are.
    pub(crate) fn bytes(bytes: usize) -> MemoryNeed {
        MemoryNeed(bytes)
    }

    /// This and `other` alive at once.
    pub(crate) fn and(self, other: MemoryNeed) -> MemoryNeed {
        MemoryNeed(self.0.saturating_add(other.0))
    }

    /// This, then `other` (or either, whichever runs).
    pub(crate) fn or(self, other: MemoryNeed) -> MemoryNeed {
        MemoryNeed(self.0.max(other.0))
    }

    /// The bound in bytes.
    pub(crate) fn total(self) -> usize {
        self.0
    }
}

/// What the device's memory pool holds, in bytes, with the peaks since the pool was opened or
/// since [`CudaDevice::reset_pool_peaks`].
///
/// ```no_run
/// let gpu = kselect::CudaDevice::new(0)?;
/// if let Some(usage) = gpu.pool_usage()? {
///     println!("{} bytes in live buffers, {} mapped", usage.in_use, usage.reserved);
/// }
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// Held by live buffers.
    pub in_use: usize,
    /// The most held by live buffers at once.
    pub in_use_peak: usize,
    /// Mapped from the device (live buffers and memory kept for later ones).
    pub reserved: usize,
    /// The most mapped at once.
    pub reserved_peak: usize,
}

/// Reads a `u64` attribute of a pool.
fn attribute(pool: CUmemoryPool, attr: CUmemPool_attribute) -> Result<usize> {
    let mut value = 0u64;
    // SAFETY: every attribute read here is a u64 (cuuint64_t), and `value` outlives the call.
    unsafe {
        cudarc::driver::result::mem_pool::get_attribute(pool, attr, (&mut value as *mut u64).cast())
    }
    .map_err(|e| driver_error("reading a memory pool attribute", e))?;
    Ok(value as usize)
}

/// Sets a pool's peak attribute back to zero (the driver then starts it from the current value).
fn reset(pool: CUmemoryPool, attr: CUmemPool_attribute) -> Result<()> {
    let mut zero = 0u64;
    // SAFETY: the peak attributes are u64 values that may only be set to zero; `zero` outlives
    // the call.
    unsafe {
        cudarc::driver::result::mem_pool::set_attribute(pool, attr, (&mut zero as *mut u64).cast())
    }
    .map_err(|e| driver_error("resetting a memory pool peak", e))
}

impl CudaDevice {
    /// What the device's memory pool holds (`None` when the device does not allocate from a
    /// pool: then every buffer is mapped and unmapped on its own).
    ///
    /// ```no_run
    /// let gpu = kselect::CudaDevice::new(0)?;
    /// let usage = gpu.pool_usage()?.expect("a pool");
    /// assert!(usage.in_use <= usage.reserved);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn pool_usage(&self) -> Result<Option<PoolUsage>> {
        let Some(pool) = &self.inner.pool else {
            return Ok(None);
        };
        let read = |attr| attribute(pool.0, attr);
        Ok(Some(PoolUsage {
            in_use: read(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?,
            in_use_peak: read(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH)?,
            reserved: read(CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?,
            reserved_peak: read(CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)?,
        }))
    }

    /// Starts the peaks of [`CudaDevice::pool_usage`] again from the current values (after
    /// waiting for the queued work), to measure what the calls that follow take.
    ///
    /// ```no_run
    /// let gpu = kselect::CudaDevice::new(0)?;
    /// gpu.reset_pool_peaks()?;
    /// let buf = kselect::DeviceBuffer::from_host(&kselect::Device::Cuda(gpu.clone()), &[1u32; 1000])?;
    /// let usage = gpu.pool_usage()?.expect("a pool");
    /// assert!(usage.in_use_peak >= 4000);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn reset_pool_peaks(&self) -> Result<()> {
        self.synchronize()?;
        if let Some(pool) = &self.inner.pool {
            reset(pool.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH)?;
            reset(
                pool.0,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
            )?;
        }
        Ok(())
    }

    /// Maps `bytes` of device memory into the pool and keeps them there for later calls, so
    /// that a workspace of that size (see [`crate::Selector::workspace_bytes`]) costs no new
    /// mapping, and a device without the room fails here, before a long job starts. Memory the
    /// pool already keeps counts; a device without a pool reserves nothing.
    ///
    /// ```no_run
    /// use kselect::{Device, Selector};
    /// let gpu = kselect::CudaDevice::new(0)?;
    /// let sel = Selector::on(Device::Cuda(gpu.clone()));
    /// gpu.reserve(sel.workspace_bytes::<f32>(1 << 26, &[1 << 25])?)?;
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn reserve(&self, bytes: usize) -> Result<()> {
        if self.inner.pool.is_none() || bytes == 0 {
            return Ok(());
        }
        let held = self.alloc::<u8>(bytes, "the reserved workspace")?;
        drop(held);
        self.synchronize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_alive_together_add_and_one_after_another_take_the_larger() {
        let a = MemoryNeed::of::<u64>(1000);
        assert_eq!(a.total(), 8192);
        let b = MemoryNeed::of::<u8>(1);
        assert_eq!(b.total(), MemoryNeed::GRANULE);
        assert_eq!(a.and(b).total(), 8192 + MemoryNeed::GRANULE);
        assert_eq!(a.or(b), a);
        assert_eq!(MemoryNeed::NONE.or(b), b);
        assert_eq!(MemoryNeed::bytes(7).and(MemoryNeed::bytes(5)).total(), 12);
        assert_eq!(
            MemoryNeed::of::<u32>(0),
            MemoryNeed::of::<u32>(1),
            "an empty buffer"
        );
    }
}
