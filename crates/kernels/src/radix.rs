//! The order of radix sort keys: each key type's *ordered bits* (an unsigned integer of its width
//! whose order is the key's, [`RadixKey`]), the digits of those bits ([`RadixBits`]), and the
//! values a sort moves with its keys ([`SortValue`]). Thread scope: no cooperation; used by
//! the block radix sort and the device-wide sorts alike.

use crate::shared::SharedValue;
use gpu_primitives_abi::table::{Bf16, F16};

/// The unsigned integer a key maps to for the sort: `u8`, `u16`, `u32` or `u64`.
pub trait RadixBits: Copy + PartialOrd + crate::warp::Shuffle {
    /// How a tile keeps it in shared memory (`u16` for `u8`).
    type Slot: SharedValue;
    /// Bits in all: 8, 16, 32 or 64.
    const WIDTH: u32;
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// All bits set.
    const MAX: Self;
    /// The digit of `bits` bits (0 to 8) from bit `shift`.
    fn digit(self, shift: u32, bits: u32) -> u32;
    /// The bits from bit `shift` up, shifted down (zero for `shift == WIDTH`): the prefix a
    /// radix select has fixed so far.
    fn above(self, shift: u32) -> Self;
    /// This prefix followed by one more [`RADIX_BITS`](gpu_primitives_abi::layout::RADIX_BITS)
    /// digit (`self << RADIX_BITS | digit`; the prefix is shorter than the width).
    fn push_digit(self, digit: u32) -> Self;
    /// Bits `begin .. end` (`begin <= end <= WIDTH`), shifted down: what a sort by that bit
    /// range compares.
    fn bits_in(self, begin: u32, end: u32) -> Self;
    /// All bits inverted (a descending sort).
    fn invert(self) -> Self;
    /// Bits `begin .. end` set, the others clear (`begin <= end <= WIDTH`): keys compared
    /// through [`masked`](Self::masked) by it are in the order of their
    /// [`bits_in`](Self::bits_in) that range, for one `and` a key.
    fn range_mask(begin: u32, end: u32) -> Self;
    /// `self & mask`.
    fn masked(self, mask: Self) -> Self;
    /// Widened to 64 bits.
    fn to_u64(self) -> u64;
    /// `self - rhs`, wrapping around.
    fn wrapping_sub(self, rhs: Self) -> Self;
    /// `self + rhs`, wrapping around.
    fn wrapping_add(self, rhs: Self) -> Self;
    /// As kept in shared memory.
    fn to_slot(self) -> Self::Slot;
    /// Back from shared memory.
    fn from_slot(slot: Self::Slot) -> Self;
}

