#include "ir/annotations/placement.h"

#include <cctype>
#include <limits>

namespace dlc {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool isName(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

/// A non-negative decimal index, or `*` (nullopt in *out).
bool parseIndex(std::string_view s, std::optional<int> *out) {
  if (s == "*") {
    *out = std::nullopt;
    return true;
  }
  if (s.empty() || s.size() > 9)
    return false;
  int v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

} // namespace

bool DeviceSpec::matches(const Device &d) const {
  if (!d.isSet())
    return false;
  const char *kind = d.kind == Device::Kind::kCpu ? "CPU" : "GPU";
  if (!type.empty() && type != kind)
    return false;
  return !index || *index == d.index;
}

std::string DeviceSpec::str() const {
  if (isEmpty())
    return "";
  std::string idx = index ? std::to_string(*index) : "*";
  return type.empty() ? "/device:*:" + idx : "/device:" + type + ":" + idx;
}

Expected<DeviceSpec> parseDeviceSpec(std::string_view text) {
  DeviceSpec spec;
  auto bad = [&](const std::string &what) -> Status {
    return invalidArgument("malformed device specification '{}': {}", text, what);
  };
  bool seen[4] = {false, false, false, false}; // job, replica, task, device
  std::string_view rest = text;
  while (!rest.empty()) {
    if (rest[0] != '/')
      return bad("expected '/' before each field");
    rest.remove_prefix(1);
    const size_t slash = rest.find('/');
    const std::string_view field = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos)
      return bad(fmt::format("field '{}' is not NAME:VALUE", field));
    const std::string_view key = field.substr(0, colon);
    const std::string_view value = field.substr(colon + 1);
    const std::string ukey = upper(key);
    int slot = key == "job" ? 0 : key == "replica" ? 1 : key == "task" ? 2 : 3;
    if (slot == 3 && key != "device" && ukey != "CPU" && ukey != "GPU")
      return bad(fmt::format("unknown field '{}' (expected job, replica, task, device, or the "
                             "legacy cpu and gpu)",
                             key));
    if (seen[slot])
      return bad(fmt::format("the {} is given twice", slot == 3 ? "device" : key));
    seen[slot] = true;
    std::optional<int> index;
    if (slot == 0) {
      if (!isName(value))
        return bad(fmt::format("job name '{}' is not a name", value));
    } else if (slot == 1 || slot == 2) {
      if (!parseIndex(value, &index))
        return bad(fmt::format("{} '{}' is not a number", key, value));
    } else if (key == "device") {
      const size_t c = value.find(':');
      const std::string_view type = value.substr(0, c);
      if (!isName(type))
        return bad(fmt::format("device type '{}' is not a name", type));
      spec.type = upper(type);
      if (c != std::string_view::npos) {
        if (!parseIndex(value.substr(c + 1), &index))
          return bad(fmt::format("device index '{}' is not a number", value.substr(c + 1)));
        spec.index = index;
      }
    } else { // legacy /cpu:0, /gpu:1
      if (!parseIndex(value, &index))
        return bad(fmt::format("device index '{}' is not a number", value));
      spec.type = ukey;
      spec.index = index;
    }
  }
  return spec;
}

std::string tfDeviceName(const Device &d) {
  return d.kind == Device::Kind::kCpu ? "/device:CPU:0" : fmt::format("/device:GPU:{}", d.index);
}

std::string placeRequestOf(const Node &n) {
  const Attribute *a = n.findAttr(kPlaceRequestAttr);
  return a && a->kind() == AttrKind::kString ? a->s() : std::string();
}

std::vector<std::string> placeColocateOf(const Node &n) {
  const Attribute *a = n.findAttr(kPlaceColocateAttr);
  return a && a->kind() == AttrKind::kStrings ? a->strings() : std::vector<std::string>();
}

std::vector<int64_t> placeRefInputsOf(const Node &n) {
  const Attribute *a = n.findAttr(kPlaceRefInputsAttr);
  return a && a->kind() == AttrKind::kInts ? a->ints() : std::vector<int64_t>();
}

Status checkPlacementAnnotations(const Node &n) {
  const std::pair<std::string_view, AttrKind> kinds[] = {
      {kPlaceRequestAttr, AttrKind::kString}, {kPlaceColocateAttr, AttrKind::kStrings},
      {kPlaceRefInputsAttr, AttrKind::kInts}, {kPlaceGroupAttr, AttrKind::kInt},
      {kPlaceReasonAttr, AttrKind::kString},
  };
  for (const auto &[name, kind] : kinds) {
    const Attribute *a = n.findAttr(name);
    if (a && a->kind() != kind)
      return invalidArgument("{}: annotation '{}' must be {}, got {}", n.describe(), name,
                             attrKindName(kind), attrKindName(a->kind()));
  }
  for (int64_t i : placeRefInputsOf(n))
    if (i < 0 || i >= n.numInputs())
      return invalidArgument("{}: annotation '{}' names input {}, but the node has {} input(s)",
                             n.describe(), kPlaceRefInputsAttr, i, n.numInputs());
  return Status::ok();
}

} // namespace dlc
