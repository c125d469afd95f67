//! Binary operators for reductions and scans.
//!
//! An operator is a type implementing [`ReduceOp<T>`]: an associative `combine` and its
//! `identity` (`combine(identity, x) == x`). Reductions and scans in this crate may regroup
//! operands (associativity) but never reorder them, so operators need not be commutative.
//! Floating-point `+` is associative only up to rounding: a float sum's result depends on the
//! grouping, which is fixed for a given launch shape.

/// An associative binary operator with an identity element.
pub trait ReduceOp<T>: Copy {
    /// `identity()` combined with `x`, on either side, gives `x`.
    fn identity() -> T;
    /// The operator. Must be associative.
    fn combine(a: T, b: T) -> T;
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

macro_rules! float_ops {
    ($($t:ty),*) => {$(
        impl ReduceOp<$t> for Sum {
            #[inline(always)] fn identity() -> $t { 0.0 }
            #[inline(always)] fn combine(a: $t, b: $t) -> $t { a + b }
        }
        /// NaN-propagating maximum (IEEE 754-2019 `maximum`): a NaN operand gives NaN.
        impl ReduceOp<$t> for Max {
            #[inline(always)] fn identity() -> $t { <$t>::NEG_INFINITY }
            #[inline(always)] fn combine(a: $t, b: $t) -> $t {
                if a.is_nan() || b.is_nan() { <$t>::NAN } else if b > a { b } else { a }
            }
        }
        /// NaN-propagating minimum (IEEE 754-2019 `minimum`): a NaN operand gives NaN.
        impl ReduceOp<$t> for Min {
            #[inline(always)] fn identity() -> $t { <$t>::INFINITY }
            #[inline(always)] fn combine(a: $t, b: $t) -> $t {
                if a.is_nan() || b.is_nan() { <$t>::NAN } else if b < a { b } else { a }
            }
        }
    )*};
}
float_ops!(f32, f64);
