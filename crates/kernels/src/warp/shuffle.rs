//! Warp shuffles: read a register of another lane (`shfl.sync`).
//!
//! One trait, [`Shuffle`], for 32-bit (`f32`, `i32`, `u32`) and 64-bit (`f64`, `i64`, `u64`)
//! values. PTX moves 32 bits per shuffle, so a 64-bit value takes two: it is split into halves,
//! each half shuffled, and rejoined.
//!
//! `width` (a power of two, 1..=WARP_SIZE) splits the warp into independent segments of `width`
//! lanes, as in CUDA's `__shfl_*_sync(mask, v, x, width)`; lanes read only within their segment.
//!
//! | function | source lane (within the segment) | if the source lies outside |
//! |---|---|---|
//! | `shuffle_down(v, d)` | `lane + d` | own value |
//! | `shuffle_up(v, d)` | `lane - d` | own value |
//! | `shuffle_xor(v, m)` | `lane ^ m` | own value |
//! | `shuffle_idx(v, s)` | `s` | - |
//!
//! # Safety (every function)
//! - Every lane in `member_mask` executes the same shuffle with the same mask; the calling lane
//!   is in the mask.
//! - A lane that reads from a lane outside `member_mask` gets an undefined value: callers
//!   working on partial warps must ignore it.
//! - `width` is a power of two in `1..=WARP_SIZE`.

use crate::thread::WARP_SIZE;
use core::arch::asm;

/// The packed `c` operand of `shfl.sync`: segment mask in bits 8..12, clamp lane in bits 0..4.
#[inline(always)]
const fn clamp_operand(width: u32, clamp: u32) -> u32 {
    ((WARP_SIZE - width) << 8) | clamp
}

macro_rules! shfl_b32 {
    ($name:ident, $mode:literal) => {
        #[inline(always)]
        unsafe fn $name(bits: u32, b: u32, c: u32, member_mask: u32) -> u32 {
            let out: u32;
            // SAFETY: the caller upholds the module's shuffle contract (mask, convergence).
            unsafe {
                asm!(
                    concat!("shfl.sync.", $mode, ".b32 {o}, {v}, {b}, {c}, {m};"),
                    o = out(reg32) out,
                    v = in(reg32) bits,
                    b = in(reg32) b,
                    c = in(reg32) c,
                    m = in(reg32) member_mask,
                    options(nostack, nomem),
                )
            };
            out
        }
    };
}
shfl_b32!(shfl_down_b32, "down");
shfl_b32!(shfl_up_b32, "up");
shfl_b32!(shfl_xor_b32, "bfly");
shfl_b32!(shfl_idx_b32, "idx");

/// The four shuffle modes, on 32 bits.
#[derive(Clone, Copy)]
enum Mode {
    Down,
    Up,
    Xor,
    Idx,
}

#[inline(always)]
unsafe fn shuffle_b32(mode: Mode, bits: u32, b: u32, width: u32, member_mask: u32) -> u32 {
    // SAFETY: (all arms) forwarded from the caller.
    unsafe {
        match mode {
            Mode::Down => shfl_down_b32(bits, b, clamp_operand(width, WARP_SIZE - 1), member_mask),
            Mode::Up => shfl_up_b32(bits, b, clamp_operand(width, 0), member_mask),
            Mode::Xor => shfl_xor_b32(bits, b, clamp_operand(width, WARP_SIZE - 1), member_mask),
            Mode::Idx => shfl_idx_b32(bits, b, clamp_operand(width, WARP_SIZE - 1), member_mask),
        }
    }
}

/// A value that can be moved between lanes of a warp. Implemented for `u8`, `u16`, `f32`,
/// `i32`, `u32` (one 32-bit shuffle) and `f64`, `i64`, `u64` (two).
pub trait Shuffle: Copy {
    /// Move the value through 32-bit shuffles of the given mode.
    #[doc(hidden)]
    unsafe fn shuffle_raw(self, mode_b: (u8, u32), width: u32, member_mask: u32) -> Self;

    /// The value of lane `lane + delta` of this segment (own value if that is past its end).
    ///
    /// # Safety
    /// See the [module docs](self).
    #[inline(always)]
    unsafe fn shuffle_down(self, delta: u32, width: u32, member_mask: u32) -> Self {
        // SAFETY: forwarded from the caller.
        unsafe { self.shuffle_raw((0, delta), width, member_mask) }
    }

