//! Compiles the probe kernels (crates/kernels, feature `probes`: one primitive each, for the GPU
//! tests) to PTX for sm_80 and sm_90.
fn main() {
    let ptx = nvptx_builder::PtxBuilder::new("../kernels")
        .feature("probes")
        .watch("../abi/src")
        .arch(80)
        .arch(90)
        .build()
        .unwrap_or_else(|e| panic!("\n\n{e}\n\n"));
    ptx.write_rust_module("probes_ptx.rs")
        .unwrap_or_else(|e| panic!("\n\n{e}\n\n"));
}
