//! Loops written out at compile time.
//!
//! Register arrays must be indexed with constants: an index the compiler cannot fold puts the
//! array in local memory (slow, and banned by the PTX tests). LLVM unrolls small loops by itself
//! but gives up on long bodies (a warp scan with NaN-aware `max` per step), so loops whose body
//! indexes a register array with the loop counter use [`unrolled_for`].

/// Calls `body(0)`, `body(1)`, ..., `body(count - 1)` one after another, each call written out
/// (up to 32), so that after inlining every index is a constant; traps if `count > 32`.
#[inline(always)]
pub fn unrolled_for(count: usize, mut body: impl FnMut(usize)) {
    macro_rules! calls {
        ($($i:literal)*) => {$(
            if $i < count {
                body($i);
            }
        )*};
    }
    calls!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
    if count > 32 {
        // SAFETY: `trap` has no preconditions; a caller past 32 is a bug in this crate.
        unsafe { core::arch::nvptx::trap() }
    }
}
