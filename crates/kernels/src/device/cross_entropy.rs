//! Cross-entropy's mean: how many rows take part (their target is not the ignore index), and
//! the summed loss divided by it. The rows' losses and the gradient are a row operation
//! (`device::rows::CrossEntropy`); the sum between the two launches here is the device reduce.

use crate::atomic::AtomicAdd;
use crate::thread::{global_idx, grid_stride, lane_id};
use crate::warp::reduce::warp_sum;
use gpu_primitives_abi::params::TargetCountParams;

/// Add the number of `targets` that are not `ignore_index` to `*valid_targets`: a grid-stride
/// count per thread, a warp sum, one atomic add per warp (integers: the total does not depend
/// on the order).
///
/// # Safety
/// Launched as [`TargetCountParams`] says: whole warps; `targets` holds `rows` values;
/// `valid_targets` is one zeroed `u32`.
#[inline(always)]
pub unsafe fn count_valid_targets(p: &TargetCountParams) {
    let mut count = 0u32;
    let mut i = global_idx();
    while i < p.rows {
        // SAFETY: i < rows.
        count += (unsafe { *p.targets.add(i) } != p.ignore_index) as u32;
        i += grid_stride();
    }
    // SAFETY: every lane of the warp reaches it (whole warps, the loop above is per thread).
    let total = unsafe { warp_sum(count) };
    if lane_id() == 0 && total > 0 {
        // SAFETY: one u32 (the caller's contract).
        unsafe { u32::atomic_add(p.valid_targets, total) };
    }
}

/// `*loss /= *valid_targets` by the grid's first thread (NaN for a count of 0, as `0 / 0`).
///
/// # Safety
/// Launched after the count and the sum, on the same stream.
#[inline(always)]
pub unsafe fn mean_loss(p: &TargetCountParams) {
    if global_idx() == 0 {
        // SAFETY: one f32 and one u32 (the caller's contract).
        unsafe { *p.loss /= *p.valid_targets as f32 };
    }
}
