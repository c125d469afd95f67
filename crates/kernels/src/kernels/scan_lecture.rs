//! The parallel-scan lecture's algorithms, each scanning one *section* per block in shared
//! memory, plus the add-back kernel of the hierarchical scan of any length.
//!
//! | kernel | section | passes | adds | barriers per pass |
//! |---|---|---|---|---|
//! | [`scan_kogge_stone`] | `block_dim()` | log2 | O(n log n) | 2 |
//! | [`scan_kogge_stone_double_buffered`] | `block_dim()` | log2 | O(n log n) | 1 |
//! | [`scan_brent_kung`] | `2 * block_dim()` | 2 log2 | 2(n - 1) | 1 |
//!
//! All take `(input, output, section_totals, n, exclusive)`: `output[i]` is the inclusive (or,
//! with `exclusive != 0`, exclusive) scan of `input` *within its section*; if `section_totals` is
//! not null, the block's thread 0 writes the section's total to `section_totals[block]`.
//! The exclusive variant shifts by one on load (element 0 of each section loads the identity).
//! Hierarchical scan (host side): scan sections with totals, scan the totals (recursively), then
//! [`scan_add_section_prefixes`]. f32 sums; dynamic shared memory as each kernel states.

use crate::shared::{SharedArray, dynamic_shared};
use crate::sync::block_barrier;
use crate::thread::{block_dim, block_idx, global_idx, thread_idx};

/// Load element `i` of the section's input for an inclusive or shifted (exclusive) scan; 0.0
/// (the identity) outside `0..n`.
#[inline(always)]
unsafe fn load_shifted(input: *const f32, i: usize, section_start: usize, n: usize, exclusive: bool) -> f32 {
    let src = if exclusive {
        if i == section_start {
            return 0.0;
        }
        i - 1
    } else {
        i
    };
    // SAFETY: src < n is checked; the caller passes n = input length.
    if src < n { unsafe { *input.add(src) } } else { 0.0 }
}

/// Write the section total: the last scanned value, plus the last input for an exclusive scan.
#[inline(always)]
unsafe fn write_total(
    totals: *mut f32,
    last_scanned: f32,
    input: *const f32,
    last: usize,
    n: usize,
    exclusive: bool,
) {
    if totals.is_null() {
        return;
    }
    let last_input = if exclusive && last < n {
        // SAFETY: last < n.
        unsafe { *input.add(last) }
    } else {
        0.0
    };
    // SAFETY: `totals` holds one value per block.
    unsafe { *totals.add(block_idx() as usize) = last_scanned + last_input };
}

/// A Kogge-Stone thread's last step: write its scanned value `mine` (element `i`) if `i < n`; the
/// section's last thread also writes the section total.
#[inline(always)]
unsafe fn store_kogge_stone(
    input: *const f32,
    output: *mut f32,
    section_totals: *mut f32,
    mine: f32,
    i: usize,
    n: usize,
    exclusive: bool,
) {
    // SAFETY: i < n is checked; `write_total` needs what the kernels' contracts give.
    unsafe {
        if i < n {
            *output.add(i) = mine;
        }
        if thread_idx() == block_dim() - 1 {
            write_total(section_totals, mine, input, i, n, exclusive);
        }
    }
}

/// Kogge-Stone, two barriers per pass: for stride = 1, 2, 4, ... < block_dim(), thread t >= stride
/// reads `XY[t - stride]` into a register, all threads wait, then it adds, and all wait again.
///
/// Launch: any block size; dynamic shared memory `block_dim() * 4` bytes; `ceil(n / block)` blocks.
///
/// # Safety
/// `input` and `output` hold `n` f32; `section_totals` is null or holds one f32 per block.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn scan_kogge_stone(
    input: *const f32,
    output: *mut f32,
    section_totals: *mut f32,
    n: usize,
    exclusive: u32,
) {
    // SAFETY: the launch provides block_dim() f32 of dynamic shared memory.
    let xy: SharedArray<f32> = unsafe { dynamic_shared(0) };
    let (t, i) = (thread_idx(), global_idx());
    let section_start = i - t as usize;
    // SAFETY: each thread writes its own slot before the first barrier.
    unsafe { xy.write(t, load_shifted(input, i, section_start, n, exclusive != 0)) };
    let mut stride = 1;
    while stride < block_dim() {
        // SAFETY: uniform loop: the whole block reaches both barriers; the read of t - stride
        // happens between them and the write after the second, so no thread reads a slot in
        // the pass it is written.
        unsafe {
            block_barrier();
            let earlier = if t >= stride { xy.read(t - stride) } else { 0.0 };
            block_barrier();
            if t >= stride {
                xy.write(t, xy.read(t) + earlier);
            }
        }
        stride *= 2;
    }
    // SAFETY: own slot, written in the last pass; the caller's pointers as the kernel's contract.
    unsafe { store_kogge_stone(input, output, section_totals, xy.read(t), i, n, exclusive != 0) };
}

