//! Compiles the lessons' kernels (crates/kernels, feature `lessons`) to PTX for sm_80 and sm_90
//! and embeds both (docs/toolchain.md): this crate writes kernels, so it needs the kernel compiler.
fn main() {
    let ptx = nvptx_builder::PtxBuilder::new("../kernels")
        .feature("lessons")
        .watch("../abi/src")
        .arch(80)
        .arch(90)
        .build()
        .unwrap_or_else(|e| panic!("\n\n{e}\n\n"));
    ptx.write_rust_module("lessons_ptx.rs")
        .unwrap_or_else(|e| panic!("\n\n{e}\n\n"));
}