macro_rules! radix_bits {
    ($($t:ty => $slot:ty),*) => {$(
        impl RadixBits for $t {
            type Slot = $slot;
            const WIDTH: u32 = <$t>::BITS;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn digit(self, shift: u32, bits: u32) -> u32 {
                // A 0-bit digit (an empty bit range) may sit at shift == the width: the shift
                // wraps, and the mask is 0. No branch, so that a pass's mask is computed once.
                (self.wrapping_shr(shift) as u32) & ((1u32 << bits) - 1)
            }
            #[inline(always)]
            fn above(self, shift: u32) -> Self {
                if shift >= <$t>::BITS { 0 } else { self >> shift }
            }
            #[inline(always)]
            fn push_digit(self, digit: u32) -> Self {
                (((self as u64) << gpu_primitives_abi::layout::RADIX_BITS) | digit as u64) as $t
            }
            #[inline(always)]
            fn bits_in(self, begin: u32, end: u32) -> Self {
                let shifted = self.above(begin);
                if end - begin >= <$t>::BITS {
                    shifted
                } else {
                    shifted & ((1 as $t) << (end - begin)).wrapping_sub(1)
                }
            }
            #[inline(always)]
            fn invert(self) -> Self {
                !self
            }
            #[inline(always)]
            fn range_mask(begin: u32, end: u32) -> Self {
                Self::MAX.bits_in(begin, end).wrapping_shl(begin)
            }
            #[inline(always)]
            fn masked(self, mask: Self) -> Self {
                self & mask
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn wrapping_sub(self, rhs: Self) -> Self {
                <$t>::wrapping_sub(self, rhs)
            }
            #[inline(always)]
            fn wrapping_add(self, rhs: Self) -> Self {
                <$t>::wrapping_add(self, rhs)
            }
            #[inline(always)]
            fn to_slot(self) -> $slot {
                self as $slot
            }
            #[inline(always)]
            fn from_slot(slot: $slot) -> Self {
                slot as $t
            }
        }
    )*};
}
radix_bits!(u8 => u16, u16 => u16, u32 => u32, u64 => u64);

/// A key type of the radix sort and its order: [`to_ordered`](Self::to_ordered) maps keys to
/// unsigned integers of the same width, one to one, such that `a < b` in the key's order
/// exactly when `a.to_ordered() < b.to_ordered()`.
///
/// - unsigned integers: themselves;
/// - signed integers: the sign bit flipped;
/// - floats: IEEE 754 total order (every bit pattern distinct: -0.0 before +0.0), except that
///   NaNs go after +infinity whatever their sign: -inf .. -0.0, +0.0 .. +inf, then the NaNs
///   with the sign bit clear by payload, then those with it set by payload from the largest.
///   The total-order image is rotated down by the number of negative NaN patterns, which moves
///   them from the bottom to the top.
pub trait RadixKey: Copy {
    /// The unsigned image.
    type Bits: RadixBits;
    /// The key's ordered bits.
    fn to_ordered(self) -> Self::Bits;
    /// The key of ordered bits `bits`.
    fn from_ordered(bits: Self::Bits) -> Self;
    /// The ordered bits of the largest key that is not a NaN (+infinity for floats, the
    /// largest value for integers); every NaN's ordered bits are above them.
    #[inline(always)]
    fn largest_number() -> Self::Bits {
        <Self::Bits as RadixBits>::MAX
    }
}

macro_rules! unsigned_key {
    ($($t:ty),*) => {$(
        impl RadixKey for $t {
            type Bits = $t;
            #[inline(always)]
            fn to_ordered(self) -> $t {
                self
            }
            #[inline(always)]
            fn from_ordered(bits: $t) -> $t {
                bits
            }
        }
    )*};
}
unsigned_key!(u8, u16, u32, u64);

macro_rules! signed_key {
    ($($t:ty => $u:ty),*) => {$(
        impl RadixKey for $t {
            type Bits = $u;
            #[inline(always)]
            fn to_ordered(self) -> $u {
                (self as $u) ^ (1 << (<$u>::BITS - 1))
            }
            #[inline(always)]
            fn from_ordered(bits: $u) -> $t {
                (bits ^ (1 << (<$u>::BITS - 1))) as $t
            }
        }
    )*};
}
signed_key!(i32 => u32, i64 => u64);

/// The float keys' map from their bits `b` (see [`RadixKey`]): total order (`!b` for negative
/// values, `b` with the sign bit set for positive ones), minus the negative NaN patterns
/// (`mantissa`: the mantissa's mask), wrapping; `infinity` is the type's +infinity.
macro_rules! float_key {
    ($($t:ty => $u:ty, $from:expr, $to:expr, $mantissa:expr, $infinity:expr);* $(;)?) => {$(
        impl RadixKey for $t {
            type Bits = $u;
            #[inline(always)]
            fn to_ordered(self) -> $u {
                const SIGN: $u = 1 << (<$u>::BITS - 1);
                let b: $u = $from(self);
                let total = if b & SIGN != 0 { !b } else { b | SIGN };
                total.wrapping_sub($mantissa)
            }
            #[inline(always)]
            fn from_ordered(bits: $u) -> $t {
                const SIGN: $u = 1 << (<$u>::BITS - 1);
                let total = bits.wrapping_add($mantissa);
                $to(if total & SIGN != 0 { total & !SIGN } else { !total })
            }
            #[inline(always)]
            fn largest_number() -> $u {
                <$t>::to_ordered($infinity)
            }
        }
    )*};
}
float_key!(
    f32 => u32, f32::to_bits, f32::from_bits, 0x7f_ffff, f32::INFINITY;
    f64 => u64, f64::to_bits, f64::from_bits, 0xf_ffff_ffff_ffff, f64::INFINITY;
    F16 => u16, |k: F16| k.0, F16, 0x3ff, F16(0x7c00);
    Bf16 => u16, |k: Bf16| k.0, Bf16, 0x7f, Bf16(0x7f80);
);

/// A value the sort moves with its key: 4 or 8 bytes of any type, as its bits.
pub trait SortValue: SharedValue {
    /// The value of the key at input index `i` when the values are the indices (argsort).
    fn from_index(i: usize) -> Self;
}

impl SortValue for u32 {
    #[inline(always)]
    fn from_index(i: usize) -> u32 {
        i as u32
    }
}

impl SortValue for u64 {
    #[inline(always)]
    fn from_index(i: usize) -> u64 {
        i as u64
    }
}

/// The ordered bits of `key` for a sort in this direction (inverted when `descending`).
#[inline(always)]
pub fn ordered_bits<K: RadixKey>(key: K, descending: bool) -> K::Bits {
    let bits = key.to_ordered();
    if descending { bits.invert() } else { bits }
}

/// The key of ordered bits `bits` of a sort in this direction (the inverse of [`ordered_bits`]).
#[inline(always)]
pub fn key_of_ordered<K: RadixKey>(bits: K::Bits, descending: bool) -> K {
    K::from_ordered(if descending { bits.invert() } else { bits })
}

/// What turns a digit of a key's ascending ordered bits into the digit of its descending ones,
/// by exclusive or: all `bits` of the digit when `descending`, else 0. (Inverting the bits
/// inverts each digit's, the digit lying within the key's width.) So that the bits themselves
/// need not be inverted and back: the onesweep pass keeps ascending bits and flips digits.
#[inline(always)]
pub fn digit_flip(descending: bool, bits: u32) -> u32 {
    if descending { (1u32 << bits) - 1 } else { 0 }
}

/// A key of zero bits, the placeholder of registers a partial tile does not fill.
#[inline(always)]
pub fn zero_key<K: RadixKey>() -> K {
    // SAFETY: every key type is an integer or a float (or its bits) of 1 to 8 bytes, for which
    // zero bits are valid.
    unsafe { core::mem::zeroed() }
}

/// A zero of the exchange slot type (the initial value of registers that items past the end
/// leave unused).
#[inline(always)]
pub fn zero_slot<S: SharedValue>() -> S {
    // SAFETY: every slot type is an integer of 2, 4 or 8 bytes, for which zero bits are valid.
    unsafe { core::mem::zeroed() }
}
