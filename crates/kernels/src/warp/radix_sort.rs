//! Warp radix sort: one warp's tile of `32 * ITEMS` keys (and their values) ordered in shared
//! memory of its own by every digit of a bit range, stably, from the lowest digit up, with no
//! block barrier: the warps of a block sort tiles of their own side by side (the segmented
//! sort's rows of a few hundred keys, a warp each).
//!
//! It is the blocked block radix sort ([`block_radix_sort_blocked`](crate::block::block_radix_sort_blocked),
//! CUB's `BlockRadixSort`; Merrill and Grimshaw, "High Performance and Scalable Radix Sorting",
//! 2011) at warp scope: the tile is *blocked* (lane `l`'s item `i` is tile item `l * ITEMS + i`);
//! each pass of [`BLOCKED_RADIX_BITS`] bits, each lane counts its items' digits in 16-bit
//! counters of its own (a load, an add and a store an item, which also gives each item its place
//! among the lane's earlier items of its digit); a warp scan of the counters in digit-major order
//! turns each into where the lane's first item of the digit goes; each key (and value) is stored
//! at its rank in a padded exchange (one slot after every 32) and read back blocked. Warp
//! barriers (`bar.warp.sync`, which also orders the lanes' shared-memory accesses) stand where
//! the block sort has block barriers.
//!
//! Keys are given as their ordered bits ([`RadixKey::to_ordered`](crate::radix::RadixKey),
//! inverted for a descending sort): the sort orders unsigned integers. A partial tile is padded
//! by the caller with `B::MAX` past its end: the padding's digits are the last in every pass and
//! it comes last in tile order, so it sorts after every valid key.
//!
//! - **Who calls:** every lane of a full warp, with the warp's own storage.
//! - **Result valid in:** every lane (its items of the sorted tile, warp-striped: item `i` of
//!   lane `l` at position `i * 32 + l`, so that each store of item `i` writes 32 consecutive
//!   places).
//! - **Barriers:** warp barriers only (5 a pass and 2); `storage` is free again on return (its last reads come before the last barrier).
//! - **Example:** one warp, 2 items a lane, `u32` keys `63 - p` at position `p` (item `i` of lane
//!   `l`: `p = 32 i + l`), bits 0..8: lane `l` holds keys `l` and `32 + l` after the sort.

use crate::op::Sum;
use crate::radix::RadixBits;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::warp_sync;
use crate::thread::{WARP_SIZE, lane_id};
use crate::unroll::unrolled_for;
use crate::warp::{Shuffle, warp_inclusive_scan};
use gpu_primitives_abi::layout::padded_slot;
use gpu_primitives_abi::layout::{BLOCKED_COUNTER_WORDS, BLOCKED_RADIX_BITS};

/// Shared memory of [`warp_radix_sort_blocked`], one warp's.
#[derive(Clone, Copy)]
pub struct WarpRadixSortStorage<S, V> {
    /// `32 * (BLOCKED_COUNTER_WORDS + 1)` words: each lane's counters, two 16-bit counters a
    /// word, and a row of zeros (the scan's odd stride).
    pub counters: SharedArray<u32>,
    /// [`padded_slots`](gpu_primitives_abi::layout::padded_slots)`(32 * ITEMS)` slots: the keys
    /// between passes.
    pub keys: SharedArray<S>,
    /// As many values (pairs; unused for keys alone); not the keys' bytes.
    pub values: SharedArray<V>,
}

