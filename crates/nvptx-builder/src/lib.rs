//! Compile a `no_std` Rust kernel crate to PTX from a `build.rs`.
//!
//! This crate does the job that `cuda_builder` does in the Rust-CUDA project, on rustc's own
//! `nvptx64-nvidia-cuda` target (LLVM's NVPTX back end) instead of `rustc_codegen_nvvm`, which
//! cannot be installed on current toolchains (see `docs/toolchain.md`).
//!
//! For each requested architecture it runs a nested `cargo rustc` of the kernel crate:
//!
//! ```text
//! cargo rustc --release --target nvptx64-nvidia-cuda -Zbuild-std=core --crate-type cdylib \
//!       -- --emit=asm=<OUT_DIR>/<crate>_sm_<NN>.ptx
//! RUSTFLAGS: -C target-cpu=sm_<NN> -C linker=true      RUSTC_BOOTSTRAP=1
//! ```
//!
//! The kernel crate's own profile must set `lto = "fat"`, `codegen-units = 1` and
//! `panic = "abort"`, so that one self-contained PTX module (with `core`'s code inlined) is written
//! before the link step; `-C linker=true` turns the link (which would need the uninstalled
//! `llvm-bitcode-linker`) into a no-op.
//!
//! # Example (a `build.rs`)
//!
//! ```no_run
//! let ptx = nvptx_builder::PtxBuilder::new("../my-kernels")
//!     .arch(80)
//!     .arch(90)
//!     .build()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! // Writes $OUT_DIR/my_kernels_ptx.rs, which defines
//! // `pub const PTX_VARIANTS: &[(u32, &str)]`: (compute capability x 10, PTX text).
//! ptx.write_rust_module("my_kernels_ptx.rs").unwrap();
//! ```
//! and in the crate: `include!(concat!(env!("OUT_DIR"), "/my_kernels_ptx.rs"));`
//!
//! Outside a build script (a maintainer's tool writing PTX to commit), name the output folder
//! with [`PtxBuilder::out_dir`].

#![warn(missing_docs)]

pub mod families;

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variable naming a `rustc` able to build `core` for `nvptx64-nvidia-cuda`
/// (it has the standard library sources). Takes precedence over every other choice.
pub const RUSTC_OVERRIDE_VAR: &str = "PTX_BUILDER_RUSTC";

/// The target triple every kernel crate is compiled for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Everything that can go wrong while building PTX.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// No compiler with the standard library sources was found.
    #[error(
        "no Rust compiler able to build `core` for {TARGET} was found (tried: {tried}).\n\
         Install one of:\n\
         \x20 - Debian/Ubuntu: `apt-get install rustc-web rust-web-src` (rustc + library sources in /usr),\n\
         \x20 - rustup (with internet): `rustup toolchain install nightly --component rust-src`,\n\
         \x20   then set {RUSTC_OVERRIDE_VAR}=$(rustup which --toolchain nightly rustc),\n\
         or point {RUSTC_OVERRIDE_VAR} at any rustc whose sysroot has lib/rustlib/src/rust/library/core."
    )]
    NoCompiler {
        /// The compilers that were looked at, and why each was refused.
        tried: String,
    },
    /// `PTX_BUILDER_RUSTC` names a compiler that does not qualify.
    #[error("{RUSTC_OVERRIDE_VAR}={path}: {reason}")]
    BadOverride {
        /// The path given.
        path: String,
        /// Why it was refused.
        reason: String,
    },
    /// The kernel crate's manifest is missing.
    #[error("kernel crate not found: {0} has no Cargo.toml")]
    NoCrate(PathBuf),
    /// The architecture is not one the NVPTX back end knows.
    #[error("unsupported architecture sm_{0}: give the compute capability x 10, from 50 to 120")]
    BadArch(u32),
    /// The nested cargo could not be started.
    #[error("could not run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The nested cargo failed (its output was forwarded to the build log).
    #[error("compiling {krate} for sm_{arch} failed ({status}); the compiler's messages are above")]
    Compile {
        /// The kernel crate.
        krate: String,
        /// The architecture.
        arch: u32,
        /// The exit status.
        status: std::process::ExitStatus,
    },
    /// The build reported success but wrote no PTX.
    #[error("compiling {0} reported success but wrote no PTX at {1}")]
    NoOutput(String, PathBuf),
    /// Writing the generated files failed.
    #[error("writing {0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// A variable cargo sets for build scripts is missing.
    #[error("environment variable {0} is not set: call PtxBuilder from a build script")]
    NotInBuildScript(&'static str),
}

