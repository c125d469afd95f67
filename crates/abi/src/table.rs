//! The one table of element types and operators.
//!
//! Each macro here calls a callback macro (by name, in scope where it is called) with the rows.
//! Generated from this file: the device entry points (crates/kernels `kernels/device.rs`), the
//! host's `Element`, `Operator` and `ScanOperator` impls and its `ELEMENT_NAMES` /
//! `OPERATOR_NAMES` (crates/gpu-primitives `device/element.rs`; the benchmark's type and
//! operator lists), and the registry of kernel families ([`families`](crate::families)). Still written by
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
//! - *scan items per thread*: a scan tile is `ScanPolicy::block_threads * items` elements;
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
            f64 => f64, f64, f64, 2, 16, float;
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
///   ([`wide_pairs_block_threads`](crate::tuning::SortPolicy::wide_pairs_block_threads)) at 2 a multiprocessor,
///   80 registers: 15 keys a thread with 4-byte values (4 bytes spilled on sm_90), 12 with
///   8-byte values (15 spilled 64 bytes).
/// - *small tiles*: `payload items` for each value payload that also has a pass of shorter
///   tiles (`device_radix_sort_onesweep_<values>_small_<key>`, blocks of
///   [`onesweep_threads`](crate::planning::sort::onesweep_threads)`(.., true)` = 256 threads of
///   `items` keys), taken for inputs too short for the larger tiles to spread over every
///   multiprocessor or, for the 384-thread passes, that fit in one wave of the small ones
///   ([`onesweep_small_tiles`](crate::planning::sort::onesweep_small_tiles)). The 8-byte keys with
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
    (radix_select_top_k, $key:ident) => {
        concat!("device_radix_select_top_k_", stringify!($key))
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

macro_rules! sort_table_checks {
    ([] $($name:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
          $v4_items:literal, $v8_items:literal, $small:tt;)*) => {
        $(const _: () = assert!(
            small_tiles_shorter(
                $crate::tuning::SortPolicy::SM80,
                size_of::<$bits>(),
                [$keys_items, $v4_items, $v8_items],
                small_tiles_list!($small),
            ) && small_tiles_shorter(
                $crate::tuning::SortPolicy::SM90,
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
/// with 4-byte and with 8-byte values; the table's check) under the sort's `policy`.
const fn small_tiles_shorter(
    policy: crate::tuning::SortPolicy,
    key_bytes: usize,
    items: [usize; 3],
    small: &[(&str, usize)],
) -> bool {
    let mut s = 0;
    while s < small.len() {
        let (name, small_items) = small[s];
        let value_bytes = sort_payload_bytes(name);
        let large = crate::planning::sort::onesweep_threads(policy, key_bytes, value_bytes, false) as usize
            * crate::planning::sort::onesweep_items(value_bytes, items[0], items[1], items[2]);
        let short = crate::planning::sort::onesweep_threads(policy, key_bytes, value_bytes, true) as usize
            * small_items;
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
sort_key_table!(sort_table_checks);

/// The PTX name of a device entry point: `device_<family>` and `_<part>` for each part (the
/// element, the operator, the key, a stage: `kernel_name!(reduce, f32, sum)` is
/// `device_reduce_f32_sum`), a string literal (for `export_name` on the device and the kernel
/// lists of [`families`](crate::families)). A new family whose name is its parts joined needs no
/// macro of its own; the names of other shapes have theirs below.
#[macro_export]
macro_rules! kernel_name {
    ($family:ident $(, $part:ident)*) => {
        concat!("device_", stringify!($family) $(, "_", stringify!($part))*)
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

/// Calls `$callback! { [args] name => device type, stored as, vector width: words, ...; ... }`
/// with the element types of the row operations (`rows`; read and written in their own type,
/// computed in `f32`) and the words of each row input a thread holds, one kernel each
/// ([`row_plan`](crate::planning::rows::row_plan) picks one; at most
/// [`RowPolicy::items`](crate::tuning::RowPolicy::items) items).
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
/// all its inputs a thread holds ([`RowPolicy::words`](crate::tuning::RowPolicy::words)) for rows one group
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
/// most [`RowPolicy::sums_items`](crate::tuning::RowPolicy::sums_items) items of each input
/// ([`RowPolicy::sums_words`](crate::tuning::RowPolicy::sums_words) of its `words`), the `_tiled` one
/// `tiled_words` ([`row_sums_launch`](crate::planning::rows::row_sums_launch): at 8 words of each input
/// ptxas spilled its `f32` kernel 104 bytes, sm_90).
/// The kernels of more words than `RowPolicy::words` (`RowPolicy::sums_words`) allows,
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

/// The name of a row operation's family: `device_rows_<op>` (`families::ROW_FAMILIES`).
#[macro_export]
macro_rules! row_family_name {
    ($op:ident) => {
        concat!("device_rows_", stringify!($op))
    };
}

macro_rules! row_words_parts_list {
    ([] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {
        /// The words a thread of every row kernel with the part of its name that gives them
        /// (`(4, "w4")`), per element type (generated from `row_table!`; repeats across types).
        pub const ROW_WORDS_PARTS: &[(u32, &str)] = &[$($(($words, concat!("w", stringify!($words)))),*),*];
    };
}
row_table!(row_words_parts_list);

/// The PTX name of a row operation: `device_rows_<op>_<element>_w<words>`, or with `tiled` its
/// kernel for rows of several tiles, `device_rows_<op>_<element>_w<words>_tiled` (a `split`
/// operation of `row_op_table!`), or with `cluster` its kernel sharing each row among the
/// blocks of a thread-block cluster (every operation, sm_90 modules only:
/// `families::Kernel::cluster_blocks`), a string literal.
#[macro_export]
macro_rules! row_kernel_name {
    ($op:ident, $element:ident, $words:literal) => {
        concat!(
            $crate::row_family_name!($op),
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

#[cfg(test)]
mod tests {
    #[test]
    fn kernel_names_join_the_family_and_its_parts() {
        assert_eq!(
            crate::kernel_name!(segment_tile_starts),
            "device_segment_tile_starts"
        );
        assert_eq!(crate::kernel_name!(reduce, f32, sum), "device_reduce_f32_sum");
        assert_eq!(
            crate::kernel_name!(reduce_by_key, u32, f32, sum),
            "device_reduce_by_key_u32_f32_sum"
        );
        assert_eq!(
            crate::kernel_name!(rows_norm_grads, partial, bf16),
            "device_rows_norm_grads_partial_bf16"
        );
        assert_eq!(
            crate::kernel_name!(rows_cross_entropy, count),
            "device_rows_cross_entropy_count"
        );
    }

    #[test]
    fn sort_payloads_by_name_and_by_width() {
        for (name, bytes) in [("keys", 0), ("v4", 4), ("v8", 8)] {
            assert_eq!(super::sort_payload_bytes(name), bytes);
            assert_eq!(super::sort_payload_name(bytes), name);
        }
    }
}
