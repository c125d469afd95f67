//! Device memory: [`DeviceBuffer`] (an allocation of `T`s), [`DevicePointer`] (a typed device
//! address, passable to kernels) and [`DeviceCopy`] (types that may be copied to the device and
//! passed to a kernel by value).

use crate::context::Context;
use crate::{Error, Result, Stream, result, sys};
use std::marker::PhantomData;
use std::sync::Arc;

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

    /// The address `count` elements further, or `None` where that is past the 64-bit address
    /// space.
    pub fn checked_offset(self, count: usize) -> Option<Self> {
        let bytes = u64::try_from(count.checked_mul(size_of::<T>())?).ok()?;
        Some(Self::from_raw(self.address.checked_add(bytes)?))
    }

    /// The address `count` elements further.
    ///
    /// # Panics
    /// Where that is past the 64-bit address space ([`checked_offset`](Self::checked_offset)
    /// returns `None` instead).
    pub fn offset(self, count: usize) -> Self {
        self.checked_offset(count)
            .unwrap_or_else(|| panic!("{self:?} + {count} elements is past the address space"))
    }
}

/// `len` elements of `T` in device memory, freed on drop (which waits for the device's work
/// on it, as `cuMemFree` does). Made by [`Stream::alloc_zeroed`](crate::Stream::alloc_zeroed),
/// [`Stream::upload`](crate::Stream::upload) or [`Stream::alloc`](crate::Stream::alloc); or
/// stream-ordered by [`Stream::alloc_async`](crate::Stream::alloc_async), freed then by
/// [`Stream::free_async`](crate::Stream::free_async).
///
/// Holds its context: the buffer may outlive the [`Gpu`](crate::Gpu) it was made with.
pub struct DeviceBuffer<T: DeviceCopy> {
    pointer: DevicePointer<T>,
    len: usize,
    /// Allocated from the device's memory pool in stream order (`cuMemAllocAsync`): freeing it
    /// with `cuMemFree` does not wait for work using it, so drop synchronises the context first.
    pooled: bool,
    context: Arc<Context>,
}

// SAFETY: the allocation belongs to a context, not a thread; drop binds the context first.
unsafe impl<T: DeviceCopy + Send> Send for DeviceBuffer<T> {}
// SAFETY: shared access only reads the address and length.
unsafe impl<T: DeviceCopy + Sync> Sync for DeviceBuffer<T> {}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Allocate `len` elements in `context`, contents unset: with `cuMemAllocAsync` on
    /// `stream` where given (stream-ordered, from the device's default memory pool), else with
    /// `cuMemAlloc`.
    pub(crate) fn allocate(len: usize, context: &Arc<Context>, stream: Option<&Stream>) -> Result<Self> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "a buffer of {len} elements of {} bytes is past the address space",
                size_of::<T>()
            ))
        })?;
        let mut address: sys::CUdeviceptr = 0;
        if bytes > 0 {
            let _current = context.push()?;
            // SAFETY: the context is current; the stream, where given, a live one of it.
            address = unsafe { result::mem_alloc(bytes, stream.map(Stream::as_raw))? };
        }
        Ok(Self {
            pointer: DevicePointer::from_raw(address as u64),
            len,
            pooled: stream.is_some(),
            context: Arc::clone(context),
        })
    }

    /// Give up the allocation without freeing it: its address, and whether it is pooled.
    pub(crate) fn into_raw(self) -> (u64, bool) {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped; its context is dropped once here.
        drop(unsafe { std::ptr::read(&this.context) });
        (this.pointer.address, this.pooled)
    }

    /// Free the buffer now, without waiting for anything (`cuMemFree`, which for memory of
    /// [`Stream::alloc_async`] does not wait for work using it).
    ///
    /// # Safety
    /// No work that uses the buffer is pending on any stream (an [`Event`](crate::Event)
    /// recorded after its last use has completed, say).
    pub unsafe fn free_idle(self) {
        let context = Arc::clone(&self.context);
        let (address, _) = self.into_raw();
        // SAFETY: this context's allocation, given up by its buffer, idle (the caller's
        // contract): nothing to wait for.
        unsafe { free(&context, address, false) };
    }

    /// The context the buffer was allocated in.
    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.context
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

    /// The driver handle of the context the buffer was allocated in.
    pub fn context_raw(&self) -> sys::CUcontext {
        self.context.raw()
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by `allocate` in this context, freed once, here. cuMemFree waits for
        // the device's use of memory from cuMemAlloc, not of pooled memory: for that, all of
        // the context's work first (`Stream::free_async` is the stream-ordered way).
        unsafe { free(&self.context, self.pointer.address, self.pooled) };
    }
}

/// `cuMemFree` of `address` (nothing for 0) in `context`, after all of the context's work where
/// `wait_first`; leaked where the context cannot be made current (rather than freed in another).
///
/// # Safety
/// `address` is an allocation of `context` no one else frees, and no work using it is pending
/// unless `wait_first` (pooled memory: `cuMemFree` does not wait for it).
unsafe fn free(context: &Context, address: u64, wait_first: bool) {
    if address == 0 {
        return;
    }
    let Ok(_current) = context.push() else {
        return;
    };
    if wait_first {
        result::context_synchronize();
    }
    // SAFETY: the caller's contract; the context is current. A failure is dropped: the memory
    // is then leaked, never freed twice.
    let _ = unsafe { result::mem_free(address as sys::CUdeviceptr) };
}

#[cfg(test)]
mod tests {
    use super::DevicePointer;

    #[test]
    fn offsets_past_the_address_space_are_none() {
        let near_end = DevicePointer::<f32>::from_raw(u64::MAX - 8);
        assert_eq!(near_end.checked_offset(2).map(|p| p.as_raw()), Some(u64::MAX));
        assert!(near_end.checked_offset(3).is_none());
        assert!(
            DevicePointer::<f64>::from_raw(0)
                .checked_offset(usize::MAX / 4)
                .is_none()
        );
        assert_eq!(DevicePointer::<u16>::from_raw(16).offset(4).as_raw(), 24);
    }

    #[test]
    #[should_panic(expected = "past the address space")]
    fn offset_past_the_address_space_panics() {
        DevicePointer::<u32>::from_raw(u64::MAX).offset(1);
    }
}
