//! Checks of the generated PTX that need no GPU: every module names its architecture, holds every
//! kernel the host launches, reaches shared memory through `ld.shared` / `st.shared`, and is
//! accepted by `ptxas` (which also reports registers and spills per kernel). The library's
//! kernels are read as the program reads them: each family's frame decompressed.

use std::process::Command;
use std::sync::OnceLock;

/// Each architecture's PTX modules: (compute capability x 10, the modules' texts).
type Variants = Vec<(u32, Vec<String>)>;

/// Every PTX module of the project: (whose, its variants); the library's are its families.
fn modules() -> &'static [(&'static str, Variants)] {
    static MODULES: OnceLock<Vec<(&str, Variants)>> = OnceLock::new();
    MODULES.get_or_init(|| {
        let library = gpu_primitives::KERNELS
            .iter()
            .map(|m| {
                let families = m
                    .families
                    .iter()
                    .map(|f| f.decompress().expect("a family's frame"));
                (m.arch, families.collect())
            })
            .collect();
        let text = |variants: &[(u32, &str)]| -> Variants {
            variants
                .iter()
                .map(|&(arch, ptx)| (arch, vec![ptx.to_owned()]))
                .collect()
        };
        vec![
            ("library", library),
            ("lessons", text(gpu_primitives_lessons::PTX_VARIANTS)),
            ("probes", text(gpu_primitives_tests::PTX_VARIANTS)),
        ]
    })
}

/// The library's kernels per architecture, every family's text one after another (for reading
/// kernels by name; not one module ptxas would take).
fn library() -> &'static [(u32, String)] {
    static LIBRARY: OnceLock<Vec<(u32, String)>> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        modules()[0]
            .1
            .iter()
            .map(|(arch, texts)| (*arch, texts.concat()))
            .collect()
    })
}

/// Every kernel the lessons launch by name.
const LESSON_KERNELS: &[&str] = &[
    "dot_product_shared_tree",
    "sum_naive",
    "block_sum_hierarchical",
    "p24_warp_sum",
    "p26_pair_swap",
    "p26_warp_max",
    "p26_max_min",
    "p27_mean_normalize",
    "p27_prefix_sum",
    "scan_kogge_stone",
    "scan_kogge_stone_double_buffered",
    "scan_brent_kung",
    "scan_add_section_prefixes",
];

/// Every probe kernel the GPU tests launch by name.
const PROBE_KERNELS: &[&str] = &[
    "probe_shuffle_f32",
    "probe_shuffle_i32",
    "probe_shuffle_u32",
    "probe_shuffle_f64",
    "probe_shuffle_i64",
    "probe_shuffle_u64",
    "probe_vote",
    "probe_atomics_u32",
    "probe_atomics_i32",
    "probe_atomics_u64",
    "probe_atomics_i64",
    "probe_atomic_add_float",
    "probe_cas",
    "probe_warp_i32",
    "probe_warp_f32",
    "probe_warp_u32",
    "probe_tile_f32_items4",
    "probe_tile_f32_items8",
    "probe_tile_f32_items16",
    "probe_tile_f32_items32",
    "probe_segmented_tile_u32_items4",
    "probe_segmented_tile_u32_items8",
    "probe_segmented_tile_u32_items24",
    "probe_exchange_u32_items1",
    "probe_exchange_u32_items2",
    "probe_exchange_u32_items3",
    "probe_exchange_u32_items4",
    "probe_exchange_u32_items7",
    "probe_exchange_u32_items16",
    "probe_exchange_u64_items3",
    "probe_exchange_u64_items8",
    "probe_exchange_u16_items5",
    "probe_exchange_u16_items32",
    "probe_select_odd_bit_count_u32",
    "probe_block_u32_items1",
    "probe_block_u32_items2",
    "probe_block_u32_items3",
    "probe_block_u32_items4",
    "probe_block_i32_items1",
    "probe_block_i32_items2",
    "probe_block_i32_items3",
    "probe_block_i32_items4",
    "probe_block_f32_items1",
    "probe_block_f32_items2",
    "probe_block_f32_items3",
    "probe_block_f32_items4",
    "probe_block_radix_rank_items1",
    "probe_block_radix_rank_items4",
    "probe_block_radix_rank_items16",
    "probe_block_radix_sort_u32_items1",
    "probe_block_radix_sort_u32_items4",
    "probe_block_radix_sort_u32_items16",
    "probe_block_radix_sort_u8_items4",
    "probe_block_radix_sort_u64_items4",
    "probe_warp_radix_sort_u32_items1",
    "probe_warp_radix_sort_u32_items8",
    "probe_warp_radix_sort_u32_items16",
    "probe_warp_radix_sort_u8_items16",
    "probe_warp_radix_sort_u64_items8",
];

