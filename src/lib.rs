//! CUB-style GPU primitives in Rust: `no_std` kernels (the `kernels-gpu` crate) compiled to PTX
//! at build time, launched through the [`gpu_host`] runtime.
//!
//! ```no_run
//! let gpu = gpu_primitives::open_gpu(0)?;
//! let a: Vec<f32> = (0..8).map(|i| i as f32).collect();
//! let dot = gpu_primitives::dot_product::dot_product(&gpu, &a, &a)?;
//! assert_eq!(dot, 140.0);
//! # Ok::<(), gpu_primitives::Error>(())
//! ```
//!
//! Modules by job: [`dot_product`], [`reduction`] and [`scan`] launch kernels; [`puzzles`] runs
//! the puzzles of the source material; [`mod@reference`] holds the CPU
//! references every GPU result is checked against.

#![warn(missing_docs)]

pub mod bench;
pub mod cli_ops;
pub mod device;
pub mod dot_product;
pub mod npy;
pub mod plot;
pub mod puzzles;
pub mod reduction;
pub mod reference;
pub mod scan;

pub use gpu_host::{DeviceBuffer, DeviceInfo, Error, Gpu, LaunchConfig, Result};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/kernels_gpu_ptx.rs"));
}

/// The kernels' PTX, one module per architecture: (compute capability x 10, PTX text).
pub use embedded::PTX_VARIANTS;

/// Threads per warp the kernels were compiled for (kernels-gpu's `thread::WARP_SIZE`);
/// [`open_gpu`] checks the device agrees.
pub const WARP_SIZE: u32 = 32;

/// Open GPU `ordinal` (0 = the first) and load the kernels' PTX variant that fits it.
///
/// # Errors
/// No device, driver too old, GPU older than the PTX, PTX load failure (with the JIT log).
pub fn open_gpu(ordinal: u32) -> Result<Gpu> {
    Gpu::open(ordinal, PTX_VARIANTS, WARP_SIZE)
}
