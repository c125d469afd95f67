//! The reduction of a *row group*: a power-of-two group of threads, from part of a warp to the
//! whole block, that combines a few `f32` statistics ([`Stats`]) so that every thread of the
//! group ends with the same bits ([`RowGroup::all`]). The row operations
//! ([`device::rows`](crate::device::rows)) take a group per row; their cluster kernels (sm_90)
//! combine the blocks' results further over the cluster ([`cluster_all`]).
//!
//! Groups of up to a warp are aligned segments of a warp and reduce with shuffles down a tree;
//! a larger group is the block: each warp's tree, one barrier through shared memory, then every
//! warp combines the warps' values the same way.
//!
//! [`cluster_all`] is of cluster scope but lives here, beside the [`Stats`] it combines and the
//! row group whose result it takes: [`cluster`](crate::cluster) imports no module of the crate
//! (and [`shared`](crate::shared) reads other blocks' shared memory through it), so a reduction
//! over shared arrays there would make the two import each other.

use crate::cluster::cluster_barrier;
use crate::policy::ROWS;
use crate::shared::SharedArray;
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, lane_id, thread_idx};
use crate::warp::Shuffle;
use gpu_primitives_abi::layout::{MAX_WARPS, ROW_STATS};

/// A row operation's statistics: `N` `f32` values (at most [`ROW_STATS`]).
pub trait Stats: Copy {
    /// Number of values.
    const LEN: usize;
    /// Value `k`.
    fn get(&self, k: usize) -> f32;
    /// The values `f(0), f(1), ...`.
    fn from_fn(f: impl FnMut(usize) -> f32) -> Self;
}

impl<const N: usize> Stats for [f32; N] {
    const LEN: usize = {
        assert!(N as u32 <= ROW_STATS, "at most ROW_STATS statistics");
        N
    };
    #[inline(always)]
    fn get(&self, k: usize) -> f32 {
        self[k]
    }
    #[inline(always)]
    fn from_fn(f: impl FnMut(usize) -> f32) -> Self {
        core::array::from_fn(f)
    }
}

/// The threads that hold one row: `threads` of them (a power of two).
///
/// Groups of up to a warp are aligned segments of a warp; a larger group is the whole block.
pub struct RowGroup {
    threads: u32,
    slots: SharedArray<f32>,
    set: u32,
}

impl RowGroup {
    /// `threads` per row, exchanging through `slots` ([`ROW_SHARED_BYTES`] of `f32`, used only
    /// when a group is larger than a warp).
    ///
    /// [`ROW_SHARED_BYTES`]: gpu_primitives_abi::layout::ROW_SHARED_BYTES
    #[inline(always)]
    pub fn new(threads: u32, slots: SharedArray<f32>) -> Self {
        Self {
            threads,
            slots,
            set: 0,
        }
    }

    /// `combine` of every thread's `value` over the group, in an order fixed by the group size.
    ///
    /// - **Who calls:** every thread of the block, together (all of each warp's groups).
    /// - **Result valid in:** every thread of the group, the same bits in each.
    /// - `combine` must be associative, with `identity` its identity; it need not be
    ///   commutative.
    /// - **Cost:** `log2(min(group, 32))` shuffle steps; a group of more than a warp adds one
    ///   barrier and `log2(warps)` more steps (each warp combines the warps' values the same
    ///   way, so no second barrier is needed).
    ///
    /// # Safety
    /// Every thread of the block calls it with the same group size; groups of more than a warp
    /// span the whole block (the call contains a barrier). Consecutive calls may reuse the
    /// slots: two sets alternate, and each call's barrier orders the reads of the call before.
    #[inline(always)]
    pub unsafe fn all<S: Stats>(&mut self, value: S, identity: S, combine: impl Fn(S, S) -> S) -> S {
        let width = if self.threads < WARP_SIZE {
            self.threads
        } else {
            WARP_SIZE
        };
        // SAFETY: every lane of each warp calls this (the caller's contract).
        let value = unsafe { tree(value, width, width, &combine) };
        if self.threads <= WARP_SIZE {
            return value;
        }
        let base = self.set * ROW_STATS * MAX_WARPS;
        self.set ^= 1;
        let lane = lane_id();
        if lane == 0 {
            let warp = thread_idx() / WARP_SIZE;
            for k in 0..S::LEN {
                // SAFETY: within ROW_SHARED_BYTES (k < ROW_STATS, warp < MAX_WARPS).
                unsafe { self.slots.write(base + k as u32 * MAX_WARPS + warp, value.get(k)) };
            }
        }
        // SAFETY: the whole block calls this (the group is the block).
        unsafe { block_barrier() };
        let warps = self.threads / WARP_SIZE;
        let mine = if lane < warps {
            // SAFETY: written by warp `lane`'s lane 0 before the barrier.
            S::from_fn(|k| unsafe { self.slots.read(base + k as u32 * MAX_WARPS + lane) })
        } else {
            identity
        };
        // SAFETY: every lane of the warp calls this; lane 0 ends with every warp's values.
        unsafe { tree(mine, warps, WARP_SIZE, &combine) }
    }
}