/// The device-wide kernels, from the tables in gpu-primitives-abi.
fn device_kernels() -> Vec<&'static str> {
    use gpu_primitives_abi::table::{
        CROSS_ENTROPY_COUNT_KERNEL, CROSS_ENTROPY_MEAN_KERNEL, DEVICE_KERNELS, HISTOGRAM_KERNELS,
        NORM_GRAD_KERNELS, ROW_KERNELS, SCAN_BY_KEY_KERNELS, SEGMENT_ARG_KERNELS, SEGMENT_TILE_STARTS_KERNEL,
        SORT_KERNELS,
    };
    DEVICE_KERNELS
        .iter()
        .chain(HISTOGRAM_KERNELS)
        .chain(SEGMENT_ARG_KERNELS)
        .chain(SCAN_BY_KEY_KERNELS.iter().flat_map(|key| key.iter()))
        .chain(ROW_KERNELS.iter().flat_map(|element| element.iter()))
        .flat_map(|group| group.iter().copied())
        .chain([SEGMENT_TILE_STARTS_KERNEL])
        .chain(NORM_GRAD_KERNELS.iter().copied())
        .chain([CROSS_ENTROPY_COUNT_KERNEL, CROSS_ENTROPY_MEAN_KERNEL])
        .chain(
            SORT_KERNELS
                .iter()
                .flat_map(|(histogram, passes)| std::iter::once(*histogram).chain(passes.iter().copied())),
        )
        .collect()
}

/// The device-wide kernels of the library's module for sm_`arch`: the row operations' cluster
/// kernels too from sm_90 on.
fn device_kernels_for(arch: u32) -> Vec<&'static str> {
    let mut names = device_kernels();
    if arch >= 90 {
        let clusters = gpu_primitives_abi::table::ROW_CLUSTER_KERNELS;
        names.extend(
            clusters
                .iter()
                .flat_map(|element| element.iter())
                .flat_map(|op| op.iter().copied()),
        );
    }
    names
}

/// The names of the `.entry` points of a module.
fn entries(ptx: &str) -> Vec<&str> {
    ptx.split(".entry ")
        .skip(1)
        .map(|rest| rest.split('(').next().unwrap_or("").trim())
        .collect()
}

/// The body of kernel `name` in `ptx` (from its `.entry` line to the next `.entry`).
fn kernel_body<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("kernel {name} not found"));
    let rest = &ptx[start + 1..];
    let end = rest.find(".entry ").map_or(ptx.len(), |e| start + 1 + e);
    &ptx[start..end]
}

#[test]
fn variants_exist_for_sm80_and_sm90() {
    for (whose, variants) in modules() {
        let archs: Vec<u32> = variants.iter().map(|v| v.0).collect();
        assert_eq!(archs, [80, 90], "{whose}");
        for (arch, ptx) in variants
            .iter()
            .flat_map(|(arch, texts)| texts.iter().map(move |t| (arch, t)))
        {
            assert!(
                ptx.contains(&format!(".target sm_{arch}")),
                "{whose} sm_{arch}: wrong .target"
            );
            assert!(ptx.contains(".address_size 64"));
        }
    }
}

/// Each module holds exactly the kernels its crate launches (the kernel crate's features keep
/// them apart).
#[test]
fn each_module_holds_exactly_what_its_crate_launches() {
    for ((whose, variants), launched) in
        modules()
            .iter()
            .zip([None, Some(LESSON_KERNELS), Some(PROBE_KERNELS)])
    {
        for (arch, texts) in variants {
            let mut found: Vec<&str> = texts.iter().flat_map(|ptx| entries(ptx)).collect();
            let mut expected = launched.map_or_else(|| device_kernels_for(*arch), <[&str]>::to_vec);
            found.sort_unstable();
            expected.sort_unstable();
            assert_eq!(found, expected, "{whose} sm_{arch}: entry points");
        }
    }
}

