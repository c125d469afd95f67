//! Binary operators for reductions and scans: [`Sum`], [`Min`], [`Max`], the non-commutative
//! [`Affine`], and [`SegmentedOp`], any of them restarted at segment heads over [`Keyed`] pairs.
//!
//! An operator is a type implementing [`ReduceOp<T>`]: an associative `combine` and its
//! `identity` (`combine(identity, x) == x`). The warp and block collectives (except the butterfly
//! `warp_reduce_all`) and the device-wide scan may regroup operands (associativity) but never
//! reorder them, so their operators need not be commutative; the device-wide reduce's grid-stride
//! loops do reorder, so it needs a commutative operator.
//! Floating-point `+` is associative only up to rounding: a float sum's result depends on the
//! grouping, which is fixed for a given launch shape.

// IEEE 754-2019 maximum / minimum as LLVM intrinsics. LLVM knows them to be free of side
// effects and cheap, so a combine under a condition (a segment head, a lane past the warp
// scan's offset) becomes a select; an `asm!` block stayed a branch, and the f32 `Max`
// reduce_by_key ran 11 % behind its `Sum` (docs/performance.md, "The f32 Max as LLVM's
// maximum"). The NVPTX back end selects `max.NaN.f32` / `min.NaN.f32` for them (sm_80 and
// later, PTX 7.0 and later: every target built).
unsafe extern "unadjusted" {
    #[link_name = "llvm.maximum.f32"]
    fn llvm_maximum_f32(a: f32, b: f32) -> f32;
    #[link_name = "llvm.minimum.f32"]
    fn llvm_minimum_f32(a: f32, b: f32) -> f32;
}

/// An associative binary operator with an identity element.
pub trait ReduceOp<T>: Copy {
    /// `identity()` combined with `x`, on either side, gives `x`.
    fn identity() -> T;
    /// The operator. Must be associative.
    fn combine(a: T, b: T) -> T;
    /// Whether `combine(x, b) == b` for every `x`: `b` discards whatever comes before it (a
    /// segmented pair whose stretch holds a head). The look-back treats a tile whose aggregate
    /// does so as a finished prefix. `false` (the default) is always correct.
    #[inline(always)]
    fn absorbs_left(_b: &T) -> bool {
        false
    }
}

/// `a + b` (wrapping for integers), identity 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;
/// `max(a, b)`, identity the type's lowest value (`-inf` for floats).
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;
/// `min(a, b)`, identity the type's highest value (`+inf` for floats).
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;

macro_rules! int_ops {
    ($($t:ty),*) => {$(
        impl ReduceOp<$t> for Sum {
            #[inline(always)] fn identity() -> $t { 0 }
            #[inline(always)] fn combine(a: $t, b: $t) -> $t { a.wrapping_add(b) }
        }
        impl ReduceOp<$t> for Max {
            #[inline(always)] fn identity() -> $t { <$t>::MIN }
            #[inline(always)] fn combine(a: $t, b: $t) -> $t { if b > a { b } else { a } }
        }
        impl ReduceOp<$t> for Min {
            #[inline(always)] fn identity() -> $t { <$t>::MAX }
            #[inline(always)] fn combine(a: $t, b: $t) -> $t { if b < a { b } else { a } }
        }
    )*};
}
int_ops!(i32, u32, i64, u64);

/// IEEE 754-2019 `maximum` of two f32 (`max.NaN.f32`, one instruction on sm_80 and later): a
/// NaN if either is NaN, else the larger, `-0.0` ordered below `+0.0`. Which NaN is not
/// specified: the instruction gives the canonical one, but LLVM may fold a call with a
/// constant (`maximum(-inf, x)` is `x`, NaN payload and all).
#[inline(always)]
pub fn max_nan_f32(a: f32, b: f32) -> f32 {
    // SAFETY: an LLVM intrinsic without side effects (max.NaN.f32 on sm_80 and later), declared
    // with LLVM's own signature, `float @llvm.maximum.f32(float, float)`.
    unsafe { llvm_maximum_f32(a, b) }
}

/// IEEE 754-2019 `minimum` of two f32 (`min.NaN.f32`, one instruction on sm_80 and later): a
/// NaN if either is NaN, else the smaller, `-0.0` ordered below `+0.0`; which NaN, as in
/// [`max_nan_f32`].
#[inline(always)]
pub fn min_nan_f32(a: f32, b: f32) -> f32 {
    // SAFETY: as `max_nan_f32` (`float @llvm.minimum.f32(float, float)`).
    unsafe { llvm_minimum_f32(a, b) }
}

