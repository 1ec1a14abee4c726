// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// _shmchan_fast: the request-and-answer call of the Python package
// (Client.call(), Client.ping2()) in C, for the cost per call that ctypes
// adds (about 1 µs of argument conversion and foreign-call set-up on each,
// docs/python.md). It does not link libgr_api_client: the package hands it
// the address of gr_api_client_send_recv_into() from the library ctypes
// loaded (SHMCHAN_LIBRARY or the loader's), so both use the one library
// and one handle. Without this module (no Python headers at build time)
// the package makes the same call through ctypes.

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <stdint.h>

// gr_api_client_send_recv_into(), as gr_api_client.h declares it.
typedef long (*send_recv_into_fn)(void *, uint32_t, size_t, const void *, void *, size_t);

static send_recv_into_fn send_recv_into;

static PyObject *fast_bind(PyObject *self, PyObject *arg) {
	void *fn = PyLong_AsVoidPtr(arg);

	(void)self;
	if (fn == NULL) {
		if (!PyErr_Occurred())
			PyErr_SetString(
				PyExc_ValueError,
				"bind() takes the function's address, not 0"
			);
		return NULL;
	}
	send_recv_into = (send_recv_into_fn)fn;
	Py_RETURN_NONE;
}

// call(handle, req_type, payload, rx): send a request of req_type with the
// bytes of payload, wait for its answer, and return the answer's payload as
// bytes; rx is a writable buffer the answer is received into first (the
// largest payload). A failure of the library returns -errno, an int, which
// the caller turns into its OSError (with the request named in it). The
// GIL is released while the call waits.
static PyObject *fast_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
	Py_buffer tx, rx;
	unsigned long req_type;
	PyObject *out;
	void *handle;
	long n;
	int err;

	(void)self;
	if (nargs != 4) {
		PyErr_SetString(PyExc_TypeError, "call(handle, req_type, payload, rx)");
		return NULL;
	}
	if (send_recv_into == NULL) {
		PyErr_SetString(PyExc_RuntimeError, "call() before bind()");
		return NULL;
	}
	handle = PyLong_AsVoidPtr(args[0]);
	if (handle == NULL) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "no handle");
		return NULL;
	}
	req_type = PyLong_AsUnsignedLong(args[1]);
	if (req_type == (unsigned long)-1 && PyErr_Occurred())
		return NULL;
	if (req_type > UINT32_MAX) {
		PyErr_Format(PyExc_ValueError, "a request type is 32 bits, not %lu", req_type);
		return NULL;
	}
	if (PyObject_GetBuffer(args[2], &tx, PyBUF_SIMPLE) < 0)
		return NULL;
	if (PyObject_GetBuffer(args[3], &rx, PyBUF_WRITABLE) < 0) {
		PyBuffer_Release(&tx);
		return NULL;
	}
	// Both buffers stay exported (they cannot be resized) while the GIL
	// is released.
	Py_BEGIN_ALLOW_THREADS n = send_recv_into(
		handle,
		(uint32_t)req_type,
		(size_t)tx.len,
		tx.len > 0 ? tx.buf : NULL,
		rx.buf,
		(size_t)rx.len
	);
	err = errno;
	Py_END_ALLOW_THREADS if (n < 0) out = PyLong_FromLong(-(long)err);
	else if (n > rx.len) out =
		PyErr_Format(PyExc_RuntimeError, "an answer of %ld bytes in %zd", n, rx.len);
	else out = PyBytes_FromStringAndSize(rx.buf, (Py_ssize_t)n);
	PyBuffer_Release(&rx);
	PyBuffer_Release(&tx);
	return out;
}

static PyMethodDef fast_methods[] = {
	{"bind", fast_bind, METH_O, "bind(address): use the gr_api_client_send_recv_into() there."},
	{"call",
	 (PyCFunction)(void (*)(void))fast_call,
	 METH_FASTCALL,
	 "call(handle, req_type, payload, rx) -> bytes, or -errno when the call failed."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef fast_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "_shmchan_fast",
	.m_doc = "The request-and-answer call of the shmchan package, without ctypes.",
	.m_size = -1,
	.m_methods = fast_methods,
};

PyMODINIT_FUNC PyInit__shmchan_fast(void);

PyMODINIT_FUNC PyInit__shmchan_fast(void) {
	return PyModule_Create(&fast_module);
}
