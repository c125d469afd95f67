//! Device-wide segmented radix sort (CUB's `DeviceSegmentedRadixSort`): every segment's keys (and
//! values) sorted by one block or one warp, segments of one tile or less in shared memory (or
//! registers), longer ones by one pass over global memory per digit.
//!
//! - **A segment of at most one tile** (`block_dim() * ITEMS` keys): loaded warp-striped, sorted
//!   without leaving shared memory, and stored warp-striped (coalesced); keys alone by the
//!   blocked block radix sort ([`block_radix_sort_blocked`]: per-thread counters, digits of
//!   [`BLOCKED_RADIX_BITS`](gpu_primitives_abi::layout::BLOCKED_RADIX_BITS) bits, a partial
//!   tile padded with the largest bits), pairs by the warp-striped one
//!   ([`block_radix_sort_warp_striped`]: ranks by warp votes, 8-bit digits).
//! - **A longer segment**, per digit of [`RADIX_BITS`] bits (as CUB's large-segment agent): the
//!   block counts the segment's digits in shared memory and scans the counts into each digit's
//!   start, then takes the segment's tiles in order; each tile is ranked by digit
//!   ([`block_radix_rank_warp_striped`]), written to the digit's next places through shared
//!   memory (consecutive threads, consecutive places), and the digits' starts move past the tile's
//!   counts. No look-back: one block owns the segment. The passes alternate between two scratch
//!   buffers, the first reading the input and the last writing the output.
//!
//! - **A segment of [`warp_radix_sort_keys`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_radix_sort_keys) + 1 to
//!   [`warp_merge_sort_keys`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_merge_sort_keys)
//!   keys** (513 to 2048): by a group of 2 or 4 warps
//!   ([`segmented_warp_merge_sort`], a kernel of its own), each sorting its part of the segment
//!   as the warp radix tier below does, then the group merging the sorted parts pairwise by
//!   merge path.
//!
//! - **A segment of [`warp_sort_keys`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_sort_keys) + 1 to
//!   [`warp_radix_sort_keys`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_radix_sort_keys)
//!   keys** (129 to 512): by one warp in shared memory of its own
//!   ([`segmented_warp_radix_sort`], a kernel of its own: 8 segments a block), the blocked sort
//!   at warp scope ([`warp_radix_sort_blocked`]: per-lane counters, warp barriers only), in a
//!   tile of [`warp_radix_sort_items`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_radix_sort_items) keys a lane, or half as many for a segment of
//!   at most 256.
//!
//! - **A segment of at most [`warp_sort_keys`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_sort_keys) keys** (128): by one warp
//!   ([`segmented_warp_sort`], a kernel of its own: 8 segments a block), each key's place the
//!   number of the segment's keys before it in order or tied and earlier, counted against every
//!   key broadcast by a shuffle; no shared memory, and no tile of 4096 padded keys for a row of
//!   32.
//!
//! Stable: every pass keeps the order of equal digits, and the warp sort breaks ties by position.

use crate::block::{
    BlockRadixSortStorage, BlockedRankStorage, BlockedSortStorage, PAST_END_DIGIT, block_exclusive_scan,
    block_radix_rank_warp_striped, block_radix_sort_blocked, block_radix_sort_warp_striped,
    warp_striped_position,
};
use crate::op::Sum;
use crate::policy::SEGMENTED_SORT;
use crate::radix::{RadixBits, RadixKey, SortValue, key_of_ordered, ordered_bits, zero_slot};
use crate::shared::SharedArray;
use crate::sync::{block_barrier, warp_sync};
use crate::thread::{WARP_SIZE, block_dim, block_idx, lane_id, thread_idx, warp_id, warps_per_block};
use crate::unroll::unrolled_for;
use crate::warp::{Shuffle, WarpRadixSortStorage, warp_radix_sort_blocked};
use gpu_primitives_abi::layout::padded_slot;
use gpu_primitives_abi::layout::{RADIX_BITS, SORT_BLOCK};
use gpu_primitives_abi::params::SegmentedSortParams;

/// Keys per lane of the warp sort ([`SegmentedSortPolicy::warp_sort_items`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_sort_items)).
const SEGMENTED_WARP_SORT_ITEMS: usize = SEGMENTED_SORT.warp_sort_items;
/// The longest segment the warp sort takes.
const SEGMENTED_WARP_SORT_KEYS: usize = SEGMENTED_SORT.warp_sort_keys();
/// Keys per lane of the warp radix tier's tile
/// ([`SegmentedSortPolicy::warp_radix_sort_items`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_radix_sort_items)).
const SEGMENTED_WARP_RADIX_SORT_ITEMS: usize = SEGMENTED_SORT.warp_radix_sort_items;
/// Most warps the warp merge tier gives one segment.
const SEGMENTED_WARP_MERGE_MAX_WARPS: usize = SEGMENTED_SORT.warp_merge_max_warps;

/// Shared memory of [`segmented_radix_sort`].
#[derive(Clone, Copy)]
pub struct SegmentedSortStorage<S, V> {
    /// The block radix sort's (its rank's storage also ranks the tiles of long segments, and its
    /// exchange takes their keys and values).
    pub sort: BlockRadixSortStorage<S, V>,
    /// [`RADIX_DIGITS`](gpu_primitives_abi::layout::RADIX_DIGITS) counters: a long segment's
    /// count of each digit, then each digit's place in the output minus its start in the tile.
    pub digit_places: SharedArray<u32>,
    /// The blocked rank's per-thread counters (keys alone, a segment of one tile).
    pub counters: SharedArray<u32>,
}

