//! The radix sorts' launch shapes for a call: the onesweep pass's threads, keys per thread,
//! blocks per multiprocessor, tile size (larger or small tiles) and look-back width; the
//! segmented sort's blocks per multiprocessor and warp merge width; the upfront histogram's
//! counter copies. Each takes the policy it chooses among ([`SortPolicy`],
//! [`SegmentedSortPolicy`]): the kernels pass the one of the architecture they are built for,
//! the host the one of its GPU.

use crate::layout::{RADIX_DIGITS, SORT_BLOCK};
use crate::tuning::{SegmentedSortPolicy, SortPolicy};

/// Tiles whose status the look-back of a onesweep pass of `tiles` tiles reads at once, on a GPU of
/// `multiprocessors` running `blocks_per_sm` of its blocks each: `policy.look_back_tiles` where
/// every tile runs at once (one wave: every tile looks back at the same time, over tiles that have
/// published their counts but mostly not their prefixes: long walks), else 1 (in later waves the
/// walks are short, and the reads past a walk's end cost more than the overlap saves).
/// H100, `u32` keys: 59.3 µs with 4 at once at 2^20, 64.4 with 1; 5563 µs with 1 at 2^28, 5686 with
/// 4; docs/performance.md.
pub const fn onesweep_look_back_tiles(
    policy: SortPolicy,
    tiles: usize,
    multiprocessors: u32,
    blocks_per_sm: u32,
) -> u32 {
    if tiles <= (multiprocessors * blocks_per_sm) as usize {
        policy.look_back_tiles as u32
    } else {
        1
    }
}

/// Blocks per multiprocessor a onesweep pass of `key_bytes` keys with values of `value_bytes`
/// bytes (0: keys alone) is built for: `policy.pairs_blocks_per_sm` with values,
/// `policy.wide_keys_blocks_per_sm` for 8-byte keys alone in their larger tiles (not
/// `small_tiles`), else `policy.keys_blocks_per_sm`.
pub const fn onesweep_blocks_per_sm(
    policy: SortPolicy,
    key_bytes: usize,
    value_bytes: usize,
    small_tiles: bool,
) -> u32 {
    if value_bytes != 0 {
        policy.pairs_blocks_per_sm
    } else if key_bytes == 8 && !small_tiles {
        policy.wide_keys_blocks_per_sm
    } else {
        policy.keys_blocks_per_sm
    }
}

/// Threads per block of a onesweep pass of `key_bytes` keys with values of `value_bytes` bytes
/// (0: keys alone): `policy.wide_pairs_block_threads` for the larger tiles of 8-byte keys with
/// values, [`SORT_BLOCK`] otherwise (every pass's small tiles included). A tile is this times
/// the pass's items ([`onesweep_items`]) keys.
pub const fn onesweep_threads(
    policy: SortPolicy,
    key_bytes: usize,
    value_bytes: usize,
    small_tiles: bool,
) -> u32 {
    if key_bytes == 8 && value_bytes != 0 && !small_tiles {
        policy.wide_pairs_block_threads
    } else {
        SORT_BLOCK
    }
}

/// Keys per thread of a onesweep pass's tile for values of `value_bytes` (0: keys alone), from
/// a key type's `sort_key_table!` row: its onesweep keys, v4 and v8 items.
pub const fn onesweep_items(
    value_bytes: usize,
    keys_items: usize,
    v4_items: usize,
    v8_items: usize,
) -> usize {
    match value_bytes {
        0 => keys_items,
        4 => v4_items,
        _ => v8_items,
    }
}

