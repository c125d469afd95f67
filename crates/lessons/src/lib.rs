//! The lessons `gpu-primitives` was built from, as code: the puzzles (p12 dot product, p24 warp
//! sum, p26 butterfly, p27 block operations), the reduction lesson (a naive one-thread sum beside
//! the hierarchical block sum) and the lecture's scans (Kogge-Stone, double-buffered Kogge-Stone,
//! Brent-Kung, hierarchical over sections). One example binary per puzzle (`examples/`).
//!
//! Their kernels are this crate's own (crates/kernels, feature `lessons`), built by its
//! `build.rs` with nvptx-builder, and loaded into the same [`Gpu`] as the library's: the path a
//! project that writes its own kernels beside the library's algorithms takes.
//!
//! ```no_run
//! let gpu = gpu_primitives_lessons::open_gpu(0)?;
//! let a: Vec<f32> = (0..8).map(|i| i as f32).collect();
//! let dot = gpu_primitives_lessons::dot_product::dot_product(&gpu, &a, &a)?;
//! assert_eq!(dot, 140.0);
//! # Ok::<(), gpu_primitives::Error>(())
//! ```

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod dot_product;
pub mod lecture_scan;
pub mod puzzles;
pub mod reduction;

pub use gpu_primitives::reference;
pub use gpu_primitives::{DeviceBuffer, Error, Gpu, LaunchConfig, Result};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/lessons_ptx.rs"));
}

/// The lessons' kernels, one PTX module per architecture: (compute capability x 10, PTX text).
pub use embedded::PTX_VARIANTS;

/// The key the lessons' module is loaded under in a [`Gpu`].
pub const MODULE_KEY: &str = "gpu-primitives-lessons";

/// Add the lessons' module to `gpu` and compile its kernels (once; later calls return at once).
/// The lessons time single launches, so their few kernels are compiled here rather than on
/// first use inside a timed launch, as the library's are.
///
/// # Errors
/// GPU older than the PTX, driver too old, a kernel the driver cannot compile
/// ([`gpu_primitives::Error::PtxLoad`], with the JIT log).
pub fn load(gpu: &Gpu) -> Result<()> {
    gpu.module(MODULE_KEY, PTX_VARIANTS)?.compile_all().map(drop)
}

/// The architecture of the lessons' PTX variant loaded into `gpu` (compute capability x 10;
/// loads the module if it is not yet).
///
/// # Errors
/// As [`load`].
pub fn ptx_arch(gpu: &Gpu) -> Result<u32> {
    Ok(gpu.module(MODULE_KEY, PTX_VARIANTS)?.ptx_arch())
}

/// Open GPU `ordinal` with the lessons' kernels loaded into it. The library's are not: a
/// program that only runs the lessons carries none of them (a library call on this `Gpu` would
/// still load them on first use).
///
/// # Errors
/// No device, driver too old, GPU older than the PTX, a kernel the driver cannot compile; a
/// device whose warp size is not [`gpu_primitives::WARP_SIZE`].
pub fn open_gpu(ordinal: u32) -> Result<Gpu> {
    let gpu = Gpu::open(ordinal, gpu_primitives::WARP_SIZE)?;
    load(&gpu)?;
    Ok(gpu)
}
