//! The one table of element types and operators.
//!
//! Each macro here calls a callback macro (by name, in scope where it is called) with the rows.
//! Generated from this file: the device entry points (crates/kernels `kernels/device.rs`), the
//! host's `Element`, `Operator` and `ScanOperator` impls and its `ELEMENT_NAMES` /
//! `OPERATOR_NAMES` (crates/gpu-primitives `device/element.rs`; the benchmark's type and
//! operator lists), and [`DEVICE_KERNELS`], the names the PTX checks look for. Still written by
//! hand: the device arithmetic of a new kind of type, the CLI's and the benchmark's dispatch from
//! a name to a type, and the GPU tests' type lists (docs/architecture.md has the steps).
//!
//! [`element_table!`](crate::element_table) passes, per type:
//!
//! ```text
//! name => device type, stored as, accumulated in, vector width, scan items per thread, kind;
//! ```
//!
//! - *name*: the kernel-name fragment and the host type's name (`f16` is `half::f16` there);
//! - *device type*: the type the kernels read (`F16` / `Bf16`, the bits of a half, defined here);
//! - *stored as*: what a device buffer of it holds on the host side (`u16` bits for halves);
//! - *accumulated in*: the type reduce / scan combine and return (`f32` for halves);
//! - *vector width*: elements per 16-byte load of the reduce kernels;
//! - *scan items per thread*: a scan tile is `SCAN_BLOCK * items` elements;
//! - *kind*: `int`, `float`, or `half` (a float accumulated in a wider type): which families
//!   exist for it (dot products for floats and halves; argmin / argmax second passes for types
//!   accumulated in themselves).
//!
//! [`operator_table!`](crate::operator_table) passes `name => type;` for the operators every element type has (`Sum`,
//! `Min`, `Max`: associative and commutative), [`scan_operator_table!`](crate::scan_operator_table) the scan-only ones with
//! the element types they take (`Affine`: associative, not commutative).

/// The bits of an IEEE 754 binary16 value, as the kernels read it (`half::f16` on the host).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct F16(pub u16);

/// The bits of a bfloat16 value, as the kernels read it (`half::bf16` on the host).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Bf16(pub u16);

/// Calls `$callback! { [args] name => device, stored, acc, vector, items, kind; ... }` with every
/// element type (see the [module docs](self)); `args` are the tokens after the callback's name.
#[macro_export]
macro_rules! element_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            f32 => f32, f32, f32, 4, 32, float;
            f64 => f64, f64, f64, 2, 8, float;
            i32 => i32, i32, i32, 4, 32, int;
            u32 => u32, u32, u32, 4, 32, int;
            i64 => i64, i64, i64, 2, 16, int;
            u64 => u64, u64, u64, 2, 16, int;
            f16 => $crate::table::F16, u16, f32, 8, 64, half;
            bf16 => $crate::table::Bf16, u16, f32, 8, 32, half;
        }
    };
}

/// Calls `$callback! { [args] name => Type; ... }` with the operators every element type has.
#[macro_export]
macro_rules! operator_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            sum => Sum;
            min => Min;
            max => Max;
        }
    };
}

/// Calls `$callback! { [args] name => Type: element names; ... }` with the scan-only operators.
#[macro_export]
macro_rules! scan_operator_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            affine => Affine: u32, u64;
        }
    };
}

/// Calls `$callback! { [args] name => device type, stored as, level, vector width; ... }` with
/// every sample type of the histograms (`device::histogram`): the element table's 4-byte and
/// narrower types and `f64`, plus `u8` and `u16`, which only the histograms read.
///
/// - *level*: the type bin levels are given in and samples compared in: `i64` for every integer
///   (so that `u8` samples can have the level 256 and `u32` samples 2^32), `f32` for `f32`,
///   `f16` and `bf16`, `f64` for `f64`;
/// - *vector width*: samples per 16-byte load.
#[macro_export]
macro_rules! histogram_sample_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            u8 => u8, u8, i64, 16;
            u16 => u16, u16, i64, 8;
            i32 => i32, i32, i64, 4;
            u32 => u32, u32, i64, 4;
            f16 => $crate::table::F16, u16, f32, 8;
            bf16 => $crate::table::Bf16, u16, f32, 8;
            f32 => f32, f32, f32, 4;
            f64 => f64, f64, f64, 2;
        }
    };
}

/// Calls `$callback! { [args] name => type; ... }` with the counter types of the histograms.
#[macro_export]
macro_rules! histogram_counter_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            u32 => u32;
            u64 => u64;
        }
    };
}

/// Calls `$callback! { [args] name => type, vector width; ... }` with the key types of the scans
/// by key (`device::scan_by_key`): keys compare by their bits, so `u32` serves `i32` keys too
/// and `u64` serves `i64`.
#[macro_export]
macro_rules! scan_key_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            u32 => u32, 4;
            u64 => u64, 2;
        }
    };
}

/// Calls `$callback! { [args] name => device type, vector width; ... }` with the element types
/// of the segmented argmin / argmax (`device::segmented_argmin`): those accumulated in 4 bytes,
/// whose (value, index) pair fits the tile status beside its segment.
#[macro_export]
macro_rules! segment_arg_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            f32 => f32, 4;
            i32 => i32, 4;
            u32 => u32, 4;
            f16 => $crate::table::F16, 8;
            bf16 => $crate::table::Bf16, 8;
        }
    };
}

