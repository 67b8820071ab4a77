//! What a [`Context`] holds: device memory, page-locked host memory and
//! events, each released on drop, and the copies between them. Every
//! `unsafe` here is one driver call on a handle this context made.

use super::{
    Api, CUDA_ERROR_INVALID_VALUE, CuContext, CuDevicePtr, CuEvent, CudaError, DEFAULT_STREAM,
    Driver, EVENT_DEFAULT, HOST_REGISTER_DEFAULT, check,
};
use crate::memory::Buffer;
use std::ffi::c_void;

/// A CUDA context, current on the thread that created it. Only one is
/// meant to exist at a time: calls through one that is not current fail.
pub(crate) struct Context<'d> {
    pub(super) driver: &'d Driver,
    pub(super) ctx: CuContext,
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: `ctx` came from cuCtxCreate_v2 and is destroyed once; the
        // memory, registrations and events made in it borrow this Context
        // and so are already released. An error here cannot be acted on.
        let _ = unsafe { (self.driver.api.cuCtxDestroy_v2)(self.ctx) };
    }
}

/// Which way a copy goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum CopyDirection {
    /// Host to device (SHOC's BusSpeedDownload): `cuMemcpyHtoD_v2`.
    HostToDevice,
    /// Device to host (SHOC's BusSpeedReadback): `cuMemcpyDtoH_v2`.
    DeviceToHost,
}

impl Context<'_> {
    fn api(&self) -> &Api {
        &self.driver.api
    }

    /// `cuCtxSynchronize`: waits for all work of the context.
    pub(crate) fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: no arguments; acts on the current context.
        let code = unsafe { (self.api().cuCtxSynchronize)() };
        check(self.api(), "cuCtxSynchronize", code)
    }

    /// `len` bytes of device memory, freed on drop.
    pub(crate) fn alloc(&self, len: usize) -> Result<DeviceMemory<'_>, CudaError> {
        let mut ptr: CuDevicePtr = 0;
        // SAFETY: `ptr` is a valid out-pointer.
        let code = unsafe { (self.api().cuMemAlloc_v2)(&mut ptr, len) };
        check(self.api(), "cuMemAlloc_v2", code)?;
        Ok(DeviceMemory {
            ctx: self,
            ptr,
            len,
        })
    }

    /// Page-locks (pins) `buf` with `cuMemHostRegister_v2`, so the GPU
    /// copies to and from it by DMA from the node where its pages are. The
    /// whole mapping (`buf.mapped_len()`, whole pages) is registered; it is
    /// unregistered when the [`Registered`] drops, which the borrow makes
    /// happen before `buf` can be dropped or moved.
    pub(crate) fn register<'b>(&'b self, buf: &'b mut Buffer) -> Result<Registered<'b>, CudaError> {
        let len = buf.mapped_len();
        let ptr = buf.as_mut_ptr().cast::<c_void>();
        // SAFETY: `ptr..ptr + len` is the buffer's mapping, page aligned and
        // readable and writable; the exclusive borrow held by `Registered`
        // keeps it mapped and unaliased until it is unregistered.
        let code = unsafe { (self.api().cuMemHostRegister_v2)(ptr, len, HOST_REGISTER_DEFAULT) };
        check(self.api(), "cuMemHostRegister_v2", code)?;
        Ok(Registered { ctx: self, buf })
    }

    /// An event, destroyed on drop.
    pub(crate) fn event(&self) -> Result<Event<'_>, CudaError> {
        let mut ev: CuEvent = std::ptr::null_mut();
        // SAFETY: `ev` is a valid out-pointer; flags 0 = CU_EVENT_DEFAULT
        // (timing enabled).
        let code = unsafe { (self.api().cuEventCreate)(&mut ev, EVENT_DEFAULT) };
        check(self.api(), "cuEventCreate", code)?;
        Ok(Event { ctx: self, ev })
    }

    /// Copies the first `len` bytes between `host` and `dev` in
    /// `direction` (synchronous: returns when the copy is done, pinned host
    /// memory included).
    pub(crate) fn copy(
        &self,
        direction: CopyDirection,
        host: &mut Registered<'_>,
        dev: &DeviceMemory<'_>,
        len: usize,
    ) -> Result<(), CudaError> {
        let call = match direction {
            CopyDirection::HostToDevice => "cuMemcpyHtoD_v2",
            CopyDirection::DeviceToHost => "cuMemcpyDtoH_v2",
        };
        if len > host.len().min(dev.len) {
            return Err(CudaError {
                call,
                code: CUDA_ERROR_INVALID_VALUE,
                text: format!(
                    "{len} bytes do not fit the host buffer ({}) or the device buffer ({})",
                    host.len(),
                    dev.len
                ),
            });
        }
        let host_ptr = host.buf.as_mut_ptr().cast::<c_void>();
        let code = match direction {
            // SAFETY: `len` bytes are readable at `host_ptr` (checked
            // above, the buffer is mapped while borrowed) and writable at
            // `dev.ptr`, an allocation of at least `len` bytes.
            CopyDirection::HostToDevice => unsafe {
                (self.api().cuMemcpyHtoD_v2)(dev.ptr, host_ptr.cast_const(), len)
            },
            // SAFETY: as above with the roles swapped; `host` is borrowed
            // mutably, so nothing else reads or writes those bytes while the
            // driver writes them.
            CopyDirection::DeviceToHost => unsafe {
                (self.api().cuMemcpyDtoH_v2)(host_ptr, dev.ptr, len)
            },
        };
        check(self.api(), call, code)
    }

    /// Times one copy with events recorded on the default stream around
    /// it (SHOC's method); returns seconds.
    pub(crate) fn timed_copy(
        &self,
        direction: CopyDirection,
        host: &mut Registered<'_>,
        dev: &DeviceMemory<'_>,
        len: usize,
        start: &Event<'_>,
        stop: &Event<'_>,
    ) -> Result<f64, CudaError> {
        start.record()?;
        self.copy(direction, host, dev, len)?;
        stop.record()?;
        stop.synchronize()?;
        Ok(f64::from(start.elapsed_ms(stop)?) / 1e3)
    }
}

