//! Host runtime for Rust GPU kernels on the CUDA driver API, through one of two back ends:
//! `cust` 0.3's bindings (feature `cust`, the default; the Rust-CUDA project's crate, libcuda
//! linked at build time) or `cudarc`'s (feature `cudarc`; the driver loaded at run time, so a
//! project builds with no CUDA installed). Either way the device's primary context is used, the
//! one cust, cudarc and the CUDA runtime share, so memory and streams pass between them.
//!
//! | CPU | GPU (this crate) |
//! |---|---|
//! | the program | [`Gpu`]: one device, its primary context, a default stream, the PTX modules loaded into it |
//! | a library of functions | [`Module`]: one PTX module per [`Gpu`] ([`Gpu::module`]); each function compiled alone on its first lookup, and cached |
//! | a function's signature | [`Kernel<P>`]: a kernel whose one parameter is the `#[repr(C)]` struct `P`, its size checked against the PTX entry at lookup |
//! | an ordered queue of work | [`Stream`]: the `Gpu`'s own, another made with [`Gpu::create_stream`], or the caller's (e.g. cudarc's) wrapped by [`Stream::from_raw`] |
//! | `Vec<T>` / `&[T]` | [`DeviceBuffer<T>`], made and filled by [`Stream::upload`] / [`Stream::alloc_zeroed`], read by [`Stream::download`] |
//! | `std::time::Instant` | [`Stream::time`]: CUDA events around stream work |
//! | `std::io::Error` | [`Error`]: one enum, clear messages |
//!
//! **Stream order.** Every copy, memset and launch of this crate is queued on the stream it is
//! called on (never on the legacy default stream), so work on one stream sees the results of
//! the work queued before it there. A call that returns data to the host synchronises that
//! stream.
//!
//! **Threads.** [`Gpu`], [`Module`] and [`Stream`] are `Send` and `Sync`: the CUDA driver API is
//! thread-safe, and each call pushes the `Gpu`'s context as the calling thread's current one
//! for its duration and pops it after (`cuCtxPushCurrent` / `cuCtxPopCurrent`), so a `Gpu` may
//! be used from any thread and a caller's own current context (cust's, say) is left as it was.
//!
//! **Lifetimes.** Every handle ([`Stream`], [`DeviceBuffer`], [`Module`], [`Kernel`], [`Event`])
//! holds the primary context it was made in (as cudarc's hold an `Arc<CudaContext>`), and a
//! [`Kernel`] holds its module's code: any order of drops is sound, and the context is released
//! after the last handle. See docs/safety.md.
//!
//! **Layers.** The driver's functions are called in one module only (`result`: one thin function
//! each, its status as a [`Result`], as cudarc's `driver::result`); the types above own the
//! handles and keep them valid.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod context;
mod error;
mod event;
pub mod fault;
mod gpu;
mod launch;
mod memory;
mod module;
pub mod packed;
pub mod ptx;
mod result;
mod stream;
pub mod sys;

pub use error::{BinRule, Error, LevelValue, OffsetRule, Result};
pub use event::Event;
pub use gpu::{DeviceInfo, Gpu, OnStream};
pub use launch::{KernelArgs, LaunchConfig};
pub use memory::{DeviceBuffer, DeviceCopy, DevicePointer};
pub use module::{Kernel, Module};
pub use stream::Stream;
