//! Atomic read-modify-write operations on global (or shared) memory, at device scope, and
//! acquire / release loads and stores for flags that other blocks poll.
//!
//! # Safety (every function)
//! `ptr` is a valid, aligned pointer to device memory that stays allocated for the call.

use core::arch::asm;

/// Atomic add (`atom.add`): `*ptr += value`, returning the old value. Floating-point atomics make
/// a sum's grouping depend on timing, so results can differ in the last bits between runs.
pub trait AtomicAdd: Copy {
    /// `*ptr += value` atomically; returns the previous value.
    ///
    /// # Safety
    /// See the [module docs](self).
    unsafe fn atomic_add(ptr: *mut Self, value: Self) -> Self;
}

/// Atomic minimum and maximum (`atom.min`, `atom.max`) for integers.
pub trait AtomicMinMax: Copy {
    /// `*ptr = min(*ptr, value)` atomically; returns the previous value.
    ///
    /// # Safety
    /// See the [module docs](self).
    unsafe fn atomic_min(ptr: *mut Self, value: Self) -> Self;
    /// `*ptr = max(*ptr, value)` atomically; returns the previous value.
    ///
    /// # Safety
    /// See the [module docs](self).
    unsafe fn atomic_max(ptr: *mut Self, value: Self) -> Self;
}

/// Compare-and-swap (`atom.cas`) and acquire / release accesses for 32- and 64-bit words.
pub trait AtomicWord: Copy {
    /// If `*ptr == expected`, store `new`. Returns the previous value either way.
    ///
    /// # Safety
    /// See the [module docs](self).
    unsafe fn atomic_cas(ptr: *mut Self, expected: Self, new: Self) -> Self;
    /// Load with acquire ordering at device scope (`ld.acquire.gpu`): later accesses of this
    /// thread are not moved before it.
    ///
    /// # Safety
    /// See the [module docs](self).
    unsafe fn load_acquire(ptr: *const Self) -> Self;
    /// Store with release ordering at device scope (`st.release.gpu`): earlier accesses of this
    /// thread are visible to a thread that acquires the stored value.
    ///
    /// # Safety
    /// See the [module docs](self).
    unsafe fn store_release(ptr: *mut Self, value: Self);
}

macro_rules! atomic_rmw {
    ($trait_fn:ident, $op:literal, $ty:ty, $class:ident) => {
        #[inline(always)]
        unsafe fn $trait_fn(ptr: *mut Self, value: Self) -> Self {
            let old: $ty;
            // SAFETY: the caller guarantees `ptr` is valid and aligned.
            unsafe {
                asm!(concat!("atom.", $op, " {o}, [{p}], {v};"), o = out($class) old,
                     p = in(reg64) ptr, v = in($class) value, options(nostack))
            };
            old
        }
    };
}

impl AtomicAdd for f32 {
    atomic_rmw!(atomic_add, "add.f32", f32, reg32);
}
impl AtomicAdd for f64 {
    atomic_rmw!(atomic_add, "add.f64", f64, reg64);
}
impl AtomicAdd for u32 {
    atomic_rmw!(atomic_add, "add.u32", u32, reg32);
}
impl AtomicAdd for i32 {
    atomic_rmw!(atomic_add, "add.s32", i32, reg32);
}
impl AtomicAdd for u64 {
    atomic_rmw!(atomic_add, "add.u64", u64, reg64);
}
impl AtomicAdd for i64 {
    atomic_rmw!(atomic_add, "add.u64", i64, reg64);
}

impl AtomicMinMax for u32 {
    atomic_rmw!(atomic_min, "min.u32", u32, reg32);
    atomic_rmw!(atomic_max, "max.u32", u32, reg32);
}
impl AtomicMinMax for i32 {
    atomic_rmw!(atomic_min, "min.s32", i32, reg32);
    atomic_rmw!(atomic_max, "max.s32", i32, reg32);
}
impl AtomicMinMax for u64 {
    atomic_rmw!(atomic_min, "min.u64", u64, reg64);
    atomic_rmw!(atomic_max, "max.u64", u64, reg64);
}
impl AtomicMinMax for i64 {
    atomic_rmw!(atomic_min, "min.s64", i64, reg64);
    atomic_rmw!(atomic_max, "max.s64", i64, reg64);
}

