//! Compiles kernels-gpu to PTX for sm_80 and sm_90 and embeds both (see docs/toolchain.md).
fn main() {
    let ptx = ptx_builder::PtxBuilder::new("kernels-gpu")
        .arch(80)
        .arch(90)
        .build()
        .unwrap_or_else(|e| panic!("\n\n{e}\n\n"));
    ptx.write_rust_module("kernels_gpu_ptx.rs")
        .unwrap_or_else(|e| panic!("\n\n{e}\n\n"));
}
