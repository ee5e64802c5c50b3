// compileModules: parallel NVRTC compilation and the on-disk module cache (no GPU needed).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "codegen/nvrtc.h"

namespace dlc::codegen {
namespace {

namespace fs = std::filesystem;

class TempDir {
public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() / ("dlc_nvrtc_cache_test_" + std::to_string(::getpid()) +
                                         "_" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::vector<fs::path> files() const {
    std::vector<fs::path> out;
    for (const auto &e : fs::directory_iterator(path_))
      out.push_back(e.path());
    return out;
  }

private:
  fs::path path_;
};

/// Sets an environment variable for the scope; restores the old value after.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

/// Captures spdlog's default logger (warnings and above) for the scope.
class LogCapture {
public:
  LogCapture() : old_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_level(spdlog::level::warn);
    logger->set_pattern("[%l] %v");
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(old_); }
  std::string text() const { return out_.str(); }

private:
  std::shared_ptr<spdlog::logger> old_;
  std::ostringstream out_;
};

std::string kernelSource(const std::string &name, float k) {
  return "extern \"C\" __global__ void " + name +
         "(const float *x, float *y, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = x[i] * " +
         std::to_string(k) + "f;\n}\n";
}

NvrtcOptions cachedIn(const TempDir &dir) {
  NvrtcOptions opts;
  opts.cacheDir = dir.str();
  return opts;
}

TEST(NvrtcCache, MissThenHitGivesTheSameModule) {
  TempDir dir;
  const std::vector<std::string> sources = {kernelSource("scale_a", 2), kernelSource("scale_b", 3)};
  const std::vector<std::string> names = {"scale_a", "scale_b"};
  CompileStats cold;
  auto first = compileModules(sources, names, cachedIn(dir), 2, &cold);
  ASSERT_TRUE(first) << first.status().message();
  EXPECT_EQ(cold.misses, 2);
  EXPECT_EQ(cold.hits, 0);
  EXPECT_TRUE(cold.cacheEnabled);
  EXPECT_EQ(cold.cacheDir, dir.str());
  EXPECT_EQ(dir.files().size(), 2u); // one entry per program, no temporary files left
  for (const auto &f : dir.files())
    EXPECT_EQ(f.extension(), ".dlcm") << f;

  CompileStats warm;
  auto second = compileModules(sources, names, cachedIn(dir), 2, &warm);
  ASSERT_TRUE(second) << second.status().message();
  EXPECT_EQ(warm.hits, 2);
  EXPECT_EQ(warm.misses, 0);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE((*first)[i].fromCache);
    EXPECT_TRUE((*second)[i].fromCache);
    EXPECT_EQ((*first)[i].ptx, (*second)[i].ptx);
    EXPECT_EQ((*first)[i].cubin, (*second)[i].cubin);
    EXPECT_FALSE((*second)[i].cubin.empty());
  }
}

TEST(NvrtcCache, ReportsEachFinishedProgramOnce) {
  TempDir dir;
  const std::vector<std::string> sources = {kernelSource("p_a", 2), kernelSource("p_b", 3),
                                            kernelSource("p_c", 4)};
  const std::vector<std::string> names = {"p_a", "p_b", "p_c"};
  for (bool cached : {false, true}) { // NVRTC, then the cache
    std::vector<CompileEvent> events;
    auto m = compileModules(sources, names, cachedIn(dir), 2, nullptr,
                            [&](const CompileEvent &e) { events.push_back(e); });
    ASSERT_TRUE(m) << m.status().message();
    ASSERT_EQ(events.size(), 3u);
    std::vector<bool> seen(3);
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].done, i + 1) << "counts in the order reported";
      EXPECT_EQ(events[i].total, 3u);
      EXPECT_EQ(events[i].fromCache, cached);
      EXPECT_GE(events[i].elapsed, events[i].seconds);
      ASSERT_LT(events[i].index, 3u);
      EXPECT_FALSE(seen[events[i].index]) << "each program once";
      seen[events[i].index] = true;
    }
  }
}

