//! The one registry of the library's kernel families.
//!
//! A *family* is the kernels of one algorithm step over every type it takes
//! (`device_reduce`: `device_reduce_f32_sum`, ..., `device_reduce_bf16_max`). Each family ships as
//! one module of its own per architecture (`kernels/sm_<NN>/<family>.ptx.zst`, decompressed the
//! first time one of its kernels is launched). For each kernel the registry gives:
//!
//! - its PTX entry name, generated from the tables ([`table`](crate::table)) by the same macros
//!   that name the device entry points;
//! - the bytes of its one parameter (its family's `#[repr(C)]` struct of [`params`](crate::params)
//!   for its types);
//! - the threads a block the host launches it with;
//! - its launch bounds: CUDA's `__launch_bounds__` and `__maxnreg__` as the PTX directives
//!   `.maxntid`, `.minnctapersm` and `.maxnreg`;
//! - its cluster shape (`.reqnctapercluster`) and the first architecture whose module holds it.
//!
//! Who reads it: `cargo xtask ptx` puts each entry in its family's module and writes its
//! directives (an entry the registry does not know fails the build, so a new family cannot
//! inherit another's bounds by its name); the PTX tests check each kernel's module, directives,
//! parameter and spills against it; the host finds the kernel it launches with
//! [`Family::kernel`] and launches the block it gives.

use crate::layout::{Indexed, MAX_BLOCK_THREADS, SORT_BLOCK};
use crate::params::{
    ArgFinalParams, DotParams, HistogramParams, NormGradParams, OnesweepParams, RadixHistogramParams,
    RadixSelectTopKParams, ReduceByKeyParams, ReduceParams, ReverseTailParams, RowParams, RunParams,
    ScanParams, SegmentTileStartsParams, SegmentedArgParams, SegmentedReduceParams, SegmentedScanParams,
    SegmentedSortParams, SelectParams, TargetCountParams, TopKParams,
};
use crate::planning::sort::{onesweep_blocks_per_sm, onesweep_threads, segmented_sort_blocks_per_sm};
use crate::table::sort_payload_bytes;
use crate::tuning::{
    HistogramPolicy, NormGradPolicy, ReducePolicy, RowPolicy, ScanPolicy, SegmentedPolicy,
    SegmentedSortPolicy, SelectPolicy, SortPolicy, TopKPolicy, str_eq,
};
use crate::{
    element_table, histogram_counter_table, histogram_sample_table, operator_table, row_op_table, row_table,
    scan_key_table, scan_operator_table, segment_arg_table, sort_key_table, sort_value_table,
};
use core::mem::size_of;

/// CUDA's `__launch_bounds__(max_threads, min_blocks_per_sm)` and `__maxnreg__`, written after
/// the kernel's parameter list as `.maxntid max_threads, 1, 1`, `.minnctapersm
/// min_blocks_per_sm` and `.maxnreg max_registers` (PTX ISA, "Performance-Tuning Directives").
/// ptxas then holds each thread to `65536 / (max_threads * min_blocks_per_sm)` registers, or
/// `max_registers` where that is fewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// Most threads a block the kernel is launched with.
    pub max_threads: u32,
    /// Fewest blocks a multiprocessor must hold at once.
    pub min_blocks_per_sm: u32,
    /// Most registers a thread, where fewer than the bounds above allow.
    pub max_registers: Option<u32>,
}

/// The threads a block the host launches a kernel with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockThreads {
    /// Always this many.
    Fixed(u32),
    /// Planned per launch from the call's shape, at most `max` (the row operations).
    Planned {
        /// The most.
        max: u32,
    },
}

impl BlockThreads {
    /// The threads of a [`Fixed`](Self::Fixed) block, or the most of a planned one.
    pub const fn threads(self) -> u32 {
        match self {
            Self::Fixed(threads) | Self::Planned { max: threads } => threads,
        }
    }
}

/// One kernel of a [`Family`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Its PTX entry name (`device_reduce_f32_sum`).
    pub name: &'static str,
    /// Bytes of its one parameter, the family's parameter struct for its types (the runtime
    /// checks the PTX's at load, the PTX tests without a GPU).
    pub params_bytes: usize,
    /// The threads a block it is launched with.
    pub block: BlockThreads,
    /// Its launch bounds, or `None` where ptxas may size its registers freely.
    pub bounds: Option<LaunchBounds>,
    /// Blocks a thread-block cluster of it (`.reqnctapercluster blocks, 1, 1`: an ordinary launch
    /// runs its grid in clusters of that many blocks), or `None`.
    pub cluster_blocks: Option<u32>,
    /// The first architecture (compute capability x 10) whose module holds it: 90 for cluster
    /// kernels, 80 for the others.
    pub min_arch: u32,
}

/// A family of kernels: see the [module docs](self).
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// Its name, the part of its kernels' names before their types (`device_reduce`), and the
    /// name of the module it ships in.
    pub name: &'static str,
    /// Its kernels, nested as the tables generate them (by type; [`Family::kernels`] lists them).
    pub tables: &'static [&'static [&'static [Kernel]]],
    /// Most bytes any of its kernels may spill a thread, stored or loaded, under its launch
    /// bounds (ptxas's report, checked by the PTX tests; docs/performance.md has the
    /// measurements that chose bounds which spill).
    pub spill_bytes: usize,
}

impl Family {
    /// Every kernel of the family.
    pub fn kernels(&self) -> impl Iterator<Item = &'static Kernel> + 'static {
        self.tables
            .iter()
            .flat_map(|table| table.iter().flat_map(|group| group.iter()))
    }

    /// The kernel named by the family's name followed by `parts`, each after an underscore
    /// (`REDUCE.kernel(&["f32", "sum"])` is `device_reduce_f32_sum`), or `None` where the family
    /// has none such.
    pub fn kernel(&self, parts: &[&str]) -> Option<&'static Kernel> {
        self.kernels().find(|k| named(k.name, self.name, parts))
    }
}

