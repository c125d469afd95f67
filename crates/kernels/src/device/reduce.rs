//! Device-wide reduction: each block reduces a fixed part of the input to one partial; the
//! partials are then reduced by a second launch of one block ([`reduce_partials`] twice), or, in
//! a single launch, by the last block to finish ([`last_block_reduces`]). The same partition
//! serves argmin / argmax ([`arg_reduce_partials`]) and the dot product ([`dot_partials`]);
//! [`segmented_reduce`] gives each row of a batch to one block.
//!
//! - Thread `g` of the grid folds 16-byte vectors `g, g + S, g + 2S, ...` (`S` = threads in the
//!   grid), four loads in flight, then the elements past the last whole vector; the block then
//!   reduces its threads' values ([`block_reduce`]).
//! - The partition depends only on `n`, the grid and the block size, and every combination
//!   happens in a fixed order: no atomics, so a float result is bitwise identical from run to run
//!   for the same launch shape (the host derives the shape from `n` and the GPU).
//! - The operator must be associative and commutative (threads take strided elements).

use super::element::{Element, load_aligned_read_only as load_aligned};
use super::indexed::{Indexed, Ordered};
use crate::atomic::{AtomicAdd, RelaxedAccess};
use crate::block::{BlockReduceStorage, block_reduce};
use crate::op::{ReduceOp, Sum};
use crate::shared::{SharedArray, SharedValue};
use crate::sync::{block_barrier, fence_acquire_release};
use crate::thread::{block_dim, block_idx, global_idx, grid_dim, grid_stride, thread_idx};
use crate::warp::Shuffle;

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
    let vectors = if (input as usize).is_multiple_of(16) {
        n / VEC
    } else {
        0
    };
    let stride = grid_stride();
    let mut v = global_idx();
    // SAFETY: (loops) every vector index read is < vectors, so its VEC elements are < n; the
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

/// The single launch's second half, after any partials agent: the last block to finish (picked
/// by an integer atomic counter, which it resets to 0 for the next call) reduces the
/// `grid_dim()` partials in a fixed order and writes `*result`. No floating-point atomics:
/// deterministic.
///
/// # Safety
/// Every thread of the block calls it after writing this block's partial (with
/// `store_relaxed`); `result` is one writable value; `blocks_done` is a `u32` that is 0 at
/// launch; `last` is one shared `u32` of this block; `storage` is free for reuse.
#[inline(always)]
pub unsafe fn last_block_reduces<A, Op>(
    partials: *mut A,
    result: *mut A,
    blocks_done: *mut u32,
    storage: BlockReduceStorage<A>,
    last: SharedArray<u32>,
) where
    A: Shuffle + SharedValue + RelaxedAccess,
    Op: ReduceOp<A>,
{
    // SAFETY: the whole block calls it: every thread has finished with `storage` and thread 0
    // has stored the partial before anyone counts it.
    unsafe { block_barrier() };
    if thread_idx() == 0 {
        // Release this block's partial, then count it.
        fence_acquire_release();
        // SAFETY: `blocks_done` is a valid u32.
        let done = unsafe { u32::atomic_add(blocks_done, 1) };
        // SAFETY: read by the block after the barrier.
        unsafe { last.write(0, (done == grid_dim() - 1) as u32) };
    }
    // SAFETY: the whole block calls it.
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
        acc = Op::combine(acc, unsafe { A::load_relaxed(partials.add(p as usize)) });
        p += block_dim();
    }
    // SAFETY: the whole (last) block calls it.
    let total = unsafe { block_reduce::<A, Op>(acc, storage) };
    if thread_idx() == 0 {
        // SAFETY: `result` and `blocks_done` are valid; no block counts again in this launch.
        unsafe {
            *result = total;
            *blocks_done = 0;
        }
    }
}

/// `partials[block_idx()]` = the (value, index) pair `Op` (argmin / argmax) picks from this block's
/// part of `input[0..n]`; the partition is the one of [`reduce_partials`].
///
/// # Safety
/// As [`reduce_partials`], with one `Indexed<T::Acc>` partial per block.
#[inline(always)]
pub unsafe fn arg_reduce_partials<T, Op, const VEC: usize>(
    input: *const T,
    n: usize,
    partials: *mut Indexed<T::Acc>,
    storage: BlockReduceStorage<Indexed<T::Acc>>,
) where
    T: Element,
    T::Acc: Ordered,
    Op: ReduceOp<Indexed<T::Acc>>,
{
    let mut acc = Op::identity();
    let vectors = if (input as usize).is_multiple_of(16) {
        n / VEC
    } else {
        0
    };
    let stride = grid_stride();
    let mut v = global_idx();
    // SAFETY: (loops) indices are < n; the vector base is 16-byte aligned (checked above).
    unsafe {
        while v < vectors {
            let values = load_aligned::<T, VEC>(input.add(v * VEC));
            for k in 0..VEC {
                let item = Indexed {
                    value: values[k].to_acc(),
                    index: (v * VEC + k) as u64,
                };
                acc = Op::combine(acc, item);
            }
            v += stride;
        }
        let mut i = vectors * VEC + global_idx();
        while i < n {
            acc = Op::combine(
                acc,
                Indexed {
                    value: (*input.add(i)).to_acc(),
                    index: i as u64,
                },
            );
            i += stride;
        }
    }
    // SAFETY: the whole block calls it.
    let best = unsafe { block_reduce::<Indexed<T::Acc>, Op>(acc, storage) };
    if thread_idx() == 0 {
        // SAFETY: one partial per block.
        unsafe { Indexed::<T::Acc>::store_relaxed(partials.add(block_idx() as usize), best) };
    }
}

