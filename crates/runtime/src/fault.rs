//! Fault injection for tests (feature `fault-injection`): make the Nth driver call of a kind,
//! on the calling thread, fail as the driver would, so that a test can check that a call failing
//! at any step (allocation, module load / JIT, launch, copy) leaves everything usable.
//!
//! Without the feature, the hook the driver calls go through is a constant `None` and costs
//! nothing.
//!
//! ```ignore
//! use gpu_primitives_runtime::fault::{self, Fault};
//! fault::reset();
//! run_the_call()?;                          // count the steps of a call
//! let launches = fault::calls(Fault::Launch);
//! for step in 1..=launches {
//!     fault::fail_nth(Fault::Launch, step); // the step-th launch from now fails
//!     assert!(run_the_call().is_err());
//!     run_the_call()?;                      // and the next call is right
//! }
//! ```

use crate::sys;

/// A kind of driver call that can be made to fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// `cuMemAlloc` / `cuMemAllocAsync`: fails with `CUDA_ERROR_OUT_OF_MEMORY`.
    Alloc,
    /// `cuModuleLoadDataEx` (a kernel's JIT on first use): fails with `CUDA_ERROR_INVALID_PTX`.
    ModuleLoad,
    /// `cuLaunchKernel`: fails with `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`.
    Launch,
    /// Copies and memsets (`cuMemcpy*Async`, `cuMemsetD8Async`): fail with
    /// `CUDA_ERROR_INVALID_VALUE`.
    Copy,
}

#[cfg_attr(not(feature = "fault-injection"), allow(dead_code))]
impl Fault {
    /// Every kind, in a fixed order.
    pub const ALL: [Fault; 4] = [Fault::Alloc, Fault::ModuleLoad, Fault::Launch, Fault::Copy];

    fn index(self) -> usize {
        self as usize
    }

    fn status(self) -> sys::CUresult {
        use sys::cudaError_enum as E;
        match self {
            Fault::Alloc => E::CUDA_ERROR_OUT_OF_MEMORY,
            Fault::ModuleLoad => E::CUDA_ERROR_INVALID_PTX,
            Fault::Launch => E::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            Fault::Copy => E::CUDA_ERROR_INVALID_VALUE,
        }
    }
}

#[cfg(feature = "fault-injection")]
mod state {
    use super::Fault;
    use std::cell::Cell;

    #[derive(Clone, Copy, Default)]
    pub(super) struct Counter {
        /// Calls of this kind made on this thread since the last `reset`.
        pub(super) calls: u64,
        /// The call (1-based, counted from when it was armed) to fail; 0: none.
        pub(super) fail_at: u64,
    }

    thread_local! {
        pub(super) static COUNTERS: Cell<[Counter; 4]> = const { Cell::new([Counter { calls: 0, fail_at: 0 }; 4]) };
    }

    pub(super) fn update<R>(f: impl FnOnce(&mut [Counter; 4]) -> R) -> R {
        COUNTERS.with(|c| {
            let mut v = c.get();
            let r = f(&mut v);
            c.set(v);
            r
        })
    }

    pub(super) fn slot(kind: Fault) -> usize {
        kind.index()
    }
}

/// Make the `n`-th call of `kind` on this thread, counted from now (1 = the next one), fail;
/// one failure, then calls succeed again. `n = 0` disarms it.
#[cfg(feature = "fault-injection")]
pub fn fail_nth(kind: Fault, n: u64) {
    state::update(|c| {
        let c = &mut c[state::slot(kind)];
        c.fail_at = if n == 0 { 0 } else { c.calls + n };
    });
}

/// How many calls of `kind` this thread made since the last [`reset`] (failed ones included).
#[cfg(feature = "fault-injection")]
pub fn calls(kind: Fault) -> u64 {
    state::update(|c| c[state::slot(kind)].calls)
}

/// Zero this thread's counts and disarm every injected failure.
#[cfg(feature = "fault-injection")]
pub fn reset() {
    state::update(|c| *c = Default::default());
}

/// Whether an armed failure of some kind has not fired yet on this thread.
#[cfg(feature = "fault-injection")]
pub fn armed() -> bool {
    state::update(|c| c.iter().any(|c| c.fail_at != 0))
}

/// Count a call of `kind` about to be made; the status it must fail with, when armed for it.
#[cfg(feature = "fault-injection")]
pub(crate) fn inject(kind: Fault) -> Option<sys::CUresult> {
    state::update(|c| {
        let c = &mut c[state::slot(kind)];
        c.calls += 1;
        if c.fail_at != 0 && c.calls == c.fail_at {
            c.fail_at = 0;
            return Some(kind.status());
        }
        None
    })
}

/// Without the feature `fault-injection`: never fails.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn inject(_kind: Fault) -> Option<sys::CUresult> {
    None
}

/// `call()`'s status, unless a failure of `kind` is injected: then that, without making the call.
#[inline(always)]
pub(crate) fn or_inject(kind: Fault, call: impl FnOnce() -> sys::CUresult) -> sys::CUresult {
    match inject(kind) {
        Some(status) => status,
        None => call(),
    }
}

/// Events this thread created less those it destroyed, since the process started: a test's
/// check that a path out of a call (an error, a panic) destroys the events it made.
#[cfg(feature = "fault-injection")]
pub fn events_alive() -> i64 {
    EVENTS_ALIVE.with(std::cell::Cell::get)
}

#[cfg(feature = "fault-injection")]
thread_local! {
    static EVENTS_ALIVE: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

/// Count an event created (`+1`) or destroyed (`-1`) on this thread.
#[cfg(feature = "fault-injection")]
pub(crate) fn count_event(change: i64) {
    EVENTS_ALIVE.with(|n| n.set(n.get() + change));
}

/// Without the feature `fault-injection`: counts nothing.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn count_event(_change: i64) {}

#[cfg(all(test, feature = "fault-injection"))]
mod tests {
    use super::*;

    #[test]
    fn the_nth_call_fails_once() {
        reset();
        fail_nth(Fault::Launch, 3);
        let ok = sys::cudaError_enum::CUDA_SUCCESS;
        let statuses: Vec<_> = (0..5).map(|_| or_inject(Fault::Launch, || ok)).collect();
        assert_eq!(statuses[..2], [ok, ok]);
        assert_eq!(
            statuses[2],
            sys::cudaError_enum::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
        );
        assert_eq!(statuses[3..], [ok, ok]);
        assert_eq!(calls(Fault::Launch), 5);
        assert_eq!(calls(Fault::Alloc), 0);
        assert!(!armed());
    }

    #[test]
    fn counts_are_per_thread() {
        reset();
        fail_nth(Fault::Copy, 1);
        std::thread::spawn(|| {
            let ok = sys::cudaError_enum::CUDA_SUCCESS;
            assert_eq!(or_inject(Fault::Copy, || ok), ok);
        })
        .join()
        .unwrap();
        assert!(armed());
        reset();
        assert!(!armed());
    }
}
