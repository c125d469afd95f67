//! Element types and operators (generated from `gpu_primitives_abi::table`), device arrays of
//! elements, and views of any device memory as elements.

use crate::{CallOn, DeviceBuffer, Error, Gpu, Result, Stream};
use gpu_primitives_runtime::DeviceCopy;
use std::marker::PhantomData;
use std::ops::{Range, RangeTo};

mod sealed {
    pub trait Sealed {}
}

/// An element type of the device-wide algorithms: one row of `gpu_primitives_abi::table`
/// (`f32`, `f64`, `i32`, `u32`, `i64`, `u64`, `half::f16`, `half::bf16`); no other (sealed).
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// How it is stored on the device (`u16` bits for f16 / bf16).
    type Raw: DeviceCopy + bytemuck::Pod + Default + PartialEq + std::fmt::Debug;
    /// What it is combined and returned in (`f32` for f16 / bf16, else itself).
    type Acc: Element<Raw = Self::Acc> + Accumulator + DeviceCopy + bytemuck::Pod + Default + std::fmt::Debug;
    /// Kernel-name part: "f32", "f16", ...
    const NAME: &'static str;
    /// Items per thread of the scan kernels (a tile is the scan policy's `block_threads *
    /// SCAN_ITEMS` elements).
    const SCAN_ITEMS: u32;
    /// Elements per 16-byte load of the reduce kernels.
    const VECTOR: u32;
    /// The values as the device stores them.
    fn as_raw(values: &[Self]) -> &[Self::Raw];
    /// Values as the device stored them, as this type.
    fn from_raw(values: &[Self::Raw]) -> &[Self];
    /// The value as its accumulator (exact: halves widen to f32 without rounding).
    fn to_acc(self) -> Self::Acc;
}

/// What the device-wide algorithms combine in (`f32`, `f64`, `i32`, `u32`, `i64`, `u64`), with the
/// arithmetic the kernels use: the CPU references ([`reference`](crate::reference)) compute with it.
pub trait Accumulator: Copy + PartialOrd + sealed::Sealed {
    /// 0.
    const ZERO: Self;
    /// The identity of [`Min`]: `+inf`, or the largest integer.
    const HIGHEST: Self;
    /// The identity of [`Max`]: `-inf`, or the smallest integer.
    const LOWEST: Self;
    /// `a + b`, wrapping for integers.
    fn add(self, other: Self) -> Self;
    /// `a * b`, wrapping for integers.
    fn mul(self, other: Self) -> Self;
    /// Whether it is NaN (never, for integers).
    fn is_nan(self) -> bool;
    /// Whether its sign bit is set (`-0.0` included; never, for unsigned integers; for signed
    /// integers, whether it is negative).
    fn sign_bit(self) -> bool;
    /// The smaller; NaN if either is NaN; `-0.0` below `+0.0` (IEEE 754-2019 `minimum`, as the
    /// kernels' `Min` in f32; their f64 `Min` may give either zero, which compare equal).
    fn min_nan(self, other: Self) -> Self {
        if self.is_nan() || other.is_nan() {
            if self.is_nan() { self } else { other }
        } else if other < self || (other == self && other.sign_bit()) {
            other
        } else {
            self
        }
    }
    /// The larger; NaN if either is NaN; `-0.0` below `+0.0` (IEEE 754-2019 `maximum`, as the
    /// kernels' `Max` in f32; their f64 `Max` may give either zero, which compare equal).
    fn max_nan(self, other: Self) -> Self {
        if self.is_nan() || other.is_nan() {
            if self.is_nan() { self } else { other }
        } else if other > self || (other == self && self.sign_bit()) {
            other
        } else {
            self
        }
    }
}