TEST(NvrtcCache, KeyCoversSourceArchAndOptions) {
  TempDir dir;
  const std::string src = kernelSource("k", 2);
  NvrtcOptions sm90 = cachedIn(dir);
  NvrtcOptions sm80 = sm90;
  sm80.smVersion = 80;
  NvrtcOptions lineInfo = sm90;
  lineInfo.lineInfo = true;
  const std::string p90 = cacheEntryPath(dir.str(), src, sm90);
  ASSERT_FALSE(p90.empty());
  EXPECT_NE(p90, cacheEntryPath(dir.str(), src, sm80));
  EXPECT_NE(p90, cacheEntryPath(dir.str(), src, lineInfo));
  EXPECT_NE(p90, cacheEntryPath(dir.str(), kernelSource("k", 3), sm90));
  EXPECT_EQ(p90, cacheEntryPath(dir.str(), src, sm90));

  CompileStats stats;
  ASSERT_TRUE(compileModules({src}, {"k"}, sm90, 1, &stats));
  ASSERT_TRUE(compileModules({src}, {"k"}, sm80, 1, &stats));
  EXPECT_EQ(stats.misses, 1) << "another arch must not hit the sm_90 entry";
  auto again = compileModules({src}, {"k"}, sm80, 1, &stats);
  ASSERT_TRUE(again);
  EXPECT_EQ(stats.hits, 1);
  EXPECT_NE(again->front().ptx.find(".target sm_80"), std::string::npos);
}

TEST(NvrtcCache, CorruptOrTruncatedEntryIsRecompiled) {
  TempDir dir;
  const std::string src = kernelSource("k", 5);
  auto fresh = compileModules({src}, {"k"}, cachedIn(dir), 1);
  ASSERT_TRUE(fresh) << fresh.status().message();
  const std::string path = cacheEntryPath(dir.str(), src, cachedIn(dir));
  ASSERT_TRUE(fs::exists(path));
  const auto size = fs::file_size(path);

  // A flipped byte in the middle (inside the cubin or PTX): the checksum no longer matches.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 2));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(size / 2));
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  CompileStats stats;
  std::string warnings;
  auto redo = [&] {
    LogCapture log;
    auto r = compileModules({src}, {"k"}, cachedIn(dir), 1, &stats);
    warnings = log.text();
    return r;
  }();
  ASSERT_TRUE(redo) << redo.status().message();
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.damaged, 1);
  EXPECT_NE(warnings.find("[warning] NVRTC cache: the entry " + path + " is damaged"),
            std::string::npos)
      << warnings;
  EXPECT_FALSE(redo->front().fromCache);
  EXPECT_EQ(redo->front().cubin, fresh->front().cubin);
  EXPECT_EQ(fs::file_size(path), size) << "the entry is rewritten whole";

  // Truncated (a crash while writing, a full disk).
  fs::resize_file(path, size - 7);
  redo = compileModules({src}, {"k"}, cachedIn(dir), 1, &stats);
  ASSERT_TRUE(redo);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.damaged, 1);
  EXPECT_EQ(redo->front().ptx, fresh->front().ptx);

  // Not an entry at all.
  std::ofstream(path, std::ios::trunc) << "garbage";
  redo = compileModules({src}, {"k"}, cachedIn(dir), 1, &stats);
  ASSERT_TRUE(redo);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.damaged, 1);

  // And the rewritten entry is good again.
  redo = compileModules({src}, {"k"}, cachedIn(dir), 1, &stats);
  ASSERT_TRUE(redo);
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.damaged, 0);
  EXPECT_EQ(redo->front().cubin, fresh->front().cubin);
}

TEST(NvrtcCache, EntryForAnotherSourceIsAMiss) {
  // Two sources whose entries collide (simulated by copying one entry over the other's path)
  // must not be confused: the entry holds its source.
  TempDir dir;
  const std::string a = kernelSource("ka", 1), b = kernelSource("kb", 1);
  ASSERT_TRUE(compileModules({a}, {"ka"}, cachedIn(dir), 1));
  fs::copy_file(cacheEntryPath(dir.str(), a, cachedIn(dir)),
                cacheEntryPath(dir.str(), b, cachedIn(dir)));
  CompileStats stats;
  auto mb = compileModules({b}, {"kb"}, cachedIn(dir), 1, &stats);
  ASSERT_TRUE(mb);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.damaged, 0) << "a sound entry for another program is not damaged";
  EXPECT_NE(mb->front().ptx.find(".entry kb"), std::string::npos);
}

