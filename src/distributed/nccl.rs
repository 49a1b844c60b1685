//! The NCCL communicator: one rank per GPU, over cudarc's bindings to NCCL (the library is
//! loaded at run time, like the CUDA driver).
//!
//! The selection code hands a communicator host words and bytes; this one stages them
//! through page-locked host memory and its GPU's memory (both kept for the communicator's
//! life, `nccl_staging`) on the GPU's stream, so NCCL moves them over NVLink or PCIe between
//! the GPUs of a host, or over the network between hosts. A rank waits only for what it
//! reads: a send, or the root's own broadcast, is left queued on the stream. A gather posts
//! the root's receives from every rank in one NCCL group.

use std::cell::RefCell;
use std::fmt;

use cudarc::driver::CudaSlice;
use cudarc::nccl::{result::NcclError, Comm, Id, ReduceOp as NcclOp};

use crate::device::cuda::driver_error;
use crate::device::CudaDevice;
use crate::error::{Error, Result};

use super::communicator::{Communicator, ReduceOp};
use super::link::{bytes_to_words, words_to_bytes};
use super::nccl_staging::{Left, Staging};
use super::DistributedError;

/// The bytes of an NCCL unique id.
pub const NCCL_ID_BYTES: usize = 128;

/// Words of a message's first transfer: its length, then up to `FIRST_WORDS - 1` words of it.
/// A longer message takes one more transfer for the rest, so that the messages of a selection
/// (plans of up to 600 intervals, active buckets, results, every rank's sample at the setup)
/// each take one NCCL operation.
pub(super) const FIRST_WORDS: usize = 2048;

/// The identity of an NCCL group: made once, by one rank (or the thread that starts the
/// group), and given to every rank, which passes it to [`Nccl::new`].
///
/// ```no_run
/// use kselect::distributed::NcclId;
/// let id = NcclId::new()?;
/// let bytes = id.to_bytes(); // sent to the other ranks by any means (MPI, a file, a socket)
/// assert_eq!(NcclId::from_bytes(bytes).to_bytes(), bytes);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct NcclId(Id);

impl fmt::Debug for NcclId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NcclId(..)")
    }
}

impl NcclId {
    /// A new unique id (an error when the NCCL library cannot be loaded).
    pub fn new() -> Result<NcclId> {
        library()?;
        Id::new()
            .map(NcclId)
            .map_err(|e| nccl_error("making a unique id", e))
    }

    /// The id as bytes, to send to the other ranks.
    ///
    /// ```no_run
    /// let bytes = kselect::distributed::NcclId::new()?.to_bytes();
    /// assert_eq!(bytes.len(), kselect::distributed::NCCL_ID_BYTES);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn to_bytes(&self) -> [u8; NCCL_ID_BYTES] {
        self.0.internal().map(|c| c as u8)
    }

    /// The id from the bytes another rank sent.
    ///
    /// ```
    /// use kselect::distributed::{NcclId, NCCL_ID_BYTES};
    /// let id = NcclId::from_bytes([7; NCCL_ID_BYTES]);
    /// assert_eq!(id.to_bytes(), [7; NCCL_ID_BYTES]);
    /// ```
    pub fn from_bytes(bytes: [u8; NCCL_ID_BYTES]) -> NcclId {
        NcclId(Id::uninit(bytes.map(|b| b as std::ffi::c_char)))
    }
}

