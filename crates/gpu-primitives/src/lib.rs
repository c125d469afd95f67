//! CUB's device-wide algorithms in Rust: reduce, scan (single pass, decoupled look-back),
//! argmin / argmax, dot product, compaction (select, partition, unique), run-length encoding,
//! reduce and unique by key, histograms, segmented reduce and scan, the radix sort, the segmented sort and the top-k (per
//! row and of a whole array), and the fused row operations of models, on device memory the
//! caller owns and on the caller's stream. The kernels are `no_std` Rust (crates/kernels) compiled to PTX by this
//! project's own build and shipped inside this crate: depending on it needs no CUDA C++ and no
//! kernel compiler, only the CUDA driver at run time.
//!
//! ```no_run
//! use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Sum};
//! let gpu = gpu_primitives::open_gpu(0)?;
//! let x = DeviceVec::from_slice(&gpu, &[1.0f32, 2.0, 3.0, 4.0])?;
//! let mut y = gpu.alloc_zeroed::<f32>(4)?;
//! let mut workspace = DeviceWorkspace::new();
//! device::inclusive_scan::<f32, Sum>(&gpu, &x, &mut y, &mut workspace)?;
//! assert_eq!(gpu.download(&y)?, [1.0, 3.0, 6.0, 10.0]);
//! assert_eq!(device::reduce::<f32, Sum>(&gpu, &y, &mut workspace)?, 20.0);
//! # Ok::<(), gpu_primitives::Error>(())
//! ```
//!
//! Modules by job: [`device`] holds the algorithms, their element types, operators, device
//! views and workspace; [`rows`] the fused row operations of models (softmax, LayerNorm, ...); [`mod@reference`] the CPU references every GPU result is checked against.
//! The runtime underneath (devices, modules, streams, buffers) is re-exported as [`runtime`].
//! Every call takes a [`CallOn`] first: `&gpu`, `gpu.on(&stream)?`, or either with the call's
//! own launch shapes, `.with_tuning(overrides)?` ([`WithTuning`], [`TuningOverrides`]).

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod device;
#[cfg(any(feature = "cust", feature = "cudarc"))]
pub mod interop;
pub mod reference;
pub mod rows;
mod tuning;

pub use gpu_primitives_runtime as runtime;
pub use gpu_primitives_runtime::{
    BinRule, DeviceBuffer, DeviceInfo, Error, Gpu, LaunchConfig, LevelValue, OffsetRule, OnStream, Result,
    Stream,
};
/// The `half` crate of the element types `f16` and `bf16`.
pub use half;
pub use tuning::{CallOn, TuningOverrides, WithTuning, set_tuning_overrides};

/// The device-wide kernels, one [`PackedModule`](runtime::packed::PackedModule) per
/// architecture (sm_80, sm_90): each family of kernels is one zstd frame of PTX, decompressed
/// the first time one of its kernels is launched. Generated from crates/kernels by
/// `cargo xtask ptx` into `kernels/` (docs/toolchain.md, "How the kernels are stored"); CI
/// checks they are what the sources compile to. A `static`, not a `const`: a constant's frames
/// would be copied into each crate that names it (scripts/check-sizes checks a binary holds
/// them once).
pub static KERNELS: &[runtime::packed::PackedModule] = {
    use runtime::packed::{PackedFamily, PackedModule};
    include!("../kernels/index.rs")
};

/// The key this crate's module is loaded under in a [`Gpu`] ([`Gpu::module`]).
pub const MODULE_KEY: &str = "gpu-primitives";

/// Threads per warp the kernels were compiled for; [`open_gpu`] checks the device agrees.
pub const WARP_SIZE: u32 = gpu_primitives_abi::layout::WARP_SIZE;

/// Open GPU `ordinal` (0 = the first) and choose the library's PTX variant for it. A [`Gpu`]
/// opened otherwise (with [`Gpu::open`], holding the caller's own modules) works as well: the
/// library adds its module on first use. Each kernel is compiled by the driver the first time a
/// call launches it, so a program pays only for the kernels it uses (the driver's JIT cache
/// keeps them for later runs); a kernel the driver cannot compile is an [`Error::PtxLoad`] of
/// the call that launches it.
///
/// # Errors
/// No device, driver too old, GPU older than the PTX.
pub fn open_gpu(ordinal: u32) -> Result<Gpu> {
    let gpu = Gpu::open(ordinal, WARP_SIZE)?;
    module(&gpu)?;
    Ok(gpu)
}

/// The library's module in `gpu` (under [`MODULE_KEY`], from [`KERNELS`]), loaded on first
/// use: its kernels, to launch through the unsafe [`Stream::launch`] with the parameter structs
/// of `gpu_primitives_abi::params`.
///
/// # Errors
/// As [`open_gpu`].
pub fn module(gpu: &Gpu) -> Result<std::sync::Arc<runtime::Module>> {
    gpu.packed_module(MODULE_KEY, KERNELS)
}

/// The kernel of `family` whose name is the family's followed by `parts`, each after an
/// underscore, from the registry of kernel families (`gpu_primitives_abi::families`): the name
/// to look up in [`module`], and the block it is launched with.
///
/// # Errors
/// [`Error::MissingKernel`] where the family has no such kernel.
pub(crate) fn registered(
    family: &'static gpu_primitives_abi::families::Family,
    parts: &[&str],
) -> Result<&'static gpu_primitives_abi::families::Kernel> {
    family
        .kernel(parts)
        .ok_or_else(|| Error::MissingKernel(format!("{} of {}", family.name, parts.join(", "))))
}

/// The architecture of the library's PTX variant loaded into `gpu` (compute capability x 10;
/// loads the module if it is not yet).
///
/// # Errors
/// As [`open_gpu`].
pub fn ptx_arch(gpu: &Gpu) -> Result<u32> {
    Ok(module(gpu)?.ptx_arch())
}
