"""burncc from Python: ONNX models compiled by burncc, run on NumPy arrays.

    import numpy as np, burncc
    model = burncc.load("lenet.onnx")          # compiled once, for this CPU
    model.inputs                               # [Tensor('x', float32, (2, 1, 28, 28))]
    (y,) = model(np.zeros((2, 1, 28, 28), np.float32))
    outs = model.run({"x": x})                 # the same, inputs by name

This is libburn's model API (include/burn.h, "ONNX models") through
ctypes: the model is compiled by the same passes as `burncc MODEL.onnx`,
for the llvm target, in process; compiled kernels are kept in burncc's
disk cache (`burncc cache path`), so loading the same model again
compiles nothing.  libburn.so is found through $BURNCC_LIBRARY, else
beside this package as installed (PREFIX/lib/libburn.so for
PREFIX/lib/python3/dist-packages/burncc), else on the loader's path.
Needs only NumPy.  A Model belongs to one thread at a time.
"""
import ctypes
import ctypes.util
import os

import numpy as np

__all__ = ["load", "compile", "Model", "Tensor", "BurnError"]

# ONNX TensorProto data types <-> NumPy (burn_dtype's values)
_NP = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
       6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64,
       12: np.uint32, 13: np.uint64}


class BurnError(RuntimeError):
    """A libburn call failed: .status is its burn_status, the text its
    message (file, node and op where the compiler knows them)."""

    def __init__(self, status, message):
        super().__init__(message or "burn status %d" % status)
        self.status = status


class _Options(ctypes.Structure):   # burn_options
    _fields_ = [("threads", ctypes.c_int), ("memory_cap", ctypes.c_int64),
                ("cache_dir", ctypes.c_char_p), ("cache_bytes", ctypes.c_int64),
                ("max_pending", ctypes.c_int), ("no_fuse", ctypes.c_int),
                ("device", ctypes.c_int)]   # burn_device: 0 the CPU


class _Info(ctypes.Structure):      # burn_model_info
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int), ("dims", ctypes.POINTER(ctypes.c_int64)),
                ("bytes", ctypes.c_int64)]


_lib = None


