//! Device-wide least-significant-digit radix sort, Onesweep (Adinets and Merrill, "Onesweep: A
//! Faster Least Significant Digit Radix Sort for GPUs", 2022), as CUB's `DeviceRadixSort`
//! onesweep agents do it.
//!
//! Keys are sorted by their *ordered bits* ([`RadixKey`]): an unsigned integer of the key's
//! width whose order is the key's (inverted for a descending sort). Each pass orders the keys
//! stably by one digit of [`RADIX_BITS`] bits, from the lowest digit up:
//!
//! 1. [`radix_histogram`] (once, before the passes): every key's digit of every pass, counted in
//!    shared memory per block, then added to the global counts (`passes * 256` counters);
//! 2. [`onesweep_tile`] (one launch per pass, one block per tile, tiles taken in order from a
//!    counter): load the tile's keys warp-striped, rank them by digit
//!    ([`block_radix_rank_warp_striped_by`]: each key stored to shared memory as it is ranked,
//!    each digit made from its key where the rank uses it, so that a pass of keys alone holds
//!    20 keys a thread in 64 registers), publish the tile's count of each digit, and find by
//!    decoupled look-back over the preceding tiles' counts (one thread per digit) where the
//!    tile's keys of each digit go: the digit's start in the whole input (from the histogram)
//!    plus the same digit's keys in the tiles before. The keys then go through shared memory
//!    in digit order, so that consecutive threads write consecutive places of each digit's run.
//!
//! Stable: keys of equal digits keep their order in every pass, so the sort is stable.

use super::element::{Packed, load_aligned_read_only};
use super::scan::next_tile;
use super::tile_status::{STATE_AGGREGATE, STATE_PREFIX, TileStatus, TileStatusValue};
use crate::block::{
    PAST_END_DIGIT, RadixRankStorage, block_exclusive_scan, block_radix_rank_warp_striped_by, owns_digit,
};
use crate::op::Sum;
use crate::policy::SORT;
pub use crate::radix::{RadixBits, RadixKey, SortValue};
use crate::radix::{digit_flip, ordered_bits, zero_key, zero_slot};
use crate::shared::SharedArray;
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, global_idx, grid_stride, lane_id, thread_idx, warp_id};
use crate::unroll::unrolled_for;
use gpu_primitives_abi::layout::{RADIX_BITS, RADIX_DIGITS};

/// 16-byte loads of keys each thread of [`radix_histogram`] issues before it counts them.
const HISTOGRAM_LOADS: usize = SORT.histogram_loads_in_flight as usize;
/// Most tiles a look-back reads at once ([`SortPolicy::look_back_tiles`](gpu_primitives_abi::tuning::SortPolicy::look_back_tiles)).
const SORT_LOOK_BACK_TILES: usize = SORT.look_back_tiles;

/// Add one to this lane's copy of the counter of each of `passes` digits of `key`'s bits
/// `begin_bit ..` (`range` masks the sort's bit range): counter `(pass * RADIX_DIGITS + digit) *
/// copies + copy`. The ordered bits are made once, cut to the range and shifted down to it, so
/// that each pass's digit is a constant shift of them (the last pass's bits past the range
/// zero: its digit of fewer bits).
///
/// # Safety
/// `counters` holds `passes * RADIX_DIGITS * copies` counters, zeroed before a barrier this
/// thread passed; `copy < copies`; `passes` is at most the key's width over [`RADIX_BITS`].
#[inline(always)]
unsafe fn count_key_digits<K: RadixKey>(
    key: K,
    (descending, range, begin_bit, passes): (bool, K::Bits, u32, u32),
    counters: SharedArray<u32>,
    (copies, copy): (u32, u32),
) {
    let bits = ordered_bits(key, descending).masked(range).above(begin_bit);
    for pass in 0..<K::Bits as RadixBits>::WIDTH / RADIX_BITS {
        if pass < passes {
            let digit = bits.digit(pass * RADIX_BITS, RADIX_BITS);
            // SAFETY: (pass * RADIX_DIGITS + digit) * copies + copy is below passes *
            // RADIX_DIGITS * copies, the caller's counters.
            unsafe { counters.atomic_add_unchecked((pass * RADIX_DIGITS + digit) * copies + copy, 1) };
        }
    }
}

