//! The CUDA driver API, loaded at run time.
//!
//! numabench does not link against CUDA: `libcuda.so.1` (the driver's own
//! library, installed with the kernel driver, not the toolkit) is opened
//! with `dlopen` when `numabench pcie` runs, and the few entry points it
//! needs are looked up with `dlsym`. A machine without the library gets a
//! [`LoadError`], not a failure to start. `NUMABENCH_LIBCUDA` names another
//! file to open instead (a driver outside the loader's path, or a stand-in
//! for tests).
//!
//! Every `unsafe` of the crate's CUDA use is in this module, each in a small
//! function with its reason; the rest of the crate sees safe types:
//! [`Driver`] → [`Context`] → [`DeviceMemory`], [`Registered`] host memory
//! and [`Event`]s, each released on drop (in reverse order, as the borrows
//! force). Every `CUresult` is checked; a failure is a [`CudaError`] naming
//! the call and the driver's description of the code.
//!
//! Where the driver exports `_v2` names (the 64-bit `CUdeviceptr` and
//! `size_t` ABI) those are used, as the CUDA headers do by default.
//!
//! A context is current only on the thread that created it, so the types
//! holding one are neither `Send` nor `Sync` (raw pointers inside), and
//! calls made while another context is current fail with a CUDA error
//! rather than doing anything unsound.

mod context;
pub(crate) use context::{Context, CopyDirection, DeviceMemory, Event, Registered};

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::fmt;

/// The library opened by default.
pub(crate) const LIBRARY: &str = "libcuda.so.1";
/// Environment variable naming another library file to open instead.
pub(crate) const LIBRARY_ENV: &str = "NUMABENCH_LIBCUDA";

/// `CUresult`: 0 is success, anything else an error code.
pub(crate) type CuResult = c_int;
/// `CUDA_SUCCESS`.
pub(crate) const CUDA_SUCCESS: CuResult = 0;
/// `CUDA_ERROR_NO_DEVICE`: the driver is installed but sees no GPU.
pub(crate) const CUDA_ERROR_NO_DEVICE: CuResult = 100;
/// `CUDA_ERROR_INVALID_VALUE`.
pub(crate) const CUDA_ERROR_INVALID_VALUE: CuResult = 1;

type CuDevice = c_int;
type CuContext = *mut c_void;
type CuDevicePtr = u64;
type CuEvent = *mut c_void;
type CuStream = *mut c_void;

/// `CU_EVENT_DEFAULT`.
const EVENT_DEFAULT: c_uint = 0;
/// `cuMemHostRegister` flags: 0 pins the range for the current context,
/// which is the only one using it here (`CU_MEMHOSTREGISTER_PORTABLE`
/// would pin it for every context).
const HOST_REGISTER_DEFAULT: c_uint = 0;
/// The legacy default stream (0), on which the synchronous `cuMemcpy*`
/// calls run, so events recorded on it bracket them.
const DEFAULT_STREAM: CuStream = std::ptr::null_mut();

/// Why the driver library cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LoadError {
    /// `dlopen` found no such file: no NVIDIA driver installed.
    #[error("{library} not found")]
    NotFound { library: String },
    /// `dlopen` failed otherwise (a file of another architecture, a
    /// missing dependency), with the loader's reason.
    #[error("{library} cannot be loaded: {reason}")]
    Unloadable { library: String, reason: String },
    /// The library opened but lacks an entry point: not a CUDA driver, or
    /// one too old.
    #[error("{library} has no {symbol} (not a CUDA driver library, or one too old)")]
    MissingSymbol {
        library: String,
        symbol: &'static str,
    },
}

impl LoadError {
    /// True when there is no usable library at all (as opposed to one
    /// that loads but lacks an entry point): the machine has no CUDA
    /// driver to measure with.
    pub(crate) fn is_absent(&self) -> bool {
        !matches!(self, LoadError::MissingSymbol { .. })
    }
}

/// A CUDA call that returned an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {text} (CUDA error {code})")]
pub(crate) struct CudaError {
    /// The driver function, e.g. `cuMemAlloc_v2`.
    pub call: &'static str,
    pub code: CuResult,
    /// `cuGetErrorString`'s text, or `unknown error` when it has none.
    pub text: String,
}

