//! [`Event`]: a point in a stream's work, to order another stream after it or to time work.

use crate::context::Context;
use crate::{Result, Stream, result, sys};
use std::sync::Arc;
use std::time::Duration;

/// A CUDA event of one context: recorded on a stream ([`Event::record`]), it completes when the
/// work queued there before it has run; another stream can wait for it ([`Stream::wait`])
/// without the host waiting. Destroyed on drop (the driver lets a pending event finish first).
pub struct Event {
    raw: sys::CUevent,
    context: Arc<Context>,
}

// SAFETY: an event handle may be used from any thread; each use pushes its context first.
unsafe impl Send for Event {}
// SAFETY: as for Send; the handle is never mutated (recording is the driver's, synchronised).
unsafe impl Sync for Event {}

impl Drop for Event {
    fn drop(&mut self) {
        if let Ok(_current) = self.context.push() {
            // SAFETY: created by `create`, destroyed once here, its context current.
            unsafe { result::event_destroy(self.raw) };
        }
        crate::fault::count_event(-1);
    }
}

impl Event {
    /// A new event of `stream`'s context; `timing`: whether it records a time
    /// ([`Event::elapsed_since`]); events without are cheaper for ordering.
    ///
    /// # Errors
    /// Driver errors.
    pub fn new(stream: &Stream, timing: bool) -> Result<Self> {
        Self::create(stream.context(), timing)
    }

    pub(crate) fn create(context: &Arc<Context>, timing: bool) -> Result<Self> {
        let _current = context.push()?;
        let flags = if timing {
            0
        } else {
            sys::CUevent_flags_enum::CU_EVENT_DISABLE_TIMING as u32
        };
        let raw = result::event_create(flags)?;
        crate::fault::count_event(1);
        Ok(Self {
            raw,
            context: Arc::clone(context),
        })
    }

    /// Record the event on `stream`: it completes when the work queued there so far has run.
    ///
    /// # Errors
    /// [`Error::WrongContext`](crate::Error::WrongContext) for a stream of another context;
    /// driver errors.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        stream.check_context(&self.context, "recording an event")?;
        let _current = self.context.push()?;
        // SAFETY: a live event and stream of the current context.
        unsafe { result::event_record(self.raw, stream.as_raw()) }
    }

    /// Wait on the host until the work before the event's last record has run.
    ///
    /// # Errors
    /// Errors of that work (a failed kernel).
    pub fn synchronize(&self) -> Result<()> {
        let _current = self.context.push()?;
        // SAFETY: a live event.
        unsafe { result::event_synchronize(self.raw) }
    }

    /// Whether the work before the event's last record has run, without waiting (for a wait
    /// that must also watch a deadline or another condition, such as a collective whose peer
    /// may never join).
    ///
    /// # Errors
    /// Errors of that work (a failed kernel); driver errors.
    pub fn query(&self) -> Result<bool> {
        let _current = self.context.push()?;
        // SAFETY: a live event.
        unsafe { result::event_query(self.raw) }
    }

    /// Time from `start`'s record to this event's, both recorded with timing and completed.
    ///
    /// # Errors
    /// Driver errors (an event without timing, or not recorded).
    pub fn elapsed_since(&self, start: &Event) -> Result<Duration> {
        let _current = self.context.push()?;
        // SAFETY: two live events.
        let ms = unsafe { result::event_elapsed_ms(start.raw, self.raw)? };
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }

    /// The driver handle of the event's context.
    pub fn context_raw(&self) -> sys::CUcontext {
        self.context.raw()
    }

    /// The driver's handle.
    pub fn as_raw(&self) -> sys::CUevent {
        self.raw
    }
}
