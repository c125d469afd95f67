//! Probe kernels for the block radix rank and the block radix sort, so the GPU tests can check
//! them at block scope (one tile per block, tiles cut at the input's end) against CPU models,
//! apart from the device sorts built on them; and for the warp radix sort at warp scope (one
//! tile per warp).
//!
//! Every block probe runs on blocks of exactly [`RADIX_DIGITS`] threads (the pieces' contract)
//! and holds its tile warp-striped: thread item `i` is tile position
//! [`warp_striped_position`]`(i)`, element `block_idx() * RADIX_DIGITS * ITEMS + position` of
//! the input. The warp probes run on blocks of [`PROBE_WARPS`] warps, warp `w` of block `b`
//! holding tile `b * PROBE_WARPS + w` of `32 * ITEMS` keys, lane `l`'s item `i` at position
//! `32 i + l` of it.

use crate::block::{
    BlockRadixSortStorage, BlockScanStorage, BlockedRankStorage, BlockedSortStorage, PAST_END_DIGIT,
    RadixRankStorage, block_radix_rank_warp_striped, block_radix_sort_blocked, block_radix_sort_warp_striped,
    warp_striped_position,
};
use crate::radix::RadixBits;
use crate::shared::SharedArray;
use crate::shared_array;
use crate::thread::{WARP_SIZE, block_idx, lane_id, thread_idx, warp_id};
use crate::unroll::unrolled_for;
use crate::warp::{WarpRadixSortStorage, warp_radix_sort_blocked};
use gpu_primitives_abi::layout::{BLOCKED_COUNTER_WORDS, RADIX_DIGITS};

/// Warps per block of the warp radix sort probes.
pub const PROBE_WARPS: u32 = 4;

/// A warp's counter words of the warp radix sort: each lane's and a row of zeros.
const WARP_COUNTERS: u32 = WARP_SIZE * (BLOCKED_COUNTER_WORDS + 1);

/// Slots of a warp's padded exchange for a tile of `items` keys a lane.
const fn warp_slots(items: u32) -> u32 {
    gpu_primitives_abi::layout::padded_slots(WARP_SIZE * items)
}

/// Counters of the rank: each warp's row of `RADIX_DIGITS`, for the 8 warps of a block.
const WARP_COUNTS: usize = 8 * RADIX_DIGITS as usize;

/// Counters of the blocked rank: each thread's words and one of padding.
const BLOCKED_COUNTERS: usize = RADIX_DIGITS as usize * (BLOCKED_COUNTER_WORDS as usize + 1);

/// Slots of a padded exchange for a tile of `ITEMS` items per thread (one after every 32).
const fn padded_slots(items: usize) -> usize {
    gpu_primitives_abi::layout::padded_slots(RADIX_DIGITS * items as u32) as usize
}

/// The larger of two lengths.
const fn max_len(a: usize, b: usize) -> usize {
    if a > b { a } else { b }
}

/// The first input element of this block's tile of `ITEMS` items per thread.
#[inline(always)]
fn tile_first<const ITEMS: usize>() -> usize {
    block_idx() as usize * RADIX_DIGITS as usize * ITEMS
}

/// The rank at block scope: block `b` ranks tile `b` by `digits` (each below `RADIX_DIGITS`;
/// items past `n` are passed to the rank as past the end) and writes, for every item below `n`,
/// `ranks[i]` = its place in the tile ordered by digit, and per block, at `per_digit[768 b ..]`,
/// three rows of `RADIX_DIGITS`: the count each thread was handed by `on_counts`, the count it
/// got back in the result, and where its digit starts in the tile.
#[inline(always)]
unsafe fn rank_probe<const ITEMS: usize>(
    digits: *const u32,
    ranks: *mut u32,
    per_digit: *mut u32,
    n: usize,
    storage: RadixRankStorage,
) {
    let first = tile_first::<ITEMS>();
    let index = |i: usize| first + warp_striped_position::<ITEMS>(i) as usize;
    let valid = n.saturating_sub(first).min(RADIX_DIGITS as usize * ITEMS) as u32;
    let mut tile = [PAST_END_DIGIT; ITEMS];
    // SAFETY: (whole body) reads and writes go below n, one thread per index; `per_digit` holds
    // 3 * RADIX_DIGITS values per block and thread t < RADIX_DIGITS writes its own three; the
    // whole block (of RADIX_DIGITS threads, the test's contract) calls the rank.
    unsafe {
        unrolled_for(ITEMS, |i| {
            if index(i) < n {
                tile[i] = *digits.add(index(i));
            }
        });
        let row = per_digit.add(3 * RADIX_DIGITS as usize * block_idx() as usize + thread_idx() as usize);
        let result = block_radix_rank_warp_striped::<ITEMS>(&tile, valid, storage, |count| *row = count);
        unrolled_for(ITEMS, |i| {
            if index(i) < n {
                *ranks.add(index(i)) = result.ranks[i];
            }
        });
        *row.add(RADIX_DIGITS as usize) = result.digit_count;
        *row.add(2 * RADIX_DIGITS as usize) = result.digit_start;
    }
}