/// A communicator over NCCL: each rank a GPU, in one process (threads, [`Nccl::on_each_gpu`])
/// or in one process per GPU (under MPI, [`Nccl::over_mpi`], or any launcher that passes
/// the [`NcclId`] around).
///
/// A rank's part usually lies on its own GPU ([`Nccl::device`]), for
/// [`DistributedSelector::quantiles_device`](super::DistributedSelector::quantiles_device).
/// NCCL gives each GPU to one rank of a group: ranks sharing a GPU need [`Mpi`](super::Mpi)
/// instead.
///
/// ```no_run
/// use kselect::distributed::{Communicator, DistributedSelector, Nccl};
/// use kselect::{CudaDevice, DeviceBuffer, QuantileMethod};
/// let gpus: Vec<CudaDevice> = (0..CudaDevice::count()?).map(CudaDevice::new).collect::<Result<_, _>>()?;
/// let medians = Nccl::on_each_gpu(&gpus, |nccl| {
///     let part: Vec<f32> = (0..1_000_000).map(|i| (i * (nccl.rank() + 1)) as f32).collect();
///     let buffer = DeviceBuffer::from_host_on(nccl.device(), &part)?;
///     DistributedSelector::new(nccl).quantiles_device(&buffer, &[0.5], QuantileMethod::Linear)
/// })?;
/// println!("{:?}", medians[0].as_ref().unwrap().values);
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct Nccl {
    // First, so that it waits for the messages still queued before the group is left.
    staging: RefCell<Staging>,
    comm: Comm,
    device: CudaDevice,
}

// SAFETY: an NCCL communicator is not bound to the thread that made it; `Nccl` is not `Sync`,
// so only one thread at a time calls into it, which is all NCCL asks.
unsafe impl Send for Nccl {}

impl fmt::Debug for Nccl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Nccl")
            .field("rank", &self.comm.rank())
            .field("size", &self.comm.world_size())
            .field("device", &self.device.ordinal())
            .finish()
    }
}

impl Nccl {
    /// Joins rank `rank` of a group of `size` ranks named by `id`, on `device`. Collective:
    /// every rank of the group calls it (from its own thread or process) before any returns.
    pub fn new(device: &CudaDevice, rank: usize, size: usize, id: &NcclId) -> Result<Nccl> {
        library()?;
        if rank >= size {
            return Err(DistributedError::RankBeyondSize { rank, size }.into());
        }
        bind(device)?;
        let comm = Comm::from_rank(device.stream().clone(), rank, size, id.0)
            .map_err(|e| nccl_error("joining the group", e))?;
        Ok(Nccl::of(comm, device))
    }

