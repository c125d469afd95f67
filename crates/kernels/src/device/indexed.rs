//! `(value, index)` pairs, and the argmin / argmax operators over them.

use crate::atomic::RelaxedAccess;
use crate::op::ReduceOp;
use crate::shared::SharedValue;
use crate::warp::Shuffle;

pub use gpu_primitives_abi::layout::Indexed;

/// Ordering of accumulator values for argmin / argmax.
pub trait Ordered: Copy {
    /// The largest value (`+inf` for floats).
    const HIGHEST: Self;
    /// The smallest value (`-inf` for floats).
    const LOWEST: Self;
    /// `a < b`.
    fn less(a: Self, b: Self) -> bool;
    /// Whether it is NaN (never, for integers).
    fn is_nan(self) -> bool;
}

macro_rules! ordered_int {
    ($($t:ty),*) => {$(impl Ordered for $t {
        const HIGHEST: Self = <$t>::MAX;
        const LOWEST: Self = <$t>::MIN;
        #[inline(always)] fn less(a: Self, b: Self) -> bool { a < b }
        #[inline(always)] fn is_nan(self) -> bool { false }
    })*};
}
macro_rules! ordered_float {
    ($($t:ty),*) => {$(impl Ordered for $t {
        const HIGHEST: Self = <$t>::INFINITY;
        const LOWEST: Self = <$t>::NEG_INFINITY;
        #[inline(always)] fn less(a: Self, b: Self) -> bool { a < b }
        #[inline(always)] fn is_nan(self) -> bool { self != self }
    })*};
}
ordered_int!(i32, u32, i64, u64);
ordered_float!(f32, f64);

/// Index of the smallest value; the first on ties; a NaN wins (the first NaN), as NumPy's argmin.
#[derive(Clone, Copy, Default)]
pub struct ArgMin;
/// Index of the largest value; the first on ties; a NaN wins (the first NaN), as NumPy's argmax.
#[derive(Clone, Copy, Default)]
pub struct ArgMax;

/// The pair that wins when `b_wins(a.value, b.value)` says b's value is better: NaN first, then
/// better value, then lower index. Commutative and associative, so any grouping gives one answer.
#[inline(always)]
fn pick<A: Ordered>(a: Indexed<A>, b: Indexed<A>, better: fn(A, A) -> bool) -> Indexed<A> {
    let (a_nan, b_nan) = (a.value.is_nan(), b.value.is_nan());
    let b_wins = if a_nan || b_nan {
        b_nan && (!a_nan || b.index < a.index)
    } else if better(b.value, a.value) {
        true
    } else if better(a.value, b.value) {
        false
    } else {
        b.index < a.index
    };
    if b_wins { b } else { a }
}

impl<A: Ordered> ReduceOp<Indexed<A>> for ArgMin {
    #[inline(always)]
    fn identity() -> Indexed<A> {
        Indexed {
            value: A::HIGHEST,
            index: u64::MAX,
        }
    }
    #[inline(always)]
    fn combine(a: Indexed<A>, b: Indexed<A>) -> Indexed<A> {
        pick(a, b, A::less)
    }
}

impl<A: Ordered> ReduceOp<Indexed<A>> for ArgMax {
    #[inline(always)]
    fn identity() -> Indexed<A> {
        Indexed {
            value: A::LOWEST,
            index: u64::MAX,
        }
    }
    #[inline(always)]
    fn combine(a: Indexed<A>, b: Indexed<A>) -> Indexed<A> {
        pick(a, b, |x, y| A::less(y, x))
    }
}

impl<A: Shuffle> Shuffle for Indexed<A> {
    #[inline(always)]
    unsafe fn shuffle_raw(self, mode_b: (u8, u32), width: u32, member_mask: u32) -> Self {
        // SAFETY: forwarded; both fields take the same path.
        unsafe {
            Indexed {
                value: self.value.shuffle_raw(mode_b, width, member_mask),
                index: self.index.shuffle_raw(mode_b, width, member_mask),
            }
        }
    }
}

impl<A: SharedValue> SharedValue for Indexed<A> {
    #[inline(always)]
    unsafe fn load_shared(addr: u32) -> Self {
        // SAFETY: the caller guarantees 16 aligned bytes (value at +0, index at +8).
        unsafe {
            Indexed {
                value: A::load_shared(addr),
                index: u64::load_shared(addr + 8),
            }
        }
    }
    #[inline(always)]
    unsafe fn store_shared(addr: u32, value: Self) {
        // SAFETY: as `load_shared`.
        unsafe {
            A::store_shared(addr, value.value);
            u64::store_shared(addr + 8, value.index);
        }
    }
}

