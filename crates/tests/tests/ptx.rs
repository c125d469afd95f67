//! Checks of the generated PTX that need no GPU: every module names its architecture, holds every
//! kernel the host launches, reaches shared memory through `ld.shared` / `st.shared`, and is
//! accepted by `ptxas` (which also reports registers and spills per kernel). The library's
//! kernels are read as the program reads them: each family's frame decompressed.

use gpu_primitives_abi::families::{Family, Kernel};
use nvptx_builder::families::functions;
use std::collections::HashMap;
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

/// The library's kernels in the module of sm_`arch`, from the registry
/// (`gpu_primitives_abi::families`), with their families.
fn device_kernels_for(arch: u32) -> impl Iterator<Item = (&'static Family, &'static Kernel)> {
    gpu_primitives_abi::families::kernels().filter(move |(_, k)| k.min_arch <= arch)
}

/// The family of each of the library's kernels, by the kernel's name.
fn family_of(name: &str) -> Option<&'static Family> {
    static FAMILIES: OnceLock<HashMap<&'static str, &'static Family>> = OnceLock::new();
    FAMILIES
        .get_or_init(|| {
            gpu_primitives_abi::families::kernels()
                .map(|(f, k)| (k.name, f))
                .collect()
        })
        .get(name)
        .copied()
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
/// them apart), and each of the library's family modules exactly the family's kernels for its
/// architecture (the registry, `gpu_primitives_abi::families`).
#[test]
fn each_module_holds_exactly_what_its_crate_launches() {
    for ((whose, variants), launched) in modules()[1..].iter().zip([LESSON_KERNELS, PROBE_KERNELS]) {
        for (arch, texts) in variants {
            let mut found: Vec<&str> = texts.iter().flat_map(|ptx| entries(ptx)).collect();
            let mut expected = launched.to_vec();
            found.sort_unstable();
            expected.sort_unstable();
            assert_eq!(found, expected, "{whose} sm_{arch}: entry points");
        }
    }
    for module in gpu_primitives::KERNELS {
        let registered = gpu_primitives_abi::families::families().count();
        assert_eq!(module.families.len(), registered, "sm_{}: families", module.arch);
        for packed in module.families {
            let family = gpu_primitives_abi::families::family(packed.name);
            let text = packed.decompress().expect("a family's frame");
            let mut found = entries(&text);
            let mut expected: Vec<&str> = family
                .kernels()
                .filter(|k| k.min_arch <= module.arch)
                .map(|k| k.name)
                .collect();
            found.sort_unstable();
            expected.sort_unstable();
            assert_eq!(
                found, expected,
                "sm_{} {}: entry points",
                module.arch, family.name
            );
            let mut indexed = packed.kernels.to_vec();
            indexed.sort_unstable();
            assert_eq!(
                indexed, expected,
                "sm_{} {}: the index's kernels",
                module.arch, family.name
            );
        }
    }
}

/// Each of the library's kernels declares exactly the directives the registry gives it, after
/// its parameter list: its cluster shape (`.reqnctapercluster`, sm_90 modules only), its launch
/// bounds (`.maxntid`, `.minnctapersm`) and register limit (`.maxnreg`); a kernel without them
/// declares none.
#[test]
fn device_kernels_declare_their_registered_directives() {
    for (arch, ptx) in library() {
        for (_, k) in device_kernels_for(*arch) {
            let body = kernel_body(ptx, k.name);
            let mut expected = String::new();
            if let Some(blocks) = k.cluster_blocks {
                assert!(*arch >= 90, "sm_{arch} {}: a cluster kernel below sm_90", k.name);
                expected += &format!(".reqnctapercluster {blocks}, 1, 1\n");
            }
            if let Some(b) = k.bounds {
                expected += &format!(
                    ".maxntid {}, 1, 1\n.minnctapersm {}\n",
                    b.max_threads, b.min_blocks_per_sm
                );
                if let Some(registers) = b.max_registers {
                    expected += &format!(".maxnreg {registers}\n");
                }
            }
            let after_params = body.split_once(")\n").map(|(_, rest)| rest).unwrap_or_default();
            assert!(
                after_params.starts_with(&format!("{expected}{{")),
                "sm_{arch} {}: directives {expected:?}",
                k.name
            );
            if let Some(b) = k.bounds {
                assert!(
                    k.block.threads() <= b.max_threads,
                    "{}: launched with more threads than its bounds",
                    k.name
                );
            }
        }
    }
}

