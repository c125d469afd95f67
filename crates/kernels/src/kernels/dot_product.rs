//! Dot product with a shared-memory tree (puzzle 12, generalised to any length and grid).

use crate::atomic::AtomicAdd;
use crate::shared::dynamic_shared;
use crate::sync::block_barrier;
use crate::thread::{block_dim, global_idx, grid_stride, thread_idx};

/// `*out += sum_i a[i] * b[i]` for `i < n`.
///
/// - **Launch:** any grid; `block_dim()` a power of two (1..=1024); dynamic shared memory
///   `block_dim() * 4` bytes. `*out` must be 0 before the launch.
/// - **Mapping:** thread `t` of the grid accumulates products `t, t + grid_stride, ...` in a
///   register (with SIZE = TPB = 8 and one block, exactly one product each, as in puzzle 12),
///   stores it in `tree[thread]`, and the block halves the tree, one barrier per level:
///   `stride = TPB/2; while stride > 0 { if t < stride { tree[t] += tree[t + stride] } barrier }`.
///   Thread 0 adds the block's sum to `*out` (the only write: one atomic per block).
/// - a = b = 0..8, one block of 8 -> 140.
///
/// # Safety
/// `a` and `b` hold `n` readable `f32`; `out` is one writable `f32`; the launch shape is as above.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dot_product_shared_tree(
    a: *const f32,
    b: *const f32,
    out: *mut f32,
    n: usize,
) {
    // SAFETY: the host launches with `block_dim() * 4` bytes of dynamic shared memory.
    let tree = unsafe { dynamic_shared::<f32>(0) };
    let t = thread_idx();
    let mut acc = 0.0f32;
    let mut i = global_idx();
    while i < n {
        // SAFETY: i < n, and a, b hold n elements.
        acc += unsafe { *a.add(i) * *b.add(i) };
        i += grid_stride();
    }
    // SAFETY: each thread writes only its own slot; the barrier publishes them to the block.
    unsafe {
        tree.write(t, acc);
        block_barrier();
    }
    let mut stride = block_dim() / 2;
    while stride > 0 {
        if t < stride {
            // SAFETY: slots t and t + stride were written before the last barrier, and no other
            // thread touches slot t in this level.
            unsafe { tree.write(t, tree.read(t) + tree.read(t + stride)) };
        }
        // SAFETY: every thread of the block runs every level (the loop bound is uniform).
        unsafe { block_barrier() };
        stride /= 2;
    }
    if t == 0 {
        // SAFETY: `out` is a valid f32; slot 0 holds the block's sum after the last barrier.
        unsafe { f32::atomic_add(out, tree.read(0)) };
    }
}
