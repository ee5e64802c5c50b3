#include "frontend/onnx/tensor_proto.h"

#include <array>
#include <cstring>

#include "frontend/onnx/external_data.h"

namespace dlc::onnx::detail {

namespace {

using TP = ::onnx::TensorProto;

// ONNX data type numbers (onnx.proto; the newer ones are past the proto version we compile).
constexpr std::array<const char *, 24> kOnnxTypeNames = {
    "undefined",      "float",      "uint8",          "int8",       "uint16",   "int16",
    "int32",          "int64",      "string",         "bool",       "float16",  "double",
    "uint32",         "uint64",     "complex64",      "complex128", "bfloat16", "float8e4m3fn",
    "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",      "int4",     "float4e2m1"};

// A tensor holding `field` (a repeated proto field), each element converted with `conv`. The
// count is checked before anything is allocated, so huge dims with little data fail cleanly.
template <typename Dst, typename Field, typename Conv>
Expected<Tensor> fromField(const Field &field, const char *fieldName, const TensorHeader &h,
                           const std::string &what, Conv conv) {
  if (static_cast<int64_t>(field.size()) != h.numElements)
    return invalidArgument("{}: {} has {} values but {} needs {}", what, fieldName, field.size(),
                           h.typeStr(), h.numElements);
  Tensor t = Tensor::zeros(h.dtype, h.dims);
  Dst *out = t.mutableData<Dst>();
  for (int64_t i = 0; i < h.numElements; ++i)
    out[i] = conv(field.Get(static_cast<int>(i)));
  return t;
}

template <typename Dst> auto narrow() {
  return [](auto v) { return static_cast<Dst>(v); };
}

Expected<Tensor> fromTypedData(const TP &p, const TensorHeader &h, const std::string &what) {
  switch (h.dtype) {
  case DType::kF32:
    return fromField<float>(p.float_data(), "float_data", h, what, narrow<float>());
  case DType::kF64:
    return fromField<double>(p.double_data(), "double_data", h, what, narrow<double>());
  case DType::kI64:
    return fromField<int64_t>(p.int64_data(), "int64_data", h, what, narrow<int64_t>());
  case DType::kU32:
    return fromField<uint32_t>(p.uint64_data(), "uint64_data", h, what, narrow<uint32_t>());
  case DType::kU64:
    return fromField<uint64_t>(p.uint64_data(), "uint64_data", h, what, narrow<uint64_t>());
  case DType::kI8:
    return fromField<int8_t>(p.int32_data(), "int32_data", h, what, narrow<int8_t>());
  case DType::kI16:
    return fromField<int16_t>(p.int32_data(), "int32_data", h, what, narrow<int16_t>());
  case DType::kI32:
    return fromField<int32_t>(p.int32_data(), "int32_data", h, what, narrow<int32_t>());
  case DType::kU8:
    return fromField<uint8_t>(p.int32_data(), "int32_data", h, what, narrow<uint8_t>());
  case DType::kU16:
  case DType::kF16: // int32_data holds the 16-bit patterns
  case DType::kBF16:
    return fromField<uint16_t>(p.int32_data(), "int32_data", h, what, narrow<uint16_t>());
  case DType::kBool:
    return fromField<bool>(p.int32_data(), "int32_data", h, what, [](int32_t v) { return v != 0; });
  case DType::kUnknown:
    break;
  }
  return internalError("{}: no typed field for {}", what, dtypeName(h.dtype));
}

} // namespace

std::string onnxDTypeName(int64_t onnxType) {
  if (onnxType < 0 || onnxType >= static_cast<int64_t>(kOnnxTypeNames.size()))
    return "";
  return kOnnxTypeNames[static_cast<size_t>(onnxType)];
}

namespace {

/// ONNX's data types that dlc holds, both ways.
constexpr std::pair<int, DType> kDTypes[] = {
    {TP::FLOAT, DType::kF32},    {TP::UINT8, DType::kU8},   {TP::INT8, DType::kI8},
    {TP::UINT16, DType::kU16},   {TP::INT16, DType::kI16},  {TP::INT32, DType::kI32},
    {TP::INT64, DType::kI64},    {TP::BOOL, DType::kBool},  {TP::FLOAT16, DType::kF16},
    {TP::DOUBLE, DType::kF64},   {TP::UINT32, DType::kU32}, {TP::UINT64, DType::kU64},
    {TP::BFLOAT16, DType::kBF16}};

} // namespace

int onnxDTypeOf(DType dtype) {
  for (const auto &[onnx, d] : kDTypes)
    if (d == dtype)
      return onnx;
  return TP::UNDEFINED;
}

Expected<DType> dtypeFromOnnx(int64_t onnxType, const std::string &what) {
  for (const auto &[onnx, d] : kDTypes)
    if (onnx == onnxType)
      return d;
  if (onnxType == TP::UNDEFINED)
    return invalidArgument("{}: data type is undefined", what);
  std::string name = onnxDTypeName(onnxType);
  if (name.empty())
    return invalidArgument("{}: unknown data type {}", what, onnxType);
  return unimplemented("{}: unsupported data type {}", what, name);
}

Expected<TensorType> typeFromProto(const ::onnx::TypeProto &type, const std::string &what) {
  switch (type.value_case()) {
  case ::onnx::TypeProto::VALUE_NOT_SET:
    return TensorType();
  case ::onnx::TypeProto::kSequenceType:
    return unimplemented("{}: sequence types are not supported", what);
  case ::onnx::TypeProto::kMapType:
    return unimplemented("{}: map types are not supported", what);
  case ::onnx::TypeProto::kOptionalType:
    return unimplemented("{}: optional types are not supported", what);
  case ::onnx::TypeProto::kSparseTensorType:
    return unimplemented("{}: sparse tensor types are not supported", what);
  case ::onnx::TypeProto::kTensorType:
    break;
  }
  const auto &tt = type.tensor_type();
  TensorType result;
  if (tt.elem_type() != 0) {
    DLC_ASSIGN_OR_RETURN(result.dtype, dtypeFromOnnx(tt.elem_type(), what));
  }
  if (tt.has_shape()) {
    std::vector<Dim> dims;
    for (const auto &d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0)
        dims.emplace_back(d.dim_value());
      else if (d.has_dim_param() && !d.dim_param().empty())
        dims.push_back(Dim::symbol(d.dim_param()));
      else
        dims.push_back(Dim::unknown());
    }
    result.shape = Shape(std::move(dims));
  }
  return result;
}

