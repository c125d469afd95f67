//! Kernel entry points (`extern "ptx-kernel"`), one feature per crate that launches them.
//!
//! Each kernel documents its grid and block shape, its shared memory and its thread mapping.
//! Pointers are device pointers; lengths are in elements.

#[cfg(feature = "probes")]
pub mod collective_probes;
#[cfg(feature = "device")]
pub mod device;
#[cfg(feature = "probes")]
pub mod device_layer_probes;
#[cfg(feature = "lessons")]
pub mod dot_product;
#[cfg(feature = "probes")]
pub mod exchange_probes;
#[cfg(feature = "lessons")]
pub mod puzzles;
#[cfg(feature = "probes")]
pub mod radix_probes;
#[cfg(feature = "device")]
pub mod radix_sort;
#[cfg(feature = "lessons")]
pub mod reduction;
#[cfg(feature = "device")]
pub mod rows;
#[cfg(feature = "lessons")]
pub mod scan_lecture;
#[cfg(feature = "probes")]
pub mod select_probes;
