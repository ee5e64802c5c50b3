// dlc_fuzz_replay TARGET PATH...: runs a fuzz target (fuzz_target.h) over every regular file
// under the PATHs (folders recursively, in name order) and prints how many it ran and the
// slowest. A crash or sanitizer report fails the run; so does a target that is not known.
// `dlc_fuzz_replay --list` names the targets.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

namespace dlc::fuzz {

namespace {

std::map<std::string, TargetFn> &registry() {
  static std::map<std::string, TargetFn> targets;
  return targets;
}

} // namespace

Registration::Registration(const char *name, TargetFn fn) { registry()[name] = fn; }

} // namespace dlc::fuzz

int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  auto &targets = dlc::fuzz::registry();
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const auto &[name, fn] : targets)
      std::printf("%s\n", name.c_str());
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: dlc_fuzz_replay TARGET PATH... | --list\n");
    return 2;
  }
  auto it = targets.find(argv[1]);
  if (it == targets.end()) {
    std::fprintf(stderr, "dlc_fuzz_replay: no target '%s' (--list names them)\n", argv[1]);
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    fs::path p = argv[i];
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      for (const auto &e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else {
      std::fprintf(stderr, "dlc_fuzz_replay: %s: no such file or folder\n", argv[i]);
      return 1;
    }
  }
  std::sort(files.begin(), files.end());
  dlc::fuzz::setUp();
  double slowest = 0;
  std::string slowestName;
  for (const fs::path &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto start = std::chrono::steady_clock::now();
    it->second(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > slowest) {
      slowest = s;
      slowestName = f.string();
    }
  }
  std::printf("%s: replayed %zu inputs; slowest %.3f s (%s)\n", argv[1], files.size(), slowest,
              slowestName.c_str());
  return 0;
}
