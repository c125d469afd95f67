//! Device-wide reduction: each block reduces a fixed part of the input to one partial; the
//! partials are then reduced by a second launch of one block ([`reduce_partials`] twice), or, in
//! a single launch, by the last block to finish ([`reduce_single_launch`]).
//!
//! - Thread `g` of the grid folds 16-byte vectors `g, g + S, g + 2S, ...` (`S` = threads in the
//!   grid), four loads in flight, then the elements past the last whole vector; the block then
//!   reduces its threads' values ([`block_reduce`]).
//! - The partition depends only on `n`, the grid and the block size, and every combination
//!   happens in a fixed order: no atomics, so a float result is bitwise identical from run to run
//!   for the same launch shape (the host derives the shape from `n` and the GPU).
//! - The operator must be associative and commutative (threads take strided elements).

use super::element::{Element, load_aligned_read_only as load_aligned};
use crate::atomic::{AtomicAdd, RelaxedAccess};
use crate::block::{BlockReduceStorage, block_reduce};
use crate::op::ReduceOp;
use crate::shared::SharedArray;
use crate::sync::{block_barrier, fence_acquire_release};
use crate::thread::{block_dim, block_idx, global_idx, grid_dim, grid_stride, thread_idx};

/// `partials[block_idx()] = Op-reduction of this block's part of input[0..n]`.
///
/// `VEC` elements make 16 bytes (4 for 32-bit types, 2 for 64-bit, 8 for 16-bit).
///
/// # Safety
/// Every thread of the block calls it; `input` holds `n` readable elements; `partials` one
/// writable value per block; `storage` is this block's and unused elsewhere.
#[inline(always)]
pub unsafe fn reduce_partials<T, Op, const VEC: usize>(
    input: *const T,
    n: usize,
    partials: *mut T::Acc,
    storage: BlockReduceStorage<T::Acc>,
) where
    T: Element,
    Op: ReduceOp<T::Acc>,
{
    let fold = |acc: T::Acc, values: [T; VEC]| {
        let mut acc = acc;
        for v in values.iter() {
            acc = Op::combine(acc, v.to_acc());
        }
        acc
    };
    let mut acc = Op::identity();
    let vectors = if input as usize % 16 == 0 { n / VEC } else { 0 };
    let stride = grid_stride();
    let mut v = global_idx();
    // SAFETY (loops): every vector index read is < vectors, so its VEC elements are < n; the
    // base is 16-byte aligned (checked above).
    unsafe {
        while v + 3 * stride < vectors {
            let a = load_aligned::<T, VEC>(input.add(v * VEC));
            let b = load_aligned::<T, VEC>(input.add((v + stride) * VEC));
            let c = load_aligned::<T, VEC>(input.add((v + 2 * stride) * VEC));
            let d = load_aligned::<T, VEC>(input.add((v + 3 * stride) * VEC));
            acc = fold(fold(fold(fold(acc, a), b), c), d);
            v += 4 * stride;
        }
        while v < vectors {
            acc = fold(acc, load_aligned::<T, VEC>(input.add(v * VEC)));
            v += stride;
        }
        let mut i = vectors * VEC + global_idx();
        while i < n {
            acc = Op::combine(acc, (*input.add(i)).to_acc());
            i += stride;
        }
    }
    // SAFETY: the whole block calls it (the loops above are per-thread, no barrier inside).
    let total = unsafe { block_reduce::<T::Acc, Op>(acc, storage) };
    if thread_idx() == 0 {
        // SAFETY: one partial per block; relaxed at device scope so that the last block (below)
        // reads it from L2.
        unsafe { T::Acc::store_relaxed(partials.add(block_idx() as usize), total) };
    }
}

/// Single-launch reduction: [`reduce_partials`], then the last block to finish (picked by an
/// integer atomic counter, which it resets to 0 for the next call) reduces the `grid_dim()`
/// partials in a fixed order and writes `*result`. No floating-point atomics: deterministic.
///
/// # Safety
/// As [`reduce_partials`]; `result` is one writable value; `blocks_done` is a `u32` that is 0 at
/// launch; `last` is one shared `u32` of this block.
#[inline(always)]
pub unsafe fn reduce_single_launch<T, Op, const VEC: usize>(
    input: *const T,
    n: usize,
    partials: *mut T::Acc,
    result: *mut T::Acc,
    blocks_done: *mut u32,
    storage: BlockReduceStorage<T::Acc>,
    last: SharedArray<u32>,
) where
    T: Element,
    Op: ReduceOp<T::Acc>,
{
    // SAFETY: forwarded.
    unsafe { reduce_partials::<T, Op, VEC>(input, n, partials, storage) };
    if thread_idx() == 0 {
        // Release this block's partial, then count it.
        fence_acquire_release();
        // SAFETY: `blocks_done` is a valid u32.
        let done = unsafe { u32::atomic_add(blocks_done, 1) };
        // SAFETY: read by the block after the barrier.
        unsafe { last.write(0, (done == grid_dim() - 1) as u32) };
    }
    // SAFETY: the whole block calls it; `storage` (used by block_reduce) is reused below only
    // after this barrier.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    if unsafe { last.read(0) } == 0 {
        return;
    }
    // Acquire every other block's partial.
    fence_acquire_release();
    let mut acc = Op::identity();
    let mut p = thread_idx();
    while p < grid_dim() {
        // SAFETY: p < grid_dim(), one partial per block, each released before its count.
        acc = Op::combine(acc, unsafe { T::Acc::load_relaxed(partials.add(p as usize)) });
        p += block_dim();
    }
    // SAFETY: the whole (last) block calls it.
    let total = unsafe { block_reduce::<T::Acc, Op>(acc, storage) };
    if thread_idx() == 0 {
        // SAFETY: `result` and `blocks_done` are valid; no block counts again in this launch.
        unsafe {
            *result = total;
            *blocks_done = 0;
        }
    }
}
