// Reference evaluation of the reduction family: Reduce* against plain loops on random shapes
// and axes, empty sets, noop_with_empty_axes, ArgMax/ArgMin, the softmax family, TopK, CumSum.
#include <functional>
#include <limits>
#include <numeric>

#include "tests/unit/ir/eval_test_util.h"

namespace dlc::optest {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using Fold = std::function<double(const std::vector<double> &)>;

/// The reduction of `x` (shape `shape`) over `axes` by `fold`, in row-major output order.
std::vector<double> reduceRef(const std::vector<double> &x, const std::vector<int64_t> &shape,
                              const std::vector<int64_t> &axes, const Fold &fold) {
  std::vector<int64_t> kept = shape;
  for (int64_t a : axes)
    kept[static_cast<size_t>(a)] = 1;
  int64_t n = std::accumulate(kept.begin(), kept.end(), int64_t{1}, std::multiplies<>());
  std::vector<std::vector<double>> groups(static_cast<size_t>(n));
  for (size_t i = 0; i < x.size(); ++i)
    groups[static_cast<size_t>(broadcastIndex(coordsOf(static_cast<int64_t>(i), shape), kept))]
        .push_back(x[i]);
  std::vector<double> out;
  for (const auto &g : groups)
    out.push_back(fold(g));
  return out;
}

double sum(const std::vector<double> &g) { return std::accumulate(g.begin(), g.end(), 0.0); }

class ReductionEval : public EvalTest {};

TEST_F(ReductionEval, ReduceOpsMatchPlainLoops) {
  std::vector<std::pair<Op, Fold>> ops = {
      {Op::kReduceSum, sum},
      {Op::kReduceMean, [](auto &g) { return sum(g) / static_cast<double>(g.size()); }},
      {Op::kReduceProd,
       [](auto &g) { return std::accumulate(g.begin(), g.end(), 1.0, std::multiplies<>()); }},
      {Op::kReduceMax, [](auto &g) { return *std::max_element(g.begin(), g.end()); }},
      {Op::kReduceMin, [](auto &g) { return *std::min_element(g.begin(), g.end()); }},
      {Op::kReduceL1,
       [](auto &g) {
         double s = 0;
         for (double v : g)
           s += std::fabs(v);
         return s;
       }},
      {Op::kReduceSumSquare,
       [](auto &g) { return std::inner_product(g.begin(), g.end(), g.begin(), 0.0); }},
      {Op::kReduceL2,
       [](auto &g) { return std::sqrt(std::inner_product(g.begin(), g.end(), g.begin(), 0.0)); }},
      {Op::kReduceLogSum, [](auto &g) { return std::log(sum(g)); }},
      {Op::kReduceLogSumExp,
       [](auto &g) {
         double s = 0;
         for (double v : g)
           s += std::exp(v);
         return std::log(s);
       }},
  };
  for (int trial = 0; trial < 8; ++trial) {
    std::vector<int64_t> shape = randomShape(4, 4);
    if (shape.empty())
      shape = {3};
    int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> axes; // a random subset, given with random signs
    for (int64_t a = 0; a < rank; ++a)
      if (std::uniform_int_distribution<int>(0, 1)(rng))
        axes.push_back(a);
    std::vector<int64_t> given = axes;
    for (int64_t &a : given)
      a -= trial % 2 ? rank : 0;
    bool keepdims = trial % 3 != 0;
    std::vector<int64_t> all(shape.size());
    std::iota(all.begin(), all.end(), 0);
    Tensor x = randomFloat(DType::kF64, shape, 0.1, 3); // positive, for ReduceLogSum
    for (auto &[op, fold] : ops) {
      std::vector<Tensor> inputs{x};
      if (!axes.empty())
        inputs.push_back(i64({static_cast<int64_t>(given.size())}, given));
      Tensor r = eval1(op, inputs, {{"keepdims", keepdims ? 1 : 0}});
      std::vector<int64_t> shapeWant;
      for (int64_t d = 0; d < rank; ++d) {
        bool reduced = axes.empty() || std::count(axes.begin(), axes.end(), d);
        if (!reduced || keepdims)
          shapeWant.push_back(reduced ? 1 : shape[static_cast<size_t>(d)]);
      }
      SCOPED_TRACE(std::string(opName(op)) + " trial " + std::to_string(trial));
      EXPECT_EQ(r.shape(), shapeWant);
      expectClose(values(r), reduceRef(values(x), shape, axes.empty() ? all : axes, fold), 1e-12);
    }
  }
}

TEST_F(ReductionEval, NoopWithEmptyAxesReducesEachElementAlone) {
  Tensor x = f32({2, 2}, {-1, 2, -3, 4});
  AttrMap noop = {{"noop_with_empty_axes", 1}};
  EXPECT_EQ(values(eval1(Op::kReduceSumSquare, {x}, noop)), (std::vector<double>{1, 4, 9, 16}));
  EXPECT_EQ(values(eval1(Op::kReduceL1, {x, i64({0}, {})}, noop)),
            (std::vector<double>{1, 2, 3, 4}));
  Tensor same = eval1(Op::kReduceSum, {x}, noop);
  EXPECT_EQ(same.shape(), x.shape());
  EXPECT_EQ(values(same), values(x));
  Tensor all = eval1(Op::kReduceSum, {x, i64({0}, {})}, {{"keepdims", 0}});
  EXPECT_EQ(all.shape(), std::vector<int64_t>{});
  EXPECT_EQ(values(all), (std::vector<double>{2}));
}

TEST_F(ReductionEval, EmptySetsGiveTheSpecIdentities) {
  Tensor x = Tensor::zeros(DType::kF32, {2, 0, 3});
  auto reduce = [&](Op op, const Tensor &t) {
    return eval1(op, {t, i64({1}, {1})}, {{"keepdims", 0}});
  };
  std::vector<std::pair<Op, double>> cases = {
      {Op::kReduceSum, 0},        {Op::kReduceSumSquare, 0},
      {Op::kReduceL1, 0},         {Op::kReduceL2, 0},
      {Op::kReduceProd, 1},       {Op::kReduceMax, -kInf},
      {Op::kReduceMin, kInf},     {Op::kReduceMean, kNaN},
      {Op::kReduceLogSum, -kInf}, {Op::kReduceLogSumExp, -kInf},
  };
  for (auto [op, want] : cases) {
    Tensor r = reduce(op, x);
    EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 3})) << opName(op);
    expectClose(values(r), std::vector<double>(6, want));
  }
  Tensor xi = Tensor::zeros(DType::kI32, {0, 2});
  EXPECT_EQ(ints(reduce(Op::kReduceMax, xi.reshaped({2, 0}))),
            (std::vector<int64_t>(2, std::numeric_limits<int32_t>::min())));
  EXPECT_EQ(ints(reduce(Op::kReduceMin, xi.reshaped({2, 0}))),
            (std::vector<int64_t>(2, std::numeric_limits<int32_t>::max())));
  EXPECT_EQ(ints(reduce(Op::kReduceMax, Tensor::zeros(DType::kBool, {2, 0}))),
            (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(evalError(Op::kReduceMean, {xi.reshaped({2, 0}), i64({1}, {1})}),
            "node 'e' (ReduceMean): integer mean of an empty set");
}

TEST_F(ReductionEval, IntegerAndBoolReductions) {
  EXPECT_EQ(ints(eval1(Op::kReduceSum, {i8({2}, {100, 100})})), (std::vector<int64_t>{-56}));
  EXPECT_EQ(ints(eval1(Op::kReduceMean, {i8({3}, {100, 100, -1})})), (std::vector<int64_t>{66}));
  EXPECT_EQ(ints(eval1(Op::kReduceMean, {i32({2}, {-3, 0})})), (std::vector<int64_t>{-1}));
  EXPECT_EQ(ints(eval1(Op::kReduceProd, {i64({3}, {-2, 3, 7})})), (std::vector<int64_t>{-42}));
  EXPECT_EQ(ints(eval1(Op::kReduceL2, {i32({2}, {3, -4})})), (std::vector<int64_t>{5}));
  EXPECT_EQ(ints(eval1(Op::kReduceL1, {i32({2}, {3, -4})})), (std::vector<int64_t>{7}));
  Tensor b = boolean({2, 2}, {0, 1, 0, 0});
  AttrMap drop = {{"keepdims", 0}};
  EXPECT_EQ(ints(eval1(Op::kReduceMax, {b, i64({1}, {1})}, drop)), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints(eval1(Op::kReduceMin, {b, i64({1}, {0})}, drop)), (std::vector<int64_t>{0, 0}));
}

TEST_F(ReductionEval, LogSumExpIsStableAndMaxMinPropagateNaN) {
  expectClose(values(eval1(Op::kReduceLogSumExp, {f32({2}, {1000, 1000})})), {1000 + std::log(2.0)},
              1e-7);
  expectClose(values(eval1(Op::kReduceLogSumExp, {f64({2}, {-kInf, -kInf})})), {-kInf});
  expectClose(values(eval1(Op::kReduceLogSumExp, {f64({2}, {kInf, 1})})), {kInf});
  EXPECT_TRUE(std::isnan(values(eval1(Op::kReduceMax, {f64({3}, {1, kNaN, 3})}))[0]));
  EXPECT_TRUE(std::isnan(values(eval1(Op::kReduceMin, {f64({3}, {1, kNaN, 3})}))[0]));
}

TEST_F(ReductionEval, AxesErrorsNameTheNode) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(evalError(Op::kReduceSum, {x, i64({2}, {1, -1})}),
            "node 'e' (ReduceSum): axis -1 appears more than once in axes");
  EXPECT_EQ(evalError(Op::kReduceSum, {x, i64({1}, {2})}),
            "node 'e' (ReduceSum): axis 2 is out of range for rank 2");
}

