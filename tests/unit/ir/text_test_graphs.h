// Graphs shared by the printer, parser and round-trip tests.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/graph.h"

namespace dlc::testing {

inline float bitsF32(uint32_t b) { return std::bit_cast<float>(b); }
inline double bitsF64(uint64_t b) { return std::bit_cast<double>(b); }

/// A graph that uses every feature of the text form: every dtype of constant (NaN, inf,
/// -0, subnormals, empty tensors, a large one), every attribute kind, symbolic and unknown
/// dims, unranked and unknown types, absent inputs and outputs, devices, quoted names, locs.
inline std::unique_ptr<Graph> buildRichGraph() {
  auto g = std::make_unique<Graph>("rich graph");
  Value *x = g->addInput("x", TensorType(DType::kF32, Shape({Dim::symbol("N"), Dim(3), Dim()})));
  Value *idx = g->addInput("in put", TensorType(DType::kI64, Shape::unranked()));
  Value *unk = g->addInput("u", TensorType());
  g->addInput("p", TensorType(DType::kUnknown, Shape({Dim(2), Dim::symbol("3d")})));
  g->addInput("s", TensorType(DType::kBool, Shape()));

  g->addConstant("f32", Tensor::fromVector<float>(DType::kF32, {11},
                                                  {0.1f, -0.0f, 1e10f, 1e-45f, INFINITY, -INFINITY,
                                                   bitsF32(0x7fc00000), bitsF32(0xffc00000),
                                                   bitsF32(0x7f800001), 3.0f, 16777216.0f}));
  g->addConstant("f16", Tensor::fromVector<uint16_t>(
                            DType::kF16, {2, 4},
                            {0x3c00, 0x0001, 0x7bff, 0xfc00, 0x7e00, 0x7e01, 0x8000, 0x3555}));
  g->addConstant("bf16", Tensor::fromVector<uint16_t>(DType::kBF16, {5},
                                                      {0x3f80, 0x7fc0, 0xffc1, 0x0001, 0xc2f7}));
  g->addConstant("f64",
                 Tensor::fromVector<double>(DType::kF64, {5},
                                            {0.1, 1e300, -5e-324, bitsF64(0x7ff8000000000000ull),
                                             bitsF64(0x7ff0000000000001ull)}));
  g->addConstant("i8", Tensor::fromVector<int8_t>(DType::kI8, {3}, {-128, 0, 127}));
  g->addConstant("i16", Tensor::fromVector<int16_t>(DType::kI16, {2}, {-32768, 32767}));
  g->addConstant("i32", Tensor::fromVector<int32_t>(DType::kI32, {2}, {INT32_MIN, INT32_MAX}));
  g->addConstant("i64", Tensor::fromVector<int64_t>(DType::kI64, {1, 2}, {INT64_MIN, INT64_MAX}));
  g->addConstant("u8", Tensor::fromVector<uint8_t>(DType::kU8, {2}, {0, 255}));
  g->addConstant("u16", Tensor::fromVector<uint16_t>(DType::kU16, {1}, {65535}));
  g->addConstant("u32", Tensor::fromVector<uint32_t>(DType::kU32, {1}, {4294967295u}));
  g->addConstant("u64", Tensor::fromVector<uint64_t>(DType::kU64, {2}, {0, UINT64_MAX}));
  g->addConstant("bool", Tensor::fromVector<uint8_t>(DType::kBool, {3}, {1, 0, 1}));
  g->addConstant("empty", Tensor::zeros(DType::kF32, {0, 3}));
  g->addConstant("scalar", Tensor::scalarF32(-2.5f));
  std::vector<float> big(40);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<float>(i) * 0.37f - 3.0f;
  Value *w = g->addConstant("/conv1/weight", Tensor::fromVector<float>(DType::kF32, {5, 8}, big));
  std::vector<uint8_t> bits(20);
  for (size_t i = 0; i < bits.size(); ++i)
    bits[i] = i % 3 == 0;
  g->addConstant("mask", Tensor::fromVector<uint8_t>(DType::kBool, {20}, bits));

  Node *conv = g->createNode(Op::kConv, {x, w, nullptr}, 1, "/conv1/Conv");
  conv->setAttr("strides", Attribute(std::vector<int64_t>{1, 2}));
  conv->setAttr("auto_pad", Attribute("SAME \"upper\"\n\\"));
  conv->setAttr("alpha", Attribute(1e-05f));
  conv->setAttr("beta", Attribute(std::bit_cast<float>(0x7fc00001u)));
  conv->setAttr("group", Attribute(int64_t{-1}));
  conv->setAttr("scales", Attribute(std::vector<float>{1.0f, 0.5f, -INFINITY}));
  conv->setAttr("names", Attribute(std::vector<std::string>{"a", "", "c,d"}));
  conv->setAttr("no_ints", Attribute(std::vector<int64_t>{}));
  conv->setAttr("no_floats", Attribute(std::vector<float>{}));
  conv->setAttr("no_strings", Attribute(std::vector<std::string>{}));
  conv->setAttr("to", Attribute(DType::kBF16));
  conv->setAttr("value", Attribute(Tensor::fromVector<int32_t>(DType::kI32, {1}, {7})));
  conv->setAttr("table", Attribute(Tensor::fromVector<float>(DType::kF32, {20},
                                                             std::vector<float>(20, 0.25f))));
  conv->setAttr("weird name", Attribute(int64_t{3}));
  conv->output(0)->setType(TensorType(DType::kF32, Shape({Dim::symbol("N"), Dim(8), Dim()})));
  conv->setDevice(Device::gpu(1));

  Node *split = g->createNode(Op::kSplit, {conv->output(0), nullptr}, 3, "");
  split->output(0)->setType(TensorType(DType::kF32, Shape::unranked()));
  split->removeOutput(1);
  split->setAttr("axis", Attribute(int64_t{1}));
  split->setDevice(Device::cpu());

  Node *drop = g->createNode(Op::kDropout, {split->output(2), unk, idx}, 2, "drop");
  drop->setName("Dropout \"0\"");
  drop->removeOutput(1);

  g->addOutput("y", split->output(0), TensorType(DType::kF32, Shape::unranked()));
  g->addOutput("out 2", drop->output(0));
  g->addOutput("y_again", split->output(0), TensorType());
  return g;
}

} // namespace dlc::testing