TEST(NvrtcCache, SpecialFileAtAnEntryIsNeverRead) {
  // A FIFO where an entry belongs would block an open for reading forever: it is skipped with a
  // warning and the program compiled (the FIFO is replaced by the new entry).
  TempDir dir;
  const std::string src = kernelSource("kf", 2);
  const std::string path = cacheEntryPath(dir.str(), src, cachedIn(dir));
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  CompileStats stats;
  std::string warnings;
  {
    LogCapture log;
    auto m = compileModules({src}, {"kf"}, cachedIn(dir), 1, &stats);
    warnings = log.text();
    ASSERT_TRUE(m) << m.status().message();
  }
  EXPECT_EQ(stats.misses, 1);
  EXPECT_NE(warnings.find("[warning] NVRTC cache: ignoring " + path + ": "), std::string::npos)
      << warnings;
  EXPECT_TRUE(fs::is_regular_file(path)) << "the new entry replaces the FIFO";
}

std::vector<std::string> writerSources() {
  std::vector<std::string> sources;
  for (int i = 0; i < 8; ++i)
    sources.push_back(kernelSource("w" + std::to_string(i), static_cast<float>(i + 1)));
  return sources;
}
std::vector<std::string> writerNames() {
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i)
    names.push_back("w" + std::to_string(i));
  return names;
}

// The writer process of TwoProcessesFillOneCache (this test binary run again, on this test
// only): compiles writerSources() into the cache directory $DLC_TEST_CACHE_WRITER_DIR.
TEST(NvrtcCacheWriter, DISABLED_FillTheCacheOfTheEnvironment) {
  const char *dir = std::getenv("DLC_TEST_CACHE_WRITER_DIR");
  ASSERT_NE(dir, nullptr);
  NvrtcOptions opts;
  opts.cacheDir = dir;
  auto modules = compileModules(writerSources(), writerNames(), opts, 4);
  ASSERT_TRUE(modules) << modules.status().message();
}

TEST(NvrtcCache, TwoProcessesFillOneCacheAtOnce) {
  // Two dlc processes compiling the same programs into one cache at the same moment: each
  // writes every entry to a temporary file and renames it into place, so whichever rename
  // lands last, every entry is whole, no temporary file is left, and both processes succeed.
  TempDir dir;
  for (int round = 0; round < 2; ++round) {
    for (const fs::path &f : dir.files())
      fs::remove(f);
    std::vector<std::string> env;
    for (char **e = environ; *e; ++e)
      env.emplace_back(*e);
    env.push_back("DLC_TEST_CACHE_WRITER_DIR=" + dir.str());
    std::vector<char *> envp;
    for (std::string &e : env)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string self = fs::read_symlink("/proc/self/exe").string();
    std::string filter = "--gtest_filter=NvrtcCacheWriter.DISABLED_FillTheCacheOfTheEnvironment";
    std::string disabled = "--gtest_also_run_disabled_tests";
    char *argv[] = {self.data(), filter.data(), disabled.data(), nullptr};
    pid_t pids[2];
    for (pid_t &pid : pids)
      ASSERT_EQ(::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);
    for (pid_t pid : pids) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer status " << status;
    }
    for (const fs::path &f : dir.files())
      EXPECT_EQ(f.extension(), ".dlcm") << "left behind: " << f;
    EXPECT_EQ(dir.files().size(), 8u);
    NvrtcOptions opts;
    opts.cacheDir = dir.str();
    CompileStats stats;
    auto modules = compileModules(writerSources(), writerNames(), opts, 4, &stats);
    ASSERT_TRUE(modules) << modules.status().message();
    EXPECT_EQ(stats.hits, 8) << "round " << round;
    EXPECT_EQ(stats.damaged, 0) << "round " << round;
  }
}

