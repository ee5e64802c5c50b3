// Writing packages: the graph as text with its elided constants, the programs with their
// constant pools sharing the graph's weights (format 3), the header. Format:
// runtime/PACKAGE_FORMAT.md.
#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <thread>

#include "ir/printer.h"
#include "ir/tensor_text.h"
#include "runtime/package.h"
#include "runtime/package_internal.h"

namespace dlc::rt {
namespace {

using namespace detail; // NOLINT: the package internals
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// --- Writing ------------------------------------------------------------------------------------

/// The constants the default printer elides, by printed hash, from `g` and its bodies.
Status collectConstants(const Graph &g, int64_t inlineLimit, std::map<std::string, Tensor> &out) {
  auto add = [&](const Tensor &t) -> Status {
    if (t.numElements() <= inlineLimit)
      return Status::ok();
    auto [it, inserted] = out.emplace(text::formatHash(t), t);
    if (!inserted && !it->second.identical(t))
      return invalidArgument("two different constants have the hash {} (an FNV-1a collision); "
                             "the graph text cannot tell them apart",
                             it->first);
    return Status::ok();
  };
  for (const Value *c : g.constants())
    DLC_RETURN_IF_ERROR(add(c->constant()));
  for (const Node *n : g.nodes())
    for (const auto &[name, a] : n->attrs()) {
      if (a.kind() == AttrKind::kTensor)
        DLC_RETURN_IF_ERROR(add(a.tensor()));
      else if (a.kind() == AttrKind::kGraph)
        DLC_RETURN_IF_ERROR(collectConstants(a.graph(), inlineLimit, out));
    }
  return Status::ok();
}

/// A [ubyte] vector holding `bytes`, starting at a kDataAlign boundary; copied once.
Offset<flatbuffers::Vector<uint8_t>> writeBytes(FlatBufferBuilder &fbb, const void *bytes,
                                                size_t n) {
  fbb.ForceVectorAlignment(n, 1, kDataAlign);
  uint8_t *dst = nullptr;
  auto off = fbb.CreateUninitializedVector(n, 1, &dst);
  if (n)
    std::memcpy(dst, bytes, n);
  return off;
}

Offset<fbs::TensorType> writeType(FlatBufferBuilder &fbb, const TensorType &t) {
  std::vector<Offset<fbs::Dim>> dims;
  for (const Dim &d : t.shape.dims()) {
    auto symbol = d.isSymbol() ? fbb.CreateString(d.symbolName()) : 0;
    dims.push_back(fbs::CreateDim(fbb, d.isKnown() ? d.value() : -1, symbol));
  }
  auto dimsOff = fbb.CreateVector(dims);
  return fbs::CreateTensorType(fbb, static_cast<uint8_t>(t.dtype), t.shape.isRanked(), dimsOff);
}

Offset<flatbuffers::Vector<Offset<fbs::NamedType>>>
writeNamedTypes(FlatBufferBuilder &fbb, const std::vector<PackageTensor> &tensors) {
  std::vector<Offset<fbs::NamedType>> out;
  for (const PackageTensor &t : tensors) {
    auto name = fbb.CreateString(t.name);
    auto type = writeType(fbb, t.type);
    out.push_back(fbs::CreateNamedType(fbb, name, type));
  }
  return fbb.CreateVector(out);
}

fbs::BufferRef toFb(const BufferRef &r) {
  return fbs::BufferRef(r.offset, r.bytes, static_cast<uint8_t>(r.space));
}

Offset<flatbuffers::Vector<const fbs::BufferRef *>> writeRefs(FlatBufferBuilder &fbb,
                                                              const std::vector<BufferRef> &refs) {
  std::vector<fbs::BufferRef> out;
  for (const BufferRef &r : refs)
    out.push_back(toFb(r));
  return fbb.CreateVectorOfStructs(out);
}

Offset<flatbuffers::Vector<Offset<fbs::ProgramTensor>>>
writeProgramTensors(FlatBufferBuilder &fbb, const std::vector<ProgramTensor> &tensors) {
  std::vector<Offset<fbs::ProgramTensor>> out;
  for (const ProgramTensor &t : tensors) {
    auto name = fbb.CreateString(t.name);
    auto shape = fbb.CreateVector(t.shape);
    fbs::BufferRef buffer = toFb(t.buffer);
    out.push_back(fbs::CreateProgramTensor(fbb, name, static_cast<uint8_t>(t.dtype), shape, &buffer,
                                           t.firstStep));
  }
  return fbb.CreateVector(out);
}

struct StepWriter {
  FlatBufferBuilder &fbb;
  std::pair<fbs::Step, Offset<void>> operator()(const LaunchStep &s) const {
    auto kernel = fbb.CreateString(s.kernel);
    auto args = writeRefs(fbb, s.args);
    auto origin = fbb.CreateString(s.origin);
    std::vector<Offset<fbs::TensorMapArg>> maps;
    for (const TensorMapArg &m : s.tensorMaps) {
      fbs::BufferRef buffer = toFb(m.buffer);
      auto dims = fbb.CreateVector(std::vector<uint64_t>(std::begin(m.dims), std::end(m.dims)));
      auto box = fbb.CreateVector(std::vector<uint32_t>(std::begin(m.box), std::end(m.box)));
      maps.push_back(fbs::CreateTensorMapArg(fbb, &buffer, static_cast<uint8_t>(m.dtype), dims,
                                             m.pitchBytes, box));
    }
    auto tensorMaps = maps.empty() ? 0 : fbb.CreateVector(maps);
    fbs::Dim3 grid(s.grid[0], s.grid[1], s.grid[2]), block(s.block[0], s.block[1], s.block[2]);
    auto off = fbs::CreateLaunchStep(fbb, s.module, kernel, &grid, &block, s.sharedBytes, args,
                                     origin, tensorMaps, s.waitsForGrid);
    return {fbs::Step::LaunchStep, off.Union()};
  }
  std::pair<fbs::Step, Offset<void>> operator()(const CopyStep &s) const {
    auto origin = fbb.CreateString(s.origin);
    fbs::BufferRef src = toFb(s.src), dst = toFb(s.dst);
    return {fbs::Step::CopyStep, fbs::CreateCopyStep(fbb, &src, &dst, origin).Union()};
  }
  std::pair<fbs::Step, Offset<void>> operator()(const HostStep &s) const {
    auto text = fbb.CreateString(s.graphText);
    auto inputs = writeRefs(fbb, s.inputs);
    auto outputs = writeRefs(fbb, s.outputs);
    auto origin = fbb.CreateString(s.origin);
    return {fbs::Step::HostStep, fbs::CreateHostStep(fbb, text, inputs, outputs, origin).Union()};
  }
};

/// A piece of a program's constant pool that is the data of graph constant `hash`.
struct Segment {
  uint64_t offset = 0, bytes = 0;
  std::string hash;
};

/// The pieces of `p`'s constant pool that hold a graph constant's bytes exactly (found through
/// the buffers the program uses: kernel arguments, copies, host steps, its outputs), sorted by
/// offset and disjoint. `bySize`: the elided graph constants by byte size.
std::vector<Segment> sharedSegments(
    const Program &p,
    const std::map<uint64_t, std::vector<const std::pair<const std::string, Tensor> *>> &bySize) {
  std::vector<BufferRef> refs;
  auto add = [&](const BufferRef &r) {
    if (r.space == Space::kConstants && r.bytes >= kMinSharedBytes &&
        r.offset + r.bytes <= p.constants.size())
      refs.push_back(r);
  };
  for (const Step &s : p.steps) {
    if (const auto *l = std::get_if<LaunchStep>(&s)) {
      for (const BufferRef &r : l->args)
        add(r);
      for (const TensorMapArg &m : l->tensorMaps)
        add(m.buffer);
    } else if (const auto *c = std::get_if<CopyStep>(&s))
      add(c->src);
    else if (const auto *h = std::get_if<HostStep>(&s))
      for (const BufferRef &r : h->inputs)
        add(r);
  }
  for (const ProgramTensor &t : p.outputs)
    add(t.buffer);
  std::sort(refs.begin(), refs.end(), [](const BufferRef &a, const BufferRef &b) {
    return a.offset != b.offset ? a.offset < b.offset : a.bytes > b.bytes;
  });
  std::vector<Segment> out;
  uint64_t end = 0;
  for (const BufferRef &r : refs) {
    if (r.offset < end)
      continue; // inside (or overlapping) a piece already taken
    auto it = bySize.find(r.bytes);
    if (it == bySize.end())
      continue;
    for (const auto *c : it->second)
      if (std::memcmp(p.constants.data() + r.offset, c->second.raw(), r.bytes) == 0) {
        out.push_back({r.offset, r.bytes, c->first});
        end = r.offset + r.bytes;
        break;
      }
  }
  return out;
}

Offset<fbs::Program> writeProgram(FlatBufferBuilder &fbb, const Program &p, int constantsFrom,
                                  const std::vector<Segment> &segments) {
  std::vector<Offset<fbs::Module>> modules;
  for (const Module &m : p.modules) {
    auto cubin = writeBytes(fbb, m.cubin.data(), m.cubin.size());
    auto arch = fbb.CreateString(m.arch);
    auto ptx = fbb.CreateString(m.ptx);
    auto kernels = fbb.CreateVectorOfStrings(m.kernels);
    modules.push_back(fbs::CreateModule(fbb, arch, cubin, ptx, kernels));
  }
  auto modulesOff = fbb.CreateVector(modules);
  std::vector<fbs::Step> stepTypes;
  std::vector<Offset<void>> steps;
  for (const Step &s : p.steps) {
    auto [type, off] = std::visit(StepWriter{fbb}, s);
    stepTypes.push_back(type);
    steps.push_back(off);
  }
  auto stepTypesOff = fbb.CreateVector(stepTypes);
  auto stepsOff = fbb.CreateVector(steps);
  // The pool's bytes outside the shared segments, in order.
  uint64_t shared = 0;
  for (const Segment &seg : segments)
    shared += seg.bytes;
  const size_t own = constantsFrom >= 0 ? 0 : static_cast<size_t>(p.constants.size() - shared);
  fbb.ForceVectorAlignment(own, 1, kDataAlign);
  uint8_t *dst = nullptr;
  auto constants = fbb.CreateUninitializedVector(own, 1, &dst);
  if (constantsFrom < 0) {
    uint64_t at = 0;
    for (const Segment &seg : segments) {
      std::memcpy(dst, p.constants.data() + at, seg.offset - at);
      dst += seg.offset - at;
      at = seg.offset + seg.bytes;
    }
    // memcpy from an empty vector's data() (null) is undefined even for
    // zero bytes; a model without constants reaches here.
    if (p.constants.size() > at)
      std::memcpy(dst, p.constants.data() + at, p.constants.size() - at);
  }
  std::vector<Offset<fbs::ConstantSegment>> segOffs;
  for (const Segment &seg : segments)
    segOffs.push_back(
        fbs::CreateConstantSegment(fbb, seg.offset, seg.bytes, fbb.CreateString(seg.hash)));
  auto segmentsOff = fbb.CreateVector(segOffs);
  auto inputs = writeProgramTensors(fbb, p.inputs);
  auto outputs = writeProgramTensors(fbb, p.outputs);
  std::vector<Offset<fbs::KernelSource>> sources;
  for (const auto &[kernel, source] : p.sources) {
    auto k = fbb.CreateString(kernel);
    auto s = fbb.CreateString(source);
    sources.push_back(fbs::CreateKernelSource(fbb, k, s));
  }
  auto sourcesOff = fbb.CreateVector(sources);
  return fbs::CreateProgram(fbb, modulesOff, stepTypesOff, stepsOff, p.arenaBytes, constants,
                            inputs, outputs, sourcesOff, constantsFrom, segmentsOff,
                            constantsFrom >= 0 ? 0 : p.constants.size(), p.zeroedBytes);
}

/// An upper bound of the bytes the big parts take, to size the builder and refuse early.
uint64_t estimateBytes(const Package &p, const std::string &text,
                       const std::map<std::string, Tensor> &constants) {
  uint64_t n = text.size() + 4096;
  for (const auto &[hash, t] : constants)
    n += static_cast<uint64_t>(t.byteSize()) + 64 + 8 * t.shape().size() + kDataAlign;
  for (const CompiledProgram &cp : p.programs) {
    const Program &prog = *cp.program;
    n += prog.constants.size() + kDataAlign + 64 * prog.steps.size();
    for (const Module &m : prog.modules)
      n += m.cubin.size() + m.ptx.size() + kDataAlign + 64;
    for (const auto &[k, s] : prog.sources)
      n += k.size() + s.size() + 16;
    for (const Step &s : prog.steps)
      if (const auto *h = std::get_if<HostStep>(&s))
        n += h->graphText.size();
  }
  return n;
}

/// Hashes the big elided constants of `g` (and its bodies) on a few threads, so that the
/// package's hash keys and the printed text (Tensor::hash, memoized) cost a fraction of the
/// serial time: FNV-1a goes a byte at a time.
void hashInParallel(const Graph &g, int64_t inlineLimit) {
  std::vector<const Tensor *> big;
  auto add = [&](const Tensor &t) {
    if (t.numElements() > inlineLimit && t.byteSize() >= Tensor::kHashMemoBytes)
      big.push_back(&t);
  };
  std::function<void(const Graph &)> gather = [&](const Graph &graph) {
    for (const Value *c : graph.constants())
      add(c->constant());
    for (const Node *n : graph.nodes())
      for (const auto &[name, a] : n->attrs())
        if (a.kind() == AttrKind::kTensor)
          add(a.tensor());
        else if (a.kind() == AttrKind::kGraph)
          gather(a.graph());
  };
  gather(g);
  const size_t workers =
      std::min<size_t>({big.size(), 8, std::max(1u, std::thread::hardware_concurrency())});
  if (workers < 2)
    return;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < big.size(); i = next++)
      big[i]->hash();
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w)
    threads.emplace_back(work);
  work();
  for (std::thread &t : threads)
    t.join();
}

} // namespace

