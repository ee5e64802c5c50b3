// Placement annotations: what a frontend records about where the model wants its nodes, and
// what `place-devices` leaves about where they went and why (DESIGN.md "Placement").
//
//     %m = matmul(%x, %k) {place.request = "/device:GPU:0"} : f32[4,4] loc("m")
//     %r = relu(%x) {place.colocate = ["m"]} : f32[4,4] loc("r")
//     %u = add(%m, %r) {place.ref_inputs = [1]} : f32[4,4] loc("u")
//   after place-devices (m, r and u form colocation group 0):
//     %m = matmul(%x, %k) {place.group = 0, place.reason = "honours the request
//          '/device:GPU:0' of 'm'", place.request = "/device:GPU:0"} : f32[4,4] @gpu:0
//
// Written by the frontend (TensorFlow's NodeDef; ONNX has none of these):
//  * `place.request` (string): the device the model asked for, verbatim: TF's NodeDef `device`
//    (`/job:localhost/replica:0/task:0/device:GPU:0`, `/device:CPU:0`, `/gpu:0`, `/cpu:0`).
//    parseDeviceSpec reads it; an empty string is no request.
//  * `place.colocate` (strings): names of nodes this node must share a device with (TF
//    `_class: ["loc:@X"]` gives `X`). A name that is no node of the graph (a constant, an
//    Identity that was removed, a graph input) constrains nothing; place-devices says so in its
//    debug log.
//  * `place.ref_inputs` (ints): indices of this node's inputs that are reference edges (TF
//    `DT_*_REF`): the node and that input's producer share a device. An input that is a
//    constant or a graph input constrains nothing.
// Written by place-devices, read by the placement report (`--placement-report`):
//  * `place.group` (int): the colocation group of a node whose group has more than one member
//    (groups numbered 0, 1, ... by their first node); absent for a node alone.
//  * `place.reason` (string): one line on why the node got its device, when that was more than
//    the default: absent on a node that kept the device it had before the pass, went to gpu:0
//    because the GPU runs it, or went to cpu because the pass ran with gpu=false.
// Written by insert-copies on the copy nodes it adds:
//  * `place.reason` too: `copy of %h from gpu:0 to cpu`.
//
// Device specs follow TensorFlow's DeviceNameUtils::ParseFullName:
//   full     /job:localhost/replica:0/task:0/device:GPU:0
//   partial  /device:CPU:0   /device:GPU:1   /device:GPU   /device:GPU:*   /job:localhost
//   legacy   /gpu:0   /cpu:0   /GPU:0   /gpu:*
// The device type is case-insensitive (`/device:gpu:0` is `/device:GPU:0`) and any type name is
// accepted (`/device:TPU:0` parses; no such device exists, so it cannot be satisfied). dlc runs
// in one process: the job, replica and task fields are checked for form and then ignored
// (`/job:worker/task:3/device:GPU:0` asks for GPU 0 here).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc {

inline constexpr std::string_view kPlaceRequestAttr = "place.request";
inline constexpr std::string_view kPlaceColocateAttr = "place.colocate";
inline constexpr std::string_view kPlaceRefInputsAttr = "place.ref_inputs";
inline constexpr std::string_view kPlaceGroupAttr = "place.group";
inline constexpr std::string_view kPlaceReasonAttr = "place.reason";
/// A graph annotation (int 1): the graph's inputs are already in GPU memory (the part of a
/// model after a shape point, runtime/jit/segments.h), so place-devices treats them as values
/// a GPU computed.
inline constexpr std::string_view kPlaceInputsOnGpuAttr = "place.inputs_on_gpu";

/// A parsed device spec: the type and index asked for, each possibly left open.
struct DeviceSpec {
  /// Upper-case device type (`CPU`, `GPU`, `TPU`); empty: any type.
  std::string type;
  /// The device index; nullopt: any index (`/device:GPU`, `/gpu:*`).
  std::optional<int> index;

  /// No type and no index: any device will do (the empty spec, `/job:localhost`).
  bool isEmpty() const { return type.empty() && !index; }
  /// Whether `d` (a set device) satisfies the spec.
  bool matches(const Device &d) const;
  /// The canonical partial form, `/device:GPU:1`, `/device:GPU:*`, `/device:CPU:0`; `` when
  /// empty.
  std::string str() const;
};

/// Parses a TensorFlow device string (see above). Empty text gives the empty spec. Errors read
/// `malformed device specification '/device:GPU:x': <what is wrong>`; callers add the node.
Expected<DeviceSpec> parseDeviceSpec(std::string_view text);

/// `/device:CPU:0` or `/device:GPU:N`: how TensorFlow names dlc's device `d` (set).
std::string tfDeviceName(const Device &d);

/// The node's `place.request`, verbatim (empty when absent or not a string).
std::string placeRequestOf(const Node &n);
/// The node's `place.colocate` names (empty when absent).
std::vector<std::string> placeColocateOf(const Node &n);
/// The node's `place.ref_inputs` (empty when absent).
std::vector<int64_t> placeRefInputsOf(const Node &n);

/// Checks the kinds of the placement annotations of `n` (string, strings, ints, int, string)
/// and that every `place.ref_inputs` index names an input of the node. Errors name the node.
Status checkPlacementAnnotations(const Node &n);

} // namespace dlc
