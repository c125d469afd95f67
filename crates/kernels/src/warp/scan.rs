//! Warp scans (Kogge-Stone over the lanes, with `shuffle_up`).
//!
//! ```text
//! lane:      0    1    2    3    4  ...
//! offset 1:  x0  x0+1 x1+2 x2+3 x3+4        lane i combines lane i-1 (if i >= 1)
//! offset 2:  x0  x0+1 x0+2 x0+3 x1+4        lane i combines lane i-2 (if i >= 2)
//! offset 4:  ...                            after log2(WARP_SIZE) steps: inclusive prefix
//! ```
//! The earlier lane's value is always the left operand, so `Op` need only be associative.

use super::shuffle::Shuffle;
use super::vote::warp_ballot;
use crate::op::ReduceOp;
use crate::thread::{WARP_SIZE, lane_id, lane_mask_below};

/// Inclusive scan of `value` over lanes `0..lanes`: lane `i` gets
/// `x0 ⊕ x1 ⊕ ... ⊕ xi`.
///
/// - **Result valid in:** every calling lane.
/// - **Partial warps:** `lanes` in `1..=WARP_SIZE`; lanes at or past it must not call.
/// - **Example:** lanes holding `1, 1, 1, ...` with `Sum` -> `1, 2, 3, ...`.
///
/// # Safety
/// Lanes `0..lanes` call it together with the same `lanes`.
#[inline(always)]
pub unsafe fn warp_inclusive_scan<T: Shuffle, Op: ReduceOp<T>>(value: T, lanes: u32) -> T {
    let mask = lane_mask_below(lanes);
    let lane = lane_id();
    let mut acc = value;
    let mut offset = 1;
    while offset < WARP_SIZE {
        // SAFETY: lanes 0..lanes call this together; lane - offset < lane, so every value used
        // comes from a calling lane.
        let earlier = unsafe { acc.shuffle_up(offset, WARP_SIZE, mask) };
        if lane >= offset {
            acc = Op::combine(earlier, acc);
        }
        offset *= 2;
    }
    acc
}

/// Exclusive scan of `value` over lanes `0..lanes`: lane `i` gets `x0 ⊕ ... ⊕ x(i-1)`, lane 0
/// gets `Op::identity()`. Also returns the warp's total (`x0 ⊕ ... ⊕ x(lanes-1)`).
///
/// - **Result valid in:** every calling lane (both values).
///
/// # Safety
/// As [`warp_inclusive_scan`].
#[inline(always)]
pub unsafe fn warp_exclusive_scan<T: Shuffle, Op: ReduceOp<T>>(value: T, lanes: u32) -> (T, T) {
    let mask = lane_mask_below(lanes);
    // SAFETY: forwarded from the caller.
    let inclusive = unsafe { warp_inclusive_scan::<T, Op>(value, lanes) };
    // SAFETY: as above; lane 0's read of itself is replaced by the identity.
    let (shifted, total) = unsafe {
        (
            inclusive.shuffle_up(1, WARP_SIZE, mask),
            inclusive.shuffle_idx(lanes - 1, WARP_SIZE, mask),
        )
    };
    let exclusive = if lane_id() == 0 { Op::identity() } else { shifted };
    (exclusive, total)
}

/// The value of lane `src_lane` (`< lanes`), in every lane `0..lanes`.
///
/// # Safety
/// Lanes `0..lanes` call it together with the same `src_lane` and `lanes`.
#[inline(always)]
pub unsafe fn warp_broadcast<T: Shuffle>(value: T, src_lane: u32, lanes: u32) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { value.shuffle_idx(src_lane, WARP_SIZE, lane_mask_below(lanes)) }
}

/// Segmented exclusive scan of a full warp: lane `i` holds `value`, the combination of a stretch
/// of items, and `head`, whether that stretch starts a segment (then `value` covers the stretch
/// from its last head on). Lane `i` gets the combination of the lanes' values from the last lane
/// before it with a head (or lane 0) to lane `i - 1` (the identity in lane 0); also returns the
/// warp's total from its last head on, and the ballot of `head` (bit `j`: lane `j` has a head;
/// "a lane before `i` has a head" is `heads & lane_mask_below(i) != 0`).
///
/// The heads go through one ballot, so that each Kogge-Stone step moves only the value (one
/// shuffle, no flag): lane `i` combines lane `i - d` while `d` does not reach past its segment's
/// first lane (Blelloch's segmented scan, "Prefix Sums and Their Applications", 1990, with the
/// segment's extent from the ballot instead of a carried flag). 7 shuffles and a ballot.
///
/// - **Result valid in:** every lane.
/// - **Example:** `Sum`, values `1` in every lane, heads in lanes 0 and 3: lanes 0..6 get
///   `0, 1, 2, 3, 1, 2`, the total is 29, the ballot `0b1001`.
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
pub unsafe fn warp_segmented_exclusive_scan<T: Shuffle, Op: ReduceOp<T>>(
    value: T,
    head: bool,
) -> (T, T, u32) {
    let lane = lane_id();
    // SAFETY: the whole warp calls it (the caller's contract).
    let heads = unsafe { warp_ballot(head, u32::MAX) };
    // The first lane of this lane's segment: its last head at or before it (0 when none, where
    // the scan starts anyway).
    let at_or_before = heads & lane_mask_below(lane + 1);
    let first = if at_or_before == 0 {
        0
    } else {
        31 - at_or_before.leading_zeros()
    };
    let reach = lane - first;
    let mut acc = value;
    let mut offset = 1;
    while offset < WARP_SIZE {
        // SAFETY: the whole warp calls this; values from lanes below `offset` are not used
        // (reach <= lane).
        let earlier = unsafe { acc.shuffle_up(offset, WARP_SIZE, u32::MAX) };
        if offset <= reach {
            acc = Op::combine(earlier, acc);
        }
        offset *= 2;
    }
    // SAFETY: as above; lane 0's read of itself is replaced by the identity.
    let (shifted, total) = unsafe {
        (
            acc.shuffle_up(1, WARP_SIZE, u32::MAX),
            acc.shuffle_idx(WARP_SIZE - 1, WARP_SIZE, u32::MAX),
        )
    };
    let exclusive = if lane == 0 { Op::identity() } else { shifted };
    (exclusive, total, heads)
}
