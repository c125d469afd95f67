//! Probe kernels: each exercises one device-layer primitive so that the GPU tests can check it
//! against a CPU model, one lane at a time.

use crate::atomic::{AtomicAdd, AtomicMinMax, AtomicWord};
use crate::thread::{global_idx, lane_id, warp_member_mask};
use crate::warp::{Shuffle, warp_all, warp_any, warp_ballot};

macro_rules! shuffle_probe {
    ($name:ident, $ty:ty) => {
        /// `out[i]` = the shuffle of `input[i]` in mode `mode` (0 down, 1 up, 2 xor, 3 idx) with
        /// operand `b` and segment `width`, over the lanes of each warp that exist in the block.
        ///
        /// Launch: any grid, any block size; `input` and `out` hold `grid * block` elements.
        ///
        /// # Safety
        /// As above; `width` is a power of two in 1..=32.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            input: *const $ty,
            out: *mut $ty,
            mode: u32,
            b: u32,
            width: u32,
        ) {
            let i = global_idx();
            let mask = warp_member_mask();
            // SAFETY: i < grid * block, the buffers' length.
            let v = unsafe { *input.add(i) };
            // SAFETY: every existing lane of the warp takes the same branch with `mask`.
            let r = unsafe {
                match mode {
                    0 => v.shuffle_down(b, width, mask),
                    1 => v.shuffle_up(b, width, mask),
                    2 => v.shuffle_xor(b, width, mask),
                    _ => v.shuffle_idx(b, width, mask),
                }
            };
            // SAFETY: as the read.
            unsafe { *out.add(i) = r };
        }
    };
}
shuffle_probe!(probe_shuffle_f32, f32);
shuffle_probe!(probe_shuffle_i32, i32);
shuffle_probe!(probe_shuffle_u32, u32);
shuffle_probe!(probe_shuffle_f64, f64);
shuffle_probe!(probe_shuffle_i64, i64);
shuffle_probe!(probe_shuffle_u64, u64);

/// For each thread `i` with predicate `pred[i] != 0`: `out[3i] = ballot`, `out[3i+1] = any`,
/// `out[3i+2] = all`, over the existing lanes of its warp. Also writes `lane_id()` to `lanes[i]`.
///
/// # Safety
/// `pred` and `lanes` hold `grid * block` elements, `out` three times that.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn probe_vote(pred: *const u32, out: *mut u32, lanes: *mut u32) {
    let i = global_idx();
    let mask = warp_member_mask();
    // SAFETY: i is in bounds; the whole warp calls the votes with `mask`.
    unsafe {
        let p = *pred.add(i) != 0;
        *out.add(3 * i) = warp_ballot(p, mask);
        *out.add(3 * i + 1) = warp_any(p, mask) as u32;
        *out.add(3 * i + 2) = warp_all(p, mask) as u32;
        *lanes.add(i) = lane_id();
    }
}

macro_rules! atomic_probe {
    ($name:ident, $ty:ty) => {
        /// Every thread `i < n` applies `input[i]` to `acc`: `acc[0] += x`, `acc[1] = min`,
        /// `acc[2] = max`. The host initialises `acc` to (0, MAX, MIN).
        ///
        /// # Safety
        /// `input` holds `n` elements, `acc` three.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(input: *const $ty, acc: *mut $ty, n: usize) {
            let i = global_idx();
            if i < n {
                // SAFETY: i < n; `acc` holds three elements.
                unsafe {
                    let x = *input.add(i);
                    <$ty>::atomic_add(acc, x);
                    <$ty>::atomic_min(acc.add(1), x);
                    <$ty>::atomic_max(acc.add(2), x);
                }
            }
        }
    };
}
atomic_probe!(probe_atomics_u32, u32);
atomic_probe!(probe_atomics_i32, i32);
atomic_probe!(probe_atomics_u64, u64);
atomic_probe!(probe_atomics_i64, i64);

/// Float atomic add: every thread `i < n` adds `input[i]` to `acc[0]` (f32) and to `acc64[0]`
/// (f64, `input` widened).
///
/// # Safety
/// `input` holds `n` elements; `acc` and `acc64` one each.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn probe_atomic_add_float(
    input: *const f32,
    acc: *mut f32,
    acc64: *mut f64,
    n: usize,
) {
    let i = global_idx();
    if i < n {
        // SAFETY: i < n; the accumulators hold one element each.
        unsafe {
            let x = *input.add(i);
            f32::atomic_add(acc, x);
            f64::atomic_add(acc64, x as f64);
        }
    }
}

/// Compare-and-swap and release / acquire: each of `n` threads takes a ticket by a CAS loop on
/// `counter` (u32) and by CAS on `counter64` (u64), writes its ticket to `tickets[i]` and
/// `tickets64[i]`, then publishes with a release store to `flags[ticket]` read back with acquire.
/// The tickets must be a permutation of 0..n.
///
/// # Safety
/// `tickets`, `tickets64` and `flags` hold `n` elements; the counters one each, zeroed.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn probe_cas(
    counter: *mut u32,
    counter64: *mut u64,
    tickets: *mut u32,
    tickets64: *mut u64,
    flags: *mut u32,
    n: usize,
) {
    let i = global_idx();
    if i >= n {
        return;
    }
    // SAFETY: the counters are valid; i < n and tickets are < n (each CAS success hands out
    // one distinct value below the number of threads that ran, at most n).
    unsafe {
        let mut seen = u32::load_acquire(counter);
        loop {
            let prev = u32::atomic_cas(counter, seen, seen + 1);
            if prev == seen {
                break;
            }
            seen = prev;
        }
        *tickets.add(i) = seen;
        let mut seen64 = u64::load_acquire(counter64);
        loop {
            let prev = u64::atomic_cas(counter64, seen64, seen64 + 1);
            if prev == seen64 {
                break;
            }
            seen64 = prev;
        }
        *tickets64.add(i) = seen64;
        u32::store_release(flags.add(seen as usize), 1);
        let _ = u32::load_acquire(flags.add(seen as usize));
    }
}
