//! Block radix rank: where each item of a tile goes when the tile is ordered by one digit,
//! stably. Two ranks: by warp votes over a warp-striped tile (CUB's
//! `BlockRadixRankMatchEarlyCounts`; below), and by per-thread counters over a blocked tile
//! ([`block_radix_rank_blocked`], CUB's `BlockRadixRank`: fewer instructions a key, over digits
//! of fewer bits).
//!
//! The tile is held *warp-striped*: warp `w`'s item `i` in lane `l` is tile item
//! `(w * ITEMS + i) * 32 + l`. Counts come first: each item adds one to its warp's counter of
//! its digit (a shared-memory atomic), and one thread per digit sums the warps' counters into
//! the digit's count, which it hands out at once (the onesweep pass publishes it for the tiles
//! after, before any item is ranked), then a block scan of the counts gives where each digit
//! starts in the tile and each warp's counter becomes where its first item of the digit goes.
//! Then each warp ranks its items in order: for item `i`, [`warp_match_bits`] finds the lanes
//! with the same digit (its peers; one ballot per bit of the digit, faster than `match.any` on
//! the H100), the highest peer takes their number of places from the warp's counter of the
//! digit with one shared-memory atomic, and each peer's rank is the counter's old value plus its
//! peers in lower lanes: items of one digit keep their tile order.
//!
//! A partial tile's items past its end take the last digit, [`PAST_END_DIGIT`] (as in CUB, rather
//! than one more vote per item for a marker): they come last in tile order, so they rank after
//! every valid item, and the last digit's count leaves them out.

use crate::block::{BlockScanStorage, block_exclusive_scan};
use crate::op::Sum;
use crate::shared::SharedArray;
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, lane_id, lane_mask_below, thread_idx, warp_id};
use crate::unroll::unrolled_for;
use crate::warp::{Shuffle, warp_inclusive_scan, warp_match_bits};
use gpu_primitives_abi::layout::{BLOCKED_COUNTER_WORDS, BLOCKED_RADIX_BITS, RADIX_BITS, RADIX_DIGITS};

/// The digit of a partial tile's items past its end: the last, so that they rank after every
/// valid item (see the [module docs](self)).
pub const PAST_END_DIGIT: u32 = RADIX_DIGITS - 1;

/// Shared memory of [`block_radix_rank_warp_striped`].
#[derive(Clone, Copy)]
pub struct RadixRankStorage {
    /// `warps * RADIX_DIGITS` counters: each warp's per digit.
    pub warp_counts: SharedArray<u32>,
    /// For the block scan of the digits' counts.
    pub scan: BlockScanStorage<u32>,
}

/// What [`block_radix_rank_warp_striped`] returns to each thread.
#[derive(Clone, Copy)]
pub struct RadixRanks<const ITEMS: usize> {
    /// Each item's place in the tile ordered by digit: below `valid` for the valid items, at or
    /// past it for the items past the end.
    pub ranks: [u32; ITEMS],
    /// Items of digit `thread_idx()` in the tile.
    pub digit_count: u32,
    /// Where digit `thread_idx()`'s items start in the tile.
    pub digit_start: u32,
}

/// Rank the tile's first `valid` items by `digits` (see the [module docs](self)). `digits[i]`
/// is item `i`'s digit, below [`RADIX_DIGITS`]; an item past the first `valid` (warp-striped
/// position `valid` or more) has [`PAST_END_DIGIT`] and is counted nowhere. `on_counts` is
/// called by every thread with its digit's count as soon as it is known, before the block scan
/// and before any item is ranked (the onesweep pass publishes it there).
///
/// - **Who calls:** every thread of a block of exactly [`RADIX_DIGITS`] threads (one per digit).
/// - **Result valid in:** every thread (its items' ranks; its digit's count and start).
/// - **Barriers:** 3 (and the block scan's); `storage` may be reused after one more.
/// - **Example:** 256 threads, 1 item each, digit `255 - t` for thread `t`, `valid` 256: thread
///   `t` gets rank `255 - t`, and every digit count 1, digit `d` starting at `d`.
///
/// # Safety
/// Every thread of the block calls it with the same `valid`, at most `block_dim() * ITEMS`;
/// `block_dim() == RADIX_DIGITS`; every digit is below [`RADIX_DIGITS`], and
/// [`PAST_END_DIGIT`] past the first `valid` items; `storage` is this block's, `warp_counts` at
/// least `8 * RADIX_DIGITS` long.
#[inline(always)]
pub unsafe fn block_radix_rank_warp_striped<const ITEMS: usize>(
    digits: &[u32; ITEMS],
    valid: u32,
    storage: RadixRankStorage,
    on_counts: impl FnOnce(u32),
) -> RadixRanks<ITEMS> {
    let mut ranks = [0u32; ITEMS];
    // SAFETY: the caller's guarantees, with digits[i] as item i's digit.
    let digit = unsafe {
        block_radix_rank_warp_striped_by::<RADIX_DIGITS, ITEMS>(
            |i| digits[i],
            valid,
            storage,
            on_counts,
            |i, rank| ranks[i] = rank,
        )
    };
    RadixRanks {
        ranks,
        digit_count: digit.count,
        digit_start: digit.start,
    }
}