/// A compiler that can build `core` for the NVPTX target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelCompiler {
    /// Path of `rustc`.
    pub rustc: PathBuf,
    /// Its sysroot (holds `lib/rustlib/src/rust/library`).
    pub sysroot: PathBuf,
}

/// Whether `sysroot` holds the standard library sources `-Zbuild-std` needs.
pub fn has_library_sources(sysroot: &Path) -> bool {
    sysroot
        .join("lib/rustlib/src/rust/library/core/Cargo.toml")
        .is_file()
}

fn sysroot_of(rustc: &Path) -> Result<PathBuf, String> {
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .env_remove("RUSTC_WRAPPER")
        .output()
        .map_err(|e| format!("cannot run: {e}"))?;
    if !out.status.success() {
        return Err(format!("`--print sysroot` failed: {}", out.status));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn qualify(rustc: &Path) -> Result<KernelCompiler, String> {
    let sysroot = sysroot_of(rustc)?;
    if has_library_sources(&sysroot) {
        Ok(KernelCompiler {
            rustc: rustc.to_path_buf(),
            sysroot,
        })
    } else {
        Err(format!(
            "sysroot {} has no library sources (rust-src)",
            sysroot.display()
        ))
    }
}

/// Find a compiler for the kernels, in this order:
/// 1. `$PTX_BUILDER_RUSTC` (an error if it does not qualify);
/// 2. the compiler cargo builds the host with (`$RUSTC`, else `rustc`), if it has `rust-src`;
/// 3. Debian's `rustc-web` at `/usr/bin/rustc` with `rust-web-src`.
pub fn find_kernel_compiler() -> Result<KernelCompiler, BuildError> {
    if let Some(path) = env::var_os(RUSTC_OVERRIDE_VAR) {
        let path = PathBuf::from(path);
        return qualify(&path).map_err(|reason| BuildError::BadOverride {
            path: path.display().to_string(),
            reason,
        });
    }
    let active = env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let candidates = [PathBuf::from(active), PathBuf::from("/usr/bin/rustc")];
    let mut tried = Vec::new();
    for candidate in candidates {
        match qualify(&candidate) {
            Ok(found) => return Ok(found),
            Err(why) => tried.push(format!("{}: {why}", candidate.display())),
        }
    }
    Err(BuildError::NoCompiler {
        tried: tried.join("; "),
    })
}

/// One compiled PTX module.
#[derive(Debug, Clone)]
pub struct PtxArtifact {
    /// Compute capability x 10 (80 = sm_80).
    pub arch: u32,
    /// Where the PTX text was written.
    pub path: PathBuf,
}

/// The result of [`PtxBuilder::build`]: one PTX module per architecture.
#[derive(Debug, Clone)]
pub struct BuiltPtx {
    /// The modules, in the order the architectures were requested.
    pub artifacts: Vec<PtxArtifact>,
}

impl BuiltPtx {
    /// Write `$OUT_DIR/<file_name>`, a Rust source defining
    /// `pub const PTX_VARIANTS: &[(u32, &str)]` (compute capability x 10, PTX text), sorted by
    /// architecture. `include!` it from the crate that launches the kernels.
    pub fn write_rust_module(&self, file_name: &str) -> Result<PathBuf, BuildError> {
        let out_dir = out_dir()?;
        let mut artifacts = self.artifacts.clone();
        artifacts.sort_by_key(|a| a.arch);
        let mut text = String::from(
            "/// PTX of the kernel crate, one module per architecture: (compute capability x 10, text).\n\
             pub const PTX_VARIANTS: &[(u32, &str)] = &[\n",
        );
        for a in &artifacts {
            text.push_str(&format!(
                "    ({}, include_str!({:?})),\n",
                a.arch,
                a.path.display().to_string()
            ));
        }
        text.push_str("];\n");
        let path = out_dir.join(file_name);
        std::fs::write(&path, text).map_err(|e| BuildError::Io(path.clone(), e))?;
        Ok(path)
    }
}

/// Builds a kernel crate to PTX; see the crate docs.
#[derive(Debug, Clone)]
pub struct PtxBuilder {
    crate_dir: PathBuf,
    archs: Vec<u32>,
    features: Vec<String>,
    default_features: bool,
    out_dir: Option<PathBuf>,
    watched: Vec<PathBuf>,
}

/// The performance-tuning directives of one entry point (PTX ISA, "Performance-Tuning
/// Directives"), which rustc has no attributes for: [`with_entry_directives`] writes them after
/// the entry's parameter list, in this order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryDirectives {
    /// CUDA's `__cluster_dims__(blocks, 1, 1)`: `.reqnctapercluster blocks, 1, 1`, so that an
    /// ordinary launch runs the grid in thread-block clusters of `blocks` blocks (sm_90 and
    /// later; the grid must be a whole number of clusters).
    pub cluster_blocks: Option<u32>,
    /// CUDA's `__launch_bounds__(max_threads)`: `.maxntid max_threads, 1, 1`, the most threads a
    /// block it is launched with.
    pub max_threads: Option<u32>,
    /// CUDA's `__launch_bounds__(.., min_blocks)`: `.minnctapersm min_blocks`, the fewest blocks
    /// a multiprocessor must hold at once (ptxas holds each thread to `65536 / (max_threads *
    /// min_blocks)` registers).
    pub min_blocks_per_sm: Option<u32>,
    /// CUDA's `__maxnreg__`: `.maxnreg max_registers`, the most registers a thread.
    pub max_registers: Option<u32>,
}

fn out_dir() -> Result<PathBuf, BuildError> {
    env::var_os("OUT_DIR")
        .map(PathBuf::from)
        .ok_or(BuildError::NotInBuildScript("OUT_DIR"))
}

impl PtxBuilder {
    /// `crate_dir`: the kernel crate's directory, relative to the calling package's manifest
    /// directory (or absolute).
    pub fn new(crate_dir: impl AsRef<Path>) -> Self {
        let dir = crate_dir.as_ref();
        let crate_dir = match env::var_os("CARGO_MANIFEST_DIR") {
            Some(root) if dir.is_relative() => PathBuf::from(root).join(dir),
            _ => dir.to_path_buf(),
        };
        Self {
            crate_dir,
            archs: Vec::new(),
            features: Vec::new(),
            default_features: true,
            out_dir: None,
            watched: Vec::new(),
        }
    }

    /// Write the PTX into `dir` instead of `$OUT_DIR` (for use outside a build script; no
    /// `cargo:` lines are printed then). The nested build's own target folder is `dir/target`.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Also rebuild when anything under `path` changes (a path dependency of the kernel crate,
    /// relative to the calling package's manifest directory or absolute).
    pub fn watch(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        self.watched.push(match env::var_os("CARGO_MANIFEST_DIR") {
            Some(root) if path.is_relative() => PathBuf::from(root).join(path),
            _ => path.to_path_buf(),
        });
        self
    }

    /// Add a target architecture, as compute capability x 10 (`80` for sm_80, `90` for sm_90).
    /// With none, sm_80 is built.
    pub fn arch(mut self, sm: u32) -> Self {
        self.archs.push(sm);
        self
    }

    /// Enable a cargo feature of the kernel crate.
    pub fn feature(mut self, name: &str) -> Self {
        self.features.push(name.to_owned());
        self
    }

    /// Build the kernel crate without its default features.
    pub fn no_default_features(mut self) -> Self {
        self.default_features = false;
        self
    }

    /// Compile the crate once per architecture into `$OUT_DIR/<crate>_sm_<NN>.ptx` and print the
    /// `cargo:rerun-if-changed` lines for its sources.
    pub fn build(self) -> Result<BuiltPtx, BuildError> {
        let manifest = self.crate_dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::NoCrate(self.crate_dir));
        }
        let compiler = find_kernel_compiler()?;
        let in_build_script = self.out_dir.is_none();
        let out_dir = match &self.out_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| BuildError::Io(dir.clone(), e))?;
                dir.clone()
            }
            None => out_dir()?,
        };
        let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
        let krate = crate_file_stem(&self.crate_dir);
        let archs = if self.archs.is_empty() {
            vec![80]
        } else {
            self.archs.clone()
        };

        if in_build_script {
            println!("cargo:rerun-if-changed={}", manifest.display());
            println!("cargo:rerun-if-changed={}", self.crate_dir.join("src").display());
            for path in &self.watched {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            println!("cargo:rerun-if-env-changed={RUSTC_OVERRIDE_VAR}");
        }
        let feature_tag = if self.features.is_empty() {
            String::from("default")
        } else {
            self.features.join("-")
        };

        let mut artifacts = Vec::new();
        for arch in archs {
            if !(50..=120).contains(&arch) {
                return Err(BuildError::BadArch(arch));
            }
            let ptx = out_dir.join(format!("{krate}_sm_{arch}.ptx"));
            // Its own target dir per architecture and feature set: no lock shared with the outer
            // build, and no rebuild of `core` or the crate when switching between them.
            let nested = if in_build_script {
                nested_target_dir(&out_dir)
            } else {
                out_dir.join("target")
            };
            let target_dir = nested.join(format!("{feature_tag}-sm_{arch}"));
            let mut cmd = Command::new(&cargo);
            clear_outer_build_env(&mut cmd);
            cmd.current_dir(&self.crate_dir)
                .env("RUSTC", &compiler.rustc)
                .env("RUSTC_BOOTSTRAP", "1")
                .env(
                    "CARGO_ENCODED_RUSTFLAGS",
                    format!("-Ctarget-cpu=sm_{arch}\u{1f}-Clinker=true"),
                )
                .args(["rustc", "--release", "--target", TARGET])
                .args(["-Zbuild-std=core", "--crate-type", "cdylib"])
                .arg("--manifest-path")
                .arg(&manifest)
                .arg("--target-dir")
                .arg(&target_dir);
            if !self.default_features {
                cmd.arg("--no-default-features");
            }
            if !self.features.is_empty() {
                cmd.arg("--features").arg(self.features.join(","));
            }
            cmd.arg("--").arg(format!("--emit=asm={}", ptx.display()));
            let _ = std::fs::remove_file(&ptx);
            let status = cmd.status().map_err(|source| BuildError::Spawn {
                program: cargo.to_string_lossy().into_owned(),
                source,
            })?;
            if !status.success() {
                return Err(BuildError::Compile {
                    krate: krate.clone(),
                    arch,
                    status,
                });
            }
            if !ptx.is_file() {
                return Err(BuildError::NoOutput(krate.clone(), ptx));
            }
            artifacts.push(PtxArtifact { arch, path: ptx });
        }
        Ok(BuiltPtx { artifacts })
    }
}

