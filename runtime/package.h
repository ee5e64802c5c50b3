// Package: everything a shipped model needs at run time, and its serialized form.
//
// A package holds the model's interface (inputs, outputs, the allowed sizes of its symbolic
// dims), its graph for the CPU reference backend with all weights, and zero or more compiled
// GPU programs, each for one binding of the symbolic dims. `dlc compile -o model.so` embeds the
// bytes of serializePackage; the library reads them back with deserializePackage.
//
// The bytes are a fixed 32-byte header (magic, format version, payload size, XXH3 checksum)
// followed by a FlatBuffer of runtime/package.fbs; runtime/PACKAGE_FORMAT.md describes both.
// Reading checks the header and the checksum, runs FlatBuffers' verifier, then checks the
// content (dtypes, shapes, constant sizes, the graph, every program through validateProgram),
// so any byte string gives either a package or an error that names the source; never a crash.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "runtime/program.h"

namespace dlc::rt {

/// The format this dlc writes (3: a program's constant pool shares the graph's weights; 4: the
/// checksum is XXH3-64; 5: launch steps may pass tensor maps).
inline constexpr uint32_t kPackageFormatVersion = 6;
/// The oldest format this dlc still reads (format 1: the checksum's FNV-1a started from a
/// mistyped offset basis; PACKAGE_FORMAT.md, Compatibility).
inline constexpr uint32_t kOldestReadablePackageFormat = 1;
/// Size of the header in front of the FlatBuffer payload.
inline constexpr size_t kPackageHeaderBytes = 32;

/// A symbolic dim and its allowed sizes, min <= size <= max.
struct DimRange {
  std::string name;
  int64_t min = 0, max = 0;
};

/// A model input or output; dims may be symbolic.
struct PackageTensor {
  std::string name;
  TensorType type;
};

/// A program compiled for one binding of the symbolic dims (every bound dim is declared in the
/// package's dimRanges and lies in its range).
struct CompiledProgram {
  std::map<std::string, int64_t> dims;
  std::shared_ptr<const Program> program;
};

struct Package {
  std::string dlcVersion; // the dlc that wrote it, e.g. "0.1.0"
  /// The package format it was read from (deserializePackage); serializePackage always writes
  /// kPackageFormatVersion.
  uint32_t formatVersion = kPackageFormatVersion;
  /// Inputs and outputs name inputs and outputs of the graph.
  std::vector<PackageTensor> inputs, outputs;
  std::vector<DimRange> dimRanges;
  /// After the default pipeline; run by the reference backend.
  std::shared_ptr<const Graph> graph;
  /// May be empty (CPU only).
  std::vector<CompiledProgram> programs;
  /// Arches of the cubins inside, sorted and unique, e.g. {"sm_80","sm_90"}.
  std::vector<std::string> arches() const;
};

/// "N=8,S=128" for a dim binding; "static shapes" when there is nothing to bind.
std::string dimBindingText(const std::map<std::string, int64_t> &dims);

/// A serialized package as two pieces, the 32-byte header and the FlatBuffer payload, so that
/// writing it to a file costs no copy of the weights into one buffer first.
struct SerializedPackage {
  std::array<uint8_t, kPackageHeaderBytes> header{};
  const uint8_t *payload = nullptr;
  size_t payloadSize = 0;
  std::shared_ptr<const void> storage; // owns `payload`

  size_t size() const { return header.size() + payloadSize; }
  /// The package's bytes in one buffer: the header, then the payload.
  std::vector<uint8_t> join() const;
};

/// The bytes of a package: the 32-byte header then the FlatBuffer. Fails on an inconsistent
/// package (the checks deserializePackage makes) or one above FlatBuffers' 2 GiB limit.
Expected<SerializedPackage> serializePackageParts(const Package &p);
/// serializePackageParts, joined.
Expected<std::vector<uint8_t>> serializePackage(const Package &p);

/// Parses and checks bytes written by serializePackage. `source` names the file in errors.
/// Bytes after the payload are ignored (a section may be padded). The package's tensors and
/// programs own copies of their data; `data` may be freed afterwards.
Expected<Package> deserializePackage(const uint8_t *data, size_t size, std::string_view source);

/// The package bytes in a file: the `.dlc_package` section of a model library (an ELF shared
/// object; only its headers and that section are read, every offset checked, no code run), or
/// the whole file when it is not ELF (a raw package, or garbage deserializePackage refuses).
/// kNotFound for a missing file or an ELF file without the section.
Expected<std::vector<uint8_t>> readPackageFile(const std::string &path);

} // namespace dlc::rt
