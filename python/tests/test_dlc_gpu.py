"""The Python package on the GPU, beside PyTorch: torch tensors in GPU memory in, outputs handed
back in GPU memory without a copy (DLPack), the caller's CUDA stream, a GPU by number, the same
results as NumPy runs, and no memory growth over 10,000 runs. Skips without a GPU or torch."""
import os

import numpy as np
import pytest

import dlc

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

SOURCE = os.environ.get("DLC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MLP = os.path.join(SOURCE, "models", "mlp.onnx")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu") / "mlp.so"
    return dlc.compile(MLP, dims={"N": (1, 8)}, output=str(out))


def test_torch_tensors_in_and_out_without_a_copy(library):
    m = dlc.load(library)
    x = np.random.default_rng(2).standard_normal((4, 64)).astype(np.float32)
    want = m.session("cpu").run({"x": x})["probs"]
    s = m.session("gpu")
    assert s.device == "gpu"
    np.testing.assert_allclose(s.run({"x": x})["probs"], want, rtol=1e-4, atol=1e-5)
    out = s.run({"x": torch.from_numpy(x).cuda()})["probs"]
    assert isinstance(out, dlc.DeviceArray) and out.shape == (4, 10)
    assert out.__dlpack_device__() == (2, 0)  # kDLCUDA, GPU 0
    y = torch.from_dlpack(out)
    assert y.is_cuda and y.shape == (4, 10)
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="handed over"):
        torch.from_dlpack(out)  # one consumer


def test_runs_on_the_callers_stream(library):
    s = dlc.load(library).session("gpu")
    x = torch.randn(8, 64, device="cuda")
    want = s.run({"x": x})["probs"]
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        got = s.run({"x": x}, stream=stream.cuda_stream)["probs"]
        y = torch.from_dlpack(got)
    stream.synchronize()
    torch.testing.assert_close(y, torch.from_dlpack(want))


def test_a_gpu_by_number(library):
    m = dlc.load(library)
    last = torch.cuda.device_count() - 1
    s = m.session("gpu:%d" % last)
    assert s.device == ("gpu:%d" % last if last else "gpu")
    with torch.cuda.device(last):
        out = torch.from_dlpack(s.run({"x": torch.ones(2, 64, device="cuda:%d" % last)})["probs"])
    assert out.device.index == last
    with pytest.raises(dlc.DlcError, match="gpu:%d" % (last + 1)):
        m.session("gpu:%d" % (last + 1))


def test_no_memory_growth_over_10000_runs(library):
    s = dlc.load(library).session("gpu")
    x = torch.randn(8, 64, device="cuda")
    for _ in range(100):  # warm: programs loaded, graphs captured
        torch.from_dlpack(s.run({"x": x})["probs"])
    torch.cuda.synchronize()
    free_before, _ = torch.cuda.mem_get_info()
    for _ in range(10000):
        torch.from_dlpack(s.run({"x": x})["probs"])
    torch.cuda.synchronize()
    free_after, _ = torch.cuda.mem_get_info()
    assert free_before - free_after < 8 << 20, (free_before, free_after)
