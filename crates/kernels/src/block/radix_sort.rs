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
//! - **Who calls:** every thread of a block of exactly [`RADIX_DIGITS`](gpu_primitives_abi::tuning::RADIX_DIGITS) threads.
//! - **Result valid in:** every thread (its items of the sorted tile, warp-striped).
//! - **Barriers:** per pass, the rank's and 2 (4 with values); `storage` may be reused on return.
//! - **Example:** 256 threads, 1 item each, `u32` keys `255 - p` at warp-striped position `p`, bits
//!   0..8: thread `t` (warp `t / 32`, lane `t % 32`) holds key `t` after the sort.

use super::radix_rank::{PAST_END_DIGIT, RadixRankStorage, block_radix_rank_warp_striped_by};
use crate::radix::RadixBits;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, lane_id, warp_id};
use crate::unroll::unrolled_for;
use gpu_primitives_abi::tuning::RADIX_BITS;

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

/// The tile position of this thread's item `i` in the warp-striped arrangement of `ITEMS` items
/// per thread: `(warp * ITEMS + i) * 32 + lane`.
#[inline(always)]
pub fn warp_striped_position<const ITEMS: usize>(i: usize) -> u32 {
    (warp_id() * ITEMS as u32 + i as u32) * WARP_SIZE + lane_id()
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
            block_radix_rank_warp_striped_by::<ITEMS>(
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