    /// A group of one rank on `device`.
    ///
    /// ```no_run
    /// use kselect::distributed::{Communicator, Nccl};
    /// let nccl = Nccl::single(&kselect::CudaDevice::new(0)?)?;
    /// assert_eq!((nccl.rank(), nccl.size()), (0, 1));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn single(device: &CudaDevice) -> Result<Nccl> {
        Nccl::new(device, 0, 1, &NcclId::new()?)
    }

    /// Runs `work` on every GPU of `devices`, one thread each, as the ranks of one NCCL group
    /// (rank `i` on `devices[i]`); the results in rank order. The GPUs must be distinct.
    pub fn on_each_gpu<R: Send>(
        devices: &[CudaDevice],
        work: impl Fn(&Nccl) -> R + Sync,
    ) -> Result<Vec<R>> {
        library()?;
        let mut ordinals: Vec<usize> = devices.iter().map(CudaDevice::ordinal).collect();
        ordinals.sort_unstable();
        if let Some(w) = ordinals.windows(2).find(|w| w[0] == w[1]) {
            return Err(DistributedError::GpuTwice { gpu: w[0] }.into());
        }
        if devices.is_empty() {
            return Ok(Vec::new());
        }
        let streams = devices.iter().map(|d| d.stream().clone()).collect();
        // One call makes every rank's communicator, so a failure cannot leave a rank waiting.
        let comms = Comm::from_devices(streams).map_err(|e| nccl_error("making the group", e))?;
        let ranks: Vec<Nccl> = comms
            .into_iter()
            .zip(devices)
            .map(|(comm, device)| Nccl::of(comm, device))
            .collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = ranks
                .into_iter()
                .map(|rank| {
                    let work = &work;
                    s.spawn(move || bind(&rank.device).map(|()| work(&rank)))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    }

    /// The group over the ranks of `mpi`, each on the GPU of its local rank (ranks on one host
    /// take GPUs 0, 1, ...; a host with more ranks than GPUs is refused, on every rank).
    /// Collective over `mpi`; the root makes the id and MPI carries it.
    #[cfg(feature = "mpi")]
    pub fn over_mpi(mpi: &super::Mpi) -> Result<Nccl> {
        use super::all_succeeded;
        use super::shard::{bytes_to_keys, keys_to_bytes};
        let (local, on_host) = mpi.local_rank_and_size();
        let device = CudaDevice::count().and_then(|gpus| {
            if on_host > gpus {
                return Err(DistributedError::TooFewGpus {
                    ranks: on_host,
                    gpus,
                }
                .into());
            }
            CudaDevice::new(local)
        });
        let device = all_succeeded(mpi, device)?;
        let root = mpi.rank() == 0;
        let id = all_succeeded(
            mpi,
            if root {
                NcclId::new().map(Some)
            } else {
                Ok(None)
            },
        )?;
        let mut words: Vec<u64> = id.map_or(Vec::new(), |id| bytes_to_keys(&id.to_bytes()));
        mpi.broadcast(&mut words)?;
        let bytes: [u8; NCCL_ID_BYTES] = keys_to_bytes(&words).try_into().map_err(|_| {
            Error::Communication(
                "the NCCL id broadcast over MPI arrived with the wrong length".into(),
            )
        })?;
        Nccl::new(&device, mpi.rank(), mpi.size(), &NcclId::from_bytes(bytes))
    }

    /// A rank of `comm` on `device`, with its staging buffers (allocated on first use).
    fn of(comm: Comm, device: &CudaDevice) -> Nccl {
        Nccl {
            staging: RefCell::new(Staging::new(device.stream().clone())),
            comm,
            device: device.clone(),
        }
    }

    /// The GPU of this rank.
    pub fn device(&self) -> &CudaDevice {
        &self.device
    }

    fn peer(&self, rank: usize) -> Result<i32> {
        if rank >= self.size() || rank == self.rank() {
            return Err(Error::Communication(format!(
                "rank {} of an NCCL group of {} has no peer {rank} to exchange messages with",
                self.rank(),
                self.size()
            )));
        }
        Ok(rank as i32)
    }

    /// Waits for the stream, where NCCL's work is queued.
    fn wait(&self, what: &str) -> Result<()> {
        self.device
            .stream()
            .synchronize()
            .map_err(|e| driver_error(what, e))
    }

    /// Queues the copy of `host` into `device`'s first words.
    fn to_device(&self, host: &[u64], device: &mut CudaSlice<u64>) -> Result<()> {
        self.device
            .stream()
            .memcpy_htod(host, &mut device.slice_mut(..host.len()))
            .map_err(|e| driver_error("staging a message on the GPU", e))
    }

    /// Copies `device`'s first words into `host` and waits for them.
    fn to_host(&self, device: &CudaSlice<u64>, host: &mut [u64]) -> Result<()> {
        self.device
            .stream()
            .memcpy_dtoh(&device.slice(..host.len()), host)
            .map_err(|e| driver_error("reading a message from the GPU", e))?;
        self.wait("waiting for a message")
    }

    /// Runs `step` over the staging buffers (at least `len` words), on this rank's GPU.
    fn staged<R>(
        &self,
        len: usize,
        step: impl FnOnce(&mut [u64], &mut CudaSlice<u64>) -> Result<(R, Left)>,
    ) -> Result<R> {
        bind(&self.device)?;
        self.staging.borrow_mut().with(len, step)
    }

    /// Broadcasts `host` from the root to every rank's `host` (of the same length). The root
    /// does not wait for it.
    fn broadcast_words(&self, host: &mut [u64]) -> Result<()> {
        let root = self.rank() == 0;
        self.staged(host.len(), |stage, device| {
            if root {
                stage.copy_from_slice(host);
                self.to_device(stage, device)?;
            }
            self.comm
                .broadcast_in_place(&mut device.slice_mut(..host.len()), 0)
                .map_err(|e| nccl_error("broadcasting", e))?;
            if root {
                return Ok(((), Left::Queued));
            }
            self.to_host(device, stage)?;
            host.copy_from_slice(stage);
            Ok(((), Left::Done))
        })
    }

    /// Sends `words` to `peer`, without waiting for it.
    fn send_words(&self, words: &[u64], peer: i32) -> Result<()> {
        self.staged(words.len(), |stage, device| {
            stage.copy_from_slice(words);
            self.to_device(stage, device)?;
            self.comm
                .send(&device.slice(..words.len()), peer)
                .map_err(|e| nccl_error("sending", e))?;
            Ok(((), Left::Queued))
        })
    }

    /// Receives, from each `(peer, len)` of `parts`, `len` words, all posted in one NCCL
    /// group; their words one after another.
    fn receive_words(&self, parts: &[(i32, usize)]) -> Result<Vec<u64>> {
        let total = parts.iter().map(|&(_, len)| len).sum();
        self.staged(total, |stage, device| {
            in_group(|| {
                let mut at = 0;
                for &(peer, len) in parts {
                    self.comm
                        .recv(&mut device.slice_mut(at..at + len), peer)
                        .map_err(|e| nccl_error("receiving", e))?;
                    at += len;
                }
                Ok(())
            })?;
            self.to_host(device, stage)?;
            Ok((stage.to_vec(), Left::Done))
        })
    }

    /// The messages that begin with the first transfers `firsts` (one after another, one a
    /// peer of `peers`): the rest of each longer one received, all in one NCCL group.
    fn complete(&self, peers: &[i32], firsts: &[u64]) -> Result<Vec<Vec<u64>>> {
        let mut messages: Vec<Vec<u64>> = Vec::with_capacity(peers.len());
        let mut rests = Vec::new();
        for (&peer, first) in peers.iter().zip(firsts.chunks_exact(FIRST_WORDS)) {
            let mut words = Vec::new();
            let inline = unpack_first_transfer(first, &mut words);
            if words.len() > inline {
                rests.push((peer, words.len() - inline));
            }
            messages.push(words);
        }
        if rests.is_empty() {
            return Ok(messages);
        }
        let rest = self.receive_words(&rests)?;
        let mut at = 0;
        for words in &mut messages {
            let inline = words.len().min(FIRST_WORDS - 1);
            let len = words.len() - inline;
            words[inline..].copy_from_slice(&rest[at..at + len]);
            at += len;
        }
        Ok(messages)
    }
}

impl Communicator for Nccl {
    fn rank(&self) -> usize {
        self.comm.rank()
    }

    fn size(&self) -> usize {
        self.comm.world_size()
    }

    fn reduce(&self, values: &mut [u64], op: ReduceOp) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        let op = match op {
            ReduceOp::Sum => NcclOp::Sum,
            ReduceOp::Max => NcclOp::Max,
        };
        let root = self.rank() == 0;
        self.staged(values.len(), |stage, device| {
            stage.copy_from_slice(values);
            self.to_device(stage, device)?;
            self.comm
                .reduce_in_place(&mut device.slice_mut(..values.len()), &op, 0)
                .map_err(|e| nccl_error("reducing", e))?;
            if !root {
                return Ok(((), Left::Queued));
            }
            self.to_host(device, stage)?;
            values.copy_from_slice(stage);
            Ok(((), Left::Done))
        })
    }

    fn broadcast(&self, values: &mut Vec<u64>) -> Result<()> {
        let mut first = first_transfer(values);
        self.broadcast_words(&mut first)?;
        let inline = unpack_first_transfer(&first, values);
        if values.len() > inline {
            self.broadcast_words(&mut values[inline..])?;
        }
        Ok(())
    }

    fn send(&self, to: usize, bytes: &[u8]) -> Result<()> {
        let peer = self.peer(to)?;
        let words = bytes_to_words(bytes);
        self.send_words(&first_transfer(&words), peer)?;
        if words.len() > FIRST_WORDS - 1 {
            self.send_words(&words[FIRST_WORDS - 1..], peer)?;
        }
        Ok(())
    }

    fn receive(&self, from: usize) -> Result<Vec<u8>> {
        let peer = self.peer(from)?;
        let first = self.receive_words(&[(peer, FIRST_WORDS)])?;
        let words = self.complete(&[peer], &first)?;
        Ok(words_to_bytes(&words[0]))
    }

    /// Every rank's first transfer received by the root in one NCCL group, then the rest of
    /// the longer messages in one more.
    fn gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        if self.rank() != 0 {
            self.send(0, bytes)?;
            return Ok(Vec::new());
        }
        let peers: Vec<i32> = (1..self.size()).map(|r| r as i32).collect();
        let firsts: Vec<(i32, usize)> = peers.iter().map(|&p| (p, FIRST_WORDS)).collect();
        let firsts = self.receive_words(&firsts)?;
        let mut all = Vec::with_capacity(self.size());
        all.push(bytes.to_vec());
        for words in self.complete(&peers, &firsts)? {
            all.push(words_to_bytes(&words));
        }
        Ok(all)
    }

    fn transport(&self) -> &'static str {
        "nccl"
    }
}

