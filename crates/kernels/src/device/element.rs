//! Elements of device-wide inputs, and the type each is accumulated in.

use crate::atomic::RelaxedAccess;
use crate::shared::SharedValue;
use crate::warp::Shuffle;
use core::arch::asm;

/// An input element of a device-wide algorithm.
pub trait Element: Packed {
    /// The type it is combined in: itself, except `f32` for [`F16`] and [`Bf16`].
    type Acc: Shuffle + SharedValue + RelaxedAccess + Packed + PartialOrd;
    /// The value as an accumulator (exact: f16 and bf16 widen to f32 without rounding).
    fn to_acc(self) -> Self::Acc;
}

macro_rules! itself {
    ($($t:ty),*) => {$(
        impl Element for $t {
            type Acc = $t;
            #[inline(always)]
            fn to_acc(self) -> $t { self }
        }
    )*};
}
itself!(f32, f64, i32, u32, i64, u64);

pub use gpu_primitives_abi::table::{Bf16, F16};

impl Element for F16 {
    type Acc = f32;
    #[inline(always)]
    fn to_acc(self) -> f32 {
        let out: f32;
        // SAFETY: a register conversion (`cvt.f32.f16` is exact); no memory is touched.
        unsafe {
            asm!("cvt.f32.f16 {o}, {h};", o = out(reg32) out, h = in(reg16) self.0, options(pure, nomem, nostack))
        };
        out
    }
}

impl Element for Bf16 {
    type Acc = f32;
    #[inline(always)]
    fn to_acc(self) -> f32 {
        // bf16 is the top half of an f32.
        f32::from_bits((self.0 as u32) << 16)
    }
}

/// A value that can be unpacked from / packed into consecutive 32-bit words (little-endian, as
/// in memory), so that 16-byte loads and stores stay in registers.
pub trait Packed: Copy {
    /// Element `i` of the elements laid out consecutively in `words`.
    fn unpack(words: &[u32; MAX_WORDS], i: usize) -> Self;
    /// Store `self` as element `i` of `words`.
    fn pack(self, words: &mut [u32; MAX_WORDS], i: usize);
    /// The element of all-zero bits (an initial value for registers written before they are
    /// read).
    #[inline(always)]
    fn zero() -> Self {
        Self::unpack(&[0; MAX_WORDS], 0)
    }
}

/// Most 32-bit words one thread moves per vector access group (64 bytes).
pub const MAX_WORDS: usize = 16;

macro_rules! packed_32 {
    ($($t:ty),*) => {$(
        impl Packed for $t {
            #[inline(always)]
            fn unpack(words: &[u32; MAX_WORDS], i: usize) -> Self { <$t>::from_ne_bytes(words[i].to_ne_bytes()) }
            #[inline(always)]
            fn pack(self, words: &mut [u32; MAX_WORDS], i: usize) { words[i] = u32::from_ne_bytes(self.to_ne_bytes()) }
        }
    )*};
}
macro_rules! packed_64 {
    ($($t:ty),*) => {$(
        impl Packed for $t {
            #[inline(always)]
            fn unpack(words: &[u32; MAX_WORDS], i: usize) -> Self {
                let bits = words[2 * i] as u64 | (words[2 * i + 1] as u64) << 32;
                <$t>::from_ne_bytes(bits.to_ne_bytes())
            }
            #[inline(always)]
            fn pack(self, words: &mut [u32; MAX_WORDS], i: usize) {
                let bits = u64::from_ne_bytes(self.to_ne_bytes());
                (words[2 * i], words[2 * i + 1]) = (bits as u32, (bits >> 32) as u32);
            }
        }
    )*};
}
macro_rules! packed_16 {
    ($($t:ident),*) => {$(
        impl Packed for $t {
            #[inline(always)]
            fn unpack(words: &[u32; MAX_WORDS], i: usize) -> Self { $t((words[i / 2] >> (16 * (i % 2))) as u16) }
            #[inline(always)]
            fn pack(self, words: &mut [u32; MAX_WORDS], i: usize) {
                let shift = 16 * (i % 2);
                words[i / 2] = (words[i / 2] & !(0xffff << shift)) | (self.0 as u32) << shift;
            }
        }
    )*};
}
/// The narrow integers (histogram samples), `BYTES` to an element.
macro_rules! packed_narrow {
    ($($t:ty),*) => {$(
        impl Packed for $t {
            #[inline(always)]
            fn unpack(words: &[u32; MAX_WORDS], i: usize) -> Self {
                const PER_WORD: usize = 4 / core::mem::size_of::<$t>();
                const BITS: usize = 8 * core::mem::size_of::<$t>();
                (words[i / PER_WORD] >> (BITS * (i % PER_WORD))) as $t
            }
            #[inline(always)]
            fn pack(self, words: &mut [u32; MAX_WORDS], i: usize) {
                const PER_WORD: usize = 4 / core::mem::size_of::<$t>();
                const BITS: usize = 8 * core::mem::size_of::<$t>();
                let shift = BITS * (i % PER_WORD);
                words[i / PER_WORD] = (words[i / PER_WORD] & !((<$t>::MAX as u32) << shift)) | (self as u32) << shift;
            }
        }
    )*};
}
packed_narrow!(u8, u16);
packed_32!(f32, i32, u32);
packed_64!(f64, i64, u64);
packed_16!(F16, Bf16);

