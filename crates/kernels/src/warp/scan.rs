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
