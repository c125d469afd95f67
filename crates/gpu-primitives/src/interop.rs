//! The algorithms on other runtimes' memory and streams, in the same primary context.
//!
//! - Feature `cust`: a cust `DeviceBuffer<T>` or `DeviceSlice<T>` converts (`From`) into a
//!   [`DeviceView`] / [`DeviceViewMut`]; a cust `Stream` wraps with `cust_stream`.
//! - Feature `cudarc`: a cudarc `CudaStream` wraps with `cudarc_stream`; a `CudaSlice`,
//!   `CudaView` or `CudaViewMut` is borrowed for one call with `CudarcInput` /
//!   `CudarcOutput`, which keep cudarc's stream synchronisation (the call's stream waits for the
//!   slice's last write; the slice's read or write is recorded after the call is queued).
//!
//! cust 0.3, cudarc and this crate all use the device's primary context, so no copy is made.

#[cfg(feature = "cudarc")]
pub use self::with_cudarc::{BorrowedStream, CudarcInput, CudarcOutput, cudarc_stream};
#[cfg(feature = "cust")]
pub use self::with_cust::cust_stream;
#[allow(unused_imports)] // for the module docs' links
use crate::device::{DeviceView, DeviceViewMut};
/// The cudarc this crate was built with (use it to match versions).
#[cfg(feature = "cudarc")]
pub use cudarc;
/// The cust this crate was built with (use it to match versions).
#[cfg(feature = "cust")]
pub use cust;

#[cfg(feature = "cust")]
mod with_cust {
    use crate::device::{DeviceView, DeviceViewMut};
    use crate::{Gpu, Stream};
    use cust::memory::{DeviceBuffer, DeviceCopy, DeviceSlice};

    impl<'a, T: DeviceCopy> From<&'a DeviceSlice<T>> for DeviceView<'a, T> {
        fn from(s: &'a DeviceSlice<T>) -> Self {
            // SAFETY: a cust slice of `len` elements of T, borrowed for 'a.
            unsafe { Self::from_raw_parts(s.as_device_ptr().as_raw(), s.len()) }
        }
    }

    impl<'a, T: DeviceCopy> From<&'a DeviceBuffer<T>> for DeviceView<'a, T> {
        fn from(b: &'a DeviceBuffer<T>) -> Self {
            let slice: &DeviceSlice<T> = b;
            slice.into()
        }
    }

    impl<'a, T: DeviceCopy> From<&'a mut DeviceSlice<T>> for DeviceViewMut<'a, T> {
        fn from(s: &'a mut DeviceSlice<T>) -> Self {
            // SAFETY: a cust slice of `len` elements of T, borrowed mutably for 'a.
            unsafe { Self::from_raw_parts(s.as_device_ptr().as_raw(), s.len()) }
        }
    }

    impl<'a, T: DeviceCopy> From<&'a mut DeviceBuffer<T>> for DeviceViewMut<'a, T> {
        fn from(b: &'a mut DeviceBuffer<T>) -> Self {
            let slice: &mut DeviceSlice<T> = b;
            slice.into()
        }
    }

    /// A cust stream as the stream of calls on `gpu` (`gpu.on(&stream)`); it is not destroyed
    /// when the returned `Stream` is dropped.
    ///
    /// # Safety
    /// `stream` was made in GPU `gpu`'s primary context (cust 0.3's `Context::new` retains it)
    /// and outlives the returned `Stream` and the work queued through it.
    pub unsafe fn cust_stream(gpu: &Gpu, stream: &cust::stream::Stream) -> Stream {
        // SAFETY: forwarded from this function's contract.
        unsafe { Stream::from_raw(gpu, stream.as_inner().cast()) }
    }
}