/// The sort at block scope: block `b` sorts tile `b` of `keys` (its items below `n`) by bits
/// `begin_bit .. end_bit`, with each key's input index as its value when `pairs != 0`, and writes
/// every item below `n` back in place of the input: `keys_out[i]` the sorted tile's key at that
/// position, and with `pairs`, `values_out[i]` its input index (untouched without).
#[inline(always)]
unsafe fn sort_probe<B: RadixBits, const PAIRS: bool, const BLOCKED: bool, const ITEMS: usize>(
    p: BlockSortProbe<B>,
    storage: BlockRadixSortStorage<B::Slot, u32>,
) {
    let first = tile_first::<ITEMS>();
    let index = |i: usize| first + warp_striped_position::<ITEMS>(i) as usize;
    let valid = p.n.saturating_sub(first).min(RADIX_DIGITS as usize * ITEMS) as u32;
    let mut keys = [B::ZERO; ITEMS];
    let mut values = [0u32; ITEMS];
    // SAFETY: (whole body) reads and writes go below n, one thread per index; the whole block
    // (of RADIX_DIGITS threads, the test's contract) calls the sort with the same `valid` and
    // bit range (`begin_bit <= end_bit <=` the key's width, the test's contract).
    unsafe {
        unrolled_for(ITEMS, |i| {
            if index(i) < p.n {
                keys[i] = *p.keys.add(index(i));
                values[i] = index(i) as u32;
            }
        });
        if BLOCKED {
            // The blocked sort's counters in the values' slots (keys alone), its padded places
            // in the keys' (both sized for it by the caller).
            let blocked = BlockedSortStorage {
                rank: BlockedRankStorage {
                    counters: storage.values,
                    scan: storage.rank.scan,
                },
                keys: storage.keys,
            };
            // Padded past the end with the largest bits, as the blocked sort asks.
            unrolled_for(ITEMS, |i| {
                if index(i) >= p.n {
                    keys[i] = B::MAX;
                }
            });
            block_radix_sort_blocked::<B, RADIX_DIGITS, ITEMS>(&mut keys, (p.begin_bit, p.end_bit), blocked);
        } else {
            block_radix_sort_warp_striped::<B, u32, PAIRS, ITEMS>(
                &mut keys,
                &mut values,
                valid,
                (p.begin_bit, p.end_bit),
                storage,
            );
        }
        unrolled_for(ITEMS, |i| {
            if index(i) < p.n {
                *p.keys_out.add(index(i)) = keys[i];
                if PAIRS {
                    *p.values_out.add(index(i)) = values[i];
                }
            }
        });
    }
}

/// The parameters of the `probe_block_radix_sort_<key>_items<K>` kernels (see `sort_probe`).
#[derive(Clone, Copy)]
struct BlockSortProbe<B> {
    /// `n` keys.
    keys: *const B,
    /// `n` sorted keys (each tile's).
    keys_out: *mut B,
    /// `n` input indices (with pairs).
    values_out: *mut u32,
    /// Number of keys.
    n: usize,
    /// The first compared bit.
    begin_bit: u32,
    /// The bit after the last compared one.
    end_bit: u32,
}

/// The rank's storage in static shared memory declared by the caller.
#[inline(always)]
fn rank_storage(warp_counts: SharedArray<u32>, scan: SharedArray<u32>) -> RadixRankStorage {
    RadixRankStorage {
        warp_counts,
        scan: BlockScanStorage::new(scan),
    }
}