/// Count the digits of every pass of `keys[0..n]` into `histogram[pass * RADIX_DIGITS + digit]`
/// (adds to it): each block counts the keys of its grid-stride share in `counters` (shared
/// memory), then adds each non-zero count to the global one. Thread `g` of the grid reads
/// 16-byte vectors of `VEC` keys `g, g + S, ...` (`S` = threads in the grid),
/// `SortPolicy::histogram_loads_in_flight` of them at once, then the keys past the last whole vector
/// (every key one at a time where `keys` is not 16-byte aligned). Per key, its ordered bits
/// once; per key and pass, a digit's extraction and one shared-memory add, into lane `l`'s copy
/// `l % copies` of the digit's counter (`sort_histogram_copies`: the copies of a counter are
/// consecutive words, so a warp's adds fall on distinct banks).
///
/// # Safety
/// Every thread of the grid calls it with the same arguments; `keys` holds `n` readable keys
/// nothing writes during the launch; `histogram` holds `passes * RADIX_DIGITS` `u32`;
/// `counters` is this block's, `passes * RADIX_DIGITS * copies` long; `copies` is a power of two
/// up to 32; `begin_bit <= end_bit <=` the key's width, and `passes` is `(end_bit -
/// begin_bit).div_ceil(RADIX_BITS)`, at least 1; `VEC` keys are 16 bytes.
#[inline(always)]
pub unsafe fn radix_histogram<K: RadixKey + Packed, const VEC: usize>(
    keys: *const K,
    n: usize,
    histogram: *mut u32,
    (begin_bit, end_bit, passes, copies): (u32, u32, u32, u32),
    descending: bool,
    counters: SharedArray<u32>,
) {
    const { assert!(VEC * core::mem::size_of::<K>() == 16) };
    let t = thread_idx();
    let mut c = t;
    while c < passes * RADIX_DIGITS * copies {
        // SAFETY: c is below the counters' length; read after the barrier.
        unsafe { counters.write(c, 0) };
        c += block_dim();
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    let range = <K::Bits as RadixBits>::range_mask(begin_bit, end_bit);
    let digits = (descending, range, begin_bit, passes);
    // copies is a power of two up to 32 (the caller's contract).
    let copy = lane_id() & (copies - 1);
    // SAFETY: the counters are zeroed (barrier above); copy < copies; passes is within the
    // key's width.
    let count = |key: K| unsafe { count_key_digits(key, digits, counters, (copies, copy)) };
    let vectors = if (keys as usize).is_multiple_of(16) {
        n / VEC
    } else {
        0
    };
    let stride = grid_stride();
    let mut v = global_idx();
    // SAFETY: (loops) every vector read is below `vectors`, so its keys are below n; the base is
    // 16-byte aligned (checked above); nothing writes the keys.
    unsafe {
        while v + (HISTOGRAM_LOADS - 1) * stride < vectors {
            let mut loaded = [[K::zero(); VEC]; HISTOGRAM_LOADS];
            unrolled_for(HISTOGRAM_LOADS, |k| {
                loaded[k] = load_aligned_read_only::<K, VEC>(keys.add((v + k * stride) * VEC));
            });
            // One loop over every key loaded (at most 32), not a loop of loops: a closure around
            // an inner loop of whole counts was left a function call.
            unrolled_for(HISTOGRAM_LOADS * VEC, |j| count(loaded[j / VEC][j % VEC]));
            v += HISTOGRAM_LOADS * stride;
        }
        while v < vectors {
            let vector = load_aligned_read_only::<K, VEC>(keys.add(v * VEC));
            unrolled_for(VEC, |i| count(vector[i]));
            v += stride;
        }
        let mut i = vectors * VEC + global_idx();
        while i < n {
            count(*keys.add(i));
            i += stride;
        }
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    let mut c = t;
    while c < passes * RADIX_DIGITS {
        // The counter's copies, each thread starting at its own (consecutive threads read
        // consecutive words: no bank conflict).
        let mut count = 0u32;
        for k in 0..copies {
            // SAFETY: every add of the block is done (barrier); the copy is within the counters.
            count += unsafe { counters.read(c * copies + ((k + t) & (copies - 1))) };
        }
        if count != 0 {
            // SAFETY: c is below passes * RADIX_DIGITS, the histogram's length.
            unsafe { <u32 as crate::atomic::AtomicAdd>::atomic_add(histogram.add(c as usize), count) };
        }
        c += block_dim();
    }
}

/// `body(k, j)` for this thread's exchange slots `j = thread_idx() + k * BLOCK` (`k < ITEMS`;
/// the block is `BLOCK` threads, a constant so that the slots' offsets are too) below the
/// tile's `valid` items: on a `whole` tile every slot, without a bounds check per slot (each
/// cost a compare and a branch).
#[inline(always)]
fn for_each_valid_slot<const BLOCK: u32, const ITEMS: usize>(
    whole: bool,
    valid: u32,
    mut body: impl FnMut(usize, u32),
) {
    let slot = |k: usize| thread_idx() + (k as u32) * BLOCK;
    if whole {
        unrolled_for(ITEMS, |k| body(k, slot(k)));
    } else {
        unrolled_for(ITEMS, |k| {
            if slot(k) < valid {
                body(k, slot(k));
            }
        });
    }
}

/// The sum of the counts tiles `tile - 1`, `tile - 2`, ... have published, down to the first
/// with its prefix (included), reading one tile's status at a time (`read(other)`: `None` until
/// tile `other` has published). Tile 0 publishes its prefix only, so the walk ends.
#[inline(always)]
fn look_back_one_by_one(tile: usize, read: impl Fn(usize) -> Option<(u32, u32)>) -> u32 {
    let mut before = 0u32;
    let mut other = tile;
    loop {
        other -= 1;
        loop {
            if let Some((state, count)) = read(other) {
                before = before.wrapping_add(count);
                if state == STATE_PREFIX {
                    return before;
                }
                break;
            }
        }
    }
}

/// As [`look_back_one_by_one`], reading `window` tiles' status at once (at most
/// [`SortPolicy::look_back_tiles`](gpu_primitives_abi::tuning::SortPolicy::look_back_tiles)), so that their latencies overlap: each read tile's count is added,
/// nearest first, up to the first tile with its prefix or the first that has published nothing
/// yet (read again with the next window).
#[inline(always)]
fn look_back_windows(tile: usize, window: usize, read: impl Fn(usize) -> Option<(u32, u32)>) -> u32 {
    let mut before = 0u32;
    // Tiles `next - 1`, `next - 2`, ... are still to be added.
    let mut next = tile;
    loop {
        let reads = window.min(SORT_LOOK_BACK_TILES).min(next);
        let mut status = [None; SORT_LOOK_BACK_TILES];
        unrolled_for(SORT_LOOK_BACK_TILES, |k| {
            if k < reads {
                status[k] = read(next - 1 - k);
            }
        });
        let (mut added, mut found, mut waiting) = (0, false, false);
        unrolled_for(SORT_LOOK_BACK_TILES, |k| {
            if k < reads && !found && !waiting {
                match status[k] {
                    Some((state, count)) => {
                        before = before.wrapping_add(count);
                        added += 1;
                        found = state == STATE_PREFIX;
                    }
                    None => waiting = true,
                }
            }
        });
        if found {
            return before;
        }
        next -= added;
    }
}

/// Shared memory of [`onesweep_tile`].
#[derive(Clone, Copy)]
pub struct OnesweepStorage<S, V> {
    /// One `u32`: the tile index, from thread 0 to the block.
    pub tile: SharedArray<u32>,
    /// The block radix rank's.
    pub rank: RadixRankStorage,
    /// `RADIX_DIGITS`: each digit's place in the output minus its start in the tile.
    pub digit_places: SharedArray<u32>,
    /// The tile's keys (ascending ordered bits, whatever the direction) in digit order.
    pub keys: SharedArray<S>,
    /// The tile's values in digit order: the same bytes as `keys`, used after them.
    pub values: SharedArray<V>,
}

/// One pass's input, output and digit.
#[derive(Clone, Copy)]
pub struct OnesweepPass<K, V> {
    /// `n` keys, read.
    pub keys_in: *const K,
    /// `n` keys, written.
    pub keys_out: *mut K,
    /// `n` values, read (pairs, unless `index_values`).
    pub values_in: *const V,
    /// `n` values, written (pairs).
    pub values_out: *mut V,
    /// Number of keys, below 2^32.
    pub n: usize,
    /// The pass's count of each digit over the whole input.
    pub histogram: *const u32,
    /// The digit's first bit.
    pub shift: u32,
    /// The digit's bits.
    pub bits: u32,
    /// Descending order.
    pub descending: bool,
    /// The values are the keys' input indices.
    pub index_values: bool,
    /// Tiles whose status the look-back reads at once (1 to [`SortPolicy::look_back_tiles`](gpu_primitives_abi::tuning::SortPolicy::look_back_tiles)).
    pub look_back_tiles: u32,
}

/// One tile of a onesweep pass (see the [module docs](self)); with `PAIRS`, the values move with
/// their keys. Blocks of `BLOCK` threads, [`RADIX_DIGITS`] or more: thread `t < RADIX_DIGITS`
/// owns digit `t` (its count, look-back and place), every thread loads, ranks and writes out
/// `ITEMS` keys.
///
/// The grid must have exactly `ceil(n / (BLOCK * ITEMS))` blocks of `BLOCK` threads.
///
/// # Safety
/// Every thread of the block calls it; `block_dim() == BLOCK`, a multiple of 32 from
/// [`RADIX_DIGITS`] to 1024; the pass's pointers hold
/// `n` keys (and values, with `PAIRS`), the outputs not overlapping the inputs; `histogram`
/// holds `RADIX_DIGITS` counts that sum to `n`, the counts of the keys' digits; `status` has
/// `RADIX_DIGITS` 8-byte slots per tile, every one from an older epoch; `storage` is this
/// block's, its rank's `warp_counts` at least `BLOCK / 32 * RADIX_DIGITS` long, `keys` /
/// `values` at least `BLOCK * ITEMS`.
#[inline(always)]
pub unsafe fn onesweep_tile<K, V, const PAIRS: bool, const BLOCK: u32, const ITEMS: usize>(
    pass: OnesweepPass<K, V>,
    status: TileStatus<u32>,
    storage: OnesweepStorage<<K::Bits as RadixBits>::Slot, V>,
) where
    K: RadixKey,
    V: SortValue,
{
    let t = thread_idx();
    let owner = owns_digit::<BLOCK>(t);
    // SAFETY: the whole block calls it; the counter is the status's.
    let tile = unsafe { next_tile(&status, storage.tile) };
    let tile_len = BLOCK as usize * ITEMS;
    let tile_first = tile * tile_len;
    let tile_items = tile_len.min(pass.n - tile_first) as u32;
    let warp_first = tile_first + (warp_id() as usize * ITEMS) * WARP_SIZE as usize + lane_id() as usize;

    // Tile 0 starts each digit where the histogram puts it: the counts of the digits before.
    let mut digit_base = 0;
    if tile == 0 {
        let mut count = [0];
        if owner {
            // SAFETY: t < RADIX_DIGITS counts.
            count[0] = unsafe { *pass.histogram.add(t as usize) };
        }
        // SAFETY: the whole block calls it; the rank's first use of the storage follows two
        // barriers later.
        unsafe { block_exclusive_scan::<u32, Sum, 1>(&mut count, storage.rank.scan) };
        digit_base = count[0];
    }

    // The keys' ascending ordered bits, and their digits in the sort's direction.
    let flip = digit_flip(pass.descending, pass.bits);
    let digit_of = |bits: K::Bits| bits.digit(pass.shift, pass.bits) ^ flip;
    let mut ordered = [<K::Bits as RadixBits>::from_slot(zero_slot()); ITEMS];
    let mut values = [V::from_index(0); ITEMS];
    let index = |i: usize| warp_first + i * WARP_SIZE as usize;
    let load_value = |index: usize| {
        if pass.index_values {
            V::from_index(index)
        } else {
            // SAFETY: the caller's index is below n, and there are n values.
            unsafe { *pass.values_in.add(index) }
        }
    };
    let whole = tile_items as usize == tile_len;
    if whole {
        // A whole tile: every load first, with no branch between them, so that their latencies
        // overlap (a bounds check per item made the compiler wait for each load in turn).
        let mut keys = [zero_key::<K>(); ITEMS];
        unrolled_for(ITEMS, |i| {
            // SAFETY: the tile is whole: index(i) < n.
            keys[i] = unsafe { *pass.keys_in.add(index(i)) };
            if PAIRS {
                values[i] = load_value(index(i));
            }
        });
        unrolled_for(ITEMS, |i| ordered[i] = keys[i].to_ordered());
    } else {
        unrolled_for(ITEMS, |i| {
            if index(i) < pass.n {
                // SAFETY: index(i) < n.
                let key = unsafe { *pass.keys_in.add(index(i)) };
                ordered[i] = key.to_ordered();
                if PAIRS {
                    values[i] = load_value(index(i));
                }
            }
        });
    }

    // This thread's items below `valid_items` are within the input; the others take
    // PAST_END_DIGIT. Each digit is made from the key where the rank uses it rather than kept:
    // 20 digits in registers made the pass spill at 64 registers.
    let valid_items = if whole {
        ITEMS as u32
    } else {
        ((pass.n.saturating_sub(warp_first)).div_ceil(WARP_SIZE as usize)).min(ITEMS) as u32
    };
    let digit = |i: usize| {
        if (i as u32) < valid_items {
            digit_of(ordered[i])
        } else {
            PAST_END_DIGIT
        }
    };
    let slot = |tile: usize| tile * RADIX_DIGITS as usize + t as usize;
    let publish = |count: u32| {
        if tile == 0 {
            // SAFETY: this block owns tile 0's slots; slot(0) is within the status.
            unsafe { u32::publish(&status, slot(0), STATE_PREFIX, digit_base.wrapping_add(count)) };
        } else {
            // SAFETY: as above, for this tile.
            unsafe { u32::publish(&status, slot(tile), STATE_AGGREGATE, count) };
        }
    };
    // Keys to shared memory in digit order, before the look-back so that their stores overlap
    // its reads. The items past a partial tile's end too (without a test per item): they rank
    // after the valid ones, in slots the write-out does not read. Keys alone are stored as
    // each is ranked, so that no rank stays in a register; with values the ranks stay, for the
    // values' exchange after the keys' write-out.
    // SAFETY: every rank is below the tile's length, within the exchange; each is one item's.
    let store_key = |i: usize, rank: u32| unsafe { storage.keys.write_unchecked(rank, ordered[i].to_slot()) };
    let mut ranks = [0u32; ITEMS];
    // SAFETY: the whole block (of BLOCK threads) calls it with its own storage; the digits are
    // the items' (PAST_END_DIGIT past the tile's end); `publish` is called by the digits'
    // owners only.
    let place = unsafe {
        block_radix_rank_warp_striped_by::<BLOCK, ITEMS>(
            digit,
            tile_items,
            storage.rank,
            publish,
            |i, rank| {
                store_key(i, rank);
                if PAIRS {
                    ranks[i] = rank;
                }
            },
        )
    };

    // Look back: this thread's digit's keys in the tiles before this one.
    if tile > 0 && owner {
        let read = |other: usize| {
            // SAFETY: the walks read tiles below this one: tiles of this pass, within the status.
            unsafe { u32::try_read(&status, slot(other)) }
        };
        let before = if pass.look_back_tiles > 1 {
            look_back_windows(tile, pass.look_back_tiles as usize, read)
        } else {
            look_back_one_by_one(tile, read)
        };
        digit_base = before;
        // SAFETY: this block owns the tile's slots; the aggregate was published before.
        unsafe {
            u32::publish(
                &status,
                slot(tile),
                STATE_PREFIX,
                before.wrapping_add(place.count),
            )
        };
    }
    if owner {
        // SAFETY: t < RADIX_DIGITS, the places' length; read after the barrier below.
        unsafe {
            storage
                .digit_places
                .write_unchecked(t, digit_base.wrapping_sub(place.start))
        };
    }

    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    let mut out_digits = [0u32; ITEMS];
    for_each_valid_slot::<BLOCK, ITEMS>(whole, tile_items, |k, j| {
        // SAFETY: slot j < the tile's valid items was written before the barrier.
        let bits = <K::Bits as RadixBits>::from_slot(unsafe { storage.keys.read_unchecked(j) });
        let digit = digit_of(bits);
        out_digits[k] = digit;
        // SAFETY: written before the barrier; digit < RADIX_DIGITS, the places' length.
        let place = unsafe { storage.digit_places.read_unchecked(digit) }.wrapping_add(j);
        // SAFETY: place < n: the digit's place in the output, the tiles before and the
        // histogram's count of the smaller digits being exact.
        unsafe { *pass.keys_out.add(place as usize) = K::from_ordered(bits) };
    });
    if PAIRS {
        // The values were loaded with the keys: loading them here, after the rank, made the
        // kernels of 8-byte values spill more (88 bytes on sm_80 instead of 24).
        // SAFETY: the whole block calls it: every key was read from the exchange.
        unsafe { block_barrier() };
        unrolled_for(ITEMS, |i| {
            // SAFETY: as the keys' scatter; the values use the same bytes after the barrier.
            unsafe { storage.values.write_unchecked(ranks[i], values[i]) };
        });
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        for_each_valid_slot::<BLOCK, ITEMS>(whole, tile_items, |k, j| {
            // SAFETY: as the keys' write-out: the value of the key written to the same place.
            unsafe {
                let place = storage.digit_places.read_unchecked(out_digits[k]).wrapping_add(j);
                *pass.values_out.add(place as usize) = storage.values.read_unchecked(j);
            }
        });
    }
}