/// Declares the entry points: one field per symbol, all returning
/// `CUresult`, looked up by the field's name.
macro_rules! entry_points {
    ($($sym:ident: fn($($arg:ty),*);)*) => {
        #[allow(non_snake_case)]
        struct Api {
            $($sym: unsafe extern "C" fn($($arg),*) -> CuResult,)*
        }

        impl Api {
            /// Looks every entry point up in `handle`.
            fn load(handle: Handle, library: &str) -> Result<Api, LoadError> {
                Ok(Api {
                    $($sym: {
                        let name = stringify!($sym);
                        let p = handle.symbol(name).ok_or_else(|| LoadError::MissingSymbol {
                            library: library.to_string(),
                            symbol: name,
                        })?;
                        // SAFETY: `p` is the address of the driver's
                        // exported function of this name, whose C
                        // prototype (cuda.h) the field's type spells out.
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> CuResult>(p)
                        }
                    },)*
                })
            }
        }
    };
}

entry_points! {
    cuInit: fn(c_uint);
    cuDeviceGetCount: fn(*mut c_int);
    cuDeviceGet: fn(*mut CuDevice, c_int);
    cuDeviceGetName: fn(*mut c_char, c_int, CuDevice);
    cuDeviceGetPCIBusId: fn(*mut c_char, c_int, CuDevice);
    cuCtxCreate_v2: fn(*mut CuContext, c_uint, CuDevice);
    cuCtxDestroy_v2: fn(CuContext);
    cuCtxSynchronize: fn();
    cuMemAlloc_v2: fn(*mut CuDevicePtr, usize);
    cuMemFree_v2: fn(CuDevicePtr);
    cuMemHostRegister_v2: fn(*mut c_void, usize, c_uint);
    cuMemHostUnregister: fn(*mut c_void);
    cuMemcpyHtoD_v2: fn(CuDevicePtr, *const c_void, usize);
    cuMemcpyDtoH_v2: fn(*mut c_void, CuDevicePtr, usize);
    cuEventCreate: fn(*mut CuEvent, c_uint);
    cuEventRecord: fn(CuEvent, CuStream);
    cuEventSynchronize: fn(CuEvent);
    cuEventElapsedTime: fn(*mut f32, CuEvent, CuEvent);
    cuEventDestroy_v2: fn(CuEvent);
    cuGetErrorString: fn(CuResult, *mut *const c_char);
}

/// A `dlopen` handle.
#[derive(Clone, Copy)]
struct Handle(*mut c_void);

impl Handle {
    /// `dlopen(path, RTLD_NOW | RTLD_LOCAL)`, with `dlerror`'s text on
    /// failure.
    fn open(path: &str) -> Result<Handle, String> {
        let c_path = CString::new(path).map_err(|_| "the name holds a NUL byte".to_string())?;
        // SAFETY: `c_path` is a valid NUL-terminated string for the call's
        // duration. Opening runs the library's initialisers, which for the
        // CUDA driver (and any library a user points NUMABENCH_LIBCUDA at)
        // is what loading it means.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            Err(dl_error().unwrap_or_else(|| "dlopen failed".into()))
        } else {
            Ok(Handle(handle))
        }
    }

    /// The address of `name`, or `None` when the library does not export it.
    fn symbol(self, name: &str) -> Option<*mut c_void> {
        let c_name = CString::new(name).ok()?;
        // SAFETY: the handle came from a successful dlopen and is never
        // closed; `c_name` is NUL-terminated.
        let p = unsafe { libc::dlsym(self.0, c_name.as_ptr()) };
        (!p.is_null()).then_some(p)
    }
}

