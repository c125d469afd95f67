//! Host runtime for Rust GPU kernels, built on `cust` 0.3 (the Rust-CUDA driver-API crate).
//!
//! | CPU | GPU (this crate) |
//! |---|---|
//! | the program | [`Gpu`]: one device, its context, a stream, the loaded PTX module |
//! | `Vec<T>` / `&[T]` | [`DeviceBuffer<T>`](cust::memory::DeviceBuffer), made by [`Gpu::upload`] / [`Gpu::alloc_zeroed`] |
//! | calling a function | [`Gpu::launch`] with a [`LaunchConfig`] (grid, block, shared memory) |
//! | `std::time::Instant` | [`Gpu::time`]: CUDA events around stream work |
//! | `std::io::Error` | [`Error`]: one enum, clear messages |
//!
//! Work is stream-ordered: launches and copies on the [`Gpu`]'s stream run in order; a call that
//! returns data to the host synchronises.

#![warn(missing_docs)]

mod error;
mod gpu;
mod launch;
pub mod ptx;

pub use cust::memory::{DeviceBuffer, DeviceCopy, DevicePointer};
pub use error::{Error, Result};
pub use gpu::{DeviceInfo, Gpu};
pub use launch::{KernelParams, LaunchConfig};
