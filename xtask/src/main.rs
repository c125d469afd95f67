//! `cargo xtask ptx`: compile the device-wide kernels (crates/kernels, feature `device`) for every
//! architecture the library ships and write them to `crates/gpu-primitives/ptx/`, the PTX the
//! library embeds so that its users need no kernel compiler.
//!
//! `cargo xtask ptx --check`: compile them the same way and fail if the committed files differ
//! (CI runs this: the committed PTX is always what the current sources compile to).

#![warn(clippy::undocumented_unsafe_blocks)]

use gpu_primitives_abi::{table, tuning};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The architectures the library ships PTX for (compute capability x 10); the library's
/// `ptx.rs` embeds one file per entry.
const ARCHS: [u32; 2] = [80, 90];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

fn committed_path(root: &Path, arch: u32) -> PathBuf {
    root.join(format!("crates/gpu-primitives/ptx/device_sm_{arch}.ptx"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["ptx"] => false,
        ["ptx", "--check"] => true,
        _ => {
            eprintln!("usage: cargo xtask ptx [--check]");
            return ExitCode::from(2);
        }
    };
    let root = workspace_root();
    let scratch = root.join("target/xtask-ptx");
    let mut builder = nvptx_builder::PtxBuilder::new(root.join("crates/kernels"))
        .feature("device")
        .out_dir(&scratch);
    for arch in ARCHS {
        builder = builder.arch(arch);
    }
    for prefix in tuning::REDUCE_FAMILIES {
        builder = builder.launch_bounds(prefix, tuning::REDUCE_BLOCK, tuning::REDUCE_BLOCKS_PER_SM);
    }
    for prefix in tuning::SELECT_FAMILIES {
        builder = builder.launch_bounds(prefix, tuning::SELECT_BLOCK, tuning::SELECT_BLOCKS_PER_SM);
    }
    for &(prefixes, blocks) in tuning::SEGMENTED_LAUNCH_BOUNDS {
        for prefix in prefixes {
            builder = builder.launch_bounds(prefix, tuning::SCAN_BLOCK, blocks);
        }
    }
    // Every onesweep pass by its name (generated from the key and value tables).
    for &(name, threads, blocks) in table::SORT_LAUNCH_BOUNDS.iter().flat_map(|key| key.iter()) {
        builder = builder.launch_bounds(name, threads, blocks);
    }
    // The segmented sorts of 2 blocks first, as above.
    for prefix in tuning::SEGMENTED_SORT_TWO_BLOCK_FAMILIES {
        builder = builder.launch_bounds(prefix, tuning::SORT_BLOCK, 2);
    }
    builder = builder.launch_bounds(
        tuning::SEGMENTED_SORT_FAMILY,
        tuning::SORT_BLOCK,
        tuning::SEGMENTED_SORT_BLOCKS_PER_SM,
    );
    builder = builder.launch_bounds(
        tuning::SEGMENTED_WARP_MERGE_SORT_FAMILY,
        tuning::SORT_BLOCK,
        tuning::SEGMENTED_WARP_MERGE_SORT_BLOCKS_PER_SM,
    );
    builder = builder.launch_bounds(
        tuning::SEGMENTED_WARP_RADIX_SORT_FAMILY,
        tuning::SORT_BLOCK,
        tuning::SEGMENTED_WARP_RADIX_SORT_BLOCKS_PER_SM,
    );
    builder = builder.launch_bounds(
        tuning::SORT_HISTOGRAM_FAMILY,
        tuning::SORT_HISTOGRAM_BLOCK,
        tuning::SORT_HISTOGRAM_BLOCKS_PER_SM,
    );
    builder = builder.launch_bounds(
        tuning::TOP_K_FAMILY,
        tuning::SORT_BLOCK,
        tuning::TOP_K_BLOCKS_PER_SM,
    );
    builder = builder.launch_bounds(
        tuning::ROW_FAMILY,
        gpu_primitives_abi::layout::MAX_BLOCK_THREADS,
        1,
    );
    builder = builder.cluster_dims(tuning::ROW_CLUSTER_SUFFIX, tuning::ROW_CLUSTER_BLOCKS);
    for &(entry, registers) in tuning::ROW_REGISTER_LIMITS {
        builder = builder.max_registers(entry, registers);
    }
    let built = match builder.build() {
        Ok(built) => built,
        Err(e) => {
            eprintln!("xtask ptx: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stale = Vec::new();
    for artifact in &built.artifacts {
        let fresh = std::fs::read_to_string(&artifact.path).expect("reading the built PTX");
        let committed = committed_path(&root, artifact.arch);
        if check {
            let old = std::fs::read_to_string(&committed).unwrap_or_default();
            if old != fresh {
                stale.push(committed.display().to_string());
            }
        } else {
            std::fs::create_dir_all(committed.parent().unwrap()).expect("creating ptx/");
            std::fs::write(&committed, &fresh).expect("writing the PTX");
            println!("wrote {} ({} bytes)", committed.display(), fresh.len());
        }
    }
    if stale.is_empty() {
        if check {
            println!("xtask ptx --check: the committed PTX is what the sources compile to");
        }
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "xtask ptx --check: these differ from what crates/kernels compiles to now:\n  {}\n\
             Run `cargo xtask ptx` and commit the result.",
            stale.join("\n  ")
        );
        ExitCode::FAILURE
    }
}