macro_rules! load_v4 {
    ($name:ident, $instr:literal) => {
        #[inline(always)]
        unsafe fn $name(ptr: *const u8) -> [u32; 4] {
            let (a, b, c, d): (u32, u32, u32, u32);
            // SAFETY: the caller guarantees 16 readable, 16-byte-aligned bytes.
            unsafe {
                asm!(concat!($instr, " {{{a}, {b}, {c}, {d}}}, [{p}];"), a = out(reg32) a, b = out(reg32) b,
                     c = out(reg32) c, d = out(reg32) d, p = in(reg64) ptr, options(nostack, readonly))
            };
            [a, b, c, d]
        }
    };
}
load_v4!(load_v4_coherent, "ld.global.v4.b32");
load_v4!(load_v4_read_only, "ld.global.nc.v4.b32");

/// Read 16 bytes at `ptr` through the read-only data cache, marked in L2 as last to be evicted
/// (`createpolicy.fractional.L2::evict_last` with `ld.global.nc.L2::cache_hint`): for data many
/// blocks read again (a row operation's weight and bias), so that streamed rows do not push
/// it out of L2. sm_90 modules only (PTX ISA 7.4 and later; the sm_80 module is ISA 7.0): there
/// a plain [`load_words_read_only`].
///
/// # Safety
/// As [`load_words_read_only`].
#[cfg(not(target_feature = "sm_90"))]
#[inline(always)]
pub unsafe fn load_words_read_only_kept(ptr: *const u8) -> [u32; 4] {
    // SAFETY: forwarded.
    unsafe { load_v4_read_only(ptr) }
}

/// See the other definition (this one for sm_90 modules).
///
/// # Safety
/// As [`load_words_read_only`].
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub unsafe fn load_words_read_only_kept(ptr: *const u8) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller guarantees 16 readable, 16-byte-aligned bytes not written during the
    // launch; the policy is a hint and changes no value.
    unsafe {
        asm!("{{ .reg .b64 pol; createpolicy.fractional.L2::evict_last.b64 pol, 1.0;",
             "ld.global.nc.L2::cache_hint.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}], pol; }}",
             a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d, p = in(reg64) ptr,
             options(nostack, readonly))
    };
    [a, b, c, d]
}

/// Read 16 bytes at `ptr` as four 32-bit words through the read-only data cache
/// (`ld.global.nc.v4.b32`).
///
/// # Safety
/// `ptr` is 16-byte aligned, the 16 bytes are readable and not written during the launch.
#[inline(always)]
pub unsafe fn load_words_read_only(ptr: *const u8) -> [u32; 4] {
    // SAFETY: forwarded.
    unsafe { load_v4_read_only(ptr) }
}

/// Ask for the cache line holding `ptr` in this multiprocessor's L1 (`prefetch.global.L1`):
/// no register receives it, and nothing waits for it.
///
/// # Safety
/// `ptr` lies in global memory the kernel may read.
#[inline(always)]
pub unsafe fn prefetch_l1(ptr: *const u8) {
    // SAFETY: a hint on a readable global address (the caller's contract); it writes nothing.
    unsafe { asm!("prefetch.global.L1 [{p}];", p = in(reg64) ptr, options(nostack, readonly)) };
}

