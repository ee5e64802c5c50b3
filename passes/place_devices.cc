// place-devices: gives every node a device, after TensorFlow's placer (placer.h,
// colocation_graph.cc; DESIGN.md "Placement"). The devices are `cpu` and `gpu:0` ..
// `gpu:<gpus-1>` (option `gpus`, default 1; none with `gpu=false`). What the model asks for
// comes in as annotations (ir/annotations/placement.h): `place.request`, `place.colocate`,
// `place.ref_inputs`.
//
// Constraints, in order:
//  1. A device already set on a node (the text IR's `@cpu`, an earlier run) stays.
//  2. A node's `place.request` is a TensorFlow device spec (`/device:GPU:1`, `/gpu:0`, ...); a
//     malformed one is an error naming the node. A request is honoured when the device exists
//     and has a kernel for the node: the CPU (the reference backend) runs every op; a GPU runs
//     what PassOptions::gpuSupport says (passes/placement.h), or, without that hook (plain
//     `dlc opt`), every op not listed in `gpu-unsupported`: a fake GPU for tests.
//  3. Nodes named in `place.colocate`, and the two ends of a reference edge
//     (`place.ref_inputs`), form one colocation group (union-find) and share a device. The
//     group's device must suit every member (the intersection of the devices each can run on)
//     and every member's request (the requests must agree); a member set before (rule 1)
//     decides the group's device.
//  4. Without a request, a group goes to the first GPU that suits it, else the CPU, except:
//     small integer shape computations go to the CPU (nodes whose outputs are all integer or
//     bool with a static shape of at most 64 elements, and whose present inputs are too; Shape
//     and Size read only their input's type, and none reads a value a GPU computed): this is
//     the Shape -> Gather -> Concat arithmetic that fold-constants could not resolve, and a
//     kernel launch costs more than the host;
//     and a node alone whose inputs are all constants (RandomUniform, Range) goes where its
//     first consumer in graph order went, as TensorFlow's placer places generator nodes.
//  5. Soft placement (the default): a request or a colocation that cannot be met is dropped
//     with one warning per node (what was asked, what was given, why), and a node the GPU
//     cannot run falls back to the CPU with a warning. With `strict=true` each of these is an
//     error instead, worded as TensorFlow's ("Cannot assign a device for operation 'X': Could
//     not satisfy explicit device specification ..."), and all of them are reported at once.
//
// The pass leaves `place.group` on members of a group of two or more and `place.reason` where
// the device needed explaining (ir/annotations/placement.h); `--placement-report` reads them.
//
// Before: types inferred (rule 4 reads them). After: every node has a device.
// Not done here: copies between devices (insert-copies), cost models, splitting the graph
// across several GPUs by load (a node without a request never goes past gpu:0).
#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ir/annotations/placement.h"
#include "passes/registry.h"

