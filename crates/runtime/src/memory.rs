//! Device memory: [`DeviceBuffer`] (an allocation of `T`s), [`DevicePointer`] (a typed device
//! address, passable to kernels) and [`DeviceCopy`] (types that may be copied to the device and
//! passed to a kernel by value).

use crate::error::check;
use crate::{Result, sys};
use std::marker::PhantomData;

/// A type whose values may be copied bit for bit between host and device and passed to a kernel
/// by value: plain data with no pointers to host memory.
///
/// # Safety
/// Every bit pattern a kernel may write must be a valid value, and the type must hold no host
/// references or pointers (device pointers are fine).
pub unsafe trait DeviceCopy: Copy + 'static {}

macro_rules! device_copy {
    ($($t:ty),*) => {$(
        // SAFETY: plain numbers: every bit pattern is a value; no pointers.
        unsafe impl DeviceCopy for $t {}
    )*};
}
device_copy!(u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, f32, f64);
// SAFETY: an array of device-copyable values is one too.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

/// A device address of `T` values (`CUdeviceptr`), as a kernel parameter: a `*const T` /
/// `*mut T` on the device side.
#[repr(transparent)]
pub struct DevicePointer<T> {
    address: u64,
    _element: PhantomData<*mut T>,
}

impl<T> Clone for DevicePointer<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevicePointer<T> {}
impl<T> std::fmt::Debug for DevicePointer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DevicePointer({:#x})", self.address)
    }
}
// SAFETY: a device address is a u64; the kernel reads it as a pointer.
unsafe impl<T: 'static> DeviceCopy for DevicePointer<T> {}
// SAFETY: a device address may be sent between threads; it is used only through the driver.
unsafe impl<T> Send for DevicePointer<T> {}
// SAFETY: as for Send.
unsafe impl<T> Sync for DevicePointer<T> {}

impl<T> DevicePointer<T> {
    /// The pointer at device address `address`.
    pub fn from_raw(address: u64) -> Self {
        Self {
            address,
            _element: PhantomData,
        }
    }

    /// The null pointer (address 0), for kernels' optional pointers.
    pub fn null() -> Self {
        Self::from_raw(0)
    }

    /// The device address.
    pub fn as_raw(self) -> u64 {
        self.address
    }

    /// The address `count` elements further.
    pub fn offset(self, count: usize) -> Self {
        Self::from_raw(self.address + (count * size_of::<T>()) as u64)
    }
}

/// `len` elements of `T` in device memory, freed on drop (which waits for the device's work
/// on it, as `cuMemFree` does). Made by [`Stream::alloc_zeroed`](crate::Stream::alloc_zeroed),
/// [`Stream::upload`](crate::Stream::upload) or [`Stream::alloc`](crate::Stream::alloc).
pub struct DeviceBuffer<T: DeviceCopy> {
    pointer: DevicePointer<T>,
    len: usize,
    context: sys::CUcontext,
}

// SAFETY: the allocation belongs to a context, not a thread; drop binds the context first.
unsafe impl<T: DeviceCopy + Send> Send for DeviceBuffer<T> {}
// SAFETY: shared access only reads the address and length.
unsafe impl<T: DeviceCopy + Sync> Sync for DeviceBuffer<T> {}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Allocate `len` elements in `context` (current on this thread), contents unset.
    pub(crate) fn allocate(len: usize, context: sys::CUcontext) -> Result<Self> {
        let bytes = len.saturating_mul(size_of::<T>());
        let mut address: sys::CUdeviceptr = 0;
        if bytes > 0 {
            // SAFETY: a valid out-pointer; the context is current.
            let status = unsafe { sys::cuMemAlloc_v2(&mut address, bytes) };
            if let Err(e) = check(status, "allocating device memory") {
                return Err(crate::error::out_of_memory(e, bytes));
            }
        }
        Ok(Self {
            pointer: DevicePointer::from_raw(address as u64),
            len,
            context,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of the first element.
    pub fn as_device_ptr(&self) -> DevicePointer<T> {
        self.pointer
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.pointer.address != 0 {
            // SAFETY: allocated by `allocate` in `context`, freed once; cuMemFree waits for the
            // device's use of it.
            unsafe {
                sys::cuCtxSetCurrent(self.context);
                sys::cuMemFree_v2(self.pointer.address as sys::CUdeviceptr);
            }
        }
    }
}
