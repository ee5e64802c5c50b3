// Reading packages: the header, the FlatBuffer of runtime/package.fbs, the content checks
// (shared with the writer, package_write.cc) and the constant pools of format 3.
// Format: runtime/PACKAGE_FORMAT.md.
#include "runtime/package.h"

#include <elf.h>

#include <flatbuffers/flatbuffers.h>
#define XXH_INLINE_ALL // header-only: a model library links nothing of xxHash's
#include <xxhash.h>

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
#include "runtime/package_internal.h"

namespace dlc::rt {

namespace detail {

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

uint64_t packageChecksum(const uint8_t *header, const uint8_t *payload, size_t size,
                         uint64_t version) {
  if (version <= 2)
    return fnv1a64(payload, size, version == 1 ? kFnv1a64OffsetFormat1 : kFnv1a64Offset);
  if (version == 3)
    return fnv1a64(payload, size, fnv1a64(header, 24));
  return XXH3_64bits_withSeed(payload, size, XXH3_64bits(header, 24));
}

} // namespace detail

namespace {

using namespace detail; // NOLINT: the package internals
using flatbuffers::Offset;

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
} // namespace

Status detail::checkPackage(const Package &p) {
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

namespace {

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
    pt.firstStep = t->first_step();
    out.push_back(std::move(pt));
  }
  return out;
}

/// A launch step's tensor maps (format 5): two dims and two box sizes each.
Expected<std::vector<TensorMapArg>>
readTensorMaps(const flatbuffers::Vector<Offset<fbs::TensorMapArg>> *v, const std::string &what) {
  std::vector<TensorMapArg> out;
  if (!v)
    return out;
  for (const fbs::TensorMapArg *m : *v) {
    TensorMapArg a;
    const std::string where = fmt::format("{}, tensor map {}", what, out.size());
    if (!m->dims() || m->dims()->size() != 2 || !m->box() || m->box()->size() != 2)
      return invalidArgument("{}: needs 2 dims and 2 box sizes", where);
    a.buffer = fromFb(m->buffer());
    DLC_ASSIGN_OR_RETURN(a.dtype, readDType(m->dtype(), false, where));
    // The verifier aligns vectors to 4 bytes only: copy the 8-byte dims out.
    std::memcpy(a.dims, m->dims()->Data(), sizeof a.dims);
    a.pitchBytes = m->pitch_bytes();
    a.box[0] = m->box()->Get(0), a.box[1] = m->box()->Get(1);
    out.push_back(a);
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
    out.waitsForGrid = s->waits_for_grid();
    DLC_ASSIGN_OR_RETURN(out.tensorMaps,
                         readTensorMaps(s->tensor_maps(), fmt::format("step {}", i)));
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
  out->zeroedBytes = p->zeroed_bytes();
  if (out->zeroedBytes > out->arenaBytes)
    return invalidArgument("the zeroed state ({} bytes) is larger than the arena ({} bytes)",
                           out->zeroedBytes, out->arenaBytes);
  if (p->constants())
    out->constants.assign(p->constants()->begin(), p->constants()->end());
  DLC_ASSIGN_OR_RETURN(out->inputs, readProgramTensors(p->inputs(), "input"));
  DLC_ASSIGN_OR_RETURN(out->outputs, readProgramTensors(p->outputs(), "output"));
  if (p->sources())
    for (const fbs::KernelSource *s : *p->sources())
      out->sources.emplace_back(str(s->kernel()), str(s->source()));
  return out;
}

/// Format 3: a pool stored as segments of graph constants and the bytes between them,
/// reassembled (format 2 and a pool without segments: as read).
Status rebuildPool(const fbs::Program *fp, const fbs::Graph *g, Program &p) {
  const auto *segs = fp->constant_segments();
  if (!segs || segs->size() == 0) {
    if (fp->constants_size() != 0 && fp->constants_size() != p.constants.size())
      return invalidArgument("the constant pool holds {} bytes, not the {} it declares",
                             p.constants.size(), fp->constants_size());
    return Status::ok();
  }
  if (fp->constants_from() >= 0)
    return invalidArgument("the constant pool is both shared with an earlier program and made "
                           "of segments");
  std::unordered_map<std::string_view, const fbs::Constant *> byHash;
  if (g && g->constants())
    for (const fbs::Constant *c : *g->constants())
      if (c->hash() && c->data())
        byHash.emplace(c->hash()->string_view(), c);
  const uint64_t size = fp->constants_size();
  if (size > kMaxPayload)
    return invalidArgument("the constant pool declares {} bytes", size);
  std::vector<uint8_t> pool(static_cast<size_t>(size));
  const std::vector<uint8_t> own = std::move(p.constants);
  uint64_t at = 0, from = 0; // in the pool, in `own`
  for (const fbs::ConstantSegment *seg : *segs) {
    const std::string_view hash = seg->constant() ? seg->constant()->string_view() : "";
    auto it = byHash.find(hash);
    if (it == byHash.end())
      return invalidArgument("a constant pool segment names constant '{}', which the graph does "
                             "not have",
                             hash);
    if (seg->offset() < at || seg->bytes() > size || seg->offset() > size - seg->bytes())
      return invalidArgument("a constant pool segment ({} bytes at {}) overlaps another or "
                             "lies past the pool's {} bytes",
                             seg->bytes(), seg->offset(), size);
    if (it->second->data()->size() != seg->bytes())
      return invalidArgument("constant '{}' has {} bytes, its pool segment {}", hash,
                             it->second->data()->size(), seg->bytes());
    const uint64_t gap = seg->offset() - at;
    if (gap > own.size() - from)
      return invalidArgument("the constant pool's own bytes end before offset {}", seg->offset());
    std::memcpy(pool.data() + at, own.data() + from, gap);
    from += gap;
    std::memcpy(pool.data() + seg->offset(), it->second->data()->data(), seg->bytes());
    at = seg->offset() + seg->bytes();
    p.constantBytesFromGraph += seg->bytes();
  }
  if (own.size() - from != size - at)
    return invalidArgument("the constant pool's own bytes after its last segment are {}, not {}",
                           own.size() - from, size - at);
  std::memcpy(pool.data() + at, own.data() + from, size - at);
  p.constants = std::move(pool);
  return Status::ok();
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
      DLC_RETURN_IF_ERROR(
          rebuildPool(cp->program(), fp->graph(), **prog)
              .withContext(fmt::format("program {} ({})", i, describeDims(out.dims))));
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

  if (version < kOldestReadablePackageFormat || version > kPackageFormatVersion) {
    std::string writer;
    if (complete && (fnv1a64(payload, payloadSize) == checksum ||
                     packageChecksum(data, payload, payloadSize, version) == checksum)) {
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
  if (uint64_t actual = packageChecksum(data, payload, payloadSize, version); actual != checksum)
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