/// Shared memory of [`segmented_warp_radix_sort`], one warp's.
#[derive(Clone, Copy)]
pub struct WarpTileStorage<S, V> {
    /// The warp radix sort's, which moves each key's position in the segment with it (pairs).
    pub sort: WarpRadixSortStorage<S, u32>,
    /// The segment's values at their padded positions until the sorted keys' positions fetch
    /// them (pairs of values read from the input).
    pub values: SharedArray<V>,
}

/// One segment of a launch: where it is and where its output goes.
#[derive(Clone, Copy)]
struct Segment {
    /// First key.
    begin: usize,
    /// Keys.
    len: usize,
    /// Where its first output key goes.
    out_begin: usize,
    /// Output keys (`len`, or fewer for a top-k).
    keep: usize,
}

/// Sort segment `p.first_segment + block_idx()` of `p`, if there is one (see the [module
/// docs](self)); with `PAIRS`, the values move with their keys. A block takes one segment: no
/// loop over segments, whose invariants the compiler would keep in registers across the sort
/// (ptxas sm_90: 76 -> 24 bytes spilled for `f32` keys alone, 372 -> 284 with 8-byte values).
///
/// # Safety
/// Every thread of the block calls it; `block_dim() == RADIX_DIGITS`; `p` is as
/// [`SegmentedSortParams`] documents it (the offsets non-decreasing and within the input, the
/// scratch buffers present when a segment of the launch's length range is longer than
/// `block_dim() * ITEMS`, the outputs
/// not overlapping the inputs except in place); `storage` is this block's, the exchange at
/// least `block_dim() * ITEMS` long.
#[inline(always)]
pub unsafe fn segmented_radix_sort<K, V, const PAIRS: bool, const ITEMS: usize>(
    p: &SegmentedSortParams<K, V>,
    storage: SegmentedSortStorage<<K::Bits as RadixBits>::Slot, V>,
) where
    K: RadixKey,
    V: SortValue,
{
    let tile_len = block_dim() as usize * ITEMS;
    let s = p.first_segment + block_idx() as usize;
    if s < p.segments {
        // SAFETY: s < segments.
        let segment = unsafe { segment_of(p, s) };
        let len = segment.len;
        if len < p.shortest || len > p.longest {
            // Another launch's (the warp tiers', the device-wide sort's).
        } else if len <= tile_len {
            // SAFETY: forwarded; the segment is within the input and fits one tile.
            unsafe { sort_tile::<K, V, PAIRS, ITEMS>(p, segment, storage) };
        } else {
            // SAFETY: forwarded; a segment longer than a tile has the scratch buffers.
            unsafe { sort_long::<K, V, PAIRS, ITEMS>(p, segment, storage) };
        }
    }
}

/// Sort the launch's segments of at most [`warp_sort_keys`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_sort_keys) keys, a warp each (the
/// first tier: its range is always `0 ..= SEGMENTED_WARP_SORT_KEYS`, so `p.shortest` and
/// `p.longest` are not read: checking them measured 1-2 % slower on rows of 32, H100):
/// warp `w` of block `b` takes segment `p.first_segment + b * warps_per_block() + w`, if there
/// is one and it is that short (the others are another launch's). No shared memory, no block
/// barrier.
///
/// # Safety
/// Every lane of each warp calls it (blocks of whole warps); `p` as [`segmented_radix_sort`]
/// needs it (no scratch buffers needed).
#[inline(always)]
pub unsafe fn segmented_warp_sort<K, V, const PAIRS: bool>(p: &SegmentedSortParams<K, V>)
where
    K: RadixKey,
    V: SortValue,
{
    let s = p.first_segment + (block_idx() * warps_per_block() + warp_id()) as usize;
    if s < p.segments {
        // SAFETY: s < segments.
        let segment = unsafe { segment_of(p, s) };
        if segment.len <= SEGMENTED_WARP_SORT_KEYS {
            // SAFETY: the whole warp takes this branch (one segment per warp) with a short
            // segment of the launch.
            unsafe { sort_warp::<K, V, PAIRS>(p, segment) };
        }
    }
}

/// The warp radix tier: the launch's segments of `p.shortest ..= p.longest` keys that fit a
/// warp's tile of `32 * ITEMS` keys (`ITEMS` = [`warp_radix_sort_items`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_radix_sort_items)), a warp each (warp `w` of block `b` takes segment
/// `p.first_segment + b * warps_per_block() + w`, if there is one and it is of the range), each
/// sorted by the warp radix sort ([`warp_radix_sort_blocked`]) in the warp's own shared memory,
/// padded with the largest ordered bits past its end; a segment of at most half a tile in a
/// tile of `ITEMS / 2` keys a lane (half the padding). Pairs: the sort moves each key's position
/// in the segment (4 bytes, whatever the value's size: fewer registers than 8-byte values, which
/// spilled) and the values, staged in shared memory at their positions, are fetched from there
/// once, after it. No block barrier.
///
/// # Safety
/// Every lane of each warp calls it (blocks of whole warps); `p` as [`segmented_radix_sort`]
/// needs it (no scratch buffers needed); `storage` is this warp's, as
/// [`warp_radix_sort_blocked`] needs it for `ITEMS` keys a lane.
#[inline(always)]
pub unsafe fn segmented_warp_radix_sort<K, V, const PAIRS: bool>(
    p: &SegmentedSortParams<K, V>,
    storage: WarpTileStorage<<K::Bits as RadixBits>::Slot, V>,
) where
    K: RadixKey,
    V: SortValue,
{
    const ITEMS: usize = SEGMENTED_WARP_RADIX_SORT_ITEMS;
    const HALF: usize = ITEMS / 2;
    let s = p.first_segment + (block_idx() * warps_per_block() + warp_id()) as usize;
    if s < p.segments {
        // SAFETY: s < segments.
        let segment = unsafe { segment_of(p, s) };
        if segment.len >= p.shortest && segment.len <= p.longest.min(WARP_SIZE as usize * ITEMS) {
            // SAFETY: the whole warp takes this branch (one segment a warp) with a segment of
            // the launch that fits the tile it is given (the half tile within the storage of a
            // whole one); forwarded.
            unsafe {
                if segment.len <= WARP_SIZE as usize * HALF {
                    sort_warp_tile::<K, V, PAIRS, HALF>(p, segment, storage)
                } else {
                    sort_warp_tile::<K, V, PAIRS, ITEMS>(p, segment, storage)
                }
            };
        }
    }
}