/// Thread `t`'s digit in a tile ranked by [`block_radix_rank_warp_striped_by`] (a thread past
/// the last digit, `t >= RADIX_DIGITS`, gets a count of 0 and the tile's length as start).
#[derive(Clone, Copy)]
pub struct DigitInTile {
    /// Items of digit `thread_idx()` in the tile.
    pub count: u32,
    /// Where digit `thread_idx()`'s items start in the tile.
    pub start: u32,
}

/// Whether thread `t` of a block of `BLOCK` threads owns a digit (`t < RADIX_DIGITS`): a
/// constant `true` for a block of [`RADIX_DIGITS`] threads, so that such a block tests nothing.
#[inline(always)]
pub fn owns_digit<const BLOCK: u32>(t: u32) -> bool {
    BLOCK == RADIX_DIGITS || t < RADIX_DIGITS
}

/// [`block_radix_rank_warp_striped`] with item `i`'s digit from `digit_of(i)` and its rank handed
/// to `on_rank(i, rank)` as soon as it is known, in item order, instead of an array of each: a
/// caller that stores each item at its rank at once (the onesweep pass of keys alone) keeps no
/// ranks in registers (at 20 items a thread, 20 registers fewer). The block is `BLOCK` threads,
/// [`RADIX_DIGITS`] or more (CUB's onesweep passes run 384): thread `t < RADIX_DIGITS` owns digit
/// `t`, the others only rank their items.
///
/// - **Who calls, result, barriers:** as [`block_radix_rank_warp_striped`]; the ranks arrive
///   through `on_rank` after the last barrier, the digit's count and start in every thread that
///   owns one ([`owns_digit`]; `on_counts` is called by those only).
///
/// # Safety
/// As [`block_radix_rank_warp_striped`], with `digit_of(i)` as `digits[i]` (the same value at
/// every call), a block of `BLOCK` threads (a multiple of 32, at least [`RADIX_DIGITS`], at
/// most 1024) and `warp_counts` at least `BLOCK / 32 * RADIX_DIGITS` long.
#[inline(always)]
pub unsafe fn block_radix_rank_warp_striped_by<const BLOCK: u32, const ITEMS: usize>(
    digit_of: impl Fn(usize) -> u32,
    valid: u32,
    storage: RadixRankStorage,
    on_counts: impl FnOnce(u32),
    mut on_rank: impl FnMut(usize, u32),
) -> DigitInTile {
    const { assert!(BLOCK >= RADIX_DIGITS && BLOCK.is_multiple_of(WARP_SIZE) && BLOCK <= 1024) };
    let warps = (BLOCK / WARP_SIZE) as usize;
    let t = thread_idx();
    let owner = owns_digit::<BLOCK>(t);
    let lane = lane_id();
    let row = RADIX_DIGITS;
    let counts = storage.warp_counts.slice(warp_id() * row, row);
    // Thread t < RADIX_DIGITS owns column t of the counters (digit t in every warp's row). The
    // number of warps is a constant, so that the loops over them unroll: as loops they were a
    // quarter of the onesweep pass's instructions (H100, Nsight Compute).
    let column = |w: usize| w as u32 * row + t;
    if owner {
        unrolled_for(warps, |w| {
            // SAFETY: column(w) < warps * row, the counters' length; read after the barrier
            // below.
            unsafe { storage.warp_counts.write_unchecked(column(w), 0) };
        });
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };

    // Count: each item adds one to its warp's counter of its digit (an item past the end too,
    // taken off the last digit's count below).
    unrolled_for(ITEMS, |i| {
        // SAFETY: digit_of(i) < RADIX_DIGITS == row: within this warp's counters, zeroed before
        // the barrier.
        unsafe { counts.atomic_add_unchecked(digit_of(i), 1) };
    });
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };

    // Thread t owns digit t: its count over the warps, handed out before any item is ranked.
    let mut digit_count = 0;
    if owner {
        unrolled_for(warps, |w| {
            // SAFETY: as above; every warp's adds are done (barrier above).
            digit_count += unsafe { storage.warp_counts.read_unchecked(column(w)) };
        });
        if t == PAST_END_DIGIT {
            digit_count -= BLOCK * ITEMS as u32 - valid;
        }
        on_counts(digit_count);
    }
    // The last digit's start does not depend on its count: the items past the end rank after
    // it, from `valid` on. Threads past the last digit add nothing.
    let mut start = [digit_count];
    // SAFETY: the whole block calls it with its own storage.
    unsafe { block_exclusive_scan::<u32, Sum, 1>(&mut start, storage.scan) };
    // Each warp's counter of digit t becomes the tile place of that warp's first item of it.
    let mut next = start[0];
    // (Read again rather than kept from the sum: kept, they spilled at 80 registers.)
    if owner {
        unrolled_for(warps, |w| {
            // SAFETY: as above; only this thread reads or writes column t.
            unsafe {
                let count = storage.warp_counts.read_unchecked(column(w));
                storage.warp_counts.write_unchecked(column(w), next);
                next += count;
            }
        });
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };

    // Rank: the peers' leader takes their places from the warp's counter of their digit.
    unrolled_for(ITEMS, |i| {
        let digit = digit_of(i);
        // SAFETY: the whole (full) warp runs this loop together.
        let peers = unsafe { warp_match_bits::<RADIX_BITS>(digit, u32::MAX) };
        let leader = WARP_SIZE - 1 - peers.leading_zeros();
        let mut first = 0;
        if lane == leader {
            // SAFETY: digit < RADIX_DIGITS == row: within this warp's counters, set before the
            // barrier; only this warp's lanes add to them.
            first = unsafe { counts.atomic_fetch_add_unchecked(digit, peers.count_ones()) };
        }
        // SAFETY: the whole warp calls it; the leader is one of its lanes.
        let first = unsafe { first.shuffle_idx(leader, WARP_SIZE, u32::MAX) };
        on_rank(i, first + (peers & lane_mask_below(lane)).count_ones());
    });
    DigitInTile {
        count: digit_count,
        start: start[0],
    }
}