/// Calls `$callback! { [args] name => device type, stored as, ordered bits, block items, onesweep
/// keys items, onesweep v4 items, onesweep v8 items, [small tiles: payload items, ...]; ... }` with every key type
/// of the radix sort (`device::radix_sort`):
///
/// - *ordered bits*: the unsigned integer of the key's width that the key maps to, keeping its
///   order (the digits are taken from it);
/// - *block items*: keys per thread of the block radix sort's tile (the segmented sort sorts a
///   segment of up to `SORT_BLOCK * items` keys in one block);
/// - *onesweep keys items* / *onesweep v4 items* / *onesweep v8 items*: keys per thread of a
///   onesweep pass's tile (`onesweep_threads(..) * items` keys), keys alone / with 4-byte values / with
///   8-byte values (the value payloads of `sort_value_table!`). H100, 2^28 random keys: 4-byte
///   keys alone at 20 (80 registers, 56 bytes spilled) 33.9 Gkeys/s against 31.6 at 16 (no
///   spill); with `u32` values at 24 (24 bytes spilled) 25.4 Gpairs/s against 22.0 at 16; with
///   8-byte values 24 spills 120 bytes (ptxas), so they stay at 16. The sort's seventh version,
///   `u32` values: 28 (128 registers, no spill) 3 % faster than 24 at 2^28 (9267 against 9562
///   µs); 32 spilled 228 bytes then; 16 at 3 blocks a multiprocessor (80 registers) 20 %
///   slower. Since the eighth version (keys stored as they are ranked) 32 fit in 128
///   registers without a spill (sm_80 and sm_90): 2.1 % faster than 28 at 2^28 on an H100
///   (8955 against 9148 µs), 3.4 % on an H200 (7314 against 7575; CUB 3.0 7432), 1.3-1.5 % at
///   2^24, and 2^20 now takes the 32-key tiles (128 of them) at 72 µs against 73-76. 8-byte
///   keys alone: 24 at 2 blocks a multiprocessor (128 registers, no spill;
///   `SORT_WIDE_KEYS_BLOCKS_PER_SM`) 8 to 10 % faster than 12 at 4 (64 registers) at 2^28 on
///   an H100 (session 44); 16 at 4 had spilled and measured the same as 12. Pairs at 2 blocks
///   (128 registers or fewer, no spill, sm_80 and sm_90; session 45, H100, 2^28, best of two):
///   8-byte keys with 4-byte values 20 against 12, 27767 -> 25402 µs (-8.5 %; CUB 3.0 24914),
///   with 8-byte values 16 against 12, 33987 -> 32590 (-4.1 %; CUB 31877); 4-byte keys with
///   8-byte values 20 against 16, 13057 -> 12638 (-3.2 %; CUB 12550). 34 and 36 keys a thread
///   with 4-byte keys and values leave the tile's arrays in local memory (544-568 bytes of
///   stack, 40 registers: LLVM does not keep them in registers). Since session 46 the 8-byte
///   keys with values run blocks of 384 threads
///   ([`SORT_WIDE_PAIRS_BLOCK`](crate::tuning::SORT_WIDE_PAIRS_BLOCK)) at 2 a multiprocessor,
///   80 registers: 15 keys a thread with 4-byte values (4 bytes spilled on sm_90), 12 with
///   8-byte values (15 spilled 64 bytes).
/// - *small tiles*: `payload items` for each value payload that also has a pass of shorter
///   tiles (`device_radix_sort_onesweep_<values>_small_<key>`, blocks of
///   [`onesweep_threads`](crate::tuning::onesweep_threads)`(.., true)` = 256 threads of
///   `items` keys), taken for inputs too short for the larger tiles to spread over every
///   multiprocessor or, for the 384-thread passes, that fit in one wave of the small ones
///   ([`onesweep_small_tiles`](crate::tuning::onesweep_small_tiles)). The 8-byte keys with
///   values keep session 45's 256-thread tiles as their small ones (20 keys a thread with
///   4-byte values, 16 with 8-byte values; 128 registers, no spill). Checked when the table
///   compiles: each listed payload once, its small tiles shorter than its larger ones.
#[macro_export]
macro_rules! sort_key_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            u8 => u8, u8, u8, 16, 16, 16, 16, [];
            u16 => u16, u16, u16, 16, 16, 16, 16, [];
            u32 => u32, u32, u32, 16, 20, 32, 20, [keys 16, v4 16, v8 16];
            i32 => i32, i32, u32, 16, 20, 32, 20, [keys 16, v4 16, v8 16];
            f32 => f32, f32, u32, 16, 20, 32, 20, [keys 16, v4 16, v8 16];
            u64 => u64, u64, u64, 12, 24, 15, 12, [keys 12, v4 20, v8 16];
            i64 => i64, i64, u64, 12, 24, 15, 12, [keys 12, v4 20, v8 16];
            f64 => f64, f64, u64, 12, 24, 15, 12, [keys 12, v4 20, v8 16];
            f16 => $crate::table::F16, u16, u16, 16, 16, 16, 16, [];
            bf16 => $crate::table::Bf16, u16, u16, 16, 16, 16, 16, [];
        }
    };
}

/// Calls `$callback! { [args] name => value type; ... }` with the value payloads of the radix
/// sort: `keys` (no values), `v4` and `v8` (any value of 4 or 8 bytes, moved as its bits).
#[macro_export]
macro_rules! sort_value_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            keys => u32;
            v4 => u32;
            v8 => u64;
        }
    };
}