std::string TensorHeader::typeStr() const {
  return TensorType(dtype, Shape::fromSizes(dims)).str();
}

Expected<TensorHeader> tensorHeader(const ::onnx::TensorProto &proto, const std::string &what) {
  TensorHeader h;
  DLC_ASSIGN_OR_RETURN(h.dtype, dtypeFromOnnx(proto.data_type(), what));
  h.dims.assign(proto.dims().begin(), proto.dims().end());
  DLC_ASSIGN_OR_RETURN(h.numElements, checkedNumElements(h.dims, what));
  if (__builtin_mul_overflow(h.numElements, dtypeSize(h.dtype), &h.bytes))
    return invalidArgument("{}: byte size overflows int64", what);
  return h;
}

Expected<Tensor> tensorFromProto(const ::onnx::TensorProto &proto, const std::string &what,
                                 ExternalData *external) {
  DLC_ASSIGN_OR_RETURN(TensorHeader h, tensorHeader(proto, what));
  if (proto.has_segment())
    return unimplemented("{}: segmented tensors are not supported", what);
  if (proto.data_location() == TP::EXTERNAL) {
    if (!external)
      return invalidArgument("{}: external data is not allowed here", what);
    auto t = external->load(proto, h);
    if (!t)
      return t.takeStatus().withContext(what);
    return t;
  }
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (static_cast<int64_t>(raw.size()) != h.bytes)
      return invalidArgument("{}: raw_data has {} bytes but {} needs {}", what, raw.size(),
                             h.typeStr(), h.bytes);
    // Little-endian host: ONNX raw_data is little-endian too, so the bytes copy as they are.
    Tensor t = Tensor::zeros(h.dtype, h.dims);
    if (h.bytes > 0)
      std::memcpy(t.mutableRaw(), raw.data(), raw.size());
    return t;
  }
  return fromTypedData(proto, h, what);
}

} // namespace dlc::onnx::detail