/// `combine` over aligned segments of `width` lanes (a power of two), down a tree (lane 0 of
/// each segment ends with its total, combined in lane order), then broadcast from lane 0 of
/// each segment of `broadcast` lanes (`width` or more): every lane of it gets the same bits.
///
/// # Safety
/// Every lane of the warp calls it, with the same `width` and `broadcast`.
#[inline(always)]
unsafe fn tree<S: Stats>(value: S, width: u32, broadcast: u32, combine: &impl Fn(S, S) -> S) -> S {
    let mut value = value;
    let mut offset = 1;
    while offset < width {
        // SAFETY: every lane of the warp shuffles (the caller's contract).
        let other = S::from_fn(|k| unsafe { value.get(k).shuffle_down(offset, width, u32::MAX) });
        value = combine(value, other);
        offset *= 2;
    }
    // SAFETY: as above; lane 0 of each segment holds its total.
    S::from_fn(|k| unsafe { value.get(k).shuffle_idx(0, broadcast, u32::MAX) })
}

/// `combine` of each block's `value` (the same bits in every thread of the block) over the
/// [`RowPolicy::cluster_blocks`](gpu_primitives_abi::tuning::RowPolicy::cluster_blocks) blocks of this block's thread-block cluster, in rank order: every
/// thread of the cluster gets the same bits. Thread 0 of each block leaves its value in its
/// block's `slots` (set `set` of two), a cluster barrier, then every thread reads each block's
/// through distributed shared memory: [`RowPolicy::cluster_blocks`](gpu_primitives_abi::tuning::RowPolicy::cluster_blocks) x [`ROW_STATS`] loads a thread,
/// once a row.
///
/// # Safety
/// Every thread of every block of the cluster calls it, as many times, with `set` alternating
/// between calls (the barrier of the call between orders one call's reads before the next
/// writes of the same set); `slots` is `2 * ROW_STATS` `f32` at the same place in every block,
/// used by nothing else; a block does not exit before a last [`cluster_barrier`] after its last
/// call (others may still read its slots). Needs sm_90.
#[inline(always)]
pub unsafe fn cluster_all<S: Stats>(
    value: S,
    slots: SharedArray<f32>,
    set: u32,
    combine: impl Fn(S, S) -> S,
) -> S {
    let base = set * ROW_STATS;
    if thread_idx() == 0 {
        for k in 0..S::LEN {
            // SAFETY: within the slots (k < ROW_STATS); only this thread writes them, and no
            // block reads this set before the barrier below.
            unsafe { slots.write(base + k as u32, value.get(k)) };
        }
    }
    // SAFETY: the whole cluster calls this (the caller's contract).
    unsafe { cluster_barrier() };
    // SAFETY: written by thread 0 of block `rank` before the barrier just passed; that block
    // runs until the last cluster barrier (the caller's contract).
    let of_block = |rank: u32| S::from_fn(|k| unsafe { slots.read_of_block(rank, base + k as u32) });
    let mut total = of_block(0);
    for rank in 1..ROWS.cluster_blocks {
        total = combine(total, of_block(rank));
    }
    total
}
