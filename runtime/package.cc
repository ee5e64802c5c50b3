// Writing and reading packages: the header, the FlatBuffer of runtime/package.fbs, and the
// content checks shared by both directions. Format: runtime/PACKAGE_FORMAT.md.
#include "runtime/package.h"

#include <elf.h>

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <unordered_map>

#include "ir/file_util.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/tensor_text.h"
#include "ir/verifier.h"
#include "runtime/gpu_program.h"
#include "runtime/package_generated.h"

namespace dlc::rt {
namespace {

namespace fbs = ::dlc::rt::fb;

/// The offset basis format-1 packages were checksummed with: FNV's 14695981039346656037 with
/// its last digit lost (ir/tensor.h kept it until format 2).
constexpr uint64_t kFnv1a64OffsetFormat1 = 1469598103934665603ull;
static_assert(FLATBUFFERS_LITTLEENDIAN, "packages are read in place: little-endian hosts only");
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr uint8_t kMagic[8] = {0x89, 'D', 'L', 'C', 'P', 'K', 'G', '\n'};
/// Constants and cubins start at this alignment inside the payload.
constexpr size_t kDataAlign = 16;
/// The largest payload FlatBuffers can address.
constexpr uint64_t kMaxPayload = FLATBUFFERS_MAX_BUFFER_SIZE - 1;

void putLE(uint8_t *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t getLE(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint64_t{p[i]} << (8 * i);
  return v;
}

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

std::string describeDims(const std::map<std::string, int64_t> &dims) {
  return dims.empty() ? "no symbolic dims" : "dims " + dimBindingText(dims);
}

// --- Content checks (both directions) ---------------------------------------------------------

Status checkTensorNames(const std::vector<PackageTensor> &tensors, const std::set<std::string> &in,
                        const char *kind) {
  std::set<std::string> seen;
  for (const PackageTensor &t : tensors) {
    if (!seen.insert(t.name).second)
      return invalidArgument("{} '{}' is listed twice", kind, t.name);
    if (!in.count(t.name))
      return invalidArgument("{} '{}' is not an {} of the graph", kind, t.name, kind);
  }
  return Status::ok();
}

Status checkProgramShapes(const std::vector<ProgramTensor> &tensors, const char *kind) {
  for (const ProgramTensor &t : tensors) {
    auto n = checkedNumElements(t.shape, fmt::format("{} '{}'", kind, t.name));
    if (!n)
      return n.status();
    int64_t bytes = 0;
    if (__builtin_mul_overflow(*n, dtypeSize(t.dtype), &bytes))
      return invalidArgument("{} '{}': the size overflows", kind, t.name);
  }
  return Status::ok();
}

/// What serializePackage and deserializePackage both require of a package.
Status checkPackage(const Package &p) {
  if (!p.graph)
    return invalidArgument("the package has no graph");
  std::set<std::string> graphInputs, graphOutputs;
  for (const Value *v : p.graph->inputs())
    graphInputs.insert(v->name());
  for (const Graph::Output &o : p.graph->outputs())
    graphOutputs.insert(o.name);
  DLC_RETURN_IF_ERROR(checkTensorNames(p.inputs, graphInputs, "input"));
  DLC_RETURN_IF_ERROR(checkTensorNames(p.outputs, graphOutputs, "output"));
  std::map<std::string, const DimRange *> ranges;
  for (const DimRange &r : p.dimRanges) {
    if (r.name.empty())
      return invalidArgument("a dim range has no name");
    if (!ranges.emplace(r.name, &r).second)
      return invalidArgument("dim '{}' has two ranges", r.name);
    if (r.min < 0 || r.min > r.max)
      return invalidArgument("dim '{}' has an invalid range [{}, {}]", r.name, r.min, r.max);
  }
  for (size_t i = 0; i < p.programs.size(); ++i) {
    const CompiledProgram &cp = p.programs[i];
    std::string what = fmt::format("program {} ({})", i, describeDims(cp.dims));
    if (!cp.program)
      return invalidArgument("{}: no program", what);
    for (const auto &[name, value] : cp.dims) {
      auto it = ranges.find(name);
      if (it == ranges.end())
        return invalidArgument("{}: dim '{}' has no range in the package", what, name);
      if (value < it->second->min || value > it->second->max)
        return invalidArgument("{}: dim '{}' = {} lies outside its range [{}, {}]", what, name,
                               value, it->second->min, it->second->max);
    }
    Status s = checkProgramShapes(cp.program->inputs, "input");
    if (s)
      s = checkProgramShapes(cp.program->outputs, "output");
    if (s)
      s = validateProgram(*cp.program);
    if (!s)
      return s.withContext(what);
  }
  return Status::ok();
}

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
    out.push_back(
        fbs::CreateProgramTensor(fbb, name, static_cast<uint8_t>(t.dtype), shape, &buffer));
  }
  return fbb.CreateVector(out);
}

struct StepWriter {
  FlatBufferBuilder &fbb;
  std::pair<fbs::Step, Offset<void>> operator()(const LaunchStep &s) const {
    auto kernel = fbb.CreateString(s.kernel);
    auto args = writeRefs(fbb, s.args);
    auto origin = fbb.CreateString(s.origin);
    fbs::Dim3 grid(s.grid[0], s.grid[1], s.grid[2]), block(s.block[0], s.block[1], s.block[2]);
    auto off =
        fbs::CreateLaunchStep(fbb, s.module, kernel, &grid, &block, s.sharedBytes, args, origin);
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

Offset<fbs::Program> writeProgram(FlatBufferBuilder &fbb, const Program &p, int constantsFrom) {
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
  auto constants = constantsFrom >= 0 ? writeBytes(fbb, nullptr, 0)
                                      : writeBytes(fbb, p.constants.data(), p.constants.size());
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
                            inputs, outputs, sourcesOff, constantsFrom);
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

// --- Reading ------------------------------------------------------------------------------------

Expected<DType> readDType(uint8_t v, bool allowUnknown, const std::string &what) {
  if (v > static_cast<uint8_t>(DType::kBool) || (!allowUnknown && v == 0))
    return invalidArgument("{}: invalid dtype {}", what, v);
  return static_cast<DType>(v);
}

Expected<std::vector<int64_t>> readSizes(const flatbuffers::Vector<int64_t> *v,
                                         const std::string &what) {
  std::vector<int64_t> out;
  if (v && v->size()) {
    // The verifier aligns vectors to 4 bytes only: copy rather than read 8-byte elements in place.
    out.resize(v->size());
    std::memcpy(out.data(), v->Data(), v->size() * sizeof(int64_t));
  }
  for (int64_t d : out)
    if (d < 0)
      return invalidArgument("{}: negative dim {}", what, d);
  return out;
}

Expected<TensorType> readType(const fbs::TensorType *t, const std::string &what) {
  if (!t)
    return invalidArgument("{}: no type", what);
  DLC_ASSIGN_OR_RETURN(DType dtype, readDType(t->dtype(), true, what));
  if (!t->ranked()) {
    if (t->dims() && t->dims()->size())
      return invalidArgument("{}: an unranked type with dims", what);
    return TensorType(dtype, Shape::unranked());
  }
  std::vector<Dim> dims;
  if (t->dims())
    for (const fbs::Dim *d : *t->dims()) {
      if (d->symbol() && d->value() == -1 && d->symbol()->size())
        dims.push_back(Dim::symbol(d->symbol()->str()));
      else if (!d->symbol() && d->value() >= -1)
        dims.push_back(d->value() >= 0 ? Dim(d->value()) : Dim::unknown());
      else
        return invalidArgument("{}: invalid dim (value {}, symbol '{}')", what, d->value(),
                               str(d->symbol()));
    }
  return TensorType(dtype, Shape(std::move(dims)));
}

Expected<std::vector<PackageTensor>>
readNamedTypes(const flatbuffers::Vector<Offset<fbs::NamedType>> *v, const char *kind) {
  std::vector<PackageTensor> out;
  if (!v)
    return out;
  for (const fbs::NamedType *t : *v) {
    PackageTensor pt;
    pt.name = str(t->name());
    DLC_ASSIGN_OR_RETURN(pt.type, readType(t->type(), fmt::format("{} '{}'", kind, pt.name)));
    out.push_back(std::move(pt));
  }
  return out;
}

Expected<Tensor> readConstant(const fbs::Constant *c) {
  std::string what = fmt::format("constant {}", c->hash()->str());
  if (c->hash()->size() != 16)
    return invalidArgument("{}: the hash is not 16 hex digits", what);
  DLC_ASSIGN_OR_RETURN(DType dtype, readDType(c->dtype(), false, what));
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> shape, readSizes(c->shape(), what));
  DLC_ASSIGN_OR_RETURN(int64_t n, checkedNumElements(shape, what));
  int64_t bytes = 0;
  size_t have = c->data() ? c->data()->size() : 0;
  if (__builtin_mul_overflow(n, dtypeSize(dtype), &bytes) || static_cast<uint64_t>(bytes) != have)
    return invalidArgument("{}: {} needs {} bytes but holds {}", what,
                           TensorType(dtype, Shape::fromSizes(shape)).str(), bytes, have);
  const uint8_t *data = c->data() ? c->data()->data() : nullptr;
  if (dtype == DType::kBool)
    for (size_t i = 0; i < have; ++i)
      if (data[i] > 1)
        return invalidArgument("{}: bool byte {} is not 0 or 1", what, data[i]);
  Tensor t = Tensor::zeros(dtype, std::move(shape));
  if (have)
    std::memcpy(t.mutableRaw(), data, have);
  return t;
}

Expected<std::shared_ptr<const Graph>> readGraph(const fbs::Graph *g, std::string_view source) {
  std::unordered_map<std::string, Tensor> constants;
  if (g->constants())
    for (const fbs::Constant *c : *g->constants()) {
      DLC_ASSIGN_OR_RETURN(Tensor t, readConstant(c));
      if (!constants.emplace(c->hash()->str(), std::move(t)).second)
        return invalidArgument("constant {} is stored twice", c->hash()->str());
    }
  ParseOptions opts;
  opts.resolveConstant = [&constants](std::string_view hash) -> const Tensor * {
    auto it = constants.find(std::string(hash));
    return it == constants.end() ? nullptr : &it->second;
  };
  auto parsed = parseGraph(std::string_view(g->text()->data(), g->text()->size()),
                           fmt::format("{} (graph)", source), opts);
  if (!parsed)
    return parsed.takeStatus();
  VerifyOptions vopts;
  vopts.checkTypes = false;
  DLC_RETURN_IF_ERROR(verifyGraph(**parsed, vopts).withContext("the graph"));
  return std::shared_ptr<const Graph>(std::move(*parsed));
}

BufferRef fromFb(const fbs::BufferRef *r) {
  BufferRef out;
  if (r) {
    out.offset = r->offset();
    out.bytes = r->bytes();
    out.space = static_cast<Space>(r->space()); // checked by validateProgram
  }
  return out;
}

std::vector<BufferRef> readRefs(const flatbuffers::Vector<const fbs::BufferRef *> *v) {
  std::vector<BufferRef> out;
  if (v)
    for (size_t i = 0; i < v->size(); ++i) {
      // Possibly only 4-byte aligned (see readSizes): read through an aligned copy.
      fbs::BufferRef r;
      std::memcpy(&r, v->Data() + i * sizeof(fbs::BufferRef), sizeof(r));
      out.push_back(fromFb(&r));
    }
  return out;
}

Expected<std::vector<ProgramTensor>>
readProgramTensors(const flatbuffers::Vector<Offset<fbs::ProgramTensor>> *v, const char *kind) {
  std::vector<ProgramTensor> out;
  if (!v)
    return out;
  for (const fbs::ProgramTensor *t : *v) {
    ProgramTensor pt;
    pt.name = str(t->name());
    std::string what = fmt::format("{} '{}'", kind, pt.name);
    DLC_ASSIGN_OR_RETURN(pt.dtype, readDType(t->dtype(), false, what));
    DLC_ASSIGN_OR_RETURN(pt.shape, readSizes(t->shape(), what));
    pt.buffer = fromFb(t->buffer());
    out.push_back(std::move(pt));
  }
  return out;
}

Expected<Step> readStep(const fbs::Program *p, size_t i) {
  auto type = static_cast<fbs::Step>(p->steps_type()->Get(static_cast<flatbuffers::uoffset_t>(i)));
  const void *raw = p->steps()->Get(static_cast<flatbuffers::uoffset_t>(i));
  switch (type) {
  case fbs::Step::LaunchStep: {
    const auto *s = static_cast<const fbs::LaunchStep *>(raw);
    LaunchStep out;
    out.module = s->module_index();
    out.kernel = str(s->kernel());
    if (const fbs::Dim3 *g = s->grid()) {
      out.grid[0] = g->x(), out.grid[1] = g->y(), out.grid[2] = g->z();
    }
    if (const fbs::Dim3 *b = s->block()) {
      out.block[0] = b->x(), out.block[1] = b->y(), out.block[2] = b->z();
    }
    out.sharedBytes = s->shared_bytes();
    out.args = readRefs(s->args());
    out.origin = str(s->origin());
    return Step(std::move(out));
  }
  case fbs::Step::CopyStep: {
    const auto *s = static_cast<const fbs::CopyStep *>(raw);
    CopyStep out;
    out.src = fromFb(s->src());
    out.dst = fromFb(s->dst());
    out.origin = str(s->origin());
    return Step(std::move(out));
  }
  case fbs::Step::HostStep: {
    const auto *s = static_cast<const fbs::HostStep *>(raw);
    HostStep out;
    out.graphText = str(s->graph_text());
    out.inputs = readRefs(s->inputs());
    out.outputs = readRefs(s->outputs());
    out.origin = str(s->origin());
    return Step(std::move(out));
  }
  default:
    return invalidArgument("step {}: unknown step kind {}", i, static_cast<int>(type));
  }
}

Expected<std::shared_ptr<Program>> readProgram(const fbs::Program *p) {
  auto out = std::make_shared<Program>();
  if (p->modules())
    for (const fbs::Module *m : *p->modules()) {
      Module mod;
      mod.arch = str(m->arch());
      if (m->cubin())
        mod.cubin.assign(m->cubin()->begin(), m->cubin()->end());
      mod.ptx = str(m->ptx());
      if (m->kernels())
        for (const flatbuffers::String *k : *m->kernels())
          mod.kernels.push_back(k->str());
      out->modules.push_back(std::move(mod));
    }
  size_t numSteps = p->steps() ? p->steps()->size() : 0;
  size_t numTypes = p->steps_type() ? p->steps_type()->size() : 0;
  if (numSteps != numTypes)
    return invalidArgument("{} steps but {} step kinds", numSteps, numTypes);
  for (size_t i = 0; i < numSteps; ++i) {
    DLC_ASSIGN_OR_RETURN(Step s, readStep(p, i));
    out->steps.push_back(std::move(s));
  }
  out->arenaBytes = p->arena_bytes();
  if (p->constants())
    out->constants.assign(p->constants()->begin(), p->constants()->end());
  DLC_ASSIGN_OR_RETURN(out->inputs, readProgramTensors(p->inputs(), "input"));
  DLC_ASSIGN_OR_RETURN(out->outputs, readProgramTensors(p->outputs(), "output"));
  if (p->sources())
    for (const fbs::KernelSource *s : *p->sources())
      out->sources.emplace_back(str(s->kernel()), str(s->source()));
  return out;
}

Expected<Package> readPackage(const fbs::Package *fp, std::string_view source) {
  Package p;
  p.dlcVersion = str(fp->dlc_version());
  DLC_ASSIGN_OR_RETURN(p.inputs, readNamedTypes(fp->inputs(), "input"));
  DLC_ASSIGN_OR_RETURN(p.outputs, readNamedTypes(fp->outputs(), "output"));
  if (fp->dim_ranges())
    for (const fbs::DimRange *r : *fp->dim_ranges())
      p.dimRanges.push_back({str(r->name()), r->min(), r->max()});
  DLC_ASSIGN_OR_RETURN(p.graph, readGraph(fp->graph(), source));
  if (fp->programs())
    for (size_t i = 0; i < fp->programs()->size(); ++i) {
      const fbs::CompiledProgram *cp = fp->programs()->Get(static_cast<flatbuffers::uoffset_t>(i));
      CompiledProgram out;
      if (cp->dims())
        for (const fbs::DimBinding *d : *cp->dims())
          if (!out.dims.emplace(str(d->name()), d->value()).second)
            return invalidArgument("program {}: dim '{}' is bound twice", i, str(d->name()));
      auto prog = readProgram(cp->program());
      if (!prog)
        return prog.status().withContext(fmt::format("program {} ({})", i, describeDims(out.dims)));
      const int from = cp->program()->constants_from();
      if (from >= 0) {
        if (static_cast<size_t>(from) >= i ||
            (cp->program()->constants() && cp->program()->constants()->size() != 0))
          return invalidArgument("program {} ({}): takes its constants from program {}, which "
                                 "is not an earlier one, and has its own",
                                 i, describeDims(out.dims), from);
        (*prog)->constants = p.programs[static_cast<size_t>(from)].program->constants;
      } else if (from != -1) {
        return invalidArgument("program {} ({}): constants_from {} is negative", i,
                               describeDims(out.dims), from);
      }
      out.program = std::move(*prog);
      p.programs.push_back(std::move(out));
    }
  DLC_RETURN_IF_ERROR(checkPackage(p));
  return p;
}

} // namespace

std::vector<std::string> Package::arches() const {
  std::set<std::string> out;
  for (const CompiledProgram &cp : programs)
    if (cp.program)
      for (const Module &m : cp.program->modules)
        if (!m.cubin.empty())
          out.insert(m.arch);
  return {out.begin(), out.end()};
}

Expected<std::vector<uint8_t>> serializePackage(const Package &p) {
  DLC_RETURN_IF_ERROR(checkPackage(p).withContext("serializePackage"));
  const PrintOptions printOpts; // elides constants above inlineLimit elements
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
    auto prog = writeProgram(fbb, *cp.program, from);
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

  const uint8_t *payload = fbb.GetBufferPointer();
  const size_t size = fbb.GetSize();
  std::vector<uint8_t> out(kPackageHeaderBytes + size);
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  putLE(out.data() + 8, kPackageFormatVersion, 4);
  putLE(out.data() + 12, 0, 4); // flags
  putLE(out.data() + 16, size, 8);
  putLE(out.data() + 24, fnv1a64(payload, size), 8);
  std::memcpy(out.data() + kPackageHeaderBytes, payload, size);
  return out;
}

Expected<Package> deserializePackage(const uint8_t *data, size_t size, std::string_view source) {
  if (size < kPackageHeaderBytes)
    return invalidArgument("{}: not a dlc package: {} bytes, shorter than the {}-byte header",
                           source, size, kPackageHeaderBytes);
  if (std::memcmp(data, kMagic, sizeof(kMagic)) != 0)
    return invalidArgument("{}: not a dlc package (bad magic bytes)", source);
  const uint64_t version = getLE(data + 8, 4), flags = getLE(data + 12, 4);
  const uint64_t payloadSize = getLE(data + 16, 8), checksum = getLE(data + 24, 8);
  const bool complete = payloadSize <= size - kPackageHeaderBytes && payloadSize <= kMaxPayload;

  // FlatBuffers reads scalars in place: give it an aligned copy if the caller's bytes are not.
  const uint8_t *payload = data + kPackageHeaderBytes;
  std::shared_ptr<Buffer> aligned;
  if (complete && reinterpret_cast<uintptr_t>(payload) % kDataAlign != 0) {
    aligned = Buffer::allocate(payloadSize);
    if (payloadSize)
      std::memcpy(aligned->data(), payload, payloadSize);
    payload = aligned->data();
  }

  // Format 1 differs from 2 only in the checksum's offset basis (PACKAGE_FORMAT.md).
  const uint64_t basis = version == 1 ? kFnv1a64OffsetFormat1 : kFnv1a64Offset;
  if (version < kOldestReadablePackageFormat || version > kPackageFormatVersion) {
    std::string writer;
    if (complete && fnv1a64(payload, payloadSize) == checksum) {
      flatbuffers::Verifier v(payload, payloadSize);
      if (v.VerifyBuffer<fbs::PackageStamp>(nullptr)) {
        const auto *stamp = flatbuffers::GetRoot<fbs::PackageStamp>(payload);
        if (stamp->dlc_version() && stamp->dlc_version()->size())
          writer = " (dlc " + stamp->dlc_version()->str() + ")";
      }
    }
    return unimplemented("{}: was written by a dlc package format {}{}; this dlc reads formats "
                         "{} to {}",
                         source, version, writer, kOldestReadablePackageFormat,
                         kPackageFormatVersion);
  }
  if (flags != 0)
    return unimplemented("{}: unknown header flags {:#x}; format {} has none", source, flags,
                         version);
  if (!complete)
    return invalidArgument("{}: truncated: the header announces a {}-byte payload but {} bytes "
                           "follow it",
                           source, payloadSize, size - kPackageHeaderBytes);
  if (uint64_t actual = fnv1a64(payload, payloadSize, basis); actual != checksum)
    return invalidArgument("{}: corrupted: checksum {:016x} of the payload does not match the "
                           "header's {:016x}",
                           source, actual, checksum);
  flatbuffers::Verifier verifier(payload, payloadSize);
  if (!fbs::VerifyPackageBuffer(verifier))
    return invalidArgument("{}: corrupted: the payload fails the FlatBuffers verifier", source);
  auto pkg = readPackage(fbs::GetPackage(payload), source);
  if (!pkg)
    return pkg.status().withContext(fmt::format("{}: inconsistent package", source));
  pkg->formatVersion = version;
  return pkg;
}

/// The bytes of the `.dlc_package` section of an ELF shared library (every offset checked,
/// only the headers and that section read), or the whole file when it is a raw package.
Expected<std::vector<uint8_t>> readPackageFile(const std::string &path) {
  if (Status regular = checkRegularFile(path); !regular.isOk())
    return regular.withContext(path);
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f)
    return notFound("{}: cannot open the file", path);
  const auto end = f.tellg();
  if (end < 0)
    return notFound("{}: cannot read the file", path);
  const uint64_t fileSize = static_cast<uint64_t>(end);
  auto readAt = [&](uint64_t offset, uint64_t size, void *dst) {
    f.clear();
    f.seekg(static_cast<std::streamoff>(offset));
    return static_cast<bool>(f.read(static_cast<char *>(dst), static_cast<std::streamsize>(size)));
  };
  auto whole = [&]() -> Expected<std::vector<uint8_t>> {
    std::vector<uint8_t> bytes(fileSize);
    if (fileSize && !readAt(0, fileSize, bytes.data()))
      return invalidArgument("{}: cannot read the file", path);
    return bytes;
  };
  unsigned char ident[SELFMAG] = {};
  if (fileSize < SELFMAG || !readAt(0, SELFMAG, ident) || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    return whole(); // a raw package (or garbage: the package reader says which)
  Elf64_Ehdr eh;
  if (fileSize < sizeof eh || !readAt(0, sizeof eh, &eh))
    return invalidArgument("{}: truncated ELF file ({} bytes)", path, fileSize);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return invalidArgument("{}: not a 64-bit little-endian ELF file", path);
  const uint64_t shBytes = static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > fileSize ||
      shBytes > fileSize - eh.e_shoff || eh.e_shstrndx >= eh.e_shnum)
    return invalidArgument("{}: truncated or damaged ELF section table", path);
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (shBytes && !readAt(eh.e_shoff, shBytes, sections.data()))
    return invalidArgument("{}: cannot read the ELF section table", path);
  const Elf64_Shdr &names = sections[eh.e_shstrndx];
  if (names.sh_offset > fileSize || names.sh_size > fileSize - names.sh_offset ||
      names.sh_size > (64u << 20))
    return invalidArgument("{}: damaged ELF section names", path);
  std::string table(names.sh_size, '\0');
  if (names.sh_size && !readAt(names.sh_offset, names.sh_size, table.data()))
    return invalidArgument("{}: cannot read the ELF section names", path);
  for (const Elf64_Shdr &sh : sections) {
    if (sh.sh_name >= table.size())
      continue;
    const size_t nul = table.find('\0', sh.sh_name);
    if (nul == std::string::npos ||
        table.compare(sh.sh_name, nul - sh.sh_name, ".dlc_package") != 0)
      continue;
    if (sh.sh_offset > fileSize || sh.sh_size > fileSize - sh.sh_offset)
      return invalidArgument("{}: corrupted: the model section runs past the end of the file "
                             "(truncated?)",
                             path);
    std::vector<uint8_t> bytes(sh.sh_size);
    if (sh.sh_size && !readAt(sh.sh_offset, sh.sh_size, bytes.data()))
      return invalidArgument("{}: cannot read the model section", path);
    return bytes;
  }
  return notFound("{}: a shared library without a dlc model in it (no .dlc_package "
                  "section; was it written by `dlc compile -o`?)",
                  path);
}

std::string dimBindingText(const std::map<std::string, int64_t> &dims) {
  std::string s;
  for (const auto &[name, value] : dims)
    s += fmt::format("{}{}={}", s.empty() ? "" : ",", name, value);
  return s.empty() ? "static shapes" : s;
}

} // namespace dlc::rt
