//! Block radix sort: one tile of keys (and their values) ordered in shared memory by every digit
//! of a bit range, stably, from the lowest digit up (CUB's `BlockRadixSort`, here in the
//! warp-striped arrangement of [`block_load_warp_striped`](super::block_load_warp_striped)).
//!
//! Each pass ranks the tile's items by one digit of [`RADIX_BITS`] bits
//! ([`block_radix_rank_warp_striped_by`]), writes each key to its rank in shared memory as it is
//! ranked (its digit made from the key where the rank uses it) and reads the
//! tile back warp-striped, so that the next pass ranks the keys in the order this one left them
//! (the values follow through the same shared memory, after the keys). On return thread `t`'s
//! item `i` is the sorted tile's key at warp-striped position `(warp * ITEMS + i) * 32 + lane`:
//! each warp's stores of item `i` write 32 consecutive places (coalesced).
//!
//! Keys are given as their ordered bits ([`RadixKey::to_ordered`](crate::radix::RadixKey), inverted
//! for a descending sort): the sort orders unsigned integers.
//!
//! - **Who calls:** every thread of a block of exactly [`RADIX_DIGITS`] threads.
//! - **Result valid in:** every thread (its items of the sorted tile, warp-striped).
//! - **Barriers:** per pass, the rank's and 2 (4 with values); `storage` may be reused on return.
//! - **Example:** 256 threads, 1 item each, `u32` keys `255 - p` at warp-striped position `p`, bits
//!   0..8: thread `t` (warp `t / 32`, lane `t % 32`) holds key `t` after the sort.

use super::exchange::{blocked_slot, padded_slot, warp_striped_position, warp_striped_slots};
use super::radix_rank::{
    BlockedRankStorage, PAST_END_DIGIT, RadixRankStorage, block_radix_rank_blocked,
    block_radix_rank_warp_striped_by,
};
use crate::radix::RadixBits;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::unroll::unrolled_for;
use gpu_primitives_abi::layout::{BLOCKED_RADIX_BITS, RADIX_BITS, RADIX_DIGITS};

/// Shared memory of [`block_radix_sort_warp_striped`].
#[derive(Clone, Copy)]
pub struct BlockRadixSortStorage<S, V> {
    /// The rank's.
    pub rank: RadixRankStorage,
    /// `block_dim() * ITEMS` slots: the keys between passes.
    pub keys: SharedArray<S>,
    /// `block_dim() * ITEMS` values; may be the same bytes as `keys` (used after them).
    pub values: SharedArray<V>,
}

/// Sort the tile's first `valid` items (see the [module docs](self)) by bits
/// `begin_bit .. end_bit` of their ordered bits: `keys[i]` (and `values[i]` with `PAIRS`) is
/// the item at warp-striped position [`warp_striped_position`]`(i)` on entry, and the sorted
/// tile's item at the same position on return (items past `valid` are left as they were in
/// both). An empty bit range leaves the tile in its order.
///
/// # Safety
/// Every thread of the block calls it with the same `valid` and bit range; `block_dim() ==
/// RADIX_DIGITS`; `valid <= block_dim() * ITEMS`; `begin_bit <= end_bit <=` the bits of `B`;
/// `storage` is this block's, its rank storage as
/// [`block_radix_rank_warp_striped`](super::block_radix_rank_warp_striped) needs and `keys` /
/// `values` at least `block_dim() * ITEMS` long, apart from the rank's storage.
#[inline(always)]
pub unsafe fn block_radix_sort_warp_striped<B, V, const PAIRS: bool, const ITEMS: usize>(
    keys: &mut [B; ITEMS],
    values: &mut [V; ITEMS],
    valid: u32,
    (begin_bit, end_bit): (u32, u32),
    storage: BlockRadixSortStorage<B::Slot, V>,
) where
    B: RadixBits,
    V: SharedValue,
{
    let passes = (end_bit - begin_bit).div_ceil(RADIX_BITS).max(1);
    for pass in 0..passes {
        let shift = begin_bit + pass * RADIX_BITS;
        let bits = RADIX_BITS.min(end_bit - shift);
        let back = |i: usize| warp_striped_position::<ITEMS>(i);
        // Each digit made from its key where the rank uses it, and each key stored at its rank
        // as soon as it is known: neither digits nor (keys alone) ranks stay in registers.
        let digit = |i: usize| {
            if warp_striped_position::<ITEMS>(i) < valid {
                keys[i].digit(shift, bits)
            } else {
                PAST_END_DIGIT
            }
        };
        let mut ranks = [0u32; ITEMS];
        // SAFETY: the whole block (of RADIX_DIGITS threads) calls it with its own storage; each
        // key's store is at its rank, below `valid` (see the closure).
        unsafe {
            block_radix_rank_warp_striped_by::<RADIX_DIGITS, ITEMS>(
                digit,
                valid,
                storage.rank,
                |_| {},
                |i, rank| {
                    if rank < valid {
                        // Ranks of valid items are distinct and below `valid`, within `keys`; the
                        // exchange is not the rank's storage, and the last pass's reads ended at
                        // its final barrier (the enclosing block's SAFETY).
                        storage.keys.write_unchecked(rank, keys[i].to_slot());
                    }
                    if PAIRS {
                        ranks[i] = rank;
                    }
                },
            )
        };
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        unrolled_for(ITEMS, |i| {
            if back(i) < valid {
                // SAFETY: every position below `valid` was written before the barrier.
                keys[i] = B::from_slot(unsafe { storage.keys.read_unchecked(back(i)) });
            }
        });
        if PAIRS {
            // SAFETY: the whole block calls it: every key was read (the values may share them).
            unsafe { block_barrier() };
            unrolled_for(ITEMS, |i| {
                if ranks[i] < valid {
                    // SAFETY: as the keys'.
                    unsafe { storage.values.write_unchecked(ranks[i], values[i]) };
                }
            });
            // SAFETY: the whole block calls it.
            unsafe { block_barrier() };
            unrolled_for(ITEMS, |i| {
                if back(i) < valid {
                    // SAFETY: as the keys'.
                    values[i] = unsafe { storage.values.read_unchecked(back(i)) };
                }
            });
        }
        // Every read of this pass is done before the next pass (or the caller) writes again.
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
    }
}

