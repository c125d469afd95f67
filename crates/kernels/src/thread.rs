//! Thread scope: where a thread stands in its warp, block and grid.
//!
//! A kernel launch runs a *grid* of *blocks*; each block runs `block_dim()` threads, which the
//! hardware issues in *warps* of [`WARP_SIZE`] consecutive threads (the *lanes* of the warp).
//! This crate launches one-dimensional grids and blocks, so for a thread:
//!
//! ```text
//! global index = block_idx() * block_dim() + thread_idx()
//! lane id      = thread_idx() % WARP_SIZE       (== lane_id())
//! warp id      = thread_idx() / WARP_SIZE       (== warp_id(), within the block)
//! grid stride  = grid_dim() * block_dim()       (threads in the whole grid)
//! ```

use core::arch::asm;
use core::arch::nvptx;

/// Threads per warp on every NVIDIA GPU this crate targets (sm_50 and newer).
///
/// Code that means "the warp's width" uses this name, never the literal. The host checks the
/// device's reported warp size against it when it loads the module.
pub const WARP_SIZE: u32 = gpu_primitives_abi::layout::WARP_SIZE;

/// `log2(WARP_SIZE)`.
pub const LOG2_WARP_SIZE: u32 = WARP_SIZE.trailing_zeros();

/// Index of this thread in its block, x dimension (`threadIdx.x`).
#[inline(always)]
pub fn thread_idx() -> u32 {
    // SAFETY: reads a special register; no preconditions.
    unsafe { nvptx::_thread_idx_x() as u32 }
}

/// Index of this block in the grid, x dimension (`blockIdx.x`).
#[inline(always)]
pub fn block_idx() -> u32 {
    // SAFETY: reads a special register; no preconditions.
    unsafe { nvptx::_block_idx_x() as u32 }
}

/// Threads per block, x dimension (`blockDim.x`).
#[inline(always)]
pub fn block_dim() -> u32 {
    // SAFETY: reads a special register; no preconditions.
    unsafe { nvptx::_block_dim_x() as u32 }
}

/// Blocks in the grid, x dimension (`gridDim.x`).
#[inline(always)]
pub fn grid_dim() -> u32 {
    // SAFETY: reads a special register; no preconditions.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

/// `block_idx() * block_dim() + thread_idx()`, as `usize` so that it indexes past 2^32 threads'
/// worth of elements without overflow.
#[inline(always)]
pub fn global_idx() -> usize {
    block_idx() as usize * block_dim() as usize + thread_idx() as usize
}

/// Threads in the whole grid: the stride of a grid-stride loop.
#[inline(always)]
pub fn grid_stride() -> usize {
    grid_dim() as usize * block_dim() as usize
}

/// This thread's lane in its warp, `0..WARP_SIZE` (`%laneid`).
#[inline(always)]
pub fn lane_id() -> u32 {
    let lane: u32;
    // SAFETY: reads a special register; no memory is touched.
    unsafe { asm!("mov.u32 {l}, %laneid;", l = out(reg32) lane, options(nomem, nostack, pure)) };
    lane
}

/// This thread's warp within its block: `thread_idx() / WARP_SIZE`.
#[inline(always)]
pub fn warp_id() -> u32 {
    thread_idx() / WARP_SIZE
}

/// Warps in this block, the last one possibly partial: `ceil(block_dim() / WARP_SIZE)`.
#[inline(always)]
pub fn warps_per_block() -> u32 {
    block_dim().div_ceil(WARP_SIZE)
}

/// Lanes of this thread's warp that exist in the block: [`WARP_SIZE`], except in the last warp of
/// a block whose size is not a multiple of it.
#[inline(always)]
pub fn lanes_in_warp() -> u32 {
    let first = warp_id() * WARP_SIZE;
    let left = block_dim() - first;
    if left < WARP_SIZE { left } else { WARP_SIZE }
}

/// Member mask of the lanes of this warp that exist in the block (all ones for a full warp).
#[inline(always)]
pub fn warp_member_mask() -> u32 {
    lane_mask_below(lanes_in_warp())
}

/// Mask of lanes `0..n` (`n` in `0..=WARP_SIZE`).
#[inline(always)]
pub fn lane_mask_below(n: u32) -> u32 {
    if n >= WARP_SIZE { u32::MAX } else { (1u32 << n) - 1 }
}

/// Suspend this thread for about `ns` nanoseconds (`nanosleep.u32`, sm_70 and later; the
/// hardware may wake it anywhere in `0 ..= 2 * ns`). Lets a polling loop leave the memory system
/// and the issue slots to other warps.
#[inline(always)]
pub fn sleep_ns(ns: u32) {
    // SAFETY: suspends the thread; touches no memory.
    unsafe { core::arch::asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nomem, nostack)) };
}
