//! Device-wide reduction, pass 1 (and, with one block, pass 2): each block reduces a fixed part
//! of the input to one partial.
//!
//! - Thread `g` of the grid folds 16-byte vectors `g, g + S, g + 2S, ...` (`S` = threads in the
//!   grid), four loads in flight, then the elements past the last whole vector; the block then
//!   reduces its threads' values ([`block_reduce`]).
//! - The partition depends only on `n`, the grid and the block size, and every combination
//!   happens in a fixed order: no atomics, so a float result is bitwise identical from run to run
//!   for the same launch shape (the host derives the shape from `n` and the GPU).
//! - The operator must be associative and commutative (threads take strided elements).

use super::element::{Element, load_aligned_read_only as load_aligned};
use crate::block::{BlockReduceStorage, block_reduce};
use crate::op::ReduceOp;
use crate::thread::{block_idx, global_idx, grid_stride, thread_idx};

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
        // SAFETY: one partial per block.
        unsafe { *partials.add(block_idx() as usize) = total };
    }
}
