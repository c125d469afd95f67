//! The probe kernels' PTX for the GPU tests (`tests/gpu`), and nothing else: the tests
//! themselves are in `tests/`.

#![warn(missing_docs)]

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/probes_ptx.rs"));
}

/// The probe kernels' PTX, one module per architecture: (compute capability x 10, PTX text).
pub use embedded::PTX_VARIANTS;
