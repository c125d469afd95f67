//! GPU kernels in `no_std` Rust, and the device layer they stand on.
//!
//! This crate is compiled only for `nvptx64-nvidia-cuda` (by `nvptx-builder`: `cargo xtask ptx` for
//! the library's committed PTX, the lessons' and the tests' `build.rs` for theirs). It plays the role `cuda_std` plays in Rust-CUDA and is laid out by
//! scope, each built only on the one below it, as CUB draws them:
//!
//! | module | scope | what |
//! |---|---|---|
//! | [`thread`] | one thread | thread / block / grid indices and sizes, lane id, warp id |
//! | [`sync`] | block, device | barrier, memory fences |
//! | [`op`] | thread | associative operators (sum, min, max) for reductions and scans |
//! | [`math`] | thread | fast `f32` math, one PTX instruction each: `exp`, `ln`, `1 / x`, `1 / sqrt`, fused multiply-add |
//! | [`policy`] | - | the tuning policies of the architecture being built (`cfg(target_feature = "sm_90")`), read in const contexts |
//! | [`radix`] | thread | the radix sort's key order (ordered bits, digits) and values |
//! | [`atomic`] | device | atomic add / min / max / compare-and-swap, acquire / release |
//! | [`shared`] | block | shared memory: static arrays and dynamic shared memory |
//! | [`warp`] | warp | shuffles (down / up / xor / idx), votes (ballot / any / all) |
//! | [`block`] | block | reduce, scan, broadcast over a block (temp storage in shared memory); the row groups' reduction |
//! | [`cluster`] | cluster | the blocks of a thread-block cluster (sm_90): barrier, ranks, distributed shared memory, the row operations' combination of the blocks' statistics |
//! | [`device`] | grid | the device-wide agents: reduce, scans, compaction, run-length, histograms, radix sorts, top-k, row operations |
//! | [`unroll`] | thread | loops written out at compile time (register arrays stay in registers) |
//! | [`kernels`] | grid | the `extern "ptx-kernel"` entry points the host launches |
//!
//! Every function here runs on the GPU. Functions that need cooperation between threads say who
//! must call them and where their result is valid.
#![no_std]
#![feature(
    abi_ptx,
    stdarch_nvptx,
    asm_experimental_arch,
    link_llvm_intrinsics,
    abi_unadjusted
)]
// `link_llvm_intrinsics` and `abi_unadjusted` are rustc's internal features: the f32 maximum and
// minimum are LLVM's intrinsics (op.rs), which core does not expose on this target as one call.
#![allow(internal_features)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
// Register arrays are indexed in counted loops that unroll at compile time (as CUB's
// `#pragma unroll` loops): an iterator chain would read the same but is not what these loops mean.
#![allow(clippy::needless_range_loop)]

pub mod atomic;
pub mod block;
pub mod cluster;
pub mod device;
#[cfg(any(feature = "device", feature = "lessons", feature = "probes"))]
pub mod kernels;
pub mod math;
pub mod op;
pub mod policy;
pub mod radix;
pub mod shared;
pub mod sync;
pub mod thread;
pub mod unroll;
pub mod warp;

/// A panic on the GPU (an out-of-bounds index, an overflow check) aborts the kernel with `trap`;
/// the host sees the launch fail with an illegal-instruction error.
#[cfg(not(test))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` has no preconditions; it ends this kernel launch with an error.
    unsafe { core::arch::nvptx::trap() }
}