/// Sort the warp's tile by bits `begin_bit .. end_bit` of its keys' ordered bits (see the
/// [module docs](self)): `keys[i]` (and `values[i]` with `PAIRS`) is the item at position
/// `i * 32 + lane` on entry and the sorted tile's item there on return. A partial tile is
/// padded with `B::MAX` past its end by the caller. An empty bit range leaves the tile in its
/// order.
///
/// # Safety
/// Every lane of the (full) warp calls it with the same bit range; `begin_bit <= end_bit <=`
/// the bits of `B`; `32 * ITEMS < 65536` (16-bit counters); `storage` is this warp's alone,
/// `counters` at least `32 * (BLOCKED_COUNTER_WORDS + 1)` words, `keys` (and with `PAIRS`
/// `values`) at least `padded_slots(32 * ITEMS)` long, apart from one another.
#[inline(always)]
pub unsafe fn warp_radix_sort_blocked<B, V, const PAIRS: bool, const ITEMS: usize>(
    keys: &mut [B; ITEMS],
    values: &mut [V; ITEMS],
    (begin_bit, end_bit): (u32, u32),
    storage: WarpRadixSortStorage<B::Slot, V>,
) where
    B: RadixBits,
    V: SharedValue,
{
    let lane = lane_id();
    // Item i of this lane: warp-striped at slot i * 33 + lane (a row of 32 never crosses a
    // padding slot), blocked at the padded slot of position lane * ITEMS + i.
    let striped = |i: usize| i as u32 * (WARP_SIZE + 1) + lane;
    let blocked = |i: usize| padded_slot(lane * ITEMS as u32 + i as u32);
    // SAFETY: the slots are within the exchanges (the caller's lengths); the whole warp calls
    // it, each lane writing its own slots before the barrier and reading after it.
    unsafe { exchange::<B, V, PAIRS, ITEMS>(keys, values, storage, striped, blocked) };
    let passes = (end_bit - begin_bit).div_ceil(BLOCKED_RADIX_BITS).max(1);
    for pass in 0..passes {
        let shift = begin_bit + pass * BLOCKED_RADIX_BITS;
        let bits = BLOCKED_RADIX_BITS.min(end_bit - shift);
        // SAFETY: the whole warp calls it with its own counters; each digit below 16.
        let ranks = unsafe { warp_rank_blocked::<ITEMS>(|i| keys[i].digit(shift, bits), storage.counters) };
        let to = |i: usize| padded_slot(ranks[i]);
        // Back blocked for the next pass; warp-striped after the last.
        // SAFETY: ranks are distinct positions of the tile: within the exchanges; the last
        // reads of the exchanges ended before the rank's first warp barrier.
        unsafe {
            if pass + 1 < passes {
                exchange::<B, V, PAIRS, ITEMS>(keys, values, storage, to, blocked);
            } else {
                exchange::<B, V, PAIRS, ITEMS>(keys, values, storage, to, striped);
            }
        }
    }
}

/// Each item `i` (key, and value with `PAIRS`) to slot `to(i)` of the exchanges, a warp barrier,
/// then item `i` from slot `from(i)`, and a warp barrier (the exchanges free again).
///
/// # Safety
/// The whole warp calls it; `to` gives every slot `from` reads, each once, all within the
/// exchanges; no lane reads or writes the exchanges between the caller's last barrier and this.
#[inline(always)]
unsafe fn exchange<B, V, const PAIRS: bool, const ITEMS: usize>(
    keys: &mut [B; ITEMS],
    values: &mut [V; ITEMS],
    storage: WarpRadixSortStorage<B::Slot, V>,
    to: impl Fn(usize) -> u32,
    from: impl Fn(usize) -> u32,
) where
    B: RadixBits,
    V: SharedValue,
{
    unrolled_for(ITEMS, |i| {
        // SAFETY: the caller's: a slot of the exchanges, this item's alone.
        unsafe {
            storage.keys.write_unchecked(to(i), keys[i].to_slot());
            if PAIRS {
                storage.values.write_unchecked(to(i), values[i]);
            }
        }
    });
    // SAFETY: the whole warp calls it.
    unsafe { warp_sync(u32::MAX) };
    unrolled_for(ITEMS, |i| {
        // SAFETY: written before the barrier (`to` covers `from`).
        unsafe {
            keys[i] = B::from_slot(storage.keys.read_unchecked(from(i)));
            if PAIRS {
                values[i] = storage.values.read_unchecked(from(i));
            }
        }
    });
    // SAFETY: the whole warp calls it: every read is done before the exchanges are written again.
    unsafe { warp_sync(u32::MAX) };
}

