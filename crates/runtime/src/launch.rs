//! Launch shapes and kernel parameters.

use crate::DeviceCopy;
use crate::{Error, Result};
use std::ffi::c_void;

/// The shape of a one-dimensional launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid (`gridDim.x`), 1 ..= 2^31 - 1.
    pub grid: u32,
    /// Threads per block (`blockDim.x`), 1 ..= 1024.
    pub block: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// Largest block the hardware runs (threads).
    pub const MAX_BLOCK: u32 = 1024;
    /// Largest grid in x (blocks).
    pub const MAX_GRID: u32 = i32::MAX as u32;
    /// Dynamic shared memory a launch may ask for without opting in, in bytes (48 KiB on every
    /// GPU since sm_70). A launch asking for more first allows its kernel
    /// [`DeviceInfo::max_shared_per_block`](crate::DeviceInfo::max_shared_per_block) less its
    /// static shared memory.
    pub const DEFAULT_DYNAMIC_SHARED_BYTES: u32 = 48 * 1024;

    /// `grid` blocks of `block` threads, no dynamic shared memory.
    pub fn new(grid: u32, block: u32) -> Self {
        Self {
            grid,
            block,
            shared_mem_bytes: 0,
        }
    }

    /// Enough blocks of `block` threads for one thread per element of `n` (at least one block),
    /// capped at `max_grid` blocks (grid-stride loops cover the rest).
    ///
    /// # Example
    /// ```
    /// use gpu_primitives_runtime::LaunchConfig;
    /// let c = LaunchConfig::for_elements(1000, 256, 1024);
    /// assert_eq!((c.grid, c.block), (4, 256));
    /// ```
    pub fn for_elements(n: usize, block: u32, max_grid: u32) -> Self {
        let blocks = n
            .div_ceil(block.max(1) as usize)
            .clamp(1, max_grid.max(1) as usize);
        Self::new(blocks as u32, block)
    }

    /// A block per item for `items` items (segments, rows), cut into launches of at most
    /// [`MAX_GRID`](Self::MAX_GRID) blocks: each launch's first item and its number of blocks.
    ///
    /// # Example
    /// ```
    /// use gpu_primitives_runtime::LaunchConfig;
    /// let max = LaunchConfig::MAX_GRID as usize;
    /// let launches: Vec<_> = LaunchConfig::grid_chunks(max + 5).collect();
    /// assert_eq!(launches, [(0, LaunchConfig::MAX_GRID), (max, 5)]);
    /// assert_eq!(LaunchConfig::grid_chunks(0).count(), 0);
    /// ```
    pub fn grid_chunks(items: usize) -> impl Iterator<Item = (usize, u32)> {
        let max = Self::MAX_GRID as usize;
        (0..items)
            .step_by(max)
            .map(move |first| (first, (items - first).min(max) as u32))
    }

    /// The same shape with `bytes` of dynamic shared memory per block.
    pub fn with_shared_mem(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }

    /// Check the shape against the hardware's limits.
    pub fn validate(&self) -> Result<()> {
        if self.block == 0 || self.block > Self::MAX_BLOCK {
            return Err(Error::InvalidLaunch(format!(
                "block size {} is outside 1..={}",
                self.block,
                Self::MAX_BLOCK
            )));
        }
        if self.grid == 0 || self.grid > Self::MAX_GRID {
            return Err(Error::InvalidLaunch(format!(
                "grid size {} is outside 1..={}",
                self.grid,
                Self::MAX_GRID
            )));
        }
        Ok(())
    }
}

/// A tuple of positional kernel arguments, each [`DeviceCopy`] (plain data, device pointers,
/// lengths), for kernels written with separate parameters.
///
/// Implemented for tuples of 1 to 12 elements. The number of arguments and each one's size are
/// checked against the PTX entry's parameters; arguments of equal size in the wrong order (or a
/// pointer to the wrong type) are what [`Gpu::launch`](crate::Gpu::launch) cannot check.
pub trait KernelArgs {
    /// Each argument's size in bytes, in order.
    const SIZES: &'static [usize];
    /// Calls `f` with one pointer per argument, as `cuLaunchKernel` takes them.
    fn with_pointers<R>(&self, f: impl FnOnce(&[*mut c_void]) -> R) -> R;
}

macro_rules! kernel_params {
    ($($name:ident : $idx:tt),+) => {
        impl<$($name: DeviceCopy),+> KernelArgs for ($($name,)+) {
            const SIZES: &'static [usize] = &[$(size_of::<$name>()),+];
            fn with_pointers<R>(&self, f: impl FnOnce(&[*mut c_void]) -> R) -> R {
                let pointers = [$(&self.$idx as *const $name as *mut c_void),+];
                f(&pointers)
            }
        }
    };
}
kernel_params!(A: 0);
kernel_params!(A: 0, B: 1);
kernel_params!(A: 0, B: 1, C: 2);
kernel_params!(A: 0, B: 1, C: 2, D: 3);
kernel_params!(A: 0, B: 1, C: 2, D: 3, E: 4);
kernel_params!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5);
kernel_params!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6);
kernel_params!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7);
kernel_params!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7, I: 8);
kernel_params!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7, I: 8, J: 9);
kernel_params!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7, I: 8, J: 9, K: 10);
kernel_params!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7, I: 8, J: 9, K: 10, L: 11);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_impossible_shapes() {
        assert!(LaunchConfig::new(1, 0).validate().is_err());
        assert!(LaunchConfig::new(1, 1025).validate().is_err());
        assert!(LaunchConfig::new(0, 32).validate().is_err());
        assert!(LaunchConfig::new(1, 1024).validate().is_ok());
    }

    #[test]
    fn params_point_at_their_values() {
        let params = (7u32, 2.5f32);
        params.with_pointers(|p| {
            assert_eq!(p.len(), 2);
            // SAFETY: the pointers point at the tuple's fields, alive for this closure.
            unsafe {
                assert_eq!(*(p[0] as *const u32), 7);
                assert_eq!(*(p[1] as *const f32), 2.5);
            }
        });
    }

    proptest! {
        #[test]
        fn for_elements_covers_input(n in 0usize..1 << 34, block in 1u32..=1024, max_grid in 1u32..100_000) {
            let c = LaunchConfig::for_elements(n, block, max_grid);
            prop_assert!(c.validate().is_ok());
            prop_assert!(c.grid <= max_grid);
            prop_assert!(c.grid as usize * block as usize >= n || c.grid == max_grid);
        }
    }
}
