//! Element types, operators, and device arrays of elements.

use crate::{DeviceBuffer, Gpu, Result};
use gpu_host::DeviceCopy;
use std::marker::PhantomData;
use std::ops::RangeTo;

mod sealed {
    pub trait Sealed {}
}

/// An element type of the device-wide algorithms. Implemented for `f32`, `f64`, `i32`, `u32`,
/// `i64`, `u64`, `half::f16` and `half::bf16`; no other (sealed).
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// How it is stored on the device (`u16` bits for f16 / bf16).
    type Raw: DeviceCopy + bytemuck::Pod + Default + PartialEq + std::fmt::Debug;
    /// What it is combined and returned in (`f32` for f16 / bf16, else itself).
    type Acc: DeviceCopy + bytemuck::Pod + Default + PartialEq + std::fmt::Debug + Send + Sync;
    /// Kernel-name part: "f32", "f16", ...
    const NAME: &'static str;
    /// Kernel-name part of `Acc` (what the second reduce pass runs on).
    const ACC_NAME: &'static str;
    /// Items per thread of the scan kernels (a tile is `SCAN_BLOCK * SCAN_ITEMS` elements).
    const SCAN_ITEMS: u32;
    /// Elements per 16-byte load of the reduce kernels.
    const VECTOR: u32;
    /// The values as the device stores them.
    fn as_raw(values: &[Self]) -> &[Self::Raw];
}

macro_rules! element {
    ($t:ty, $raw:ty, $acc:ty, $name:literal, $acc_name:literal, $items:literal, $vec:literal) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            type Raw = $raw;
            type Acc = $acc;
            const NAME: &'static str = $name;
            const ACC_NAME: &'static str = $acc_name;
            const SCAN_ITEMS: u32 = $items;
            const VECTOR: u32 = $vec;
            fn as_raw(values: &[Self]) -> &[Self::Raw] {
                bytemuck::cast_slice(values)
            }
        }
    };
}
element!(f32, f32, f32, "f32", "f32", 32, 4);
element!(f64, f64, f64, "f64", "f64", 8, 2);
element!(i32, i32, i32, "i32", "i32", 32, 4);
element!(u32, u32, u32, "u32", "u32", 32, 4);
element!(i64, i64, i64, "i64", "i64", 16, 2);
element!(u64, u64, u64, "u64", "u64", 16, 2);
element!(half::f16, u16, f32, "f16", "f32", 64, 8);
element!(half::bf16, u16, f32, "bf16", "f32", 32, 8);

/// An associative, commutative operator of the device-wide algorithms, for every [`Element`].
pub trait Operator: Copy + Default + sealed::Sealed {
    /// Kernel-name part: "sum", "min", "max".
    const NAME: &'static str;
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

impl sealed::Sealed for Sum {}
impl sealed::Sealed for Min {}
impl sealed::Sealed for Max {}
impl Operator for Sum {
    const NAME: &'static str = "sum";
}
impl Operator for Min {
    const NAME: &'static str = "min";
}
impl Operator for Max {
    const NAME: &'static str = "max";
}

/// An associative operator the device-wide scans take for elements `T`: every [`Operator`], and
/// [`Affine`] for `u32` and `u64`. The scans never reorder operands, so the operator need not be
/// commutative; a combination with no kernel (e.g. `Affine` over f32) does not compile.
pub trait ScanOperator<T: Element>: Copy + Default {
    /// Kernel-name part.
    const NAME: &'static str;
}

impl<T: Element, O: Operator> ScanOperator<T> for O {
    const NAME: &'static str = O::NAME;
}

/// Composition of affine maps `x -> a * x + b` in wrapping arithmetic (kernels-gpu `op::Affine`),
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

impl ScanOperator<u32> for Affine {
    const NAME: &'static str = "affine";
}
impl ScanOperator<u64> for Affine {
    const NAME: &'static str = "affine";
}

/// A device array of `T` (stored as `T::Raw`).
pub struct DeviceVec<T: Element> {
    buffer: DeviceBuffer<T::Raw>,
    _element: PhantomData<T>,
}

impl<T: Element> DeviceVec<T> {
    /// Copy `values` to the device.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`](crate::Error::OutOfMemory) and other device errors.
    pub fn from_slice(gpu: &Gpu, values: &[T]) -> Result<Self> {
        Ok(Self {
            buffer: gpu.upload(T::as_raw(values))?,
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
        DeviceView {
            address: self.buffer.as_device_ptr().as_raw(),
            len: self.len(),
            _borrow: PhantomData,
        }
    }

    /// Elements `..range.end` (panics if past the end).
    pub fn prefix(&self, range: RangeTo<usize>) -> DeviceView<'_, T> {
        assert!(
            range.end <= self.len(),
            "prefix ..{} of a DeviceVec of {}",
            range.end,
            self.len()
        );
        DeviceView {
            len: range.end,
            ..self.view()
        }
    }

    /// The underlying buffer of raw values.
    pub fn raw(&self) -> &DeviceBuffer<T::Raw> {
        &self.buffer
    }

    /// Copy back to the host (synchronises the stream).
    pub fn to_vec(&self, gpu: &Gpu) -> Result<Vec<T::Raw>> {
        gpu.download(&self.buffer)
    }
}

/// A borrowed run of device elements: a device address and a length in elements.
#[derive(Clone, Copy)]
pub struct DeviceView<'a, T: Element> {
    pub(crate) address: u64,
    pub(crate) len: usize,
    _borrow: PhantomData<&'a DeviceVec<T>>,
}

impl<T: Element> DeviceView<'_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<'a, T: Element> From<&'a DeviceVec<T>> for DeviceView<'a, T> {
    fn from(v: &'a DeviceVec<T>) -> Self {
        v.view()
    }
}
