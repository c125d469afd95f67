//! [`Context`]: a device's primary context, retained for as long as any handle made in it lives,
//! and [`Current`]: the context pushed as the calling thread's current one for one call, the
//! caller's restored after it.
//!
//! Every handle of this crate ([`Gpu`](crate::Gpu), [`Stream`](crate::Stream),
//! [`DeviceBuffer`](crate::DeviceBuffer), [`Module`](crate::Module), [`Kernel`](crate::Kernel),
//! [`Event`](crate::Event)) holds an `Arc<Context>`, as cudarc's handles hold an
//! `Arc<CudaContext>`: the primary context is released only after the last of them is dropped,
//! whatever the order of drops, so no handle outlives the context it was made in.

use crate::{Result, result, sys};
use std::marker::PhantomData;
use std::sync::Arc;

/// A device's primary context (the one cust, cudarc and the CUDA runtime share), retained once
/// at [`Context::retain`] and released when the last `Arc` to it is dropped.
pub(crate) struct Context {
    raw: sys::CUcontext,
    device: sys::CUdevice,
}

// SAFETY: a context handle may be used from any thread; every use pushes it first (`push`).
unsafe impl Send for Context {}
// SAFETY: as for Send; the handle is never mutated.
unsafe impl Sync for Context {}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: retained once by `retain`, released once here, after every handle holding an
        // `Arc` to it was dropped.
        unsafe { result::primary_context_release(self.device) };
    }
}

impl Context {
    /// Retain `device`'s primary context.
    pub(crate) fn retain(device: sys::CUdevice) -> Result<Arc<Self>> {
        let raw = result::primary_context_retain(device)?;
        Ok(Arc::new(Self { raw, device }))
    }

    /// The driver's handle.
    pub(crate) fn raw(&self) -> sys::CUcontext {
        self.raw
    }

    /// Make this context current on the calling thread until the returned guard is dropped,
    /// which makes the thread's previous current context (if any) current again
    /// (`cuCtxPushCurrent` / `cuCtxPopCurrent`): a library call leaves a caller's current
    /// context (cust's, say) as it found it.
    pub(crate) fn push(&self) -> Result<Current<'_>> {
        // SAFETY: the context is retained for as long as `self`; `Current`'s drop pops it.
        unsafe { result::context_push(self.raw)? };
        Ok(Current {
            _context: self,
            _not_send: PhantomData,
        })
    }
}

/// The context pushed on this thread by [`Context::push`]; popped on drop. Not `Send`: the
/// context stack is the thread's.
pub(crate) struct Current<'a> {
    _context: &'a Context,
    _not_send: PhantomData<*const ()>,
}

impl Drop for Current<'_> {
    fn drop(&mut self) {
        // SAFETY: pops the context `push` pushed on this thread (guards are dropped in reverse
        // order of their pushes, as scopes end).
        unsafe { result::context_pop() };
    }
}
