"""The Python package on the CPU: compile, load, describe and run a model, the same results as
the dlc command's, DLPack inputs, the cache, and errors as DlcError with dlc's message."""
import os
import subprocess
import sys

import numpy as np
import pytest

import dlc

SOURCE = os.environ.get("DLC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MLP = os.path.join(SOURCE, "models", "mlp.onnx")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    out = tmp_path_factory.mktemp("lib") / "mlp.so"
    assert dlc.compile(MLP, dims={"N": (1, 8)}, output=str(out), no_gpu=True) == str(out)
    return str(out)


def test_model_describes_its_tensors(library):
    m = dlc.load(library)
    assert m.inputs == [{"name": "x", "dtype": "float32", "shape": ("N", 64)}]
    assert m.outputs == [{"name": "probs", "dtype": "float32", "shape": ("N", 10)}]


def test_run_matches_the_dlc_command(library, tmp_path):
    x = np.random.default_rng(0).standard_normal((3, 64)).astype(np.float32)
    y = dlc.load(library).session("cpu").run({"x": x})["probs"]
    assert y.shape == (3, 10) and y.dtype == np.float32
    np.testing.assert_allclose(y.sum(axis=1), np.ones(3), rtol=1e-5)  # softmax rows
    np.save(tmp_path / "x.npy", x)
    subprocess.run([dlc.cli(), "run", MLP, "--device", "cpu", "--input",
                    "x=%s" % (tmp_path / "x.npy"), "-o", str(tmp_path / "out")],
                   check=True, capture_output=True)
    want = np.load(tmp_path / "out" / "probs.npy")
    np.testing.assert_array_equal(y, want)


def test_inputs_that_are_not_contiguous_or_come_by_dlpack(library):
    s = dlc.load(library).session("cpu")
    x = np.random.default_rng(1).standard_normal((64, 2)).astype(np.float32)
    want = s.run({"x": np.ascontiguousarray(x.T)})["probs"]
    np.testing.assert_array_equal(s.run({"x": x.T})["probs"], want)  # strided: copied

    class OnlyDlpack:  # a producer that speaks DLPack and nothing else
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

    got = s.run({"x": OnlyDlpack(np.ascontiguousarray(x.T))})["probs"]
    np.testing.assert_array_equal(got, want)


def test_load_compiles_a_model_file_once(tmp_path, monkeypatch):
    monkeypatch.setenv("DLC_CACHE_DIR", str(tmp_path))
    m = dlc.load(MLP, dims={"N": 4}, no_gpu=True)
    cached = os.listdir(tmp_path / "python")
    assert len(cached) == 1 and cached[0].endswith(".so")
    first = os.path.getmtime(m.path)
    again = dlc.load(MLP, dims={"N": 4}, no_gpu=True)
    assert again.path == m.path and os.path.getmtime(again.path) == first
    y = again.session("cpu").run({"x": np.zeros((4, 64), np.float32)})["probs"]
    np.testing.assert_allclose(y, np.full((4, 10), 0.1, np.float32), atol=0.2)


def test_errors_carry_dlcs_message(library, tmp_path):
    s = dlc.load(library).session("cpu")
    with pytest.raises(dlc.DlcError, match="'y'"):
        s.run({"y": np.zeros((1, 64), np.float32)})
    with pytest.raises(dlc.DlcError, match="outside the range"):
        s.run({"x": np.zeros((9, 64), np.float32)})  # compiled for N in 1..8
    with pytest.raises(dlc.DlcError):
        dlc.load(str(tmp_path / "missing.so"))
    with pytest.raises(dlc.DlcError, match="cannot open"):
        dlc.compile(str(tmp_path / "missing.onnx"), output=str(tmp_path / "m.so"))
    with pytest.raises(ValueError, match="device"):
        dlc.load(library).session("tpu")
    with pytest.raises(ValueError, match="gpu:N"):
        dlc.load(library).session("gpu:x")
    # A GPU by number that this machine does not have: dlc's error, naming it.
    with pytest.raises(dlc.DlcError, match="gpu:64|no CUDA"):
        dlc.load(library).session("gpu:64")


def test_opt_returns_the_ir():
    ir = dlc.opt(MLP, pipeline="infer-shapes")
    assert ir.startswith("graph @") and "gemm(" in ir


def test_python_dash_m_runs_the_command():
    r = subprocess.run([sys.executable, "-m", "dlc", "inspect", MLP], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "probs" in r.stdout
