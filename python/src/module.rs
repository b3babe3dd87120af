//! The module object, declared by hand through the C API rather than with pyo3's
//! macros (see python/Cargo.toml: the macros would rebuild polars). Each function takes
//! its arguments as a tuple; [`guard`] turns a Rust error or panic into a Python
//! exception, so nothing unwinds into the interpreter.

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{addr_of_mut, null_mut};

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Runs `f` on the arguments tuple of a C call, returning a new reference or null with
/// a Python exception set.
fn guard(
    args: *mut ffi::PyObject,
    f: fn(Python<'_>, &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>>,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls module functions attached to the interpreter.
    let py = unsafe { Python::assume_attached() };
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `args` is the borrowed arguments tuple of a METH_VARARGS call.
        let args = unsafe { Bound::from_borrowed_ptr(py, args) };
        let args = args.cast_into::<PyTuple>()?;
        f(py, &args)
    }));
    let result = match result {
        Ok(r) => r,
        Err(panic) => Err(PyRuntimeError::new_err(format!(
            "internal error in rbf (a bug, please report it): {}",
            crate::call::panic_message(&*panic)
        ))),
    };
    match result {
        Ok(obj) => obj.into_ptr(),
        Err(e) => {
            e.restore(py);
            null_mut()
        }
    }
}

unsafe extern "C" fn call(_m: *mut ffi::PyObject, args: *mut ffi::PyObject) -> *mut ffi::PyObject {
    guard(args, crate::call::call)
}

unsafe extern "C" fn schema(
    _m: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    guard(args, crate::schema::schema)
}

const fn method(name: &'static [u8], f: ffi::PyCFunction, doc: &'static [u8]) -> ffi::PyMethodDef {
    ffi::PyMethodDef {
        ml_name: name.as_ptr().cast::<c_char>(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunction: f },
        ml_flags: ffi::METH_VARARGS,
        ml_doc: doc.as_ptr().cast::<c_char>(),
    }
}

static mut METHODS: [ffi::PyMethodDef; 3] = [
    method(
        b"call\0",
        call,
        b"call(argv, keys, prehashed, outputs) -> str\n\nRuns the rbf command line `argv` \
(without the program name) and returns what it prints on stdout. `keys`: None, or keys \
in memory read instead of the trace paths. `outputs`: a list the paths of written \
output directories are appended to.\0",
    ),
    method(
        b"schema\0",
        schema,
        b"schema() -> str\n\nEvery command's flags as JSON: name, flag, kind, default, \
help.\0",
    ),
    ffi::PyMethodDef::zeroed(),
];

static mut MODULE: ffi::PyModuleDef = ffi::PyModuleDef {
    m_base: ffi::PyModuleDef_HEAD_INIT,
    m_name: c"rbf._native".as_ptr(),
    m_doc: c"The rbf command line's code, called by the rbf package.".as_ptr(),
    m_size: 0,
    m_methods: null_mut(),
    m_slots: null_mut(),
    m_traverse: None,
    m_clear: None,
    m_free: None,
};

/// The module's entry point, found by the interpreter by its name.
///
/// # Safety
/// Called once by the interpreter's import machinery, attached to it.
#[no_mangle]
pub unsafe extern "C" fn PyInit__native() -> *mut ffi::PyObject {
    // SAFETY: the import machinery runs this once, under the interpreter's lock, before
    // anything reads the definitions.
    unsafe {
        MODULE.m_methods = addr_of_mut!(METHODS).cast::<ffi::PyMethodDef>();
        ffi::PyModule_Create(addr_of_mut!(MODULE))
    }
}