std::vector<uint8_t> SerializedPackage::join() const {
  std::vector<uint8_t> out; // filled by copies only: no zeroing of a weights-sized buffer first
  out.reserve(size());
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload, payload + payloadSize);
  return out;
}

Expected<std::vector<uint8_t>> serializePackage(const Package &p) {
  DLC_ASSIGN_OR_RETURN(SerializedPackage parts, serializePackageParts(p));
  return parts.join();
}

Expected<SerializedPackage> serializePackageParts(const Package &p) {
  DLC_RETURN_IF_ERROR(checkPackage(p).withContext("serializePackage"));
  const PrintOptions printOpts; // elides constants above inlineLimit elements
  hashInParallel(*p.graph, printOpts.inlineLimit);
  std::map<std::string, Tensor> constants;
  DLC_RETURN_IF_ERROR(
      collectConstants(*p.graph, printOpts.inlineLimit, constants).withContext("serializePackage"));
  std::string text = printGraph(*p.graph, printOpts);
  uint64_t estimate = estimateBytes(p, text, constants);
  if (estimate > kMaxPayload)
    return outOfRange("serializePackage: the package needs about {} MiB, above the 2 GiB a "
                      "FlatBuffer can hold",
                      estimate >> 20);

  FlatBufferBuilder fbb(static_cast<size_t>(std::min<uint64_t>(estimate, 1ull << 30)));
  std::map<uint64_t, std::vector<const std::pair<const std::string, Tensor> *>> constantsBySize;
  for (const auto &kv : constants)
    if (static_cast<uint64_t>(kv.second.byteSize()) >= kMinSharedBytes)
      constantsBySize[static_cast<uint64_t>(kv.second.byteSize())].push_back(&kv);
  std::vector<Offset<fbs::Constant>> constOffs;
  for (const auto &[hash, t] : constants) {
    auto data = writeBytes(fbb, t.raw(), static_cast<size_t>(t.byteSize()));
    auto h = fbb.CreateString(hash);
    auto shape = fbb.CreateVector(t.shape());
    constOffs.push_back(fbs::CreateConstant(fbb, h, static_cast<uint8_t>(t.dtype()), shape, data));
  }
  auto constVec = fbb.CreateVector(constOffs);
  auto textOff = fbb.CreateString(text);
  auto graph = fbs::CreateGraph(fbb, textOff, constVec);

  std::vector<Offset<fbs::CompiledProgram>> programs;
  for (size_t i = 0; i < p.programs.size(); ++i) {
    const CompiledProgram &cp = p.programs[i];
    int from = -1; // an earlier program with the same constant pool
    for (size_t j = 0; j < i && from < 0; ++j)
      if (p.programs[j].program->constants == cp.program->constants &&
          !cp.program->constants.empty())
        from = static_cast<int>(j);
    auto prog = writeProgram(fbb, *cp.program, from,
                             from >= 0 ? std::vector<Segment>{}
                                       : sharedSegments(*cp.program, constantsBySize));
    std::vector<Offset<fbs::DimBinding>> dims;
    for (const auto &[name, value] : cp.dims)
      dims.push_back(fbs::CreateDimBinding(fbb, fbb.CreateString(name), value));
    auto dimsOff = fbb.CreateVector(dims);
    programs.push_back(fbs::CreateCompiledProgram(fbb, dimsOff, prog));
  }
  auto programsOff = fbb.CreateVector(programs);
  std::vector<Offset<fbs::DimRange>> ranges;
  for (const DimRange &r : p.dimRanges)
    ranges.push_back(fbs::CreateDimRange(fbb, fbb.CreateString(r.name), r.min, r.max));
  auto rangesOff = fbb.CreateVector(ranges);
  auto inputs = writeNamedTypes(fbb, p.inputs);
  auto outputs = writeNamedTypes(fbb, p.outputs);
  auto version = fbb.CreateString(p.dlcVersion);
  fbb.Finish(fbs::CreatePackage(fbb, version, inputs, outputs, rangesOff, graph, programsOff));

  auto payload = std::make_shared<flatbuffers::DetachedBuffer>(fbb.Release());
  SerializedPackage out;
  uint8_t *header = out.header.data();
  std::memcpy(header, kMagic, sizeof(kMagic));
  putLE(header + 8, kPackageFormatVersion, 4);
  putLE(header + 12, 0, 4); // flags
  putLE(header + 16, payload->size(), 8);
  putLE(header + 24,
        packageChecksum(header, payload->data(), payload->size(), kPackageFormatVersion), 8);
  out.payload = payload->data();
  out.payloadSize = payload->size();
  out.storage = std::move(payload);
  return out;
}

} // namespace dlc::rt