TEST(NvrtcCache, OffWhenTheDirectoryCannotBeCreated) {
  TempDir dir;
  const std::string file = dir.str() + "/a_file";
  std::ofstream(file) << "x";
  NvrtcOptions opts;
  opts.cacheDir = file + "/cache"; // below a regular file
  CompileStats stats;
  auto m = compileModules({kernelSource("k", 1)}, {"k"}, opts, 1, &stats);
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_FALSE(stats.cacheEnabled);
  EXPECT_EQ(stats.cacheDir, "");
  EXPECT_EQ(stats.misses, 1);
  EXPECT_FALSE(m->front().cubin.empty());

  opts = cachedIn(dir);
  opts.cache = false;
  ASSERT_TRUE(compileModules({kernelSource("k", 1)}, {"k"}, opts, 1, &stats));
  EXPECT_FALSE(stats.cacheEnabled);
  EXPECT_EQ(dir.files().size(), 1u) << "cache = false writes nothing";
}

TEST(NvrtcCache, DefaultDirectoryFromTheEnvironment) {
  ScopedEnv dlc("DLC_CACHE_DIR", "/tmp/dlc-explicit");
  ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/xdg");
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(defaultCacheDir(), "/tmp/dlc-explicit");
  {
    ScopedEnv off("DLC_CACHE_DIR", nullptr);
    EXPECT_EQ(defaultCacheDir(), "/tmp/xdg/dlc");
    ScopedEnv offXdg("XDG_CACHE_HOME", "");
    EXPECT_EQ(defaultCacheDir(), "/home/someone/.cache/dlc");
    ScopedEnv offHome("HOME", nullptr);
    EXPECT_EQ(defaultCacheDir(), "");
  }
  // compileModules uses it when no directory is given.
  TempDir dir;
  ScopedEnv here("DLC_CACHE_DIR", dir.str().c_str());
  CompileStats stats;
  ASSERT_TRUE(compileModules({kernelSource("k", 9)}, {"k"}, {}, 1, &stats));
  EXPECT_EQ(stats.cacheDir, dir.str());
  EXPECT_EQ(dir.files().size(), 1u);
}

TEST(NvrtcParallel, ManyProgramsKeepTheirOrder) {
  std::vector<std::string> sources, names;
  for (int i = 0; i < 12; ++i) {
    names.push_back("kernel_" + std::to_string(i));
    sources.push_back(kernelSource(names.back(), static_cast<float>(i)));
  }
  NvrtcOptions opts;
  opts.cache = false;
  CompileStats stats;
  auto mods = compileModules(sources, names, opts, 4, &stats);
  ASSERT_TRUE(mods) << mods.status().message();
  ASSERT_EQ(mods->size(), 12u);
  EXPECT_EQ(stats.misses, 12);
  for (size_t i = 0; i < 12; ++i) {
    EXPECT_NE((*mods)[i].ptx.find(".entry " + names[i] + "("), std::string::npos) << i;
    EXPECT_FALSE((*mods)[i].cubin.empty());
  }
  EXPECT_GT(stats.seconds, 0);
  // Byte-identical to a one-thread compile.
  auto serial = compileModules(sources, names, opts, 1);
  ASSERT_TRUE(serial);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ((*mods)[i].cubin, (*serial)[i].cubin) << i;
}

TEST(NvrtcParallel, FailureNamesTheProgramAndCountsTheOthers) {
  TempDir dir;
  std::vector<std::string> sources = {kernelSource("good", 1), "__global__ void bad0() { x; }",
                                      kernelSource("good2", 1), "__global__ void bad1() { y; }"};
  std::vector<std::string> names = {"good", "fused_bad_0", "good2", "fused_bad_1"};
  auto mods = compileModules(sources, names, cachedIn(dir), 3);
  ASSERT_FALSE(mods);
  const std::string &msg = mods.status().message();
  EXPECT_NE(msg.find("NVRTC failed to compile 'fused_bad_0' for sm_90"), std::string::npos) << msg;
  EXPECT_NE(msg.find("identifier \"x\" is undefined"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2 of 4 programs failed to compile; the first is shown)"), std::string::npos)
      << msg;
  EXPECT_EQ(dir.files().size(), 2u) << "the good programs are cached, the failures are not";

  auto mismatch = compileModules(sources, {"one"}, cachedIn(dir));
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.status().message(), "compileModules: 4 sources but 1 names");
}

} // namespace
} // namespace dlc::codegen
