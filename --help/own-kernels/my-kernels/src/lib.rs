#![no_std]
#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch)]
use gpu_primitives_kernels::block::{BlockReduceStorage, block_reduce};
use gpu_primitives_kernels::op::Max;
use gpu_primitives_kernels::shared_array;
use gpu_primitives_kernels::thread::{block_idx, global_idx, thread_idx};

/// `out[block] = max of this block's elements` (any block size up to 1024).
///
/// # Safety
/// `x` holds `n` elements, `out` one per block.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn block_max(x: *const f32, out: *mut f32, n: usize) {
    let slots = shared_array!(BLOCK_MAX_SLOTS: [f32; 32]);
    let i = global_idx();
    // SAFETY: i < n, and `x` holds n elements.
    let v = if i < n { unsafe { *x.add(i) } } else { f32::NEG_INFINITY };
    // SAFETY: every thread of the block calls it; the storage is used once.
    let m = unsafe { block_reduce::<f32, Max>(v, BlockReduceStorage::new(slots)) };
    if thread_idx() == 0 {
        // SAFETY: `out` holds one value per block; `m` is valid in thread 0 only.
        unsafe { *out.add(block_idx() as usize) = m };
    }
}
