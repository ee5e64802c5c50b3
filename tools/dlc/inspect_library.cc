// `dlc inspect model.so`: what a model library (or a raw package) holds — its interface, the
// dlc that wrote it, the graph for the reference backend and every GPU program with its arch,
// kernels and sizes. Read through the package reader, so a damaged library gets its error.
#include "tools/dlc/inspect_library.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "ir/file_util.h"
#include "runtime/package.h"
#include "tools/dlc/commands.h"

namespace dlc::tool {
namespace {

struct ProgramFacts {
  std::string arch;
  size_t kernels = 0, launches = 0, copies = 0, hostSteps = 0;
  size_t tensorMaps = 0; // TMA descriptors the launches pass (encoded by the session)
  uint64_t cubin = 0, ptx = 0;
};

ProgramFacts factsOf(const rt::Program &p) {
  ProgramFacts f;
  for (const rt::Module &m : p.modules) {
    f.arch = m.arch;
    f.kernels += m.kernels.size();
    f.cubin += m.cubin.size();
    f.ptx += m.ptx.size();
  }
  for (const rt::Step &s : p.steps) {
    if (const auto *l = std::get_if<rt::LaunchStep>(&s)) {
      ++f.launches;
      f.tensorMaps += l->tensorMaps.size();
    }
    f.copies += std::holds_alternative<rt::CopyStep>(s);
    f.hostSteps += std::holds_alternative<rt::HostStep>(s);
  }
  return f;
}

} // namespace

bool looksLikeModelLibrary(const std::string &path) {
  if (!checkRegularFile(path).isOk()) // not opened: a FIFO would block (the caller says why)
    return false;
  std::ifstream f(path, std::ios::binary);
  char head[8] = {};
  f.read(head, sizeof head);
  return f && (std::memcmp(head,
                           "\x7f"
                           "ELF",
                           4) == 0 ||
               std::memcmp(head,
                           "\x89"
                           "DLCPKG",
                           7) == 0);
}

Status inspectModelLibrary(const std::string &path, bool json) {
  DLC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, rt::readPackageFile(path));
  DLC_ASSIGN_OR_RETURN(rt::Package p, rt::deserializePackage(bytes.data(), bytes.size(), path));
  std::error_code ec;
  const uint64_t fileBytes = std::filesystem::file_size(path, ec);
  uint64_t weights = 0;
  for (const Value *c : p.graph->constants())
    weights += static_cast<uint64_t>(c->constant().byteSize());
  if (json) {
    nlohmann::ordered_json j;
    j["path"] = path;
    j["file_bytes"] = fileBytes;
    j["package_bytes"] = bytes.size();
    j["format_version"] = p.formatVersion;
    j["written_by"] = p.dlcVersion;
    for (const auto *list : {&p.inputs, &p.outputs})
      for (const rt::PackageTensor &t : *list)
        j[list == &p.inputs ? "inputs" : "outputs"].push_back(
            {{"name", t.name}, {"type", t.type.str()}});
    j["dim_ranges"] = nlohmann::json::array();
    for (const rt::DimRange &r : p.dimRanges)
      j["dim_ranges"].push_back({{"name", r.name}, {"min", r.min}, {"max", r.max}});
    j["graph"] = {{"nodes", p.graph->nodes().size()}, {"weight_bytes", weights}};
    j["gpu_programs"] = nlohmann::json::array();
    for (const rt::CompiledProgram &cp : p.programs) {
      ProgramFacts f = factsOf(*cp.program);
      j["gpu_programs"].push_back(
          {{"dims", cp.dims},
           {"arch", f.arch},
           {"kernels", f.kernels},
           {"launches", f.launches},
           {"tensor_maps", f.tensorMaps},
           {"copies", f.copies},
           {"host_steps", f.hostSteps},
           {"cubin_bytes", f.cubin},
           {"ptx_bytes", f.ptx},
           {"arena_bytes", cp.program->arenaBytes},
           {"zeroed_state_bytes", cp.program->zeroedBytes},
           {"constant_bytes", cp.program->constants.size()},
           {"constant_bytes_shared_with_graph", cp.program->constantBytesFromGraph}});
    }
    std::cout << j.dump(2) << "\n";
    return Status::ok();
  }
  std::cout << fmt::format("model library: {} ({}; package {}, format {}, written by dlc {})\n",
                           path, humanBytes(fileBytes), humanBytes(bytes.size()), p.formatVersion,
                           p.dlcVersion);
  std::cout << "inputs:\n";
  for (const rt::PackageTensor &t : p.inputs)
    std::cout << fmt::format("  {:<12} {}\n", t.name, t.type.str());
  std::cout << "outputs:\n";
  for (const rt::PackageTensor &t : p.outputs)
    std::cout << fmt::format("  {:<12} {}\n", t.name, t.type.str());
  for (const rt::DimRange &r : p.dimRanges)
    std::cout << fmt::format("dim {}: {}..{}\n", r.name, r.min, r.max);
  std::cout << fmt::format("graph (CPU reference backend): {} nodes, {} of weights\n",
                           p.graph->nodes().size(), humanBytes(weights));
  std::cout << fmt::format("GPU programs: {}\n", p.programs.size());
  for (const rt::CompiledProgram &cp : p.programs) {
    ProgramFacts f = factsOf(*cp.program);
    std::cout << fmt::format(
        "  {} {}: {} kernels (cubin {}, PTX {}), {} launches{}, {} copies, "
        "{} host steps; arena {}{}, constants {}{}\n",
        rt::dimBindingText(cp.dims), f.arch.empty() ? "(no kernels)" : f.arch, f.kernels,
        humanBytes(f.cubin), humanBytes(f.ptx), f.launches,
        f.tensorMaps ? fmt::format(" ({} TMA descriptors)", f.tensorMaps) : "", f.copies,
        f.hostSteps, humanBytes(cp.program->arenaBytes),
        cp.program->zeroedBytes == 0
            ? ""
            : fmt::format(" (of which {} zeroed state)", humanBytes(cp.program->zeroedBytes)),
        humanBytes(cp.program->constants.size()),
        cp.program->constantBytesFromGraph == 0
            ? ""
            : fmt::format(" ({} stored once with the graph's)",
                          humanBytes(cp.program->constantBytesFromGraph)));
  }
  return Status::ok();
}

} // namespace dlc::tool
