//! A communicator's NCCL handle, non-blocking (`config.blocking = 0`), and the waits that
//! watch a deadline: every NCCL call returns at once, and the crate polls
//! `ncclCommGetAsyncError` (and, for work on a stream, an event) until it finishes, fails, or
//! the deadline passes; on failure or timeout the communicator is aborted (`ncclCommAbort`),
//! which also ends NCCL's kernels still waiting for a peer. NCCL's documentation: "Fault
//! Tolerance" and "Non-blocking communicators" in its user guide.

use crate::error::{Error, Result};
use cudarc::nccl::sys;
use gpu_primitives::Gpu;
use gpu_primitives::runtime::{Event, Stream};
use std::ffi::CStr;
use std::time::{Duration, Instant};

/// The types NCCL moves and reduces, with their NCCL data type.
pub trait NcclType: Copy + bytemuck::Pod {
    /// NCCL's data type of it.
    const DATA_TYPE: sys::ncclDataType_t;
}

macro_rules! nccl_types {
    ($($ty:ty => $nccl:ident;)*) => {
        $(impl NcclType for $ty {
            const DATA_TYPE: sys::ncclDataType_t = sys::ncclDataType_t::$nccl;
        })*
    };
}
nccl_types! {
    i8 => ncclInt8;
    u8 => ncclUint8;
    i32 => ncclInt32;
    u32 => ncclUint32;
    i64 => ncclInt64;
    u64 => ncclUint64;
    half::f16 => ncclFloat16;
    half::bf16 => ncclBfloat16;
    f32 => ncclFloat32;
    f64 => ncclFloat64;
}

/// Whether libnccl can be loaded (cudarc's names: `libnccl.so` and versioned ones), as an error
/// that says what to do where it cannot.
pub(crate) fn available() -> Result<()> {
    // SAFETY: only tries to open the library, as cudarc's loader does.
    if unsafe { sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::NcclUnavailable(
            "libnccl.so was not found on the library path (LD_LIBRARY_PATH); PyTorch's copy is \
             nvidia/nccl/lib/libnccl.so.2 in its site-packages: link it as libnccl.so in a folder \
             on the path (docs/user-guide.md, \"Past one GPU\")"
                .to_owned(),
        ))
    }
}

/// A non-blocking communicator's configuration (NCCL's `NCCL_CONFIG_INITIALIZER` with
/// `blocking = 0`): the fields left undefined take NCCL's defaults.
fn non_blocking_config() -> sys::ncclConfig_t {
    const UNDEFINED: i32 = i32::MIN;
    sys::ncclConfig_t {
        size: size_of::<sys::ncclConfig_t>(),
        magic: 0xcafe_beef,
        version: 22800,
        blocking: 0,
        cgaClusterSize: UNDEFINED,
        minCTAs: UNDEFINED,
        maxCTAs: UNDEFINED,
        netName: std::ptr::null(),
        splitShare: UNDEFINED,
        trafficClass: UNDEFINED,
        commName: std::ptr::null(),
        collnetEnable: UNDEFINED,
        CTAPolicy: UNDEFINED,
        shrinkShare: UNDEFINED,
        nvlsCTAs: UNDEFINED,
        nChannelsPerNetPeer: UNDEFINED,
        nvlinkCentricSched: UNDEFINED,
    }
}

/// NCCL's unique id of a communicator: made by rank 0, given to every rank (128 bytes).
#[derive(Clone, Copy)]
pub struct UniqueId(pub(crate) sys::ncclUniqueId);

impl UniqueId {
    /// A new id (starts NCCL's bootstrap listener in this process: the process that made it
    /// must live until every rank has joined).
    ///
    /// # Errors
    /// [`Error::NcclUnavailable`], [`Error::Nccl`].
    pub fn new() -> Result<Self> {
        available()?;
        cudarc::nccl::result::get_uniqueid()
            .map(Self)
            .map_err(|e| nccl_error("ncclGetUniqueId", e.0, None))
    }

    /// Its 128 bytes, to send to the other ranks.
    pub fn to_bytes(&self) -> [u8; 128] {
        self.0.internal.map(|c| c as u8)
    }

