//! [`DistributedError`]: why a group of ranks cannot be formed as asked.

/// Why a group of ranks cannot be formed as asked: a rank beyond the group, a GPU given twice,
/// more ranks on a host than GPUs (`kselect::Error::Distributed`). The messages name the
/// numbers involved.
///
/// ```
/// use kselect::distributed::DistributedError;
/// use kselect::Error;
/// let err = Error::from(DistributedError::GpuTwice { gpu: 1 });
/// assert_eq!(
///     err.to_string(),
///     "invalid argument: GPU 1 is given twice; an NCCL group has one rank per GPU"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DistributedError {
    /// A rank not below the size of its group.
    #[error("rank {rank} of an NCCL group of {size} ranks")]
    RankBeyondSize {
        /// The rank.
        rank: usize,
        /// The ranks of the group.
        size: usize,
    },
    /// One GPU given for two ranks.
    #[error("GPU {gpu} is given twice; an NCCL group has one rank per GPU")]
    GpuTwice {
        /// The GPU's ordinal.
        gpu: usize,
    },
    /// More ranks on a host than it has GPUs, for a communicator of a GPU a rank.
    #[error(
        "{ranks} ranks on a host with {gpus} GPU(s); NCCL needs a GPU for each rank (run fewer \
         ranks, or use the MPI communicator, whose ranks may share a GPU)"
    )]
    TooFewGpus {
        /// The ranks on the host.
        ranks: usize,
        /// Its GPUs.
        gpus: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn messages_keep_the_invalid_argument_prefix_and_the_numbers() {
        let cases = [
            (
                DistributedError::RankBeyondSize { rank: 4, size: 4 },
                "invalid argument: rank 4 of an NCCL group of 4 ranks",
            ),
            (
                DistributedError::TooFewGpus { ranks: 3, gpus: 2 },
                "invalid argument: 3 ranks on a host with 2 GPU(s); NCCL needs a GPU for each \
                 rank (run fewer ranks, or use the MPI communicator, whose ranks may share a GPU)",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(Error::from(e).to_string(), want);
        }
    }
}
