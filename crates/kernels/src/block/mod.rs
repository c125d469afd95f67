//! Block scope: every thread of a block cooperates, through shared memory and barriers.
//!
//! Each collective takes its shared memory as a *temp-storage* value that the kernel owns and
//! passes in (CUB's `TempStorage`): the kernel declares it once, e.g. with
//! [`shared_array!`](crate::shared_array), sized by the storage type's `SLOTS` constant.
//!
//! | function | pattern | result valid in | barriers |
//! |---|---|---|---|
//! | [`block_reduce`] | all -> one | thread 0 | 1 |
//! | [`block_reduce_all`] | all -> all | every thread | 3 |
//! | [`block_inclusive_scan`], [`block_exclusive_scan`] | all -> each | every thread | 1 |
//! | [`block_scan_warp_striped`] | all -> each, coalesced rows | every thread | 1 |
//! | [`block_scan_warp_striped_rows`] | as above, each row produced twice (fewer registers) | every thread | 1 + the prefix's |
//! | [`block_segmented_scan_warp_striped`] | all -> each, restarting at head flags (scans by key) | every thread | 1 |
//! | [`block_rank_flags_warp_striped`] | each flagged item's rank among the tile's flagged ones (compaction) | every thread | 1 |
//! | [`block_broadcast`] | one -> all | every thread | 1 |
//! | [`RowGroup::all`] | a row group (part of a warp to the block) -> all, a few `f32` statistics | every thread of the group | 0 (a group of the block: 1) |
//! | [`cluster_all`] | each block of a cluster (sm_90) -> every thread of the cluster, through distributed shared memory | every thread of the cluster | 1 cluster barrier |
//! | [`block_flag_heads_warp_striped`] | each item against its predecessor (head flags) | the calling lane | 0 |
//! | [`block_flag_tails_warp_striped`] | tail flags from head flags: where the next item starts a run | the calling lane | 0 |
//! | [`block_radix_rank_warp_striped`] | each item's place in the tile ordered by one digit (stable) | every thread | 3 + the scan's |
//! | [`block_radix_sort_warp_striped`] | a tile (keys, values) sorted by a bit range, stably, warp-striped | every thread | per 8-bit digit: the rank's + 2 (4 with values) |
//! | [`block_radix_rank_blocked`] | each item's place in a blocked tile ordered by one digit (stable; per-thread counters) | every thread | 4 |
//! | [`block_radix_sort_blocked`] | a tile of keys sorted by a bit range, stably, through the blocked arrangement | every thread | 1, per digit (4 bits): the rank's + 1 |
//! | [`block_load_warp_striped`], [`block_load_warp_striped_words`] | global -> warp-striped registers, vectors of 16 bytes, tile edges | the calling lane | 0 |
//! | [`block_load_direct_blocked`], [`block_load_direct_striped`], [`block_load_direct_warp_striped`] | global -> registers in that arrangement, tile edges | the calling thread | 0 |
//! | [`block_load_transposed`], [`block_load_warp_transposed`] | global -> blocked registers through coalesced reads and an exchange | every thread | 1 (the warp's: 0) |
//! | [`block_load_warp_rows`] | global -> this warp's 16-byte warp-striped rows (then [`block_warp_rows_to_blocked`]: issue two arrays' loads before either exchange) | the calling lane | 0 |
//! | [`block_store_direct_blocked`], [`block_store_direct_striped`], [`block_store_direct_warp_striped`] | registers -> global in that arrangement, tile edges | (memory) | 0 |
//! | [`block_store_transposed`], [`block_store_warp_transposed`] | blocked registers -> global through an exchange and coalesced writes | (memory) | 1 (the warp's: 0) |
//! | [`block_blocked_to_striped`], [`block_striped_to_blocked`] | rearrange a tile: blocked <-> striped | every thread | 1 |
//! | [`block_blocked_to_warp_striped`], [`block_warp_striped_to_blocked`] | rearrange a tile: blocked <-> warp-striped (within each warp) | every thread | 0 (`bar.warp.sync`) |
//! | [`block_warp_rows_to_blocked`] | rearrange a tile: warp-striped rows of 16 bytes -> blocked (within each warp) | every thread | 0 (`bar.warp.sync`) |
//! | [`block_scatter_to_blocked`], [`block_scatter_to_striped`], [`block_scatter_to_warp_striped`] | each item to its rank in the tile, read back in that arrangement | every thread | 1 |
//!
//! The lecture's shared-memory scans (Kogge-Stone, Brent-Kung) are whole-kernel algorithms and
//! live in [`kernels::scan_lecture`](crate::kernels).

pub mod broadcast;
pub mod discontinuity;
pub mod exchange;
pub mod load;
pub mod radix_rank;
pub mod radix_sort;
pub mod reduce;
pub mod row_group;
pub mod scan;
pub mod store;

pub use broadcast::{BlockBroadcastStorage, block_broadcast};
pub use discontinuity::{block_flag_heads_warp_striped, block_flag_tails_warp_striped};
pub use exchange::{
    BlockExchangeStorage, block_blocked_to_striped, block_blocked_to_warp_striped, block_scatter_to_blocked,
    block_scatter_to_striped, block_scatter_to_warp_striped, block_striped_to_blocked,
    block_warp_rows_to_blocked, block_warp_striped_to_blocked, blocked_position, striped_position,
    warp_striped_position,
};
pub use load::{
    block_load_direct_blocked, block_load_direct_striped, block_load_direct_warp_striped,
    block_load_transposed, block_load_warp_rows, block_load_warp_striped, block_load_warp_striped_words,
    block_load_warp_transposed, row_element,
};
pub use radix_rank::{
    BLOCKED_DIGITS, BlockedRankStorage, DigitInTile, PAST_END_DIGIT, RadixRankStorage, RadixRanks,
    block_radix_rank_blocked, block_radix_rank_warp_striped, block_radix_rank_warp_striped_by, owns_digit,
};
pub use radix_sort::{
    BlockRadixSortStorage, BlockedSortStorage, block_radix_sort_blocked, block_radix_sort_warp_striped,
};
pub use reduce::{BlockReduceStorage, block_reduce, block_reduce_all};
pub use row_group::{RowGroup, Stats, cluster_all};
pub use scan::{
    BlockScanStorage, block_exclusive_scan, block_inclusive_scan, block_rank_flags_warp_striped,
    block_scan_warp_striped, block_scan_warp_striped_rows, block_segmented_scan_warp_striped,
};
pub use store::{
    block_store_direct_blocked, block_store_direct_striped, block_store_direct_warp_striped,
    block_store_transposed, block_store_warp_transposed,
};