    /// The id of `bytes` (as [`to_bytes`](Self::to_bytes) gave them on rank 0).
    pub fn from_bytes(bytes: [u8; 128]) -> Self {
        Self(sys::ncclUniqueId {
            internal: bytes.map(|b| b as std::ffi::c_char),
        })
    }
}

/// The error of NCCL result `code` from `call`, with the communicator's last message.
pub(crate) fn nccl_error(
    call: &'static str,
    code: sys::ncclResult_t,
    comm: Option<sys::ncclComm_t>,
) -> Error {
    let message = match comm {
        // SAFETY: a live communicator; NCCL returns a NUL-terminated string it owns (or null).
        Some(comm) => unsafe {
            let m = sys::ncclGetLastError(comm);
            if m.is_null() {
                String::new()
            } else {
                CStr::from_ptr(m).to_string_lossy().into_owned()
            }
        },
        None => String::new(),
    };
    Error::Nccl {
        call,
        code: format!("{code:?}"),
        message,
    }
}

/// Where a non-blocking call stands.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Progress {
    Done,
    Pending,
}

/// The progress of a non-blocking call's result `code` (`ncclNumResults` is an error: a newer
/// library's code these bindings do not know, such as 2.30's `ncclTimeout`).
pub(crate) fn progress(
    call: &'static str,
    code: sys::ncclResult_t,
    comm: Option<sys::ncclComm_t>,
) -> Result<Progress> {
    match code {
        sys::ncclResult_t::ncclSuccess => Ok(Progress::Done),
        sys::ncclResult_t::ncclInProgress => Ok(Progress::Pending),
        other => Err(nccl_error(call, other, comm)),
    }
}

/// How long a wait polls without sleeping (see [`Comm::poll`]): a collective of up to a few
/// milliseconds is seen done within a poll's time.
const SPIN: Duration = Duration::from_millis(10);

/// A communicator's NCCL handle: owned, aborted on an error, a timeout or drop.
pub(crate) struct Comm {
    raw: sys::ncclComm_t,
    aborted: bool,
}

// SAFETY: NCCL allows a communicator to be used from any thread, one at a time; `Comm` is used
// through `&mut` (one caller at a time) and holds no thread-bound state.
unsafe impl Send for Comm {}

impl Comm {
    /// Start joining communicator `id` as `rank` of `world_size` on `gpu` (made current for the
    /// call: NCCL takes the current device); [`wait_ready`](Self::wait_ready) finishes it. A
    /// failed start leaves nothing to free.
    pub(crate) fn start(gpu: &Gpu, id: &UniqueId, rank: usize, world_size: usize) -> Result<Self> {
        available()?;
        gpu.bind()?;
        let mut config = non_blocking_config();
        let mut raw: sys::ncclComm_t = std::ptr::null_mut();
        // SAFETY: valid out-pointer and config; the id as rank 0 made it; rank < world_size
        // (checked by the callers), both within i32.
        let code = unsafe {
            sys::ncclCommInitRankConfig(&mut raw, world_size as i32, id.0, rank as i32, &mut config)
        };
        if raw.is_null() {
            return Err(nccl_error("ncclCommInitRankConfig", code, None));
        }
        let mut comm = Self { raw, aborted: false };
        if let Err(e) = progress("ncclCommInitRankConfig", code, Some(raw)) {
            comm.abort();
            return Err(e);
        }
        Ok(comm)
    }

    /// The handle, or [`Error::Aborted`].
    pub(crate) fn raw(&self) -> Result<sys::ncclComm_t> {
        if self.aborted {
            Err(Error::Aborted)
        } else {
            Ok(self.raw)
        }
    }

    /// The progress of the communicator's outstanding calls (`ncclCommGetAsyncError`).
    fn state(&self, what: &'static str) -> Result<Progress> {
        let raw = self.raw()?;
        let mut code = sys::ncclResult_t::ncclSuccess;
        // SAFETY: a live communicator; a valid out-pointer.
        let called = unsafe { sys::ncclCommGetAsyncError(raw, &mut code) };
        progress("ncclCommGetAsyncError", called, Some(raw))?;
        progress(what, code, Some(raw))
    }

