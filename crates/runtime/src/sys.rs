//! The CUDA driver API, from the back end the features pick: cust's bindings (`cust_raw`,
//! linked at build time; feature `cust`, the default) or cudarc's (loaded from the driver at
//! run time; feature `cudarc`). Both are generated from CUDA's `cuda.h`, so every call and type
//! this crate uses has the same name in each; nothing else in the crate names a back end.

#[cfg(feature = "cust")]
pub use cust::sys::*;

#[cfg(all(feature = "cudarc", not(feature = "cust")))]
pub use cudarc::driver::sys::*;

#[cfg(not(any(feature = "cust", feature = "cudarc")))]
compile_error!("gpu-primitives-runtime needs a back end: enable the feature `cust` (default) or `cudarc`");

/// Whether the driver library can be used: always with cust's bindings (linked at build time);
/// with cudarc's, whether `libcuda` can be loaded (so that a machine without it gets
/// `Error::NoDevice`, not a panic at the first call).
pub fn driver_present() -> bool {
    #[cfg(feature = "cust")]
    {
        true
    }
    #[cfg(all(feature = "cudarc", not(feature = "cust")))]
    {
        // SAFETY: only tries to open the library by its names; no driver call.
        unsafe { cudarc::driver::sys::is_culib_present() }
    }
}