/// Digits of [`block_radix_rank_blocked`]: `2^BLOCKED_RADIX_BITS`.
pub const BLOCKED_DIGITS: u32 = 1 << BLOCKED_RADIX_BITS;

/// Shared memory of [`block_radix_rank_blocked`].
#[derive(Clone, Copy)]
pub struct BlockedRankStorage {
    /// `block_dim() * (BLOCKED_COUNTER_WORDS + 1)` words: each thread's counters, two 16-bit
    /// counters a word (see [`block_radix_rank_blocked`]).
    pub counters: SharedArray<u32>,
    /// For the block scan of the threads' counter sums.
    pub scan: BlockScanStorage<u32>,
}

/// Rank a tile held in the *blocked* arrangement (thread `t`'s item `i` is tile item
/// `t * ITEMS + i`) by a digit of [`BLOCKED_RADIX_BITS`] bits, stably, with per-thread counters
/// (CUB's `BlockRadixRank`; Merrill and Grimshaw, "High Performance and Scalable Radix Sorting",
/// 2011): each thread counts its own items' digits, in order, in counters no other thread
/// touches (a 16-bit load, an add and a store an item: no votes, no atomics), which also gives
/// each item its place among the thread's earlier items of its digit; one block scan of the
/// counters in digit-major order (every thread's counter of digit 0, then of digit 1, ...) turns
/// each counter into where the thread's first item of the digit goes; an item's rank is that
/// plus its place. Items of one digit keep their tile order.
///
/// The counters are 16-bit, two a word: digit `d` is the low half of row `d % W` when `d < W`,
/// the high half of row `d - W` otherwise (`W` = [`BLOCKED_COUNTER_WORDS`]); thread `t`'s word
/// of row `r` is word `r * BLOCK + t`, so that a warp's lanes count in consecutive words (no
/// bank conflict). A row of zeros follows the `W` rows, and thread `t` scans words
/// `t * (W + 1) ..= t * (W + 1) + W` (both halves at once, the low halves' total then added to
/// every high half): an odd stride, so that a warp's lanes read 32 banks (CUB's layout).
///
/// `digit_of(i)` is item `i`'s digit, below [`BLOCKED_DIGITS`]; items past a partial tile's end
/// take the last digit and, being last in tile order, rank after every valid item. Each rank
/// is handed to `on_rank(i, rank)` in item order after the last barrier.
///
/// - **Who calls:** every thread of a block of `BLOCK` threads.
/// - **Result valid in:** every thread (its items' ranks, through `on_rank`).
/// - **Barriers:** 4; `storage` may be reused after one more.
/// - **Example:** 256 threads, 1 item each, 4-bit digits, digit `15 - t % 16` for thread `t`:
///   thread `t`'s rank is `(15 - t % 16) * 16 + t / 16`.
///
/// # Safety
/// Every thread of the block calls it; `block_dim() == BLOCK`, a multiple of 32; `BLOCK *
/// ITEMS` is below 65536 (the counters are 16-bit); every digit is
/// below [`BLOCKED_DIGITS`] and the same at every call of `digit_of(i)`; `storage` is this
/// block's, `counters` at least `BLOCK * (BLOCKED_COUNTER_WORDS + 1)` words, apart from the
/// scan's slots (one a warp).
#[inline(always)]
pub unsafe fn block_radix_rank_blocked<const BLOCK: u32, const ITEMS: usize>(
    digit_of: impl Fn(usize) -> u32,
    storage: BlockedRankStorage,
    mut on_rank: impl FnMut(usize, u32),
) {
    const W: u32 = BLOCKED_COUNTER_WORDS;
    // Each thread scans W + 1 consecutive words: the W rows of counters and one row of zeros
    // after them, so that a warp's lanes, W + 1 words apart, read 32 banks.
    const SPAN: u32 = W + 1;
    let t = thread_idx();
    let counters = storage.counters;
    let halves = counters.as_halves();
    let own = t * SPAN;
    // Thread t's half of a digit: row `digit % W`, column t, the half `digit / W`.
    let half_of = |digit: u32| 2 * ((digit % W) * BLOCK + t) + digit / W;
    unrolled_for(SPAN as usize, |w| {
        // SAFETY: own + w < BLOCK * (W + 1), the counters' length; read after the barrier.
        unsafe { counters.write_unchecked(own + w as u32, 0) };
    });
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };

    // Count: each item's place among the thread's earlier items of its digit, and one more.
    let mut counter = [0u32; ITEMS];
    let mut place = [0u32; ITEMS];
    unrolled_for(ITEMS, |i| {
        counter[i] = half_of(digit_of(i));
        // SAFETY: counter[i] < 2 * W * BLOCK: this thread's counter of the digit, zeroed before
        // the barrier; no other thread touches it until the next barrier.
        unsafe {
            let count = halves.read_unchecked(counter[i]);
            place[i] = count as u32;
            halves.write_unchecked(counter[i], count + 1);
        }
    });
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };

    // Scan: each thread's W + 1 consecutive words, both halves at once (no half carries into
    // the other: each sums to at most BLOCK * ITEMS < 65536).
    let mut sum = 0;
    unrolled_for(SPAN as usize, |w| {
        // SAFETY: as the zeroing's; every thread's counts are done (barrier above).
        sum += unsafe { counters.read_unchecked(own + w as u32) };
    });
    // SAFETY: the whole (full) warp calls it.
    let inclusive = unsafe { warp_inclusive_scan::<u32, Sum>(sum, WARP_SIZE) };
    let slots = storage.scan.slots();
    if lane_id() == WARP_SIZE - 1 {
        // SAFETY: one slot a warp, within the scan's slots; read after the barrier.
        unsafe { slots.write_unchecked(warp_id(), inclusive) };
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    let (mut before, mut total) = (inclusive - sum, 0);
    unrolled_for((BLOCK / WARP_SIZE) as usize, |w| {
        // SAFETY: every warp's slot was written before the barrier.
        let warp_total = unsafe { slots.read_unchecked(w as u32) };
        if (w as u32) < warp_id() {
            before += warp_total;
        }
        total += warp_total;
    });
    // The high halves (digits W..) come after every low half (digits ..W): their totals' sum.
    let mut next = before + ((total & 0xffff) << 16);
    unrolled_for(SPAN as usize, |w| {
        // SAFETY: as above; only this thread reads or writes its own words now.
        unsafe {
            let count = counters.read_unchecked(own + w as u32);
            counters.write_unchecked(own + w as u32, next);
            next += count;
        }
    });
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };

    unrolled_for(ITEMS, |i| {
        // SAFETY: as the count's; the scan's writes are done (barrier above).
        let start = unsafe { halves.read_unchecked(counter[i]) };
        on_rank(i, start as u32 + place[i]);
    });
}
