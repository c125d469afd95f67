//! Fast `f32` math, one PTX instruction each (thread scope): `2^x`, `e^x`, `ln x`, `1 / x`,
//! `1 / sqrt(x)`, and `a * b + c` rounded once. The row operations
//! ([`device::rows`](crate::device::rows)) and the norms' parameter gradients use them.
//!
//! Errors (PTX ISA, "Floating Point Instructions"): `ex2.approx.ftz.f32` has a relative error
//! of at most about `2^-22`, so [`exp_approx`], `ex2` of `x * log2(e)`, at most about
//! `2^-22 + |x| * 2^-24` (the product's rounding); a result below 2^-126, the smallest normal
//! `f32`, is 0. [`ln_approx`] is `lg2.approx.f32` times `ln 2`; [`rsqrt_approx`]
//! (`rsqrt.approx.f32`) has a relative error of at most 2^-22.9, [`rcp_approx`]
//! (`rcp.approx.f32`) at most 2^-23. [`fma`] is exact but for its one rounding.

use core::arch::asm;

/// `e^x` through `ex2.approx.ftz.f32` (see the [module docs](self) for its error).
#[inline(always)]
pub fn exp_approx(x: f32) -> f32 {
    exp2_approx(x * core::f32::consts::LOG2_E)
}

/// `ln x` through `lg2.approx.f32`.
#[inline(always)]
pub fn ln_approx(x: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("lg2.approx.f32 {o}, {i};", o = out(reg32) out, i = in(reg32) x, options(pure, nomem, nostack))
    };
    out * core::f32::consts::LN_2
}

/// `1 / x` through `rcp.approx.f32` (relative error at most 2^-23).
#[inline(always)]
pub fn rcp_approx(x: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("rcp.approx.f32 {o}, {i};", o = out(reg32) out, i = in(reg32) x, options(pure, nomem, nostack))
    };
    out
}

/// `1 / sqrt(x)` through `rsqrt.approx.f32`.
#[inline(always)]
pub fn rsqrt_approx(x: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("rsqrt.approx.f32 {o}, {i};", o = out(reg32) out, i = in(reg32) x, options(pure, nomem, nostack))
    };
    out
}

/// `a * b + c` rounded once (`fma.rn.f32`, one `FFMA`). Rust never fuses `a * b + c` itself
/// (no floating-point contraction), so a product added to a sum took an `FMUL` and an `FADD`.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("fma.rn.f32 {o}, {a}, {b}, {c};", o = out(reg32) out, a = in(reg32) a, b = in(reg32) b,
             c = in(reg32) c, options(pure, nomem, nostack))
    };
    out
}

/// `2^x` through `ex2.approx.ftz.f32` (`-inf` gives 0; a result below 2^-126, the smallest
/// normal `f32`, gives 0). One `MUFU.EX2`, where `ex2.approx.f32` without `.ftz` adds a compare
/// and two conditional multiplies to keep subnormal results (ptxas sm_90).
#[inline(always)]
pub fn exp2_approx(x: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("ex2.approx.ftz.f32 {o}, {i};", o = out(reg32) out, i = in(reg32) x, options(pure, nomem, nostack))
    };
    out
}