namespace dlc {

namespace {

constexpr int64_t kShapeComputationLimit = 64;
constexpr std::string_view kShapeReason = "small integer shape computation";
/// Where a warning names the device a node got, known only once its group is placed.
constexpr std::string_view kGiven = "\x01given\x01";

bool isIntegerLike(DType t) { return isInteger(t) || t == DType::kBool; }

/// A small, static, integer or bool value.
bool isSmallInteger(const Value *v) {
  if (!isIntegerLike(v->dtype()))
    return false;
  std::optional<int64_t> count = v->shape().numElements();
  return count && *count <= kShapeComputationLimit;
}

/// Rule 4: every output is a small integer value, and so is every present input unless the
/// node reads only its input's type.
bool isShapeComputation(const Node &n) {
  for (const Value *v : n.outputs())
    if (v && !isSmallInteger(v))
      return false;
  if (n.op() == Op::kShape || n.op() == Op::kSize)
    return true;
  bool any = false;
  for (const Value *v : n.inputs()) {
    if (!v)
      continue;
    if (!isSmallInteger(v))
      return false;
    any = true;
  }
  return any;
}

/// Whether `n` reads a value a GPU computes: small integers made there (a count, the indices
/// NonMaxSuppression selected) stay there, since moving them to the host costs a wait for the
/// device and breaks the program's CUDA graph.
bool readsGpuValue(const Node &n) {
  if (n.op() == Op::kShape || n.op() == Op::kSize) // their input's type, not its elements
    return false;
  const Attribute *a = n.graph()->findAnnotation(kPlaceInputsOnGpuAttr);
  const bool inputsOnGpu = a && a->kind() == AttrKind::kInt && a->i() != 0;
  return std::any_of(n.inputs().begin(), n.inputs().end(), [&](const Value *v) {
    return v && ((v->isNodeOutput() && v->producer()->device().kind == Device::Kind::kGpu) ||
                 (v->isInput() && inputsOnGpu));
  });
}

/// No input but constants (or none at all): a generator, placed with its consumer.
bool readsOnlyConstants(const Node &n) {
  return std::all_of(n.inputs().begin(), n.inputs().end(),
                     [](const Value *v) { return !v || v->isConstant(); });
}

/// Splits `a|b|c` (op text names) and checks each name.
Expected<std::vector<Op>> parseOpList(std::string_view text) {
  std::vector<Op> ops;
  while (!text.empty()) {
    size_t bar = text.find('|');
    std::string_view name = text.substr(0, bar);
    std::optional<Op> op = parseOpName(name);
    if (!op)
      return invalidArgument("option 'gpu-unsupported': unknown op '{}' (use text names such as "
                             "'top_k', separated by '|')",
                             name);
    ops.push_back(*op);
    text = bar == std::string_view::npos ? std::string_view() : text.substr(bar + 1);
  }
  return ops;
}

/// `'conv1'`: a node as TensorFlow's messages name it (the first output's name when unnamed).
std::string quoted(const Node &n) {
  if (!n.name().empty())
    return "'" + n.name() + "'";
  const Value *v = n.numOutputs() ? n.output(0) : nullptr;
  return v ? "'%" + v->name() + "'" : "'?'";
}

std::vector<size_t> unionFindRoots(std::vector<size_t> &parent) {
  auto find = [&](size_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<size_t> root(parent.size());
  for (size_t i = 0; i < parent.size(); ++i)
    root[i] = find(i);
  return root;
}

/// One placement run over a graph.
class Placer {
public:
  struct Config {
    bool gpu = true;
    int gpus = 1;
    bool strict = false;
    std::vector<Op> unsupported;
  };

  Placer(Graph &g, const PassOptions &options, Config config)
      : options_(options), config_(std::move(config)), nodes_(g.nodes()) {
    devices_.push_back(Device::cpu());
    for (int i = 0; config_.gpu && i < config_.gpus; ++i)
      devices_.push_back(Device::gpu(i));
    warnings_.resize(nodes_.size());
  }

  Expected<bool> run() {
    DLC_RETURN_IF_ERROR(readRequests());
    buildGroups();
    for (size_t gi = 0; gi < groups_.size(); ++gi)
      placeGroup(gi);
    for (size_t i : deferred_)
      placeGenerator(i);
    if (!failures_.empty() || !fallbacks_.empty())
      return strictError();
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (!warnings_[i].empty())
        options_.warnf("{}: {}", nodes_[i]->describe(), warnings_[i]);
    return changed_;
  }

private:
  // --- Reading the model's constraints ----------------------------------------------------

  Status readRequests() {
    requests_.resize(nodes_.size());
    std::string malformed;
    int count = 0;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const Node &n = *nodes_[i];
      DLC_RETURN_IF_ERROR(checkPlacementAnnotations(n));
      index_[&n] = i;
      Expected<DeviceSpec> spec = parseDeviceSpec(placeRequestOf(n));
      if (!spec) {
        malformed +=
            fmt::format("{}{}: {}", count++ ? "\n  " : "", n.describe(), spec.status().message());
        continue;
      }
      requests_[i] = *spec;
    }
    if (count > 1)
      return invalidArgument("{} nodes have a malformed place.request:\n  {}", count, malformed);
    if (count == 1)
      return invalidArgument("{}", malformed);
    return Status::ok();
  }

  /// Rule 3: union-find over place.colocate and place.ref_inputs.
  void buildGroups() {
    std::vector<size_t> parent(nodes_.size());
    std::iota(parent.begin(), parent.end(), 0);
    std::unordered_map<std::string, size_t> byName;
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (!nodes_[i]->name().empty())
        byName.emplace(nodes_[i]->name(), i);
    auto unite = [&](size_t a, size_t b) {
      std::vector<size_t> roots = {a, b};
      for (size_t &r : roots)
        while (parent[r] != r)
          r = parent[r];
      parent[std::max(roots[0], roots[1])] = std::min(roots[0], roots[1]);
    };
    std::vector<std::string> links(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const Node &n = *nodes_[i];
      for (const std::string &name : placeColocateOf(n)) {
        auto it = byName.find(name);
        if (it == byName.end()) {
          options_.debugf("{}: place.colocate names '{}', which is no node of the graph (a "
                          "constant, a removed Identity or a graph input): no constraint",
                          n.describe(), name);
          continue;
        }
        unite(i, it->second);
        links[i] += fmt::format("{}place.colocate of {} names {}", links[i].empty() ? "" : "; ",
                                quoted(n), quoted(*nodes_[it->second]));
      }
      for (int64_t k : placeRefInputsOf(n)) {
        const Value *v = n.input(static_cast<int>(k));
        if (!v || !v->producer()) {
          options_.debugf("{}: reference input {} is {}: no constraint", n.describe(), k,
                          !v                ? "absent"
                          : v->isConstant() ? "a constant"
                                            : "a graph input");
          continue;
        }
        unite(i, index_.at(v->producer()));
        links[i] += fmt::format("{}reference edge {} -> {}", links[i].empty() ? "" : "; ",
                                quoted(*v->producer()), quoted(n));
      }
    }
    std::vector<size_t> root = unionFindRoots(parent);
    std::unordered_map<size_t, size_t> groupOfRoot;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      auto [it, fresh] = groupOfRoot.emplace(root[i], groups_.size());
      if (fresh)
        groups_.emplace_back();
      groups_[it->second].members.push_back(i);
      if (!links[i].empty())
        groups_[it->second].links += (groups_[it->second].links.empty() ? "" : "; ") + links[i];
    }
    int numbered = 0;
    for (Group &grp : groups_)
      grp.id = grp.members.size() > 1 ? numbered++ : -1;
  }

