//! Warp votes: every lane in the member mask contributes one predicate (`vote.sync`).
//!
//! # Safety (every function)
//! Every lane in `member_mask` executes the same vote with the same mask, and the calling lane is
//! in the mask. Lanes outside the mask contribute nothing.

use core::arch::asm;

/// Bit `i` of the result is set when lane `i` (in `member_mask`) passed `predicate == true`.
/// Valid in every lane of the mask.
///
/// # Safety
/// See the [module docs](self).
#[inline(always)]
pub unsafe fn warp_ballot(predicate: bool, member_mask: u32) -> u32 {
    let out: u32;
    // SAFETY: the caller upholds the vote contract.
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {x}, 0; vote.sync.ballot.b32 {o}, p, {m}; }}",
            o = out(reg32) out,
            x = in(reg32) predicate as u32,
            m = in(reg32) member_mask,
            options(nostack, nomem),
        )
    };
    out
}

macro_rules! vote_predicate {
    ($name:ident, $mode:literal, $doc:literal) => {
        #[doc = $doc]
        ///
        /// # Safety
        /// See the [module docs](self).
        #[inline(always)]
        pub unsafe fn $name(predicate: bool, member_mask: u32) -> bool {
            let out: u32;
            // SAFETY: the caller upholds the vote contract.
            unsafe {
                asm!(
                    concat!(
                        "{{ .reg .pred p, q; setp.ne.u32 p, {x}, 0; vote.sync.", $mode,
                        ".pred q, p, {m}; selp.u32 {o}, 1, 0, q; }}"
                    ),
                    o = out(reg32) out,
                    x = in(reg32) predicate as u32,
                    m = in(reg32) member_mask,
                    options(nostack, nomem),
                )
            };
            out != 0
        }
    };
}
vote_predicate!(
    warp_any,
    "any",
    "`true` when any lane of `member_mask` passed `true`. Valid in every lane of the mask."
);
vote_predicate!(
    warp_all,
    "all",
    "`true` when every lane of `member_mask` passed `true`. Valid in every lane of the mask."
);

/// The lanes of `member_mask` whose `value` equals this lane's (`match.any.sync.b32`, sm_70
/// and later): this lane's *peers*, itself included. Valid in every lane of the mask, each
/// with its own peers.
///
/// - **Example:** lanes 0..32 with `value = lane % 2`: lane 0 gets `0x5555_5555`, lane 1
///   `0xAAAA_AAAA`.
///
/// # Safety
/// See the [module docs](self).
#[inline(always)]
pub unsafe fn warp_match_any(value: u32, member_mask: u32) -> u32 {
    let out: u32;
    // SAFETY: the caller upholds the vote contract.
    unsafe {
        asm!(
            "match.any.sync.b32 {o}, {x}, {m};",
            o = out(reg32) out,
            x = in(reg32) value,
            m = in(reg32) member_mask,
            options(nostack, nomem),
        )
    };
    out
}

/// The lanes of `member_mask` whose `value` agrees with this lane's in the low `BITS` bits:
/// this lane's peers, itself included, as [`warp_match_any`] finds them for values below
/// `2^BITS`, but with one ballot per bit (CUB's `MatchAny`) instead of `match.any.sync`, which
/// on sm_90 (H100) is slower (the block radix rank with it: the segmented sort 2.4x, the onesweep
/// pass of `u32` keys 1.7x the time): per bit one vote and three logic operations (the bit's test,
/// the ballot's inversion where the bit is clear, the `and` into the peers), no shared-memory
/// pipe. Valid in every lane of the mask.
///
/// - **Example:** lanes 0..32 with `value = lane % 4` and `BITS` 2: lane 1 gets
///   `0x2222_2222`; with `BITS` 1 it gets `0xAAAA_AAAA` (bit 1 is not compared).
///
/// # Safety
/// See the [module docs](self).
#[inline(always)]
pub unsafe fn warp_match_bits<const BITS: u32>(value: u32, member_mask: u32) -> u32 {
    let mut peers = member_mask;
    for bit in 0..BITS {
        let agree: u32;
        // SAFETY: every lane of the mask takes the same BITS votes (the caller's contract).
        // One block per bit, as CUB writes it: the bit's test sets the vote's predicate
        // directly and the lanes without the bit invert the ballot under it (4 instructions
        // a bit on sm_90, where extracting the bit to a register and selecting took 6).
        unsafe {
            asm!(
                "{{ .reg .pred p; and.b32 {a}, {x}, {b}; setp.ne.u32 p, {a}, 0; \
                 vote.sync.ballot.b32 {a}, p, {m}; @!p not.b32 {a}, {a}; }}",
                a = out(reg32) agree,
                x = in(reg32) value,
                b = in(reg32) 1u32 << bit,
                m = in(reg32) member_mask,
                options(nostack, nomem),
            )
        };
        peers &= agree;
    }
    peers
}
