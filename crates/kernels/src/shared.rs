//! Shared memory: on-chip memory shared by the threads of one block, alive for the block's
//! lifetime.
//!
//! Rust has no address-space qualifiers, so shared memory is reached through a
//! [`SharedArray<T>`] handle: a 32-bit address in the shared window plus a length in elements.
//! Its accesses compile to `ld.shared` / `st.shared` (checked in the PTX by the test suite).
//!
//! - Static arrays: [`shared_array!`](crate::shared_array), sized at compile time, one per name.
//! - Dynamic shared memory: [`dynamic_shared`], sized by the launch's `shared_mem_bytes`.
//!
//! # Safety (every access)
//! - Block scope: the memory is private to the block; its contents are undefined at block start.
//! - Write before read: read only elements this block wrote.
//! - Synchronise: a value written by one thread is read by another only after a
//!   [`block_barrier`](crate::sync::block_barrier) (or a warp sync, within one warp).
//! - Indices out of bounds trap (the launch fails); they never touch other memory.

use core::arch::asm;
use core::marker::PhantomData;

core::arch::global_asm!(".extern .shared .align 16 .b8 DYNAMIC_SHARED_MEMORY[];");

/// A value that can be stored in shared memory: `u16` and the halves `F16` / `Bf16` (`.b16`),
/// `f32`, `i32`, `u32` (`.b32`), `f64`, `i64`, `u64` (`.b64`).
pub trait SharedValue: Copy {
    /// Load from shared-window address `addr`.
    ///
    /// # Safety
    /// `addr` is a valid, aligned shared-memory address of this block.
    unsafe fn load_shared(addr: u32) -> Self;
    /// Store to shared-window address `addr`.
    ///
    /// # Safety
    /// As [`SharedValue::load_shared`].
    unsafe fn store_shared(addr: u32, value: Self);
}

macro_rules! shared_value {
    ($ty:ty, $width:literal, $class:ident) => {
        impl SharedValue for $ty {
            #[inline(always)]
            unsafe fn load_shared(addr: u32) -> Self {
                let v: $ty;
                // SAFETY: the caller guarantees `addr` is valid and aligned.
                unsafe {
                    asm!(concat!("ld.shared.", $width, " {v}, [{a}];"), v = out($class) v,
                         a = in(reg32) addr, options(nostack, readonly))
                };
                v
            }
            #[inline(always)]
            unsafe fn store_shared(addr: u32, value: Self) {
                // SAFETY: the caller guarantees `addr` is valid and aligned.
                unsafe {
                    asm!(concat!("st.shared.", $width, " [{a}], {v};"), v = in($class) value,
                         a = in(reg32) addr, options(nostack))
                };
            }
        }
    };
}
shared_value!(f32, "f32", reg32);
shared_value!(u32, "u32", reg32);
shared_value!(i32, "s32", reg32);
shared_value!(f64, "f64", reg64);
shared_value!(u64, "u64", reg64);
shared_value!(i64, "s64", reg64);
shared_value!(u16, "u16", reg16);

macro_rules! shared_bits_16 {
    ($($ty:ident),*) => {$(
        impl SharedValue for gpu_primitives_abi::table::$ty {
            #[inline(always)]
            unsafe fn load_shared(addr: u32) -> Self {
                // SAFETY: forwarded; the type is its u16 bits.
                Self(unsafe { u16::load_shared(addr) })
            }
            #[inline(always)]
            unsafe fn store_shared(addr: u32, value: Self) {
                // SAFETY: forwarded; the type is its u16 bits.
                unsafe { u16::store_shared(addr, value.0) }
            }
        }
    )*};
}
shared_bits_16!(F16, Bf16);

/// `len` elements of `T` in shared memory, starting at a shared-window address.
///
/// `Copy`, so every thread of the block holds its own handle to the same memory.
#[derive(Clone, Copy)]
pub struct SharedArray<T> {
    base: u32,
    len: u32,
    _type: PhantomData<T>,
}

impl<T: SharedValue> SharedArray<T> {
    /// A handle to `len` elements at shared-window address `base`.
    ///
    /// # Safety
    /// `base` is aligned for `T` and `base .. base + len * size_of::<T>()` is shared memory of
    /// this block that nothing else uses as another type at the same time.
    #[inline(always)]
    pub unsafe fn from_raw_parts(base: u32, len: u32) -> Self {
        Self {
            base,
            len,
            _type: PhantomData,
        }
    }

    /// Length in elements.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether it holds no element.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Shared-window address of element `i` (traps if `i >= len`).
    #[inline(always)]
    fn address(&self, i: u32) -> u32 {
        if i >= self.len {
            // SAFETY: `trap` has no preconditions; it ends the launch with an error.
            unsafe { core::arch::nvptx::trap() }
        }
        self.base + i * core::mem::size_of::<T>() as u32
    }