/// Runs `post` between the start and the end of an NCCL group, so that the operations it
/// posts proceed together; the group is ended whatever `post` returns.
fn in_group(post: impl FnOnce() -> Result<()>) -> Result<()> {
    cudarc::nccl::result::group_start().map_err(|e| nccl_error("starting a group", e))?;
    let posted = post();
    let ended = cudarc::nccl::result::group_end()
        .map(drop)
        .map_err(|e| nccl_error("ending a group", e));
    posted.and(ended)
}

/// A message's first transfer: its length, then as much of it as fits in [`FIRST_WORDS`].
fn first_transfer(words: &[u64]) -> Vec<u64> {
    let mut first = vec![0u64; FIRST_WORDS];
    first[0] = words.len() as u64;
    let inline = words.len().min(FIRST_WORDS - 1);
    first[1..=inline].copy_from_slice(&words[..inline]);
    first
}

/// Sizes `words` to the message a first transfer begins and writes the words it carried over
/// its start (the rest, which follow in one more transfer, are left as they are); returns how
/// many words it carried.
fn unpack_first_transfer(first: &[u64], words: &mut Vec<u64>) -> usize {
    words.resize(first[0] as usize, 0);
    let inline = words.len().min(FIRST_WORDS - 1);
    words[..inline].copy_from_slice(&first[1..=inline]);
    inline
}

