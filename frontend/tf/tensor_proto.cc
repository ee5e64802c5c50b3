#include "frontend/tf/tensor_proto.h"

#include <cstring>
#include <type_traits>

namespace dlc::tf {

namespace {

constexpr int kRefOffset = 100;

/// The elements of a typed *_val field, widened to `T`, repeated or zero-filled to `count`.
template <typename T, typename Field>
Expected<Tensor> fromValues(DType dtype, std::vector<int64_t> shape, int64_t count,
                            const Field &values, const char *field) {
  if (values.size() > count)
    return invalidArgument("{} holds {} values but the shape {} has {} elements", field,
                           values.size(), Shape::fromSizes(shape).str(), count);
  Tensor t = Tensor::zeros(dtype, std::move(shape));
  T *out = t.mutableData<T>();
  for (int64_t i = 0; i < count && !values.empty(); ++i) {
    const auto v = values[static_cast<int>(std::min<int64_t>(i, values.size() - 1))];
    if constexpr (std::is_same_v<T, bool>)
      out[i] = v != 0;
    else
      out[i] = static_cast<T>(v);
  }
  return t;
}

} // namespace

TfType fromTfType(int tfType) {
  TfType t;
  int base = tfType;
  if (base > kRefOffset) {
    base -= kRefOffset;
    t.ref = true;
  }
  switch (base) {
  case tfproto::DT_FLOAT:
    t.dtype = DType::kF32;
    break;
  case tfproto::DT_DOUBLE:
    t.dtype = DType::kF64;
    break;
  case tfproto::DT_HALF:
    t.dtype = DType::kF16;
    break;
  case tfproto::DT_BFLOAT16:
    t.dtype = DType::kBF16;
    break;
  case tfproto::DT_INT8:
    t.dtype = DType::kI8;
    break;
  case tfproto::DT_INT16:
    t.dtype = DType::kI16;
    break;
  case tfproto::DT_INT32:
    t.dtype = DType::kI32;
    break;
  case tfproto::DT_INT64:
    t.dtype = DType::kI64;
    break;
  case tfproto::DT_UINT8:
    t.dtype = DType::kU8;
    break;
  case tfproto::DT_UINT16:
    t.dtype = DType::kU16;
    break;
  case tfproto::DT_UINT32:
    t.dtype = DType::kU32;
    break;
  case tfproto::DT_UINT64:
    t.dtype = DType::kU64;
    break;
  case tfproto::DT_BOOL:
    t.dtype = DType::kBool;
    break;
  default: // strings, complex, quantized, resources, variants, float8: not in dlc's IR
    t.dtype = DType::kUnknown;
  }
  return t;
}

std::string tfTypeName(int tfType) {
  if (tfproto::DataType_IsValid(tfType))
    return tfproto::DataType_Name(static_cast<tfproto::DataType>(tfType));
  return fmt::format("DataType {}", tfType);
}

Expected<Shape> fromTfShape(const tfproto::TensorShapeProto &shape,
                            const std::string &symbolPrefix) {
  if (shape.unknown_rank())
    return Shape::unranked();
  std::string prefix;
  for (char c : symbolPrefix)
    prefix += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (prefix.empty() || std::isdigit(static_cast<unsigned char>(prefix[0])))
    prefix = "d" + prefix;
  std::vector<Dim> dims;
  for (int i = 0; i < shape.dim_size(); ++i) {
    int64_t size = shape.dim(i).size();
    if (size < -1)
      return invalidArgument("dim {} has size {}", i, size);
    dims.push_back(size == -1 ? Dim::symbol(fmt::format("{}_d{}", prefix, i)) : Dim(size));
  }
  return Shape(std::move(dims));
}

Expected<Tensor> fromTfTensor(const tfproto::TensorProto &proto) {
  const TfType type = fromTfType(proto.dtype());
  if (type.dtype == DType::kUnknown)
    return unimplemented("dtype {} has no dlc equivalent", tfTypeName(proto.dtype()));
  DLC_ASSIGN_OR_RETURN(Shape shape, fromTfShape(proto.tensor_shape(), "const"));
  if (!shape.isRanked() || !shape.isStatic())
    return invalidArgument("a constant needs a fully known shape, got {}", shape.str());
  std::vector<int64_t> sizes = shape.sizes();
  std::optional<int64_t> count = shape.numElements();
  if (!count || *count > (int64_t{1} << 40))
    return invalidArgument("shape {} is too large", shape.str());
  const DType dt = type.dtype;

  if (!proto.tensor_content().empty()) {
    const int64_t expected = *count * dtypeSize(dt);
    if (static_cast<int64_t>(proto.tensor_content().size()) != expected)
      return invalidArgument("tensor_content holds {} bytes but {} {} needs {}",
                             proto.tensor_content().size(), dtypeName(dt), shape.str(), expected);
    Tensor t = Tensor::zeros(dt, sizes);
    if (expected > 0)
      std::memcpy(t.mutableRaw(), proto.tensor_content().data(), static_cast<size_t>(expected));
    return t;
  }
  switch (dt) {
  case DType::kF32:
    return fromValues<float>(dt, sizes, *count, proto.float_val(), "float_val");
  case DType::kF64:
    return fromValues<double>(dt, sizes, *count, proto.double_val(), "double_val");
  case DType::kF16:
  case DType::kBF16: // both keep their bits in half_val
    return fromValues<uint16_t>(dt, sizes, *count, proto.half_val(), "half_val");
  case DType::kI8:
    return fromValues<int8_t>(dt, sizes, *count, proto.int_val(), "int_val");
  case DType::kI16:
    return fromValues<int16_t>(dt, sizes, *count, proto.int_val(), "int_val");
  case DType::kI32:
    return fromValues<int32_t>(dt, sizes, *count, proto.int_val(), "int_val");
  case DType::kU8:
    return fromValues<uint8_t>(dt, sizes, *count, proto.int_val(), "int_val");
  case DType::kU16:
    return fromValues<uint16_t>(dt, sizes, *count, proto.int_val(), "int_val");
  case DType::kI64:
    return fromValues<int64_t>(dt, sizes, *count, proto.int64_val(), "int64_val");
  case DType::kU32:
    return fromValues<uint32_t>(dt, sizes, *count, proto.uint32_val(), "uint32_val");
  case DType::kU64:
    return fromValues<uint64_t>(dt, sizes, *count, proto.uint64_val(), "uint64_val");
  case DType::kBool:
    return fromValues<bool>(dt, sizes, *count, proto.bool_val(), "bool_val");
  default:
    return unimplemented("dtype {} has no dlc equivalent", tfTypeName(proto.dtype()));
  }
}

} // namespace dlc::tf
