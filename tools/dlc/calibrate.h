// Calibration as the `dlc` commands run it (`dlc quantize`, `dlc run --compare-precision int8`):
// samples read from a folder, a progress bar, ranges from a Calibrator
// (runtime/jit/calibration.h) or from a saved table.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runtime/jit/calibration.h"

namespace dlc::tool {

/// The sample folders of DIR (`--calibration`), in name order; an error when there are none.
Expected<std::vector<std::filesystem::path>> sampleFolders(const std::string &dir);

/// The inputs of one sample: NAME.npy for every graph input (named as --save-inputs names
/// its files).
Expected<std::map<std::string, Tensor>> readSample(const Graph &g,
                                                   const std::filesystem::path &folder);

/// Every sample of `dir` run on `backend` (kAuto: the GPU when there is one) and measured with
/// `method`, with a progress bar on stderr; values that took NaN/Inf are warned about.
/// `samples` gets the number of samples, `ranOn` where they ran.
Expected<RangeMap> calibrateSamples(const Graph &g, const std::string &dir,
                                    const RangeMethod &method, Backend backend, int &samples,
                                    Backend &ranOn);

/// The ranges of a table saved by `--save-ranges` (`--ranges FILE`), for `g`; refused when
/// made for another graph. `samples` and `method` get the table's.
Expected<RangeMap> loadRanges(const Graph &g, const std::string &file, int &samples,
                              std::string &method);

/// `file`'s contents; errors name `flag`.
Expected<std::string> readFile(const std::string &path, const char *flag);

} // namespace dlc::tool