/// Every device-wide kernel takes its parameter struct by value: one `.param` of the bytes the
/// registry gives (the host checks the same at load; this catches it without a GPU).
#[test]
fn device_kernels_take_one_parameter_struct() {
    for (arch, ptx) in library() {
        let params = gpu_primitives_runtime::ptx::entry_param_bytes(ptx);
        for (_, k) in device_kernels_for(*arch) {
            assert_eq!(params[k.name], [k.params_bytes], "sm_{arch}: {}", k.name);
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

/// Whether a `call` instruction of `ptx` names function `name` (with or without a return value).
fn called(ptx: &str, name: &str) -> bool {
    ptx.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("call")
            && line
                .split([' ', ',', '(', ')', ';', '\t'])
                .any(|word| word == name)
    })
}

/// Instructions that need the warp (or block) together: their lanes must reach them converged.
const COLLECTIVE: &[&str] = &[
    "vote.sync",
    "shfl.sync",
    "bar.warp.sync",
    "match.",
    "redux.sync",
    "bar.sync",
    "barrier.",
];

#[test]
fn no_kernel_calls_a_warp_collective_function() {
    // LLVM calls a function it leaves out of line with `call.uni`, a promise that the warp is
    // converged at the call, so ptxas does not rejoin its lanes first. A function that votes,
    // shuffles or waits at a barrier, called by a warp that a per-lane branch has split, runs
    // apart in each group (likely how the top-k staging branch lost selections, session 64).
    // Only functions free of such instructions (the panic stubs, which trap) may stay out of
    // line.
    let mut checked = 0;
    for (whose, variants) in modules() {
        for (arch, texts) in variants {
            for ptx in texts {
                for (name, body) in functions(ptx) {
                    // Declarations hold no instruction; bodies are checked.
                    checked += 1;
                    if let Some(op) = COLLECTIVE.iter().find(|op| body.contains(*op)) {
                        let called = called(ptx, name);
                        assert!(
                            !called,
                            "{whose} sm_{arch}: {name} (out of line) holds `{op}` and is called: inline it"
                        );
                    }
                }
            }
        }
    }
    assert!(checked > 0, "no .func found: the module reader is wrong");
}

#[test]
fn the_function_reader_finds_bodies_and_collectives() {
    let ptx = "
.func _panic()
;
.visible .entry k(.param .b64 p)
{
\tcall.uni _round, (param0);
\tcall.uni _panic, ();
}
.func _round(
\t.param .b64 _round_param_0
)
{
\t.reg .b32 %r<3>;
\t{ .reg .pred p; setp.ne.u32 p, %r1, 0; vote.sync.ballot.b32 %r2, p, -1; }
\tret;
}
.func _panic()
{
\ttrap;
}
";
    let found = functions(ptx);
    let names: Vec<&str> = found.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, ["_panic", "_round", "_panic"]);
    assert!(found[1].1.contains("vote.sync") && found[1].1.trim_end().ends_with('}'));
    assert!(!found[0].1.contains("vote.sync") && !found[2].1.contains("vote.sync"));
    assert!(called(ptx, "_round") && called(ptx, "_panic") && !called(ptx, "_other"));
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
                // Each family's bounds were chosen by measurement, some with a few spilled
                // words (the registry's `spill_bytes`); the lessons and probes must not spill.
                let allowed = family_of(&kernel).map_or(0, |f| f.spill_bytes);
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