macro_rules! int_accumulator {
    ($($t:ty),*) => {$(
        impl Accumulator for $t {
            const ZERO: Self = 0;
            const HIGHEST: Self = <$t>::MAX;
            const LOWEST: Self = <$t>::MIN;
            fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
            fn is_nan(self) -> bool { false }
            #[allow(unused_comparisons)]
            fn sign_bit(self) -> bool { self < 0 }
        }
    )*};
}
macro_rules! float_accumulator {
    ($($t:ty),*) => {$(
        impl Accumulator for $t {
            const ZERO: Self = 0.0;
            const HIGHEST: Self = <$t>::INFINITY;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            fn add(self, other: Self) -> Self { self + other }
            fn mul(self, other: Self) -> Self { self * other }
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            fn sign_bit(self) -> bool { <$t>::is_sign_negative(self) }
        }
    )*};
}
int_accumulator!(i32, u32, i64, u64);
float_accumulator!(f32, f64);

/// An element as its accumulator, per table row (halves widen with `half`).
macro_rules! to_acc {
    (f16, $v:expr) => {
        $v.to_f32()
    };
    (bf16, $v:expr) => {
        $v.to_f32()
    };
    ($name:ident, $v:expr) => {
        $v
    };
}

/// The host type of a row of `gpu_primitives_abi::element_table!` by its name: `f16` is
/// `half::f16` here, `bf16` `half::bf16`, the others their own names. For code generated from
/// the table outside this crate (the CLI's dispatch from a type's name to the type).
///
/// ```
/// let x: gpu_primitives::host_type!(f16) = half::f16::ONE;
/// let y: gpu_primitives::host_type!(u64) = 7;
/// # let _ = (x, y);
/// ```
#[macro_export]
macro_rules! host_type {
    (f16) => {
        $crate::half::f16
    };
    (bf16) => {
        $crate::half::bf16
    };
    ($name:ident) => {
        $name
    };
}

macro_rules! elements {
    ([] $($name:ident => $device:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
        $(
            impl sealed::Sealed for crate::host_type!($name) {}
            impl Element for crate::host_type!($name) {
                type Raw = $stored;
                type Acc = $acc;
                const NAME: &'static str = stringify!($name);
                const SCAN_ITEMS: u32 = $items;
                const VECTOR: u32 = $vec;
                fn as_raw(values: &[Self]) -> &[Self::Raw] {
                    bytemuck::cast_slice(values)
                }
                fn from_raw(values: &[Self::Raw]) -> &[Self] {
                    bytemuck::cast_slice(values)
                }
                fn to_acc(self) -> $acc {
                    to_acc!($name, self)
                }
            }
        )*
        /// The name of every element type, in table order (for the CLI and the benchmark).
        pub const ELEMENT_NAMES: &[&str] = &[$(stringify!($name)),*];

    };
}
gpu_primitives_abi::element_table!(elements);

/// An associative, commutative operator of the device-wide algorithms, for every [`Element`]
/// (one row of `gpu_primitives_abi::table`'s operator table), with its arithmetic on the host
/// (what the kernels compute, for the CPU references).
pub trait Operator: Copy + Default + Send + Sync + 'static + sealed::Sealed {
    /// Kernel-name part: "sum", "min", "max".
    const NAME: &'static str;
    /// The identity: `combine(identity, x) == x`.
    fn identity<A: Accumulator>() -> A;
    /// `a ⊕ b`.
    fn combine<A: Accumulator>(a: A, b: A) -> A;
}

/// The host arithmetic of each operator of the table (the kernels' is in crates/kernels `op`).
trait HostArithmetic {
    fn identity<A: Accumulator>() -> A;
    fn combine<A: Accumulator>(a: A, b: A) -> A;
}
impl HostArithmetic for Sum {
    fn identity<A: Accumulator>() -> A {
        A::ZERO
    }
    fn combine<A: Accumulator>(a: A, b: A) -> A {
        a.add(b)
    }
}
impl HostArithmetic for Min {
    fn identity<A: Accumulator>() -> A {
        A::HIGHEST
    }
    fn combine<A: Accumulator>(a: A, b: A) -> A {
        a.min_nan(b)
    }
}
impl HostArithmetic for Max {
    fn identity<A: Accumulator>() -> A {
        A::LOWEST
    }
    fn combine<A: Accumulator>(a: A, b: A) -> A {
        a.max_nan(b)
    }
}