/// The warp merge tier: the launch's segments of `p.shortest ..= p.longest` keys that fit the
/// tiles of `warps` (= [`warp_merge_warps`](gpu_primitives_abi::planning::sort::warp_merge_warps)`(p.longest)`: 2 or 4) warps, tiles of `32 * ITEMS`
/// keys (`ITEMS` = [`warp_radix_sort_items`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_radix_sort_items)), a group of `warps` warps each: warps
/// `warps * q ..` of block `b` take segment `p.first_segment + (b * warps_per_block()) / warps +
/// q`, if there is one and it is of the range. Warp `h` of a group sorts part `h` of the segment
/// (keys `h * 32 * ITEMS ..`, padded) by the warp radix sort as the warp radix tier does; then
/// the group merges the sorted parts pairwise, runs of one tile into runs of two, and so on, by
/// merge path (Odeh, Green, Mwassi, Shmueli and Birk, "Merge Path - Parallel Merging Made
/// Simple", 2012): thread `u` of a merge finds where its output `ITEMS * u` splits the two runs
/// by a binary search, then merges its `ITEMS` outputs serially, ties from the first run first
/// (stable), and stores them where the next level reads them (warp `h`'s outputs in warp `h`'s
/// tile). Pairs: as the warp radix tier, each key's position moves and the values staged in
/// shared memory are fetched once, after the last merge. Two block barriers a level, reached by
/// every warp whether its group has a segment or not.
///
/// # Safety
/// Every thread of the block calls it (blocks of whole warps, a multiple of 4) with the same
/// `warps`, [`warp_merge_warps`](gpu_primitives_abi::planning::sort::warp_merge_warps)`(p.longest)`; `p` as [`segmented_radix_sort`] needs it (no
/// scratch buffers needed; `p.longest` at most
/// [`warp_merge_sort_keys`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_merge_sort_keys)); `own` is
/// the calling warp's storage, as [`warp_radix_sort_blocked`] needs it for `ITEMS` keys a lane,
/// and `group` its group's: the group's tiles one after another as one padded array (the
/// warp radix layout's), `own`'s among them.
#[inline(always)]
pub unsafe fn segmented_warp_merge_sort<K, V, const PAIRS: bool>(
    p: &SegmentedSortParams<K, V>,
    warps: u32,
    own: WarpTileStorage<<K::Bits as RadixBits>::Slot, V>,
    group: WarpTileStorage<<K::Bits as RadixBits>::Slot, V>,
) where
    K: RadixKey,
    V: SortValue,
{
    const ITEMS: usize = SEGMENTED_WARP_RADIX_SORT_ITEMS;
    const TILE: u32 = WARP_SIZE * ITEMS as u32;
    let descending = p.descending != 0;
    let lane = lane_id();
    // This warp's part of the segment, and of every merge's output.
    let first = warp_id() % warps * TILE;
    let s = p.first_segment + ((block_idx() * warps_per_block() + warp_id()) / warps) as usize;
    let segment = if s < p.segments {
        // SAFETY: s < segments.
        Some(unsafe { segment_of(p, s) })
    } else {
        None
    }
    .filter(|segment| segment.len >= p.shortest && segment.len <= p.longest.min((warps * TILE) as usize));
    let staged = PAIRS && p.index_values == 0;
    // Keys (ordered bits) and positions in the segment: this warp's part before the sort, then
    // sorted; the positions then those of this thread's outputs of each merge (`merge_level`
    // holds the merged keys itself).
    let mut keys = [<K::Bits as RadixBits>::MAX; ITEMS];
    let mut positions = [0u32; ITEMS];
    if let Some(segment) = segment {
        unrolled_for(ITEMS, |i| {
            let j = first + i as u32 * WARP_SIZE + lane;
            positions[i] = j;
            if (j as usize) < segment.len {
                // SAFETY: j < the segment's length: a key (and value) of the input; the value's
                // slot is this warp's part of the group's staging array.
                unsafe {
                    keys[i] = ordered_bits(*p.keys_in.add(segment.begin + j as usize), descending);
                    if staged {
                        let value = *p.values_in.add(segment.begin + j as usize);
                        group.values.write_unchecked(padded_slot(j), value);
                    }
                }
            }
        });
        // A part past the segment's end (the fourth warp of a segment of 1025 to 1536 keys) is
        // padding alone, in order already: sorted by no bits (one pass that only lays it out;
        // the merges take its largest bits after every key of the segment, ties to the first
        // run). Not a branch around the sort: that measured 1.3 to 2.0 % slower on the groups without
        // padding (H100, session 47; rows of 1536 5.6 % faster either way).
        let end_bit = if (first as usize) < segment.len {
            p.end_bit
        } else {
            p.begin_bit
        };
        // SAFETY: the whole warp takes this branch (one segment a group) with its own storage
        // and a bit range within the launch's (within the key, checked by the host); the
        // padding is the largest bits.
        unsafe {
            warp_radix_sort_blocked::<K::Bits, u32, PAIRS, ITEMS>(
                &mut keys,
                &mut positions,
                (p.begin_bit, end_bit),
                own.sort,
            )
        };
        // The sorted part in this warp's tile, in order (the sort's storage is free again).
        unrolled_for(ITEMS, |i| {
            let at = padded_slot(first + i as u32 * WARP_SIZE + lane);
            // SAFETY: a slot of this warp's tile, this item's alone.
            unsafe {
                group.sort.keys.write_unchecked(at, keys[i].to_slot());
                if PAIRS {
                    group.sort.values.write_unchecked(at, positions[i]);
                }
            }
        });
    }
    let mask = <K::Bits as RadixBits>::range_mask(p.begin_bit, p.end_bit);
    // The merges run in every warp, a group without a segment merging nothing (length 0): no
    // branch on the segment around their barriers (one made LLVM copy a barrier into each arm,
    // which synccheck reports as divergent).
    let len = segment.map_or(0, |segment| segment.len as u32);
    // A level per doubling of the runs, written out (a loop kept the `u8` keys' arrays in local
    // memory), the levels past the group's skipped by every warp of the block alike.
    // SAFETY: every thread of the block calls it with the same `warps`; as this function's.
    unsafe {
        merge_level::<K, V, PAIRS>(len, TILE, first, &mut positions, group, mask);
        if warps > 2 {
            merge_level::<K, V, PAIRS>(len, 2 * TILE, first, &mut positions, group, mask);
        }
    }
    const { assert!(SEGMENTED_WARP_MERGE_MAX_WARPS == 4, "two levels written out") };
    if let Some(segment) = segment {
        // SAFETY: the whole warp takes this branch: its tile's last writes are seen.
        unsafe { warp_sync(u32::MAX) };
        // This warp's part of the sorted segment, warp-striped for coalesced stores.
        unrolled_for(ITEMS, |i| {
            let j = first + i as u32 * WARP_SIZE + lane;
            if (j as usize) < segment.keep {
                let at = padded_slot(j);
                // SAFETY: j < keep <= len: the segment's output place (the caller's contract for
                // the outputs); the slot written before the warp barrier; a valid key's
                // position is below the segment's length, its value staged before the first
                // block barrier.
                unsafe {
                    let key = <K::Bits as RadixBits>::from_slot(group.sort.keys.read_unchecked(at));
                    *p.keys_out.add(segment.out_begin + j as usize) = key_of_ordered::<K>(key, descending);
                    if PAIRS {
                        let position = group.sort.values.read_unchecked(at);
                        *p.values_out.add(segment.out_begin + j as usize) = if staged {
                            group.values.read_unchecked(padded_slot(position))
                        } else {
                            V::from_index(position as usize)
                        };
                    }
                }
            }
        });
    }
}

