//! Barriers and memory fences.
//!
//! A barrier waits for threads and orders their shared- and global-memory accesses; a fence only
//! orders this thread's own accesses, as seen by others at the given scope.

use core::arch::asm;

/// Block barrier (`__syncthreads`, PTX `bar.sync 0`): waits until every thread of the block has
/// arrived, and makes each thread's earlier shared- and global-memory writes visible to the block.
///
/// # Safety
/// Every thread of the block must reach the same barrier (no thread may have exited or be
/// in a branch that skips it): otherwise the block dead-locks or the behaviour is undefined.
#[inline(always)]
pub unsafe fn block_barrier() {
    // The LLVM intrinsic, which LLVM knows to be convergent (never duplicated or moved across
    // control flow), rather than a hand-written `bar.sync`.
    // SAFETY: the caller guarantees the whole block reaches this call.
    unsafe { core::arch::nvptx::_syncthreads() }
}

/// Waits for the lanes in `member_mask` of this warp (`__syncwarp`, PTX `bar.warp.sync`), and
/// orders their memory accesses.
///
/// # Safety
/// Every lane named in `member_mask` must execute this with the same mask, and the calling lane
/// must be in it.
#[inline(always)]
pub unsafe fn warp_sync(member_mask: u32) {
    // SAFETY: the caller guarantees the lanes of the mask call this together.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) member_mask, options(nostack)) };
}

/// Fence at block scope (`__threadfence_block`): this thread's memory accesses before it are seen
/// by the block's threads before those after it.
#[inline(always)]
pub fn fence_block() {
    // SAFETY: a fence has no preconditions.
    unsafe { asm!("fence.sc.cta;", options(nostack)) };
}

/// Fence at device scope (`__threadfence`): this thread's memory accesses before it are seen by
/// every thread of the GPU before those after it.
#[inline(always)]
pub fn fence_device() {
    // SAFETY: a fence has no preconditions.
    unsafe { asm!("fence.sc.gpu;", options(nostack)) };
}

/// Fence at system scope (`__threadfence_system`): as [`fence_device`], and also towards the host
/// and peer GPUs.
#[inline(always)]
pub fn fence_system() {
    // SAFETY: a fence has no preconditions.
    unsafe { asm!("fence.sc.sys;", options(nostack)) };
}

/// Acquire-release fence at device scope (`fence.acq_rel.gpu`): after a relaxed load that saw a
/// value stored with release ordering, later reads of this thread see everything that preceded
/// that store (PTX memory model, "release and acquire patterns").
#[inline(always)]
pub fn fence_acquire_release() {
    // SAFETY: a fence has no preconditions.
    unsafe { asm!("fence.acq_rel.gpu;", options(nostack)) };
}
