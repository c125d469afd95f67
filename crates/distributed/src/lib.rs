//! The library's algorithms over an array sharded across GPUs, on NVIDIA's NCCL (through
//! [cudarc](https://github.com/coreylowman/cudarc)'s bindings; libnccl is loaded at run time).
//!
//! Each rank holds its part of the array (its *shard*: any length, empty ones too) on its own
//! GPU and makes the same calls as the others; each call returns the same result on every rank,
//! or an error on every rank.
//!
//! | call | what every rank gets | NCCL traffic |
//! |---|---|---|
//! | [`reduce`] | the whole array's reduction (`Sum`, `Min`, `Max`), combined in rank order: the same on every rank and run | an all-gather of one accumulator a rank |
//! | [`argmin`], [`argmax`] | the whole array's extreme and its global index (the single-GPU rules: first on ties, first NaN) | an all-gather of 32 bytes a rank |
//! | [`inclusive_scan`], [`exclusive_scan`] | its shard's part of the whole array's scan (rank order), from a local reduce, one small exchange and a local scan seeded with the earlier ranks' total | an all-gather of one accumulator a rank |
//! | [`select_if`], [`select_flagged`], [`unique`], [`partition_if`] | its shard's kept items (they stay on their rank) and their [`Placement`] in the whole array's result | an all-gather of two `u64` a rank (and, for `unique`, each shard's last item) |
//! | [`rebalance`] | an equal part of the whole array (the ranks' items, in rank order), in order | an all-gather of one `u64` a rank, then grouped sends and receives of the items |
//! | [`sort_keys`], [`sort_pairs`] | an equal part of the whole array sorted (the ranks' parts in rank order; stable across ranks), every key type, ascending or descending | a few all-gathers of sampled keys, then grouped sends and receives of the items (each crosses once) |
//! | [`top_k`] | the whole array's `k` largest or smallest keys and their global indices, best first (ties to the lower index) | an all-gather of three words a rank, then each rank's `min(k, n_r)` candidates sent to every other |
//! | [`histogram_even`], [`histogram_range`] | the whole array's counts (exact) | an all-reduce of the bins' counters |
//! | [`all_reduce`] | NCCL's element-wise all-reduce of a device buffer, in place | NCCL's |
//! | [`all_gather`] | every rank's buffer, in rank order | NCCL's |
//!
//! A [`Communicator`] is made one of three ways: [`Communicator::local`] over several GPUs of
//! one process (a thread a rank afterwards), [`Communicator::from_world`] in each process that
//! torchrun or Slurm started, its [`World`] from the launcher's variables (rank 0 gives NCCL's
//! id to the others over TCP), or
//! [`Communicator::single`], a world of one rank that needs no NCCL. NCCL's communicators are
//! non-blocking: every wait watches a timeout and NCCL's error state, and aborts the
//! communicator (`ncclCommAbort`) rather than hang where a rank fails or never joins.
//!
//! NCCL's documentation: <https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/>. The
//! design of the reduce (local reduce, all-gather of the partials, combine): CCCL's multi-GPU
//! algorithms (NVIDIA/cccl, `cudax/include/cuda/experimental/__multi_gpu`).

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod collectives;
mod communicator;
mod compaction;
mod error;
mod exchange;
mod histogram;
mod nccl;
mod rebalance;
mod reduce;
pub mod rendezvous;
mod scan;
mod sort;
mod top_k;

pub use collectives::{ReduceOp, all_gather, all_reduce};
pub use communicator::{Communicator, DEFAULT_TIMEOUT};
pub use compaction::{PartitionPlacement, Placement, partition_if, select_flagged, select_if, unique};
pub use error::{Error, Result};
pub use histogram::{histogram_even, histogram_range};
pub use nccl::{NcclType, UniqueId};
pub use rebalance::rebalance;
pub use reduce::{argmax, argmin, reduce};
pub use rendezvous::World;
pub use scan::{exclusive_scan, inclusive_scan};
pub use sort::{sort_keys, sort_pairs};
pub use top_k::top_k;
