//! Warp reductions.
//!
//! [`warp_reduce`] uses `shuffle_down` (the reduction lesson's step 2); the result lands in lane 0.
//! Offsets grow, so that every lane always holds a run of consecutive lanes, in order:
//! ```text
//! lane:    0   1   2   3   4   5   6   7  ...  31
//! offset  1: lane i = lane i + lane i+1    (lane i holds lanes i..i+1)
//! offset  2: lane i = lane i + lane i+2    (lane i holds lanes i..i+3)
//! ...
//! offset 16: lane 0 holds lanes 0..31, the whole warp's reduction
//! ```
//! (The lesson's falling offsets, 16 then 8 ..., pair lane 0 with lane 16 first: the same sum,
//! but the operands out of order, wrong for a non-commutative operator.)
//! [`warp_reduce_all`] uses the butterfly `shuffle_xor` (puzzle 26): after the same
//! `log2(WARP_SIZE)` steps every lane holds the result. Neither needs shared memory or a barrier.

use super::shuffle::Shuffle;
use crate::op::{ReduceOp, Sum};
use crate::thread::{WARP_SIZE, lane_id, lane_mask_below};

/// Reduce `value` over the first `lanes` lanes of the warp with `Op`.
///
/// - **Result valid in:** lane 0 only (other lanes hold partial results).
/// - **Partial warps:** `lanes` (`1..=WARP_SIZE`) lanes take part; lanes at or past `lanes` must
///   not call it. Values are combined in lane order, so `Op` need not be commutative.
/// - **Example:** lanes 0..31 holding `0..31`, `Sum` -> lane 0 holds 496.
///
/// # Safety
/// Lanes `0..lanes` of the warp call it together (convergent), with the same `lanes`.
#[inline(always)]
pub unsafe fn warp_reduce<T: Shuffle, Op: ReduceOp<T>>(value: T, lanes: u32) -> T {
    let mask = lane_mask_below(lanes);
    let lane = lane_id();
    let mut acc = value;
    // Lane i holds lanes i .. i + offset (clipped at `lanes`), in order.
    let mut offset = 1;
    while offset < WARP_SIZE {
        // SAFETY: lanes 0..lanes call this in lock-step with `mask`; a value read from a lane at
        // or past `lanes` is discarded by the test below.
        let other = unsafe { acc.shuffle_down(offset, WARP_SIZE, mask) };
        if lane + offset < lanes {
            acc = Op::combine(acc, other);
        }
        offset *= 2;
    }
    acc
}

/// [`warp_reduce`] with [`Sum`] over a full warp. Result valid in lane 0.
///
/// # Safety
/// All [`WARP_SIZE`] lanes call it together.
#[inline(always)]
pub unsafe fn warp_sum<T: Shuffle>(value: T) -> T
where
    Sum: ReduceOp<T>,
{
    // SAFETY: forwarded from the caller.
    unsafe { warp_reduce::<T, Sum>(value, WARP_SIZE) }
}

/// Reduce `value` over a full warp with the butterfly exchange: at step `k` lane `i` combines
/// with lane `i ^ (WARP_SIZE >> k)`.
///
/// - **Result valid in:** every lane.
/// - **Operator:** must be associative *and commutative* (the butterfly combines the two halves
///   in different orders in different lanes); for floats, lanes may differ in the last bit for
///   `Sum`, never for `Max` / `Min`.
/// - **Example:** a warp whose largest value is 1000.0, with `Max` -> every lane holds 1000.0.
///
/// # Safety
/// All [`WARP_SIZE`] lanes call it together.
#[inline(always)]
pub unsafe fn warp_reduce_all<T: Shuffle, Op: ReduceOp<T>>(value: T) -> T {
    let mut acc = value;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // SAFETY: the whole warp calls this with the full mask.
        let other = unsafe { acc.shuffle_xor(offset, WARP_SIZE, u32::MAX) };
        acc = Op::combine(acc, other);
        offset /= 2;
    }
    acc
}