macro_rules! rank_probes {
    ($($name:ident = $items:literal, $counts:ident, $scan:ident;)*) => {$(
        /// Rank probe (see `rank_probe`) with this many items per thread.
        ///
        /// # Safety
        /// `digits` and `ranks` hold `n` u32 (the digits below `RADIX_DIGITS`), `per_digit`
        /// `3 * RADIX_DIGITS` u32 per block; one block of `RADIX_DIGITS` threads per tile.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(digits: *const u32, ranks: *mut u32, per_digit: *mut u32, n: usize) {
            let storage = rank_storage(
                shared_array!($counts: [u32; WARP_COUNTS]),
                shared_array!($scan: [u32; BlockScanStorage::<u32>::SLOTS as usize]),
            );
            // SAFETY: forwarded.
            unsafe { rank_probe::<$items>(digits, ranks, per_digit, n, storage) }
        }
    )*};
}
rank_probes!(
    probe_block_radix_rank_items1 = 1, PROBE_RANK_COUNTS_1, PROBE_RANK_SCAN_1;
    probe_block_radix_rank_items4 = 4, PROBE_RANK_COUNTS_4, PROBE_RANK_SCAN_4;
    probe_block_radix_rank_items16 = 16, PROBE_RANK_COUNTS_16, PROBE_RANK_SCAN_16;
);

macro_rules! sort_probes {
    ($($name:ident: $key:ty = $items:literal, $counts:ident, $scan:ident, $keys:ident,
       $values:ident;)*) => {$(
        /// Block sort probe (see `sort_probe`) of these keys with this many items per thread;
        /// `pairs` 1 sorts each key's input index with it, 2 sorts the keys alone through the
        /// blocked sort (`block_radix_sort_blocked`), 0 alone through the warp-striped one.
        ///
        /// # Safety
        /// `keys` and `keys_out` hold `n` keys, `values_out` `n` u32; `begin_bit <= end_bit <=`
        /// the key's width; one block of `RADIX_DIGITS` threads per tile.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            keys: *const $key, keys_out: *mut $key, values_out: *mut u32, n: usize,
            begin_bit: u32, end_bit: u32, pairs: u32,
        ) {
            let p = BlockSortProbe { keys, keys_out, values_out, n, begin_bit, end_bit };
            let storage = BlockRadixSortStorage {
                rank: rank_storage(
                    shared_array!($counts: [u32; WARP_COUNTS]),
                    shared_array!($scan: [u32; BlockScanStorage::<u32>::SLOTS as usize]),
                ),
                keys: shared_array!($keys: [<$key as RadixBits>::Slot; padded_slots($items)]),
                values: shared_array!(
                    $values: [u32; max_len(RADIX_DIGITS as usize * $items, BLOCKED_COUNTERS)]
                ),
            };
            // SAFETY: forwarded.
            unsafe {
                match pairs {
                    0 => sort_probe::<$key, false, false, $items>(p, storage),
                    1 => sort_probe::<$key, true, false, $items>(p, storage),
                    _ => sort_probe::<$key, false, true, $items>(p, storage),
                }
            }
        }
    )*};
}
sort_probes!(
    probe_block_radix_sort_u32_items1: u32 = 1, PROBE_SORT_COUNTS_U32_1,
        PROBE_SORT_SCAN_U32_1, PROBE_SORT_KEYS_U32_1, PROBE_SORT_VALUES_U32_1;
    probe_block_radix_sort_u32_items4: u32 = 4, PROBE_SORT_COUNTS_U32_4,
        PROBE_SORT_SCAN_U32_4, PROBE_SORT_KEYS_U32_4, PROBE_SORT_VALUES_U32_4;
    probe_block_radix_sort_u32_items16: u32 = 16, PROBE_SORT_COUNTS_U32_16,
        PROBE_SORT_SCAN_U32_16, PROBE_SORT_KEYS_U32_16, PROBE_SORT_VALUES_U32_16;
    probe_block_radix_sort_u8_items4: u8 = 4, PROBE_SORT_COUNTS_U8_4,
        PROBE_SORT_SCAN_U8_4, PROBE_SORT_KEYS_U8_4, PROBE_SORT_VALUES_U8_4;
    probe_block_radix_sort_u64_items4: u64 = 4, PROBE_SORT_COUNTS_U64_4,
        PROBE_SORT_SCAN_U64_4, PROBE_SORT_KEYS_U64_4, PROBE_SORT_VALUES_U64_4;
);