#[cfg(feature = "cudarc")]
mod with_cudarc {
    use crate::device::{Bound, DeviceView, DeviceViewMut};
    use crate::{Error, Gpu, Result, Stream};
    use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};

    /// cudarc's `stream` as the stream of calls on `gpu` (`gpu.on(&stream)`); it stays
    /// cudarc's (not destroyed here). Borrowing it keeps it alive for the wrapper's lifetime.
    ///
    /// # Errors
    /// [`Error::WrongContext`] when the stream belongs to another context than `gpu`'s primary
    /// context (another device, or a context made with `cuCtxCreate`).
    pub fn cudarc_stream<'s>(gpu: &Gpu, stream: &'s CudaStream) -> Result<BorrowedStream<'s>> {
        same_context(
            gpu.context_raw(),
            stream,
            "a cudarc stream of another context than the Gpu's",
        )?;
        // SAFETY: the stream lives in this Gpu's context (checked) and is borrowed for 's.
        let wrapped = unsafe { Stream::from_raw(gpu, stream.cu_stream().cast()) };
        Ok(BorrowedStream {
            stream: wrapped,
            cudarc: stream,
        })
    }

    /// [`Error::WrongContext`] unless `stream` belongs to `context`.
    fn same_context(
        context: crate::runtime::sys::CUcontext,
        stream: &CudaStream,
        what: &'static str,
    ) -> Result<()> {
        if std::ptr::eq(stream.context().cu_ctx().cast::<()>(), context.cast::<()>()) {
            Ok(())
        } else {
            Err(Error::WrongContext(what))
        }
    }

    /// A cudarc stream borrowed as the library's [`Stream`] (`Deref`): the stream of the calls
    /// that read or write cudarc slices through [`CudarcInput`] / [`CudarcOutput`].
    pub struct BorrowedStream<'s> {
        stream: Stream,
        cudarc: &'s CudaStream,
    }

    impl std::ops::Deref for BorrowedStream<'_> {
        type Target = Stream;
        fn deref(&self) -> &Stream {
            &self.stream
        }
    }

    impl BorrowedStream<'_> {
        /// The bound of a slice borrowed for this stream: its context and this stream.
        fn bound(&self) -> Bound {
            Bound {
                context: self.stream.context_raw() as usize,
                stream: self.stream.as_raw() as usize,
            }
        }
    }

    /// A cudarc slice or view read by one call on `stream`: made before the call (the stream
    /// then waits for the slice's last write), converted into the call's input (`&input`),
    /// dropped after it (recording the read for cudarc's later writes). A call on any other
    /// stream than `stream` refuses it, so the call is always ordered after the slice's writes.
    pub struct CudarcInput<'a, T> {
        address: u64,
        len: usize,
        bound: Bound,
        _sync: SyncOnDrop<'a>,
        _element: std::marker::PhantomData<&'a [T]>,
    }

    impl<'a, T> CudarcInput<'a, T> {
        /// Borrow `slice` (`CudaSlice<T>`, `CudaView<T>`, ...) for a call queued on `stream`
        /// (the [`BorrowedStream`] the call's `OnStream` names: `gpu.on(&stream)`).
        ///
        /// # Errors
        /// [`Error::WrongContext`] for a slice of another context than the stream's.
        pub fn new(slice: &'a impl DevicePtr<T>, stream: &'a BorrowedStream<'_>) -> Result<Self> {
            same_context(
                stream.context_raw(),
                slice.stream(),
                "a cudarc slice of another context",
            )?;
            let len = slice.len();
            let (address, sync) = slice.device_ptr(stream.cudarc);
            Ok(Self {
                address,
                len,
                bound: stream.bound(),
                _sync: sync,
                _element: std::marker::PhantomData,
            })
        }
    }

    impl<'a, T> From<&'a CudarcInput<'_, T>> for DeviceView<'a, T> {
        fn from(input: &'a CudarcInput<'_, T>) -> Self {
            // SAFETY: cudarc's live allocation of `len` T, borrowed (and its read pending) for
            // as long as the `CudarcInput`; the calls check they run on its stream.
            unsafe { Self::from_raw_parts(input.address, input.len) }.bound_to(input.bound)
        }
    }

    /// A cudarc slice written by one call on `stream`, as [`CudarcInput`] for writing.
    pub struct CudarcOutput<'a, T> {
        address: u64,
        len: usize,
        bound: Bound,
        _sync: SyncOnDrop<'a>,
        _element: std::marker::PhantomData<&'a mut [T]>,
    }

    impl<'a, T> CudarcOutput<'a, T> {
        /// Borrow `slice` (`CudaSlice<T>`, `CudaViewMut<T>`) mutably for a call queued on
        /// `stream` (the stream waits for its last read and write).
        ///
        /// # Errors
        /// [`Error::WrongContext`] for a slice of another context than the stream's.
        pub fn new(slice: &'a mut impl DevicePtrMut<T>, stream: &'a BorrowedStream<'_>) -> Result<Self> {
            same_context(
                stream.context_raw(),
                slice.stream(),
                "a cudarc slice of another context",
            )?;
            let len = slice.len();
            let (address, sync) = slice.device_ptr_mut(stream.cudarc);
            Ok(Self {
                address,
                len,
                bound: stream.bound(),
                _sync: sync,
                _element: std::marker::PhantomData,
            })
        }
    }

    impl<'a, T> From<&'a mut CudarcOutput<'_, T>> for DeviceViewMut<'a, T> {
        fn from(output: &'a mut CudarcOutput<'_, T>) -> Self {
            // SAFETY: cudarc's live allocation of `len` T, borrowed mutably for as long as the
            // `CudarcOutput`; the calls check they run on its stream.
            unsafe { Self::from_raw_parts(output.address, output.len) }.bound_to(output.bound)
        }
    }
}