  // --- Devices ----------------------------------------------------------------------------

  /// Whether the GPUs can run node i; *why says why not.
  bool gpuCanRun(size_t i, std::string *why) {
    if (!config_.gpu) {
      *why = "the GPU is off (gpu=false)";
      return false;
    }
    const Node &n = *nodes_[i];
    if (std::count(config_.unsupported.begin(), config_.unsupported.end(), n.op())) {
      *why = fmt::format("op '{}' is listed in gpu-unsupported", n.opName());
      return false;
    }
    if (!options_.gpuSupport || options_.gpuSupport(n, why))
      return true;
    if (why->empty())
      *why = fmt::format("the GPU backend has no kernel for op '{}'", n.opName());
    return false;
  }

  std::string availableDevices() const {
    std::string s;
    for (const Device &d : devices_)
      s += (s.empty() ? "" : ", ") + tfDeviceName(d);
    return s;
  }

  /// The preferred device among `candidates`: the first GPU, else the CPU.
  static Device preferred(const std::vector<Device> &candidates) {
    for (const Device &d : candidates)
      if (d.kind == Device::Kind::kGpu)
        return d;
    return candidates.front();
  }

  // --- Groups -----------------------------------------------------------------------------

  struct Group {
    std::vector<size_t> members; // node indices, in graph order
    std::string links;           // the constraints that joined them
    int id = -1;                 // place.group, or -1 for a node alone
  };