/// The reduce families declare their launch bounds (REDUCE_BLOCK threads, REDUCE_BLOCKS_PER_SM
/// blocks per multiprocessor), the compaction families theirs (SELECT_BLOCK, SELECT_BLOCKS_PER_SM),
/// the segmented ones theirs (SCAN_BLOCK, each family's blocks from SEGMENTED_LAUNCH_BOUNDS), the
/// row operations 1024 threads and one block (and `.maxnreg` for ROW_REGISTER_LIMITS' entries),
/// the onesweep passes their table::SORT_LAUNCH_BOUNDS (threads and blocks), the segmented sort SORT_BLOCK
/// and SEGMENTED_SORT_BLOCKS_PER_SM
/// (2 for SEGMENTED_SORT_TWO_BLOCK_FAMILIES), its warp merge tier SORT_BLOCK and
/// SEGMENTED_WARP_MERGE_SORT_BLOCKS_PER_SM, its warp radix tier SORT_BLOCK and
/// SEGMENTED_WARP_RADIX_SORT_BLOCKS_PER_SM, the top-k SORT_BLOCK and TOP_K_BLOCKS_PER_SM, the sort's
/// upfront histogram SORT_HISTOGRAM_BLOCK and SORT_HISTOGRAM_BLOCKS_PER_SM; the others declare none.
#[test]
fn reduce_and_compaction_kernels_declare_launch_bounds() {
    use gpu_primitives_abi::tuning::*;
    let bounds = |threads: u32, blocks: u32| format!(".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n{{");
    for (arch, ptx) in library() {
        for name in device_kernels_for(*arch) {
            let body = kernel_body(ptx, name);
            let has = |prefixes: &[&str]| prefixes.iter().any(|p| name.starts_with(p));
            let segmented = SEGMENTED_LAUNCH_BOUNDS.iter().find(|(prefixes, _)| has(prefixes));
            let expected = if has(REDUCE_FAMILIES) {
                Some(bounds(REDUCE_BLOCK, REDUCE_BLOCKS_PER_SM))
            } else if has(SELECT_FAMILIES) {
                Some(bounds(SELECT_BLOCK, SELECT_BLOCKS_PER_SM))
            } else if let Some(&(_, blocks)) = segmented {
                Some(bounds(SCAN_BLOCK, blocks))
            } else if let Some(&(_, registers)) = ROW_REGISTER_LIMITS.iter().find(|(e, _)| name == *e) {
                let b = bounds(gpu_primitives_abi::layout::MAX_BLOCK_THREADS, 1);
                Some(b.replace("\n{", &format!("\n.maxnreg {registers}\n{{")))
            } else if name.starts_with(ROW_FAMILY) {
                Some(bounds(gpu_primitives_abi::layout::MAX_BLOCK_THREADS, 1))
            } else if let Some(&(_, threads, blocks)) = gpu_primitives_abi::table::SORT_LAUNCH_BOUNDS
                .iter()
                .flat_map(|key| key.iter())
                .find(|(pass, ..)| name == *pass)
            {
                Some(bounds(threads, blocks))
            } else if SEGMENTED_SORT_TWO_BLOCK_FAMILIES
                .iter()
                .any(|p| name.starts_with(p))
            {
                Some(bounds(SORT_BLOCK, 2))
            } else if name.starts_with(SEGMENTED_SORT_FAMILY) {
                Some(bounds(SORT_BLOCK, SEGMENTED_SORT_BLOCKS_PER_SM))
            } else if name.starts_with(SEGMENTED_WARP_MERGE_SORT_FAMILY) {
                Some(bounds(SORT_BLOCK, SEGMENTED_WARP_MERGE_SORT_BLOCKS_PER_SM))
            } else if name.starts_with(SEGMENTED_WARP_RADIX_SORT_FAMILY) {
                Some(bounds(SORT_BLOCK, SEGMENTED_WARP_RADIX_SORT_BLOCKS_PER_SM))
            } else if name.starts_with(TOP_K_FAMILY) {
                Some(bounds(SORT_BLOCK, TOP_K_BLOCKS_PER_SM))
            } else if name.starts_with(SORT_HISTOGRAM_FAMILY) {
                Some(bounds(SORT_HISTOGRAM_BLOCK, SORT_HISTOGRAM_BLOCKS_PER_SM))
            } else {
                None
            };
            match expected {
                Some(b) => assert!(body.contains(&b), "sm_{arch} {name}: launch bounds {b:?}"),
                None => assert!(
                    !body.contains(".maxntid"),
                    "sm_{arch} {name}: launch bounds declared"
                ),
            }
        }
    }
}