/// Makes `device`'s context current on this thread (NCCL launches on the current device).
fn bind(device: &CudaDevice) -> Result<()> {
    device
        .stream()
        .context()
        .bind_to_thread()
        .map_err(|e| driver_error("making the GPU current", e))
}

/// Whether the NCCL library can be loaded, as an error naming it when it cannot.
fn library() -> Result<()> {
    // SAFETY: only tries to load the shared library; it does not call into it.
    if unsafe { cudarc::nccl::sys::is_culib_present() } {
        return Ok(());
    }
    Err(Error::Communication(
        "the NCCL library cannot be loaded: install NCCL (Debian: libnccl2 and libnccl-dev), \
         or put a libnccl.so on LD_LIBRARY_PATH (a link to the libnccl.so.2 of pip's \
         nvidia-nccl package serves)"
            .into(),
    ))
}

fn nccl_error(what: &str, e: NcclError) -> Error {
    Error::Communication(format!("NCCL failed {what}: {:?}", e.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_survives_its_first_transfer() {
        for len in [0, 1, FIRST_WORDS - 1, FIRST_WORDS, 3 * FIRST_WORDS] {
            let message: Vec<u64> = (0..len as u64).map(|i| i * 7 + 1).collect();
            let first = first_transfer(&message);
            assert_eq!(first.len(), FIRST_WORDS);
            // A receiver starts empty: the carried words arrive, the rest are to come.
            let mut received = Vec::new();
            let inline = unpack_first_transfer(&first, &mut received);
            assert_eq!(inline, len.min(FIRST_WORDS - 1));
            assert_eq!(received.len(), len);
            assert_eq!(received[..inline], message[..inline]);
            // The root, which sent it, keeps its whole message.
            let mut root = message.clone();
            unpack_first_transfer(&first, &mut root);
            assert_eq!(root, message);
        }
    }
}
