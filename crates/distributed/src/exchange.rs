//! The all-to-all of variable sizes under [`rebalance`](crate::rebalance) and
//! [`sort_keys`](crate::sort_keys): each rank sends each peer one contiguous run of its items
//! and receives one run from each, NCCL's grouped point-to-point calls (`ncclSend` /
//! `ncclRecv` between `ncclGroupStart` and `ncclGroupEnd`), its own run a device copy.

use crate::communicator::Communicator;
use crate::error::Result;
use cudarc::nccl::sys;
use gpu_primitives::CallOn;

/// One run of an exchange, in items: with `peer`, from (a send) or to (a receive) item `at` of
/// this rank's array, `count` items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) peer: usize,
    pub(crate) at: usize,
    pub(crate) count: usize,
}

/// One array moved by an exchange's runs: its items' bytes, where this rank's items are
/// (`source`) and where its received ones go (`target`), device addresses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Moved {
    pub(crate) source: u64,
    pub(crate) target: u64,
    pub(crate) item_bytes: usize,
}

/// Move every array of `moved` by the runs: this rank's `sends` go out from `source`, its
/// `receives` land in `target` (the run with this rank itself, a send and a receive of the same
/// count, is a copy on the stream). Returns once every run has landed on this rank; a world of
/// one has only its own run.
///
/// # Safety
/// Every send's run lies within its array's `source` and every receive's within `target`, live
/// memory of the stream's GPU that nothing else uses until this returns; `source` and `target`
/// do not overlap; the peers' calls make the matching runs (the same counts), as plans computed
/// alike on every rank do.
pub(crate) unsafe fn exchange(
    comm: &mut Communicator,
    on: &CallOn<'_>,
    sends: &[Run],
    receives: &[Run],
    moved: &[Moved],
) -> Result<()> {
    let rank = comm.rank();
    let own = |runs: &[Run]| runs.iter().find(|r| r.peer == rank && r.count > 0).copied();
    if let (Some(send), Some(receive)) = (own(sends), own(receives)) {
        for m in moved {
            let bytes = m.item_bytes;
            // SAFETY: both runs are within their arrays, which do not overlap (the caller's
            // contract); the stream orders the copy.
            unsafe {
                on.stream().copy_address(
                    m.source + (send.at * bytes) as u64,
                    m.target + (receive.at * bytes) as u64,
                    send.count * bytes,
                )?
            };
        }
    }
    let remote = |runs: &[Run]| runs.iter().any(|r| r.peer != rank && r.count > 0);
    if comm.world_size() > 1 && (remote(sends) || remote(receives)) {
        comm.collective(on, "ncclSend / ncclRecv", |raw, stream| {
            // SAFETY: no arguments; the group is ended below whatever the calls returned.
            let started = unsafe { sys::ncclGroupStart() };
            if started != sys::ncclResult_t::ncclSuccess {
                return started;
            }
            let mut first_error = sys::ncclResult_t::ncclSuccess;
            let mut note = |code: sys::ncclResult_t| {
                if first_error == sys::ncclResult_t::ncclSuccess && code != sys::ncclResult_t::ncclSuccess {
                    first_error = code;
                }
            };
            for m in moved {
                let bytes = m.item_bytes;
                for run in sends.iter().filter(|r| r.peer != rank && r.count > 0) {
                    // SAFETY: the run is within `source` (the caller's contract), alive and
                    // unchanged until the call has waited for the group.
                    note(unsafe {
                        sys::ncclSend(
                            (m.source + (run.at * bytes) as u64) as *const _,
                            run.count * bytes,
                            sys::ncclDataType_t::ncclUint8,
                            run.peer as i32,
                            raw,
                            stream,
                        )
                    });
                }
                for run in receives.iter().filter(|r| r.peer != rank && r.count > 0) {
                    // SAFETY: the run is within `target` (the caller's contract), borrowed
                    // until the call has waited.
                    note(unsafe {
                        sys::ncclRecv(
                            (m.target + (run.at * bytes) as u64) as *mut _,
                            run.count * bytes,
                            sys::ncclDataType_t::ncclUint8,
                            run.peer as i32,
                            raw,
                            stream,
                        )
                    });
                }
            }
            // SAFETY: ends the group started above.
            let ended = unsafe { sys::ncclGroupEnd() };
            if first_error != sys::ncclResult_t::ncclSuccess {
                first_error
            } else {
                ended
            }
        })?;
    }
    Ok(on.stream().synchronize()?)
}