/// Most bytes a onesweep pass that moves values may spill per thread (each way) under its launch
/// bounds (2 blocks, 128 registers): the kernels of 8-byte values hold 16 of them beside the
/// keys, digits and ranks, and spill up to 32 bytes (sm_80; 8 on sm_90); the others none.
const SORT_SPILL_BYTES: usize = 32;
/// As [`SORT_SPILL_BYTES`], for the passes of keys alone (4 blocks, 64 registers): none since
/// their keys are stored as ranked; at 3 blocks they spilled up to 116 bytes (sm_80) and still
/// measured faster than 2 blocks without spills (tuning's `SORT_KEYS_BLOCKS_PER_SM`).
const SORT_KEYS_SPILL_BYTES: usize = 120;

/// As [`SORT_SPILL_BYTES`], for the segmented sort (3 blocks, 80 registers; 2 and 128 for
/// `SEGMENTED_SORT_TWO_BLOCK_FAMILIES`): up to 512 bytes (`u32` values of 4-byte keys, sm_90;
/// 248 for keys alone, 324 for 8-byte values at 2 blocks), which measured 6-14 % faster than 2
/// blocks (2 blocks measured 1.43x faster than 1 without spills; tuning's
/// `SEGMENTED_SORT_BLOCKS_PER_SM`).
const SEGMENTED_SORT_SPILL_BYTES: usize = 1024;

/// As [`SORT_SPILL_BYTES`], for the segmented sort's warp radix tier (3 blocks, 80 registers;
/// two tiles, of 8 and 16 keys a lane): keys of up to 4 bytes alone none on sm_90 (88 on
/// sm_80), pairs (a `u32` position a key) up to 92 bytes on sm_90 (324 on sm_80), 8-byte keys
/// up to 364 (480 on sm_80).
const WARP_RADIX_SORT_SPILL_BYTES: usize = 512;
/// As [`SORT_SPILL_BYTES`], for the segmented sort's warp merge tier (the warp radix tier's sort
/// of 16 keys a lane, then up to two levels of merges; 3 blocks, 80 registers): sm_90 `f32` and
/// `u8` keys alone none, their pairs 116-164 bytes, 8-byte keys' pairs up to 500 (sm_80: 56-60
/// bytes for keys alone, up to 440).
const WARP_MERGE_SORT_SPILL_BYTES: usize = 640;
/// As [`SORT_SPILL_BYTES`], for the top-k by radix select (4 blocks, 64 registers): 92 bytes
/// stored and 116 loaded (f64 keys, sm_80), up to 76 for the others, in the paths past the
/// threshold's (radix select of all keys, ties ranked). Since a block takes one row, the hot
/// path issues a thread's 16 loads at once and measured 14-24 % faster (H100) than the row
/// loop's version, which spilled 4-8 bytes but issued 8 loads at a time (docs/performance.md).
const TOP_K_SPILL_BYTES: usize = 128;

/// Most bytes a compaction kernel may spill per thread (each way) under its launch bounds.
const COMPACTION_SPILL_BYTES: usize = 192;

/// Most bytes a row kernel may spill per thread (each way): built for 1024 threads (64
/// registers), the halves' cross-entropy kernels of 8 words spill 68 bytes (tiled, sm_80; 20 on
/// sm_90, their one-tile kernel 36), `f32` LayerNorm's one-tile kernel of 16 words 56, the
/// halves' norm backward summing the parameter gradients 8 (sm_80 and sm_90); the kernels of
/// more words than an operation's threads hold are never launched and only trap.
const ROW_SPILL_BYTES: usize = 72;