/// Shared memory of [`block_radix_sort_blocked`].
#[derive(Clone, Copy)]
pub struct BlockedSortStorage<S> {
    /// The rank's.
    pub rank: BlockedRankStorage,
    /// `n + n / 32` slots for a tile of `n = block_dim() * ITEMS` keys: the keys between passes,
    /// one slot of padding after every 32.
    pub keys: SharedArray<S>,
}

/// Sort a whole tile of keys by bits `begin_bit .. end_bit` of their ordered bits, stably, in
/// passes of [`BLOCKED_RADIX_BITS`] bits ranked by per-thread counters
/// ([`block_radix_rank_blocked`]; CUB's `BlockRadixSort`). `keys[i]` is the key at warp-striped
/// position [`warp_striped_position`]`(i)` on entry (as loaded, coalesced) and the sorted
/// tile's key there on return (as stored, coalesced). In between the tile is *blocked* (thread
/// `t`'s item `i` is tile item `t * ITEMS + i`): the arrangement whose order the rank's
/// per-thread counters keep. A partial tile of `valid` keys is sorted by padding it with
/// `B::MAX` past its end: the padding's digits are the last in every pass and it comes last in
/// tile order, so it sorts after every valid key and the first `valid` places hold the valid
/// keys sorted. Fewer instructions a key than [`block_radix_sort_warp_striped`]'s rank by votes,
/// over more passes, and no test per item (docs/performance.md); keys alone.
///
/// - **Who calls:** every thread of a block of `BLOCK` threads.
/// - **Result valid in:** every thread (its items of the sorted tile, warp-striped).
/// - **Barriers:** 1, and per pass the rank's and 1; `storage` may be reused after one more.
/// - **Example:** 256 threads, 1 key each, `u32` keys `255 - p` at warp-striped position `p`,
///   bits 0..8: thread `t` holds key `t` after the sort.
///
/// # Safety
/// Every thread of the block calls it with the same bit range; `block_dim() == BLOCK`, a
/// multiple of 32; `BLOCK * ITEMS < 65536`; `begin_bit <=
/// end_bit <=` the bits of `B`; `storage` is this block's, as [`block_radix_rank_blocked`] needs,
/// `keys` at least `n + n / 32` slots for `n = block_dim() * ITEMS`, apart from the rank's.
#[inline(always)]
pub unsafe fn block_radix_sort_blocked<B: RadixBits, const BLOCK: u32, const ITEMS: usize>(
    keys: &mut [B; ITEMS],
    (begin_bit, end_bit): (u32, u32),
    storage: BlockedSortStorage<B::Slot>,
) {
    // The padded slot of warp-striped position (warp * ITEMS + i) * 32 + lane.
    let striped_slot = warp_striped_slots::<ITEMS>();
    // Warp-striped to blocked, through the exchange.
    unrolled_for(ITEMS, |i| {
        // SAFETY: a padded slot of the tile, within the exchange.
        unsafe { storage.keys.write_unchecked(striped_slot(i), keys[i].to_slot()) };
    });
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    // SAFETY: every slot of the tile was written before the barrier.
    unsafe { read_keys(keys, storage.keys, blocked_slot::<ITEMS>) };
    let passes = (end_bit - begin_bit).div_ceil(BLOCKED_RADIX_BITS).max(1);
    for pass in 0..passes {
        let shift = begin_bit + pass * BLOCKED_RADIX_BITS;
        let bits = BLOCKED_RADIX_BITS.min(end_bit - shift);
        // SAFETY: the whole block calls it with its own storage. Each store is at a rank of
        // the tile: within the exchange, whose reads (the pass before's, or the
        // rearrangement's) ended at the rank's first barrier.
        unsafe {
            block_radix_rank_blocked::<BLOCK, ITEMS>(
                |i| keys[i].digit(shift, bits),
                storage.rank,
                |i, rank| storage.keys.write_unchecked(padded_slot(rank), keys[i].to_slot()),
            )
        };
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        // Back blocked for the next pass; warp-striped after the last.
        // SAFETY: every slot of the tile was written before the barrier.
        unsafe {
            if pass + 1 < passes {
                read_keys(keys, storage.keys, blocked_slot::<ITEMS>);
            } else {
                read_keys(keys, storage.keys, striped_slot);
            }
        }
    }
}

/// Each key `i` from slot `slot(i)` of the exchange.
///
/// # Safety
/// Every slot read was written, and a barrier separates those writes from these reads.
#[inline(always)]
unsafe fn read_keys<B: RadixBits, const ITEMS: usize>(
    keys: &mut [B; ITEMS],
    exchange: SharedArray<B::Slot>,
    slot: impl Fn(usize) -> u32,
) {
    unrolled_for(ITEMS, |i| {
        // SAFETY: the caller's.
        keys[i] = B::from_slot(unsafe { exchange.read_unchecked(slot(i)) });
    });
}
