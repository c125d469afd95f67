//! Block broadcast: one thread's value to every thread of the block, through one shared slot.

use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::thread_idx;

/// Shared memory for [`block_broadcast`]: one slot.
#[derive(Clone, Copy)]
pub struct BlockBroadcastStorage<T> {
    slot: SharedArray<T>,
}

impl<T: SharedValue> BlockBroadcastStorage<T> {
    /// Slots needed.
    pub const SLOTS: u32 = 1;

    /// Wrap `slot` (at least one element).
    #[inline(always)]
    pub fn new(slot: SharedArray<T>) -> Self {
        Self { slot }
    }
}

/// The `value` of thread `src_thread`, returned to every thread of the block.
///
/// - **Who calls:** every thread, with the same `src_thread` (`< block_dim()`).
/// - **Result valid in:** every thread.
/// - **Example:** thread 0 holds the mean 4.5 -> every thread gets 4.5.
///
/// # Safety
/// Every thread of the block calls it (one barrier inside); to reuse `storage` afterwards, call
/// [`block_barrier`] first.
#[inline(always)]
pub unsafe fn block_broadcast<T: SharedValue>(
    value: T,
    src_thread: u32,
    storage: BlockBroadcastStorage<T>,
) -> T {
    if thread_idx() == src_thread {
        // SAFETY: one thread writes; the others read only after the barrier.
        unsafe { storage.slot.write(0, value) };
    }
    // SAFETY: the whole block calls this function.
    unsafe {
        block_barrier();
        storage.slot.read(0)
    }
}
