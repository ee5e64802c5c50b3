// compileModules: parallel NVRTC compilation through the on-disk module cache (see nvrtc.h).
//
// An entry file: the magic "DLCMOD1\n", then six length-prefixed fields (lengths are
// little-endian u64): key text, source, PTX, cubin, log, and the FNV-1a 64 (16 hex digits) of
// all the bytes before that last field. The key text holds NVRTC's version and every NVRTC option,
// the arch among them. A load checks the magic, the field bounds and the checksum (a failure is a
// damaged entry: warned about, deleted, recompiled), then that key text and source are exactly
// the ones asked for (else a hash collision: a plain miss).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "codegen/nvrtc.h"
#include "ir/file_util.h"

namespace dlc::codegen {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "DLCMOD1\n";

uint64_t fnv1a(std::string_view data, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

Expected<std::string> keyText(const NvrtcOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::vector<std::string> args, nvrtcArguments(opts));
  std::string key = fmt::format("dlc module cache 1\nnvrtc {}\n", nvrtcVersion());
  for (const std::string &a : args)
    key += a + "\n";
  return key;
}

std::string entryName(const std::string &key, const std::string &source) {
  return fmt::format("{:016x}.dlcm", fnv1a(source, fnv1a(key)));
}

void putField(std::string &out, std::string_view field) {
  uint64_t n = field.size();
  char len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out.append(len, 8);
  out.append(field);
}

bool takeField(std::string_view &in, std::string_view &field) {
  if (in.size() < 8)
    return false;
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t{static_cast<unsigned char>(in[static_cast<size_t>(i)])} << (8 * i);
  in.remove_prefix(8);
  if (n > in.size())
    return false;
  field = in.substr(0, n);
  in.remove_prefix(n);
  return true;
}

std::string serialize(const std::string &key, const std::string &source, const CompiledModule &m) {
  std::string out(kMagic);
  putField(out, key);
  putField(out, source);
  putField(out, m.ptx);
  putField(out, std::string_view(reinterpret_cast<const char *>(m.cubin.data()), m.cubin.size()));
  putField(out, m.log);
  putField(out, fmt::format("{:016x}", fnv1a(out)));
  return out;
}

/// What a cache file held: the module asked for, a damaged entry, or a sound entry made from
/// another key or source (a hash collision).
struct Loaded {
  std::optional<CompiledModule> module;
  bool damaged = false;
};

Loaded deserialize(std::string_view bytes, const std::string &key, const std::string &source) {
  if (bytes.substr(0, kMagic.size()) != kMagic)
    return {std::nullopt, true};
  std::string_view in = bytes.substr(kMagic.size());
  std::string_view fKey, fSource, fPtx, fCubin, fLog, fSum;
  if (!takeField(in, fKey) || !takeField(in, fSource) || !takeField(in, fPtx) ||
      !takeField(in, fCubin) || !takeField(in, fLog))
    return {std::nullopt, true};
  const size_t covered = bytes.size() - in.size();
  if (!takeField(in, fSum) || !in.empty() ||
      fSum != fmt::format("{:016x}", fnv1a(bytes.substr(0, covered))))
    return {std::nullopt, true};
  if (fKey != key || fSource != source)
    return {};
  CompiledModule m;
  m.ptx = std::string(fPtx);
  m.cubin.assign(fCubin.begin(), fCubin.end());
  m.log = std::string(fLog);
  m.fromCache = true;
  return {std::move(m), false};
}

/// The cache directory for `opts`, created if needed; empty when the cache is off.
std::string openCacheDir(const NvrtcOptions &opts) {
  if (!opts.cache)
    return {};
  std::string dir = opts.cacheDir.empty() ? defaultCacheDir() : opts.cacheDir;
  static std::once_flag told;
  if (dir.empty()) {
    std::call_once(told, [] {
      spdlog::debug("NVRTC cache off: none of DLC_CACHE_DIR, XDG_CACHE_HOME, HOME is set");
    });
    return {};
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    std::call_once(told, [&] {
      spdlog::debug("NVRTC cache off: cannot create the directory {}: {}", dir,
                    ec ? ec.message() : "not a directory");
    });
    return {};
  }
  return dir;
}

/// The entry at `path` if it holds `source` compiled under `key`. A damaged entry (bad magic,
/// fields past the end, a checksum that does not match: a crash or a full disk while another
/// dlc wrote it, or a change on disk) is deleted with a warning and sets `damaged`.
std::optional<CompiledModule> loadEntry(const fs::path &path, const std::string &key,
                                        const std::string &source, bool &damaged) {
  // A FIFO would block the read forever, a device could stream without end: only a regular
  // file is read (one stat; no entry yet is the common miss). The compiled module then goes
  // elsewhere only if storeEntry can replace it.
  if (Status regular = checkRegularFile(path.string()); !regular) {
    if (regular.code() != StatusCode::kNotFound)
      spdlog::warn("NVRTC cache: ignoring {}: {}", path.string(), regular.message());
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  Loaded loaded = deserialize(bytes.str(), key, source);
  damaged = loaded.damaged;
  if (damaged) {
    spdlog::warn("NVRTC cache: the entry {} is damaged (its checksum or layout does not match); "
                 "discarded, recompiling",
                 path.string());
    std::error_code ec;
    fs::remove(path, ec);
  } else if (!loaded.module) {
    spdlog::debug("NVRTC cache: {} holds another program (a hash collision); recompiling",
                  path.string());
  }
  return std::move(loaded.module);
}

void storeEntry(const fs::path &path, const std::string &bytes) {
  static std::atomic<uint64_t> counter{0};
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}.{}", ::getpid(), counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      spdlog::debug("NVRTC cache: cannot write {}", tmp.string());
      std::error_code ec;
      fs::remove(tmp, ec);
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec); // atomic: readers see the old entry or the new one, never half
  if (ec) {
    spdlog::debug("NVRTC cache: cannot rename {} to {}: {}", tmp.string(), path.string(),
                  ec.message());
    fs::remove(tmp, ec);
  }
}

} // namespace