/// The PTX name of a radix sort kernel: `device_radix_sort_histogram_<key>` (the upfront count
/// of every pass's digits), `device_radix_sort_onesweep_<values>_<key>` (one digit pass) or
/// `device_segmented_radix_sort_<values>_<key>` (the segments past the warp merge tier, one block
/// each), `device_segmented_warp_merge_sort_<values>_<key>` (the segments of 513 to 2048 keys, a
/// group of 2 or 4 warps each, their tiles merged), `device_segmented_warp_radix_sort_<values>_<key>` (129 to 512
/// keys, one warp each, a tile in shared memory), `device_segmented_warp_sort_<values>_<key>`
/// (the short segments, one warp each, in registers) or
/// `device_top_k_<key>` (top-k of rows by radix select).
#[macro_export]
macro_rules! radix_sort_kernel_name {
    (histogram, $key:ident) => {
        concat!("device_radix_sort_histogram_", stringify!($key))
    };
    (segmented, $key:ident, $values:ident) => {
        concat!(
            "device_segmented_radix_sort_",
            stringify!($values),
            "_",
            stringify!($key)
        )
    };
    (segmented_warp_merge, $key:ident, $values:ident) => {
        concat!(
            "device_segmented_warp_merge_sort_",
            stringify!($values),
            "_",
            stringify!($key)
        )
    };
    (segmented_warp_radix, $key:ident, $values:ident) => {
        concat!(
            "device_segmented_warp_radix_sort_",
            stringify!($values),
            "_",
            stringify!($key)
        )
    };
    (segmented_warp, $key:ident, $values:ident) => {
        concat!(
            "device_segmented_warp_sort_",
            stringify!($values),
            "_",
            stringify!($key)
        )
    };
    (top_k, $key:ident) => {
        concat!("device_top_k_", stringify!($key))
    };
    (onesweep, $key:ident, $values:ident) => {
        concat!(
            "device_radix_sort_onesweep_",
            stringify!($values),
            "_",
            stringify!($key)
        )
    };
    (onesweep_small, $key:ident, $values:ident) => {
        concat!(
            "device_radix_sort_onesweep_",
            stringify!($values),
            "_small_",
            stringify!($key)
        )
    };
}

macro_rules! onesweep_names {
    ([$key:ident, [$($small:ident $small_items:literal),*]] $($values:ident => $ty:ty;)*) => {
        &[
            $($crate::radix_sort_kernel_name!(onesweep, $key, $values),)*
            $($crate::radix_sort_kernel_name!(onesweep_small, $key, $small),)*
            $($crate::radix_sort_kernel_name!(segmented, $key, $values),)*
            $($crate::radix_sort_kernel_name!(segmented_warp_merge, $key, $values),)*
            $($crate::radix_sort_kernel_name!(segmented_warp, $key, $values),)*
            $($crate::radix_sort_kernel_name!(segmented_warp_radix, $key, $values),)*
            $crate::radix_sort_kernel_name!(top_k, $key),
        ]
    };
}

macro_rules! onesweep_bounds {
    ([$key:ident, $bits:ty, [$($small:ident $small_items:literal),*]] $($values:ident => $ty:ty;)*) => {
        &[
            $(onesweep_bound(
                $crate::radix_sort_kernel_name!(onesweep, $key, $values),
                size_of::<$bits>(),
                stringify!($values),
                false,
            ),)*
            $(onesweep_bound(
                $crate::radix_sort_kernel_name!(onesweep_small, $key, $small),
                size_of::<$bits>(),
                stringify!($small),
                true,
            ),)*
        ]
    };
}

macro_rules! payload_bytes_list {
    ([] $($values:ident => $ty:ty;)*) => {
        /// The value payloads of `sort_value_table!` by name, with the bytes of each value (`keys`:
        /// 0, keys alone): the part of a sort kernel's name the host launches for values of a
        /// width, and the width a kernel's launch bounds are chosen by.
        pub const SORT_PAYLOADS: &[(&str, usize)] = &[$((
            stringify!($values),
            if stringify!($values).eq_ignore_ascii_case("keys") { 0 } else { size_of::<$ty>() },
        )),*];
    };
}
sort_value_table!(payload_bytes_list);

/// The bytes of each value of the payload named `name` ([`SORT_PAYLOADS`]; panics on another
/// name, at compile time where it is evaluated there).
pub const fn sort_payload_bytes(name: &str) -> usize {
    let mut p = 0;
    while !SORT_PAYLOADS[p].0.eq_ignore_ascii_case(name) {
        p += 1;
    }
    SORT_PAYLOADS[p].1
}

/// The name of the value payload of values of `value_bytes` bytes (0: keys alone;
/// [`SORT_PAYLOADS`]; panics on another width).
pub const fn sort_payload_name(value_bytes: usize) -> &'static str {
    let mut p = 0;
    while SORT_PAYLOADS[p].1 != value_bytes {
        p += 1;
    }
    SORT_PAYLOADS[p].0
}