/// Write four 32-bit words as 16 bytes at `ptr` (`st.global.v4.b32`).
///
/// # Safety
/// `ptr` is 16-byte aligned and the 16 bytes are writable.
#[inline(always)]
pub unsafe fn store_words(ptr: *mut u8, [a, b, c, d]: [u32; 4]) {
    // SAFETY: the caller's 16-byte-aligned, writable range.
    unsafe {
        asm!("st.global.v4.b32 [{p}], {{{a}, {b}, {c}, {d}}};", p = in(reg64) ptr, a = in(reg32) a,
             b = in(reg32) b, c = in(reg32) c, d = in(reg32) d, options(nostack));
    }
}

/// As [`store_words`], marked in L2 as first to be evicted (`createpolicy.fractional.L2::evict_first`
/// with `st.global.L2::cache_hint`): for output nothing in the launch reads again. sm_90
/// modules only, as [`load_words_read_only_kept`]: there a plain [`store_words`].
///
/// # Safety
/// As [`store_words`].
#[cfg(not(target_feature = "sm_90"))]
#[inline(always)]
pub unsafe fn store_words_streaming(ptr: *mut u8, words: [u32; 4]) {
    // SAFETY: forwarded.
    unsafe { store_words(ptr, words) }
}

/// See the other definition (this one for sm_90 modules).
///
/// # Safety
/// As [`store_words`].
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub unsafe fn store_words_streaming(ptr: *mut u8, [a, b, c, d]: [u32; 4]) {
    // SAFETY: the caller's 16-byte-aligned, writable range; the policy is a hint.
    unsafe {
        asm!("{{ .reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0;",
             "st.global.L2::cache_hint.v4.b32 [{p}], {{{a}, {b}, {c}, {d}}}, pol; }}",
             p = in(reg64) ptr, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, d = in(reg32) d,
             options(nostack));
    }
}

/// An element the row operations read and write: computed in `f32`, rounded back to its own type.
pub trait RowElement: Element<Acc = f32> {
    /// `value` rounded to the nearest of this type (ties to even; overflow gives infinity).
    fn from_f32(value: f32) -> Self;
    /// Element `i` of the elements packed in `words`, widened to `f32` by an instruction the
    /// compiler may not merge with an earlier one: a row held in registers is widened again at
    /// each pass over it, instead of being kept widened (twice the registers for halves).
    fn widen_each_time(words: &[u32], i: usize) -> f32;
    /// Word `w` of `values` rounded to this type and packed as [`Packed::pack`] packs them
    /// (`values[2 w]` in the low half of a word of halves): halves in one `cvt.rn.*x2.f32`,
    /// where a conversion each and a shift and an OR to pack them took three instructions.
    fn narrow_word(values: &[f32], w: usize) -> u32;
}

impl RowElement for f32 {
    #[inline(always)]
    fn from_f32(value: f32) -> f32 {
        value
    }
    #[inline(always)]
    fn widen_each_time(words: &[u32], i: usize) -> f32 {
        f32::from_bits(words[i])
    }
    #[inline(always)]
    fn narrow_word(values: &[f32], w: usize) -> u32 {
        values[w].to_bits()
    }
}