macro_rules! operators {
    ([] $($name:ident => $ty:ident;)*) => {
        $(
            impl sealed::Sealed for $ty {}
            impl Operator for $ty {
                const NAME: &'static str = stringify!($name);
                fn identity<A: Accumulator>() -> A {
                    <$ty as HostArithmetic>::identity()
                }
                fn combine<A: Accumulator>(a: A, b: A) -> A {
                    <$ty as HostArithmetic>::combine(a, b)
                }
            }
        )*
        /// The name of every operator, in table order (for the CLI and the benchmark).
        pub const OPERATOR_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

/// `a + b`; wrapping for integers, IEEE for floats.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;
/// `min(a, b)`; a NaN operand gives NaN.
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;
/// `max(a, b)`; a NaN operand gives NaN.
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;

gpu_primitives_abi::operator_table!(operators);

/// An associative operator the device-wide scans take for elements `T`: every [`Operator`], and
/// the scan-only operators of the table ([`Affine`] for `u32` and `u64`). The scans never reorder
/// operands, so the operator need not be commutative; a combination with no kernel (e.g.
/// `Affine` over f32) does not compile.
pub trait ScanOperator<T: Element>: Copy + Default {
    /// Kernel-name part.
    const NAME: &'static str;
}

impl<T: Element, O: Operator> ScanOperator<T> for O {
    const NAME: &'static str = O::NAME;
}

macro_rules! scan_operators {
    ([] $($name:ident => $ty:ident: $($element:ident),*;)*) => {
        $($(
            impl ScanOperator<$element> for $ty {
                const NAME: &'static str = stringify!($name);
            }
        )*)*
    };
}
gpu_primitives_abi::scan_operator_table!(scan_operators);

/// Composition of affine maps `x -> a * x + b` in wrapping arithmetic (kernels `op::Affine`),
/// a non-commutative scan operator. Each element packs one map: in a `u32`, `a` is the high 16
/// bits and `b` the low 16 (arithmetic mod 2^16); in a `u64`, 32 bits each (mod 2^32).
/// `combine(f, g)` = "f, then g" = `(g.a * f.a, g.a * f.b + g.b)`; identity `(1, 0)`.
///
/// An inclusive scan of maps `(a[i], b[i])` gives at `i` the map `y[-1] -> y[i]` of the linear
/// recurrence `y[i] = a[i] * y[i - 1] + b[i]`.
///
/// ```
/// use gpu_primitives::device::Affine;
/// // x -> 2x + 1, then x -> 3x + 0: x -> 6x + 3.
/// assert_eq!(Affine::combine_u64(2 << 32 | 1, 3 << 32), 6 << 32 | 3);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Affine;

impl Affine {
    /// `combine(f, g)` over u32 words (16-bit halves), as the GPU computes it.
    pub fn combine_u32(f: u32, g: u32) -> u32 {
        let (fa, fb, ga, gb) = ((f >> 16) as u16, f as u16, (g >> 16) as u16, g as u16);
        (ga.wrapping_mul(fa) as u32) << 16 | ga.wrapping_mul(fb).wrapping_add(gb) as u32
    }

    /// `combine(f, g)` over u64 words (32-bit halves), as the GPU computes it.
    pub fn combine_u64(f: u64, g: u64) -> u64 {
        let (fa, fb, ga, gb) = ((f >> 32) as u32, f as u32, (g >> 32) as u32, g as u32);
        (ga.wrapping_mul(fa) as u64) << 32 | ga.wrapping_mul(fb).wrapping_add(gb) as u64
    }
}

/// A device array of `T` (stored as `T::Raw`), made from host memory.
pub struct DeviceVec<T: Element> {
    buffer: DeviceBuffer<T::Raw>,
    _element: PhantomData<T>,
}

impl<T: Element> DeviceVec<T> {
    /// Copy `values` to the device (on the `Gpu`'s stream, which is synchronised: the array is
    /// ready for work on any stream).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`](crate::Error::OutOfMemory) and other device errors.
    pub fn from_slice(gpu: &Gpu, values: &[T]) -> Result<Self> {
        Self::from_slice_on(gpu.stream(), values)
    }

    /// [`from_slice`](Self::from_slice) with the copy queued on `stream` (a call's: after the
    /// work queued there before), which is synchronised.
    pub(crate) fn from_slice_on(stream: &Stream, values: &[T]) -> Result<Self> {
        Ok(Self {
            buffer: stream.upload(T::as_raw(values))?,
            _element: PhantomData,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    /// The whole array, as a view.
    pub fn view(&self) -> DeviceView<'_, T> {
        // SAFETY: the buffer holds `len` elements of `T` (as `T::Raw`), borrowed for the view's
        // lifetime.
        unsafe { DeviceView::from_raw_parts(self.buffer.as_device_ptr().as_raw(), self.len()) }
            .bound_to(Bound::context(self.buffer.context_raw()))
    }

    /// The whole array, as a writable view.
    pub fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        let bound = Bound::context(self.buffer.context_raw());
        // SAFETY: as `view`, borrowed mutably.
        unsafe { DeviceViewMut::from_raw_parts(self.buffer.as_device_ptr().as_raw(), self.len()) }
            .bound_to(bound)
    }

    /// Elements `..range.end` (panics if past the end).
    pub fn prefix(&self, range: RangeTo<usize>) -> DeviceView<'_, T> {
        self.view().slice(0..range.end)
    }

    /// The underlying buffer of raw values.
    pub fn raw(&self) -> &DeviceBuffer<T::Raw> {
        &self.buffer
    }

    /// `len` elements of zero bits, cleared on the `Gpu`'s stream (an output to write into).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`](crate::Error::OutOfMemory) and other device errors.
    pub fn zeroed(gpu: &Gpu, len: usize) -> Result<Self> {
        Self::zeroed_on(gpu.stream(), len)
    }

    /// [`zeroed`](Self::zeroed), cleared on `stream` (a call's: so the clear is ordered before
    /// the call's work on it).
    pub(crate) fn zeroed_on(stream: &Stream, len: usize) -> Result<Self> {
        Ok(Self {
            buffer: stream.alloc_zeroed(len)?,
            _element: PhantomData,
        })
    }

    /// Copy back to the host (synchronises the `Gpu`'s stream).
    pub fn to_vec(&self, gpu: &Gpu) -> Result<Vec<T::Raw>> {
        self.to_vec_on(gpu.stream())
    }

    /// [`to_vec`](Self::to_vec) on `stream` (a call's: after the work queued there before),
    /// which is synchronised.
    pub(crate) fn to_vec_on(&self, stream: &Stream) -> Result<Vec<T::Raw>> {
        stream.download(&self.buffer)
    }
}

/// A borrowed run of device elements, read by an algorithm: a device address and a length in
/// elements. Made from a [`DeviceVec`] or a runtime [`DeviceBuffer`] of `T` (`From`), a cust
/// `DeviceBuffer` / `DeviceSlice` (feature `cust`, [`crate::interop`]), a cudarc slice or view
/// (feature `cudarc`, [`crate::interop`]), a sub-range ([`DeviceView::slice`]), or a raw device
/// address and length ([`DeviceView::from_raw_parts`]: memory from anywhere else).
///
/// A view of this crate's buffers knows their context, and a view of a cudarc slice the stream
/// it was borrowed for: a call on another GPU's stream, or (for the cudarc slice) on another
/// stream, is refused before anything is queued ([`Error::WrongContext`](crate::Error::WrongContext),
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument)).
#[derive(Clone, Copy)]
pub struct DeviceView<'a, T> {
    pub(crate) address: u64,
    pub(crate) len: usize,
    pub(crate) bound: Bound,
    _borrow: PhantomData<&'a [T]>,
}