TEST_F(ReductionEval, ArgMaxAndArgMin) {
  Tensor x = f32({2, 4}, {1, 5, 5, 0, 7, 7, -1, -1});
  EXPECT_EQ(ints(eval1(Op::kArgMax, {x}, {{"axis", 1}})), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints(eval1(Op::kArgMax, {x}, {{"axis", 1}, {"select_last_index", 1}})),
            (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(ints(eval1(Op::kArgMin, {x}, {{"axis", -1}, {"select_last_index", 1}})),
            (std::vector<int64_t>{3, 3}));
  Tensor r = eval1(Op::kArgMin, {x}, {{"keepdims", 0}});
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(ints(r), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(eval1(Op::kArgMax, {x}).shape(), (std::vector<int64_t>{1, 4}));
  // NaN wins, as in numpy.
  EXPECT_EQ(ints(eval1(Op::kArgMax, {f64({4}, {1, kNaN, 9, kNaN})})), (std::vector<int64_t>{1}));
  EXPECT_EQ(ints(eval1(Op::kArgMin, {f64({4}, {1, kNaN, -9, kNaN})}, {{"select_last_index", 1}})),
            (std::vector<int64_t>{3}));
  EXPECT_EQ(ints(eval1(Op::kArgMax, {i64({3}, {4, 9, 9})})), (std::vector<int64_t>{1}));
  EXPECT_EQ(evalError(Op::kArgMax, {Tensor::zeros(DType::kF32, {0, 2})}),
            "node 'e' (ArgMax): axis 0 is empty, so it has no maximum");
}

TEST_F(ReductionEval, SoftmaxFamilyOnRandomInputsAndLargeValues) {
  Tensor x = randomFloat(DType::kF64, {2, 3, 4});
  for (int64_t axis : {0, 1, -1}) {
    size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    std::vector<int64_t> shape{2, 3, 4};
    std::vector<double> vx = values(x), soft(vx.size()), logSoft(vx.size());
    std::vector<int64_t> strides = stridesOf(shape);
    for (size_t i = 0; i < vx.size(); ++i) {
      std::vector<int64_t> c = coordsOf(static_cast<int64_t>(i), shape);
      double s = 0;
      for (int64_t j = 0; j < shape[a]; ++j)
        s += std::exp(vx[static_cast<size_t>(static_cast<int64_t>(i) + (j - c[a]) * strides[a])]);
      soft[i] = std::exp(vx[i]) / s;
      logSoft[i] = vx[i] - std::log(s);
    }
    expectClose(values(eval1(Op::kSoftmax, {x}, {{"axis", axis}})), soft, 1e-12);
    expectClose(values(eval1(Op::kLogSoftmax, {x}, {{"axis", axis}})), logSoft, 1e-12, 1e-14);
  }
  // exp(1002) overflows; subtracting the maximum keeps it finite.
  Tensor big = f32({3}, {1000, 1001, 1002});
  double s = 1 + std::exp(-1.0) + std::exp(-2.0);
  expectClose(values(eval1(Op::kSoftmax, {big})), {std::exp(-2.0) / s, std::exp(-1.0) / s, 1 / s},
              1e-6);
  expectClose(values(eval1(Op::kLogSoftmax, {big})),
              {-2 - std::log(s), -1 - std::log(s), -std::log(s)}, 1e-6);
  Tensor h = eval1(Op::kHardmax, {f32({2, 3}, {1, 3, 3, -1, -2, -3}).castTo(DType::kF16)});
  EXPECT_EQ(h.dtype(), DType::kF16);
  EXPECT_EQ(values(h), (std::vector<double>{0, 1, 0, 1, 0, 0})); // ties: the first index
}

TEST_F(ReductionEval, TopKOrdersTiesByLowerIndex) {
  Tensor x = f32({2, 4}, {3, 1, 3, 2, 5, 5, 5, 0});
  auto topk = [&](int64_t k, AttrMap attrs) {
    auto r = eval(Op::kTopK, {x, i64({1}, {k})}, attrs, 2);
    EXPECT_TRUE(r.hasValue()) << r.status().message();
    return r.hasValue() ? *r : std::vector<Tensor>{Tensor(), Tensor()};
  };
  auto r = topk(3, {});
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(r[0]), (std::vector<double>{3, 3, 2, 5, 5, 5}));
  EXPECT_EQ(ints(r[1]), (std::vector<int64_t>{0, 2, 3, 0, 1, 2}));
  r = topk(2, {{"largest", 0}});
  EXPECT_EQ(values(r[0]), (std::vector<double>{1, 2, 0, 5}));
  EXPECT_EQ(ints(r[1]), (std::vector<int64_t>{1, 3, 3, 0}));
  r = topk(1, {{"axis", 0}});
  EXPECT_EQ(ints(r[1]), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(topk(0, {})[0].shape(), (std::vector<int64_t>{2, 0}));
  auto nan = eval(Op::kTopK, {f64({3}, {1, kNaN, 2}), i64({1}, {2})}, {}, 2);
  ASSERT_TRUE(nan.hasValue());
  EXPECT_EQ(ints((*nan)[1]), (std::vector<int64_t>{1, 2})); // NaN ranks above everything
  EXPECT_EQ(evalError(Op::kTopK, {x, i64({1}, {5})}, {}, 2),
            "node 'e' (TopK): K = 5 is outside [0, 4], the size of axis 1");
}

TEST_F(ReductionEval, CumSumDirections) {
  Tensor x = f32({5}, {1, 2, 3, 4, 5});
  Tensor axis = i32({}, {0});
  EXPECT_EQ(values(eval1(Op::kCumSum, {x, axis})), (std::vector<double>{1, 3, 6, 10, 15}));
  EXPECT_EQ(values(eval1(Op::kCumSum, {x, axis}, {{"exclusive", 1}})),
            (std::vector<double>{0, 1, 3, 6, 10}));
  EXPECT_EQ(values(eval1(Op::kCumSum, {x, axis}, {{"reverse", 1}})),
            (std::vector<double>{15, 14, 12, 9, 5}));
  EXPECT_EQ(values(eval1(Op::kCumSum, {x, axis}, {{"reverse", 1}, {"exclusive", 1}})),
            (std::vector<double>{14, 12, 9, 5, 0}));
  Tensor m = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(ints(eval1(Op::kCumSum, {m, i64({1}, {-2})})),
            (std::vector<int64_t>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(ints(eval1(Op::kCumSum, {m, i64({}, {1})})), (std::vector<int64_t>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(evalError(Op::kCumSum, {m, i64({2}, {0, 1})}),
            "node 'e' (CumSum): axis must hold exactly one element, got 2");
}

} // namespace
} // namespace dlc::optest