/// Rank the warp's blocked tile by `digit_of(i)` (below `2^BLOCKED_RADIX_BITS`), stably: the
/// blocked rank of [`block_radix_rank_blocked`](crate::block::block_radix_rank_blocked) with the
/// warp as the block. Counter layout as there with 32 threads: digit `d` is the low half of row
/// `d % W` when `d < W`, the high half of row `d - W` otherwise; lane `l`'s word of row `r` is
/// word `r * 32 + l`; lane `l` scans words `l * (W + 1) ..= l * (W + 1) + W` (a row of zeros
/// after the `W` rows makes the stride odd: the 32 lanes read 32 banks).
///
/// # Safety
/// The whole warp calls it; `counters` is this warp's, at least `32 * (W + 1)` words; every
/// digit below `2 * W` and the same at every call of `digit_of(i)`; `32 * ITEMS < 65536`.
#[inline(always)]
unsafe fn warp_rank_blocked<const ITEMS: usize>(
    digit_of: impl Fn(usize) -> u32,
    counters: SharedArray<u32>,
) -> [u32; ITEMS] {
    const W: u32 = BLOCKED_COUNTER_WORDS;
    const SPAN: u32 = W + 1;
    let lane = lane_id();
    let halves = counters.as_halves();
    let own = lane * SPAN;
    let half_of = |digit: u32| 2 * ((digit % W) * WARP_SIZE + lane) + digit / W;
    unrolled_for(SPAN as usize, |w| {
        // SAFETY: own + w < 32 * SPAN, the counters' length; read after the barrier.
        unsafe { counters.write_unchecked(own + w as u32, 0) };
    });
    // SAFETY: the whole warp calls it.
    unsafe { warp_sync(u32::MAX) };

    // Count: each item's place among the lane's earlier items of its digit, and one more.
    let mut counter = [0u32; ITEMS];
    let mut place = [0u32; ITEMS];
    unrolled_for(ITEMS, |i| {
        counter[i] = half_of(digit_of(i));
        // SAFETY: counter[i] < 2 * W * 32: this lane's counter of the digit, zeroed before the
        // barrier; no other lane touches it until the next barrier.
        unsafe {
            let count = halves.read_unchecked(counter[i]);
            place[i] = count as u32;
            halves.write_unchecked(counter[i], count + 1);
        }
    });
    // SAFETY: the whole warp calls it.
    unsafe { warp_sync(u32::MAX) };

    // Scan: each lane's SPAN consecutive words, both halves at once (neither carries into the
    // other: each sums to at most 32 * ITEMS < 65536).
    let mut sum = 0;
    unrolled_for(SPAN as usize, |w| {
        // SAFETY: as the zeroing's; every lane's counts are done (barrier above).
        sum += unsafe { counters.read_unchecked(own + w as u32) };
    });
    // SAFETY: the whole (full) warp calls it.
    let inclusive = unsafe { warp_inclusive_scan::<u32, Sum>(sum, WARP_SIZE) };
    // SAFETY: as above: every lane takes lane 31's inclusive sum, the warp's total.
    let total = unsafe { inclusive.shuffle_idx(WARP_SIZE - 1, WARP_SIZE, u32::MAX) };
    // The high halves (digits W..) come after every low half (digits ..W): their total.
    let mut next = inclusive - sum + ((total & 0xffff) << 16);
    unrolled_for(SPAN as usize, |w| {
        // SAFETY: as above; only this lane reads or writes its own words now.
        unsafe {
            let count = counters.read_unchecked(own + w as u32);
            counters.write_unchecked(own + w as u32, next);
            next += count;
        }
    });
    // SAFETY: the whole warp calls it.
    unsafe { warp_sync(u32::MAX) };

    let mut ranks = [0u32; ITEMS];
    unrolled_for(ITEMS, |i| {
        // SAFETY: as the count's; the scan's writes are done (barrier above).
        ranks[i] = unsafe { halves.read_unchecked(counter[i]) } as u32 + place[i];
    });
    ranks
}
