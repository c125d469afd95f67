//! Checks of the generated PTX that need no GPU: every module names its architecture, holds every
//! kernel the host launches, reaches shared memory through `ld.shared` / `st.shared`, and is
//! accepted by `ptxas` (which also reports registers and spills per kernel).

use gpu_primitives::PTX_VARIANTS;
use std::process::Command;

/// Every kernel entry point the host crate launches by name.
const KERNELS: &[&str] = &[
    "dot_product_shared_tree",
    "sum_naive",
    "block_sum_hierarchical",
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
    "probe_block_i32_items1",
    "probe_block_i32_items2",
    "probe_block_i32_items3",
    "probe_block_i32_items4",
    "probe_block_f32_items1",
    "probe_block_f32_items2",
    "probe_block_f32_items3",
    "probe_block_f32_items4",
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
    let archs: Vec<u32> = PTX_VARIANTS.iter().map(|v| v.0).collect();
    assert_eq!(archs, [80, 90]);
    for (arch, ptx) in PTX_VARIANTS {
        assert!(
            ptx.contains(&format!(".target sm_{arch}")),
            "sm_{arch}: wrong .target"
        );
        assert!(ptx.contains(".address_size 64"));
    }
}

#[test]
fn every_launched_kernel_is_in_every_module() {
    for (arch, ptx) in PTX_VARIANTS {
        for k in KERNELS {
            assert!(
                ptx.contains(&format!(".visible .entry {k}(")),
                "sm_{arch}: kernel {k} missing"
            );
        }
    }
}

#[test]
fn device_kernels_exist_for_every_type_and_operator() {
    for (arch, ptx) in PTX_VARIANTS {
        for ty in ["f32", "f64", "i32", "u32", "i64", "u64", "f16", "bf16"] {
            for k in ["argmin", "argmax"] {
                assert!(
                    ptx.contains(&format!(".visible .entry device_{k}_{ty}(")),
                    "sm_{arch}: {k} {ty}"
                );
            }
            for op in ["sum", "min", "max"] {
                for kind in ["reduce", "scan", "segmented_reduce"] {
                    let k = format!("device_{kind}_{ty}_{op}");
                    assert!(
                        ptx.contains(&format!(".visible .entry {k}(")),
                        "sm_{arch}: kernel {k} missing"
                    );
                }
            }
        }
        for ty in ["f32", "f64", "f16", "bf16"] {
            assert!(
                ptx.contains(&format!(".visible .entry device_dot_{ty}(")),
                "sm_{arch}: dot {ty}"
            );
        }
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
    for (arch, ptx) in PTX_VARIANTS {
        for k in [
            "dot_product_shared_tree",
            "block_sum_hierarchical",
            "p27_mean_normalize",
            "scan_kogge_stone",
            "scan_kogge_stone_double_buffered",
            "scan_brent_kung",
            "probe_block_f32_items2",
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
    let out = Command::new("scripts/find-ptxas")
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
    for (arch, ptx) in PTX_VARIANTS {
        let input = dir.join(format!("kernels_sm_{arch}.ptx"));
        std::fs::write(&input, ptx).unwrap();
        let out = Command::new(&ptxas)
            .args(["-v", &format!("-arch=sm_{arch}"), "-o"])
            .arg(dir.join(format!("kernels_sm_{arch}.cubin")))
            .arg(&input)
            .output()
            .expect("running ptxas");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "ptxas rejected the sm_{arch} module:\n{log}"
        );
        println!(
            "ptxas sm_{arch}: {:<34} {:>9} {:>14} {:>13} {:>10}",
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
                assert_eq!(
                    spills,
                    ("0".into(), "0".into()),
                    "sm_{arch} {kernel} spills: {line}"
                );
            } else if let Some(rest) = line.split("Used ").nth(1) {
                let registers = rest.split_whitespace().next().unwrap_or("?");
                let smem = rest
                    .split(", ")
                    .find(|p| p.contains("smem"))
                    .unwrap_or("0 bytes smem");
                println!(
                    "ptxas sm_{arch}: {kernel:<34} {registers:>9} {:>14} {:>13} {:>10}",
                    spills.0,
                    spills.1,
                    smem.replace(" bytes smem", " B")
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