/// The launch bounds entry of onesweep pass `name` of `key_bytes` keys with the value payload
/// named `payload` (its small tiles with `small_tiles`).
const fn onesweep_bound(
    name: &'static str,
    key_bytes: usize,
    payload: &str,
    small_tiles: bool,
) -> (&'static str, u32, u32) {
    let value_bytes = sort_payload_bytes(payload);
    (
        name,
        crate::tuning::onesweep_threads(key_bytes, value_bytes, small_tiles),
        crate::tuning::onesweep_blocks_per_sm(key_bytes, value_bytes, small_tiles),
    )
}

macro_rules! sort_kernel_list {
    ([] $($name:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
          $v4_items:literal, $v8_items:literal, $small:tt;)*) => {
        /// The radix sort's kernels per key type: its histogram, then one onesweep pass per
        /// value payload (and one of smaller tiles per listed payload), one segmented sort, one
        /// segmented warp merge sort, one segmented warp sort and one segmented warp radix sort per value payload, and the
        /// top-k by radix select (generated from the key and value
        /// tables; the PTX check looks for each).
        pub const SORT_KERNELS: &[(&str, &[&str])] = &[$((
            $crate::radix_sort_kernel_name!(histogram, $name),
            sort_value_table!(onesweep_names, $name, $small),
        )),*];
        /// The onesweep passes' launch bounds, per key type: (entry point, threads a block,
        /// blocks per multiprocessor) of every pass, its larger tiles and its small ones, from
        /// [`onesweep_threads`](crate::tuning::onesweep_threads) and
        /// [`onesweep_blocks_per_sm`](crate::tuning::onesweep_blocks_per_sm), the functions the
        /// host launches by (the PTX build declares them, the PTX test checks them).
        pub const SORT_LAUNCH_BOUNDS: &[&[(&str, u32, u32)]] = &[$(
            sort_value_table!(onesweep_bounds, $name, $bits, $small),
        )*];
        $(const _: () = assert!(
            small_tiles_shorter(
                size_of::<$bits>(),
                [$keys_items, $v4_items, $v8_items],
                small_tiles_list!($small),
            ),
            concat!("sort_key_table!: ", stringify!($name), "'s small tiles must list each payload once, in tiles shorter than its larger ones"),
        );)*
    };
}

/// The small tiles of a `sort_key_table!` row as (payload name, keys a thread) pairs.
#[macro_export]
macro_rules! small_tiles_list {
    ([$($small:ident $small_items:literal),*]) => {
        &[$((stringify!($small), $small_items)),*]
    };
}

/// Keys a thread of the small tiles of the value payload named `payload` in a key type's
/// `small` tiles ([`small_tiles_list!`]), or `None` where it has none.
pub const fn onesweep_small_items(small: &[(&str, usize)], payload: &str) -> Option<usize> {
    let mut s = 0;
    while s < small.len() {
        if small[s].0.eq_ignore_ascii_case(payload) {
            return Some(small[s].1);
        }
        s += 1;
    }
    None
}

/// Whether each payload of `small` (keys of `key_bytes`) is listed once and its small tiles
/// are shorter than its larger ones (`items`: keys a thread of the larger tiles, keys alone,
/// with 4-byte and with 8-byte values; the table's check).
const fn small_tiles_shorter(key_bytes: usize, items: [usize; 3], small: &[(&str, usize)]) -> bool {
    let mut s = 0;
    while s < small.len() {
        let (name, small_items) = small[s];
        let value_bytes = sort_payload_bytes(name);
        let large = crate::tuning::onesweep_threads(key_bytes, value_bytes, false) as usize
            * crate::tuning::onesweep_items(value_bytes, items[0], items[1], items[2]);
        let short = crate::tuning::onesweep_threads(key_bytes, value_bytes, true) as usize * small_items;
        let mut t = s + 1;
        while t < small.len() {
            if small[t].0.eq_ignore_ascii_case(name) {
                return false;
            }
            t += 1;
        }
        if short >= large {
            return false;
        }
        s += 1;
    }
    true
}
sort_key_table!(sort_kernel_list);

/// The PTX name of a device entry point: `device_<family>_<element>[_<operator>]`, a string
/// literal (for `export_name` on the device and the kernel list here).
#[macro_export]
macro_rules! kernel_name {
    ($family:ident, $element:ident) => {
        concat!("device_", stringify!($family), "_", stringify!($element))
    };
    ($family:ident, $element:ident, $op:ident) => {
        concat!(
            "device_",
            stringify!($family),
            "_",
            stringify!($element),
            "_",
            stringify!($op)
        )
    };
}

/// The PTX name of a scan by key: `device_scan_by_<key>_key_<element>_<operator>`.
#[macro_export]
macro_rules! scan_by_key_name {
    ($key:ident, $element:ident, $op:ident) => {
        concat!(
            "device_scan_by_",
            stringify!($key),
            "_key_",
            stringify!($element),
            "_",
            stringify!($op)
        )
    };
}

macro_rules! per_operator_names {
    ([$family:ident, $element:ident] $($op:ident => $ty:ident;)*) => {
        &[$($crate::kernel_name!($family, $element, $op)),*]
    };
}

macro_rules! segmented_names {
    ([$element:ident] $($op:ident => $ty:ident;)*) => {
        &[$(
            $crate::kernel_name!(segmented_scan, $element, $op),
            $crate::kernel_name!(segmented_reduce_by_offsets, $element, $op),
        )*]
    };
}

macro_rules! scan_only_names {
    ([] $($op:ident => $ty:ident: $($element:ident),*;)*) => {
        &[$($($crate::kernel_name!(scan, $element, $op)),*),*]
    };
}

