//! Radix sorts: the device-wide sort ([`sort_keys`], [`sort_pairs`], [`argsort`]) and the
//! segmented sort ([`segmented_sort_keys`], [`segmented_sort_pairs`], [`segmented_argsort`]),
//! CUB's `DeviceRadixSort` and `DeviceSegmentedRadixSort`.
//!
//! One module per scope, each using only those listed before it:
//!
//! - `key`: the key types and their order ([`SortKey`]);
//! - `common`: options, buffers and checks every sort shares;
//! - `onesweep`: the device-wide passes past one tile, their shape and workspace;
//! - `segmented`: a block, a warp or a group of warps a segment, onesweep for the few longest;
//! - `dispatch`: the device-wide entry points: one tile to the block radix sort (the segmented
//!   sort's block tier, one segment), more to onesweep.

mod common;
mod dispatch;
mod key;
mod onesweep;
mod segmented;

pub(in crate::device) use common::{SortBuffers, Values, check_len, check_sort_len};
pub use common::{SortOptions, SortedIn};
pub use dispatch::{
    argsort, argsort_slice, sort_keys, sort_keys_double_buffer, sort_keys_in_place, sort_keys_slice,
    sort_pairs, sort_pairs_double_buffer, sort_pairs_in_place, sort_pairs_slice,
};
pub use key::{SORT_KEY_NAMES, SortKey};
pub(in crate::device) use segmented::{SegmentedCall, launch as segmented_launch, layout, segmented_scratch};
pub use segmented::{
    segmented_argsort, segmented_sort_keys, segmented_sort_keys_in_place, segmented_sort_pairs,
    segmented_sort_pairs_in_place,
};
