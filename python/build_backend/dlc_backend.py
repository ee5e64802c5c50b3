"""The PEP 517 backend of `pip install .`: the project's CMake build, then a wheel.

The wheel holds the package dlc (python/dlc), the extension dlc/_dlc, and what the package
runs: the dlc command (dlc/bin/dlc) and the runtime archive it links model libraries with
(dlc/lib/libdlc.a, where an installed dlc looks for it: ../lib beside its bin). Nothing is
downloaded: CMake, Ninja, pybind11 and the other dependencies are the machine's (Debian's,
scripts/install-deps.sh). The build tree is build/pip unless the config setting build-dir
names another (an existing `build/release` is reused as it is).
"""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NAME = "dlc"


def _version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        for line in f:
            if line.startswith("project(dlc VERSION "):
                return line.split()[2]
    raise RuntimeError("no project version in CMakeLists.txt")


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, impl, plat)


def _build(build_dir, stage):
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release", "-DDLC_BUILD_TESTS=OFF",
                        "-DPython3_EXECUTABLE=" + sys.executable], check=True)
    subprocess.run(["cmake", "--build", build_dir, "--target", "dlc", "dlc_python", "dlc_static"],
                   check=True)
    subprocess.run(["cmake", "--install", build_dir, "--prefix", stage], check=True,
                   stdout=subprocess.DEVNULL)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    settings = config_settings or {}
    build_dir = os.path.abspath(os.path.join(ROOT, settings.get("build-dir", "build/pip")))
    version = _version()
    with tempfile.TemporaryDirectory() as stage:
        _build(build_dir, stage)
        site = [os.path.join(dp, "dlc") for dp, dns, _ in os.walk(stage) if "dlc" in dns
                and dp.endswith("site-packages")]
        if not site:
            raise RuntimeError("the build installed no Python package (pybind11-dev and "
                               "python3-dev are needed)")
        files = {}  # arcname -> (bytes, executable)
        for fn in os.listdir(site[0]):
            if fn == "_paths.py":
                continue
            with open(os.path.join(site[0], fn), "rb") as f:
                files["dlc/" + fn] = (f.read(), False)
        files["dlc/_paths.py"] = (
            b"import os\nDLC_CLI = os.path.join(os.path.dirname(__file__), 'bin', 'dlc')\n", False)
        with open(os.path.join(stage, "bin", "dlc"), "rb") as f:
            files["dlc/bin/dlc"] = (f.read(), True)
        with open(os.path.join(stage, "lib", "libdlc.a"), "rb") as f:
            files["dlc/lib/libdlc.a"] = (f.read(), False)
        dist = "%s-%s.dist-info" % (NAME, version)
        files[dist + "/METADATA"] = ((
            "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: dlc, a deep-learning graph "
            "compiler: compile ONNX and TensorFlow models to CUDA and run them\n"
            "Requires-Python: >=3.9\nRequires-Dist: numpy\n" % (NAME, version)).encode(), False)
        files[dist + "/WHEEL"] = ((
            "Wheel-Version: 1.0\nGenerator: dlc_backend\nRoot-Is-Purelib: false\nTag: %s\n"
            % _tag()).encode(), False)
        wheel = "%s-%s-%s.whl" % (NAME, version, _tag())
        record = [_record_line(a, d) for a, (d, _) in sorted(files.items())]
        record.append(dist + "/RECORD,,")
        files[dist + "/RECORD"] = (("\n".join(record) + "\n").encode(), False)
        with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w",
                             zipfile.ZIP_DEFLATED) as z:
            for arcname, (data, executable) in sorted(files.items()):
                info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
    return wheel