/// The text of the last `dlopen`/`dlsym` error of this thread.
fn dl_error() -> Option<String> {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by the
    // loader, valid until the next dl* call on this thread; it is copied at
    // once.
    unsafe {
        let p = libc::dlerror();
        (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

/// Turns a status into a result, describing failures with
/// `cuGetErrorString`.
fn check(api: &Api, call: &'static str, code: CuResult) -> Result<(), CudaError> {
    if code == CUDA_SUCCESS {
        return Ok(());
    }
    Err(CudaError {
        call,
        code,
        text: error_text(api, code),
    })
}

fn error_text(api: &Api, code: CuResult) -> String {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: `text` is a valid out-pointer; the driver stores a pointer to
    // a static string (or leaves it NULL for an unknown code).
    let status = unsafe { (api.cuGetErrorString)(code, &mut text) };
    if status != CUDA_SUCCESS || text.is_null() {
        return "unknown error".into();
    }
    // SAFETY: non-NULL, the driver's documented static NUL-terminated text.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// Reads a string the driver writes into a caller's buffer.
fn c_buffer_text(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        // c_char is i8 on x86 and u8 on Arm: take its byte either way.
        .map(|&c| c.to_ne_bytes()[0])
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The loaded driver library. It stays loaded until the process exits:
/// the driver starts threads of its own, and unloading it under them is
/// not safe.
pub(crate) struct Driver {
    library: String,
    api: Api,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("library", &self.library)
            .finish_non_exhaustive()
    }
}

/// A GPU as the driver numbers it (`CUdevice`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Device(CuDevice);

impl Driver {
    /// Opens `$NUMABENCH_LIBCUDA` when set and not empty, else
    /// [`LIBRARY`], and looks up every entry point.
    pub(crate) fn load() -> Result<Driver, LoadError> {
        let path = std::env::var(LIBRARY_ENV)
            .ok()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| LIBRARY.to_string());
        Self::load_from(&path)
    }

    /// Opens the library at `path` (a name for the loader's search, or a
    /// path) and looks up every entry point.
    pub(crate) fn load_from(path: &str) -> Result<Driver, LoadError> {
        // dlopen opens and reads whatever a path names: a FIFO would block
        // it for good, a device would be read from. Only a regular file
        // (through links) can be a library.
        if path.contains('/')
            && let Ok(meta) = std::fs::metadata(path)
            && !meta.is_file()
        {
            return Err(LoadError::Unloadable {
                library: path.to_string(),
                reason: format!(
                    "it is {}, not a library file",
                    crate::results::describe_file(&meta)
                ),
            });
        }
        let handle = Handle::open(path).map_err(|reason| {
            let library = path.to_string();
            if reason.contains("cannot open shared object file")
                || reason.contains("No such file or directory")
            {
                LoadError::NotFound { library }
            } else {
                LoadError::Unloadable { library, reason }
            }
        })?;
        let api = Api::load(handle, path)?;
        Ok(Driver {
            library: path.to_string(),
            api,
        })
    }

    /// The library name or path that was opened.
    pub(crate) fn library(&self) -> &str {
        &self.library
    }

    /// `cuInit(0)`. Fails with [`CUDA_ERROR_NO_DEVICE`] where the driver is
    /// installed but no GPU is visible.
    pub(crate) fn init(&self) -> Result<(), CudaError> {
        // SAFETY: cuInit takes a flags word (must be 0) and no pointers.
        let code = unsafe { (self.api.cuInit)(0) };
        check(&self.api, "cuInit", code)
    }

    /// The number of GPUs the driver shows this process (after
    /// `CUDA_VISIBLE_DEVICES`).
    pub(crate) fn device_count(&self) -> Result<usize, CudaError> {
        let mut n: c_int = 0;
        // SAFETY: `n` is a valid out-pointer for one int.
        let code = unsafe { (self.api.cuDeviceGetCount)(&mut n) };
        check(&self.api, "cuDeviceGetCount", code)?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// The device of ordinal `ordinal` (0-based, in the driver's order).
    pub(crate) fn device(&self, ordinal: usize) -> Result<Device, CudaError> {
        let ord = c_int::try_from(ordinal).map_err(|_| CudaError {
            call: "cuDeviceGet",
            code: CUDA_ERROR_INVALID_VALUE,
            text: format!("ordinal {ordinal} is out of range"),
        })?;
        let mut dev: CuDevice = 0;
        // SAFETY: `dev` is a valid out-pointer; the ordinal is checked by
        // the driver.
        let code = unsafe { (self.api.cuDeviceGet)(&mut dev, ord) };
        check(&self.api, "cuDeviceGet", code)?;
        Ok(Device(dev))
    }

    /// The device's marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub(crate) fn device_name(&self, dev: Device) -> Result<String, CudaError> {
        let mut buf = [0 as c_char; 256];
        // SAFETY: the driver writes at most `len` bytes, NUL included, into
        // `buf`, which is that long.
        let code =
            unsafe { (self.api.cuDeviceGetName)(buf.as_mut_ptr(), buf.len() as c_int, dev.0) };
        check(&self.api, "cuDeviceGetName", code)?;
        Ok(c_buffer_text(&buf))
    }

    /// The device's PCI address, `domain:bus:device.function` in hex, e.g.
    /// `0000:3B:00.0` (upper case, unlike sysfs).
    pub(crate) fn pci_bus_id(&self, dev: Device) -> Result<String, CudaError> {
        let mut buf = [0 as c_char; 64];
        // SAFETY: as for `device_name`: at most `len` bytes into `buf`.
        let code =
            unsafe { (self.api.cuDeviceGetPCIBusId)(buf.as_mut_ptr(), buf.len() as c_int, dev.0) };
        check(&self.api, "cuDeviceGetPCIBusId", code)?;
        Ok(c_buffer_text(&buf))
    }

    /// Creates a context on `dev` and makes it current on this thread; it is
    /// destroyed when the [`Context`] drops.
    pub(crate) fn create_context(&self, dev: Device) -> Result<Context<'_>, CudaError> {
        let mut ctx: CuContext = std::ptr::null_mut();
        // SAFETY: `ctx` is a valid out-pointer; flags 0 = CU_CTX_SCHED_AUTO.
        let code = unsafe { (self.api.cuCtxCreate_v2)(&mut ctx, 0, dev.0) };
        check(&self.api, "cuCtxCreate_v2", code)?;
        Ok(Context { driver: self, ctx })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_a_load_error_not_a_crash() {
        let err = Driver::load_from("/nonexistent/libcuda.so.1").unwrap_err();
        assert_eq!(
            err,
            LoadError::NotFound {
                library: "/nonexistent/libcuda.so.1".into()
            }
        );
        assert_eq!(err.to_string(), "/nonexistent/libcuda.so.1 not found");
        assert!(err.is_absent());
        let err = Driver::load_from("libcuda-no-such-name.so.1").unwrap_err();
        assert_eq!(err.to_string(), "libcuda-no-such-name.so.1 not found");
    }

    #[test]
    fn a_file_that_is_no_library_cannot_be_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libcuda.so.1");
        std::fs::write(&path, b"not an ELF file").unwrap();
        let path = path.to_str().unwrap();
        let err = Driver::load_from(path).unwrap_err();
        assert!(
            matches!(&err, LoadError::Unloadable { library, reason } if library == path && !reason.is_empty()),
            "{err:?}"
        );
        assert!(err.is_absent());
    }

    #[test]
    fn a_fifo_or_directory_is_refused_without_opening_it() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("libcuda.so.1");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // dlopen on a FIFO with no writer would block this test for good.
        for (path, kind) in [(fifo.as_path(), "a FIFO"), (dir.path(), "a directory")] {
            let p = path.to_str().unwrap();
            let err = Driver::load_from(p).unwrap_err();
            assert_eq!(
                err,
                LoadError::Unloadable {
                    library: p.into(),
                    reason: format!("it is {kind}, not a library file")
                }
            );
        }
    }

    #[test]
    fn a_library_without_the_entry_points_is_named() {
        // libc is loaded in every process and exports none of cu*.
        let err = Driver::load_from("libc.so.6").unwrap_err();
        assert_eq!(
            err,
            LoadError::MissingSymbol {
                library: "libc.so.6".into(),
                symbol: "cuInit"
            }
        );
        assert_eq!(
            err.to_string(),
            "libc.so.6 has no cuInit (not a CUDA driver library, or one too old)"
        );
        assert!(!err.is_absent());
    }

    #[test]
    fn cuda_errors_are_one_line_with_the_call() {
        let e = CudaError {
            call: "cuMemAlloc_v2",
            code: 2,
            text: "out of memory".into(),
        };
        assert_eq!(
            e.to_string(),
            "cuMemAlloc_v2 failed: out of memory (CUDA error 2)"
        );
    }

    #[test]
    fn driver_strings_stop_at_the_nul() {
        let mut buf = [0 as c_char; 8];
        for (i, b) in b"0000:3B".iter().enumerate() {
            buf[i] = *b as c_char;
        }
        assert_eq!(c_buffer_text(&buf), "0000:3B");
        assert_eq!(c_buffer_text(&[0; 4]), "");
    }
}