/// Whether a onesweep sort of `n` keys of `key_bytes` with values of `value_bytes` bytes (0: keys
/// alone) takes its small tiles (`small_items` keys a thread, `sort_key_table!`'s small tiles) over
/// its larger ones (`items`), on a GPU of `multiprocessors`; each tile [`onesweep_threads`] times
/// its items. The larger tiles are faster per key, but where the small tiles are shorter, either:
///
/// - the busiest multiprocessor gets more than an eighth fewer keys so (the tiles dealt out
///   evenly): an input of only a few tiles per multiprocessor splits unevenly (2^20 4-byte keys
///   make 205 tiles of 5120 keys on 132 multiprocessors, 10240 keys on the busiest, or 256 of 4096,
///   8192);
/// - or the small tiles take fewer threads (the 8-byte keys with values: 256 against 384) and all
///   of them run at once (one wave of [`onesweep_blocks_per_sm`]): there the larger blocks' threads
///   that own no digit wait at the look-back and the barriers with no later tile to hide it.
///
/// H100, 2^20 `u64` keys with `u32` values: 153.7 µs in small tiles of 256 x 20, 167.6 in 384 x 12;
/// docs/performance.md.
pub const fn onesweep_small_tiles(
    policy: SortPolicy,
    n: usize,
    multiprocessors: u32,
    (key_bytes, value_bytes): (usize, usize),
    items: usize,
    small_items: usize,
) -> bool {
    let threads = onesweep_threads(policy, key_bytes, value_bytes, false);
    let small_threads = onesweep_threads(policy, key_bytes, value_bytes, true);
    let tile = threads as usize * items;
    let small_tile = small_threads as usize * small_items;
    let one_wave = n.div_ceil(small_tile)
        <= multiprocessors as usize * onesweep_blocks_per_sm(policy, key_bytes, value_bytes, true) as usize;
    small_tile < tile
        && (busiest_keys(n, multiprocessors, small_tile) * 8 < busiest_keys(n, multiprocessors, tile) * 7
            || (small_threads < threads && one_wave))
}

/// Keys of the busiest multiprocessor when `n` keys in tiles of `tile` keys are dealt out
/// evenly over `multiprocessors`.
const fn busiest_keys(n: usize, multiprocessors: u32, tile: usize) -> usize {
    let sms = if multiprocessors == 0 {
        1
    } else {
        multiprocessors as usize
    };
    n.div_ceil(tile).div_ceil(sms) * tile
}

/// Most blocks of [`SORT_BLOCK`] threads per multiprocessor the segmented radix sort of keys of
/// `key_bytes` with values of `value_bytes` (0: keys alone) is built for:
/// `policy.blocks_per_sm`, but 2 (128 registers) for 8-byte values (1316 bytes spilled at
/// 3 blocks, not measured) and for 4-byte values of 1- and 2-byte keys (slower at 3: H100, `f16`
/// argsort of 65536 x 4096 3.58 ms at 3 blocks, 3.35 at 2; docs/performance.md).
pub const fn segmented_sort_blocks_per_sm(
    policy: SegmentedSortPolicy,
    key_bytes: usize,
    value_bytes: usize,
) -> u32 {
    if value_bytes == 8 || (value_bytes == 4 && key_bytes <= 2) {
        2
    } else {
        policy.blocks_per_sm
    }
}

/// The warps the warp merge tier gives each segment of a launch whose longest segment is
/// `longest` keys (at most the policy's
/// [`warp_merge_sort_keys`](SegmentedSortPolicy::warp_merge_sort_keys)): a power of two, at least
/// 2, whose tiles of [`warp_radix_sort_keys`](SegmentedSortPolicy::warp_radix_sort_keys) hold it.
/// Host and kernel both take it from the launch's length range. The one planning function that
/// takes no policy: its tile is a constant of its body, as the shipped PTX was compiled from (a
/// parameter, or a const generic, reorders the kernels' instructions), and is the same on every
/// architecture (the registry's tests check `warp_radix_sort_items` agrees).
pub const fn warp_merge_warps(longest: usize) -> u32 {
    const TILE_KEYS: usize = SegmentedSortPolicy::SM80.warp_radix_sort_keys();
    let parts = longest.div_ceil(TILE_KEYS).next_power_of_two();
    if parts < 2 { 2 } else { parts as u32 }
}

/// Copies of each digit's counter a block of the upfront histogram keeps for keys of `key_bytes`
/// bytes (one pass a byte) on a GPU whose blocks may take `max_shared_bytes` of shared memory, lane
/// `l` of every warp adding to copy `l % copies`: the largest power of two up to 32 whose counters
/// for every pass fit `policy.histogram_shared_bytes` and the GPU (32 on an H100 or an A100, 16 for
/// 8-byte keys; at least 1). With one counter per digit, a warp's adds of random digits conflict on
/// the shared-memory banks, which bounded the kernel; with a copy per lane each add is one
/// wavefront (two with 16 copies).
/// H100, 2^28 `u32` keys: 366.8 µs with 32 copies, 464 with 1; docs/performance.md.
pub const fn sort_histogram_copies(policy: SortPolicy, key_bytes: u32, max_shared_bytes: u32) -> u32 {
    let budget = if max_shared_bytes < policy.histogram_shared_bytes {
        max_shared_bytes
    } else {
        policy.histogram_shared_bytes
    };
    let mut copies = 32;
    while copies > 1 && key_bytes * RADIX_DIGITS * 4 * copies > budget {
        copies /= 2;
    }
    copies
}