  std::string groupText(const Group &grp) const {
    std::string s;
    for (size_t m : grp.members)
      s += (s.empty() ? "" : ", ") + quoted(*nodes_[m]);
    return fmt::format("colocation group: {} ({})", s, grp.links);
  }

  /// A constraint that cannot be met: an error with strict=true, else a warning on `node`
  /// (completed with the device it got once the group is placed).
  /// `warning` may hold kGiven where the device goes. With strict=true an empty message adds
  /// nothing (another member's message covers the constraint).
  void fail(size_t node, std::string strictMessage, std::string warning) {
    if (config_.strict) {
      if (!strictMessage.empty())
        failures_.push_back(std::move(strictMessage));
    } else
      pendingWarnings_.emplace_back(node, std::move(warning));
  }

  void placeGroup(size_t gi) {
    const Group &grp = groups_[gi];
    const bool alone = grp.members.size() == 1;
    // Rule 1: a member placed before decides.
    std::optional<size_t> pinned;
    for (size_t m : grp.members)
      if (nodes_[m]->device().isSet() && !pinned)
        pinned = m;
    // Rule 3: what each member can run on.
    std::vector<Device> candidates = devices_;
    std::optional<size_t> noGpu; // the first member the GPUs cannot run
    // Per member, not per node of the graph: a group costs its size, not the graph's.
    std::unordered_map<size_t, std::string> why;
    std::unordered_set<size_t> gpuCannot;
    for (size_t m : grp.members) {
      if (nodes_[m]->device().isSet() || gpuCanRun(m, &why[m]))
        continue;
      gpuCannot.insert(m);
      if (!noGpu)
        noGpu = m;
      std::erase_if(candidates, [](const Device &d) { return d.kind == Device::Kind::kGpu; });
    }
    // Rule 2: the members' requests, merged.
    DeviceSpec merged;
    std::optional<size_t> requester;
    for (size_t m : grp.members) {
      const DeviceSpec &r = requests_[m];
      if (r.isEmpty() || nodes_[m]->device().isSet())
        continue;
      if (std::string conflict = mergeConflict(merged, r); !conflict.empty()) {
        fail(m,
             fmt::format("Cannot colocate nodes {} and {}: {}; {}", quoted(*nodes_[*requester]),
                         quoted(*nodes_[m]), conflict, groupText(grp)),
             fmt::format("requested '{}', placed on {}: it is colocated with {}, which requests "
                         "'{}' ({})",
                         placeRequestOf(*nodes_[m]), kGiven, quoted(*nodes_[*requester]),
                         placeRequestOf(*nodes_[*requester]), conflict));
        continue;
      }
      if (!requester)
        requester = m;
      if (merged.type.empty())
        merged.type = r.type;
      if (!merged.index)
        merged.index = r.index;
    }

    Device device;
    std::string reason;
    bool honoured = false;
    if (pinned) {
      device = nodes_[*pinned]->device();
      reason = fmt::format("colocated with {}, placed on {} before", quoted(*nodes_[*pinned]),
                           device.str());
      for (size_t m : grp.members)
        if (m != *pinned && nodes_[m]->device().isSet() && nodes_[m]->device() != device)
          fail(m,
               fmt::format("Cannot colocate nodes {} and {}: they were placed on {} and {} "
                           "before; {}",
                           quoted(*nodes_[*pinned]), quoted(*nodes_[m]), device.str(),
                           nodes_[m]->device().str(), groupText(grp)),
               fmt::format("stays on {}, apart from its colocation group on {}",
                           nodes_[m]->device().str(), device.str()));
      if (noGpu && device.kind == Device::Kind::kGpu)
        fail(*noGpu,
             fmt::format("Cannot colocate nodes {} and {}: {} is placed on {} and {} has no "
                         "supported kernel for GPU devices: {}; {}",
                         quoted(*nodes_[*pinned]), quoted(*nodes_[*noGpu]),
                         quoted(*nodes_[*pinned]), device.str(), quoted(*nodes_[*noGpu]),
                         why[*noGpu], groupText(grp)),
             fmt::format("runs on cpu, apart from its colocation group on {}: {}", device.str(),
                         why[*noGpu]));
    } else if (requester) {
      std::vector<Device> matching, suitable;
      for (const Device &d : devices_)
        if (merged.matches(d)) {
          matching.push_back(d);
          if (std::count(candidates.begin(), candidates.end(), d))
            suitable.push_back(d);
        }
      const Node &r = *nodes_[*requester];
      const std::string asked = placeRequestOf(r);
      if (!suitable.empty()) {
        honoured = true;
        device = preferred(suitable);
        reason = alone ? fmt::format("honours its request '{}'", asked)
                       : fmt::format("honours the request '{}' of {}", asked, quoted(r));
      } else {
        device = preferred(candidates);
        std::string because, strictText;
        if (matching.empty()) {
          because = fmt::format("no devices matching that specification are registered in "
                                "this process; available devices: {}",
                                availableDevices());
        } else if (!noGpu || *noGpu == *requester) {
          because =
              fmt::format("no supported kernel for GPU devices is available: {}", why[*noGpu]);
        } else {
          because =
              fmt::format("{} ({}) is colocated with it and has no supported kernel for "
                          "GPU devices: {}",
                          quoted(*nodes_[*noGpu]), opOnnxName(nodes_[*noGpu]->op()), why[*noGpu]);
          strictText = fmt::format("Cannot colocate nodes {} and {}: Could not satisfy explicit "
                                   "device specification '{}' of {} because {}; {}",
                                   quoted(r), quoted(*nodes_[*noGpu]), asked, quoted(r), because,
                                   groupText(grp));
        }
        if (strictText.empty())
          strictText = fmt::format("Cannot assign a device for operation {}: Could not satisfy "
                                   "explicit device specification '{}' because {}{}",
                                   quoted(r), asked, because, alone ? "" : "; " + groupText(grp));
        for (size_t m : grp.members)
          if (!requests_[m].isEmpty() && !nodes_[m]->device().isSet())
            fail(m, m == *requester ? strictText : "",
                 fmt::format("requested '{}', placed on {}: {}", placeRequestOf(*nodes_[m]), kGiven,
                             because));
        reason = fmt::format("request '{}' dropped: {}", asked, because);
        if (noGpu && *noGpu == *requester)
          noGpu.reset(); // the request's warning says it all
      }
    } else if (alone && readsOnlyConstants(*nodes_[grp.members[0]]) &&
               nodes_[grp.members[0]]->numOutputs() > 0) {
      deferred_.push_back(grp.members[0]);
      return;
    } else {
      std::tie(device, reason) = defaultDevice(grp, candidates);
    }
    if (noGpu && device.kind == Device::Kind::kCpu && config_.gpu && !pinned && !honoured &&
        reason != kShapeReason) {
      // Soft placement's CPU fallback (strict: the error lists these nodes).
      if (config_.strict)
        fallbacks_.emplace_back(*noGpu, why[*noGpu]);
      else if (!hasPending(*noGpu))
        pendingWarnings_.emplace_back(*noGpu, "runs on cpu: " + why[*noGpu]);
      if (!requester)
        reason = alone ? "no GPU kernel: " + why[*noGpu]
                       : fmt::format("colocated with {}, which has no GPU kernel: {}",
                                     quoted(*nodes_[*noGpu]), why[*noGpu]);
    }
    for (size_t m : grp.members) {
      std::string own = reason;
      Device d = device;
      if (!alone && noGpu && m == *noGpu && !pinned)
        own = "no GPU kernel: " + why[m];
      if (d.kind == Device::Kind::kGpu && gpuCannot.count(m)) // apart from a group pinned to a GPU
        d = Device::cpu(), own = "no GPU kernel: " + why[m];
      assign(m, nodes_[m]->device().isSet() ? nodes_[m]->device() : d, own, grp.id);
    }
  }

