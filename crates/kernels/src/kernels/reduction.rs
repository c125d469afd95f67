//! The reduction lesson: a naive single-thread sum beside the hierarchical block sum.

use crate::atomic::AtomicAdd;
use crate::block::{BlockReduceStorage, block_reduce};
use crate::op::Sum;
use crate::shared_array;
use crate::thread::{global_idx, grid_stride, thread_idx};

/// `*out = sum(input[0..n])`, computed by one thread that reads every element in turn: the
/// baseline the lesson measures against. Launch with one block of one thread (other threads do
/// nothing).
///
/// # Safety
/// `input` holds `n` readable `f32`; `out` is one writable `f32`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sum_naive(input: *const f32, out: *mut f32, n: usize) {
    if global_idx() != 0 {
        return;
    }
    let mut acc = 0.0f32;
    for i in 0..n {
        // SAFETY: i < n.
        acc += unsafe { *input.add(i) };
    }
    // SAFETY: `out` is valid for one write.
    unsafe { *out = acc };
}

/// `*out += sum(input[0..n])`, hierarchically:
/// 1. registers: each thread sums `input[t], input[t + grid_stride], ...`;
/// 2. warp: `shuffle_down` combines the lanes (lane 0 holds the warp's sum);
/// 3. block: one shared-memory slot per warp, reduced by the first warp;
/// 4. grid: thread 0 of each block adds the block's sum to `*out` with an atomic.
///
/// - **Launch:** any grid, any block size 1..=1024, no dynamic shared memory; `*out` = 0 before.
/// - **Determinism:** the float atomics of step 4 make the last bits depend on block timing.
///
/// # Safety
/// `input` holds `n` readable `f32`; `out` is one writable `f32`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn block_sum_hierarchical(input: *const f32, out: *mut f32, n: usize) {
    let slots = shared_array!(BLOCK_SUM_SLOTS: [f32; BlockReduceStorage::<f32>::SLOTS as usize]);
    let mut acc = 0.0f32;
    let mut i = global_idx();
    let stride = grid_stride();
    while i < n {
        // SAFETY: i < n.
        acc += unsafe { *input.add(i) };
        i += stride;
    }
    // SAFETY: every thread of the block reaches this call; the storage is used once.
    let block_total = unsafe { block_reduce::<f32, Sum>(acc, BlockReduceStorage::new(slots)) };
    if thread_idx() == 0 {
        // SAFETY: `out` is a valid f32.
        unsafe { f32::atomic_add(out, block_total) };
    }
}
