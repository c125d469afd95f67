//! The puzzles of SEEDS.md that are not whole algorithms elsewhere: warp sum (p24), the
//! butterfly exchanges (p26), and block sum / broadcast mean normalisation (p27).

use crate::block::{
    BlockBroadcastStorage, BlockReduceStorage, BlockScanStorage, block_broadcast, block_inclusive_scan,
    block_reduce,
};
use crate::op::{Max, Min, ReduceOp, Sum};
use crate::shared_array;
use crate::thread::{WARP_SIZE, block_dim, global_idx, lane_id, thread_idx};
use crate::warp::{Shuffle, warp_reduce_all, warp_sum};

/// Puzzle 24: `output[0] = sum(input[0..WARP_SIZE])` by one warp with `shuffle_down`.
///
/// Launch: one block of `WARP_SIZE` threads.
///
/// # Safety
/// `input` holds `WARP_SIZE` f32, `output` one.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn p24_warp_sum(input: *const f32, output: *mut f32) {
    // SAFETY: one full warp; thread_idx() < WARP_SIZE.
    unsafe {
        let total = warp_sum(*input.add(thread_idx() as usize));
        if lane_id() == 0 {
            *output = total;
        }
    }
}

/// Puzzle 26, pair swap: `output[i] = input[i ^ 1]` with `shuffle_xor(value, 1)`.
///
/// Launch: blocks of `WARP_SIZE` threads; `input` and `output` hold `grid * WARP_SIZE` f32.
///
/// # Safety
/// As above.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn p26_pair_swap(input: *const f32, output: *mut f32) {
    let i = global_idx();
    // SAFETY: full warps (block of WARP_SIZE); i is in bounds.
    unsafe { *output.add(i) = (*input.add(i)).shuffle_xor(1, WARP_SIZE, u32::MAX) };
}

/// Puzzle 26, parallel max: every lane gets the warp's maximum after `log2(WARP_SIZE)` butterfly
/// steps (offsets WARP_SIZE/2, ..., 2, 1).
///
/// Launch: blocks of `WARP_SIZE` threads; buffers of `grid * WARP_SIZE` f32.
///
/// # Safety
/// As above.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn p26_warp_max(input: *const f32, output: *mut f32) {
    let i = global_idx();
    // SAFETY: full warps; i is in bounds.
    unsafe { *output.add(i) = warp_reduce_all::<f32, Max>(*input.add(i)) };
}

/// Puzzle 26, conditional max / min: one butterfly computes the warp's max and min together;
/// even lanes write the max, odd lanes the min.
///
/// Launch: blocks of `WARP_SIZE` threads (SIZE_2 = 64: two blocks); buffers of `grid * WARP_SIZE`.
///
/// # Safety
/// As above.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn p26_max_min(input: *const f32, output: *mut f32) {
    let i = global_idx();
    // SAFETY: i is in bounds.
    let v = unsafe { *input.add(i) };
    let (mut max, mut min) = (v, v);
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // SAFETY: full warps, all lanes in lock-step.
        let (other_max, other_min) = unsafe {
            (
                max.shuffle_xor(offset, WARP_SIZE, u32::MAX),
                min.shuffle_xor(offset, WARP_SIZE, u32::MAX),
            )
        };
        max = <Max as ReduceOp<f32>>::combine(max, other_max);
        min = <Min as ReduceOp<f32>>::combine(min, other_min);
        offset /= 2;
    }
    // SAFETY: i is in bounds.
    unsafe { *output.add(i) = if lane_id().is_multiple_of(2) { max } else { min } };
}

/// Puzzle 27, mean normalisation: `output[i] = input[i] / mean(input)` with `block_reduce` (sum in
/// thread 0), thread 0 computing the mean (a zero mean gives all-zero output instead of a
/// division by zero), and `block_broadcast` from thread 0. Thread 0 also writes
/// `stats = [sum, mean]`.
///
/// Launch: one block of `n` threads (`n` in 1..=1024).
///
/// # Safety
/// `input` and `output` hold `n` f32, `stats` two.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn p27_mean_normalize(input: *const f32, output: *mut f32, stats: *mut f32) {
    let reduce_slots = shared_array!(P27_REDUCE: [f32; BlockReduceStorage::<f32>::SLOTS as usize]);
    let broadcast_slot = shared_array!(P27_BROADCAST: [f32; BlockBroadcastStorage::<f32>::SLOTS as usize]);
    let t = thread_idx();
    // SAFETY: t < n = block_dim().
    let x = unsafe { *input.add(t as usize) };
    // SAFETY: the whole block calls it.
    let sum = unsafe { block_reduce::<f32, Sum>(x, BlockReduceStorage::new(reduce_slots)) };
    let mut mean = 0.0;
    if t == 0 {
        mean = sum / block_dim() as f32;
        // SAFETY: `stats` holds two f32.
        unsafe { (*stats, *stats.add(1)) = (sum, mean) };
    }
    // SAFETY: the whole block calls it; a different storage from the reduction's.
    let mean = unsafe { block_broadcast(mean, 0, BlockBroadcastStorage::new(broadcast_slot)) };
    let normalized = if mean != 0.0 { x / mean } else { 0.0 };
    // SAFETY: t < n.
    unsafe { *output.add(t as usize) = normalized };
}

/// Puzzle 27, prefix sum: `output[i] = input[0] + ... + input[i]` with `block_inclusive_scan`
/// (one item per thread): each thread's running position.
///
/// Launch: one block of `n` threads (`n` in 1..=1024).
///
/// # Safety
/// `input` and `output` hold `n` f32.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn p27_prefix_sum(input: *const f32, output: *mut f32) {
    let slots = shared_array!(P27_SCAN: [f32; BlockScanStorage::<f32>::SLOTS as usize]);
    let t = thread_idx() as usize;
    // SAFETY: t < n; the whole block calls the scan.
    unsafe {
        let mut items = [*input.add(t)];
        block_inclusive_scan::<f32, Sum, 1>(&mut items, BlockScanStorage::new(slots));
        *output.add(t) = items[0];
    }
}
