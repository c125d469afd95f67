//! Per-tile status of the single-pass scan ([`super::scan`]): how a tile publishes its aggregate
//! or inclusive prefix, and how a later tile reads it.
//!
//! Every tile has one 64-bit *status word*: the high 32 bits are the flag `epoch << 2 | state`.
//! The epoch (a per-call number from the host) lets the words be reused across calls without
//! clearing: a word left by another call never matches.
//!
//! - **Packed** (4-byte values: f32, i32, u32): the low 32 bits hold the value itself, so one
//!   relaxed 64-bit store publishes flag and value together and one relaxed 64-bit load reads
//!   them. No fence is needed: nothing else is published through the word.
//! - **Split** (8-byte values: f64, i64, u64): the value goes to `values[2 * tile]` (aggregate)
//!   or `values[2 * tile + 1]` (inclusive prefix), written relaxed before the word is stored
//!   with release ordering; the reader loads the word with acquire ordering, then the value.
//!
//! Merrill & Garland ("Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA
//! NVR-2016-002) describe the packed form for values that fit beside the flag.

use crate::atomic::{AtomicWord, RelaxedAccess};

/// Tile state: its aggregate is published.
pub const STATE_AGGREGATE: u32 = 1;
/// Tile state: its inclusive prefix is published.
pub const STATE_PREFIX: u32 = 2;

/// Global memory the scan shares between blocks (all device pointers).
#[derive(Clone, Copy)]
pub struct TileStatus<A> {
    /// One status word per tile (see the module docs).
    pub words: *mut u64,
    /// Two values per tile (aggregate, inclusive prefix); used by the split layout only.
    pub values: *mut A,
    /// Tiles handed out, over all calls.
    pub tile_counter: *mut u64,
    /// `*tile_counter` before this call.
    pub tile_base: u64,
    /// This call's epoch, `1 .. 2^30`.
    pub epoch: u32,
}

/// A value type the scan's tile status can carry: packed beside the flag or split from it.
pub trait TileStatusValue: Copy {
    /// Publish `value` as `tile`'s aggregate (`STATE_AGGREGATE`) or inclusive prefix
    /// (`STATE_PREFIX`).
    ///
    /// # Safety
    /// `tile` is below the number of tiles the status arrays were sized for; one thread per tile
    /// publishes, the aggregate before the prefix.
    unsafe fn publish(status: &TileStatus<Self>, tile: usize, state: u32, value: Self);

    /// One read of `tile`'s status: `Some((state, value))` once it has one in this call's epoch.
    ///
    /// # Safety
    /// As [`publish`](Self::publish).
    unsafe fn try_read(status: &TileStatus<Self>, tile: usize) -> Option<(u32, Self)>;
}

#[inline(always)]
fn word_flag(status_epoch: u32, state: u32) -> u64 {
    ((status_epoch << 2 | state) as u64) << 32
}

macro_rules! packed {
    ($ty:ty, $to_bits:expr, $from_bits:expr) => {
        impl TileStatusValue for $ty {
            #[inline(always)]
            unsafe fn publish(status: &TileStatus<Self>, tile: usize, state: u32, value: Self) {
                let bits: u32 = $to_bits(value);
                // SAFETY: the caller guarantees tile is in range; the word carries the value.
                unsafe {
                    u64::store_relaxed(
                        status.words.add(tile),
                        word_flag(status.epoch, state) | bits as u64,
                    )
                };
            }
            #[inline(always)]
            unsafe fn try_read(status: &TileStatus<Self>, tile: usize) -> Option<(u32, Self)> {
                // SAFETY: the caller guarantees tile is in range.
                let word = unsafe { u64::load_relaxed(status.words.add(tile)) };
                let flag = (word >> 32) as u32;
                (flag >> 2 == status.epoch).then(|| (flag & 3, $from_bits(word as u32)))
            }
        }
    };
}
packed!(f32, f32::to_bits, f32::from_bits);
packed!(u32, |v: u32| v, |b: u32| b);
packed!(i32, |v: i32| v as u32, |b: u32| b as i32);

macro_rules! split {
    ($ty:ty) => {
        impl TileStatusValue for $ty {
            #[inline(always)]
            unsafe fn publish(status: &TileStatus<Self>, tile: usize, state: u32, value: Self) {
                let slot = 2 * tile + (state == STATE_PREFIX) as usize;
                // SAFETY: the caller guarantees tile is in range; the release store orders the
                // value before the word that announces it.
                unsafe {
                    <$ty>::store_relaxed(status.values.add(slot), value);
                    u64::store_release(status.words.add(tile), word_flag(status.epoch, state));
                }
            }
            #[inline(always)]
            unsafe fn try_read(status: &TileStatus<Self>, tile: usize) -> Option<(u32, Self)> {
                // SAFETY: the caller guarantees tile is in range; acquire orders the value's
                // load after the word's.
                let flag = (unsafe { u64::load_acquire(status.words.add(tile)) } >> 32) as u32;
                if flag >> 2 != status.epoch {
                    return None;
                }
                let state = flag & 3;
                let slot = 2 * tile + (state == STATE_PREFIX) as usize;
                // SAFETY: as above; the value was published before the word.
                Some((state, unsafe {
                    <$ty>::load_relaxed(status.values.add(slot))
                }))
            }
        }
    };
}
split!(f64);
split!(i64);
split!(u64);
