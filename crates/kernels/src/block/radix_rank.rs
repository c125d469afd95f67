//! Block radix rank: where each item of a tile goes when the tile is ordered by one digit,
//! stably (CUB's `BlockRadixRankMatch`).
//!
//! The tile is held *warp-striped*: warp `w`'s item `i` in lane `l` is tile item
//! `(w * ITEMS + i) * 32 + l`. Each warp ranks its items in that order against a counter per
//! digit of its own: for item `i`, [`warp_match_bits`] finds the lanes with the same digit (its
//! peers; one ballot per bit of the digit and one for the tile's end, faster than `match.any`
//! on the H100), the highest peer adds their number to the warp's counter for the digit with
//! one shared-memory atomic, and each peer's rank in the warp is the counter's old value plus its
//! peers in lower lanes. Then one thread per digit turns the warps' counts into each warp's
//! offset within the digit and the digit's count; a block scan of the counts gives where each
//! digit starts in the tile. An item's rank is its digit's start, plus its warp's offset within
//! the digit, plus its rank in the warp: items of one digit keep their tile order.

use crate::block::{BlockScanStorage, block_exclusive_scan};
use crate::op::Sum;
use crate::shared::SharedArray;
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, lane_id, lane_mask_below, thread_idx, warp_id};
use crate::unroll::unrolled_for;
use crate::warp::{Shuffle, warp_match_bits};
use gpu_primitives_abi::tuning::{RADIX_BITS, RADIX_DIGITS};

/// Shared memory of [`block_radix_rank_warp_striped`].
#[derive(Clone, Copy)]
pub struct RadixRankStorage {
    /// `warps * (RADIX_DIGITS + 1)` counters: each warp's per digit, and its items past the
    /// input's end.
    pub warp_counts: SharedArray<u32>,
    /// `RADIX_DIGITS`: where each digit's items start in the tile.
    pub digit_starts: SharedArray<u32>,
    /// For the block scan of the digits' counts.
    pub scan: BlockScanStorage<u32>,
}

/// What [`block_radix_rank_warp_striped`] returns to each thread.
#[derive(Clone, Copy)]
pub struct RadixRanks<const ITEMS: usize> {
    /// Each item's place in the tile ordered by digit (`u32::MAX` for items past the end).
    pub ranks: [u32; ITEMS],
    /// Items of digit `thread_idx()` in the tile.
    pub digit_count: u32,
    /// Where digit `thread_idx()`'s items start in the tile.
    pub digit_start: u32,
}

/// Rank the tile's items by `digits` (see the [module docs](self)). `digits[i]` is item `i`'s
/// digit, below [`RADIX_DIGITS`], or `RADIX_DIGITS` for an item past the input's end (ranked
/// nowhere, counted nowhere). `on_counts` is called by every thread with its digit's count as
/// soon as it is known, before the block scan (the onesweep pass publishes it there).
///
/// - **Who calls:** every thread of a block of exactly [`RADIX_DIGITS`] threads (one per digit).
/// - **Result valid in:** every thread (its items' ranks; its digit's count and start).
/// - **Barriers:** 3 (and the block scan's); `storage` may be reused after one more.
/// - **Example:** 256 threads, 1 item each, digit `255 - t` for thread `t`: thread `t` gets rank
///   `255 - t`, and every digit count 1, digit `d` starting at `d`.
///
/// # Safety
/// Every thread of the block calls it; `block_dim() == RADIX_DIGITS`; `storage` is this
/// block's, `warp_counts` at least `8 * (RADIX_DIGITS + 1)` long and `digit_starts`
/// `RADIX_DIGITS`.
#[inline(always)]
pub unsafe fn block_radix_rank_warp_striped<const ITEMS: usize>(
    digits: &[u32; ITEMS],
    storage: RadixRankStorage,
    on_counts: impl FnOnce(u32),
) -> RadixRanks<ITEMS> {
    let t = thread_idx();
    let lane = lane_id();
    let row = RADIX_DIGITS + 1;
    let counts = storage.warp_counts.slice(warp_id() * row, row);
    let warps = block_dim() / WARP_SIZE;
    let mut c = t;
    while c < warps * row {
        // SAFETY: c < warps * row, the counters' length; read after the barrier below.
        unsafe { storage.warp_counts.write(c, 0) };
        c += block_dim();
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };

    let mut ranks = [0u32; ITEMS];
    unrolled_for(ITEMS, |i| {
        let digit = digits[i];
        // SAFETY: the whole (full) warp runs this loop together.
        let peers = unsafe { warp_match_bits::<{ RADIX_BITS + 1 }>(digit, u32::MAX) };
        let leader = WARP_SIZE - 1 - peers.leading_zeros();
        let mut before = 0;
        if lane == leader && digit < RADIX_DIGITS {
            // SAFETY: digit < RADIX_DIGITS < row: within this warp's counters, zeroed before
            // the barrier; only this warp's lanes add to them.
            before = unsafe { counts.atomic_fetch_add_unchecked(digit, peers.count_ones()) };
        }
        // SAFETY: the whole warp calls it; the leader is one of its lanes.
        let before = unsafe { before.shuffle_idx(leader, WARP_SIZE, u32::MAX) };
        ranks[i] = before + (peers & lane_mask_below(lane)).count_ones();
    });
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };

    // Thread t owns digit t: each warp's count becomes the digit's items in the warps before it.
    let mut digit_count = 0;
    for w in 0..warps {
        // SAFETY: w * row + t < warps * row; every warp's adds are done (barrier above).
        unsafe {
            let slot = w * row + t;
            let count = storage.warp_counts.read(slot);
            storage.warp_counts.write(slot, digit_count);
            digit_count += count;
        }
    }
    on_counts(digit_count);
    let mut start = [digit_count];
    // SAFETY: the whole block calls it with its own storage.
    unsafe { block_exclusive_scan::<u32, Sum, 1>(&mut start, storage.scan) };
    // SAFETY: t < RADIX_DIGITS; read after the barrier below.
    unsafe { storage.digit_starts.write(t, start[0]) };
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };

    unrolled_for(ITEMS, |i| {
        let digit = digits[i];
        ranks[i] = if digit < RADIX_DIGITS {
            // SAFETY: written before the barrier; digit < RADIX_DIGITS.
            unsafe { storage.digit_starts.read(digit) + counts.read(digit) + ranks[i] }
        } else {
            u32::MAX
        };
    });
    RadixRanks {
        ranks,
        digit_count,
        digit_start: start[0],
    }
}