    /// Wait until the communicator's outstanding NCCL calls (its initialisation, a group's
    /// end) have finished, or abort it on an error or at `deadline`.
    pub(crate) fn wait_ready(
        &mut self,
        what: &'static str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<()> {
        self.poll(what, deadline, timeout, || Ok(true))
    }

    /// Wait until the collectives just called have run on `stream`, watching the communicator
    /// for errors and `deadline` (aborting it on either: NCCL's kernels that wait for a peer
    /// then end, and the stream drains). A non-blocking call may return before it has queued
    /// its work on the stream: first its state leaves `ncclInProgress` (the work is queued, and
    /// only then may the next NCCL call be made), then an event recorded after it completes.
    pub(crate) fn wait_stream(
        &mut self,
        stream: &Stream,
        what: &'static str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<()> {
        self.wait_ready(what, deadline, timeout)?;
        // An NCCL kernel may still wait for a peer: abort before returning any error, so that
        // it ends before the caller frees what it uses.
        let event = Event::new(stream, false).and_then(|event| event.record(stream).map(|()| event));
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                self.abort();
                return Err(e.into());
            }
        };
        self.poll(what, deadline, timeout, || Ok(event.query()?))
    }

    /// Poll until the communicator is ready and `done` says so, an error, or `deadline`: for
    /// the first [`SPIN`] yielding the thread between polls (a sleep lasts at least Linux's
    /// timer slack, 50 µs, which a small collective's latency would pay several times), then
    /// sleeping between polls, from 10 µs doubling to 100 µs.
    fn poll(
        &mut self,
        what: &'static str,
        deadline: Instant,
        timeout: Duration,
        mut done: impl FnMut() -> Result<bool>,
    ) -> Result<()> {
        let started = Instant::now();
        let mut pause = Duration::from_micros(10);
        loop {
            let state = self.state(what);
            let finished = match state {
                Ok(Progress::Done) => done(),
                Ok(Progress::Pending) => Ok(false),
                Err(e) => Err(e),
            };
            match finished {
                Ok(true) => return Ok(()),
                Ok(false) if Instant::now() < deadline => {
                    if started.elapsed() < SPIN {
                        std::thread::yield_now();
                    } else {
                        std::thread::sleep(pause);
                        pause = (pause * 2).min(Duration::from_micros(100));
                    }
                }
                Ok(false) => {
                    self.abort();
                    return Err(Error::Timeout { what, after: timeout });
                }
                Err(e) => {
                    self.abort();
                    return Err(e);
                }
            }
        }
    }

    /// Abort the communicator (`ncclCommAbort`: frees it, ends its outstanding work); later
    /// calls return [`Error::Aborted`].
    pub(crate) fn abort(&mut self) {
        if !self.aborted {
            self.aborted = true;
            // SAFETY: a live communicator, aborted once (the flag).
            unsafe { sys::ncclCommAbort(self.raw) };
        }
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // Abort rather than finalize and destroy: never blocks on a peer that is gone, as
        // PyTorch's and cudarc's communicators do.
        self.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_is_non_blocking_with_nccl_defaults() {
        let c = non_blocking_config();
        assert_eq!((c.magic, c.version, c.blocking), (0xcafe_beef, 22800, 0));
        assert_eq!(c.size, size_of::<sys::ncclConfig_t>());
        assert_eq!(c.minCTAs, i32::MIN);
        assert!(c.netName.is_null() && c.commName.is_null());
    }

    #[test]
    fn unique_ids_survive_their_bytes() {
        let mut bytes = [0u8; 128];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i * 7 + 200) as u8;
        }
        assert_eq!(UniqueId::from_bytes(bytes).to_bytes(), bytes);
    }

    #[test]
    fn in_progress_is_pending_and_unknown_codes_are_errors() {
        use sys::ncclResult_t::*;
        assert_eq!(progress("x", ncclSuccess, None).unwrap(), Progress::Done);
        assert_eq!(progress("x", ncclInProgress, None).unwrap(), Progress::Pending);
        for code in [ncclNumResults, ncclRemoteError, ncclUnhandledCudaError] {
            let e = progress("ncclAllReduce", code, None).unwrap_err();
            assert!(e.to_string().contains("ncclAllReduce"), "{e}");
        }
    }
}