macro_rules! row_half {
    ($t:ident, $narrow:literal, $narrow_pair:literal, $low:literal, $high:literal) => {
        impl RowElement for $t {
            #[inline(always)]
            fn from_f32(value: f32) -> $t {
                let out: u16;
                // SAFETY: a register conversion; no memory is touched.
                unsafe {
                    asm!(concat!($narrow, " {o}, {v};"), o = out(reg16) out, v = in(reg32) value,
                         options(pure, nomem, nostack))
                };
                $t(out)
            }
            #[inline(always)]
            fn narrow_word(values: &[f32], w: usize) -> u32 {
                let out: u32;
                // SAFETY: a register conversion (sm_80 and later, as every PTX variant built);
                // no memory is touched. The first source goes to the upper half.
                unsafe {
                    asm!(concat!($narrow_pair, " {o}, {hi}, {lo};"), o = out(reg32) out,
                         hi = in(reg32) values[2 * w + 1], lo = in(reg32) values[2 * w],
                         options(pure, nomem, nostack))
                };
                out
            }
            #[inline(always)]
            fn widen_each_time(words: &[u32], i: usize) -> f32 {
                let out: f32;
                // SAFETY: register instructions; no memory is touched. Not `pure`, so never
                // merged with an earlier widening.
                unsafe {
                    if i % 2 == 0 {
                        asm!($low, o = out(reg32) out, w = in(reg32) words[i / 2], options(nomem, nostack))
                    } else {
                        asm!($high, o = out(reg32) out, w = in(reg32) words[i / 2], options(nomem, nostack))
                    }
                };
                out
            }
        }
    };
}
row_half!(
    F16,
    "cvt.rn.f16.f32",
    "cvt.rn.f16x2.f32",
    "{{ .reg .b16 lo, hi; mov.b32 {{lo, hi}}, {w}; cvt.f32.f16 {o}, lo; }}",
    "{{ .reg .b16 lo, hi; mov.b32 {{lo, hi}}, {w}; cvt.f32.f16 {o}, hi; }}"
);
// bf16 is the top half of an f32.
row_half!(
    Bf16,
    "cvt.rn.bf16.f32",
    "cvt.rn.bf16x2.f32",
    "shl.b32 {o}, {w}, 16;",
    "and.b32 {o}, {w}, 0xffff0000;"
);

const fn assert_whole_vectors<T, const N: usize>() {
    let bytes = N * core::mem::size_of::<T>();
    assert!(
        bytes.is_multiple_of(16) && bytes <= 4 * MAX_WORDS,
        "16-byte accesses of at most 64 bytes"
    );
}

#[inline(always)]
unsafe fn load_chunks<T: Packed, const N: usize>(ptr: *const T, read_only: bool) -> [T; N] {
    const { assert_whole_vectors::<T, N>() };
    let mut words = [0u32; MAX_WORDS];
    for c in 0..N * core::mem::size_of::<T>() / 16 {
        // SAFETY: chunk c of the caller's 16-byte-aligned range.
        let chunk = unsafe {
            let src = (ptr as *const u8).add(16 * c);
            if read_only {
                load_v4_read_only(src)
            } else {
                load_v4_coherent(src)
            }
        };
        words[4 * c..4 * c + 4].copy_from_slice(&chunk);
    }
    core::array::from_fn(|i| T::unpack(&words, i))
}

/// Read `N` values at `ptr` with 16-byte loads (`ld.global.v4.b32`), into registers.
///
/// # Safety
/// `ptr` is 16-byte aligned, `N * size_of::<T>()` is a multiple of 16 of at most 64 (checked at
/// compile time), and the `N` values are readable.
#[inline(always)]
pub unsafe fn load_aligned<T: Packed, const N: usize>(ptr: *const T) -> [T; N] {
    // SAFETY: forwarded.
    unsafe { load_chunks(ptr, false) }
}

/// As [`load_aligned`], through the read-only data cache (`ld.global.nc`): only for memory that
/// nothing writes during the kernel.
///
/// # Safety
/// As [`load_aligned`], and the memory is not written during the launch.
#[inline(always)]
pub unsafe fn load_aligned_read_only<T: Packed, const N: usize>(ptr: *const T) -> [T; N] {
    // SAFETY: forwarded.
    unsafe { load_chunks(ptr, true) }
}

/// Write `N` values at `ptr` with 16-byte stores (`st.global.v4.b32`).
///
/// # Safety
/// As [`load_aligned`], for writing.
#[inline(always)]
pub unsafe fn store_aligned<T: Packed, const N: usize>(ptr: *mut T, values: [T; N]) {
    const { assert_whole_vectors::<T, N>() };
    let mut words = [0u32; MAX_WORDS];
    for i in 0..N {
        values[i].pack(&mut words, i);
    }
    for c in 0..N * core::mem::size_of::<T>() / 16 {
        let chunk = [words[4 * c], words[4 * c + 1], words[4 * c + 2], words[4 * c + 3]];
        // SAFETY: chunk c of the caller's 16-byte-aligned range.
        unsafe { store_words((ptr as *mut u8).add(16 * c), chunk) };
    }
}
