//! Per-tile status of the single-pass scan ([`super::scan`]): how a tile publishes its aggregate
//! or inclusive prefix, and how a later tile reads it.
//!
//! Every tile's status carries a *flag*, `epoch << 2 | state`, and a value, written together by one
//! relaxed store and read together by one relaxed load: no fence and no acquire / release is
//! needed, as nothing else is published through the status. The epoch (a per-call number from
//! the host) lets the status be reused across calls without clearing: one left by another call
//! never matches.
//!
//! - **4-byte values** (f32, i32, u32): one 64-bit word per tile, the flag in the high 32 bits
//!   and the value's bits in the low 32 ([`RelaxedAccess`] on u64).
//! - **8-byte values** (f64, i64, u64): 16 bytes per tile, the flag in the first word and the
//!   value's bits in the second, stored and loaded as one 16-byte access
//!   ([`load_relaxed_pair`], which states the hardware assumption this makes, as CUB does).
//!
//! Merrill & Garland ("Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA
//! NVR-2016-002) describe this packing of flag and value for values that fit beside the flag.

use core::marker::PhantomData;

use crate::atomic::{RelaxedAccess, load_relaxed_pair, store_relaxed_pair};
pub use gpu_primitives_abi::params::LookBackStatus;

/// Tile state: its aggregate is published.
pub const STATE_AGGREGATE: u32 = 1;
/// Tile state: its inclusive prefix is published.
pub const STATE_PREFIX: u32 = 2;

/// Global memory the scan shares between blocks: a launch's [`LookBackStatus`] (the slots,
/// 16 bytes per tile and 16-byte aligned, where 4-byte values use the first 8 bytes per tile as
/// one word per tile, see the module docs; the tile counter; its value at the call's start; the
/// call's epoch), typed by the value it carries.
#[derive(Clone, Copy)]
pub struct TileStatus<A> {
    /// The launch's look-back parameters, as the host wrote them.
    pub launch: LookBackStatus,
    /// The value type the status carries.
    pub value: PhantomData<A>,
}

impl<A> From<LookBackStatus> for TileStatus<A> {
    /// The status a launch's [`LookBackStatus`] parameter describes.
    #[inline(always)]
    fn from(launch: LookBackStatus) -> Self {
        Self {
            launch,
            value: PhantomData,
        }
    }
}

/// A value type the scan's tile status can carry beside its flag: in one 64-bit word (4-byte
/// values) or one 16-byte pair (8-byte values).
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

/// The flag word of `state` in `epoch`.
#[inline(always)]
pub(crate) fn encode_flag(epoch: u32, state: u32) -> u32 {
    epoch << 2 | state
}

/// The state a flag word holds, or `None` when it is from another epoch.
#[inline(always)]
pub(crate) fn decode_flag(epoch: u32, flag: u32) -> Option<u32> {
    (flag >> 2 == epoch).then_some(flag & 3)
}

/// `(state, value bits)` of a flag and its value, or `None` when the flag is from another epoch.
#[inline(always)]
fn decode<B>(epoch: u32, flag: u32, bits: B) -> Option<(u32, B)> {
    decode_flag(epoch, flag).map(|state| (state, bits))
}

macro_rules! packed_in_word {
    ($ty:ty, $to_bits:expr, $from_bits:expr) => {
        impl TileStatusValue for $ty {
            #[inline(always)]
            unsafe fn publish(status: &TileStatus<Self>, tile: usize, state: u32, value: Self) {
                let word = (encode_flag(status.launch.epoch, state) as u64) << 32 | $to_bits(value) as u64;
                // SAFETY: the caller guarantees tile is in range; 8 bytes per tile fit the slots.
                unsafe { u64::store_relaxed(status.launch.slots.add(tile), word) };
            }
            #[inline(always)]
            unsafe fn try_read(status: &TileStatus<Self>, tile: usize) -> Option<(u32, Self)> {
                // SAFETY: the caller guarantees tile is in range.
                let word = unsafe { u64::load_relaxed(status.launch.slots.add(tile)) };
                decode(status.launch.epoch, (word >> 32) as u32, word as u32)
                    .map(|(state, bits)| (state, $from_bits(bits)))
            }
        }
    };
}
packed_in_word!(f32, f32::to_bits, f32::from_bits);
packed_in_word!(u32, |v: u32| v, |b: u32| b);
packed_in_word!(i32, |v: i32| v as u32, |b: u32| b as i32);

macro_rules! packed_in_pair {
    ($ty:ty, $to_bits:expr, $from_bits:expr) => {
        impl TileStatusValue for $ty {
            #[inline(always)]
            unsafe fn publish(status: &TileStatus<Self>, tile: usize, state: u32, value: Self) {
                let pair = [
                    encode_flag(status.launch.epoch, state) as u64,
                    $to_bits(value),
                ];
                // SAFETY: the caller guarantees tile is in range; the slots are 16-byte aligned,
                // 16 bytes per tile.
                unsafe { store_relaxed_pair(status.launch.slots.cast::<[u64; 2]>().add(tile), pair) };
            }
            #[inline(always)]
            unsafe fn try_read(status: &TileStatus<Self>, tile: usize) -> Option<(u32, Self)> {
                let pairs = status.launch.slots.cast::<[u64; 2]>();
                // SAFETY: as in publish.
                let [flag, bits] = unsafe { load_relaxed_pair(pairs.add(tile)) };
                decode(status.launch.epoch, flag as u32, bits).map(|(state, bits)| (state, $from_bits(bits)))
            }
        }
    };
}
packed_in_pair!(f64, f64::to_bits, f64::from_bits);
packed_in_pair!(u64, |v: u64| v, |b: u64| b);
packed_in_pair!(i64, |v: i64| v as u64, |b: u64| b as i64);