/// The parameter bytes of a compaction kernel (`SelectParams` / `ReverseTailParams` /
/// `RunParams` of the element type as stored), or `None` for another family.
fn compaction_param_bytes(name: &str) -> Option<usize> {
    use gpu_primitives_abi::params::{ReverseTailParams, RunParams, SelectParams};
    macro_rules! by_element {
        ([] $($element:ident => $device:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
            $(
                for family in ["select_if", "select_flagged", "unique"] {
                    if name == format!("device_{family}_{}", stringify!($element)) {
                        return Some(size_of::<SelectParams<$stored>>());
                    }
                }
                if name == concat!("device_reverse_tail_", stringify!($element)) {
                    return Some(size_of::<ReverseTailParams<$stored>>());
                }
                for family in ["run_length_encode", "non_trivial_runs"] {
                    if name == format!("device_{family}_{}", stringify!($element)) {
                        return Some(size_of::<RunParams<$stored>>());
                    }
                }
            )*
        };
    }
    gpu_primitives_abi::element_table!(by_element);
    histogram_param_bytes(name)
}

/// The parameter bytes of a histogram kernel (`HistogramParams` of the sample type as stored,
/// its level type and the counter), or `None` for another family.
fn histogram_param_bytes(name: &str) -> Option<usize> {
    use gpu_primitives_abi::params::HistogramParams;
    macro_rules! per_counter {
        ([$sample:ident, $stored:ty, $level:ty] $($counter:ident => $c:ty;)*) => {
            $(
                for family in ["even", "range"] {
                    if name == format!("device_histogram_{family}_{}_{}", stringify!($sample), stringify!($counter)) {
                        return Some(size_of::<HistogramParams<$stored, $level, $c>>());
                    }
                }
            )*
        };
    }
    macro_rules! by_sample {
        ([] $($sample:ident => $device:ty, $stored:ty, $level:ty, $vec:literal;)*) => {
            $(gpu_primitives_abi::histogram_counter_table!(per_counter, $sample, $stored, $level);)*
        };
    }
    gpu_primitives_abi::histogram_sample_table!(by_sample);
    None
}

/// Every device-wide kernel takes its parameter struct by value: one `.param` of the struct's
/// size (the host checks the same at load; this catches it without a GPU).
/// The row operations' cluster kernels, and only they, declare clusters of `ROW_CLUSTER_BLOCKS`
/// blocks (before their launch bounds); the sm_80 module has none.
#[test]
fn row_cluster_kernels_declare_their_clusters() {
    use gpu_primitives_abi::tuning::{ROW_CLUSTER_BLOCKS, ROW_CLUSTER_SUFFIX};
    let directive = format!(".reqnctapercluster {ROW_CLUSTER_BLOCKS}, 1, 1\n.maxntid ");
    for (arch, ptx) in library() {
        for name in device_kernels_for(*arch) {
            let body = kernel_body(ptx, name);
            let cluster = name.ends_with(ROW_CLUSTER_SUFFIX);
            assert!(
                !cluster || *arch >= 90,
                "sm_{arch} {name}: a cluster kernel below sm_90"
            );
            assert_eq!(
                body.contains(&directive),
                cluster,
                "sm_{arch} {name}: cluster directive"
            );
            assert_eq!(body.contains(".reqnctapercluster"), cluster, "sm_{arch} {name}");
        }
    }
}

#[test]
fn device_kernels_take_one_parameter_struct() {
    use gpu_primitives_abi::params::*;
    for (arch, ptx) in library() {
        let params = gpu_primitives_runtime::ptx::entry_param_bytes(ptx);
        for name in device_kernels_for(*arch) {
            let segmented = [
                "device_scan_by_",
                "device_segmented_scan_",
                "device_segmented_reduce_by_offsets_",
            ];
            let expected = if let Some(bytes) = compaction_param_bytes(name) {
                bytes
            } else if gpu_primitives_abi::table::NORM_GRAD_KERNELS.contains(&name) {
                size_of::<NormGradParams<u8>>()
            } else if [
                gpu_primitives_abi::table::CROSS_ENTROPY_COUNT_KERNEL,
                gpu_primitives_abi::table::CROSS_ENTROPY_MEAN_KERNEL,
            ]
            .contains(&name)
            {
                size_of::<TargetCountParams>()
            } else if name.starts_with(gpu_primitives_abi::tuning::SORT_FAMILY) {
                size_of::<OnesweepParams<u8, u8>>()
            } else if name.starts_with(gpu_primitives_abi::tuning::SEGMENTED_SORT_FAMILY)
                || name.starts_with(gpu_primitives_abi::tuning::SEGMENTED_WARP_MERGE_SORT_FAMILY)
                || name.starts_with(gpu_primitives_abi::tuning::SEGMENTED_WARP_SORT_FAMILY)
                || name.starts_with(gpu_primitives_abi::tuning::SEGMENTED_WARP_RADIX_SORT_FAMILY)
            {
                size_of::<SegmentedSortParams<u8, u8>>()
            } else if name.starts_with(gpu_primitives_abi::tuning::TOP_K_FAMILY) {
                size_of::<TopKParams<u8>>()
            } else if name.starts_with(gpu_primitives_abi::tuning::SORT_HISTOGRAM_FAMILY) {
                size_of::<RadixHistogramParams<u8>>()
            } else if name.starts_with(gpu_primitives_abi::tuning::ROW_FAMILY) {
                size_of::<RowParams<u8>>()
            } else if name == gpu_primitives_abi::table::SEGMENT_TILE_STARTS_KERNEL {
                size_of::<SegmentTileStartsParams>()
            } else if name.starts_with("device_segmented_arg") {
                size_of::<SegmentedArgParams<u8, u8>>()
            } else if segmented.iter().any(|p| name.starts_with(p)) {
                size_of::<SegmentedScanParams<u8, u8, u8>>()
            } else if name.starts_with("device_scan_") {
                size_of::<ScanParams<u8, u8>>()
            } else if name.starts_with("device_segmented_reduce_") {
                size_of::<SegmentedReduceParams<u8, u8>>()
            } else if name.contains("_final_") {
                size_of::<ArgFinalParams<u8>>()
            } else if name.starts_with("device_dot_") {
                size_of::<DotParams<u8, u8>>()
            } else {
                size_of::<ReduceParams<u8, u8>>()
            };
            assert_eq!(params[name], [expected], "sm_{arch}: {name}");
        }
    }
}

#[test]
fn device_kernels_use_vector_and_relaxed_accesses() {
    for (arch, ptx) in library() {
        // 16-byte accesses where the design relies on them, and no local memory anywhere.
        assert!(kernel_body(ptx, "device_reduce_f32_sum").contains("ld.global.nc.v4.b32"));
        let scan = kernel_body(ptx, "device_scan_f32_sum");
        assert!(scan.contains("ld.global.v4.b32") && scan.contains("st.global.v4.b32"));
        // Tile status: flag and value packed in one relaxed access (a 64-bit word for 4-byte
        // values, a 16-byte pair for 8-byte ones), no fence and no acquire / release.
        let scan64 = kernel_body(ptx, "device_scan_f64_sum");
        for (kernel, body, instructions) in [
            ("f32", scan, ["st.relaxed.gpu.b64", "ld.relaxed.gpu.b64"]),
            ("f64", scan64, ["st.relaxed.gpu.v2.u64", "ld.relaxed.gpu.v2.u64"]),
        ] {
            for instruction in instructions {
                assert!(
                    body.contains(instruction),
                    "sm_{arch}: the {kernel} scan has no {instruction}"
                );
            }
            for slow in ["ld.acquire", "st.release", "fence", "membar"] {
                assert!(!body.contains(slow), "sm_{arch}: the {kernel} scan has {slow}");
            }
        }
        assert!(!ptx.contains(".local"), "sm_{arch}: a kernel uses local memory");
    }
}

#[test]
fn shared_memory_is_reached_with_shared_instructions() {
    let lessons = gpu_primitives_lessons::PTX_VARIANTS;
    let probes = gpu_primitives_tests::PTX_VARIANTS;
    for ((arch, ptx), (_, probe_ptx)) in lessons.iter().zip(probes) {
        let body = kernel_body(probe_ptx, "probe_block_f32_items2");
        assert!(
            body.contains("st.shared.f32") && body.contains("ld.shared.f32") && body.contains("bar.sync")
        );
        for k in [
            "dot_product_shared_tree",
            "block_sum_hierarchical",
            "p27_mean_normalize",
            "scan_kogge_stone",
            "scan_kogge_stone_double_buffered",
            "scan_brent_kung",
        ] {
            let body = kernel_body(ptx, k);
            assert!(body.contains("st.shared.f32"), "sm_{arch} {k}: no st.shared");
            assert!(body.contains("ld.shared.f32"), "sm_{arch} {k}: no ld.shared");
            assert!(body.contains("bar.sync"), "sm_{arch} {k}: no barrier");
        }
        assert!(kernel_body(ptx, "block_sum_hierarchical").contains("shfl.sync.down.b32"));
    }
}

fn find_ptxas() -> String {
    let out = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/find-ptxas"))
        .output()
        .expect("running scripts/find-ptxas");
    assert!(
        out.status.success(),
        "ptxas not found: run scripts/setup (it installs PyPI's nvidia-cuda-nvcc)"
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Runs ptxas -v on every module for its architecture; prints registers, spills and shared memory
/// per kernel; fails on any ptxas error or on spills.
#[test]
fn ptxas_accepts_every_module() {
    let ptxas = find_ptxas();
    let dir = std::env::temp_dir().join(format!("gpu-primitives-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (whose, arch, index, ptx) in modules().iter().flat_map(|(whose, variants)| {
        variants.iter().flat_map(move |(arch, texts)| {
            texts
                .iter()
                .enumerate()
                .map(move |(index, ptx)| (whose, arch, index, ptx))
        })
    }) {
        let input = dir.join(format!("{whose}_sm_{arch}_{index}.ptx"));
        std::fs::write(&input, ptx).unwrap();
        let out = Command::new(&ptxas)
            .args(["-v", &format!("-arch=sm_{arch}"), "-o"])
            .arg(dir.join(format!("{whose}_sm_{arch}_{index}.cubin")))
            .arg(&input)
            .output()
            .expect("running ptxas");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "ptxas rejected the {whose} sm_{arch} module:\n{log}"
        );
        println!(
            "ptxas {whose} sm_{arch}: {:<34} {:>9} {:>14} {:>13} {:>10}",
            "kernel", "registers", "spill stores", "spill loads", "smem"
        );
        let mut kernel = String::new();
        let mut spills = (String::new(), String::new());
        for line in log.lines() {
            if let Some(rest) = line.split("Compiling entry function '").nth(1) {
                kernel = rest.split('\'').next().unwrap_or("").to_owned();
            } else if line.contains("spill stores") {
                let nums: Vec<&str> = line.split_whitespace().collect();
                spills = (nums[4].to_owned(), nums[8].to_owned());
                // The compaction and segmented kernels are built for 4 blocks per
                // multiprocessor (64 registers), which measured faster than no bound despite a
                // few spilled words (docs/performance.md); anything else must not spill.
                let allowed = if gpu_primitives_abi::tuning::SELECT_FAMILIES
                    .iter()
                    .chain(
                        gpu_primitives_abi::tuning::SEGMENTED_LAUNCH_BOUNDS
                            .iter()
                            .flat_map(|(p, _)| p.iter()),
                    )
                    .any(|p| kernel.starts_with(p))
                {
                    COMPACTION_SPILL_BYTES
                } else if kernel.starts_with(gpu_primitives_abi::tuning::ROW_FAMILY) {
                    ROW_SPILL_BYTES
                } else if kernel.starts_with(gpu_primitives_abi::tuning::SORT_KEYS_FAMILY) {
                    SORT_KEYS_SPILL_BYTES
                } else if kernel.starts_with(gpu_primitives_abi::tuning::SORT_FAMILY) {
                    SORT_SPILL_BYTES
                } else if kernel.starts_with(gpu_primitives_abi::tuning::SEGMENTED_SORT_FAMILY) {
                    SEGMENTED_SORT_SPILL_BYTES
                } else if kernel.starts_with(gpu_primitives_abi::tuning::SEGMENTED_WARP_RADIX_SORT_FAMILY) {
                    WARP_RADIX_SORT_SPILL_BYTES
                } else if kernel.starts_with(gpu_primitives_abi::tuning::SEGMENTED_WARP_MERGE_SORT_FAMILY) {
                    WARP_MERGE_SORT_SPILL_BYTES
                } else if kernel.starts_with(gpu_primitives_abi::tuning::TOP_K_FAMILY) {
                    TOP_K_SPILL_BYTES
                } else {
                    0
                };
                let bytes = |s: &str| s.parse::<usize>().unwrap_or(usize::MAX);
                assert!(
                    bytes(&spills.0) <= allowed && bytes(&spills.1) <= allowed,
                    "sm_{arch} {kernel} spills past {allowed} bytes: {line}"
                );
            } else if let Some(rest) = line.split("Used ").nth(1) {
                let registers = rest.split_whitespace().next().unwrap_or("?");
                let smem = rest
                    .split(", ")
                    .find(|p| p.contains("smem"))
                    .unwrap_or("0 bytes smem");
                println!(
                    "ptxas {whose} sm_{arch}: {kernel:<34} {registers:>9} {:>14} {:>13} {:>10}",
                    spills.0,
                    spills.1,
                    smem.replace(" bytes smem", " B")
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The runtime compiles each kernel alone, from its module less the other entries
/// (`ptx::KernelTexts`): every entry of every module is found, each such module holds exactly
/// its one entry, and ptxas accepts a sample of them (every `SAMPLE`-th entry by name, the first
/// and the last) for their architecture.
#[test]
fn every_kernel_compiles_alone() {
    use gpu_primitives_runtime::ptx::KernelTexts;
    const SAMPLE: usize = 64;
    let ptxas = find_ptxas();
    let dir = std::env::temp_dir().join(format!("gpu-primitives-ptx-alone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (whose, variants) in modules() {
        for (arch, modules) in variants {
            let cut: Vec<KernelTexts<'_>> = modules.iter().map(|ptx| KernelTexts::new(ptx)).collect();
            // (the kernel's module's index, its name), every kernel of the architecture.
            let mut names: Vec<(usize, &str)> = cut
                .iter()
                .enumerate()
                .flat_map(|(i, texts)| texts.names().map(move |name| (i, name)))
                .collect();
            let mut found: Vec<&str> = names.iter().map(|&(_, name)| name).collect();
            let mut expected: Vec<&str> = modules.iter().flat_map(|ptx| entries(ptx)).collect();
            found.sort_unstable();
            expected.sort_unstable();
            assert_eq!(found, expected, "{whose} sm_{arch}: entries found by KernelTexts");
            for &(i, name) in &names {
                let module = cut[i].module_of(name).unwrap();
                assert_eq!(
                    entries(&module),
                    [name],
                    "{whose} sm_{arch}: the module of {name}"
                );
                assert!(module.contains(".version ") && module.contains(&format!(".target sm_{arch}")));
            }
            names.sort_unstable_by_key(|&(_, name)| name);
            let sample = names
                .iter()
                .step_by(SAMPLE)
                .chain(names.last())
                .collect::<std::collections::BTreeSet<_>>();
            for &(i, name) in sample {
                let input = dir.join(format!("{whose}_sm_{arch}_{name}.ptx"));
                std::fs::write(&input, cut[i].module_of(name).unwrap()).unwrap();
                let out = Command::new(&ptxas)
                    .args([&format!("-arch=sm_{arch}"), "-o"])
                    .arg(dir.join(format!("{whose}_sm_{arch}_{name}.cubin")))
                    .arg(&input)
                    .output()
                    .expect("running ptxas");
                assert!(
                    out.status.success(),
                    "ptxas rejected kernel {name} of the {whose} sm_{arch} module alone:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                println!("ptxas {whose} sm_{arch}: {name} alone: accepted");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
