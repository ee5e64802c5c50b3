// Internals shared by the package writer (package_write.cc) and reader (package.cc): the
// header's constants and byte order, the checksum, and the content checks of both directions.
// Format: runtime/PACKAGE_FORMAT.md.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <map>
#include <string>

#include "runtime/package.h"
#include "runtime/package_generated.h"

namespace dlc::rt::detail {

namespace fbs = ::dlc::rt::fb;

/// The offset basis format-1 packages were checksummed with: FNV's 14695981039346656037 with
/// its last digit lost (ir/tensor.h kept it until format 2).
inline constexpr uint64_t kFnv1a64OffsetFormat1 = 1469598103934665603ull;
static_assert(FLATBUFFERS_LITTLEENDIAN, "packages are read in place: little-endian hosts only");

inline constexpr uint8_t kMagic[8] = {0x89, 'D', 'L', 'C', 'P', 'K', 'G', '\n'};
/// Constants and cubins start at this alignment inside the payload.
inline constexpr size_t kDataAlign = 16;
/// The largest payload FlatBuffers can address.
inline constexpr uint64_t kMaxPayload = FLATBUFFERS_MAX_BUFFER_SIZE - 1;
/// Graph constants of at least this many bytes are shared with the programs' pools (smaller
/// ones cost less than their segment entries).
inline constexpr uint64_t kMinSharedBytes = 4096;

void putLE(uint8_t *p, uint64_t v, int bytes);
uint64_t getLE(const uint8_t *p, int bytes);

/// The header's checksum: FNV-1a over the payload (format 1 from its mistyped basis); from
/// format 3 over the header's first 24 bytes first (magic, format, flags, size), so that a
/// changed format or flag fails it too; from format 4 XXH3-64 over the payload, seeded with
/// XXH3-64 of those 24 bytes (FNV-1a's byte at a time cost a 100 MB library 0.1 s to write and
/// again to load).
uint64_t packageChecksum(const uint8_t *header, const uint8_t *payload, size_t size,
                         uint64_t version);

/// The content checks both directions run (PACKAGE_FORMAT.md, step 8).
Status checkPackage(const Package &p);

} // namespace dlc::rt::detail