    /// Element `i`. Traps if `i >= len`.
    ///
    /// # Safety
    /// See the [module docs](self): the element was written, and a barrier separates that write by
    /// another thread from this read.
    #[inline(always)]
    pub unsafe fn read(&self, i: u32) -> T {
        // SAFETY: the address is in bounds (checked) and aligned; ordering is the caller's.
        unsafe { T::load_shared(self.address(i)) }
    }

    /// Store `value` as element `i`. Traps if `i >= len`.
    ///
    /// # Safety
    /// See the [module docs](self): no other thread accesses element `i` until a barrier.
    #[inline(always)]
    pub unsafe fn write(&self, i: u32, value: T) {
        // SAFETY: the address is in bounds (checked) and aligned; ordering is the caller's.
        unsafe { T::store_shared(self.address(i), value) }
    }

    /// Element `i`, without the bounds check of [`read`](Self::read): for hot loops whose
    /// indices are in bounds by construction.
    ///
    /// # Safety
    /// As [`read`](Self::read), and `i < len`.
    #[inline(always)]
    pub unsafe fn read_unchecked(&self, i: u32) -> T {
        // SAFETY: i < len (the caller's contract); aligned; ordering is the caller's.
        unsafe { T::load_shared(self.base + i * core::mem::size_of::<T>() as u32) }
    }

    /// Store `value` as element `i`, without the bounds check of [`write`](Self::write).
    ///
    /// # Safety
    /// As [`write`](Self::write), and `i < len`.
    #[inline(always)]
    pub unsafe fn write_unchecked(&self, i: u32, value: T) {
        // SAFETY: i < len (the caller's contract); aligned; ordering is the caller's.
        unsafe { T::store_shared(self.base + i * core::mem::size_of::<T>() as u32, value) }
    }

    /// The sub-array `start .. start + len` (traps if it does not fit).
    #[inline(always)]
    pub fn slice(&self, start: u32, len: u32) -> Self {
        if start > self.len || len > self.len - start {
            // SAFETY: `trap` has no preconditions.
            unsafe { core::arch::nvptx::trap() }
        }
        Self {
            base: self.base + start * core::mem::size_of::<T>() as u32,
            len,
            _type: PhantomData,
        }
    }
}

impl SharedArray<f32> {
    /// Element `i` of this array in block `rank` of this block's thread-block cluster
    /// (distributed shared memory, sm_90: [`read_f32_of_block`](crate::cluster::read_f32_of_block)).
    /// Traps if `i >= len`.
    ///
    /// # Safety
    /// As [`read_f32_of_block`](crate::cluster::read_f32_of_block): the array lies at the same
    /// place in every block of the cluster, `rank` is one of them, and it wrote element `i`
    /// before a cluster barrier this thread has passed.
    #[inline(always)]
    pub unsafe fn read_of_block(&self, rank: u32, i: u32) -> f32 {
        // SAFETY: in bounds (checked); the rest is the caller's contract.
        unsafe { crate::cluster::read_f32_of_block(self.address(i), rank) }
    }
}

impl SharedArray<u32> {
    /// The same bytes as `2 * len()` 16-bit halves: word `i`'s low half is half `2 i`, its
    /// high half `2 i + 1` (little-endian). A thread that counts in one half and a scan that
    /// adds whole words share the memory; the caller orders the accesses as for any array.
    #[inline(always)]
    pub fn as_halves(&self) -> SharedArray<u16> {
        SharedArray {
            base: self.base,
            len: 2 * self.len,
            _type: PhantomData,
        }
    }

