import os

import lit.formats

config.name = "dlc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".dlc", ".test"]
config.test_source_root = os.path.join(config.dlc_source_dir, "tests/lit")
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.environment["PATH"] = os.pathsep.join(
    [config.dlc_bin_dir, os.path.dirname(config.filecheck), config.environment.get("PATH", "")])
config.substitutions.append(("%models", os.path.join(config.dlc_source_dir, "models")))
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Every pass's output is verified in every build, as debug builds do by default: a test whose
# input or output a release build would accept unverified fails here too, not only in CI's asan pass.
config.substitutions.append(("dlc opt ", "dlc opt --verify-each "))
# Pictures: `dlc opt --svg` runs Graphviz's dot; the tests render the SVG with rsvg-convert.
import shutil
if shutil.which("dot") and shutil.which("rsvg-convert"):
    config.available_features.add("graphviz")
import sys
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%{dlc}", os.path.join(config.dlc_bin_dir, "dlc")))
# kbench (tools/kbench, a development tool built beside dlc): its case files are parsed here.
kbench = os.path.join(config.dlc_bin_dir, os.pardir, "kbench", "kbench")
if os.path.exists(kbench):
    config.available_features.add("kbench")
    config.substitutions.append(("%kbench", kbench))