  bool hasPending(size_t node) const {
    return std::any_of(pendingWarnings_.begin(), pendingWarnings_.end(),
                       [&](const auto &w) { return w.first == node; });
  }

  /// Why two specs cannot be merged (TensorFlow's MergeDevNames wording), or "".
  static std::string mergeConflict(const DeviceSpec &a, const DeviceSpec &b) {
    if (!a.type.empty() && !b.type.empty() && a.type != b.type)
      return fmt::format("Cannot merge devices with incompatible types: '{}' and '{}'", a.str(),
                         b.str());
    if (a.index && b.index && *a.index != *b.index)
      return fmt::format("Cannot merge devices with incompatible ids: '{}' and '{}'", a.str(),
                         b.str());
    return "";
  }

  /// Rule 4 without a request.
  std::pair<Device, std::string> defaultDevice(const Group &grp,
                                               const std::vector<Device> &candidates) const {
    const bool shapes = std::all_of(grp.members.begin(), grp.members.end(), [&](size_t m) {
      return isShapeComputation(*nodes_[m]) && !readsGpuValue(*nodes_[m]);
    });
    if (config_.gpu && shapes)
      return {Device::cpu(), std::string(kShapeReason)};
    Device d = preferred(candidates);
    if (grp.members.size() > 1 && d.kind == Device::Kind::kGpu)
      return {d, "colocation group: the GPU runs every member"};
    return {d, ""};
  }

