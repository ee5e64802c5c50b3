#include "tools/dlc/picture.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char **environ;

namespace dlc::tool {

namespace {

Status writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return notFound("cannot open '{}' for writing", path);
  out << text;
  if (!out.flush())
    return invalidArgument("error writing '{}'", path);
  return Status::ok();
}

/// Runs `dot -Tsvg -o svgPath dotPath`; the error says what went wrong.
Status runDot(const std::string &dotPath, const std::string &svgPath) {
  std::string prog = "dot", fmtArg = "-Tsvg", oArg = "-o";
  std::string out = svgPath, in = dotPath;
  char *argv[] = {prog.data(), fmtArg.data(), oArg.data(), out.data(), in.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "dot", nullptr, nullptr, argv, environ);
  if (rc != 0)
    return notFound("--svg: cannot run Graphviz's 'dot' ({}); install the graphviz package, or "
                    "write the graph with --dot FILE.dot and render it elsewhere",
                    std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return internalError("--svg: waiting for 'dot' failed: {}", std::strerror(errno));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return internalError("--svg: Graphviz's 'dot' failed rendering '{}' (exit status {})", svgPath,
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return Status::ok();
}

} // namespace

Status writePictures(const Graph &g, const std::string &dotPath, const std::string &svgPath,
                     const DotOptions &opts) {
  std::ostringstream text;
  writeDot(g, text, opts);
  if (!dotPath.empty())
    DLC_RETURN_IF_ERROR(writeText(dotPath, text.str()));
  if (svgPath.empty())
    return Status::ok();
  // dot reads a file: the DOT text goes to a private temporary one beside nothing else.
  std::string tmp = (std::filesystem::temp_directory_path() / "dlc-dot-XXXXXX").string();
  int fd = mkstemp(tmp.data());
  if (fd < 0)
    return internalError("--svg: cannot create a temporary file: {}", std::strerror(errno));
  close(fd);
  Status s = writeText(tmp, text.str());
  if (s.isOk())
    s = runDot(tmp, svgPath);
  std::remove(tmp.c_str());
  return s;
}

} // namespace dlc::tool