/// Device memory from `cuMemAlloc_v2`, freed on drop.
pub(crate) struct DeviceMemory<'c> {
    ctx: &'c Context<'c>,
    ptr: CuDevicePtr,
    len: usize,
}

impl Drop for DeviceMemory<'_> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cuMemAlloc_v2 in this context and is freed
        // once; no copy can be in flight (copies are synchronous).
        let _ = unsafe { (self.ctx.api().cuMemFree_v2)(self.ptr) };
    }
}

/// A host [`Buffer`] page-locked for the GPU; unregistered on drop.
pub(crate) struct Registered<'b> {
    ctx: &'b Context<'b>,
    buf: &'b mut Buffer,
}

impl Registered<'_> {
    /// The buffer's requested length (copies may use up to this much).
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let ptr = self.buf.as_mut_ptr().cast::<c_void>();
        // SAFETY: `ptr` is the start of a range registered by
        // `Context::register` and still mapped (the buffer is borrowed);
        // copies are synchronous, so no DMA uses it any more.
        let _ = unsafe { (self.ctx.api().cuMemHostUnregister)(ptr) };
    }
}

/// A CUDA event, destroyed on drop.
pub(crate) struct Event<'c> {
    ctx: &'c Context<'c>,
    ev: CuEvent,
}

impl Event<'_> {
    /// `cuEventRecord` on the default stream.
    pub(crate) fn record(&self) -> Result<(), CudaError> {
        // SAFETY: `ev` is a live event of this context; stream 0 is the
        // legacy default stream.
        let code = unsafe { (self.ctx.api().cuEventRecord)(self.ev, DEFAULT_STREAM) };
        check(self.ctx.api(), "cuEventRecord", code)
    }

    /// `cuEventSynchronize`: waits until the event has happened.
    pub(crate) fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: `ev` is a live event of this context.
        let code = unsafe { (self.ctx.api().cuEventSynchronize)(self.ev) };
        check(self.ctx.api(), "cuEventSynchronize", code)
    }

    /// Milliseconds from this event to `later` (both recorded and done).
    pub(crate) fn elapsed_ms(&self, later: &Event<'_>) -> Result<f32, CudaError> {
        let mut ms: f32 = 0.0;
        // SAFETY: `ms` is a valid out-pointer; both events are live.
        let code = unsafe { (self.ctx.api().cuEventElapsedTime)(&mut ms, self.ev, later.ev) };
        check(self.ctx.api(), "cuEventElapsedTime", code)?;
        Ok(ms)
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        // SAFETY: `ev` came from cuEventCreate and is destroyed once.
        let _ = unsafe { (self.ctx.api().cuEventDestroy_v2)(self.ev) };
    }
}
