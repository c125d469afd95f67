//! Cluster scope (sm_90 and later): the blocks of a *thread-block cluster*, which the hardware
//! runs at the same time on neighbouring multiprocessors, can wait for each other at a cluster
//! barrier and read each other's shared memory (*distributed shared memory*).
//!
//! Between [`block`](crate::block) and [`device`](crate::device) scope. A kernel is launched in
//! clusters when its PTX declares `.reqnctapercluster` (what CUDA C++'s `__cluster_dims__`
//! writes; `cargo xtask ptx` adds it to the kernels the registry `gpu_primitives_abi::families` gives a cluster shape); the grid is then a whole number
//! of clusters, and this crate's one-dimensional grids number a cluster's blocks
//! `cluster_idx() * cluster_blocks() + cluster_rank()` along x.
//!
//! Every function here needs sm_90 (PTX ISA 7.8): only a kernel compiled for it may call them
//! (`#[cfg(target_feature = "sm_90")]` on its entry point); an sm_80 module that reached one
//! would fail `ptxas`. Source: PTX ISA, "Cluster of Cooperative Thread Arrays", `mapa`,
//! `barrier.cluster`, and the special registers `%cluster_ctarank`, `%cluster_nctarank`,
//! `%clusterid`, `%nclusterid`.

use core::arch::asm;

/// This block's rank in its cluster, `0 .. cluster_blocks()` (`%cluster_ctarank`).
#[inline(always)]
pub fn cluster_rank() -> u32 {
    let rank: u32;
    // SAFETY: reads a special register; no memory is touched.
    unsafe { asm!("mov.u32 {r}, %cluster_ctarank;", r = out(reg32) rank, options(pure, nomem, nostack)) };
    rank
}

/// Blocks per cluster (`%cluster_nctarank`; 1 for a kernel launched without clusters).
#[inline(always)]
pub fn cluster_blocks() -> u32 {
    let blocks: u32;
    // SAFETY: reads a special register; no memory is touched.
    unsafe { asm!("mov.u32 {r}, %cluster_nctarank;", r = out(reg32) blocks, options(pure, nomem, nostack)) };
    blocks
}

/// Index of this block's cluster in the grid, x dimension (`%clusterid.x`).
#[inline(always)]
pub fn cluster_idx() -> u32 {
    let index: u32;
    // SAFETY: reads a special register; no memory is touched.
    unsafe { asm!("mov.u32 {r}, %clusterid.x;", r = out(reg32) index, options(pure, nomem, nostack)) };
    index
}

/// Clusters in the grid, x dimension (`%nclusterid.x`).
#[inline(always)]
pub fn cluster_count() -> u32 {
    let count: u32;
    // SAFETY: reads a special register; no memory is touched.
    unsafe { asm!("mov.u32 {r}, %nclusterid.x;", r = out(reg32) count, options(pure, nomem, nostack)) };
    count
}

/// Cluster barrier: waits until every thread of every block of the cluster has arrived
/// (`barrier.cluster.arrive`, then `barrier.cluster.wait`: by default release semantics on
/// arrival and acquire on the wait, the qualifiers PTX ISA 8.0 spells out), so each thread's
/// earlier shared-memory writes are seen by the cluster's threads after it. Not the `.aligned`
/// forms: they need no warp to be converged.
///
/// # Safety
/// Every thread of every block of the cluster reaches it the same number of times (no thread
/// may have exited): otherwise the cluster dead-locks. A block must not exit while another
/// block of its cluster may still read its shared memory: a last cluster barrier after the
/// last such read orders that.
#[inline(always)]
pub unsafe fn cluster_barrier() {
    // SAFETY: the caller guarantees the whole cluster reaches this call.
    unsafe {
        asm!(
            "barrier.cluster.arrive;",
            "barrier.cluster.wait;",
            options(nostack)
        )
    };
}

/// The `f32` at shared-window address `local` of this block, in block `rank` of the cluster
/// instead (`mapa.shared::cluster`, then `ld.shared::cluster`).
///
/// # Safety
/// `local` is a valid, aligned shared-memory address of this block's layout; `rank <
/// cluster_blocks()`; block `rank` wrote the value before a [`cluster_barrier`] this thread
/// has passed, and has not exited.
#[inline(always)]
pub unsafe fn read_f32_of_block(local: u32, rank: u32) -> f32 {
    let value: f32;
    // SAFETY: the caller's contract: a valid address in a running block of this cluster,
    // written before a barrier both passed.
    unsafe {
        asm!(
            "{{",
            ".reg .u32 remote;",
            "mapa.shared::cluster.u32 remote, {a}, {r};",
            "ld.shared::cluster.f32 {v}, [remote];",
            "}}",
            a = in(reg32) local,
            r = in(reg32) rank,
            v = out(reg32) value,
            options(nostack, readonly)
        )
    };
    value
}
