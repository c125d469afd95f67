//! Head flags of a tile: where an item differs from the one before it (CUB's
//! `BlockDiscontinuity::FlagHeads`), for tiles held in the *warp-striped* arrangement of
//! [`block_scan_warp_striped`](super::block_scan_warp_striped) (see [`super::load`]).
//!
//! The predecessor of a lane's first item in a row is the last item of the lane before it
//! (a shuffle up); lane 0's is lane 31's last item of the row before (a shuffle from lane 31);
//! lane 0's first row asks `before_warp` (the element before the warp's first: from global
//! memory, the previous warp's or tile's). No shared memory, no barrier.
//!
//! Unique (stream compaction) keeps the heads; run-length encoding starts a run at each.

use crate::thread::{WARP_SIZE, lane_id};
use crate::unroll::unrolled_for;
use crate::warp::Shuffle;

/// Head flags of this lane's items: bit `v` of entry `r` is set where item `(r, v)` is valid and
/// either has no predecessor or `differ(predecessor, item)`. Entries `ITEMS / VEC ..` are 0.
///
/// - `item(r, v)`: item `v` of row `r` of this lane (any value for invalid items);
/// - `valid(r, v)`: whether the item exists (false past the input's end; invalid items must
///   follow every valid one in tile order);
/// - `before_warp()`: the element before the warp's first item, or `None` at the input's start
///   (called by lane 0 only: it must not hold a warp collective).
///
/// - **Who calls:** every lane of the warp together (shuffles inside).
/// - **Result valid in:** the calling lane.
/// - **Example:** `VEC` 2, `ITEMS` 2, warp items `5 5 | 6 6 | 6 7 | ...` (lane 0: `5 5`, lane 1:
///   `6 6`), `before_warp` `None`, `differ` `!=`: lane 0 gets `0b01`, lane 1 `0b01`, lane 2
///   `0b10`.
///
/// # Safety
/// The whole warp calls it, with converged lanes.
#[inline(always)]
pub unsafe fn block_flag_heads_warp_striped<T: Shuffle, const VEC: usize, const ITEMS: usize>(
    item: impl Fn(usize, usize) -> T,
    valid: impl Fn(usize, usize) -> bool,
    before_warp: impl Fn() -> Option<T>,
    differ: impl Fn(T, T) -> bool,
) -> [u32; ITEMS] {
    let lane = lane_id();
    let mut heads = [0u32; ITEMS];
    let mut previous_row_last = item(0, VEC - 1);
    unrolled_for(ITEMS / VEC, |r| {
        let last = item(r, VEC - 1);
        // SAFETY: the whole warp calls it (the caller's contract); lane 0 gets its own value back.
        let from_left = unsafe { last.shuffle_up(1, WARP_SIZE, u32::MAX) };
        let from_row_before = if r > 0 {
            // SAFETY: as above; `r` is the same in every lane.
            Some(unsafe { previous_row_last.shuffle_idx(WARP_SIZE - 1, WARP_SIZE, u32::MAX) })
        } else {
            None
        };
        let mut before = if lane > 0 {
            Some(from_left)
        } else if r > 0 {
            from_row_before
        } else {
            before_warp()
        };
        let mut bits = 0;
        unrolled_for(VEC, |v| {
            let x = item(r, v);
            let head = match before {
                None => true,
                Some(p) => differ(p, x),
            };
            if head && valid(r, v) {
                bits |= 1 << v;
            }
            before = Some(x);
        });
        heads[r] = bits;
        previous_row_last = last;
    });
    heads
}

/// Tail flags of this lane's items from the tile's head flags (CUB's
/// `BlockDiscontinuity::FlagTails`): bit `v` of entry `r` is set where item `(r, v)` is the last
/// of its run, i.e. where the item after it starts a run. Entries `ITEMS / VEC ..` are 0; bits
/// of invalid items may be set (mask them with the tile's valid items).
///
/// - `heads`: this lane's head flags ([`block_flag_heads_warp_striped`]);
/// - `after_warp()`: whether the element after the warp's last item starts a run, `true` when
///   there is none (called by lane 31 only: it must not hold a warp collective; for the last
///   warp of a tile it reads the next tile's first element, from global memory).
///
/// The successor of a lane's last item in a row is the first item of the lane after it (a
/// shuffle down); lane 31's is lane 0's first item of the next row (a shuffle from lane 0).
///
/// - **Who calls:** every lane of the warp together (shuffles inside).
/// - **Result valid in:** the calling lane.
/// - **Example:** `VEC` 2, `ITEMS` 2, warp items `5 5 | 6 6 | 6 7 | ...`: heads `0b01`,
///   `0b01`, `0b10`; tails lane 0 `0b10`, lane 1 `0b00`, lane 2 `0b01` (and `0b10` where the item
///   after 7 differs from it).
///
/// # Safety
/// The whole warp calls it, with converged lanes.
#[inline(always)]
pub unsafe fn block_flag_tails_warp_striped<const VEC: usize, const ITEMS: usize>(
    heads: &[u32; ITEMS],
    after_warp: impl Fn() -> bool,
) -> [u32; ITEMS] {
    let lane = lane_id();
    let rows = ITEMS / VEC;
    let mut tails = [0u32; ITEMS];
    unrolled_for(rows, |r| {
        // SAFETY: the whole warp calls it (the caller's contract); lane 31 gets its own value.
        let from_right = unsafe { heads[r].shuffle_down(1, WARP_SIZE, u32::MAX) };
        let next_row = if r + 1 < rows {
            // SAFETY: as above; `r` is the same in every lane.
            unsafe { heads[r + 1].shuffle_idx(0, WARP_SIZE, u32::MAX) }
        } else {
            0
        };
        let after_last = if lane < WARP_SIZE - 1 {
            from_right & 1
        } else if r + 1 < rows {
            next_row & 1
        } else {
            after_warp() as u32
        };
        tails[r] = (heads[r] >> 1) | (after_last << (VEC - 1));
    });
    tails
}