/// A borrowed run of device elements an algorithm writes: as [`DeviceView`], borrowed mutably.
pub struct DeviceViewMut<'a, T> {
    pub(crate) address: u64,
    pub(crate) len: usize,
    pub(crate) bound: Bound,
    _borrow: PhantomData<&'a mut [T]>,
}

/// Where a view's memory may be used: the context it belongs to and the one stream it must be
/// used on, where known (0: not known, the caller's unsafe constructor vouched for it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bound {
    /// `CUcontext` of the memory, as an address.
    pub(crate) context: usize,
    /// `CUstream` it was borrowed for (a cudarc slice's ordering is with that stream only).
    pub(crate) stream: usize,
}

impl Bound {
    /// Bound to `context` (a driver handle).
    pub(crate) fn context(context: crate::runtime::sys::CUcontext) -> Self {
        Self {
            context: context as usize,
            stream: 0,
        }
    }

    /// Whether a call on `stream` may use the memory: [`Error::WrongContext`] for another
    /// context's stream, [`Error::InvalidArgument`] for a view borrowed for another stream.
    pub(crate) fn check(self, stream: &Stream, what: &'static str) -> Result<()> {
        self.check_raw(stream.context_raw() as usize, stream.as_raw() as usize, what)
    }

    /// [`check`](Self::check) against a stream given by its raw handles: `context` (the
    /// stream's `CUcontext`) and `stream` (its `CUstream`), as addresses.
    fn check_raw(self, context: usize, stream: usize, what: &'static str) -> Result<()> {
        if self.context != 0 && self.context != context {
            return Err(crate::Error::WrongContext(what));
        }
        if self.stream != 0 && self.stream != stream {
            return Err(crate::Error::InvalidArgument(format!(
                "{what}: memory borrowed for one stream (a cudarc slice, ordered with that stream only) used in a call on another; make the call on the stream it was borrowed for"
            )));
        }
        Ok(())
    }
}