/// Names of the families a kind of element type has beyond reduce, scan, segmented reduce and
/// argmin / argmax.
macro_rules! per_kind_names {
    (int, $element:ident) => {
        &[
            $crate::kernel_name!(argmin_final, $element),
            $crate::kernel_name!(argmax_final, $element),
        ]
    };
    (float, $element:ident) => {
        &[
            $crate::kernel_name!(argmin_final, $element),
            $crate::kernel_name!(argmax_final, $element),
            $crate::kernel_name!(dot, $element),
        ]
    };
    (half, $element:ident) => {
        &[$crate::kernel_name!(dot, $element)]
    };
}

macro_rules! device_kernel_list {
    ([] $($name:ident => $device:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
        /// Every device-wide entry point the library launches, by PTX name, in groups (generated
        /// from the table; the PTX check looks for each of them).
        pub const DEVICE_KERNELS: &[&[&str]] = &[
            $(
                operator_table!(per_operator_names, reduce, $name),
                operator_table!(per_operator_names, scan, $name),
                operator_table!(per_operator_names, segmented_reduce, $name),
                &[$crate::kernel_name!(argmin, $name), $crate::kernel_name!(argmax, $name)],
                per_kind_names!($kind, $name),
                &[
                    $crate::kernel_name!(select_if, $name),
                    $crate::kernel_name!(select_flagged, $name),
                    $crate::kernel_name!(unique, $name),
                    $crate::kernel_name!(reverse_tail, $name),
                ],
                &[
                    $crate::kernel_name!(run_length_encode, $name),
                    $crate::kernel_name!(non_trivial_runs, $name),
                ],
                operator_table!(segmented_names, $name),
            )*
            scan_operator_table!(scan_only_names),
        ];
    };
}
element_table!(device_kernel_list);

macro_rules! histogram_names_per_counter {
    ([$sample:ident] $($counter:ident => $ty:ty;)*) => {
        &[$(
            concat!("device_histogram_even_", stringify!($sample), "_", stringify!($counter)),
            concat!("device_histogram_range_", stringify!($sample), "_", stringify!($counter)),
        )*]
    };
}

macro_rules! histogram_kernel_list {
    ([] $($name:ident => $device:ty, $stored:ty, $level:ty, $vec:literal;)*) => {
        /// The histogram entry points, `device_histogram_{even,range}_<sample>_<counter>`, per
        /// sample type (generated from the sample and counter tables; the PTX check looks for
        /// each).
        pub const HISTOGRAM_KERNELS: &[&[&str]] = &[$(histogram_counter_table!(histogram_names_per_counter, $name)),*];
    };
}
histogram_sample_table!(histogram_kernel_list);

macro_rules! by_key_ops {
    ([$key:ident, $element:ident] $($op:ident => $ty:ident;)*) => {
        &[$($crate::scan_by_key_name!($key, $element, $op)),*]
    };
}

macro_rules! by_key_elements {
    ([$key:ident] $($name:ident => $device:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
        &[$(operator_table!(by_key_ops, $key, $name)),*]
    };
}

macro_rules! by_key_list {
    ([] $($key:ident => $ty:ty, $vec:literal;)*) => {
        /// The scans by key, `device_scan_by_<key>_key_<element>_<op>`, per key type and element
        /// type (generated from the key, element and operator tables; the PTX check looks for
        /// each).
        pub const SCAN_BY_KEY_KERNELS: &[&[&[&str]]] = &[$(element_table!(by_key_elements, $key)),*];
    };
}
scan_key_table!(by_key_list);

/// The PTX name of the entry point that finds where each tile of a segmented kernel by offsets
/// starts among the segments (one for every type), a string literal.
#[macro_export]
macro_rules! segment_tile_starts_name {
    () => {
        "device_segment_tile_starts"
    };
}

/// [`segment_tile_starts_name!`](crate::segment_tile_starts_name), for the host and the PTX
/// check.
pub const SEGMENT_TILE_STARTS_KERNEL: &str = segment_tile_starts_name!();

macro_rules! segment_arg_list {
    ([] $($name:ident => $device:ty, $vec:literal;)*) => {
        /// The segmented argmin / argmax entry points, `device_segmented_arg{min,max}_<element>`
        /// (generated from `segment_arg_table!`; the PTX check looks for each).
        pub const SEGMENT_ARG_KERNELS: &[&[&str]] = &[$(&[
            $crate::kernel_name!(segmented_argmin, $name),
            $crate::kernel_name!(segmented_argmax, $name),
        ]),*];
    };
}
segment_arg_table!(segment_arg_list);

/// Calls `$callback! { [args] name => device type, stored as, vector width: words, ...; ... }`
/// with the element types of the row operations (`rows`; read and written in their own type,
/// computed in `f32`) and the words of each row input a thread holds, one kernel each
/// ([`row_plan`](crate::tuning::row_plan) picks one; at most
/// [`ROW_ITEMS`](crate::tuning::ROW_ITEMS) items).
#[macro_export]
macro_rules! row_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            f32 => f32, f32, 4: 4, 8, 16;
            f16 => $crate::table::F16, u16, 8: 4, 8;
            bf16 => $crate::table::Bf16, u16, 8: 4, 8;
        }
    };
}

