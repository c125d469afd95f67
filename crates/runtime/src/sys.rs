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

/// `cuOccupancyMaxActiveClusters` (CUDA 11.8 and later) for `function` launched with `grid`
/// blocks (a whole number of its clusters, whose size its PTX declares) of `block` threads and
/// `shared_bytes` of dynamic shared memory: the status and the count. cudarc's bindings have it;
/// cust's predate it, so for that back end it is declared here, with cuda.h's `CUlaunchConfig`
/// (libcuda is linked by cust's bindings).
///
/// # Safety
/// `function` is a loaded kernel of the current context.
pub unsafe fn occupancy_max_active_clusters(
    function: CUfunction,
    grid: u32,
    block: u32,
    shared_bytes: u32,
) -> (CUresult, i32) {
    #[cfg(feature = "cust")]
    use cluster_occupancy::{CUlaunchConfig, cuOccupancyMaxActiveClusters};
    let config = CUlaunchConfig {
        gridDimX: grid,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: block,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: shared_bytes,
        hStream: std::ptr::null_mut(),
        attrs: std::ptr::null_mut(),
        numAttrs: 0,
    };
    let mut clusters = 0;
    // SAFETY: a loaded function (the caller's contract), a valid out-pointer and a launch
    // configuration without attributes (the cluster size is the kernel's own).
    let status = unsafe { cuOccupancyMaxActiveClusters(&mut clusters, function, &config) };
    (status, clusters)
}

#[cfg(feature = "cust")]
#[allow(non_snake_case)]
mod cluster_occupancy {
    use super::{CUfunction, CUresult, CUstream};
    use std::ffi::{c_int, c_uint, c_void};

    /// cuda.h's `CUlaunchConfig` (CUDA 11.8 and later).
    #[repr(C)]
    pub struct CUlaunchConfig {
        pub gridDimX: c_uint,
        pub gridDimY: c_uint,
        pub gridDimZ: c_uint,
        pub blockDimX: c_uint,
        pub blockDimY: c_uint,
        pub blockDimZ: c_uint,
        pub sharedMemBytes: c_uint,
        pub hStream: CUstream,
        pub attrs: *mut c_void,
        pub numAttrs: c_uint,
    }

    unsafe extern "C" {
        /// cuda.h: `CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
        /// const CUlaunchConfig *config)`.
        pub fn cuOccupancyMaxActiveClusters(
            numClusters: *mut c_int,
            func: CUfunction,
            config: *const CUlaunchConfig,
        ) -> CUresult;
    }
}
