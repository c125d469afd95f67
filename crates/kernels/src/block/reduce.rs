//! Block reduction: registers -> warp shuffles -> one shared-memory slot per warp -> the first
//! warp reduces the slots (the reduction lesson's steps 1 to 3).
//!
//! ```text
//! threads  0..31 | 32..63 | ... | 992..1023      each warp: warp_reduce (shuffle_down)
//!            |        |              |
//! slots   [  s0  ,   s1   , ... ,   s31  ]       lane 0 of warp w writes slot w; barrier
//!            \________ warp 0: warp_reduce ______/ -> thread 0 holds the block's result
//! ```
//! One barrier ([`block_reduce`]) or two ([`block_reduce_all`]); any block size from 1 to 1024
//! (the last warp may be partial).

use crate::op::ReduceOp;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, lane_id, lanes_in_warp, thread_idx, warp_id, warps_per_block};
use crate::warp::{Shuffle, warp_reduce};

/// Shared memory for [`block_reduce`] and [`block_reduce_all`]: one slot per warp of the block.
#[derive(Clone, Copy)]
pub struct BlockReduceStorage<T> {
    slots: SharedArray<T>,
}

impl<T: SharedValue> BlockReduceStorage<T> {
    /// Slots needed for the largest block (1024 threads): one per warp.
    pub const SLOTS: u32 = 1024 / WARP_SIZE;

    /// Wrap `slots`, which must hold at least `warps_per_block()` elements (traps otherwise, at
    /// first use).
    #[inline(always)]
    pub fn new(slots: SharedArray<T>) -> Self {
        Self { slots }
    }
}

/// Reduce one value per thread over the whole block with `Op`.
///
/// - **Who calls:** every thread of the block (1 to 1024 threads), together.
/// - **Result valid in:** thread 0 only.
/// - **Order:** values are combined in thread order (grouped by warps), so `Op` need only be
///   associative.
/// - **Example:** a block of 128 threads holding `0..127` with `Sum` -> thread 0 gets 8128.
///
/// # Safety
/// - Every thread of the block calls it (it contains a barrier).
/// - `storage` is not used by anything else during the call; to reuse it afterwards, call
///   [`block_barrier`] first.
#[inline(always)]
pub unsafe fn block_reduce<T, Op>(value: T, storage: BlockReduceStorage<T>) -> T
where
    T: Shuffle + SharedValue,
    Op: ReduceOp<T>,
{
    // SAFETY: the lanes of this warp that exist in the block call it together.
    let warp_total = unsafe { warp_reduce::<T, Op>(value, lanes_in_warp()) };
    let warps = warps_per_block();
    if warps == 1 {
        return warp_total;
    }
    if lane_id() == 0 {
        // SAFETY: lane 0 of each warp writes its own slot; read only after the barrier below.
        unsafe { storage.slots.write(warp_id(), warp_total) };
    }
    // SAFETY: the caller guarantees the whole block calls this function.
    unsafe { block_barrier() };
    let mut total = warp_total;
    if thread_idx() < warps {
        // SAFETY: slot `thread_idx()` was written before the barrier.
        let slot = unsafe { storage.slots.read(thread_idx()) };
        // SAFETY: lanes 0..warps of warp 0 take this branch together.
        total = unsafe { warp_reduce::<T, Op>(slot, warps) };
    }
    total
}

/// [`block_reduce`], with the result broadcast to every thread.
///
/// - **Result valid in:** every thread of the block.
///
/// # Safety
/// As [`block_reduce`] (two barriers inside).
#[inline(always)]
pub unsafe fn block_reduce_all<T, Op>(value: T, storage: BlockReduceStorage<T>) -> T
where
    T: Shuffle + SharedValue,
    Op: ReduceOp<T>,
{
    // SAFETY: forwarded from the caller.
    let total = unsafe { block_reduce::<T, Op>(value, storage) };
    // Every slot read inside block_reduce happened before this barrier, so slot 0 is free.
    // SAFETY: the whole block calls this function.
    unsafe { block_barrier() };
    if thread_idx() == 0 {
        // SAFETY: only thread 0 writes; everyone reads after the barrier below.
        unsafe { storage.slots.write(0, total) };
    }
    // SAFETY: the whole block calls this function.
    unsafe {
        block_barrier();
        storage.slots.read(0)
    }
}