/// Calls `$callback! { [args] name => Type, inputs, words, tiled_words, paths; ... }` with the
/// row operations: the kernel-name part, the device type implementing it, the row inputs it
/// reads (2 for the backward: the forward's output and its gradient), the most 32-bit words of
/// all its inputs a thread holds ([`row_words`](crate::tuning::row_words)) for rows one group
/// holds in registers, and for rows read in several tiles (8 for the norms' backward, whose
/// halves spilled at 16, and for cross-entropy, whose `f32` kernel spilled at 16; LayerNorm
/// holds 16 `f32` words where one tile holds the row and 8 in tiles: H100, time / copy at
/// 4096, 16384 and 65536 columns 1.10, 1.21 and 1.51 at 16 words, 1.16, 1.41 and 1.42 at 8,
/// whose rows of 4096 and 16384 columns take two tiles), and its kernels per word count: `any`,
/// one (`_w<words>`) for rows of any number of tiles (both word counts the same); `split`, that
/// one for rows of one tile and `_w<words>_tiled` for longer rows (without the tile loop the
/// one-tile kernel needs fewer registers: ptxas spills of the halves' LayerNorm 60 -> 0 bytes,
/// sm_90; RMSNorm stays `any`, its `f32` one-tile kernel of 16 words spilled 56 bytes where
/// the joined one spills none); `sums`, the kernels summing the norms' parameter gradients
/// too: as `split` with a `_cluster` kernel, the one-tile and the cluster kernels holding at
/// most [`ROW_SUMS_ITEMS`](crate::tuning::ROW_SUMS_ITEMS) items of each input
/// ([`row_sums_words`](crate::tuning::row_sums_words) of its `words`), the `_tiled` one
/// `tiled_words` ([`row_sums_launch`](crate::tuning::row_sums_launch): at 8 words of each input
/// ptxas spilled its `f32` kernel 104 bytes, sm_90).
/// The kernels of more words than `row_words` (`row_sums_words`) allows,
/// or given rows they do not take, are never launched (they trap).
#[macro_export]
macro_rules! row_op_table {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            softmax => Softmax, 1, 16, 16, split;
            log_softmax => LogSoftmax, 1, 16, 16, split;
            softmax_backward => SoftmaxBackward, 2, 16, 16, split;
            log_softmax_backward => LogSoftmaxBackward, 2, 16, 16, split;
            rms_norm => RmsNorm, 1, 16, 16, any;
            layer_norm => LayerNorm, 1, 16, 8, split;
            layer_norm_backward => LayerNormBackward, 2, 8, 8, split;
            rms_norm_backward => RmsNormBackward, 2, 8, 8, split;
            layer_norm_backward_sums => LayerNormBackwardSums, 2, 16, 8, sums;
            rms_norm_backward_sums => RmsNormBackwardSums, 2, 16, 8, sums;
            cross_entropy => CrossEntropy, 1, 8, 8, split;
        }
    };
}

/// The PTX name of a row operation: `device_rows_<op>_<element>_w<words>`, or with `tiled` its
/// kernel for rows of several tiles, `device_rows_<op>_<element>_w<words>_tiled` (a `split`
/// operation of `row_op_table!`), or with `cluster` its kernel sharing each row among the
/// blocks of a thread-block cluster (every operation, sm_90 modules only:
/// [`ROW_CLUSTER_SUFFIX`](crate::tuning::ROW_CLUSTER_SUFFIX)), a string literal.
#[macro_export]
macro_rules! row_kernel_name {
    ($op:ident, $element:ident, $words:literal) => {
        concat!(
            "device_rows_",
            stringify!($op),
            "_",
            stringify!($element),
            "_w",
            stringify!($words)
        )
    };
    ($op:ident, $element:ident, $words:literal, tiled) => {
        concat!($crate::row_kernel_name!($op, $element, $words), "_tiled")
    };
    ($op:ident, $element:ident, $words:literal, cluster) => {
        concat!($crate::row_kernel_name!($op, $element, $words), "_cluster")
    };
}

macro_rules! row_names_per_words {
    (sums, $($rest:tt)*) => {
        row_names_per_words!(split, $($rest)*)
    };
    (split, $op:ident, $element:ident, [$($words:literal),*]) => {
        &[
            $($crate::row_kernel_name!($op, $element, $words),)*
            $($crate::row_kernel_name!($op, $element, $words, tiled),)*
        ]
    };
    ($paths:ident, $op:ident, $element:ident, [$($words:literal),*]) => {
        &[$($crate::row_kernel_name!($op, $element, $words)),*]
    };
}

macro_rules! row_names_per_op {
    ([$element:ident, $words:tt]
     $($op:ident => $ty:ident, $inputs:literal, $op_words:literal, $tiled_words:literal, $paths:ident;)*) => {
        &[$(row_names_per_words!($paths, $op, $element, $words)),*]
    };
}

