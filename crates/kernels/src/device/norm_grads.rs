//! The gradients of a norm's weight and bias: column sums over the rows of a row-major
//! `rows x cols` matrix, `dweight[c] = sum_r dy[r][c] * x^[r][c]` and `dbias[c] = sum_r dy[r][c]`
//! (`x^` the normalised item, from the forward's saved mean and rstd). The row operations'
//! backward (`device::rows`, `LayerNormBackward`, `RmsNormBackward`) gives `dx`; these two
//! launches give the rest, as PyTorch's LayerNorm backward does in its own kernels.
//!
//! - **Partial** ([`norm_grads_partial`]): each block takes
//!   [`NORM_GRAD_BLOCK`](gpu_primitives_abi::tuning::NORM_GRAD_BLOCK) consecutive
//!   columns (one per thread: a warp reads 32 consecutive items of a row, coalesced) and one
//!   chunk of rows, and sums down the chunk, four rows per step (eight loads in flight per
//!   thread); it writes the chunk's two sums per column.
//! - **Finish** ([`norm_grads_finish`]): one thread per column adds its chunks in chunk order.
//!
//! Every sum is in an order fixed by the shape (`tuning::norm_grad_chunks`), so the results are
//! the same bits from run to run, whatever the GPU.

use super::element::RowElement;
use crate::thread::{block_dim, block_idx, thread_idx};
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
            (dy * ((x - mean) * *p.rstd.add(r)), dy)
        }
    };
    let (mut weight_sum, mut bias_sum) = (0.0f32, 0.0f32);
    let mut r = first;
    while r + ROWS_PER_STEP <= end {
        let items: [(f32, f32); ROWS_PER_STEP] = core::array::from_fn(|k| item(r + k));
        for (w, b) in items {
            weight_sum += w;
            bias_sum += b;
        }
        r += ROWS_PER_STEP;
    }
    while r < end {
        let (w, b) = item(r);
        weight_sum += w;
        bias_sum += b;
        r += 1;
    }
    let at = 2 * (chunk * p.cols + col);
    // SAFETY: chunk < chunks and col < cols: within the 2 * chunks * cols partials.
    unsafe {
        *p.partials.add(at) = weight_sum;
        *p.partials.add(at + 1) = bias_sum;
    }
}

/// `dweight` and `dbias` (where not null) from the partials, each column's chunks added in
/// chunk order. See [`NormGradParams`].
///
/// # Safety
/// Launched as [`NormGradParams`] says, after [`norm_grads_partial`] on the same stream.
#[inline(always)]
pub unsafe fn norm_grads_finish<T: RowElement>(p: &NormGradParams<T>) {
    let col = (block_idx() * block_dim() + thread_idx()) as usize;
    if col >= p.cols {
        return;
    }
    let (mut weight_sum, mut bias_sum) = (0.0f32, 0.0f32);
    for chunk in 0..p.chunks as usize {
        let at = 2 * (chunk * p.cols + col);
        // SAFETY: within the partials, written by the launch before.
        unsafe {
            weight_sum += *p.partials.add(at);
            bias_sum += *p.partials.add(at + 1);
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