/// The names of `ptx`'s entry points, in order.
pub fn entry_names(ptx: &str) -> Vec<&str> {
    ptx.match_indices(".entry ")
        .map(|(at, _)| {
            let name = &ptx[at + ".entry ".len()..];
            name[..name.find('(').unwrap_or(name.len())].trim()
        })
        .collect()
}

/// `ptx` with `directives(name)` after the parameter list of each entry point `name` (none
/// where it returns `None`).
pub fn with_entry_directives(ptx: &str, directives: impl Fn(&str) -> Option<EntryDirectives>) -> String {
    let mut out = String::with_capacity(ptx.len() + ptx.len() / 64);
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        let name_start = at + ".entry ".len();
        let name_end = rest[name_start..]
            .find('(')
            .map_or(rest.len(), |i| name_start + i);
        let name = rest[name_start..name_end].trim();
        // The parameter list ends at the first ")" line after the name.
        let close = rest[name_end..]
            .find(")\n")
            .map_or(rest.len(), |i| name_end + i + 2);
        out.push_str(&rest[..close]);
        if let Some(d) = directives(name) {
            if let Some(blocks) = d.cluster_blocks {
                out.push_str(&format!(".reqnctapercluster {blocks}, 1, 1\n"));
            }
            if let Some(threads) = d.max_threads {
                out.push_str(&format!(".maxntid {threads}, 1, 1\n"));
            }
            if let Some(blocks) = d.min_blocks_per_sm {
                out.push_str(&format!(".minnctapersm {blocks}\n"));
            }
            if let Some(registers) = d.max_registers {
                out.push_str(&format!(".maxnreg {registers}\n"));
            }
        }
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

/// `my-kernels` -> `my_kernels` (the directory name stands for the crate name).
fn crate_file_stem(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().replace('-', "_"))
        .unwrap_or_else(|| "kernels".to_owned())
}

