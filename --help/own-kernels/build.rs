fn main() {
    nvptx_builder::PtxBuilder::new("my-kernels")
        .arch(80)
        .arch(90)
        .build()
        .and_then(|ptx| ptx.write_rust_module("my_kernels_ptx.rs"))
        .unwrap_or_else(|e| panic!("{e}"));
}