    /// Words `i .. i + 4` in one 16-byte access (`ld.shared.v4.b32`), without a bounds check
    /// (for loops whose registers are tight: no length is kept).
    ///
    /// # Safety
    /// As [`read_unchecked`](Self::read_unchecked) for each word, and `i` a multiple of 4 (the
    /// array starts 16-byte aligned).
    #[inline(always)]
    pub unsafe fn read_vector_unchecked(&self, i: u32) -> [u32; 4] {
        let address = self.base + 4 * i;
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: 16 in-bounds, 16-byte-aligned bytes (the caller's); ordering is the caller's.
        unsafe {
            asm!("ld.shared.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];", a = out(reg32) a, b = out(reg32) b,
                 c = out(reg32) c, d = out(reg32) d, p = in(reg32) address, options(nostack, readonly))
        };
        [a, b, c, d]
    }

    /// Store `words` as words `i .. i + 4` in one 16-byte access (`st.shared.v4.b32`), without a
    /// bounds check.
    ///
    /// # Safety
    /// As [`write_unchecked`](Self::write_unchecked) for each word, and `i` a multiple of 4 (the
    /// array starts 16-byte aligned).
    #[inline(always)]
    pub unsafe fn write_vector_unchecked(&self, i: u32, [a, b, c, d]: [u32; 4]) {
        let address = self.base + 4 * i;
        // SAFETY: 16 in-bounds, 16-byte-aligned bytes (the caller's); ordering is the caller's.
        unsafe {
            asm!("st.shared.v4.b32 [{p}], {{{a}, {b}, {c}, {d}}};", p = in(reg32) address, a = in(reg32) a,
                 b = in(reg32) b, c = in(reg32) c, d = in(reg32) d, options(nostack))
        };
    }

    /// `element i += value`, atomically among the block's threads (`red.shared.add.u32`), without
    /// a bounds check: for counters that many threads bump at once (a privatized histogram).
    ///
    /// # Safety
    /// `i < len`; the element was initialised, and a barrier separates that from this add; reads
    /// of the result come after a barrier.
    #[inline(always)]
    pub unsafe fn atomic_add_unchecked(&self, i: u32, value: u32) {
        let addr = self.base + 4 * i;
        // SAFETY: i < len (the caller's contract): a 4-byte-aligned address of this array.
        unsafe {
            asm!("red.shared.add.u32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) value, options(nostack))
        };
    }
}

impl SharedArray<u32> {
    /// `element i += value` atomically among the block's threads (`atom.shared.add.u32`),
    /// returning the element's value before the add; no bounds check.
    ///
    /// # Safety
    /// As [`atomic_add_unchecked`](Self::atomic_add_unchecked).
    #[inline(always)]
    pub unsafe fn atomic_fetch_add_unchecked(&self, i: u32, value: u32) -> u32 {
        let addr = self.base + 4 * i;
        let old: u32;
        // SAFETY: i < len (the caller's contract): a 4-byte-aligned address of this array.
        unsafe {
            asm!("atom.shared.add.u32 {o}, [{a}], {v};", o = out(reg32) old, a = in(reg32) addr,
                 v = in(reg32) value, options(nostack))
        };
        old
    }
}

/// Bytes of dynamic shared memory of this launch (`%dynamic_smem_size`).
#[inline(always)]
pub fn dynamic_shared_bytes() -> u32 {
    let bytes: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {b}, %dynamic_smem_size;", b = out(reg32) bytes, options(nomem, nostack, pure)) };
    bytes
}

/// The launch's dynamic shared memory, from byte `offset_bytes` on, as an array of `T`; its length
/// is what fits. The host sets the size with the launch's `shared_mem_bytes`.
///
/// # Safety
/// `offset_bytes` is a multiple of `align_of::<T>()`; no other live handle views the same bytes
/// as another type.
#[inline(always)]
pub unsafe fn dynamic_shared<T: SharedValue>(offset_bytes: u32) -> SharedArray<T> {
    let base: u32;
    // SAFETY: takes the shared-window address of the dynamic shared memory; touches no memory.
    unsafe {
        asm!("mov.u32 {b}, DYNAMIC_SHARED_MEMORY;", b = out(reg32) base, options(nomem, nostack, pure))
    };
    let total = dynamic_shared_bytes();
    let len = total.saturating_sub(offset_bytes) / core::mem::size_of::<T>() as u32;
    // SAFETY: the range lies inside this launch's dynamic shared memory, aligned as the caller
    // guarantees.
    unsafe { SharedArray::from_raw_parts(base + offset_bytes, len) }
}

/// Declare a static shared-memory array and return its [`SharedArray`] handle.
///
/// `shared_array!(NAME: [T; LEN])`: `NAME` becomes a PTX symbol and must be unique in the crate;
/// `LEN` is a constant expression. Every block gets its own copy.
///
/// ```ignore
/// let tree = shared_array!(DOT_TREE: [f32; 256]);
/// // SAFETY: thread i writes element i only; read after a barrier.
/// unsafe { tree.write(thread_idx(), x) };
/// ```
#[macro_export]
macro_rules! shared_array {
    ($name:ident : [$ty:ty; $len:expr]) => {{
        // `global_asm!` is an item: declare the array in a module of its own (which sees the
        // caller's module, so `$ty` and `$len` may name its items).
        #[allow(non_snake_case)]
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            core::arch::global_asm!(
                concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
                bytes = const ($len) * core::mem::size_of::<$ty>(),
            );
        }
        let base: u32;
        // SAFETY: takes the address of the array declared just above; touches no memory.
        unsafe {
            core::arch::asm!(concat!("mov.u32 {b}, ", stringify!($name), ";"), b = out(reg32) base,
                             options(nomem, nostack, pure))
        };
        // SAFETY: `base` is the 16-byte-aligned start of `$len` elements declared above.
        unsafe { $crate::shared::SharedArray::<$ty>::from_raw_parts(base, ($len) as u32) }
    }};
}
