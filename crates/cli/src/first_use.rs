//! `gpu-primitives first-use`: what the first call of each kernel family costs on the GPU, beyond
//! the call itself: its compressed frame decompressed (`ruzstd`), and one of its kernels compiled
//! from PTX by the driver's JIT (or taken from the driver's cache, `CUDA_CACHE_PATH`) and loaded.
//! docs/performance.md ("Start-up and first use") has the figures on an H100 with an empty and
//! a warm cache.

use gpu_primitives::{Gpu, Result};
use gpu_primitives_abi::families;
use std::time::Instant;

/// One family's first use.
pub struct FirstUse {
    /// The family (`device_reduce`).
    pub family: &'static str,
    /// The kernel compiled: the family's first for the GPU's PTX variant.
    pub kernel: &'static str,
    /// Microseconds to decompress the family's frame.
    pub decompress_us: f64,
    /// Microseconds of the kernel's first lookup: the decompression again (the module's own),
    /// the JIT (or the cache) and the load.
    pub first_kernel_us: f64,
}

/// The first use of every family of the library's module for `gpu`, one after another in the
/// registry's order (a family's text is decompressed and cut on its first kernel's lookup, so
/// no family is warm from another; the driver's cache may hold the kernels).
///
/// # Errors
/// As [`gpu_primitives::module`], and a kernel's compilation ([`gpu_primitives::runtime::Module::compile`]).
pub fn measure(gpu: &Gpu) -> Result<Vec<FirstUse>> {
    let module = gpu_primitives::module(gpu)?;
    let arch = module.ptx_arch();
    let packed = gpu_primitives::KERNELS
        .iter()
        .find(|m| m.arch == arch)
        .expect("the loaded variant is one of KERNELS");
    let mut rows = Vec::new();
    for family in families::families() {
        let Some(kernel) = family.kernels().find(|k| k.min_arch <= arch) else {
            continue;
        };
        let frame = packed
            .families
            .iter()
            .find(|f| f.name == family.name)
            .expect("every registered family is packed");
        let t = Instant::now();
        frame.decompress()?;
        let decompress_us = t.elapsed().as_secs_f64() * 1e6;
        let t = Instant::now();
        module.compile(kernel.name)?;
        let first_kernel_us = t.elapsed().as_secs_f64() * 1e6;
        rows.push(FirstUse {
            family: family.name,
            kernel: kernel.name,
            decompress_us,
            first_kernel_us,
        });
    }
    Ok(rows)
}
