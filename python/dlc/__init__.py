"""dlc from Python: compile a model, load it, run it.

    import dlc
    m = dlc.load("model.onnx", dims={"N": (1, 64)})   # or a model.so from `dlc compile`
    y = m.session("cpu").run({"x": x})["y"]          # NumPy in, NumPy out

A model file (.onnx, .pb, .pbtxt, .dlc) is compiled by the `dlc` command into a model library
in a cache folder (keyed by the file's contents and the options) and loaded from there; a
library (.so) is loaded as it is. Running goes through dlc's C API, as a C host would.
Failures raise DlcError with dlc's own message.
"""
import hashlib
import os
import shutil
import subprocess
import sys

from ._dlc import DeviceArray, DlcError, Model as _Model, Session, version  # noqa: F401

__all__ = ["DlcError", "Model", "Session", "compile", "load", "opt", "version", "cli"]

_LIBRARY_SUFFIXES = (".so",)


def cli():
    """The `dlc` command: $DLC_CLI, the one this package was built with, or `dlc` on the PATH."""
    candidates = [os.environ.get("DLC_CLI")]
    try:
        from ._paths import DLC_CLI  # written by CMake (build tree or install prefix)
        candidates.append(DLC_CLI)
    except ImportError:
        pass
    candidates.append(shutil.which("dlc"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise DlcError("the dlc command was not found: set DLC_CLI or put dlc on the PATH")


def _run_cli(args):
    r = subprocess.run([cli()] + args, capture_output=True, text=True)
    if r.returncode != 0:
        lines = [l for l in r.stderr.splitlines() if l.startswith("dlc: error:")]
        message = lines[-1][len("dlc: error: "):] if lines else r.stderr.strip()
        raise DlcError(message or "dlc %s failed (exit status %d)" % (args[0], r.returncode))
    return r.stdout


def _dim_args(dims):
    out = []
    for name, size in sorted((dims or {}).items()):
        if isinstance(size, (tuple, list)):
            if len(size) != 2:
                raise ValueError("dims[%r]: give a size or a (min, max) pair" % name)
            out += ["--dim", "%s=%d..%d" % (name, size[0], size[1])]
        else:
            out += ["--dim", "%s=%d" % (name, size)]
    return out


def compile(model, dims=None, gpu_arch=None, output="model.so", no_gpu=False):
    """Compiles `model` (a path, or the bytes of an ONNX model) into a model library at
    `output`, as `dlc compile` does; returns the output path. dims: {"N": 8} or {"N": (1, 64)}
    for the sizes a symbolic dim may take; gpu_arch: "sm_90" or a list (default: the GPU's)."""
    tmp = None
    if isinstance(model, (bytes, bytearray)):
        import tempfile
        fd, tmp = tempfile.mkstemp(suffix=".onnx")
        with os.fdopen(fd, "wb") as f:
            f.write(model)
        model = tmp
    try:
        args = ["compile", os.fspath(model), "-o", os.fspath(output)] + _dim_args(dims)
        if gpu_arch:
            arches = [gpu_arch] if isinstance(gpu_arch, str) else list(gpu_arch)
            args += ["--gpu-arch", ",".join(arches)]
        if no_gpu:
            args.append("--no-gpu")
        _run_cli(args)
    finally:
        if tmp:
            os.unlink(tmp)
    return os.fspath(output)


def _cache_dir():
    base = os.environ.get("DLC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "dlc")
    path = os.path.join(base, "python")
    os.makedirs(path, exist_ok=True)
    return path


class Model(_Model):
    """A loaded model library: .inputs and .outputs describe its tensors, .session(device)
    runs it."""

    def __init__(self, path):
        super().__init__(os.fspath(path))
        self.path = os.fspath(path)

    def __repr__(self):
        return "dlc.Model(%r)" % self.path


def load(model, dims=None, gpu_arch=None, no_gpu=False):
    """A Model from a model library (.so), or from a model file compiled on first use into
    the cache ($DLC_CACHE_DIR/python, else ~/.cache/dlc/python)."""
    path = os.fspath(model)
    if path.endswith(_LIBRARY_SUFFIXES):
        return Model(path)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read())
    digest.update(repr((_dim_args(dims), gpu_arch, no_gpu, version())).encode())
    out = os.path.join(_cache_dir(), digest.hexdigest()[:32] + ".so")
    if not os.path.exists(out):
        partial = out + ".%d.tmp" % os.getpid()
        compile(path, dims=dims, gpu_arch=gpu_arch, output=partial, no_gpu=no_gpu)
        os.replace(partial, out)  # atomic: a concurrent loader sees all of it or nothing
    return Model(out)


def opt(model, pipeline=None, level=None):
    """The IR of `model` after a pass pipeline ("infer-shapes,fold-constants", "gpu") or a
    -O level, as text (what `dlc opt` prints)."""
    args = ["opt", os.fspath(model)]
    if pipeline is not None:
        args += ["-p", pipeline]
    if level is not None:
        args += ["-O", str(level)]
    return _run_cli(args)
