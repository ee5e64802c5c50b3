// Writing a model library: `dlc compile -o model.so`.
//
// The library is the serialized package (runtime/package.h) in a `.dlc_package` section,
// between the symbols dlc_embedded_package_begin/_end, linked with the shipped runtime archive
// (libdlc.a: the reference executor, the GPU runtime, the C API) into one shared object that
// exports only the C API (runtime/dlc.map). The link uses the C++ compiler driver found when
// dlc was configured (or $DLC_LINKER), so it needs that toolchain where `dlc compile -o` runs,
// and nothing where the library runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/status.h"
#include "runtime/package.h"

namespace dlc::tool {

/// Where the pieces of the link come from; `describe()` lists them for errors and `--help`.
struct LibraryToolchain {
  std::string linker;  // a C++ compiler driver (g++, clang++)
  std::string archive; // libdlc.a
  std::vector<std::string> extraFlags;
  // A faster linker the driver is asked to use (-fuse-ld=lld or gold) when one is installed:
  // a model library embeds its weights (100 MB for ResNet-50 fp16), which GNU ld copies
  // about 3x slower. Empty: the driver's default. A link that fails with it is retried without.
  std::string fuseLd;
};

/// The toolchain: $DLC_LINKER or the compiler dlc was configured with; $DLC_RUNTIME_ARCHIVE,
/// else `<dir of dlc>/../<libdir>/libdlc.a` (an installed dlc), else the build tree's archive;
/// ld.lld, else ld.gold, from PATH ($DLC_FUSE_LD overrides: lld, gold, bfd; empty: the
/// driver's default). Errors say what is missing and where it was looked for.
Expected<LibraryToolchain> findLibraryToolchain();

/// Writes `package` (serialized) into the shared library `path`.
Status writeModelLibrary(const rt::SerializedPackage &package, const std::string &path,
                         const LibraryToolchain &toolchain);

} // namespace dlc::tool