  /// Rule 4's generator: with its first consumer, when that device suits it.
  void placeGenerator(size_t i) {
    const Node &n = *nodes_[i];
    const Node *consumer = nullptr;
    for (const Value *v : n.outputs())
      for (const Use &u : v ? v->uses() : std::vector<Use>())
        if (!consumer || index_.at(u.node) < index_.at(consumer))
          consumer = u.node;
    std::string why;
    const bool gpuOk = gpuCanRun(i, &why);
    if (consumer && consumer->device().isSet() &&
        (consumer->device().kind == Device::Kind::kCpu || gpuOk)) {
      assign(i, consumer->device(), "follows its consumer " + quoted(*consumer), -1);
      return;
    }
    Group alone{{i}, "", -1};
    std::vector<Device> candidates = devices_;
    if (!gpuOk)
      candidates = {Device::cpu()};
    auto [device, reason] = defaultDevice(alone, candidates);
    if (!gpuOk && config_.gpu && device.kind == Device::Kind::kCpu && reason != kShapeReason) {
      if (config_.strict)
        fallbacks_.emplace_back(i, why);
      else
        pendingWarnings_.emplace_back(i, "runs on cpu: " + why);
      reason = "no GPU kernel: " + why;
    }
    assign(i, device, reason, -1);
  }

  // --- Results ----------------------------------------------------------------------------

  void assign(size_t i, Device d, const std::string &reason, int group) {
    Node &n = *nodes_[i];
    const bool before = n.device().isSet();
    for (auto &[node, text] : pendingWarnings_)
      if (node == i && warnings_[i].empty()) {
        warnings_[i] = text;
        if (size_t at = text.find(kGiven); at != std::string::npos)
          warnings_[i].replace(at, kGiven.size(), d.str());
      }
    std::erase_if(pendingWarnings_, [&](const auto &w) { return w.first == i; });
    if (before) {
      options_.debugf("{}: keeps its device {}", n.describe(), d.str());
    } else {
      n.setDevice(d);
      changed_ = true;
      if (reason.empty())
        options_.debugf("{}: {}", n.describe(), d.str());
      else
        options_.debugf("{}: {} ({})", n.describe(), d.str(), reason);
      setAnnotation(n, kPlaceReasonAttr,
                    reason.empty() ? std::nullopt : std::optional<Attribute>(reason));
    }
    setAnnotation(n, kPlaceGroupAttr,
                  group < 0 ? std::nullopt : std::optional<Attribute>(int64_t{group}));
  }

