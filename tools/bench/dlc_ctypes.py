"""A model library (`dlc compile -o model.so`) driven through its C API with ctypes, on torch
tensors: the library exports dlc.h's functions and holds its model, so nothing else of dlc is
needed in the process. Tensors are bound in place as DLPack DLTensors (no copy) and a run is
enqueued on a CUDA stream with dlc_session_run_async, as an application would.

    lib = Library("model.so")
    sess = lib.session()
    sess.bind_input("input", x)                      # a contiguous CUDA tensor
    y = sess.bind_new_output("output", device=x.device)
    sess.run_async(torch.cuda.current_stream().cuda_stream)
"""
import ctypes

import torch


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", DLDataType), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("dim_names", ctypes.POINTER(ctypes.c_char_p))]


K_DL_CPU, K_DL_CUDA = 1, 2
DEVICE_GPU = 2
# DLPack type codes: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6.
_TORCH_TO_DL = {
    torch.float16: (2, 16), torch.float32: (2, 32), torch.float64: (2, 64),
    torch.bfloat16: (4, 16), torch.int8: (0, 8), torch.int16: (0, 16), torch.int32: (0, 32),
    torch.int64: (0, 64), torch.uint8: (1, 8), torch.bool: (6, 8),
}
_DL_TO_TORCH = {v: k for k, v in _TORCH_TO_DL.items()}


class DlcError(RuntimeError):
    pass


class Library:
    """A loaded model library and its model."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        lib = self.lib
        lib.dlc_last_error.restype = ctypes.c_char_p
        for name, args in [
            ("dlc_model_load_embedded", [ctypes.POINTER(ctypes.c_void_p)]),
            ("dlc_model_num_outputs", [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)]),
            ("dlc_model_output", [ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(TensorInfo)]),
            ("dlc_session_create", [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]),
            ("dlc_session_set_input", [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(DLTensor)]),
            ("dlc_session_set_output", [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(DLTensor)]),
            ("dlc_session_run_async", [ctypes.c_void_p, ctypes.c_void_p]),
        ]:
            fn = getattr(lib, name)
            fn.argtypes = args
            fn.restype = ctypes.c_int
        lib.dlc_session_free.argtypes = [ctypes.c_void_p]
        lib.dlc_model_free.argtypes = [ctypes.c_void_p]
        self.model = ctypes.c_void_p()
        self.check(lib.dlc_model_load_embedded(ctypes.byref(self.model)), "load")

    def check(self, status, what):
        if status != 0:
            raise DlcError(f"{what}: {self.lib.dlc_last_error().decode()}")

    def outputs(self):
        """[(name, torch dtype, shape)] of the model's outputs (static shapes)."""
        n = ctypes.c_int32()
        self.check(self.lib.dlc_model_num_outputs(self.model, ctypes.byref(n)), "outputs")
        out = []
        for i in range(n.value):
            info = TensorInfo()
            self.check(self.lib.dlc_model_output(self.model, i, ctypes.byref(info)), "output")
            shape = [info.shape[d] for d in range(info.ndim)]
            dtype = _DL_TO_TORCH[(info.dtype.code, info.dtype.bits)]
            out.append((info.name.decode(), dtype, shape))
        return out

    def session(self):
        return Session(self)

    def __del__(self):
        if getattr(self, "model", None):
            self.lib.dlc_model_free(self.model)


class Session:
    """A GPU session; the tensors bound to it are kept alive with their DLTensor views."""

    def __init__(self, library):
        self.library = library
        self.handle = ctypes.c_void_p()
        library.check(library.lib.dlc_session_create(library.model, DEVICE_GPU,
                                                      ctypes.byref(self.handle)), "session")
        self.keep = []

    def _view(self, t):
        if not t.is_contiguous():
            raise DlcError("bind contiguous tensors")
        code, bits = _TORCH_TO_DL[t.dtype]
        shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
        dev = DLDevice(K_DL_CUDA if t.is_cuda else K_DL_CPU, t.device.index or 0)
        v = DLTensor(ctypes.c_void_p(t.data_ptr()), dev, t.dim(), DLDataType(code, bits, 1),
                     shape, None, 0)
        self.keep.append((t, shape, v))
        return v

    def bind_input(self, name, t):
        v = self._view(t)
        self.library.check(self.library.lib.dlc_session_set_input(
            self.handle, name.encode(), ctypes.byref(v)), f"input '{name}'")

    def bind_output(self, name, t):
        v = self._view(t)
        self.library.check(self.library.lib.dlc_session_set_output(
            self.handle, name.encode(), ctypes.byref(v)), f"output '{name}'")

    def bind_new_output(self, name, device):
        for n, dtype, shape in self.library.outputs():
            if n == name:
                t = torch.empty(shape, dtype=dtype, device=device)
                self.bind_output(name, t)
                return t
        raise DlcError(f"the model has no output '{name}'")

    def run_async(self, stream):
        """Enqueues a run on `stream` (a CUstream as an int; 0: the legacy default stream)."""
        self.library.check(self.library.lib.dlc_session_run_async(
            self.handle, ctypes.c_void_p(stream)), "run")

    def __del__(self):
        if getattr(self, "handle", None):
            self.library.lib.dlc_session_free(self.handle)
