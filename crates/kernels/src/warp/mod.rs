//! Warp scope: the [`WARP_SIZE`](crate::thread::WARP_SIZE) lanes of a warp exchange registers
//! without shared memory or barriers; the warp radix sort alone keeps a tile in shared memory of
//! the warp's own, between warp barriers.
//!
//! Every function here is called by all lanes named in a *member mask* together (PTX `.sync`
//! instructions). For a full warp the mask is `u32::MAX`; the collectives take the number of
//! live `lanes` instead, for the last, partial warp of a block whose size is not a multiple of
//! `WARP_SIZE` ([`lanes_in_warp`](crate::thread::lanes_in_warp)).
//!
//! | function | result valid in | operator |
//! |---|---|---|
//! | [`warp_reduce`] | lane 0 | associative |
//! | [`warp_reduce_all`] | every lane (full warps) | associative, commutative |
//! | [`warp_inclusive_scan`], [`warp_exclusive_scan`] | every lane | associative |
//! | [`warp_segmented_exclusive_scan`] | every lane (full warps) | associative |
//! | [`warp_broadcast`] | every lane | - |
//! | [`warp_match_any`] | every lane (its peers) | - |
//! | [`warp_match_bits`] | every lane (its peers in the low bits) | - |
//! | [`warp_radix_sort_blocked`] | every lane (its items of the sorted tile) | - |

pub mod radix_sort;
pub mod reduce;
pub mod scan;
pub mod shuffle;
pub mod vote;

pub use radix_sort::{WarpRadixSortStorage, warp_radix_sort_blocked};
pub use reduce::{warp_reduce, warp_reduce_all, warp_sum};
pub use scan::{warp_broadcast, warp_exclusive_scan, warp_inclusive_scan, warp_segmented_exclusive_scan};
pub use shuffle::Shuffle;
pub use vote::{warp_all, warp_any, warp_ballot, warp_match_any, warp_match_bits};