/// One level of [`segmented_warp_merge_sort`]'s merges: runs of `run` keys of the group's
/// tiles (a segment of `len` keys, 0 for a group without one) merged pairwise into runs of `2 *
/// run` (this warp's part of each output, places `first ..`, in registers, then in its tile;
/// `positions` holds its keys' positions), between two block barriers. The merged keys are held
/// as shared-memory slots (`u8` keys as `u16`: a `[u8; 16]` of them was put in local memory).
///
/// # Safety
/// Every thread of the block calls it (outside any branch that differs between its warps), with
/// the runs of this level written in the group's tiles; as [`segmented_warp_merge_sort`] for
/// the rest.
#[inline(always)]
unsafe fn merge_level<K, V, const PAIRS: bool>(
    len: u32,
    run: u32,
    first: u32,
    positions: &mut [u32; SEGMENTED_WARP_RADIX_SORT_ITEMS],
    group: WarpTileStorage<<K::Bits as RadixBits>::Slot, V>,
    mask: K::Bits,
) where
    K: RadixKey,
    V: SortValue,
{
    const ITEMS: usize = SEGMENTED_WARP_RADIX_SORT_ITEMS;
    let lane = lane_id();
    let order = |key: K::Bits| key.masked(mask);
    // The key at segment place `at`: a slot of the group's tiles (a group with a segment wrote
    // all of them, each warp its whole tile; a group without one reads, and never uses, what
    // they hold).
    let key_at = |at: u32| {
        // SAFETY: a slot of the group's tiles; any written before the barrier below.
        let slot = unsafe { group.sort.keys.read_unchecked(padded_slot(at)) };
        <K::Bits as RadixBits>::from_slot(slot)
    };
    let mut merged = [zero_slot::<<K::Bits as RadixBits>::Slot>(); ITEMS];
    // SAFETY: every thread of the block reaches it (the caller's contract): the runs are written.
    unsafe { block_barrier() };
    // This merge's two runs, from places `a` and `b` of the segment.
    let a = first / (2 * run) * (2 * run);
    let b = a + run;
    let a_len = run.min(len.saturating_sub(a));
    let b_len = run.min(len.saturating_sub(b));
    // Reads past a run's end (never taken) stay within it.
    let a_key = |i: u32| key_at(a + i.min(run - 1));
    let b_key = |j: u32| key_at(b + j.min(run - 1));
    let diagonal = (first - a + lane * ITEMS as u32).min(a_len + b_len);
    // The first `diagonal` outputs take `i` keys of the first run and the rest of the
    // second: the least `i` whose first-run key is after the second run's key before the
    // diagonal (ties: the first run's first).
    let (mut lo, mut hi) = (diagonal.saturating_sub(b_len), diagonal.min(a_len));
    while lo < hi {
        let mid = (lo + hi) / 2;
        if order(b_key(diagonal - 1 - mid)) < order(a_key(mid)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let (mut i, mut j) = (lo, diagonal - lo);
    let (mut next_a, mut next_b) = (a_key(i), b_key(j));
    unrolled_for(ITEMS, |k| {
        let take_a = j >= b_len || (i < a_len && order(next_b) >= order(next_a));
        let at = if take_a {
            a + i.min(run - 1)
        } else {
            b + j.min(run - 1)
        };
        merged[k] = if take_a { next_a } else { next_b }.to_slot();
        if PAIRS {
            // SAFETY: as `key_at`'s.
            positions[k] = unsafe { group.sort.values.read_unchecked(padded_slot(at)) };
        }
        // The taken run's next key, by selects (branches that each set one of the two made
        // LLVM keep `u8` keys in local memory).
        i += take_a as u32;
        j += !take_a as u32;
        let next = if take_a { a_key(i) } else { b_key(j) };
        next_a = if take_a { next } else { next_a };
        next_b = if take_a { next_b } else { next };
    });
    // SAFETY: every thread of the block reaches it: every read of this level's runs is done.
    unsafe { block_barrier() };
    // This thread's outputs, places `first + lane * ITEMS ..`, to this warp's tile.
    unrolled_for(ITEMS, |k| {
        let at = padded_slot(first + lane * ITEMS as u32 + k as u32);
        // SAFETY: a slot of this warp's tile, this item's alone.
        unsafe {
            group.sort.keys.write_unchecked(at, merged[k]);
            if PAIRS {
                group.sort.values.write_unchecked(at, positions[k]);
            }
        }
    });
}

/// A segment of at most `32 * ITEMS` keys by one warp in shared memory: lane `l` loads keys
/// `i * 32 + l` (coalesced), the warp radix sort orders them with their positions, and each is
/// stored back at the same place of the sorted segment with the value of its position (places
/// past `keep` not written).
///
/// # Safety
/// As [`segmented_warp_radix_sort`], for one of its segments.
#[inline(always)]
unsafe fn sort_warp_tile<K, V, const PAIRS: bool, const ITEMS: usize>(
    p: &SegmentedSortParams<K, V>,
    segment: Segment,
    storage: WarpTileStorage<<K::Bits as RadixBits>::Slot, V>,
) where
    K: RadixKey,
    V: SortValue,
{
    let descending = p.descending != 0;
    let lane = lane_id() as usize;
    let staged = PAIRS && p.index_values == 0;
    // Past the segment's end, the largest bits: after every key, in every pass.
    let mut keys = [<K::Bits as RadixBits>::MAX; ITEMS];
    let mut positions = [0u32; ITEMS];
    unrolled_for(ITEMS, |i| {
        let j = i * WARP_SIZE as usize + lane;
        positions[i] = j as u32;
        if j < segment.len {
            // SAFETY: j < the segment's length: a key (and value) of the input; the value's
            // padded slot is within the staging array (a tile's).
            unsafe {
                keys[i] = ordered_bits(*p.keys_in.add(segment.begin + j), descending);
                if staged {
                    let value = *p.values_in.add(segment.begin + j);
                    storage.values.write_unchecked(padded_slot(j as u32), value);
                }
            }
        }
    });
    // SAFETY: the whole warp calls it with its own storage and the launch's bit range (within
    // the key, checked by the host); the padding is the largest bits. Every lane's loads and
    // staged values are done before the sort's first warp barrier, so before any store (the
    // sort may be in place) and any fetch of a value.
    unsafe {
        warp_radix_sort_blocked::<K::Bits, u32, PAIRS, ITEMS>(
            &mut keys,
            &mut positions,
            (p.begin_bit, p.end_bit),
            storage.sort,
        )
    };
    unrolled_for(ITEMS, |i| {
        let j = i * WARP_SIZE as usize + lane;
        if j < segment.keep {
            // SAFETY: j < keep <= len: the segment's output place (the caller's contract for
            // the outputs); a valid key's position is below the segment's length, its value
            // staged there before the sort's barriers.
            unsafe {
                *p.keys_out.add(segment.out_begin + j) = key_of_ordered::<K>(keys[i], descending);
                if PAIRS {
                    *p.values_out.add(segment.out_begin + j) = if staged {
                        storage.values.read_unchecked(padded_slot(positions[i]))
                    } else {
                        V::from_index(positions[i] as usize)
                    };
                }
            }
        }
    });
}

/// Segment `s` of the launch: where its keys are, where its output goes.
///
/// # Safety
/// `s < p.segments` (with offsets: within the `segments + 1` of them).
#[inline(always)]
unsafe fn segment_of<K, V>(p: &SegmentedSortParams<K, V>, s: usize) -> Segment {
    let (begin, end) = if p.offsets.is_null() {
        (s * p.row_len, (s + 1) * p.row_len)
    } else {
        // SAFETY: s + 1 <= segments: within the segments + 1 offsets.
        unsafe { (*p.offsets.add(s) as usize, *p.offsets.add(s + 1) as usize) }
    };
    let len = end - begin;
    if p.keep == usize::MAX {
        Segment {
            begin,
            len,
            out_begin: begin,
            keep: len,
        }
    } else {
        Segment {
            begin,
            len,
            out_begin: s * p.keep,
            keep: len.min(p.keep),
        }
    }
}

/// A segment of at most [`warp_sort_keys`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_sort_keys) keys, by one warp without shared memory:
/// lane `l` holds keys `k * 32 + l` (loads coalesced), and each key's place is the number of
/// the segment's keys that go before it, in the bit range's order with ties by position
/// (stable): every lane compares its keys with each key of the segment in turn, broadcast by
/// a shuffle. Places past `keep` are not written.
///
/// # Safety
/// The whole warp calls it, with a segment of the launch of at most
/// [`warp_sort_keys`](gpu_primitives_abi::tuning::SegmentedSortPolicy::warp_sort_keys) keys (the outputs as [`segmented_radix_sort`] describes them).
#[inline(always)]
unsafe fn sort_warp<K, V, const PAIRS: bool>(p: &SegmentedSortParams<K, V>, segment: Segment)
where
    K: RadixKey,
    V: SortValue,
{
    // Half the keys a lane for segments of at most half the longest: half the comparisons.
    const HALF: usize = SEGMENTED_WARP_SORT_ITEMS / 2;
    // SAFETY: forwarded; the segment fits 32 * HALF keys in the first call.
    unsafe {
        if segment.len <= WARP_SIZE as usize * HALF {
            sort_warp_items::<K, V, PAIRS, HALF>(p, segment)
        } else {
            sort_warp_items::<K, V, PAIRS, SEGMENTED_WARP_SORT_ITEMS>(p, segment)
        }
    }
}

/// [`sort_warp`] with `W` keys a lane.
///
/// # Safety
/// As [`sort_warp`], with a segment of at most `32 * W` keys.
#[inline(always)]
unsafe fn sort_warp_items<K, V, const PAIRS: bool, const W: usize>(
    p: &SegmentedSortParams<K, V>,
    segment: Segment,
) where
    K: RadixKey,
    V: SortValue,
{
    let descending = p.descending != 0;
    let lane = lane_id();
    let len = segment.len as u32;
    // Keys past the segment's end are the largest bits, after every key (ties by position).
    let mut keys = [<K::Bits as RadixBits>::MAX; W];
    let mut values = [V::from_index(0); W];
    unrolled_for(W, |k| {
        let j = k as u32 * WARP_SIZE + lane;
        if j < len {
            // SAFETY: j < the segment's length: a key (and value) of the input.
            unsafe {
                keys[k] = ordered_bits(*p.keys_in.add(segment.begin + j as usize), descending);
                if PAIRS {
                    values[k] = if p.index_values != 0 {
                        V::from_index(j as usize)
                    } else {
                        *p.values_in.add(segment.begin + j as usize)
                    };
                }
            }
        }
    });
    // What the order compares: the bit range, shifted down (the padding stays the largest).
    let mut order = [<K::Bits as RadixBits>::MAX; W];
    unrolled_for(W, |k| {
        if k as u32 * WARP_SIZE + lane < len {
            order[k] = keys[k].bits_in(p.begin_bit, p.end_bit);
        }
    });
    // Item `k`'s place: the keys of row `m` (positions `m * 32 ..`) before it. A row before
    // its own counts the keys at most equal, a row after it those less, its own row those less
    // and those equal from an earlier lane: ties by position. A segment of one row (at most 32
    // keys) compares its item 0 alone; a longer one every item with each key of its rows, those
    // past the segment's end skipped (a warp-uniform test outside the loop over lanes).
    let mut place = [0u32; W];
    if len <= WARP_SIZE {
        for source in 0..WARP_SIZE {
            // SAFETY: the whole warp runs this loop, with the same `source`.
            let other = unsafe { order[0].shuffle_idx(source, WARP_SIZE, u32::MAX) };
            place[0] += (other < order[0] || (other == order[0] && source < lane)) as u32;
        }
    } else {
        unrolled_for(W, |m| {
            if m as u32 * WARP_SIZE < len {
                for source in 0..WARP_SIZE {
                    // SAFETY: as above.
                    let other = unsafe { order[m].shuffle_idx(source, WARP_SIZE, u32::MAX) };
                    unrolled_for(W, |k| {
                        let before = match m.cmp(&k) {
                            core::cmp::Ordering::Less => other <= order[k],
                            core::cmp::Ordering::Greater => other < order[k],
                            core::cmp::Ordering::Equal => {
                                other < order[k] || (other == order[k] && source < lane)
                            }
                        };
                        place[k] += before as u32;
                    });
                }
            }
        });
    }
    // Every lane's loads are done before any lane writes (the sort may be in place).
    // SAFETY: the whole warp calls it.
    unsafe { warp_sync(u32::MAX) };
    unrolled_for(W, |k| {
        if k as u32 * WARP_SIZE + lane < len && (place[k] as usize) < segment.keep {
            let at = segment.out_begin + place[k] as usize;
            // SAFETY: place < keep <= len: the segment's output place (the caller's contract
            // for the outputs); the places of the segment's keys are distinct.
            unsafe {
                *p.keys_out.add(at) = key_of_ordered::<K>(keys[k], descending);
                if PAIRS {
                    *p.values_out.add(at) = values[k];
                }
            }
        }
    });
}

/// A segment of at most one tile, in shared memory.
///
/// # Safety
/// As [`segmented_radix_sort`], for one of its segments of at most `block_dim() * ITEMS` keys.
#[inline(always)]
unsafe fn sort_tile<K, V, const PAIRS: bool, const ITEMS: usize>(
    p: &SegmentedSortParams<K, V>,
    segment: Segment,
    storage: SegmentedSortStorage<<K::Bits as RadixBits>::Slot, V>,
) where
    K: RadixKey,
    V: SortValue,
{
    let descending = p.descending != 0;
    // Pairs by the warp-striped sort (8-bit digits); keys alone by the blocked sort, which pads
    // a partial tile with the largest ordered bits.
    let warp_striped = PAIRS;
    let padding = if warp_striped {
        <K::Bits as RadixBits>::from_slot(zero_slot())
    } else {
        <K::Bits as RadixBits>::MAX
    };
    let mut keys = [padding; ITEMS];
    let mut values = [V::from_index(0); ITEMS];
    let load_value = |j: usize| {
        if p.index_values != 0 {
            V::from_index(j)
        } else {
            // SAFETY: the caller's j is below the segment's length: a value of the input.
            unsafe { *p.values_in.add(segment.begin + j) }
        }
    };
    if segment.len == block_dim() as usize * ITEMS {
        // A whole tile: every load before any is used (a bounds check per item serialises them).
        let mut loaded = [crate::radix::zero_key::<K>(); ITEMS];
        unrolled_for(ITEMS, |i| {
            let j = warp_striped_position::<ITEMS>(i) as usize;
            // SAFETY: j < the tile, which is the whole segment.
            loaded[i] = unsafe { *p.keys_in.add(segment.begin + j) };
            if PAIRS {
                values[i] = load_value(j);
            }
        });
        unrolled_for(ITEMS, |i| keys[i] = ordered_bits(loaded[i], descending));
    } else {
        unrolled_for(ITEMS, |i| {
            let j = warp_striped_position::<ITEMS>(i) as usize;
            if j < segment.len {
                // SAFETY: j < the segment's length.
                keys[i] = ordered_bits(unsafe { *p.keys_in.add(segment.begin + j) }, descending);
                if PAIRS {
                    values[i] = load_value(j);
                }
            }
        });
    }
    if warp_striped {
        // SAFETY: the whole block calls it with the segment's length (at most a tile) and the
        // launch's bit range (within the key, checked by the host).
        unsafe {
            block_radix_sort_warp_striped::<K::Bits, V, PAIRS, ITEMS>(
                &mut keys,
                &mut values,
                segment.len as u32,
                (p.begin_bit, p.end_bit),
                storage.sort,
            )
        };
    } else {
        let blocked = BlockedSortStorage {
            rank: BlockedRankStorage {
                counters: storage.counters,
                scan: storage.sort.rank.scan,
            },
            keys: storage.sort.keys,
        };
        // SAFETY: as above (the keys past the segment's end padded); the exchange has the
        // padded slots and the counters their words (`segmented_sort_layout`), apart from the
        // scan's slots.
        unsafe {
            block_radix_sort_blocked::<K::Bits, SORT_BLOCK, ITEMS>(
                &mut keys,
                (p.begin_bit, p.end_bit),
                blocked,
            )
        };
    }
    unrolled_for(ITEMS, |i| {
        let j = warp_striped_position::<ITEMS>(i) as usize;
        if j < segment.keep {
            // SAFETY: j < keep <= len: the segment's output place (the caller's contract for
            // the outputs).
            unsafe {
                *p.keys_out.add(segment.out_begin + j) = key_of_ordered::<K>(keys[i], descending);
                if PAIRS {
                    *p.values_out.add(segment.out_begin + j) = values[i];
                }
            }
        }
    });
}

/// A segment longer than a tile: one pass over global memory per digit (see the
/// [module docs](self)).
///
/// # Safety
/// As [`segmented_radix_sort`], for one of its segments longer than `block_dim() * ITEMS`.
#[inline(always)]
unsafe fn sort_long<K, V, const PAIRS: bool, const ITEMS: usize>(
    p: &SegmentedSortParams<K, V>,
    segment: Segment,
    storage: SegmentedSortStorage<<K::Bits as RadixBits>::Slot, V>,
) where
    K: RadixKey,
    V: SortValue,
{
    let t = thread_idx();
    let descending = p.descending != 0;
    let tile_len = block_dim() as usize * ITEMS;
    let passes = (p.end_bit - p.begin_bit).div_ceil(RADIX_BITS).max(1);
    // The scratch buffers: two of scratch_len keys (values) each (the caller's contract), indexed
    // as the input. Chosen by a select, not an array index (which would live in local memory).
    let keys_scratch = |second: bool| {
        if second {
            // SAFETY: the second buffer starts scratch_len keys after the first, within the
            // scratch.
            unsafe { p.keys_scratch.add(p.scratch_len) }
        } else {
            p.keys_scratch
        }
    };
    let values_scratch = |second: bool| {
        if second {
            // SAFETY: as the keys'.
            unsafe { p.values_scratch.add(p.scratch_len) }
        } else {
            p.values_scratch
        }
    };
    let mut keys_from = p.keys_in;
    let mut values_from = p.values_in;
    // One pass in place would overwrite keys it has not read: the segment moves to the second
    // scratch buffer first.
    if passes == 1 && core::ptr::eq(p.keys_in, p.keys_out) {
        let mut j = t as usize;
        while j < segment.len {
            // SAFETY: j < len: within the segment, in the input and in the scratch.
            unsafe {
                *keys_scratch(true).add(segment.begin + j) = *p.keys_in.add(segment.begin + j);
                if PAIRS && p.index_values == 0 {
                    *values_scratch(true).add(segment.begin + j) = *p.values_in.add(segment.begin + j);
                }
            }
            j += block_dim() as usize;
        }
        keys_from = keys_scratch(true);
        values_from = values_scratch(true);
        // SAFETY: the whole block calls it: the copies are seen by every thread.
        unsafe { block_barrier() };
    }

    for pass in 0..passes {
        let shift = p.begin_bit + pass * RADIX_BITS;
        let bits = RADIX_BITS.min(p.end_bit - shift);
        let last = pass + 1 == passes;
        let (keys_to, values_to, base) = if last {
            (p.keys_out, p.values_out, segment.out_begin)
        } else {
            (
                keys_scratch(pass % 2 == 1),
                values_scratch(pass % 2 == 1),
                segment.begin,
            )
        };
        let index_values = pass == 0 && p.index_values != 0;

        // The segment's count of each digit, scanned into each digit's first place.
        // SAFETY: t < RADIX_DIGITS counters; read after the barrier.
        unsafe { storage.digit_places.write(t, 0) };
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        let mut j = t as usize;
        while j < segment.len {
            // SAFETY: j < len: a key of the segment.
            let key = unsafe { *keys_from.add(segment.begin + j) };
            let digit = ordered_bits(key, descending).digit(shift, bits);
            // SAFETY: digit < RADIX_DIGITS; zeroed before the barrier.
            unsafe { storage.digit_places.atomic_add_unchecked(digit, 1) };
            j += block_dim() as usize;
        }
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        // SAFETY: t < RADIX_DIGITS; every add is done.
        let mut start = [unsafe { storage.digit_places.read(t) }];
        // SAFETY: the whole block calls it with the rank's scan storage, unused until the rank.
        unsafe { block_exclusive_scan::<u32, Sum, 1>(&mut start, storage.sort.rank.scan) };
        // This thread's digit's next place in the segment.
        let mut next = start[0];
        // SAFETY: the whole block calls it: every count was read before the places reuse them.
        unsafe { block_barrier() };

        let mut first = 0;
        while first < segment.len {
            let items = tile_len.min(segment.len - first) as u32;
            let mut keys = [<K::Bits as RadixBits>::from_slot(zero_slot()); ITEMS];
            let mut digits = [PAST_END_DIGIT; ITEMS];
            let mut values = [V::from_index(0); ITEMS];
            unrolled_for(ITEMS, |i| {
                let j = warp_striped_position::<ITEMS>(i);
                if j < items {
                    let at = segment.begin + first + j as usize;
                    // SAFETY: j < items: a key (value) of the segment.
                    keys[i] = ordered_bits(unsafe { *keys_from.add(at) }, descending);
                    digits[i] = keys[i].digit(shift, bits);
                    if PAIRS {
                        values[i] = if index_values {
                            V::from_index(first + j as usize)
                        } else {
                            // SAFETY: as the key's.
                            unsafe { *values_from.add(at) }
                        };
                    }
                }
            });
            // SAFETY: the whole block (of RADIX_DIGITS threads) calls it with its own storage.
            let rank =
                unsafe { block_radix_rank_warp_striped::<ITEMS>(&digits, items, storage.sort.rank, |_| {}) };
            // SAFETY: t < RADIX_DIGITS; read after the barrier below.
            unsafe { storage.digit_places.write(t, next.wrapping_sub(rank.digit_start)) };
            unrolled_for(ITEMS, |i| {
                if rank.ranks[i] < items {
                    // SAFETY: ranks of valid items are distinct and below `items`.
                    unsafe {
                        storage
                            .sort
                            .keys
                            .write_unchecked(rank.ranks[i], keys[i].to_slot())
                    };
                }
            });
            // SAFETY: the whole block calls it.
            unsafe { block_barrier() };
            let mut out_digits = [0u32; ITEMS];
            unrolled_for(ITEMS, |k| {
                let j = t + k as u32 * block_dim();
                if j < items {
                    // SAFETY: written before the barrier.
                    let bits_of =
                        <K::Bits as RadixBits>::from_slot(unsafe { storage.sort.keys.read_unchecked(j) });
                    let digit = bits_of.digit(shift, bits);
                    out_digits[k] = digit;
                    // SAFETY: written before the barrier; digit < RADIX_DIGITS.
                    let place =
                        unsafe { storage.digit_places.read_unchecked(digit) }.wrapping_add(j) as usize;
                    if !last || place < segment.keep {
                        // SAFETY: place < len (the digit's places are the segment's), and
                        // below keep for the output of a top-k.
                        unsafe { *keys_to.add(base + place) = key_of_ordered::<K>(bits_of, descending) };
                    }
                }
            });
            if PAIRS {
                // SAFETY: the whole block calls it: every key was read from the exchange.
                unsafe { block_barrier() };
                unrolled_for(ITEMS, |i| {
                    if rank.ranks[i] < items {
                        // SAFETY: as the keys'.
                        unsafe { storage.sort.values.write_unchecked(rank.ranks[i], values[i]) };
                    }
                });
                // SAFETY: the whole block calls it.
                unsafe { block_barrier() };
                unrolled_for(ITEMS, |k| {
                    let j = t + k as u32 * block_dim();
                    if j < items {
                        // SAFETY: as the keys'.
                        unsafe {
                            let place =
                                storage.digit_places.read_unchecked(out_digits[k]).wrapping_add(j) as usize;
                            if !last || place < segment.keep {
                                *values_to.add(base + place) = storage.sort.values.read_unchecked(j);
                            }
                        }
                    }
                });
            }
            next = next.wrapping_add(rank.digit_count);
            first += tile_len;
            // Every read of the exchange and the places is done before the next tile's.
            // SAFETY: the whole block calls it.
            unsafe { block_barrier() };
        }
        keys_from = keys_to;
        values_from = values_to;
    }
}
