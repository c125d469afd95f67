//! The sort's key types: [`SortKey`] (its order, as the kernels sort and as the CPU reference
//! compares) for every key type of the table, and [`SORT_KEY_NAMES`].

use gpu_primitives_runtime::DeviceCopy;
use std::cmp::Ordering;

mod sealed {
    pub trait Key {}
}

/// A key type of the radix sort: `u8`, `u16`, `u32`, `i32`, `f32`, `u64`, `i64`, `f64`,
/// `f16`, `bf16`.
///
/// **Order.** Integers in their natural order. Floats in IEEE 754 total order (-0.0 before
/// +0.0, every bit pattern distinct), except that every NaN sorts after +infinity whatever its
/// sign: ascending, `-inf .. -0.0, +0.0 .. +inf`, then NaNs with the sign bit clear by payload,
/// then those with it set by payload from the largest. Keys come out bit for bit as they went in.
pub trait SortKey: Copy + Send + Sync + std::fmt::Debug + 'static + sealed::Key {
    /// How it is stored on the device (`u16` bits for f16 / bf16).
    type Raw: DeviceCopy + bytemuck::Pod + Default + PartialEq + std::fmt::Debug;
    /// Kernel-name part: "u32", "f16", ...
    const NAME: &'static str;
    /// Bits of the key: the most a bit range may cover.
    const BITS: u32;
    /// Keys per thread of the block radix sort's tile (the segmented sort sorts a segment of up
    /// to `SORT_BLOCK * ITEMS` keys in one block).
    const ITEMS: usize;
    /// Keys per thread of a onesweep pass's tile (`onesweep_threads(..) * ONESWEEP_KEYS_ITEMS`
    /// keys), keys alone.
    const ONESWEEP_KEYS_ITEMS: usize;
    /// As [`ONESWEEP_KEYS_ITEMS`](Self::ONESWEEP_KEYS_ITEMS), keys with 4-byte values.
    const ONESWEEP_V4_ITEMS: usize;
    /// As [`ONESWEEP_KEYS_ITEMS`](Self::ONESWEEP_KEYS_ITEMS), keys with 8-byte values.
    const ONESWEEP_V8_ITEMS: usize;
    /// The value payloads ("keys", "v4", "v8") whose onesweep passes also come with small
    /// tiles, with their keys per thread (tiles of `onesweep_threads(.., true)` threads), taken
    /// for inputs too short for the larger tiles ([`onesweep_small_tiles`](gpu_primitives_abi::planning::sort::onesweep_small_tiles)).
    const ONESWEEP_SMALL: &'static [(&'static str, usize)];
    /// The sort's order (see the trait's docs), computed on the host (the CPU reference).
    fn sort_cmp(&self, other: &Self) -> Ordering;
    /// The key's *ordered bits* (widened to `u64`): the unsigned image whose order is
    /// [`sort_cmp`](Self::sort_cmp); a bit range selects bits of it.
    fn ordered_bits(self) -> u64;
    /// The values as the device stores them.
    fn as_raw(values: &[Self]) -> &[Self::Raw];
    /// Stored values as keys.
    fn from_raw(values: &[Self::Raw]) -> &[Self];
}

/// The sort order of floats (see [`SortKey`]): non-NaN values by total order, then NaNs with
/// the sign bit clear by payload, then those with it set by payload from the largest.
fn float_cmp(a_nan: bool, b_nan: bool, total: Ordering, (a_bits, b_bits): (u64, u64), sign: u64) -> Ordering {
    match (a_nan, b_nan) {
        (false, false) => total,
        (false, true) => Ordering::Less,
        (true, false) => Ordering::Greater,
        (true, true) => {
            let (a_neg, b_neg) = (a_bits & sign != 0, b_bits & sign != 0);
            a_neg.cmp(&b_neg).then(if a_neg {
                b_bits.cmp(&a_bits)
            } else {
                a_bits.cmp(&b_bits)
            })
        }
    }
}

/// The ordered bits of a float of `width` bits `b` with a `mantissa` mask: total order,
/// rotated down by the negative NaNs (as the kernels compute it).
fn float_ordered_bits(b: u64, width: u32, mantissa: u64) -> u64 {
    let sign = 1u64 << (width - 1);
    let all = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let total = if b & sign != 0 { !b & all } else { b | sign };
    total.wrapping_sub(mantissa) & all
}

macro_rules! key_order {
    (u8, $k:ident) => {
        key_order! { @uint $k }
    };
    (u16, $k:ident) => {
        key_order! { @uint $k }
    };
    (u32, $k:ident) => {
        key_order! { @uint $k }
    };
    (u64, $k:ident) => {
        key_order! { @uint $k }
    };
    (i32, $k:ident) => {
        key_order! { @int $k, u32 }
    };
    (i64, $k:ident) => {
        key_order! { @int $k, u64 }
    };
    (f32, $k:ident) => {
        key_order! { @float $k, $k.to_bits() as u64, 32, 0x7f_ffff }
    };
    (f64, $k:ident) => {
        key_order! { @float $k, $k.to_bits(), 64, 0xf_ffff_ffff_ffff }
    };
    (f16, $k:ident) => {
        key_order! { @float $k, $k.to_bits() as u64, 16, 0x3ff }
    };
    (bf16, $k:ident) => {
        key_order! { @float $k, $k.to_bits() as u64, 16, 0x7f }
    };
    (@uint $k:ident) => {
        fn sort_cmp(&self, other: &Self) -> Ordering {
            self.cmp(other)
        }
        fn ordered_bits(self) -> u64 {
            self as u64
        }
    };
    (@int $k:ident, $u:ty) => {
        fn sort_cmp(&self, other: &Self) -> Ordering {
            self.cmp(other)
        }
        fn ordered_bits(self) -> u64 {
            ((self as $u) ^ (1 << (<$u>::BITS - 1))) as u64
        }
    };
    (@float $k:ident, $bits:expr, $width:literal, $mantissa:literal) => {
        fn sort_cmp(&self, other: &Self) -> Ordering {
            let bits = |$k: Self| $bits;
            float_cmp(
                self.is_nan(),
                other.is_nan(),
                self.total_cmp(other),
                (bits(*self), bits(*other)),
                1 << ($width - 1),
            )
        }
        fn ordered_bits(self) -> u64 {
            let $k = self;
            float_ordered_bits($bits, $width, $mantissa)
        }
    };
}

macro_rules! sort_keys_impl {
    ([] $($name:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
          $v4_items:literal, $v8_items:literal, $small:tt;)*) => {
        $(
            impl sealed::Key for crate::host_type!($name) {}
            impl SortKey for crate::host_type!($name) {
                type Raw = $stored;
                const NAME: &'static str = stringify!($name);
                const BITS: u32 = <$bits>::BITS;
                const ITEMS: usize = $items;
                const ONESWEEP_KEYS_ITEMS: usize = $keys_items;
                const ONESWEEP_V4_ITEMS: usize = $v4_items;
                const ONESWEEP_V8_ITEMS: usize = $v8_items;
                const ONESWEEP_SMALL: &'static [(&'static str, usize)] =
                    gpu_primitives_abi::small_tiles_list!($small);
                key_order!($name, k);
                fn as_raw(values: &[Self]) -> &[$stored] {
                    bytemuck::cast_slice(values)
                }
                fn from_raw(values: &[$stored]) -> &[Self] {
                    bytemuck::cast_slice(values)
                }
            }
        )*
        /// The name of every sort key type, in table order (for the CLI and the benchmark).
        pub const SORT_KEY_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}
gpu_primitives_abi::sort_key_table!(sort_keys_impl);
