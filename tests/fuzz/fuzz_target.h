// One fuzz target per input surface (README.md). A target is a function from bytes to
// nothing: it feeds them to dlc and returns; a crash, a sanitizer report, a hang or an
// assertion that dlc's own output does not read back is a finding.
//
// Each target source builds two ways:
//  * with -DDLC_LIBFUZZER (the `fuzz` preset, clang): DLC_FUZZ_TARGET defines libFuzzer's
//    LLVMFuzzerTestOneInput, one executable per target;
//  * otherwise: it registers the function under its name, and dlc_fuzz_replay (replay_main.cc)
//    runs any target over files and folders: the corpus and every past finding replay in the
//    normal test suite, with any compiler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dlc::fuzz {

using TargetFn = void (*)(const uint8_t *data, size_t size);

/// Registers a target for dlc_fuzz_replay (replay builds only).
struct Registration {
  Registration(const char *name, TargetFn fn);
};

/// Small limits for fuzzing (ir/limits.h: 64 MiB per tensor, 20,000 nodes, 1,000 loop
/// iterations) and no log output. Every target runs it once, before the first input.
void setUp();

/// With DLC_FUZZ_DEBUG set in the environment, prints why dlc refused an input (to see what
/// a corpus reaches); otherwise nothing.
void debug(std::string_view stage, std::string_view message);

/// `bytes` as a string_view.
inline std::string_view view(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// A finding that is not a crash (dlc's own output does not read back): reported, then
/// aborts, so that libFuzzer saves the input and the replay test fails.
[[noreturn]] void fail(std::string_view what, std::string_view detail);

} // namespace dlc::fuzz

#ifdef DLC_LIBFUZZER
#define DLC_FUZZ_TARGET(name)                                                                      \
  static void dlcFuzzTarget(const uint8_t *data, size_t size);                                     \
  extern "C" int LLVMFuzzerInitialize(int *, char ***) {                                           \
    dlc::fuzz::setUp();                                                                            \
    return 0;                                                                                      \
  }                                                                                                \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {                        \
    dlcFuzzTarget(data, size);                                                                     \
    return 0;                                                                                      \
  }                                                                                                \
  static void dlcFuzzTarget(const uint8_t *data, size_t size)
#else
#define DLC_FUZZ_TARGET(name)                                                                      \
  static void dlcFuzz_##name(const uint8_t *data, size_t size);                                    \
  static const dlc::fuzz::Registration dlcFuzzRegistration_##name(#name, dlcFuzz_##name);          \
  static void dlcFuzz_##name(const uint8_t *data, size_t size)
#endif
