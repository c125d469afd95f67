//! Warp scope: the [`WARP_SIZE`](crate::thread::WARP_SIZE) lanes of a warp exchange registers
//! without shared memory or barriers.
//!
//! Every function here is called by all lanes named in a *member mask* together (PTX `.sync`
//! instructions). For a full warp the mask is `u32::MAX`; for the last, partial warp of a block
//! whose size is not a multiple of `WARP_SIZE`, it is
//! [`warp_member_mask`](crate::thread::warp_member_mask).

pub mod reduce;
pub mod shuffle;
pub mod vote;

pub use reduce::{warp_reduce, warp_sum};
pub use shuffle::Shuffle;
pub use vote::{warp_all, warp_any, warp_ballot};
