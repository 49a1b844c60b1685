//! Where the NCCL communicator's messages wait on their way between the host and the GPU: a
//! page-locked host buffer and a device buffer, kept for the communicator's life. A copy out
//! of page-locked memory is queued on the stream like the NCCL call after it, so a message
//! costs no allocation and no synchronous copy; a rank waits only for what it reads, or before
//! it writes the buffers again.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice};

use crate::device::cuda::driver_error;
use crate::error::Result;

/// Words the kept buffers grow to at most; a longer message gets buffers of its own (a
/// pageable host vector and a fresh device allocation), dropped after it.
pub(super) const KEPT_WORDS: usize = 1 << 20;

/// Words the kept buffers hold at first.
const FIRST_WORDS_KEPT: usize = 1 << 14;

/// The kept buffers: page-locked host memory and device memory of the same length.
type Kept = (PinnedHostSlice<u64>, CudaSlice<u64>);

/// A host buffer and a device buffer for messages, on one stream.
pub(super) struct Staging {
    stream: Arc<CudaStream>,
    kept: Option<Kept>,
    /// Whether work queued on the stream may still read or write the kept buffers.
    queued: bool,
}

/// What a step over the buffers leaves behind: nothing on the stream that touches them, or
/// work still queued (a copy or an NCCL call that nobody waited for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Left {
    Done,
    Queued,
}

impl Staging {
    /// Buffers on `stream`, allocated on first use.
    pub(super) fn new(stream: Arc<CudaStream>) -> Staging {
        Staging {
            stream,
            kept: None,
            queued: false,
        }
    }

    /// Waits for the work queued on the stream.
    pub(super) fn wait(&mut self, what: &str) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| driver_error(what, e))?;
        self.queued = false;
        Ok(())
    }

    /// Runs `step` with a host and a device buffer of at least `len` words each, once the work
    /// queued over them is done; `step` tells whether it leaves work queued over them.
    pub(super) fn with<R>(
        &mut self,
        len: usize,
        step: impl FnOnce(&mut [u64], &mut CudaSlice<u64>) -> Result<(R, Left)>,
    ) -> Result<R> {
        if self.queued {
            self.wait("waiting for the last message")?;
        }
        if len > KEPT_WORDS {
            let mut host = vec![0u64; len];
            let mut device = self
                .stream
                .alloc_zeros::<u64>(len)
                .map_err(|e| driver_error("allocating a message's device buffer", e))?;
            let (out, left) = step(&mut host, &mut device)?;
            // Its buffers are dropped here: nothing queued may still use them.
            if left == Left::Queued {
                self.wait("waiting for a long message")?;
            }
            return Ok(out);
        }
        // Until the step says otherwise (and if it fails midway), its copies may be queued.
        self.queued = true;
        let (host, device) = self.reserve(len)?;
        let host = host
            .as_mut_slice()
            .map_err(|e| driver_error("reading the staging buffer", e))?;
        let (out, left) = step(&mut host[..len], device)?;
        self.queued = left == Left::Queued;
        Ok(out)
    }

    /// The kept buffers, grown to at least `len` words (at most [`KEPT_WORDS`]).
    fn reserve(&mut self, len: usize) -> Result<&mut Kept> {
        let kept = match self.kept.take() {
            Some(kept) if kept.0.len() >= len => kept,
            _ => {
                let words = len.next_power_of_two().clamp(FIRST_WORDS_KEPT, KEPT_WORDS);
                let failed = |e| driver_error("allocating the staging buffers", e);
                let context = self.stream.context();
                // SAFETY: the memory is written (zeroed) below before anything reads it.
                let mut host =
                    unsafe { context.alloc_pinned_with_flags::<u64>(words, 0) }.map_err(failed)?;
                host.as_mut_slice().map_err(failed)?.fill(0);
                let device = self.stream.alloc_zeros::<u64>(words).map_err(failed)?;
                (host, device)
            }
        };
        Ok(self.kept.insert(kept))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // The page-locked buffer is freed next: no queued copy may still read or write it.
        if self.queued {
            let _ = self.stream.synchronize();
        }
    }
}