/// Kogge-Stone, double-buffered: each pass reads buffer A and writes buffer B, then the two swap,
/// so one barrier per pass suffices.
///
/// Launch: any block size; dynamic shared memory `2 * block_dim() * 4` bytes.
///
/// # Safety
/// As [`scan_kogge_stone`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn scan_kogge_stone_double_buffered(
    input: *const f32,
    output: *mut f32,
    section_totals: *mut f32,
    n: usize,
    exclusive: u32,
) {
    // SAFETY: the launch provides 2 * block_dim() f32 of dynamic shared memory.
    let both: SharedArray<f32> = unsafe { dynamic_shared(0) };
    let mut src = both.slice(0, block_dim());
    let mut dst = both.slice(block_dim(), block_dim());
    let (t, i) = (thread_idx(), global_idx());
    // SAFETY: own slot; the barrier publishes it.
    unsafe {
        src.write(t, load_shifted(input, i, i - t as usize, n, exclusive != 0));
        block_barrier();
    }
    let mut stride = 1;
    while stride < block_dim() {
        // SAFETY: this pass reads only `src` and writes only `dst` (own slot); the barrier ends
        // the pass before the buffers swap roles. Uniform loop.
        unsafe {
            let value = if t >= stride {
                src.read(t - stride) + src.read(t)
            } else {
                src.read(t)
            };
            dst.write(t, value);
            block_barrier();
        }
        core::mem::swap(&mut src, &mut dst);
        stride *= 2;
    }
    // SAFETY: `src` holds the final pass, published by the last barrier.
    unsafe { store_kogge_stone(input, output, section_totals, src.read(t), i, n, exclusive != 0) };
}

/// Brent-Kung: each thread loads two elements (`t` and `t + block_dim()`) of a section of
/// `2 * block_dim()`; an up-sweep builds a reduction tree in place (index
/// `(t + 1) * 2 * stride - 1` adds `index - stride`), a down-sweep distributes the partial sums
/// (index `(t + 1) * 2 * stride - 1` adds into `index + stride`).
///
/// Launch: `block_dim()` a power of two; dynamic shared memory `2 * block_dim() * 4` bytes;
/// `ceil(n / (2 * block))` blocks.
///
/// # Safety
/// As [`scan_kogge_stone`], with one total per section of `2 * block_dim()`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn scan_brent_kung(
    input: *const f32,
    output: *mut f32,
    section_totals: *mut f32,
    n: usize,
    exclusive: u32,
) {
    // SAFETY: the launch provides 2 * block_dim() f32 of dynamic shared memory.
    let xy: SharedArray<f32> = unsafe { dynamic_shared(0) };
    let t = thread_idx();
    let section = 2 * block_dim();
    let start = block_idx() as usize * section as usize;
    // SAFETY: two own slots; published by the first barrier of the up-sweep.
    unsafe {
        xy.write(
            t,
            load_shifted(input, start + t as usize, start, n, exclusive != 0),
        );
        let second = t + block_dim();
        xy.write(
            second,
            load_shifted(input, start + second as usize, start, n, exclusive != 0),
        );
    }
    let mut stride = 1;
    while stride <= block_dim() {
        // SAFETY: uniform loop; in each pass the slots written (index) and read (index - stride,
        // index) belong to one thread only, and the barrier orders the passes.
        unsafe {
            block_barrier();
            let index = (t + 1) * 2 * stride - 1;
            if index < section {
                xy.write(index, xy.read(index) + xy.read(index - stride));
            }
        }
        stride *= 2;
    }
    let mut stride = section / 4;
    while stride > 0 {
        // SAFETY: as the up-sweep.
        unsafe {
            block_barrier();
            let index = (t + 1) * 2 * stride - 1;
            if index + stride < section {
                xy.write(index + stride, xy.read(index + stride) + xy.read(index));
            }
        }
        stride /= 2;
    }
    // SAFETY: the barrier publishes the last pass; writes stay below n.
    unsafe {
        block_barrier();
        for k in [t, t + block_dim()] {
            if start + (k as usize) < n {
                *output.add(start + k as usize) = xy.read(k);
            }
        }
        if t == block_dim() - 1 {
            let last = start + section as usize - 1;
            write_total(
                section_totals,
                xy.read(section - 1),
                input,
                last,
                n,
                exclusive != 0,
            );
        }
    }
}

/// Hierarchical scan, add-back: `output[i] += scanned_totals[s - 1]` for element `i` of section
/// `s > 0` (`s = i / section_len`), where `scanned_totals` is the inclusive scan of the sections'
/// totals.
///
/// Launch: one thread per element, any shape (grid-stride).
///
/// # Safety
/// `output` holds `n` f32; `scanned_totals` one per section.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn scan_add_section_prefixes(
    output: *mut f32,
    scanned_totals: *const f32,
    n: usize,
    section_len: usize,
) {
    let mut i = global_idx();
    while i < n {
        let section = i / section_len;
        if section > 0 {
            // SAFETY: i < n; section - 1 < number of sections.
            unsafe { *output.add(i) += *scanned_totals.add(section - 1) };
        }
        i += crate::thread::grid_stride();
    }
}