/// NaN-propagating maximum of two f64 by a compare and a select: NaN if either is NaN, else the
/// larger; of `-0.0` and `+0.0` (equal), `a`. PTX has no `max.NaN.f64`, and the NaN test before
/// `max.f64` (which would order the zeros) made the f64 scans by max 7 % slower on an H100
/// (docs/performance.md, "max.NaN").
#[inline(always)]
fn max_nan_f64(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if b > a {
        b
    } else {
        a
    }
}

/// NaN-propagating minimum of two f64: as [`max_nan_f64`], the smaller.
#[inline(always)]
fn min_nan_f64(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if b < a {
        b
    } else {
        a
    }
}

macro_rules! float_ops {
    ($($t:ty => $max:ident, $min:ident);*) => {$(
        impl ReduceOp<$t> for Sum {
            #[inline(always)] fn identity() -> $t { 0.0 }
            #[inline(always)] fn combine(a: $t, b: $t) -> $t { a + b }
        }
        /// NaN-propagating maximum: a NaN operand gives NaN. f32 (and the halves, which combine
        /// in f32): IEEE 754-2019 `maximum`, `-0.0` below `+0.0`, so the result does not depend
        /// on the operands' order; f64: `-0.0` and `+0.0` are equal, either may be the result.
        impl ReduceOp<$t> for Max {
            #[inline(always)] fn identity() -> $t { <$t>::NEG_INFINITY }
            #[inline(always)] fn combine(a: $t, b: $t) -> $t { $max(a, b) }
        }
        /// NaN-propagating minimum: a NaN operand gives NaN; the zeros as in `Max`.
        impl ReduceOp<$t> for Min {
            #[inline(always)] fn identity() -> $t { <$t>::INFINITY }
            #[inline(always)] fn combine(a: $t, b: $t) -> $t { $min(a, b) }
        }
    )*};
}
float_ops!(f32 => max_nan_f32, min_nan_f32; f64 => max_nan_f64, min_nan_f64);

/// Composition of affine maps `x -> a * x + b` in wrapping integer arithmetic, each map packed in
/// one word (`a` in the high half, `b` in the low half; halves of 16 bits in a u32, 32 bits in a
/// u64): `combine(f, g)` is "f, then g" = `(g.a * f.a, g.a * f.b + g.b)`, identity `(1, 0)`.
///
/// Associative but not commutative, and exact: a scan with it solves the first-order linear
/// recurrence `y[i] = a[i] * y[i - 1] + b[i]` (mod 2^16 or 2^32), and any reordering of operands
/// changes the result, which makes it the test operator for the scans' ordering.
#[derive(Clone, Copy, Debug, Default)]
pub struct Affine;

macro_rules! affine {
    ($word:ty, $half:ty, $bits:literal) => {
        impl ReduceOp<$word> for Affine {
            #[inline(always)]
            fn identity() -> $word {
                1 << $bits
            }
            #[inline(always)]
            fn combine(f: $word, g: $word) -> $word {
                let (fa, fb) = ((f >> $bits) as $half, f as $half);
                let (ga, gb) = ((g >> $bits) as $half, g as $half);
                let a = ga.wrapping_mul(fa);
                let b = ga.wrapping_mul(fb).wrapping_add(gb);
                (a as $word) << $bits | b as $word
            }
        }
    };
}
affine!(u32, u16, 16);
affine!(u64, u32, 32);

/// [`Keyed::segment`] of a stretch of items that holds no head.
pub const NO_HEAD: u32 = u32::MAX;

/// A value and the segment of the last head in the stretch of items it combines ([`NO_HEAD`]
/// when there is none): what the segmented scan carries.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Keyed<A> {
    /// The combination of the stretch's items from its last head on (all of them with none).
    pub value: A,
    /// The segment the last head starts (any value but [`NO_HEAD`] when only "there is a head"
    /// matters, as for scans by key).
    pub segment: u32,
}

/// The segmented operator over [`Keyed`] pairs: `combine(a, b)` is `b` when `b`'s stretch holds
/// a head, else `a`'s segment with `Op::combine(a.value, b.value)`. Associative whenever `Op`
/// is (Blelloch 1990); not commutative. Identity: `(Op::identity(), NO_HEAD)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SegmentedOp<Op>(core::marker::PhantomData<Op>);

impl<A, Op: ReduceOp<A>> ReduceOp<Keyed<A>> for SegmentedOp<Op> {
    #[inline(always)]
    fn identity() -> Keyed<A> {
        Keyed {
            value: Op::identity(),
            segment: NO_HEAD,
        }
    }
    #[inline(always)]
    fn combine(a: Keyed<A>, b: Keyed<A>) -> Keyed<A> {
        if b.segment != NO_HEAD {
            b
        } else {
            Keyed {
                value: Op::combine(a.value, b.value),
                segment: a.segment,
            }
        }
    }
    #[inline(always)]
    fn absorbs_left(b: &Keyed<A>) -> bool {
        b.segment != NO_HEAD
    }
}