std::string defaultCacheDir() {
  if (const char *v = std::getenv("DLC_CACHE_DIR"); v && *v)
    return v;
  if (const char *v = std::getenv("XDG_CACHE_HOME"); v && *v)
    return (fs::path(v) / "dlc").string();
  if (const char *v = std::getenv("HOME"); v && *v)
    return (fs::path(v) / ".cache" / "dlc").string();
  return {};
}

std::string cacheEntryPath(const std::string &dir, const std::string &source,
                           const NvrtcOptions &opts) {
  auto key = keyText(opts);
  if (!key)
    return {};
  return (fs::path(dir) / entryName(*key, source)).string();
}

Expected<std::vector<CompiledModule>> compileModules(const std::vector<std::string> &sources,
                                                     const std::vector<std::string> &names,
                                                     const NvrtcOptions &opts, int jobs,
                                                     CompileStats *stats,
                                                     const CompileProgressFn &progress) {
  const auto start = std::chrono::steady_clock::now();
  if (sources.size() != names.size())
    return invalidArgument("compileModules: {} sources but {} names", sources.size(), names.size());
  DLC_ASSIGN_OR_RETURN(std::string key, keyText(opts));
  const std::string dir = openCacheDir(opts);

  const size_t n = sources.size();
  std::vector<std::optional<Expected<CompiledModule>>> results(n);
  std::atomic<size_t> next{0};
  std::atomic<int> hits{0}, misses{0}, damaged{0};
  std::mutex reportMutex;
  size_t finished = 0;
  auto seconds = [](auto from) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  };
  auto report = [&](size_t i, double took, bool fromCache) {
    if (!progress)
      return;
    std::lock_guard<std::mutex> lock(reportMutex);
    progress({i, ++finished, n, took, seconds(start), fromCache});
  };
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      const auto began = std::chrono::steady_clock::now();
      fs::path path = dir.empty() ? fs::path() : fs::path(dir) / entryName(key, sources[i]);
      if (!dir.empty()) {
        bool bad = false;
        if (auto m = loadEntry(path, key, sources[i], bad)) {
          ++hits;
          results[i].emplace(std::move(*m));
          report(i, seconds(began), true);
          continue;
        }
        damaged += bad;
      }
      ++misses;
      results[i].emplace(compileCuda(sources[i], names[i], opts));
      if (!dir.empty() && results[i]->hasValue())
        storeEntry(path, serialize(key, sources[i], results[i]->value()));
      report(i, seconds(began), false);
    }
  };
  size_t threads =
      jobs > 0 ? static_cast<size_t>(jobs) : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, n);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work(); // this thread is a worker too
  for (std::thread &t : pool)
    t.join();

  if (stats) {
    stats->hits = hits;
    stats->misses = misses;
    stats->damaged = damaged;
    stats->cacheEnabled = !dir.empty();
    stats->cacheDir = dir;
    stats->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::vector<CompiledModule> out;
  out.reserve(n);
  const Status *firstError = nullptr;
  size_t failed = 0;
  for (auto &r : results) {
    if (r->hasValue()) {
      out.push_back(std::move(r->value()));
      continue;
    }
    ++failed;
    if (!firstError)
      firstError = &r->status();
  }
  if (firstError) {
    if (failed == 1)
      return *firstError;
    return Status(firstError->code(), fmt::format("{}\n({} of {} programs failed to compile; "
                                                  "the first is shown)",
                                                  firstError->message(), failed, n));
  }
  return out;
}

} // namespace dlc::codegen
