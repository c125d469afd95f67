//! The gradients of a norm's weight and bias: column sums over the rows of a row-major
//! `rows x cols` matrix, `dweight[c] = sum_r dy[r][c] * x^[r][c]` and `dbias[c] = sum_r dy[r][c]`
//! (`x^` the normalised item, from the forward's saved mean and rstd). The row operations'
//! backward (`device::rows`, `LayerNormBackward`, `RmsNormBackward`) gives `dx`; these two
//! launches give the rest, as PyTorch's LayerNorm backward does in its own kernels.
//!
//! - **Partial** ([`norm_grads_partial`]): each block takes
//!   [`block_threads`](gpu_primitives_abi::tuning::NormGradPolicy::block_threads) consecutive
//!   columns (one per thread: a warp reads 32 consecutive items of a row, coalesced) and one
//!   chunk of rows, and sums down the chunk, four rows per step (eight loads in flight per
//!   thread); it writes the chunk's two sums per column.
//! - **Finish** ([`norm_grads_finish`]): a warp's lanes take 32 columns, the block's warps split
//!   the chunks (each adding its share in order), and one warp adds the warps' sums in order.
//!
//! The row kernel of the norms' backward can write the partials itself (one chunk per group of
//! threads, summed over the rows the group took), so that only the finish reads them again.
//!
//! Every sum is in an order fixed by the shape (`planning::rows::norm_grad_chunks`), so the results are
//! the same bits from run to run, whatever the GPU.

use super::element::RowElement;
use crate::math::fma;
use crate::policy::NORM_GRAD;
use crate::shared::SharedArray;
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, block_idx, lane_id, thread_idx, warp_id, warps_per_block};
use gpu_primitives_abi::params::NormGradParams;

/// Rows one step of a thread's sum reads (the loads issued before the first is used).
const ROWS_PER_STEP: usize = 4;

/// This chunk's (dweight, dbias) sums of each column of its block. See [`NormGradParams`].
///
/// # Safety
/// Launched as [`NormGradParams`] says, with its pointers holding what it says; nothing writes
/// `input`, `grad`, `mean` or `rstd` during the launch.
#[inline(always)]
pub unsafe fn norm_grads_partial<T: RowElement>(p: &NormGradParams<T>) {
    let column_block = block_idx() % p.column_blocks;
    let chunk = (block_idx() / p.column_blocks) as usize;
    let col = (column_block * block_dim() + thread_idx()) as usize;
    if col >= p.cols || chunk >= p.chunks as usize {
        return;
    }
    let first = chunk * p.rows_per_chunk;
    let end = (first + p.rows_per_chunk).min(p.rows);
    let item = |r: usize| {
        let at = r * p.cols + col;
        // SAFETY: row r < rows and col < cols lie in the matrices, and r in mean / rstd (the
        // caller's contract); none is written during the launch.
        unsafe {
            let mean = if p.mean.is_null() { 0.0 } else { *p.mean.add(r) };
            let x = (*p.input.add(at)).to_acc();
            let dy = (*p.grad.add(at)).to_acc();
            ((x - mean) * *p.rstd.add(r), dy)
        }
    };
    let (mut weight_sum, mut bias_sum) = (0.0f32, 0.0f32);
    let mut r = first;
    while r + ROWS_PER_STEP <= end {
        let items: [(f32, f32); ROWS_PER_STEP] = core::array::from_fn(|k| item(r + k));
        for (normalized, dy) in items {
            weight_sum = fma(dy, normalized, weight_sum);
            bias_sum += dy;
        }
        r += ROWS_PER_STEP;
    }
    while r < end {
        let (normalized, dy) = item(r);
        weight_sum = fma(dy, normalized, weight_sum);
        bias_sum += dy;
        r += 1;
    }
    let at = 2 * (chunk * p.cols + col);
    // SAFETY: chunk < chunks and col < cols: within the 2 * chunks * cols partials.
    unsafe {
        *p.partials.add(at) = weight_sum;
        *p.partials.add(at + 1) = bias_sum;
    }
}

/// `dweight` and `dbias` (where not null) from the partials: each block takes
/// [`NormGradPolicy::finish_columns`](gpu_primitives_abi::tuning::NormGradPolicy::finish_columns) columns (a warp's lanes) and its warps split the chunks, warp `w`
/// adding chunks `w, w + warps, ...` in order (each warp reads the chunk's columns as one
/// coalesced row); then lane `c` of warp 0 adds the warps' sums in warp order. See
/// [`NormGradParams`].
///
/// # Safety
/// Launched as [`NormGradParams`] says, after [`norm_grads_partial`] (or the row kernel that
/// wrote the partials) on the same stream, with `slots` the block's dynamic shared memory
/// ([`finish_shared_bytes`](gpu_primitives_abi::tuning::NormGradPolicy::finish_shared_bytes)).
#[inline(always)]
pub unsafe fn norm_grads_finish<T: RowElement>(p: &NormGradParams<T>, slots: SharedArray<f32>) {
    let lane = lane_id();
    let warp = warp_id();
    let warps = warps_per_block();
    let col = (block_idx() * NORM_GRAD.finish_columns + lane) as usize;
    let (mut weight_sum, mut bias_sum) = (0.0f32, 0.0f32);
    if col < p.cols {
        let read = |chunk: usize| {
            let at = 2 * (chunk * p.cols + col);
            // SAFETY: within the partials (chunk < chunks, col < cols), written by the launch
            // before.
            unsafe { (*p.partials.add(at), *p.partials.add(at + 1)) }
        };
        let step = warps as usize;
        let mut chunk = warp as usize;
        while chunk + 3 * step < p.chunks as usize {
            let sums: [(f32, f32); 4] = core::array::from_fn(|k| read(chunk + k * step));
            for (w, b) in sums {
                weight_sum += w;
                bias_sum += b;
            }
            chunk += 4 * step;
        }
        while chunk < p.chunks as usize {
            let (w, b) = read(chunk);
            weight_sum += w;
            bias_sum += b;
            chunk += step;
        }
    }
    let slot = 2 * (warp * WARP_SIZE + lane);
    // SAFETY: within NORM_GRAD_FINISH_SHARED_BYTES (2 f32 per thread of the block).
    unsafe {
        slots.write(slot, weight_sum);
        slots.write(slot + 1, bias_sum);
        block_barrier();
    }
    if warp != 0 || col >= p.cols {
        return;
    }
    let (mut weight_sum, mut bias_sum) = (0.0f32, 0.0f32);
    for w in 0..warps {
        let slot = 2 * (w * WARP_SIZE + lane);
        // SAFETY: written by warp w before the barrier.
        unsafe {
            weight_sum += slots.read(slot);
            bias_sum += slots.read(slot + 1);
        }
    }
    // SAFETY: non-null dweight / dbias hold `cols` elements.
    unsafe {
        if !p.dweight.is_null() {
            *p.dweight.add(col) = T::from_f32(weight_sum);
        }
        if !p.dbias.is_null() {
            *p.dbias.add(col) = T::from_f32(bias_sum);
        }
    }
}