  void setAnnotation(Node &n, std::string_view name, std::optional<Attribute> a) {
    const Attribute *old = n.findAttr(name);
    if (!a && old) {
      n.removeAttr(name);
      changed_ = true;
    } else if (a && (!old || *old != *a)) {
      n.setAttr(std::string(name), std::move(*a));
      changed_ = true;
    }
  }

  Status strictError() const {
    std::string list;
    for (const std::string &f : failures_)
      if (!f.empty())
        list += "\n  " + f;
    int count = static_cast<int>(std::count_if(failures_.begin(), failures_.end(),
                                               [](const std::string &f) { return !f.empty(); }));
    for (const auto &[i, why] : fallbacks_)
      list += fmt::format("\n  {}: {}", nodes_[i]->describe(), why);
    if (count == 0)
      return unimplemented("{} node(s) cannot run on the GPU and strict=true forbids the CPU "
                           "fallback:{}",
                           fallbacks_.size(), list);
    if (count == 1 && fallbacks_.empty())
      return invalidArgument("{}", list.substr(3));
    return invalidArgument("{} placement constraint(s) cannot be met and strict=true forbids "
                           "soft placement:{}",
                           count + fallbacks_.size(), list);
  }

  const PassOptions &options_;
  Config config_;
  std::vector<Node *> nodes_;
  std::vector<Device> devices_; // cpu, then gpu:0 ..
  std::unordered_map<const Node *, size_t> index_;
  std::vector<DeviceSpec> requests_;
  std::vector<Group> groups_;
  std::vector<size_t> deferred_;      // generators, placed after their consumers
  std::vector<std::string> failures_; // strict: messages ("" : counted apart)
  std::vector<std::pair<size_t, std::string>> fallbacks_; // strict: CPU fallbacks
  std::vector<std::pair<size_t, std::string>> pendingWarnings_;
  std::vector<std::string> warnings_; // per node: the one warning soft placement gives
  bool changed_ = false;
};

class PlaceDevices : public Pass {
public:
  std::vector<PassOptionSpec> options() const override {
    return {
        {"gpu", PassOptionSpec::Kind::kBool,
         "place nodes on a GPU where one can run them (default true)"},
        {"gpus", PassOptionSpec::Kind::kInt,
         "how many GPUs exist, gpu:0 .. gpu:N-1, for requests such as '/device:GPU:1' "
         "(default 1; nodes without a request go to gpu:0)"},
        {"strict", PassOptionSpec::Kind::kBool,
         "a request, colocation or GPU kernel that cannot be had is an error instead of a "
         "fallback with a warning (default false)"},
        {"gpu-unsupported", PassOptionSpec::Kind::kString,
         "ops (text names, '|'-separated) the GPU is assumed to lack, for testing (default none)"},
    };
  }

  Expected<bool> run(Graph &g, const PassOptions &options) override {
    Placer::Config config;
    DLC_ASSIGN_OR_RETURN(config.gpu, options.getBool("gpu", true));
    DLC_ASSIGN_OR_RETURN(int64_t gpus, options.getInt("gpus", 1));
    if (gpus < 0 || gpus > 64)
      return invalidArgument("option 'gpus': expected 0 to 64 GPUs, got {}", gpus);
    config.gpus = static_cast<int>(gpus);
    config.gpu = config.gpu && gpus > 0;
    DLC_ASSIGN_OR_RETURN(config.strict, options.getBool("strict", false));
    DLC_ASSIGN_OR_RETURN(config.unsupported, parseOpList(options.getString("gpu-unsupported", "")));
    return Placer(g, options, std::move(config)).run();
  }
};

} // namespace

std::unique_ptr<Pass> createPlaceDevices() { return std::make_unique<PlaceDevices>(); }

} // namespace dlc
