//! Loops written out at compile time.
//!
//! Register arrays must be indexed with constants: an index the compiler cannot fold puts the
//! array in local memory (slow, and banned by the PTX tests). LLVM unrolls small loops by itself
//! but gives up on long bodies (a warp scan with NaN-aware `max` per step), so loops whose body
//! indexes a register array with the loop counter use [`unrolled_for`].
//!
//! The other way round, [`opaque_u32`] keeps work inside a loop: LLVM hoists whatever it can
//! prove loop-invariant, and values held across a whole loop body cost registers in every phase
//! of it.

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

/// `value`, through a register move the compiler cannot see through: what is computed from the
/// result inside a loop stays inside the loop instead of being hoisted out of it and held in
/// registers across the whole body (costs one `mov` per call).
#[inline(always)]
pub fn opaque_u32(value: u32) -> u32 {
    let out: u32;
    // SAFETY: a register move; no memory is touched. Not `pure`, so that LLVM neither hoists
    // nor merges it.
    unsafe {
        core::arch::asm!("mov.b32 {o}, {i};", o = out(reg32) out, i = in(reg32) value, options(nomem, nostack))
    };
    out
}