impl<A: RelaxedAccess> RelaxedAccess for Indexed<A> {
    #[inline(always)]
    unsafe fn load_relaxed(ptr: *const Self) -> Self {
        // SAFETY: the caller guarantees a valid pair; the fields are read one at a time (the
        // reduce's protocol publishes a pair before counting it, never while it is read).
        unsafe {
            Indexed {
                value: A::load_relaxed(&raw const (*ptr).value),
                index: u64::load_relaxed(&raw const (*ptr).index),
            }
        }
    }
    #[inline(always)]
    unsafe fn store_relaxed(ptr: *mut Self, value: Self) {
        // SAFETY: as `load_relaxed`.
        unsafe {
            A::store_relaxed(&raw mut (*ptr).value, value.value);
            u64::store_relaxed(&raw mut (*ptr).index, value.index);
        }
    }
}

/// A 4-byte value's rank for argmin / argmax over one packed `u64` (see [`ArgOrder`]): an
/// order-preserving map to `u32` (`a < b` gives a smaller rank, equal values the same, `-0.0`
/// and `+0.0` tie as `<` has them). A NaN's rank is unspecified: [`ArgOrder::key`] puts every
/// NaN at the winning end ([`Ordered::is_nan`]), where they all tie.
pub trait ArgRank: Ordered {
    /// The rank of a value that is not a NaN.
    fn rank(self) -> u32;
}

impl ArgRank for u32 {
    #[inline(always)]
    fn rank(self) -> u32 {
        self
    }
}

impl ArgRank for i32 {
    #[inline(always)]
    fn rank(self) -> u32 {
        crate::radix::RadixKey::to_ordered(self)
    }
}

/// `f32`'s bits in total order with `-0.0` taken as `+0.0` (`x + 0.0`, exact, turns `-0.0`
/// into `+0.0` and leaves every other value as it is): a negative value's bits inverted, a
/// positive value's sign bit set (one shift and one logic instruction), `-infinity` at
/// 0x007f_ffff and `+infinity` at 0xff80_0000, so 0 and `u32::MAX` are left for the NaNs.
impl ArgRank for f32 {
    #[inline(always)]
    fn rank(self) -> u32 {
        let b = (self + 0.0).to_bits();
        b ^ (((b as i32) >> 31) as u32 | 0x8000_0000)
    }
}

/// Argmin / argmax of 4-byte values at `u32` indices as a plain `Min` / `Max` over one `u64` a
/// pair: the value's rank ([`ArgRank`]) in the high word, the index in the low word (argmin) or
/// the index inverted (argmax, so that the larger key has the smaller index). The same rules as
/// [`ArgMin`] / [`ArgMax`] over [`Indexed`] pairs (the first index on ties, the first NaN wins)
/// in a few integer instructions a combination instead of a branchy comparison of both fields.
/// The operator's identity is no item's key while indices stay below `u32::MAX`.
pub trait ArgOrder: Copy {
    /// The operator over the packed keys.
    type Op: ReduceOp<u64>;
    /// The key of value `value` at index `index` (below `u32::MAX`).
    fn key<A: ArgRank>(value: A, index: u32) -> u64;
    /// The index a key holds.
    fn index(key: u64) -> u32;
    /// What an empty set of values gives (`+infinity` or the largest integer for argmin).
    fn empty<A: Ordered>() -> A;
}

impl ArgOrder for ArgMin {
    type Op = crate::op::Min;
    #[inline(always)]
    fn key<A: ArgRank>(value: A, index: u32) -> u64 {
        // A NaN below every number (it wins the argmin): rank 0, below -infinity's.
        let rank = if value.is_nan() { 0 } else { value.rank() };
        (rank as u64) << 32 | index as u64
    }
    #[inline(always)]
    fn index(key: u64) -> u32 {
        key as u32
    }
    #[inline(always)]
    fn empty<A: Ordered>() -> A {
        A::HIGHEST
    }
}

impl ArgOrder for ArgMax {
    type Op = crate::op::Max;
    #[inline(always)]
    fn key<A: ArgRank>(value: A, index: u32) -> u64 {
        // A NaN above every number (it wins the argmax): rank u32::MAX, above +infinity's.
        let rank = if value.is_nan() { u32::MAX } else { value.rank() };
        (rank as u64) << 32 | !index as u64
    }
    #[inline(always)]
    fn index(key: u64) -> u32 {
        !(key as u32)
    }
    #[inline(always)]
    fn empty<A: Ordered>() -> A {
        A::LOWEST
    }
}
