#include "tools/dlc/model_library.h"

#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "ir/tensor.h"

extern char **environ; // the process environment, passed on to the linker

namespace dlc::tool {
namespace {

namespace fs = std::filesystem;

bool isExecutable(const std::string &path) {
  if (path.find('/') != std::string::npos)
    return ::access(path.c_str(), X_OK) == 0;
  const char *env = std::getenv("PATH");
  std::stringstream dirs(env ? env : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((fs::path(dir) / path).c_str(), X_OK) == 0)
      return true;
  return false;
}

std::string selfDir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.parent_path().string();
}

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, '|'))
    if (!item.empty())
      out.push_back(item);
  return out;
}

/// Runs argv[0] with argv (no shell); stdout and stderr go to `log`.
Expected<int> runProcess(const std::vector<std::string> &argv, const std::string &log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return unavailable("cannot run the linker '{}': {}", argv[0], std::strerror(rc));
  int status = 0;
  if (::waitpid(pid, &status, 0) < 0)
    return internalError("waiting for the linker '{}' failed", argv[0]);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string readFile(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The ELF machine of the objects this dlc links (the host's), or 0 where the package object
/// is assembled by `as` instead.
constexpr uint16_t kElfMachine =
#if defined(__x86_64__)
    EM_X86_64;
#elif defined(__aarch64__)
    EM_AARCH64;
#else
    0;
#endif

/// Writes `package` as a relocatable ELF64 object: one allocated, read-only `.dlc_package`
/// section (64-byte aligned) between the global symbols dlc_embedded_package_begin and
/// dlc_embedded_package_end, and an empty `.note.GNU-stack` (no executable stack): what the
/// assembler makes of the `.incbin` source below, written in one pass instead of through a
/// copy of the package and `as`.
Status writePackageObject(const rt::SerializedPackage &package, const fs::path &path) {
  static const char kShstr[] = "\0.dlc_package\0.note.GNU-stack\0.symtab\0.strtab\0.shstrtab";
  static const char kStr[] = "\0dlc_embedded_package_begin\0dlc_embedded_package_end";
  const std::string shstr(kShstr, sizeof(kShstr)), str(kStr, sizeof(kStr)); // with the last NUL
  auto at = [&](const std::string &table, const char *name) {
    const std::string nul(1, '\0');
    return static_cast<Elf64_Word>(table.find(nul + name + nul) + 1);
  };
  Elf64_Sym syms[3] = {};
  syms[1].st_name = at(str, "dlc_embedded_package_begin");
  syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
  syms[1].st_shndx = 1;
  syms[2].st_name = at(str, "dlc_embedded_package_end");
  syms[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE);
  syms[2].st_shndx = 1;
  syms[2].st_value = package.size();
  // Layout: header, package (at 64), symbols, strings, section names, section headers.
  auto align = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
  const uint64_t dataOff = 64, symOff = align(dataOff + package.size(), 8);
  const uint64_t strOff = symOff + sizeof(syms), shstrOff = strOff + str.size();
  const uint64_t shOff = align(shstrOff + shstr.size(), 8);
  Elf64_Shdr sh[6] = {};
  sh[1] = {
      at(shstr, ".dlc_package"), SHT_PROGBITS, SHF_ALLOC, 0, dataOff, package.size(), 0, 0, 64, 0};
  sh[2] = {at(shstr, ".note.GNU-stack"), SHT_PROGBITS, 0, 0, dataOff, 0, 0, 0, 1, 0};
  sh[3] = {at(shstr, ".symtab"), SHT_SYMTAB, 0, 0, symOff,
           sizeof(syms),         4,          1, 8, sizeof(Elf64_Sym)};
  sh[4] = {at(shstr, ".strtab"), SHT_STRTAB, 0, 0, strOff, str.size(), 0, 0, 1, 0};
  sh[5] = {at(shstr, ".shstrtab"), SHT_STRTAB, 0, 0, shstrOff, shstr.size(), 0, 0, 1, 0};
  Elf64_Ehdr eh = {};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_ident[EI_OSABI] = ELFOSABI_SYSV;
  eh.e_type = ET_REL;
  eh.e_machine = kElfMachine;
  eh.e_version = EV_CURRENT;
  eh.e_shoff = shOff;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 6;
  eh.e_shstrndx = 5;
  std::ofstream f(path, std::ios::binary);
  auto put = [&](const void *p, uint64_t n) {
    f.write(static_cast<const char *>(p), static_cast<std::streamsize>(n));
  };
  auto padTo = [&](uint64_t off) {
    static const char zeros[64] = {};
    const uint64_t pos = static_cast<uint64_t>(f.tellp());
    if (off > pos)
      put(zeros, off - pos);
  };
  put(&eh, sizeof(eh));
  padTo(dataOff);
  put(package.header.data(), package.header.size());
  put(package.payload, package.payloadSize);
  padTo(symOff);
  put(syms, sizeof(syms));
  put(str.data(), str.size());
  put(shstr.data(), shstr.size());
  padTo(shOff);
  put(sh, sizeof(sh));
  if (!f)
    return unavailable("cannot write {}", path.string());
  return Status::ok();
}

/// Where the package object goes for the link: /dev/shm (memory) when it has room for it twice
/// over and TMPDIR is not set, else the temporary directory. The object is as large as the
/// weights and is read once by the linker; on a disk it was written back for nothing.
fs::path linkDirectory(uint64_t packageBytes) {
  std::error_code ec;
  const char *tmpdir = std::getenv("TMPDIR");
  if (!(tmpdir && *tmpdir)) {
    struct statvfs st = {};
    if (::statvfs("/dev/shm", &st) == 0 && ::access("/dev/shm", W_OK) == 0 &&
        static_cast<uint64_t>(st.f_bavail) * st.f_frsize > 2 * packageBytes + (64u << 20))
      return "/dev/shm";
  }
  return fs::temp_directory_path(ec);
}

/// The library's GNU build ID, from what goes into it rather than from its bytes (which the
/// linker would hash: 20 ms per 100 MB): the package's checksum, then a hash of the runtime
/// archive (path, size, time), the link flags and the soname. 16 bytes, as hex.
std::string buildId(const rt::SerializedPackage &package, const LibraryToolchain &toolchain,
                    const std::string &path) {
  std::error_code ec;
  std::string inputs =
      toolchain.archive + '\n' + toolchain.linker + '\n' + fs::path(path).filename().string();
  inputs += fmt::format("\n{}\n{}", fs::file_size(toolchain.archive, ec),
                        fs::last_write_time(toolchain.archive, ec).time_since_epoch().count());
  for (const std::string &f : toolchain.extraFlags)
    inputs += '\n' + f;
  uint64_t checksum = 0;
  std::memcpy(&checksum, package.header.data() + 24, 8);
  return fmt::format("{:016x}{:016x}", checksum, fnv1a64(inputs.data(), inputs.size()));
}

} // namespace

Expected<LibraryToolchain> findLibraryToolchain() {
  LibraryToolchain t;
  const char *linker = std::getenv("DLC_LINKER");
  t.linker = linker && *linker ? linker : DLC_CONFIGURED_LINKER;
  if (!isExecutable(t.linker))
    return unavailable("-o: writing a model library needs a C++ compiler driver to link it, and "
                       "'{}' is not there ({}); install g++ (Debian: g++) or set DLC_LINKER to "
                       "one",
                       t.linker,
                       linker && *linker ? "from $DLC_LINKER" : "found at configure time");
  std::vector<std::string> tried;
  if (const char *a = std::getenv("DLC_RUNTIME_ARCHIVE"); a && *a) {
    t.archive = a;
    tried.push_back(t.archive + " ($DLC_RUNTIME_ARCHIVE)");
  } else {
    for (const std::string &candidate :
         {selfDir().empty()
              ? std::string()
              : (fs::path(selfDir()) / DLC_INSTALLED_RUNTIME_ARCHIVE).lexically_normal().string(),
          std::string(DLC_BUILD_RUNTIME_ARCHIVE)}) {
      if (candidate.empty())
        continue;
      tried.push_back(candidate);
      if (fs::exists(candidate)) {
        t.archive = candidate;
        break;
      }
    }
  }
  if (t.archive.empty() || !fs::exists(t.archive)) {
    std::string list;
    for (const std::string &p : tried)
      list += "\n  " + p;
    return unavailable("-o: the dlc runtime archive (libdlc.a) a model library is linked with "
                       "was not found; tried:{}\nset DLC_RUNTIME_ARCHIVE to it",
                       list);
  }
  t.extraFlags = splitList(DLC_EMBED_LINK_FLAGS);
  if (const char *f = std::getenv("DLC_FUSE_LD"))
    t.fuseLd = f;
  else if (isExecutable("ld.lld"))
    t.fuseLd = "lld";
  else if (isExecutable("ld.gold"))
    t.fuseLd = "gold";
  return t;
}

Status writeModelLibrary(const rt::SerializedPackage &package, const std::string &path,
                         const LibraryToolchain &toolchain) {
  std::error_code ec;
  fs::path work = linkDirectory(package.size()) / fmt::format("dlc-link-{}", ::getpid());
  fs::create_directories(work, ec);
  if (ec)
    return unavailable("-o {}: cannot create a temporary directory {}: {}", path, work.string(),
                       ec.message());
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{work};
  // A library already at `path` is moved aside and deleted while the linker runs: replacing a
  // 100 MB file by rename makes the file system write the new one back and free the old one
  // first (30-60 ms on ext4). As with the linker's own output, a failed link leaves no library
  // at `path`, never the previous one looking current.
  std::future<void> oldRemoved;
  if (fs::is_regular_file(path, ec)) {
    fs::path aside = fs::path(path + fmt::format(".old-{}", ::getpid()));
    fs::rename(path, aside, ec);
    if (!ec)
      oldRemoved = std::async(std::launch::async, [aside] {
        std::error_code ignored;
        fs::remove(aside, ignored);
      });
  }

  const fs::path blob = work / "package.bin", assembly = work / "package.s", map = work / "dlc.map",
                 log = work / "link.log", object = work / "package.o";
  std::string packageInput = assembly.string();
  if (kElfMachine != 0 && !std::getenv("DLC_PACKAGE_VIA_AS")) {
    DLC_RETURN_IF_ERROR(writePackageObject(package, object).withContext("-o " + path));
    packageInput = object.string();
  } else { // another machine, or asked for: the assembler's .incbin
    std::ofstream b(blob, std::ios::binary);
    b.write(reinterpret_cast<const char *>(package.header.data()),
            static_cast<std::streamsize>(package.header.size()));
    b.write(reinterpret_cast<const char *>(package.payload),
            static_cast<std::streamsize>(package.payloadSize));
    if (!b)
      return unavailable("-o {}: cannot write {}", path, blob.string());
    // The package in its own allocated, read-only section, 64-byte aligned, between two symbols
    // the C API's dlc_model_load_embedded reads (and dlc_model_load finds by section name).
    std::ofstream f(assembly);
    f << "  .section .dlc_package,\"a\",@progbits\n"
         "  .balign 64\n"
         "  .globl dlc_embedded_package_begin\n"
         "  .type dlc_embedded_package_begin, @object\n"
         "dlc_embedded_package_begin:\n"
         "  .incbin \""
      << blob.string()
      << "\"\n"
         "  .globl dlc_embedded_package_end\n"
         "dlc_embedded_package_end:\n"
         "  .section .note.GNU-stack,\"\",@progbits\n";
    if (!f)
      return unavailable("-o {}: cannot write {}", path, assembly.string());
  }
  {
    std::ofstream m(map);
    m << "{ global: dlc_*; local: *; };\n";
    if (!m)
      return unavailable("-o {}: cannot write {}", path, map.string());
  }
  const std::string tmpOut = path + ".tmp";
  std::vector<std::string> argv = {toolchain.linker,
                                   "-shared",
                                   "-o",
                                   tmpOut,
                                   packageInput,
                                   "-Wl,--whole-archive",
                                   toolchain.archive,
                                   "-Wl,--no-whole-archive",
                                   "-Wl,--version-script=" + map.string(),
                                   "-Wl,-soname," + fs::path(path).filename().string(),
                                   "-Wl,--strip-debug", // a debug build's runtime: 300+ MB
                                   "-Wl,--build-id=0x" + buildId(package, toolchain, path)};
  argv.insert(argv.end(), toolchain.extraFlags.begin(), toolchain.extraFlags.end());
  int rc = 1;
  if (!toolchain.fuseLd.empty()) {
    std::vector<std::string> fast = argv;
    fast.insert(fast.begin() + 1, "-fuse-ld=" + toolchain.fuseLd);
    DLC_ASSIGN_OR_RETURN(rc, runProcess(fast, log.string()));
  }
  if (rc != 0) { // no faster linker, or it failed: the driver's own
    DLC_ASSIGN_OR_RETURN(rc, runProcess(argv, log.string()));
  }
  if (rc != 0) {
    std::string cmd;
    for (const std::string &a : argv)
      cmd += (cmd.empty() ? "" : " ") + a;
    fs::remove(tmpOut, ec);
    return unavailable("-o {}: linking the model library failed (exit {}):\n{}\n{}", path, rc, cmd,
                       readFile(log.string()));
  }
  fs::rename(tmpOut, path, ec);
  if (ec)
    return unavailable("-o {}: cannot move the library into place: {}", path, ec.message());
  return Status::ok();
}

} // namespace dlc::tool