/// The warp radix sort at warp scope: warp `w` of block `b` sorts tile `b * PROBE_WARPS + w` of
/// `keys` (its items below `n`, padded with the largest bits past it, as the sort asks) by bits
/// `begin_bit .. end_bit`, with each key's input index as its value with `PAIRS`, and writes
/// every item below `n` back in place of the input, as `sort_probe` does.
#[inline(always)]
unsafe fn warp_sort_probe<B: RadixBits, const PAIRS: bool, const ITEMS: usize>(
    p: BlockSortProbe<B>,
    storage: WarpRadixSortStorage<B::Slot, u32>,
) {
    let tile = WARP_SIZE as usize * ITEMS;
    let first = (block_idx() * PROBE_WARPS + warp_id()) as usize * tile;
    let index = |i: usize| first + i * WARP_SIZE as usize + lane_id() as usize;
    let mut keys = [B::MAX; ITEMS];
    let mut values = [0u32; ITEMS];
    // SAFETY: (whole body) reads and writes go below n, one lane per index; the whole warp calls
    // the sort with its own storage and the same bit range (`begin_bit <= end_bit <=` the key's
    // width, the test's contract).
    unsafe {
        unrolled_for(ITEMS, |i| {
            if index(i) < p.n {
                keys[i] = *p.keys.add(index(i));
                values[i] = index(i) as u32;
            }
        });
        warp_radix_sort_blocked::<B, u32, PAIRS, ITEMS>(
            &mut keys,
            &mut values,
            (p.begin_bit, p.end_bit),
            storage,
        );
        unrolled_for(ITEMS, |i| {
            if index(i) < p.n {
                *p.keys_out.add(index(i)) = keys[i];
                if PAIRS {
                    *p.values_out.add(index(i)) = values[i];
                }
            }
        });
    }
}

macro_rules! warp_sort_probes {
    ($($name:ident: $key:ty = $items:literal, $counters:ident, $keys:ident, $values:ident;)*) => {$(
        /// Warp sort probe (see `warp_sort_probe`) of these keys with this many items per lane;
        /// `pairs` 1 sorts each key's input index with it, 0 the keys alone.
        ///
        /// # Safety
        /// `keys` and `keys_out` hold `n` keys, `values_out` `n` u32; `begin_bit <= end_bit <=`
        /// the key's width; blocks of `PROBE_WARPS` warps, one warp per tile.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            keys: *const $key, keys_out: *mut $key, values_out: *mut u32, n: usize,
            begin_bit: u32, end_bit: u32, pairs: u32,
        ) {
            const SLOTS: u32 = warp_slots($items);
            let p = BlockSortProbe { keys, keys_out, values_out, n, begin_bit, end_bit };
            let w = warp_id();
            // Each warp's part of the block's arrays (a warp past PROBE_WARPS traps in `slice`).
            let storage = WarpRadixSortStorage {
                counters: shared_array!($counters: [u32; (PROBE_WARPS * WARP_COUNTERS) as usize])
                    .slice(w * WARP_COUNTERS, WARP_COUNTERS),
                keys: shared_array!($keys: [<$key as RadixBits>::Slot; (PROBE_WARPS * warp_slots($items)) as usize])
                    .slice(w * SLOTS, SLOTS),
                values: shared_array!($values: [u32; (PROBE_WARPS * warp_slots($items)) as usize]).slice(w * SLOTS, SLOTS),
            };
            // SAFETY: forwarded.
            unsafe {
                if pairs == 0 {
                    warp_sort_probe::<$key, false, $items>(p, storage)
                } else {
                    warp_sort_probe::<$key, true, $items>(p, storage)
                }
            }
        }
    )*};
}
warp_sort_probes!(
    probe_warp_radix_sort_u32_items1: u32 = 1, PROBE_WARP_COUNTERS_U32_1, PROBE_WARP_KEYS_U32_1,
        PROBE_WARP_VALUES_U32_1;
    probe_warp_radix_sort_u32_items8: u32 = 8, PROBE_WARP_COUNTERS_U32_8, PROBE_WARP_KEYS_U32_8,
        PROBE_WARP_VALUES_U32_8;
    probe_warp_radix_sort_u32_items16: u32 = 16, PROBE_WARP_COUNTERS_U32_16, PROBE_WARP_KEYS_U32_16,
        PROBE_WARP_VALUES_U32_16;
    probe_warp_radix_sort_u8_items16: u8 = 16, PROBE_WARP_COUNTERS_U8_16, PROBE_WARP_KEYS_U8_16,
        PROBE_WARP_VALUES_U8_16;
    probe_warp_radix_sort_u64_items8: u64 = 8, PROBE_WARP_COUNTERS_U64_8, PROBE_WARP_KEYS_U64_8,
        PROBE_WARP_VALUES_U64_8;
);