    /// The value of lane `lane - delta` of this segment (own value if that is before its start).
    ///
    /// # Safety
    /// See the [module docs](self).
    #[inline(always)]
    unsafe fn shuffle_up(self, delta: u32, width: u32, member_mask: u32) -> Self {
        // SAFETY: forwarded from the caller.
        unsafe { self.shuffle_raw((1, delta), width, member_mask) }
    }

    /// The value of lane `lane ^ lane_mask` (the butterfly exchange).
    ///
    /// # Safety
    /// See the [module docs](self).
    #[inline(always)]
    unsafe fn shuffle_xor(self, lane_mask: u32, width: u32, member_mask: u32) -> Self {
        // SAFETY: forwarded from the caller.
        unsafe { self.shuffle_raw((2, lane_mask), width, member_mask) }
    }

    /// The value of lane `src_lane` of this segment (a broadcast when all lanes pass the same).
    ///
    /// # Safety
    /// See the [module docs](self).
    #[inline(always)]
    unsafe fn shuffle_idx(self, src_lane: u32, width: u32, member_mask: u32) -> Self {
        // SAFETY: forwarded from the caller.
        unsafe { self.shuffle_raw((3, src_lane), width, member_mask) }
    }
}

#[inline(always)]
fn mode_of(code: u8) -> Mode {
    match code {
        0 => Mode::Down,
        1 => Mode::Up,
        2 => Mode::Xor,
        _ => Mode::Idx,
    }
}

macro_rules! shuffle_32 {
    ($($t:ty),*) => {$(
        impl Shuffle for $t {
            #[inline(always)]
            unsafe fn shuffle_raw(self, (code, b): (u8, u32), width: u32, mask: u32) -> Self {
                // SAFETY: forwarded from the caller.
                let bits = unsafe { shuffle_b32(mode_of(code), self.to_bits_u32(), b, width, mask) };
                <$t>::from_bits_u32(bits)
            }
        }
    )*};
}
macro_rules! shuffle_64 {
    ($($t:ty),*) => {$(
        impl Shuffle for $t {
            #[inline(always)]
            unsafe fn shuffle_raw(self, (code, b): (u8, u32), width: u32, mask: u32) -> Self {
                let bits = self.to_bits_u64();
                let mode = mode_of(code);
                // SAFETY: forwarded from the caller; both halves take the same path.
                let (lo, hi) = unsafe {
                    (
                        shuffle_b32(mode, bits as u32, b, width, mask),
                        shuffle_b32(mode, (bits >> 32) as u32, b, width, mask),
                    )
                };
                <$t>::from_bits_u64(((hi as u64) << 32) | lo as u64)
            }
        }
    )*};
}

/// Bit casts between a value and its 32- or 64-bit pattern.
trait Bits32 {
    fn to_bits_u32(self) -> u32;
    fn from_bits_u32(b: u32) -> Self;
}
trait Bits64 {
    fn to_bits_u64(self) -> u64;
    fn from_bits_u64(b: u64) -> Self;
}
impl Bits32 for f32 {
    fn to_bits_u32(self) -> u32 {
        self.to_bits()
    }
    fn from_bits_u32(b: u32) -> Self {
        f32::from_bits(b)
    }
}
impl Bits32 for u32 {
    fn to_bits_u32(self) -> u32 {
        self
    }
    fn from_bits_u32(b: u32) -> Self {
        b
    }
}
impl Bits32 for i32 {
    fn to_bits_u32(self) -> u32 {
        self as u32
    }
    fn from_bits_u32(b: u32) -> Self {
        b as i32
    }
}
impl Bits32 for u16 {
    fn to_bits_u32(self) -> u32 {
        self as u32
    }
    fn from_bits_u32(b: u32) -> Self {
        b as u16
    }
}
impl Bits32 for u8 {
    fn to_bits_u32(self) -> u32 {
        self as u32
    }
    fn from_bits_u32(b: u32) -> Self {
        b as u8
    }
}
impl Bits64 for f64 {
    fn to_bits_u64(self) -> u64 {
        self.to_bits()
    }
    fn from_bits_u64(b: u64) -> Self {
        f64::from_bits(b)
    }
}
impl Bits64 for u64 {
    fn to_bits_u64(self) -> u64 {
        self
    }
    fn from_bits_u64(b: u64) -> Self {
        b
    }
}
impl Bits64 for i64 {
    fn to_bits_u64(self) -> u64 {
        self as u64
    }
    fn from_bits_u64(b: u64) -> Self {
        b as i64
    }
}

shuffle_32!(u8, u16, f32, u32, i32);
shuffle_64!(f64, u64, i64);