/// Whether `name` is `family` followed by `parts`, each after an underscore.
fn named(name: &str, family: &str, parts: &[&str]) -> bool {
    let Some(mut rest) = name.strip_prefix(family) else {
        return false;
    };
    for part in parts {
        match rest.strip_prefix('_').and_then(|r| r.strip_prefix(part)) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

const fn bounds(max_threads: u32, min_blocks_per_sm: u32) -> Option<LaunchBounds> {
    Some(LaunchBounds {
        max_threads,
        min_blocks_per_sm,
        max_registers: None,
    })
}

/// A kernel of a fixed block, with no cluster, in every architecture's module.
const fn kernel(name: &'static str, params_bytes: usize, block: u32, bounds: Option<LaunchBounds>) -> Kernel {
    Kernel {
        name,
        params_bytes,
        block: BlockThreads::Fixed(block),
        bounds,
        cluster_blocks: None,
        min_arch: 80,
    }
}

// The policies the registry's blocks and bounds come from. It holds one block and one set of
// bounds a kernel for every architecture's module, so it takes sm_80's, and its tests check that
// sm_90's launch the same; the row clusters, in sm_90's module only, take sm_90's.
const REDUCE: ReducePolicy = ReducePolicy::SM80;
const SCAN: ScanPolicy = ScanPolicy::SM80;
const SELECT: SelectPolicy = SelectPolicy::SM80;
const SEGMENTED: SegmentedPolicy = SegmentedPolicy::SM80;
const HISTOGRAM: HistogramPolicy = HistogramPolicy::SM80;
const ROWS: RowPolicy = RowPolicy::SM80;
const NORM_GRAD: NormGradPolicy = NormGradPolicy::SM80;
const SORT: SortPolicy = SortPolicy::SM80;
const SEGMENTED_SORT: SegmentedSortPolicy = SegmentedSortPolicy::SM80;
const TOP_K: TopKPolicy = TopKPolicy::SM80;

/// The reduce's passes, argmin / argmax and the dot product.
const REDUCE_BOUNDS: Option<LaunchBounds> = bounds(REDUCE.block_threads, REDUCE.blocks_per_sm);
/// The compaction (select, partition, unique, run-length).
const SELECT_BOUNDS: Option<LaunchBounds> = bounds(SELECT.block_threads, SELECT.blocks_per_sm);
/// The segmented scans (by key and by offsets).
const SEGMENTED_BOUNDS: Option<LaunchBounds> = bounds(SEGMENTED.block_threads, SEGMENTED.scan_blocks_per_sm);

/// Most bytes a compaction or segmented-scan kernel may spill a thread under its bounds (4
/// blocks a multiprocessor, 64 registers: a few spilled words measured faster than no bound).
const COMPACTION_SPILL_BYTES: usize = 192;
/// Most bytes a row kernel may spill a thread: built for 1024 threads (64 registers), the
/// halves' cross-entropy kernels of 8 words spill 68 bytes (tiled, sm_80; 20 on sm_90, their
/// one-tile kernel 36), `f32` LayerNorm's one-tile kernel of 16 words 56, the halves' norm
/// backward summing the parameter gradients 8; the kernels of more words than an operation's
/// threads hold are never launched and only trap.
const ROW_SPILL_BYTES: usize = 72;
/// The onesweep passes of keys alone (4 blocks, 64 registers): none since their keys are stored
/// as ranked; at 3 blocks they spilled up to 116 bytes (sm_80) and still measured faster than 2
/// without spills.
const SORT_KEYS_SPILL_BYTES: usize = 120;
/// The onesweep passes that move values (2 blocks, 128 registers): the 8-byte values' spill up
/// to 32 bytes (sm_80; 8 on sm_90), the others none.
const SORT_PAIRS_SPILL_BYTES: usize = 32;
/// The segmented radix sort (3 blocks, 80 registers; 2 and 128 for 8-byte values and the
/// 4-byte values of 1- and 2-byte keys): up to 512 bytes (`u32` values of 4-byte keys, sm_90),
/// which measured 6-14 % faster than 2 blocks.
const SEGMENTED_SORT_SPILL_BYTES: usize = 1024;
/// The segmented sort's warp radix tier (3 blocks, 80 registers): 8-byte keys up to 364 bytes
/// (480 on sm_80).
const WARP_RADIX_SORT_SPILL_BYTES: usize = 512;
/// The segmented sort's warp merge tier (3 blocks, 80 registers): 8-byte keys' pairs up to 500
/// bytes (sm_90).
const WARP_MERGE_SORT_SPILL_BYTES: usize = 640;
/// The top-k by radix select (4 blocks, 64 registers): up to 116 bytes (f64 keys, sm_80), in
/// the paths past the threshold's.
const TOP_K_SPILL_BYTES: usize = 128;

/// The bytes of parameter struct `$p` for a kernel of stored type `$stored` accumulated in
/// `$acc`, by the shape of `$p`'s type parameters.
macro_rules! params_bytes {
    (stored, $p:ident, $stored:ty, $acc:ty) => {
        size_of::<$p<$stored>>()
    };
    (acc, $p:ident, $stored:ty, $acc:ty) => {
        size_of::<$p<$acc>>()
    };
    (stored_acc, $p:ident, $stored:ty, $acc:ty) => {
        size_of::<$p<$stored, $acc>>()
    };
    (stored_indexed, $p:ident, $stored:ty, $acc:ty) => {
        size_of::<$p<$stored, Indexed<$acc>>>()
    };
    (by_offsets, $p:ident, $stored:ty, $acc:ty) => {
        size_of::<$p<$stored, $acc, u64>>()
    };
}

/// A family over every element type and operator: one group of its operators per type.
macro_rules! per_element_and_operator {
    ([$family:ident, $shape:ident, $p:ident, $block:expr, $bounds:expr]
     $($name:ident => $device:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
        &[$(operator_table!(per_operator, $family, $shape, $p, $block, $bounds, $name, $stored, $acc)),*]
    };
}

macro_rules! per_operator {
    ([$family:ident, $shape:ident, $p:ident, $block:expr, $bounds:expr, $name:ident, $stored:ty, $acc:ty]
     $($op:ident => $ty:ident;)*) => {
        &[$(kernel(
            $crate::kernel_name!($family, $name, $op),
            params_bytes!($shape, $p, $stored, $acc),
            $block,
            $bounds,
        )),*]
    };
}

/// The scan-only operators' scans (`device_scan_<element>_<op>`), one group.
macro_rules! scan_only {
    ([] $($op:ident => $ty:ident: $($element:ident),*;)*) => {
        &[$($(kernel(
            $crate::kernel_name!(scan, $element, $op),
            size_of::<ScanParams<$element, $element>>(),
            SCAN.block_threads,
            None,
        )),*),*]
    };
}

/// Whether an element type of kind `$kind` has a kernel of the families `$which` names:
/// `finals` (argmin / argmax second passes: types accumulated in themselves) or `dot` (floats
/// and halves); the kernel's one-kernel group, else an empty group.
macro_rules! for_kind {
    (finals, int, $kernel:expr) => {
        &[$kernel]
    };
    (finals, float, $kernel:expr) => {
        &[$kernel]
    };
    (finals, half, $kernel:expr) => {
        &[]
    };
    (dot, float, $kernel:expr) => {
        &[$kernel]
    };
    (dot, half, $kernel:expr) => {
        &[$kernel]
    };
    (dot, int, $kernel:expr) => {
        &[]
    };
    (all, $kind:ident, $kernel:expr) => {
        &[$kernel]
    };
}

/// A family over the element types (those of kind `$which`): a group of one kernel per type.
macro_rules! per_element {
    ([$family:ident, $which:ident, $shape:ident, $p:ident, $block:expr, $bounds:expr]
     $($name:ident => $device:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
        &[$(for_kind!($which, $kind, kernel(
            $crate::kernel_name!($family, $name),
            params_bytes!($shape, $p, $stored, $acc),
            $block,
            $bounds,
        ))),*]
    };
}

/// The scans by key: a group per key and element type, one kernel per operator.
macro_rules! scan_by_key_keys {
    ([] $($key:ident => $key_ty:ty, $vec:literal;)*) => {
        &[$(element_table!(scan_by_key_elements, $key, $key_ty)),*]
    };
}

macro_rules! scan_by_key_elements {
    ([$key:ident, $key_ty:ty] $($name:ident => $device:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
        &[$(operator_table!(scan_by_key_operators, $key, $key_ty, $name, $stored, $acc)),*]
    };
}

macro_rules! scan_by_key_operators {
    ([$key:ident, $key_ty:ty, $name:ident, $stored:ty, $acc:ty] $($op:ident => $ty:ident;)*) => {
        &[$(kernel(
            $crate::scan_by_key_name!($key, $name, $op),
            size_of::<SegmentedScanParams<$stored, $acc, $key_ty>>(),
            SEGMENTED.block_threads,
            SEGMENTED_BOUNDS,
        )),*]
    };
}

/// Reduce by key (and unique by key): a group per key and element type, one kernel per operator.
macro_rules! reduce_by_key_keys {
    ([] $($key:ident => $key_ty:ty, $vec:literal;)*) => {
        &[$(element_table!(reduce_by_key_elements, $key, $key_ty)),*]
    };
}

macro_rules! reduce_by_key_elements {
    ([$key:ident, $key_ty:ty] $($name:ident => $device:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
        &[$(operator_table!(reduce_by_key_operators, $key, $key_ty, $name, $stored, $acc)),*]
    };
}

macro_rules! reduce_by_key_operators {
    ([$key:ident, $key_ty:ty, $name:ident, $stored:ty, $acc:ty] $($op:ident => $ty:ident;)*) => {
        &[$(kernel(
            $crate::kernel_name!(reduce_by_key, $key, $name, $op),
            size_of::<ReduceByKeyParams<$key_ty, $stored, $acc>>(),
            SEGMENTED.block_threads,
            bounds(SEGMENTED.block_threads, SEGMENTED.reduce_by_key_blocks_per_sm),
        )),*]
    };
}

/// The segmented argmin or argmax (`$family`), one group.
macro_rules! segmented_arg {
    ([$family:ident] $($name:ident => $device:ty, $vec:literal;)*) => {
        &[&[$(kernel(
            $crate::kernel_name!($family, $name),
            size_of::<SegmentedArgParams<$device, $device>>(),
            SEGMENTED.block_threads,
            bounds(SEGMENTED.block_threads, SEGMENTED.arg_blocks_per_sm),
        )),*]]
    };
}

/// The histograms binned evenly or by levels (`$family`): a group per sample type, one kernel
/// per counter type.
macro_rules! histogram_samples {
    ([$family:literal] $($sample:ident => $device:ty, $stored:ty, $level:ty, $vec:literal;)*) => {
        &[$(histogram_counter_table!(histogram_counters, $family, $sample, $stored, $level)),*]
    };
}

macro_rules! histogram_counters {
    ([$family:literal, $sample:ident, $stored:ty, $level:ty] $($counter:ident => $c:ty;)*) => {
        &[$(kernel(
            concat!($family, "_", stringify!($sample), "_", stringify!($counter)),
            size_of::<HistogramParams<$stored, $level, $c>>(),
            HISTOGRAM.block_threads,
            None,
        )),*]
    };
}

/// A row kernel: at most [`MAX_BLOCK_THREADS`] threads and one block a multiprocessor (64
/// registers), fewer registers where the policy's
/// [`register_limits`](RowPolicy::register_limits) name it, in clusters of sm_90's
/// [`cluster_blocks`](RowPolicy::cluster_blocks) blocks from sm_90 where `cluster`.
const fn row_kernel(name: &'static str, params_bytes: usize, cluster: bool) -> Kernel {
    let max_registers = ROWS.register_limit(name);
    Kernel {
        name,
        params_bytes,
        block: BlockThreads::Planned {
            max: MAX_BLOCK_THREADS,
        },
        bounds: Some(LaunchBounds {
            max_threads: MAX_BLOCK_THREADS,
            min_blocks_per_sm: 1,
            max_registers,
        }),
        cluster_blocks: if cluster {
            Some(RowPolicy::SM90.cluster_blocks)
        } else {
            None
        },
        min_arch: if cluster { 90 } else { 80 },
    }
}

/// The row operations: a family per operation, a group per element type.
macro_rules! row_families {
    ([] $($op:ident => $ty:ident, $inputs:literal, $words:literal, $tiled_words:literal, $paths:ident;)*) => {
        &[$(Family {
            name: $crate::row_family_name!($op),
            tables: &[row_table!(row_elements, $op, $paths)],
            spill_bytes: ROW_SPILL_BYTES,
        }),*]
    };
}

macro_rules! row_elements {
    ([$op:ident, $paths:ident] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {
        &[$(row_paths!($paths, $op, $name, $stored, [$($words),*])),*]
    };
}

/// An operation's kernels of one element type: one a word count, a `_tiled` one a word count
/// for the `split` (and `sums`) operations, and a `_cluster` one a word count.
macro_rules! row_paths {
    (sums, $($rest:tt)*) => {
        row_paths!(split, $($rest)*)
    };
    (split, $op:ident, $name:ident, $stored:ty, [$($words:literal),*]) => {
        &[
            $(row_kernel($crate::row_kernel_name!($op, $name, $words), size_of::<RowParams<$stored>>(), false),)*
            $(row_kernel($crate::row_kernel_name!($op, $name, $words, tiled), size_of::<RowParams<$stored>>(), false),)*
            $(row_kernel($crate::row_kernel_name!($op, $name, $words, cluster), size_of::<RowParams<$stored>>(), true),)*
        ]
    };
    ($paths:ident, $op:ident, $name:ident, $stored:ty, [$($words:literal),*]) => {
        &[
            $(row_kernel($crate::row_kernel_name!($op, $name, $words), size_of::<RowParams<$stored>>(), false),)*
            $(row_kernel($crate::row_kernel_name!($op, $name, $words, cluster), size_of::<RowParams<$stored>>(), true),)*
        ]
    };
}

/// The norms' parameter gradients, stage `$stage` (`partial` or `finish`): one group.
macro_rules! norm_grads {
    ([$stage:ident] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {
        &[&[$(Kernel {
            block: BlockThreads::Fixed(NORM_GRAD.block_threads),
            ..row_kernel($crate::kernel_name!(rows_norm_grads, $stage, $name), size_of::<NormGradParams<$stored>>(), false)
        }),*]]
    };
}

/// A cross-entropy step of its own (`count` or `mean`), one kernel.
const fn cross_entropy_step(name: &'static str) -> Kernel {
    Kernel {
        block: BlockThreads::Fixed(ROWS.target_count_block_threads),
        ..row_kernel(name, size_of::<TargetCountParams>(), false)
    }
}

/// The tiers of the radix sort whose kernels exist per value payload and key type.
#[derive(Clone, Copy)]
enum SortTier {
    Onesweep,
    OnesweepSmall,
    Segmented,
    WarpMerge,
    WarpSort,
    WarpRadix,
}

/// A kernel of sort tier `tier` for keys of `key_bytes` (their ordered bits) and the value
/// payload named `payload`.
const fn sort_kernel(
    name: &'static str,
    params_bytes: usize,
    tier: SortTier,
    key_bytes: usize,
    payload: &str,
) -> Kernel {
    let value_bytes = sort_payload_bytes(payload);
    let (block, bounds) = match tier {
        SortTier::Onesweep | SortTier::OnesweepSmall => {
            let small = matches!(tier, SortTier::OnesweepSmall);
            let threads = onesweep_threads(SORT, key_bytes, value_bytes, small);
            (
                threads,
                bounds(
                    threads,
                    onesweep_blocks_per_sm(SORT, key_bytes, value_bytes, small),
                ),
            )
        }
        SortTier::Segmented => (
            SORT_BLOCK,
            bounds(
                SORT_BLOCK,
                segmented_sort_blocks_per_sm(SEGMENTED_SORT, key_bytes, value_bytes),
            ),
        ),
        SortTier::WarpMerge => (
            SORT_BLOCK,
            bounds(SORT_BLOCK, SEGMENTED_SORT.warp_merge_sort_blocks_per_sm),
        ),
        SortTier::WarpSort => (SORT_BLOCK, None),
        SortTier::WarpRadix => (
            SORT_BLOCK,
            bounds(SORT_BLOCK, SEGMENTED_SORT.warp_radix_sort_blocks_per_sm),
        ),
    };
    kernel(name, params_bytes, block, bounds)
}

/// The onesweep passes' spill budget for the value payload named `payload`.
const fn onesweep_spill_bytes(payload: &str) -> usize {
    if sort_payload_bytes(payload) == 0 {
        SORT_KEYS_SPILL_BYTES
    } else {
        SORT_PAIRS_SPILL_BYTES
    }
}

/// The sort's families of one value payload: its onesweep passes (larger and small tiles) and
/// its segmented tiers, a group per key type.
macro_rules! sort_payload_families {
    ([] $($values:ident => $vty:ty;)*) => {
        &[$(
            Family {
                name: concat!("device_radix_sort_onesweep_", stringify!($values)),
                tables: &[sort_key_table!(sort_keys, onesweep, Onesweep, OnesweepParams, $values, $vty)],
                spill_bytes: onesweep_spill_bytes(stringify!($values)),
            },
            Family {
                name: concat!("device_radix_sort_onesweep_", stringify!($values), "_small"),
                tables: &[sort_key_table!(sort_small_keys, $values, $vty)],
                spill_bytes: onesweep_spill_bytes(stringify!($values)),
            },
            Family {
                name: concat!("device_segmented_radix_sort_", stringify!($values)),
                tables: &[sort_key_table!(sort_keys, segmented, Segmented, SegmentedSortParams, $values, $vty)],
                spill_bytes: SEGMENTED_SORT_SPILL_BYTES,
            },
            Family {
                name: concat!("device_segmented_warp_merge_sort_", stringify!($values)),
                tables: &[sort_key_table!(sort_keys, segmented_warp_merge, WarpMerge, SegmentedSortParams, $values, $vty)],
                spill_bytes: WARP_MERGE_SORT_SPILL_BYTES,
            },
            Family {
                name: concat!("device_segmented_warp_sort_", stringify!($values)),
                tables: &[sort_key_table!(sort_keys, segmented_warp, WarpSort, SegmentedSortParams, $values, $vty)],
                spill_bytes: 0,
            },
            Family {
                name: concat!("device_segmented_warp_radix_sort_", stringify!($values)),
                tables: &[sort_key_table!(sort_keys, segmented_warp_radix, WarpRadix, SegmentedSortParams, $values, $vty)],
                spill_bytes: WARP_RADIX_SORT_SPILL_BYTES,
            },
        )*]
    };
}

macro_rules! sort_keys {
    ([$kind:ident, $tier:ident, $p:ident, $values:ident, $vty:ty]
     $($key:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
       $v4_items:literal, $v8_items:literal, $small:tt;)*) => {
        &[&[$(sort_kernel(
            $crate::radix_sort_kernel_name!($kind, $key, $values),
            size_of::<$p<$stored, $vty>>(),
            SortTier::$tier,
            size_of::<$bits>(),
            stringify!($values),
        )),*]]
    };
}

/// The onesweep passes of small tiles of payload `$values`: a group per key type, empty where
/// its `sort_key_table!` row lists no small tiles for the payload.
macro_rules! sort_small_keys {
    ([$values:ident, $vty:ty]
     $($key:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
       $v4_items:literal, $v8_items:literal, $small:tt;)*) => {
        &[$(if_small_tiles!($values, $small, sort_kernel(
            $crate::radix_sort_kernel_name!(onesweep_small, $key, $values),
            size_of::<OnesweepParams<$stored, $vty>>(),
            SortTier::OnesweepSmall,
            size_of::<$bits>(),
            stringify!($values),
        ))),*]
    };
}

/// `&[$kernel]` where the small tiles `[payload items, ...]` list payload `$values`, else
/// `&[]` (one arm per payload of `sort_value_table!`; the registry's tests count them).
macro_rules! if_small_tiles {
    (keys, [keys $n:literal $(, $($rest:tt)*)?], $kernel:expr) => { &[$kernel] };
    (v4, [v4 $n:literal $(, $($rest:tt)*)?], $kernel:expr) => { &[$kernel] };
    (v8, [v8 $n:literal $(, $($rest:tt)*)?], $kernel:expr) => { &[$kernel] };
    ($values:ident, [$other:ident $n:literal $(, $($rest:tt)*)?], $kernel:expr) => {
        if_small_tiles!($values, [$($($rest)*)?], $kernel)
    };
    ($values:ident, [], $kernel:expr) => { &[] };
}

/// The sort's kernels of one per key type (its upfront digit histogram, the top-k).
macro_rules! sort_per_key {
    ([$kind:ident, $p:ident, $block:expr, $bounds:expr]
     $($key:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
       $v4_items:literal, $v8_items:literal, $small:tt;)*) => {
        &[&[$(kernel(
            $crate::radix_sort_kernel_name!($kind, $key),
            size_of::<$p<$stored>>(),
            $block,
            $bounds,
        )),*]]
    };
}

/// Every family but the row operations' and the sort's tiers of a value payload.
pub const ALGORITHM_FAMILIES: &[Family] = &[
    Family {
        name: "device_reduce",
        tables: &[element_table!(
            per_element_and_operator,
            reduce,
            stored_acc,
            ReduceParams,
            REDUCE.block_threads,
            REDUCE_BOUNDS
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_argmin",
        tables: &[element_table!(
            per_element,
            argmin,
            all,
            stored_indexed,
            ReduceParams,
            REDUCE.block_threads,
            REDUCE_BOUNDS
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_argmax",
        tables: &[element_table!(
            per_element,
            argmax,
            all,
            stored_indexed,
            ReduceParams,
            REDUCE.block_threads,
            REDUCE_BOUNDS
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_argmin_final",
        tables: &[element_table!(
            per_element,
            argmin_final,
            finals,
            acc,
            ArgFinalParams,
            REDUCE.block_threads,
            REDUCE_BOUNDS
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_argmax_final",
        tables: &[element_table!(
            per_element,
            argmax_final,
            finals,
            acc,
            ArgFinalParams,
            REDUCE.block_threads,
            REDUCE_BOUNDS
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_dot",
        tables: &[element_table!(
            per_element,
            dot,
            dot,
            stored_acc,
            DotParams,
            REDUCE.block_threads,
            REDUCE_BOUNDS
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_segmented_reduce",
        tables: &[element_table!(
            per_element_and_operator,
            segmented_reduce,
            stored_acc,
            SegmentedReduceParams,
            REDUCE.block_threads,
            None
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_scan",
        tables: &[
            element_table!(
                per_element_and_operator,
                scan,
                stored_acc,
                ScanParams,
                SCAN.block_threads,
                None
            ),
            &[scan_operator_table!(scan_only)],
        ],
        spill_bytes: 0,
    },
    Family {
        name: "device_scan_by",
        tables: scan_key_table!(scan_by_key_keys),
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_reduce_by_key",
        tables: scan_key_table!(reduce_by_key_keys),
        // 8-byte keys and values spill up to 48 bytes under the 64 registers.
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_segmented_scan",
        tables: &[element_table!(
            per_element_and_operator,
            segmented_scan,
            by_offsets,
            SegmentedScanParams,
            SEGMENTED.block_threads,
            SEGMENTED_BOUNDS
        )],
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_segmented_reduce_by_offsets",
        tables: &[element_table!(
            per_element_and_operator,
            segmented_reduce_by_offsets,
            by_offsets,
            SegmentedScanParams,
            SEGMENTED.block_threads,
            bounds(SEGMENTED.block_threads, SEGMENTED.reduce_blocks_per_sm)
        )],
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_segmented_argmin",
        tables: &[segment_arg_table!(segmented_arg, segmented_argmin)],
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_segmented_argmax",
        tables: &[segment_arg_table!(segmented_arg, segmented_argmax)],
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_segment_tile_starts",
        tables: &[&[&[kernel(
            crate::kernel_name!(segment_tile_starts),
            size_of::<SegmentTileStartsParams>(),
            SEGMENTED.block_threads,
            None,
        )]]],
        spill_bytes: 0,
    },
    Family {
        name: "device_select_if",
        tables: &[element_table!(
            per_element,
            select_if,
            all,
            stored,
            SelectParams,
            SELECT.block_threads,
            SELECT_BOUNDS
        )],
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_select_flagged",
        tables: &[element_table!(
            per_element,
            select_flagged,
            all,
            stored,
            SelectParams,
            SELECT.block_threads,
            SELECT_BOUNDS
        )],
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_unique",
        tables: &[element_table!(
            per_element,
            unique,
            all,
            stored,
            SelectParams,
            SELECT.block_threads,
            SELECT_BOUNDS
        )],
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_reverse_tail",
        tables: &[element_table!(
            per_element,
            reverse_tail,
            all,
            stored,
            ReverseTailParams,
            SELECT.block_threads,
            None
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_run_length_encode",
        tables: &[element_table!(
            per_element,
            run_length_encode,
            all,
            stored,
            RunParams,
            SELECT.block_threads,
            SELECT_BOUNDS
        )],
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_non_trivial_runs",
        tables: &[element_table!(
            per_element,
            non_trivial_runs,
            all,
            stored,
            RunParams,
            SELECT.block_threads,
            SELECT_BOUNDS
        )],
        spill_bytes: COMPACTION_SPILL_BYTES,
    },
    Family {
        name: "device_histogram_even",
        tables: &[histogram_sample_table!(
            histogram_samples,
            "device_histogram_even"
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_histogram_range",
        tables: &[histogram_sample_table!(
            histogram_samples,
            "device_histogram_range"
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_rows_norm_grads_partial",
        tables: &[row_table!(norm_grads, partial)],
        spill_bytes: ROW_SPILL_BYTES,
    },
    Family {
        name: "device_rows_norm_grads_finish",
        tables: &[row_table!(norm_grads, finish)],
        spill_bytes: ROW_SPILL_BYTES,
    },
    Family {
        name: crate::kernel_name!(rows_cross_entropy, count),
        tables: &[&[&[cross_entropy_step(crate::kernel_name!(rows_cross_entropy, count))]]],
        spill_bytes: ROW_SPILL_BYTES,
    },
    Family {
        name: crate::kernel_name!(rows_cross_entropy, mean),
        tables: &[&[&[cross_entropy_step(crate::kernel_name!(rows_cross_entropy, mean))]]],
        spill_bytes: ROW_SPILL_BYTES,
    },
    Family {
        name: "device_radix_sort_histogram",
        tables: &[sort_key_table!(
            sort_per_key,
            histogram,
            RadixHistogramParams,
            SORT.histogram_block_threads,
            bounds(SORT.histogram_block_threads, SORT.histogram_blocks_per_sm)
        )],
        spill_bytes: 0,
    },
    Family {
        name: "device_top_k",
        tables: &[sort_key_table!(
            sort_per_key,
            top_k,
            TopKParams,
            SORT_BLOCK,
            bounds(SORT_BLOCK, TOP_K.blocks_per_sm)
        )],
        spill_bytes: TOP_K_SPILL_BYTES,
    },
    Family {
        name: "device_radix_select_top_k",
        tables: &[sort_key_table!(
            sort_per_key,
            radix_select_top_k,
            RadixSelectTopKParams,
            TOP_K.radix_select_block_threads,
            bounds(TOP_K.radix_select_block_threads, TOP_K.radix_select_blocks_per_sm)
        )],
        spill_bytes: 0,
    },
];

/// The row operations' families (`device_rows_<op>`), in `row_op_table!`'s order.
pub const ROW_FAMILIES: &[Family] = row_op_table!(row_families);

/// The sort's families per value payload (`sort_value_table!`), six each: the onesweep passes
/// of larger and of small tiles, then the segmented radix sort and its warp merge, warp and
/// warp radix tiers.
pub const SORT_FAMILIES: &[Family] = sort_value_table!(sort_payload_families);

/// The three lists of families.
const LISTS: [&[Family]; 3] = [ALGORITHM_FAMILIES, ROW_FAMILIES, SORT_FAMILIES];

/// Every family of the library.
pub fn families() -> impl Iterator<Item = &'static Family> {
    LISTS.iter().flat_map(|list| list.iter())
}

/// Every kernel of the library, with its family.
pub fn kernels() -> impl Iterator<Item = (&'static Family, &'static Kernel)> {
    families().flat_map(|family| family.kernels().map(move |kernel| (family, kernel)))
}

/// The family named `name`; panics where there is none (at compile time where evaluated in a
/// constant, as the host does).
pub const fn family(name: &str) -> &'static Family {
    let mut l = 0;
    while l < LISTS.len() {
        let list = LISTS[l];
        let mut f = 0;
        while f < list.len() {
            if str_eq(list[f].name, name) {
                return &list[f];
            }
            f += 1;
        }
        l += 1;
    }
    panic!("no kernel family of that name in gpu_primitives_abi::families")
}

/// The onesweep pass family of values of `value_bytes` bytes (0: keys alone), of small tiles
/// where `small`; panics on a width `sort_value_table!` has no payload for.
pub const fn onesweep_family(value_bytes: usize, small: bool) -> &'static Family {
    sort_family(value_bytes, if small { 1 } else { 0 })
}

/// The tiers of the segmented sort, in the order of [`SORT_FAMILIES`]' segmented families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentedSortTier {
    /// A block a segment (`device_segmented_radix_sort_*`).
    Block,
    /// A group of 2 or 4 warps a segment, their tiles merged (`device_segmented_warp_merge_sort_*`).
    WarpMerge,
    /// A warp a segment, in registers (`device_segmented_warp_sort_*`).
    Warp,
    /// A warp a segment, a tile in shared memory (`device_segmented_warp_radix_sort_*`).
    WarpRadix,
}

/// The segmented sort family of `tier` for values of `value_bytes` bytes (0: keys alone).
pub const fn segmented_sort_family(tier: SegmentedSortTier, value_bytes: usize) -> &'static Family {
    sort_family(
        value_bytes,
        match tier {
            SegmentedSortTier::Block => 2,
            SegmentedSortTier::WarpMerge => 3,
            SegmentedSortTier::Warp => 4,
            SegmentedSortTier::WarpRadix => 5,
        },
    )
}

/// The `tier`-th of the six sort families of the payload of `value_bytes`.
const fn sort_family(value_bytes: usize, tier: usize) -> &'static Family {
    let payload = crate::table::sort_payload_name(value_bytes);
    let mut p = 0;
    while !str_eq(crate::table::SORT_PAYLOADS[p].0, payload) {
        p += 1;
    }
    &SORT_FAMILIES[6 * p + tier]
}

/// The name part of a row kernel's words a thread (`w4` for 4), of the word counts
/// `row_table!` lists; `None` for another.
pub const fn row_words_part(words: u32) -> Option<&'static str> {
    let mut i = 0;
    while i < crate::table::ROW_WORDS_PARTS.len() {
        if crate::table::ROW_WORDS_PARTS[i].0 == words {
            return Some(crate::table::ROW_WORDS_PARTS[i].1);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::vec::Vec;

    fn names(family: &str) -> Vec<&'static str> {
        family_named(family).kernels().map(|k| k.name).collect()
    }

    fn family_named(name: &str) -> &'static Family {
        families()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no family {name}"))
    }

    fn kernel(name: &str) -> &'static Kernel {
        kernels()
            .map(|(_, k)| k)
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("no kernel {name}"))
    }

    #[test]
    fn kernel_names_are_unique_and_start_with_their_family() {
        let all: Vec<&str> = kernels().map(|(_, k)| k.name).collect();
        let unique: BTreeSet<&str> = all.iter().copied().collect();
        assert_eq!(unique.len(), all.len());
        let families: BTreeSet<&str> = families().map(|f| f.name).collect();
        assert_eq!(families.len(), 59);
        for (family, k) in kernels() {
            assert!(
                k.name == family.name || k.name.starts_with(&std::format!("{}_", family.name)),
                "{} in {}",
                k.name,
                family.name
            );
            // No kernel name is another family's name followed by its types: the family of a
            // name is the longest registered name it starts with.
            let longest = families
                .iter()
                .filter(|f| k.name == **f || k.name.starts_with(&std::format!("{f}_")))
                .max_by_key(|f| f.len())
                .copied();
            assert_eq!(longest, Some(family.name), "{}", k.name);
        }
    }

    #[test]
    fn families_cover_every_type_operator_and_tier() {
        // 8 element types x 3 operators, and the affine scan of u32 and u64.
        assert_eq!(names("device_reduce").len(), 8 * 3);
        assert_eq!(names("device_scan").len(), 8 * 3 + 2);
        assert!(names("device_scan").contains(&"device_scan_u64_affine"));
        assert_eq!(names("device_argmax").len(), 8);
        // Second passes of the types accumulated in themselves; dot products of the floats.
        assert_eq!(names("device_argmax_final").len(), 6);
        assert!(names("device_argmax_final").contains(&"device_argmax_final_u64"));
        assert_eq!(names("device_dot").len(), 4);
        // 2 key widths x 8 element types x 3 operators.
        assert_eq!(names("device_reduce_by_key").len(), 2 * 8 * 3);
        assert!(names("device_reduce_by_key").contains(&"device_reduce_by_key_u64_bf16_max"));
        assert!(
            names("device_segmented_reduce_by_offsets")
                .contains(&"device_segmented_reduce_by_offsets_bf16_min")
        );
        // 2 key types x 8 element types x 3 operators.
        assert_eq!(names("device_scan_by").len(), 2 * 8 * 3);
        assert!(names("device_scan_by").contains(&"device_scan_by_u64_key_bf16_min"));
        assert_eq!(
            names("device_segmented_argmin"),
            [
                "device_segmented_argmin_f32",
                "device_segmented_argmin_i32",
                "device_segmented_argmin_u32",
                "device_segmented_argmin_f16",
                "device_segmented_argmin_bf16",
            ]
        );
        // 8 sample types x 2 counters.
        assert_eq!(names("device_histogram_range").len(), 8 * 2);
        assert!(names("device_histogram_range").contains(&"device_histogram_range_f64_u64"));
        // Rows: f32 of 3 word counts, the halves of 2; a one-tile, a tiled and a cluster kernel
        // each for the split and sums operations, no tiled one for RMSNorm.
        assert_eq!(ROW_FAMILIES.len(), 11);
        assert_eq!(names("device_rows_layer_norm").len(), 3 * 7);
        assert_eq!(names("device_rows_rms_norm").len(), 2 * 7);
        assert!(names("device_rows_layer_norm").contains(&"device_rows_layer_norm_f32_w8_tiled"));
        assert!(
            names("device_rows_layer_norm_backward_sums")
                .contains(&"device_rows_layer_norm_backward_sums_f32_w8_cluster")
        );
        assert!(!names("device_rows_softmax").contains(&"device_rows_softmax_f16_w16"));
        assert_eq!(names("device_rows_norm_grads_finish").len(), 3);
        assert_eq!(
            names("device_rows_cross_entropy_count"),
            ["device_rows_cross_entropy_count"]
        );
        // Sorts: 10 key types, small tiles for the 4- and 8-byte ones.
        assert_eq!(SORT_FAMILIES.len(), 3 * 6);
        assert_eq!(names("device_radix_sort_onesweep_v4").len(), 10);
        assert_eq!(names("device_radix_sort_onesweep_v8_small").len(), 6);
        assert!(
            names("device_radix_sort_onesweep_keys_small")
                .contains(&"device_radix_sort_onesweep_keys_small_f64")
        );
        assert_eq!(names("device_segmented_warp_merge_sort_v8").len(), 10);
        assert_eq!(names("device_top_k").len(), 10);
        assert_eq!(names("device_radix_select_top_k").len(), 10);
        assert_eq!(names("device_radix_sort_histogram").len(), 10);
        // Every kernel: 771 in sm_90's module, 77 of them (11 operations x 7) the row clusters.
        assert_eq!(kernels().count(), 771);
        assert_eq!(kernels().filter(|(_, k)| k.min_arch == 90).count(), 11 * 7);
    }

    #[test]
    fn launch_bounds_and_blocks_are_those_of_the_tuning() {
        let b = |name: &str| {
            kernel(name)
                .bounds
                .map(|b| (b.max_threads, b.min_blocks_per_sm, b.max_registers))
        };
        // 8-byte keys with values in CUB's 384 threads (their small tiles in 256), every other
        // onesweep pass one thread a digit.
        assert_eq!(b("device_radix_sort_onesweep_v4_u64"), Some((384, 2, None)));
        assert_eq!(
            kernel("device_radix_sort_onesweep_v4_u64").block,
            BlockThreads::Fixed(384)
        );
        assert_eq!(b("device_radix_sort_onesweep_v4_small_f64"), Some((256, 2, None)));
        assert_eq!(b("device_radix_sort_onesweep_v8_i64"), Some((384, 2, None)));
        assert_eq!(b("device_radix_sort_onesweep_keys_u64"), Some((256, 2, None)));
        assert_eq!(
            b("device_radix_sort_onesweep_keys_small_i64"),
            Some((256, 4, None))
        );
        assert_eq!(b("device_radix_sort_onesweep_keys_f16"), Some((256, 4, None)));
        // The segmented sort at 2 blocks for 8-byte values and the 4-byte values of narrow keys.
        assert_eq!(b("device_segmented_radix_sort_v4_u8"), Some((256, 2, None)));
        assert_eq!(b("device_segmented_radix_sort_v4_u32"), Some((256, 3, None)));
        assert_eq!(b("device_segmented_radix_sort_v8_u32"), Some((256, 2, None)));
        assert_eq!(b("device_segmented_warp_sort_v4_u32"), None);
        // The argmin / argmax second passes share the reduce's bounds; the segmented reduce
        // (a block a row) has none, the one by offsets its own.
        assert_eq!(b("device_argmin_final_f32"), Some((256, 4, None)));
        assert_eq!(b("device_segmented_reduce_f32_sum"), None);
        assert_eq!(
            b("device_segmented_reduce_by_offsets_f32_sum"),
            Some((256, 6, None))
        );
        assert_eq!(b("device_reverse_tail_f32"), None);
        assert_eq!(b("device_select_if_f32"), Some((256, 4, None)));
        // Rows: 1024 threads, one block, a register limit where the tuning names one, clusters
        // in sm_90's module only.
        assert_eq!(b("device_rows_softmax_bf16_w8"), Some((1024, 1, Some(48))));
        assert_eq!(b("device_rows_softmax_f32_w4"), Some((1024, 1, None)));
        assert_eq!(b("device_rows_norm_grads_partial_f32"), Some((1024, 1, None)));
        let cluster = kernel("device_rows_softmax_f32_w4_cluster");
        assert_eq!(
            (cluster.cluster_blocks, cluster.min_arch),
            (Some(RowPolicy::SM90.cluster_blocks), 90)
        );
        assert_eq!(kernel("device_rows_softmax_f32_w4").min_arch, 80);
        for &(entry, registers) in RowPolicy::SM80.register_limits {
            assert_eq!(
                kernel(entry).bounds.and_then(|b| b.max_registers),
                Some(registers),
                "{entry}"
            );
        }
        // A block never past its bounds.
        for (_, k) in kernels() {
            if let Some(bounds) = k.bounds {
                assert!(k.block.threads() <= bounds.max_threads, "{}", k.name);
            }
        }
    }

    /// The registry holds one block and one set of bounds a kernel for both modules, from the
    /// sm_80 policies: sm_90's must launch the same (its other fields, delays and thresholds the
    /// host reads per GPU, may differ).
    #[test]
    fn every_architecture_launches_the_registry_s_blocks_and_bounds() {
        let launch = |arch: u32| {
            let (reduce, scan, select) = (
                ReducePolicy::for_arch(arch),
                ScanPolicy::for_arch(arch),
                SelectPolicy::for_arch(arch),
            );
            let (segmented, histogram, rows) = (
                SegmentedPolicy::for_arch(arch),
                HistogramPolicy::for_arch(arch),
                RowPolicy::for_arch(arch),
            );
            let (sort, segmented_sort, top_k) = (
                SortPolicy::for_arch(arch),
                SegmentedSortPolicy::for_arch(arch),
                TopKPolicy::for_arch(arch),
            );
            std::vec![
                reduce.block_threads,
                reduce.blocks_per_sm,
                scan.block_threads,
                select.block_threads,
                select.blocks_per_sm,
                segmented.block_threads,
                segmented.scan_blocks_per_sm,
                segmented.reduce_blocks_per_sm,
                segmented.arg_blocks_per_sm,
                segmented.reduce_by_key_blocks_per_sm,
                histogram.block_threads,
                rows.target_count_block_threads,
                NormGradPolicy::for_arch(arch).block_threads,
                sort.keys_blocks_per_sm,
                sort.pairs_blocks_per_sm,
                sort.wide_keys_blocks_per_sm,
                sort.wide_pairs_block_threads,
                sort.histogram_block_threads,
                sort.histogram_blocks_per_sm,
                segmented_sort.blocks_per_sm,
                segmented_sort.warp_radix_sort_blocks_per_sm,
                segmented_sort.warp_merge_sort_blocks_per_sm,
                top_k.blocks_per_sm,
                top_k.radix_select_block_threads,
                top_k.radix_select_blocks_per_sm,
            ]
        };
        assert_eq!(launch(80), launch(90));
        assert_eq!(RowPolicy::SM80.register_limits, RowPolicy::SM90.register_limits);
        // The tile shapes too: the host sizes a workspace asked without a GPU by them
        // (`gpu-primitives`' `tuning::SHAPES_ARCH`).
        let tiles = |arch: u32| {
            let (select, segmented) = (SelectPolicy::for_arch(arch), SegmentedPolicy::for_arch(arch));
            std::vec![
                select.rows,
                select.run_rows,
                select.run_max_items,
                segmented.scan_rows,
                segmented.scan_thread_bytes,
                segmented.reduce_thread_bytes,
                segmented.reduce_by_key_thread_bytes,
                segmented.tile_starts_min_tiles,
                SegmentedSortPolicy::for_arch(arch).warp_radix_sort_items,
            ]
        };
        assert_eq!(tiles(80), tiles(90));
    }

    #[test]
    fn a_kernel_is_found_by_the_parts_of_its_name() {
        const REDUCE: &Family = family("device_reduce");
        assert_eq!(
            REDUCE.kernel(&["f32", "sum"]).map(|k| k.name),
            Some("device_reduce_f32_sum")
        );
        assert_eq!(REDUCE.kernel(&["f32"]), None);
        assert_eq!(REDUCE.kernel(&["f32", "sum", "x"]), None);
        assert_eq!(REDUCE.kernel(&["f32", "su"]), None);
        assert_eq!(
            family("device_scan_by")
                .kernel(&["u32", "key", "f64", "sum"])
                .map(|k| k.name),
            Some("device_scan_by_u32_key_f64_sum")
        );
        let rows = family(crate::row_family_name!(softmax));
        assert_eq!(
            rows.kernel(&["f32", row_words_part(4).unwrap(), "cluster"])
                .map(|k| k.name),
            Some("device_rows_softmax_f32_w4_cluster")
        );
        assert_eq!(row_words_part(3), None);
        assert_eq!(
            family("device_rows_cross_entropy_count")
                .kernel(&[])
                .map(|k| k.name),
            Some("device_rows_cross_entropy_count")
        );
        assert_eq!(
            onesweep_family(4, true).name,
            "device_radix_sort_onesweep_v4_small"
        );
        assert_eq!(onesweep_family(0, false).name, "device_radix_sort_onesweep_keys");
        assert_eq!(
            segmented_sort_family(SegmentedSortTier::WarpMerge, 8).name,
            "device_segmented_warp_merge_sort_v8"
        );
        assert_eq!(
            segmented_sort_family(SegmentedSortTier::Block, 0).name,
            "device_segmented_radix_sort_keys"
        );
        assert_eq!(
            segmented_sort_family(SegmentedSortTier::Warp, 4).name,
            "device_segmented_warp_sort_v4"
        );
        assert_eq!(
            segmented_sort_family(SegmentedSortTier::WarpRadix, 4).name,
            "device_segmented_warp_radix_sort_v4"
        );
    }
}