macro_rules! row_kernel_list {
    ([] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {
        /// The row operations, `device_rows_<op>_<element>_w<words>`, per element type, operation
        /// and words per thread (generated from the row tables; the PTX check looks for each).
        pub const ROW_KERNELS: &[&[&[&str]]] = &[$(row_op_table!(row_names_per_op, $name, [$($words),*])),*];
    };
}
row_table!(row_kernel_list);

macro_rules! row_cluster_names_per_words {
    ($paths:ident, $op:ident, $element:ident, [$($words:literal),*]) => {
        &[$($crate::row_kernel_name!($op, $element, $words, cluster)),*]
    };
}

macro_rules! row_cluster_names_per_op {
    ([$element:ident, $words:tt]
     $($op:ident => $ty:ident, $inputs:literal, $op_words:literal, $tiled_words:literal, $paths:ident;)*) => {
        &[$(row_cluster_names_per_words!($paths, $op, $element, $words)),*]
    };
}

macro_rules! row_cluster_kernel_list {
    ([] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {
        /// The row operations' cluster kernels, `device_rows_<op>_<element>_w<words>_cluster`, per
        /// element type, operation (every one: each takes rows of several tiles) and words per
        /// thread; in the sm_90 module only (the PTX check looks for each there).
        pub const ROW_CLUSTER_KERNELS: &[&[&[&str]]] =
            &[$(row_op_table!(row_cluster_names_per_op, $name, [$($words),*])),*];
    };
}
row_table!(row_cluster_kernel_list);

/// The PTX name of a stage (`partial`, `finish`) of the norms' weight and bias gradients
/// ([`NormGradParams`](crate::params::NormGradParams)): `device_rows_norm_grads_<stage>_<element>`.
#[macro_export]
macro_rules! norm_grads_kernel_name {
    ($stage:ident, $element:ident) => {
        concat!(
            "device_rows_norm_grads_",
            stringify!($stage),
            "_",
            stringify!($element)
        )
    };
}

macro_rules! norm_grads_kernel_list {
    ([] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {
        /// The norms' weight and bias gradient kernels, both stages per row type (generated
        /// from `row_table!`; the PTX check looks for each).
        pub const NORM_GRAD_KERNELS: &[&str] = &[$(
            $crate::norm_grads_kernel_name!(partial, $name),
            $crate::norm_grads_kernel_name!(finish, $name),
        )*];
    };
}
row_table!(norm_grads_kernel_list);

/// The PTX name of a step (`count`, `mean`) of cross-entropy's mean
/// ([`TargetCountParams`](crate::params::TargetCountParams)): `device_rows_cross_entropy_<step>`.
#[macro_export]
macro_rules! cross_entropy_kernel_name {
    ($step:ident) => {
        concat!("device_rows_cross_entropy_", stringify!($step))
    };
}

/// Cross-entropy's count of valid targets.
pub const CROSS_ENTROPY_COUNT_KERNEL: &str = cross_entropy_kernel_name!(count);
/// Cross-entropy's division of the summed loss by that count.
pub const CROSS_ENTROPY_MEAN_KERNEL: &str = cross_entropy_kernel_name!(mean);

#[cfg(test)]
mod tests {
    #[test]
    fn kernel_names_are_unique_and_complete() {
        let names: std::vec::Vec<&str> = super::DEVICE_KERNELS
            .iter()
            .flat_map(|g| g.iter().copied())
            .collect();
        // 8 types x (3 reduce + 3 scan + 3 segmented + 2 arg + 4 compaction + 2 run-length
        // + 3 x (scan by offsets, reduce by offsets))
        // + 6 x 2 arg finals + 4 dot + 2 affine.
        assert_eq!(names.len(), 8 * 23 + 12 + 4 + 2);
        let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len());
        assert!(names.contains(&"device_scan_bf16_max"));
        assert!(names.contains(&"device_argmax_final_u64"));
        assert!(names.contains(&"device_segmented_reduce_by_offsets_bf16_min"));
    }

    #[test]
    fn scan_by_key_names_cover_keys_elements_and_operators() {
        let names: std::vec::Vec<&str> = super::SCAN_BY_KEY_KERNELS
            .iter()
            .flat_map(|k| k.iter().flat_map(|e| e.iter().copied()))
            .collect();
        // 2 key types x 8 element types x 3 operators.
        assert_eq!(names.len(), 2 * 8 * 3);
        assert!(names.contains(&"device_scan_by_u64_key_bf16_min"));
        assert!(names.contains(&"device_scan_by_u32_key_f64_sum"));
    }

    #[test]
    fn segment_arg_names_cover_the_four_byte_accumulators() {
        let names: std::vec::Vec<&str> = super::SEGMENT_ARG_KERNELS
            .iter()
            .flat_map(|g| g.iter().copied())
            .collect();
        assert_eq!(
            names,
            [
                "device_segmented_argmin_f32",
                "device_segmented_argmax_f32",
                "device_segmented_argmin_i32",
                "device_segmented_argmax_i32",
                "device_segmented_argmin_u32",
                "device_segmented_argmax_u32",
                "device_segmented_argmin_f16",
                "device_segmented_argmax_f16",
                "device_segmented_argmin_bf16",
                "device_segmented_argmax_bf16",
            ]
        );
    }

    #[test]
    fn histogram_names_cover_samples_and_counters() {
        let names: std::vec::Vec<&str> = super::HISTOGRAM_KERNELS
            .iter()
            .flat_map(|g| g.iter().copied())
            .collect();
        // 8 sample types x 2 counters x (even, range).
        assert_eq!(names.len(), 8 * 2 * 2);
        assert!(names.contains(&"device_histogram_even_u8_u32"));
        assert!(names.contains(&"device_histogram_range_f64_u64"));
    }

    #[test]
    fn sort_names_cover_keys_and_values() {
        assert_eq!(super::SORT_KERNELS.len(), 10);
        let (histogram, passes) = super::SORT_KERNELS[3];
        assert_eq!(histogram, "device_radix_sort_histogram_i32");
        assert_eq!(
            passes,
            [
                "device_radix_sort_onesweep_keys_i32",
                "device_radix_sort_onesweep_v4_i32",
                "device_radix_sort_onesweep_v8_i32",
                "device_radix_sort_onesweep_keys_small_i32",
                "device_radix_sort_onesweep_v4_small_i32",
                "device_radix_sort_onesweep_v8_small_i32",
                "device_segmented_radix_sort_keys_i32",
                "device_segmented_radix_sort_v4_i32",
                "device_segmented_radix_sort_v8_i32",
                "device_segmented_warp_merge_sort_keys_i32",
                "device_segmented_warp_merge_sort_v4_i32",
                "device_segmented_warp_merge_sort_v8_i32",
                "device_segmented_warp_sort_keys_i32",
                "device_segmented_warp_sort_v4_i32",
                "device_segmented_warp_sort_v8_i32",
                "device_segmented_warp_radix_sort_keys_i32",
                "device_segmented_warp_radix_sort_v4_i32",
                "device_segmented_warp_radix_sort_v8_i32",
                "device_top_k_i32",
            ]
        );
    }

    #[test]
    fn sort_payloads_by_name_and_by_width() {
        for (name, bytes) in [("keys", 0), ("v4", 4), ("v8", 8)] {
            assert_eq!(super::sort_payload_bytes(name), bytes);
            assert_eq!(super::sort_payload_name(bytes), name);
        }
    }

    #[test]
    fn every_onesweep_pass_has_one_launch_bound() {
        let bounds: std::vec::Vec<(&str, u32, u32)> = super::SORT_LAUNCH_BOUNDS
            .iter()
            .flat_map(|k| k.iter().copied())
            .collect();
        let passes: std::vec::Vec<&str> = super::SORT_KERNELS
            .iter()
            .flat_map(|(_, names)| names.iter().copied())
            .filter(|name| name.starts_with(crate::tuning::SORT_FAMILY))
            .collect();
        assert_eq!(bounds.len(), passes.len());
        for pass in passes {
            // Each entry names its pass, and no other pass starts with it (the PTX build
            // gives an entry point the first bound whose name it starts with).
            let matching: std::vec::Vec<_> = bounds
                .iter()
                .filter(|(name, ..)| pass.starts_with(name))
                .collect();
            assert_eq!(matching.len(), 1, "{pass}");
            assert_eq!(matching[0].0, pass);
        }
        let bound = |name: &str| bounds.iter().find(|b| b.0 == name).map(|&(_, t, b)| (t, b));
        // 8-byte keys with values in CUB's 384 threads (their small tiles in 256), every other
        // pass one thread a digit.
        assert_eq!(bound("device_radix_sort_onesweep_v4_u64"), Some((384, 2)));
        assert_eq!(bound("device_radix_sort_onesweep_v4_small_f64"), Some((256, 2)));
        assert_eq!(bound("device_radix_sort_onesweep_v8_small_u64"), Some((256, 2)));
        assert_eq!(bound("device_radix_sort_onesweep_v8_i64"), Some((384, 2)));
        assert_eq!(bound("device_radix_sort_onesweep_keys_u64"), Some((256, 2)));
        assert_eq!(bound("device_radix_sort_onesweep_keys_small_i64"), Some((256, 4)));
        assert_eq!(bound("device_radix_sort_onesweep_v4_u32"), Some((256, 2)));
        assert_eq!(bound("device_radix_sort_onesweep_keys_f16"), Some((256, 4)));
    }

    #[test]
    fn row_names_cover_elements_operations_and_words() {
        let names: std::vec::Vec<&str> = super::ROW_KERNELS
            .iter()
            .flat_map(|e| e.iter().flat_map(|o| o.iter().copied()))
            .collect();
        // 11 operations x (f32: 3 word counts, halves: 2 each), and a tiled kernel of each for
        // the 8 split and the 2 sums operations.
        assert_eq!(names.len(), (11 + 8 + 2) * (3 + 2 + 2));
        assert!(names.contains(&"device_rows_layer_norm_f32_w8_tiled"));
        assert!(names.contains(&"device_rows_layer_norm_backward_sums_f32_w4_tiled"));
        assert!(!names.iter().any(|name| name.ends_with("_cluster")));
        let clusters: std::vec::Vec<&str> = super::ROW_CLUSTER_KERNELS
            .iter()
            .flat_map(|e| e.iter().flat_map(|o| o.iter().copied()))
            .collect();
        assert_eq!(clusters.len(), 11 * (3 + 2 + 2));
        assert!(clusters.contains(&"device_rows_layer_norm_backward_sums_f32_w8_cluster"));
        assert!(names.contains(&"device_rows_rms_norm_backward_f16_w4"));
        assert_eq!(super::NORM_GRAD_KERNELS.len(), 2 * 3);
        assert!(super::NORM_GRAD_KERNELS.contains(&"device_rows_norm_grads_finish_bf16"));
        assert!(names.contains(&"device_rows_softmax_f32_w4"));
        assert!(names.contains(&"device_rows_layer_norm_bf16_w8"));
        assert!(names.contains(&"device_rows_log_softmax_backward_f32_w16"));
        assert!(!names.contains(&"device_rows_softmax_f16_w16"));
    }
}