/// [`Bound::check`] of each of a call's views against its stream, before anything is queued.
pub(crate) fn check_bound(on: &CallOn<'_>, what: &'static str, views: &[Bound]) -> Result<()> {
    views.iter().try_for_each(|bound| bound.check(on.stream(), what))
}

/// The outputs' room of a call that writes up to `most` items (kept items, runs) into each of
/// `outputs` (`(what, len)`) and their number into `count` (`(what, len)`, one `u64`): an
/// empty count, else the first output shorter than `most`, as [`Error::LengthMismatch`] named
/// by its `what`. CUB asks the same: every item may be kept, or start a run.
pub(crate) fn check_room(
    count: (&'static str, usize),
    outputs: &[(&'static str, usize)],
    most: usize,
) -> Result<()> {
    let (what, found) = count;
    if found == 0 {
        return Err(Error::LengthMismatch {
            what,
            expected: 1,
            found,
        });
    }
    match outputs.iter().find(|&&(_, len)| len < most) {
        Some(&(what, found)) => Err(Error::LengthMismatch {
            what,
            expected: most,
            found,
        }),
        None => Ok(()),
    }
}

impl<'a, T> DeviceView<'a, T> {
    /// A view of `len` elements of `T` (as the device stores them: `u16` bits for halves) at
    /// device address `address`.
    ///
    /// # Safety
    /// `address` is a device address in the context the algorithms run in, aligned for `T`
    /// (16-byte alignment makes the reduce's vector loads apply to the whole range), holding
    /// `len` initialised elements that stay allocated and are not written by anything else for
    /// `'a` (or until the work queued with the view has finished).
    pub unsafe fn from_raw_parts(address: u64, len: usize) -> Self {
        Self {
            address,
            len,
            bound: Bound::default(),
            _borrow: PhantomData,
        }
    }

    /// The same view, known to belong to `bound` (checked by the calls).
    pub(crate) fn bound_to(mut self, bound: Bound) -> Self {
        self.bound = bound;
        self
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
    pub fn address(&self) -> u64 {
        self.address
    }

    /// Whether work queued on `on` (`&gpu`, `gpu.on(&stream)?`, a call) may use the view's memory, as the algorithms check before
    /// they queue anything (for callers that hand the address to other code, such as NCCL).
    ///
    /// # Errors
    /// [`Error::WrongContext`](crate::Error::WrongContext) for memory of another GPU's context,
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a cudarc view borrowed for
    /// another stream; `what` names the call in the error.
    pub fn check_usable_on<'g>(&self, on: impl Into<CallOn<'g>>, what: &'static str) -> Result<()> {
        self.bound.check(on.into().stream(), what)
    }

    /// Elements `range` of the view (panics if past the end).
    pub fn slice(&self, range: Range<usize>) -> Self {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "slice {range:?} of a view of {} elements",
            self.len
        );
        Self {
            address: self.address + (range.start * size_of::<T>()) as u64,
            len: range.len(),
            bound: self.bound,
            _borrow: PhantomData,
        }
    }
}

impl<'a, T> DeviceViewMut<'a, T> {
    /// A writable view of `len` elements at `address`.
    ///
    /// # Safety
    /// As [`DeviceView::from_raw_parts`], and nothing else reads or writes the range for `'a`.
    pub unsafe fn from_raw_parts(address: u64, len: usize) -> Self {
        Self {
            address,
            len,
            bound: Bound::default(),
            _borrow: PhantomData,
        }
    }

    /// The same view, known to belong to `bound` (checked by the calls).
    pub(crate) fn bound_to(mut self, bound: Bound) -> Self {
        self.bound = bound;
        self
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
    pub fn address(&self) -> u64 {
        self.address
    }

    /// As [`DeviceView::check_usable_on`].
    ///
    /// # Errors
    /// As [`DeviceView::check_usable_on`].
    pub fn check_usable_on<'g>(&self, on: impl Into<CallOn<'g>>, what: &'static str) -> Result<()> {
        self.bound.check(on.into().stream(), what)
    }

    /// Elements `range` of the view, borrowed from it (panics if past the end).
    pub fn slice(&mut self, range: Range<usize>) -> DeviceViewMut<'_, T> {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "slice {range:?} of a view of {} elements",
            self.len
        );
        DeviceViewMut {
            address: self.address + (range.start * size_of::<T>()) as u64,
            len: range.len(),
            bound: self.bound,
            _borrow: PhantomData,
        }
    }
}

