// TileConfig's text form (gemm_kernel.h): what kernels' comments, `--debug-only`, kbench's
// `--tile`, `--gemm-tile` and the tests print and read, e.g. 128x256x64/wgs4k1t or
// 128x64x32/4x2s2k1.
#include <fmt/format.h>

#include <cstdio>

#include "codegen/gemm_kernel.h"

namespace dlc::codegen::gemm {

std::string TileConfig::str() const {
  if (simt)
    return fmt::format("{}x{}x{}simt{}", bm, bn, bk, splitK > 1 ? fmt::format("k{}", splitK) : "");
  if (wgmma)
    return fmt::format("{}x{}x{}/{}s{}k{}{}{}{}", bm, bn, bk, pingpong ? "wp" : "wg", stages,
                       streamK ? "s" : std::to_string(splitK), clusterSplit ? "c" : "",
                       tma ? "t" : "", multicast ? "m" : "");
  return fmt::format("{}x{}x{}/{}x{}s{}k{}{}", bm, bn, bk, warpsM, warpsN, stages, splitK,
                     minBlocks > 0 ? fmt::format("b{}", minBlocks) : "");
}

std::optional<TileConfig> parseTileConfig(const std::string &text) {
  TileConfig c;
  int n = 0;
  if (std::sscanf(text.c_str(), "%dx%dx%d%n", &c.bm, &c.bn, &c.bk, &n) != 3)
    return std::nullopt;
  std::string rest = text.substr(static_cast<size_t>(n));
  if (rest.rfind("simt", 0) == 0) {
    c.simt = true;
    rest = rest.substr(4);
  } else if (rest.rfind("/wg", 0) == 0 || rest.rfind("/wp", 0) == 0) {
    c.wgmma = true;
    c.pingpong = rest[2] == 'p';
    c.warpsM = 2;
    c.warpsN = 1;
    rest = rest.substr(3);
  } else if (!rest.empty() && rest[0] == '/') {
    int m = 0;
    if (std::sscanf(rest.c_str(), "/%dx%d%n", &c.warpsM, &c.warpsN, &m) != 2)
      return std::nullopt;
    rest = rest.substr(static_cast<size_t>(m));
  }
  if (!rest.empty() && rest[0] == 's') {
    int m = 0;
    if (std::sscanf(rest.c_str(), "s%d%n", &c.stages, &m) != 1)
      return std::nullopt;
    rest = rest.substr(static_cast<size_t>(m));
  }
  if (rest.rfind("ks", 0) == 0 && c.wgmma) {
    c.streamK = true;
    rest = rest.substr(2);
    if (!rest.empty() && rest[0] == 't') {
      c.tma = true;
      rest = rest.substr(1);
    }
  } else if (!rest.empty() && rest[0] == 'k') {
    int m = 0;
    if (std::sscanf(rest.c_str(), "k%d%n", &c.splitK, &m) != 1)
      return std::nullopt;
    rest = rest.substr(static_cast<size_t>(m));
    if (!rest.empty() && rest[0] == 'c' && c.wgmma) {
      c.clusterSplit = true;
      rest = rest.substr(1);
    }
    if (!rest.empty() && rest[0] == 't' && c.wgmma) {
      c.tma = true;
      rest = rest.substr(1);
      if (!rest.empty() && rest[0] == 'm') {
        c.multicast = true;
        rest = rest.substr(1);
      }
    }
  }
  if (!rest.empty() && rest[0] == 'b' && !c.simt && !c.wgmma) {
    int m = 0;
    if (std::sscanf(rest.c_str(), "b%d%n", &c.minBlocks, &m) != 1)
      return std::nullopt;
    rest = rest.substr(static_cast<size_t>(m));
  }
  if (!rest.empty())
    return std::nullopt;
  return c;
}

Expected<KernelSet> emitWithTileOverride(
    const FusedGroup &group, const EmitOptions &opts,
    const std::function<Expected<KernelSet>(const std::optional<TileConfig> &)> &emit) {
  const Node *named = nullptr;
  std::string text;
  for (const Node *n : group.nodes) {
    auto it = opts.gemmTiles.find(n->name());
    if (it == opts.gemmTiles.end())
      continue;
    if (named && it->second != text)
      return invalidArgument("--gemm-tile names two tiles for one kernel: {}={} and {}={}",
                             named->name(), text, n->name(), it->second);
    named = n;
    text = it->second;
  }
  if (!named)
    return emit(std::nullopt);
  const std::string option = fmt::format("--gemm-tile {}={}", named->name(), text);
  const std::optional<TileConfig> cfg = parseTileConfig(text);
  if (!cfg)
    return invalidArgument("{}: '{}' is not a tile", option, text);
  Expected<KernelSet> set = emit(cfg);
  if (!set)
    return set.status().withContext(option);
  return set;
}

} // namespace dlc::codegen::gemm