def _library():
    global _lib
    if _lib is not None:
        return _lib
    here = os.path.dirname(os.path.abspath(__file__))
    tried = [os.environ.get("BURNCC_LIBRARY"),
             os.path.join(here, "..", "..", "..", "libburn.so"),
             ctypes.util.find_library("burn")]
    for path in tried:
        if path and (os.path.exists(path) or not os.path.dirname(path)):
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError:
                continue
    else:
        raise ImportError("burncc: libburn.so not found (set BURNCC_LIBRARY, or "
                          "make install); tried %s" % [t for t in tried if t])
    P, c = ctypes.POINTER, ctypes
    sig = {
        "burn_ctx_create": (c.c_int, [P(_Options), P(c.c_void_p)]),
        "burn_ctx_destroy": (None, [c.c_void_p]),
        "burn_message": (c.c_char_p, [c.c_void_p]),
        "burn_model_load": (c.c_int, [c.c_void_p, c.c_char_p, c.c_int, P(c.c_char_p),
                                      P(c.c_int64), P(c.c_void_p)]),
        "burn_model_destroy": (None, [c.c_void_p]),
        "burn_model_num_inputs": (c.c_int, [c.c_void_p]),
        "burn_model_num_outputs": (c.c_int, [c.c_void_p]),
        "burn_model_tensor": (c.c_int, [c.c_void_p, c.c_int, c.c_int, P(_Info)]),
        "burn_model_run": (c.c_int, [c.c_void_p, P(c.c_void_p), P(c.c_void_p)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


class Tensor:
    """An input or output of a model: name, NumPy dtype, shape."""

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, shape

    def __repr__(self):
        return "Tensor(%r, %s, %s)" % (self.name, np.dtype(self.dtype).name, self.shape)


class Model:
    """A compiled ONNX model (burncc.load).  Calling it runs it."""

    def __init__(self, path, dims=None, threads=0, cache_dir=None):
        lib = _library()
        self._lib, self._ctx, self._m = lib, ctypes.c_void_p(), ctypes.c_void_p()
        opt = _Options(threads=threads,
                       cache_dir=None if cache_dir is None else os.fsencode(cache_dir))
        st = lib.burn_ctx_create(ctypes.byref(opt), ctypes.byref(self._ctx))
        if st:
            raise BurnError(st, "burncc: cannot make a context (status %d)" % st)
        dims = dict(dims or {})
        names = (ctypes.c_char_p * max(len(dims), 1))(*[k.encode() for k in dims])
        values = (ctypes.c_int64 * max(len(dims), 1))(*[int(v) for v in dims.values()])
        st = lib.burn_model_load(self._ctx, os.fsencode(path), len(dims), names, values,
                                 ctypes.byref(self._m))
        if st:
            msg = lib.burn_message(self._ctx).decode("utf-8", "replace")
            self.close()
            raise BurnError(st, msg)
        self.inputs = [self._tensor(0, i) for i in range(lib.burn_model_num_inputs(self._m))]
        self.outputs = [self._tensor(1, i) for i in range(lib.burn_model_num_outputs(self._m))]

    def _tensor(self, io, i):
        info = _Info()
        if self._lib.burn_model_tensor(self._m, io, i, ctypes.byref(info)):
            raise BurnError(4, "burncc: no tensor %d" % i)
        name = info.name.decode("utf-8", "replace")
        if info.dtype not in _NP:
            raise BurnError(3, "burncc: %s '%s': ONNX dtype %d has no NumPy type"
                            % ("output" if io else "input", name, info.dtype))
        return Tensor(name, _NP[info.dtype], tuple(info.dims[d] for d in range(info.rank)))

    def run(self, inputs):
        """inputs: a list in the model's order or a dict by ONNX name, of
        arrays (or anything np.asarray takes) of each input's shape; the
        dtype is converted where NumPy's casting='same_kind' allows.
        Returns the outputs, a list of new arrays."""
        if self._m is None or not self._m:
            raise ValueError("burncc: the model is closed")
        if isinstance(inputs, dict):
            unknown = set(inputs) - {t.name for t in self.inputs}
            if unknown:
                raise ValueError("burncc: no input named %s" % ", ".join(map(repr, sorted(unknown))))
            missing = [t.name for t in self.inputs if t.name not in inputs]
            if missing:
                raise ValueError("burncc: input %r not given" % missing[0])
            inputs = [inputs[t.name] for t in self.inputs]
        if len(inputs) != len(self.inputs):
            raise ValueError("burncc: %d inputs given, the model takes %d"
                             % (len(inputs), len(self.inputs)))
        ins = []
        for t, a in zip(self.inputs, inputs):
            a = np.asarray(a)
            if a.shape != t.shape:
                raise ValueError("burncc: input %r: shape %s, the model takes %s"
                                 % (t.name, a.shape, t.shape))
            if a.dtype != t.dtype and not np.can_cast(a.dtype, t.dtype, "same_kind"):
                raise TypeError("burncc: input %r: dtype %s, the model takes %s"
                                % (t.name, a.dtype, np.dtype(t.dtype).name))
            ins.append(np.ascontiguousarray(a, dtype=t.dtype))
        outs = [np.empty(t.shape, t.dtype) for t in self.outputs]
        pin = (ctypes.c_void_p * max(len(ins), 1))(*[a.ctypes.data for a in ins])
        pout = (ctypes.c_void_p * max(len(outs), 1))(*[a.ctypes.data for a in outs])
        st = self._lib.burn_model_run(self._m, pin, pout)
        if st:
            raise BurnError(st, self._lib.burn_message(self._ctx).decode("utf-8", "replace"))
        return outs

    def __call__(self, *inputs):
        return self.run(list(inputs))

    def close(self):
        """Free the compiled model now (else when it is collected)."""
        if getattr(self, "_m", None):
            self._lib.burn_model_destroy(self._m)
        self._m = None
        if getattr(self, "_ctx", None):
            self._lib.burn_ctx_destroy(self._ctx)
        self._ctx = None

    def __del__(self):
        self.close()

    def __repr__(self):
        return "burncc.Model(inputs=%s, outputs=%s)" % (self.inputs, self.outputs)


def load(path, dims=None, threads=0, cache_dir=None):
    """Compile the ONNX model at path for this CPU and return it as a
    callable Model.  dims: values of symbolic input dims ({"batch": 1}).
    threads: worker threads of its kernels (0: one per core).  cache_dir:
    the disk cache of compiled kernels (None: burncc's default, "": none)."""
    return Model(path, dims, threads, cache_dir)


compile = load