impl<'a, T: Element> From<&'a DeviceVec<T>> for DeviceView<'a, T> {
    fn from(v: &'a DeviceVec<T>) -> Self {
        v.view()
    }
}

impl<'a, T: Element> From<&'a mut DeviceVec<T>> for DeviceViewMut<'a, T> {
    fn from(v: &'a mut DeviceVec<T>) -> Self {
        v.view_mut()
    }
}

impl<'a, T: DeviceCopy> From<&'a DeviceBuffer<T>> for DeviceView<'a, T> {
    fn from(b: &'a DeviceBuffer<T>) -> Self {
        // SAFETY: a live buffer of `len` elements of T, borrowed for 'a.
        unsafe { Self::from_raw_parts(b.as_device_ptr().as_raw(), b.len()) }
            .bound_to(Bound::context(b.context_raw()))
    }
}

impl<'a, T: DeviceCopy> From<&'a mut DeviceBuffer<T>> for DeviceViewMut<'a, T> {
    fn from(b: &'a mut DeviceBuffer<T>) -> Self {
        let bound = Bound::context(b.context_raw());
        // SAFETY: a live buffer of `len` elements of T, borrowed mutably for 'a.
        unsafe { Self::from_raw_parts(b.as_device_ptr().as_raw(), b.len()) }.bound_to(bound)
    }
}

impl<'a, T> From<&'a DeviceViewMut<'_, T>> for DeviceView<'a, T> {
    fn from(v: &'a DeviceViewMut<'_, T>) -> Self {
        // SAFETY: the same range, borrowed shared for 'a.
        unsafe { Self::from_raw_parts(v.address, v.len) }.bound_to(v.bound)
    }
}

