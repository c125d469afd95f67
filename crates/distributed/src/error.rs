//! The crate's one error type.

use std::time::Duration;

/// What can go wrong in a distributed call. A call that returns an error on one rank returns
/// one on every rank of its communicator: through NCCL, or through each rank's own timeout
/// where a peer never joins (NCCL does not report a peer's death within a node).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error of the single-GPU library on this rank (argument checks, the device, memory).
    #[error(transparent)]
    Gpu(#[from] gpu_primitives::Error),
    /// libnccl could not be loaded: cudarc looks for `libnccl.so` (and a few versioned names)
    /// on the library path; docs/user-guide.md, "Past one GPU", says how to point it to
    /// PyTorch's copy.
    #[error("NCCL is not available: {0}")]
    NcclUnavailable(String),
    /// NCCL returned an error (the communicator is aborted: every later call on it returns
    /// [`Error::Aborted`]).
    #[error("NCCL {call}: {code}{}", if .message.is_empty() { String::new() } else { format!(" ({})", .message) })]
    Nccl {
        /// The NCCL call.
        call: &'static str,
        /// Its result code (`ncclUnhandledCudaError`, `ncclRemoteError`, ...).
        code: String,
        /// NCCL's last error message for the communicator, where it has one.
        message: String,
    },
    /// A collective or the rendezvous did not finish within the communicator's timeout: a peer
    /// never joined or stopped (the communicator is aborted).
    #[error(
        "{what} did not finish in {after:?}: a rank never joined or stopped; the communicator is aborted"
    )]
    Timeout {
        /// What was waited for.
        what: &'static str,
        /// The timeout.
        after: Duration,
    },
    /// The communicator was aborted by an earlier error or timeout; make a new one.
    #[error("the communicator was aborted by an earlier error")]
    Aborted,
    /// The process's rank and world could not be read from the launcher's variables given to
    /// `World::from_vars` (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`, or
    /// Slurm's).
    #[error("environment variable {variable}: {problem}")]
    Environment {
        /// The variable.
        variable: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The exchange of NCCL's unique id between the ranks failed.
    #[error("rendezvous with {peer}: {problem}")]
    Rendezvous {
        /// The address of the peer (rank 0's listener, or the rank connecting to it).
        peer: String,
        /// What failed.
        problem: String,
    },
    /// An argument that cannot be right (mismatched lengths, no GPU given, ...).
    #[error("{0}")]
    InvalidArgument(String),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