/// `partials[block_idx()]` = sum of `a[i] * b[i]` over this block's part of `0..n` (the partition
/// of [`reduce_partials`]), products and sums in `T::Acc`.
///
/// # Safety
/// As [`reduce_partials`], for two inputs of `n` elements.
#[inline(always)]
pub unsafe fn dot_partials<T, const VEC: usize>(
    a: *const T,
    b: *const T,
    n: usize,
    partials: *mut T::Acc,
    storage: BlockReduceStorage<T::Acc>,
) where
    T: Element,
    T::Acc: core::ops::Mul<Output = T::Acc>,
    Sum: ReduceOp<T::Acc>,
{
    let mut acc = <Sum as ReduceOp<T::Acc>>::identity();
    let aligned = (a as usize).is_multiple_of(16) && (b as usize).is_multiple_of(16);
    let vectors = if aligned { n / VEC } else { 0 };
    let stride = grid_stride();
    let mut v = global_idx();
    // SAFETY: (loops) indices are < n; vector bases are 16-byte aligned (checked above).
    unsafe {
        while v < vectors {
            let (x, y) = (
                load_aligned::<T, VEC>(a.add(v * VEC)),
                load_aligned::<T, VEC>(b.add(v * VEC)),
            );
            for k in 0..VEC {
                acc = Sum::combine(acc, x[k].to_acc() * y[k].to_acc());
            }
            v += stride;
        }
        let mut i = vectors * VEC + global_idx();
        while i < n {
            acc = Sum::combine(acc, (*a.add(i)).to_acc() * (*b.add(i)).to_acc());
            i += stride;
        }
    }
    // SAFETY: the whole block calls it.
    let total = unsafe { block_reduce::<T::Acc, Sum>(acc, storage) };
    if thread_idx() == 0 {
        // SAFETY: one partial per block.
        unsafe { T::Acc::store_relaxed(partials.add(block_idx() as usize), total) };
    }
}

/// Segmented reduce over `rows` rows of `row_len` elements each (row `r` is
/// `input[r * row_len .. (r + 1) * row_len]`): block `b` reduces rows `b, b + grid_dim(), ...`,
/// each with the whole block (16-byte loads when the row starts 16-byte aligned), and writes
/// `output[r]`. The shape of softmax and LayerNorm statistics.
///
/// # Safety
/// Every thread of the block calls it; `input` holds `rows * row_len` elements, `output` `rows`
/// values; `storage` is this block's.
#[inline(always)]
pub unsafe fn segmented_reduce<T, Op, const VEC: usize>(
    input: *const T,
    row_len: usize,
    rows: usize,
    output: *mut T::Acc,
    storage: BlockReduceStorage<T::Acc>,
) where
    T: Element,
    Op: ReduceOp<T::Acc>,
{
    let mut row = block_idx() as usize;
    while row < rows {
        // SAFETY: the row lies inside `input`.
        let start = unsafe { input.add(row * row_len) };
        let vectors = if (start as usize).is_multiple_of(16) {
            row_len / VEC
        } else {
            0
        };
        let mut acc = Op::identity();
        let mut v = thread_idx() as usize;
        // SAFETY: (loops) indices are < row_len; the vector base is aligned (checked above).
        unsafe {
            while v < vectors {
                let values = load_aligned::<T, VEC>(start.add(v * VEC));
                for k in 0..VEC {
                    acc = Op::combine(acc, values[k].to_acc());
                }
                v += block_dim() as usize;
            }
            let mut i = vectors * VEC + thread_idx() as usize;
            while i < row_len {
                acc = Op::combine(acc, (*start.add(i)).to_acc());
                i += block_dim() as usize;
            }
        }
        // SAFETY: the whole block runs every row (the row loop is uniform).
        let total = unsafe { block_reduce::<T::Acc, Op>(acc, storage) };
        if thread_idx() == 0 {
            // SAFETY: row < rows.
            unsafe { *output.add(row) = total };
        }
        // The next row's block_reduce reuses `storage`.
        // SAFETY: uniform loop, the whole block.
        unsafe { block_barrier() };
        row += grid_dim() as usize;
    }
}