#[cfg(test)]
mod tests {
    use super::{Bound, DeviceView, DeviceViewMut, check_room};
    use crate::Error;

    #[test]
    fn room_needs_a_count_then_every_output_as_long_as_the_most_items() {
        let outputs = [("keys", 10), ("values", 9)];
        assert!(check_room(("count", 1), &outputs, 9).is_ok());
        let err = check_room(("count", 0), &outputs, 9).unwrap_err();
        assert!(matches!(
            err,
            Error::LengthMismatch {
                what: "count",
                expected: 1,
                found: 0
            }
        ));
        let err = check_room(("count", 1), &outputs, 10).unwrap_err();
        assert!(matches!(
            err,
            Error::LengthMismatch {
                what: "values",
                expected: 10,
                found: 9
            }
        ));
        // No item: any output will do, but the count is still written.
        assert!(check_room(("count", 1), &[("keys", 0)], 0).is_ok());
    }

    /// The raw handles of a call's stream: context 0x100, stream 0x200.
    const CONTEXT: usize = 0x100;
    const STREAM: usize = 0x200;

    fn check(bound: Bound) -> crate::Result<()> {
        bound.check_raw(CONTEXT, STREAM, "test view")
    }

    #[test]
    fn memory_of_the_calls_context_passes() {
        assert!(
            check(Bound {
                context: CONTEXT,
                stream: 0
            })
            .is_ok()
        );
        // A cudarc slice borrowed for the call's own stream.
        assert!(
            check(Bound {
                context: CONTEXT,
                stream: STREAM
            })
            .is_ok()
        );
    }

    #[test]
    fn memory_of_another_context_is_wrong_context() {
        let other = Bound {
            context: 0x999,
            stream: 0,
        };
        assert!(matches!(check(other), Err(Error::WrongContext("test view"))));
        // Another context wins over the stream: the memory is not this GPU's at all.
        let other_stream = Bound {
            context: 0x999,
            stream: 0x998,
        };
        assert!(matches!(check(other_stream), Err(Error::WrongContext(_))));
    }

    #[test]
    fn unknown_memory_passes() {
        // `from_raw_parts`: the caller's unsafe contract vouches for it.
        assert!(check(Bound::default()).is_ok());
        // A stream known, the context not: only the stream is checked.
        assert!(
            check(Bound {
                context: 0,
                stream: STREAM
            })
            .is_ok()
        );
    }

    #[test]
    fn a_stream_bound_view_on_another_stream_is_invalid_argument() {
        let borrowed = Bound {
            context: CONTEXT,
            stream: 0x300,
        };
        match check(borrowed) {
            Err(Error::InvalidArgument(message)) => assert!(message.starts_with("test view:"), "{message}"),
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn slices_and_shared_views_keep_the_bound() {
        let bound = Bound {
            context: CONTEXT,
            stream: STREAM,
        };
        // SAFETY: the views are never passed to a call: only their fields are read.
        let view = unsafe { DeviceView::<u32>::from_raw_parts(0x1000, 8) }.bound_to(bound);
        assert_eq!(view.slice(2..5).bound, bound);
        assert_eq!(view.slice(2..5).address(), 0x1008);
        // SAFETY: as above.
        let mut view_mut = unsafe { DeviceViewMut::<u32>::from_raw_parts(0x2000, 8) }.bound_to(bound);
        assert_eq!(view_mut.slice(1..3).bound, bound);
        assert_eq!(DeviceView::from(&view_mut).bound, bound);
        let sub = view_mut.slice(4..8);
        assert_eq!(DeviceView::from(&sub).bound, bound);
        // Views made from raw parts know nothing.
        // SAFETY: as above.
        let raw = unsafe { DeviceView::<u32>::from_raw_parts(0x3000, 1) };
        assert_eq!(raw.bound, Bound::default());
    }
}
