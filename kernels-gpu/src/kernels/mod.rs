//! Kernel entry points (`extern "ptx-kernel"`), launched by the host crate.
//!
//! Each kernel documents its grid and block shape, its shared memory and its thread mapping.
//! Pointers are device pointers; lengths are in elements.

pub mod collective_probes;
pub mod device;
pub mod device_layer_probes;
pub mod dot_product;
pub mod puzzles;
pub mod reduction;
pub mod scan_lecture;