/// `<target>/<profile>/build/<pkg>-<hash>/out` -> `<target>/nvptx-builder`, shared by every
/// profile of the outer build; falls back to `$OUT_DIR/nvptx-builder` for unusual layouts.
fn nested_target_dir(out_dir: &Path) -> PathBuf {
    match out_dir.ancestors().nth(4) {
        Some(target) if out_dir.ancestors().nth(2).is_some_and(|b| b.ends_with("build")) => {
            target.join("nvptx-builder")
        }
        _ => out_dir.join("nvptx-builder"),
    }
}

/// The variables cargo sets for a build script describe the outer (host) build; a nested cargo
/// must not inherit them, or it would compile the kernels with host flags.
fn clear_outer_build_env(cmd: &mut Command) {
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy();
        let outer = key.starts_with("CARGO_")
            && key != "CARGO_HOME"
            && key != "CARGO_NET_OFFLINE"
            && key != "CARGO_REGISTRIES_CRATES_IO_PROTOCOL";
        let flags = matches!(
            key.as_ref(),
            "RUSTFLAGS"
                | "RUSTDOCFLAGS"
                | "RUSTC"
                | "RUSTC_WRAPPER"
                | "RUSTC_WORKSPACE_WRAPPER"
                | "RUSTC_LINKER"
                | "OUT_DIR"
                | "TARGET"
                | "HOST"
                | "PROFILE"
                | "OPT_LEVEL"
                | "DEBUG"
                | "NUM_JOBS"
                | "RUSTUP_TOOLCHAIN"
        );
        if outer || flags {
            cmd.env_remove(key.as_ref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_stem_replaces_dashes() {
        assert_eq!(crate_file_stem(Path::new("/a/my-kernels")), "my_kernels");
    }

    #[test]
    fn nested_target_dir_is_shared_by_profiles() {
        let out = Path::new("/w/target/release/build/pkg-123/out");
        assert_eq!(nested_target_dir(out), Path::new("/w/target/nvptx-builder"));
        let odd = Path::new("/x/out");
        assert_eq!(nested_target_dir(odd), Path::new("/x/out/nvptx-builder"));
    }

    #[test]
    fn directives_follow_the_parameters_of_their_entries_only() {
        let ptx = ".visible .entry k_reduce(\n\t.param .u64 a\n)\n{\n}\n.visible .entry k_scan(\n\t.param .u64 a\n)\n{\n}\n";
        let out = with_entry_directives(ptx, |name| {
            (name == "k_reduce").then_some(EntryDirectives {
                max_threads: Some(256),
                min_blocks_per_sm: Some(4),
                max_registers: Some(48),
                ..EntryDirectives::default()
            })
        });
        assert!(
            out.contains(
                "k_reduce(\n\t.param .u64 a\n)\n.maxntid 256, 1, 1\n.minnctapersm 4\n.maxnreg 48\n{"
            )
        );
        assert!(out.contains("k_scan(\n\t.param .u64 a\n)\n{"));
        assert_eq!(with_entry_directives(ptx, |_| None), ptx);
    }

    #[test]
    fn entry_names_lists_every_entry_point() {
        let ptx =
            "// .globl k_a\n.visible .entry k_a(\n\t.param .u64 a\n)\n{\n}\n.visible .entry k_b(\n)\n{\n}\n";
        assert_eq!(entry_names(ptx), ["k_a", "k_b"]);
        assert!(entry_names(".version 8.0\n").is_empty());
    }

    #[test]
    fn cluster_dims_precede_the_launch_bounds() {
        let ptx = ".visible .entry k_row_cluster(\n\t.param .u64 a\n)\n{\n}\n";
        let out = with_entry_directives(ptx, |_| {
            Some(EntryDirectives {
                cluster_blocks: Some(4),
                max_threads: Some(1024),
                min_blocks_per_sm: Some(1),
                max_registers: None,
            })
        });
        assert!(out.contains(
            "k_row_cluster(\n\t.param .u64 a\n)\n.reqnctapercluster 4, 1, 1\n.maxntid 1024, 1, 1\n.minnctapersm 1\n{"
        ));
    }

    #[test]
    fn missing_sources_are_detected() {
        assert!(!has_library_sources(Path::new("/nonexistent-sysroot")));
    }
}
