//! Everything the GPU kernels (`gpu-primitives-kernels`, compiled for `nvptx64-nvidia-cuda`) and
//! the host (`gpu-primitives`) must agree on, written once. `no_std`, no dependencies: both sides
//! compile it.
//!
//! | module | what |
//! |---|---|
//! | [`table`] | the element types (with accumulator, vector width, items per thread) and the operators; macros that expand a callback once per row, so adding a type or an operator is one row |
//! | [`layout`] | warp size, block limits, the (value, index) pair, a radix digit's and the counters' shapes, the limits of the API (`SORT_MAX_KEYS`, `TOP_K_SELECT_MAX_K`), the dynamic shared memory of the device kernels (computed from the types); it imports no tuning |
//! | [`params`] | one `#[repr(C)]` parameter struct per kernel family, passed by value as the kernel's one parameter |
//! | [`tuning`] | the tuned values as a policy type a kernel family (threads per block, items per thread, blocks per multiprocessor, look-back delays), a value of each per architecture (`SM80`, `SM90`, `for_arch`) |
//! | [`planning`] | pure functions of a call's shape over the tuned values that pick its launch (rows, sorts); tested in `tests/` without a GPU |
//! | [`families`] | the one registry of kernel families: each kernel's name, parameter bytes, block, launch bounds, cluster shape and module |
//!
//! A kernel entry point takes its family's parameter struct; the host launches it with the same
//! struct, and checks at load time that the PTX entry's parameter has the struct's size
//! (`gpu-primitives-runtime`'s `Module::kernel`).
#![no_std]
#![warn(missing_docs)]

#[cfg(test)]
extern crate std;

pub mod families;
pub mod layout;
pub mod params;
pub mod planning;
pub mod table;
pub mod tuning;