macro_rules! atomic_word {
    ($ty:ty, $bits:literal, $class:ident) => {
        impl AtomicWord for $ty {
            #[inline(always)]
            unsafe fn atomic_cas(ptr: *mut Self, expected: Self, new: Self) -> Self {
                let old: $ty;
                // SAFETY: the caller guarantees `ptr` is valid and aligned.
                unsafe {
                    asm!(concat!("atom.cas.b", $bits, " {o}, [{p}], {e}, {n};"), o = out($class) old,
                         p = in(reg64) ptr, e = in($class) expected, n = in($class) new,
                         options(nostack))
                };
                old
            }
            #[inline(always)]
            unsafe fn load_acquire(ptr: *const Self) -> Self {
                let v: $ty;
                // SAFETY: the caller guarantees `ptr` is valid and aligned.
                unsafe {
                    asm!(concat!("ld.acquire.gpu.b", $bits, " {v}, [{p}];"), v = out($class) v,
                         p = in(reg64) ptr, options(nostack))
                };
                v
            }
            #[inline(always)]
            unsafe fn store_release(ptr: *mut Self, value: Self) {
                // SAFETY: the caller guarantees `ptr` is valid and aligned.
                unsafe {
                    asm!(concat!("st.release.gpu.b", $bits, " [{p}], {v};"), v = in($class) value,
                         p = in(reg64) ptr, options(nostack))
                };
            }
        }
    };
}
atomic_word!(u32, "32", reg32);
atomic_word!(u64, "64", reg64);

/// Loads and stores at device scope without ordering (`ld.relaxed.gpu` / `st.relaxed.gpu`): the
/// value is read from / written to the point of coherence (L2), never a stale L1 copy. Paired
/// with [`AtomicWord::load_acquire`] / [`AtomicWord::store_release`] on a flag, they publish
/// values between blocks of one launch.
pub trait RelaxedAccess: Copy {
    /// Relaxed load at device scope.
    ///
    /// # Safety
    /// See the [module docs](self).
    unsafe fn load_relaxed(ptr: *const Self) -> Self;
    /// Relaxed store at device scope.
    ///
    /// # Safety
    /// See the [module docs](self).
    unsafe fn store_relaxed(ptr: *mut Self, value: Self);
}

macro_rules! relaxed_access {
    ($ty:ty, $bits:literal, $class:ident) => {
        impl RelaxedAccess for $ty {
            #[inline(always)]
            unsafe fn load_relaxed(ptr: *const Self) -> Self {
                let v: $ty;
                // SAFETY: the caller guarantees `ptr` is valid and aligned.
                unsafe {
                    asm!(concat!("ld.relaxed.gpu.b", $bits, " {v}, [{p}];"), v = out($class) v,
                         p = in(reg64) ptr, options(nostack))
                };
                v
            }
            #[inline(always)]
            unsafe fn store_relaxed(ptr: *mut Self, value: Self) {
                // SAFETY: the caller guarantees `ptr` is valid and aligned.
                unsafe {
                    asm!(concat!("st.relaxed.gpu.b", $bits, " [{p}], {v};"), v = in($class) value,
                         p = in(reg64) ptr, options(nostack))
                };
            }
        }
    };
}
relaxed_access!(f32, "32", reg32);
relaxed_access!(i32, "32", reg32);
relaxed_access!(u32, "32", reg32);
relaxed_access!(f64, "64", reg64);
relaxed_access!(i64, "64", reg64);
relaxed_access!(u64, "64", reg64);

/// Relaxed load at device scope of two 64-bit words as one 16-byte access
/// (`ld.relaxed.gpu.v2.u64`).
///
/// Hardware assumption: the two words are read together, never one from before and one from
/// after a concurrent [`store_relaxed_pair`] of the same 16 bytes. PTX models a vector access as
/// separate accesses of its elements and does not promise this; on sm_70 and later an aligned
/// 16-byte access is one L2 sector access, and NVIDIA CUB's scan tile status for 8-byte values
/// relies on the same property. The device scan's exact 64-bit integer tests check it.
///
/// # Safety
/// `ptr` is valid device memory, aligned to 16 bytes, allocated for the call.
#[inline(always)]
pub unsafe fn load_relaxed_pair(ptr: *const [u64; 2]) -> [u64; 2] {
    let (low, high): (u64, u64);
    // SAFETY: the caller guarantees `ptr` is valid and 16-byte aligned.
    unsafe {
        asm!("ld.relaxed.gpu.v2.u64 {{{l}, {h}}}, [{p}];", l = out(reg64) low, h = out(reg64) high,
             p = in(reg64) ptr, options(nostack))
    };
    [low, high]
}

/// Relaxed store at device scope of two 64-bit words as one 16-byte access
/// (`st.relaxed.gpu.v2.u64`); see [`load_relaxed_pair`] for the hardware assumption.
///
/// # Safety
/// `ptr` is valid device memory, aligned to 16 bytes, allocated for the call.
#[inline(always)]
pub unsafe fn store_relaxed_pair(ptr: *mut [u64; 2], value: [u64; 2]) {
    // SAFETY: the caller guarantees `ptr` is valid and 16-byte aligned.
    unsafe {
        asm!("st.relaxed.gpu.v2.u64 [{p}], {{{l}, {h}}};", l = in(reg64) value[0], h = in(reg64) value[1],
             p = in(reg64) ptr, options(nostack))
    };
}
