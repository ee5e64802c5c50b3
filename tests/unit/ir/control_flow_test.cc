// If, Loop and Scan: graph attributes in the text form (printed, parsed, cloned, compared),
// the verifier on bodies, shape inference and reference evaluation.
#include <gtest/gtest.h>

#include "ir/clone.h"
#include "ir/eval/eval.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace dlc {
namespace {

std::unique_ptr<Graph> parse(const std::string &text) {
  auto g = parseGraph(text, "cf.dlc");
  EXPECT_TRUE(g.hasValue()) << g.status().message();
  return g.hasValue() ? std::move(g).value() : std::make_unique<Graph>();
}

std::string parseError(const std::string &text) {
  auto g = parseGraph(text, "cf.dlc");
  EXPECT_FALSE(g.hasValue());
  return g ? "" : g.status().message();
}

Node *nodeNamed(const Graph &g, const std::string &name) {
  for (Node *n : g.nodes())
    if (n->name() == name)
      return n;
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

Tensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return Tensor::fromVector<float>(DType::kF32, std::move(shape), v);
}
Tensor boolScalar(bool b) {
  Tensor t = Tensor::zeros(DType::kBool, {});
  t.mutableData<bool>()[0] = b;
  return t;
}
std::vector<float> values(const Tensor &t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numElements());
}

// A Loop whose body holds an If; the If's branches capture the loop body's %step, which the
// body captures from the graph. Printed exactly as the printer writes it.
const char *kNested =
    "graph @nested(%n: i64[], %x: f32[2], %step: f32[]) -> (acc: f32[2], trace: f32[?,2]) {\n"
    "  %acc, %trace = loop(%n, _, %x, %step) {body = graph @body(%i: i64[], %c: bool[], %a: "
    "f32[2], %step: f32[]) -> (c_out: bool[], a_out: f32[2], t: f32[2]) {\n"
    "    %zero = constant i64[] dense<[0]>\n"
    "    %first = greater(%i, %zero) : bool[]\n"
    "    %a_out = if(%first, %a, %step) {else_branch = graph @else(%a: f32[2], %step: f32[]) -> "
    "(r: f32[2]) {\n"
    "      return %a\n"
    "    }, then_branch = graph @then(%a: f32[2], %step: f32[]) -> (r: f32[2]) {\n"
    "      %r = add(%a, %step) : f32[2] loc(\"inc\")\n"
    "      return %r\n"
    "    }} : f32[2] loc(\"pick\")\n"
    "    %t = identity(%a_out) : f32[2]\n"
    "    return %c, %a_out, %t\n"
    "  }, num_captures = 1} : f32[2], f32[?,2] loc(\"loop\")\n"
    "  return %acc, %trace\n"
    "}\n";

TEST(ControlFlowText, NestedBodiesRoundTripByteIdentically) {
  auto g = parse(kNested);
  EXPECT_EQ(printGraph(*g), kNested);
  EXPECT_TRUE(verifyGraph(*g).isOk()) << verifyGraph(*g).message();
  const Attribute *body = nodeNamed(*g, "loop")->findAttr("body");
  ASSERT_TRUE(body && body->kind() == AttrKind::kGraph);
  EXPECT_EQ(body->graph().name(), "body");
  EXPECT_EQ(body->graph().inputs().size(), 4u);
  // Every graph is a scope of its own: %step of the body is not %step of the graph.
  EXPECT_NE(body->graph().findValue("step"), g->findValue("step"));
}

TEST(ControlFlowText, BodiesAreClosed) {
  // %x belongs to the enclosing graph; the branch may use only its own inputs.
  EXPECT_EQ(parseError("graph @g(%c: bool[], %x: f32[2]) -> (y: ?) {\n"
                       "  %y = if(%c) {else_branch = graph @e() -> (r: ?) {\n"
                       "    return %x\n"
                       "  }, then_branch = graph @t() -> (r: ?) {\n"
                       "    return %x\n"
                       "  }} : ?\n"
                       "  return %y\n"
                       "}\n"),
            "cf.dlc:3:12: error: use of undefined value %x");
}

TEST(ControlFlowText, ANestedGraphNeedsItsReturn) {
  EXPECT_EQ(parseError("graph @g(%c: bool[]) -> (y: ?) {\n"
                       "  %y = if(%c) {else_branch = graph @e() -> (r: ?) {\n"
                       "  }} : ?\n"
                       "  return %y\n"
                       "}\n"),
            "cf.dlc:3:3: error: expected a statement or 'return', got '}'");
}

TEST(ControlFlowGraph, CloneIsDeepAndStructurallyEqual) {
  auto g = parse(kNested);
  auto copy = cloneGraph(*g);
  EXPECT_EQ(printGraph(*copy), kNested);
  EXPECT_TRUE(g->structurallyEqual(*copy));
  // Changing the copy's innermost body leaves the original alone and breaks the equality.
  Attribute *body = nodeNamed(*copy, "loop")->mutableAttr("body");
  Node *pick = nodeNamed(body->graph(), "pick");
  Graph &then = pick->mutableAttr("then_branch")->mutableGraph();
  nodeNamed(then, "inc")->setAttr("unused", Attribute(int64_t{1}));
  EXPECT_FALSE(g->structurallyEqual(*copy));
  EXPECT_EQ(printGraph(*g), kNested);
  // Names and types do not take part in the comparison.
  auto renamed = cloneGraph(*g);
  renamed->renameValue(renamed->findValue("acc"), "total");
  renamed->findValue("total")->setType(TensorType());
  EXPECT_TRUE(g->structurallyEqual(*renamed));
}

// --- Verifier -------------------------------------------------------------------------------

std::string verifyError(const Graph &g) {
  Status s = verifyGraph(g);
  EXPECT_FALSE(s.isOk());
  return s.message();
}

const char *kIf = "graph @g(%c: bool[], %x: f32[2]) -> (y: f32[2]) {\n"
                  "  %y = if(%c, %x) {else_branch = graph @e(%x: f32[2]) -> (r: f32[2]) {\n"
                  "    %r = neg(%x) : f32[2] loc(\"n\")\n"
                  "    return %r\n"
                  "  }, then_branch = graph @t(%x: f32[2]) -> (r: f32[2]) {\n"
                  "    return %x\n"
                  "  }} : f32[2] loc(\"b\")\n"
                  "  return %y\n"
                  "}\n";

TEST(ControlFlowVerifier, BodySignatureMustMatchTheNode) {
  auto g = parse(kIf);
  ASSERT_TRUE(verifyGraph(*g).isOk()) << verifyGraph(*g).message();
  Node *b = nodeNamed(*g, "b");
  b->truncateInputs(1); // the branches still take the capture
  EXPECT_EQ(verifyError(*g), "verifier: node 'b' (If): body 'then_branch' has 1 inputs, expected "
                             "0 (one per captured value)");
}

TEST(ControlFlowVerifier, ErrorsInsideABodyNameTheBody) {
  std::string text = kIf;
  text.replace(text.find("%r = neg(%x) : f32[2]"), 21, "%r = neg(%x) : f32[3]");
  auto g = parse(text);
  EXPECT_EQ(verifyError(*g), "verifier: node 'b' (If): body 'else_branch': node 'n' (Neg): output "
                             "0 %r has type f32[3] but inference gives f32[2]");
}

TEST(ControlFlowVerifier, ABodyMustNotUseAnOuterValue) {
  auto g = parse(kIf);
  // Wire the branch's Neg to the enclosing graph's %x behind the parser's back: the body sees
  // a value that is not its own, the enclosing graph a use by a node that is not its own.
  Graph &e = nodeNamed(*g, "b")->mutableAttr("else_branch")->mutableGraph();
  nodeNamed(e, "n")->setInput(0, g->findValue("x"));
  EXPECT_EQ(verifyError(*g), "verifier: value %x: use list names a node that is not in the graph");
  EXPECT_EQ(verifyError(e), "verifier: node 'n' (Neg): input 0 is not a value of this graph");
  nodeNamed(e, "n")->setInput(0, e.inputs()[0]);
  EXPECT_TRUE(verifyGraph(*g).isOk()) << verifyGraph(*g).message();
}

TEST(ControlFlowVerifier, LoopAndScanCounts) {
  auto loop = parse("graph @g(%x: f32[2]) -> (y: ?) {\n"
                    "  %y = loop(_, _, %x, %x) {body = graph @b(%i: i64[], %c: bool[], %a: "
                    "f32[2], %k: f32[2]) -> (c: ?, a: ?, k: ?) {\n"
                    "    return %c, %a, %k\n"
                    "  }} : ? loc(\"l\")\n"
                    "  return %y\n"
                    "}\n");
  EXPECT_EQ(verifyError(*loop),
            "verifier: node 'l' (Loop): has 1 outputs, fewer than its 2 loop-carried values");
  nodeNamed(*loop, "l")->setAttr("num_captures", Attribute(int64_t{1}));
  EXPECT_EQ(verifyError(*loop), "verifier: node 'l' (Loop): body 'body' has 3 outputs, expected 2 "
                                "(condition, 1 loop-carried, 0 scan outputs)");
  nodeNamed(*loop, "l")->setInput(2, nullptr);
  EXPECT_EQ(verifyError(*loop), "verifier: node 'l' (Loop): input 2 must be present (only M and "
                                "cond are optional)");

  auto scan = parse("graph @g(%s: f32[2], %x: f32[3,2]) -> (y: ?, z: ?) {\n"
                    "  %y, %z = scan(%s, %x) {body = graph @b(%a: f32[2], %e: f32[2]) -> (a: ?, "
                    "e: ?) {\n"
                    "    return %a, %e\n"
                    "  }, num_scan_inputs = 1, scan_input_axes = [0, 1]} : ?, ? loc(\"s\")\n"
                    "  return %y, %z\n"
                    "}\n");
  EXPECT_EQ(verifyError(*scan),
            "verifier: node 's' (Scan): attribute 'scan_input_axes' has 2 values, expected 1");
  Node *s = nodeNamed(*scan, "s");
  s->setAttr("scan_input_axes", Attribute(std::vector<int64_t>{1}));
  s->setAttr("scan_output_directions", Attribute(std::vector<int64_t>{2}));
  EXPECT_EQ(verifyError(*scan), "verifier: node 's' (Scan): attribute 'scan_output_directions' "
                                "must hold 0 (forward) or 1 (reverse), got 2");
  s->setAttr("num_scan_inputs", Attribute(int64_t{3}));
  EXPECT_EQ(verifyError(*scan), "verifier: node 's' (Scan): has 2 inputs, fewer than "
                                "num_scan_inputs + num_captures = 3");
}

// --- Inference ------------------------------------------------------------------------------

/// Runs inferNode on node `name` with its inputs' recorded types and constants.
Expected<std::vector<TensorType>> infer(const Graph &g, const std::string &name) {
  Node *n = nodeNamed(g, name);
  std::vector<TensorType> types;
  std::vector<const Tensor *> constants;
  for (const Value *v : n->inputs()) {
    types.push_back(v ? v->type() : TensorType());
    constants.push_back(v && v->isConstant() ? &v->constant() : nullptr);
  }
  InferContext ctx(*n, types, constants, {});
  DLC_RETURN_IF_ERROR(inferNode(ctx));
  std::vector<TensorType> out;
  for (int i = 0; i < n->numOutputs(); ++i)
    out.push_back(ctx.outputType(i));
  return out;
}

std::string inferStr(const Graph &g, const std::string &name) {
  auto r = infer(g, name);
  if (!r)
    return "error: " + r.status().message();
  std::string s;
  for (const TensorType &t : *r)
    s += (s.empty() ? "" : ", ") + t.str();
  return s;
}

TEST(ControlFlowInfer, IfJoinsItsBranchesUnlessTheConditionIsKnown) {
  const std::string text = "graph @g(%c: bool[], %x: f32[2], %y: f32[3]) -> (r: ?) {\n"
                           "  %k = constant bool[] dense<[false]>\n"
                           "  %r = if(COND, %x, %y) {else_branch = graph @e(%x: ?, %y: ?) -> "
                           "(o: ?) {\n"
                           "    %o = neg(%y) : ?\n"
                           "    return %o\n"
                           "  }, then_branch = graph @t(%x: ?, %y: ?) -> (o: ?) {\n"
                           "    return %x\n"
                           "  }} : ? loc(\"b\")\n"
                           "  return %r\n"
                           "}\n";
  auto with = [&](const std::string &cond) {
    std::string t = text;
    return parse(t.replace(t.find("COND"), 4, cond));
  };
  EXPECT_EQ(inferStr(*with("%c"), "b"), "f32[?]");
  EXPECT_EQ(inferStr(*with("%k"), "b"), "f32[3]");
  EXPECT_EQ(inferStr(*with("%x"), "b"),
            "error: node 'b' (If): input cond must be bool, got f32[2]");
}

TEST(ControlFlowInfer, LoopWidensCarriedValuesAndCountsTrips) {
  // %a doubles in length on every iteration; %s keeps its shape.
  const std::string text =
      "graph @g(%x: f32[1], %s: f32[2]) -> (a: ?, s: ?, t: ?) {\n"
      "  %m = constant i64[] dense<[3]>\n"
      "  %a, %s2, %t = loop(%m, _, %x, %s) {body = graph @b(%i: i64[], %c: bool[], %a: ?, %s: ?) "
      "-> (c: ?, a: ?, s: ?, t: ?) {\n"
      "    %a2 = concat(%a, %a) {axis = 0} : ?\n"
      "    %s3 = neg(%s) : ?\n"
      "    %c2 = identity(%c) : ?\n"
      "    return %c2, %a2, %s3, %s3\n"
      "  }} : ?, ?, ? loc(\"l\")\n"
      "  return %a, %s2, %t\n"
      "}\n";
  auto g = parse(text);
  EXPECT_EQ(inferStr(*g, "l"), "f32[?], f32[2], f32[3,2]");
  // The body condition is computed: the trip count is unknown.
  std::string computed = text;
  computed.replace(computed.find("%c2 = identity(%c)"), 18, "%c2 = less(%i, %m2) ");
  computed.replace(computed.find("    %a2"), 0, "    %m2 = constant i64[] dense<[1]>\n");
  EXPECT_EQ(inferStr(*parse(computed), "l"), "f32[?], f32[2], f32[?,2]");
}

TEST(ControlFlowInfer, ScanSlicesAndStacksAlongTheirAxes) {
  auto g = parse("graph @g(%s: f32[4], %x: f32[4,3], %y: f32[5,3]) -> (a: ?, b: ?) {\n"
                 "  %a, %b = scan(%s, %x) {body = graph @b(%st: ?, %col: ?) -> (st: ?, o: ?) {\n"
                 "    %n = add(%st, %col) : ?\n"
                 "    return %n, %n\n"
                 "  }, num_scan_inputs = 1, scan_input_axes = [1], scan_output_axes = [-1]} : ?, ? "
                 "loc(\"s\")\n"
                 "  %c, %d = scan(%s, %x, %y) {body = graph @b(%st: ?, %p: ?, %q: ?) -> (st: ?, o: "
                 "?) {\n"
                 "    return %st, %p\n"
                 "  }, num_scan_inputs = 2} : ?, ? loc(\"bad\")\n"
                 "  return %a, %b\n"
                 "}\n");
  EXPECT_EQ(inferStr(*g, "s"), "f32[4], f32[4,3]");
  EXPECT_EQ(inferStr(*g, "bad"),
            "error: node 'bad' (Scan): scan inputs disagree on the sequence length: 4 and 5");
}

// --- Evaluation -----------------------------------------------------------------------------

Expected<std::vector<Tensor>> evalNamed(const Graph &g, const std::string &name,
                                        std::vector<Tensor> inputs) {
  return eval::evaluate(*nodeNamed(g, name), inputs);
}

TEST(ControlFlowEval, IfRunsTheTakenBranchOnItsCaptures) {
  auto g = parse(kIf);
  Tensor x = f32({2}, {1.5f, -2.0f});
  auto taken = evalNamed(*g, "b", {boolScalar(true), x});
  ASSERT_TRUE(taken) << taken.status().message();
  EXPECT_EQ(values((*taken)[0]), (std::vector<float>{1.5f, -2.0f}));
  auto other = evalNamed(*g, "b", {boolScalar(false), x});
  ASSERT_TRUE(other) << other.status().message();
  EXPECT_EQ(values((*other)[0]), (std::vector<float>{-1.5f, 2.0f}));
  auto two = evalNamed(*g, "b", {f32({2}, {1, 1}).castTo(DType::kBool), x});
  EXPECT_EQ(two.status().message(),
            "node 'b' (If): input cond must hold one element, got shape [2]");
}

TEST(ControlFlowEval, LoopCarriesValuesAndStacksScanOutputs) {
  auto g = parse(kNested);
  Tensor x = f32({2}, {1.0f, 10.0f});
  auto r = evalNamed(*g, "loop", {Tensor::scalarI64(3), Tensor(), x, Tensor::scalarF32(0.5f)});
  ASSERT_TRUE(r) << r.status().message();
  // Iteration 0 passes %a through; iterations 1 and 2 add the step.
  EXPECT_EQ(values((*r)[0]), (std::vector<float>{2.0f, 11.0f}));
  EXPECT_EQ((*r)[1].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values((*r)[1]), (std::vector<float>{1.0f, 10.0f, 1.5f, 10.5f, 2.0f, 11.0f}));
  // No iteration: the initial value, and an empty scan output.
  auto none = evalNamed(*g, "loop", {Tensor::scalarI64(0), Tensor(), x, Tensor::scalarF32(0.5f)});
  ASSERT_TRUE(none) << none.status().message();
  EXPECT_EQ(values((*none)[0]), values(x));
  EXPECT_EQ((*none)[1].shape(), (std::vector<int64_t>{0, 2}));
  // A false condition on entry runs nothing either.
  auto stopped =
      evalNamed(*g, "loop", {Tensor::scalarI64(5), boolScalar(false), x, Tensor::scalarF32(0.5f)});
  ASSERT_TRUE(stopped) << stopped.status().message();
  EXPECT_EQ((*stopped)[1].shape(), (std::vector<int64_t>{0, 2}));
}

TEST(ControlFlowEval, LoopStopsWhenTheBodySaysSo) {
  // while (sum < 10) sum += 4, without M: three iterations.
  auto g = parse("graph @g(%x: f32[]) -> (y: ?, t: ?) {\n"
                 "  %y, %t = loop(_, _, %x) {body = graph @b(%i: i64[], %c: bool[], %s: f32[]) -> "
                 "(c: ?, s: ?, t: ?) {\n"
                 "    %four = constant f32[] dense<[4.0]>\n"
                 "    %ten = constant f32[] dense<[10.0]>\n"
                 "    %n = add(%s, %four) : f32[]\n"
                 "    %go = less(%n, %ten) : bool[]\n"
                 "    return %go, %n, %i\n"
                 "  }} : f32[], i64[?] loc(\"l\")\n"
                 "  return %y, %t\n"
                 "}\n");
  auto r = evalNamed(*g, "l", {Tensor(), Tensor(), Tensor::scalarF32(1.0f)});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(values((*r)[0]), (std::vector<float>{13.0f}));
  EXPECT_EQ((*r)[1].toInt64Vector(), (std::vector<int64_t>{0, 1, 2}));
}

TEST(ControlFlowEval, ScanHonoursDirectionsAndAxes) {
  // Running sum over the columns of x, scanned in reverse; outputs stacked along axis 1 and
  // written in reverse, so column j of the output holds the sum of columns j..2.
  auto g = parse("graph @g(%s: f32[2], %x: f32[2,3]) -> (a: ?, b: ?) {\n"
                 "  %a, %b = scan(%s, %x) {body = graph @b(%st: f32[2], %col: f32[2]) -> (st: ?, "
                 "o: ?) {\n"
                 "    %n = add(%st, %col) : f32[2]\n"
                 "    return %n, %n\n"
                 "  }, num_scan_inputs = 1, scan_input_axes = [1], scan_input_directions = [1], "
                 "scan_output_axes = [1], scan_output_directions = [1]} : f32[2], f32[2,3] "
                 "loc(\"s\")\n"
                 "  return %a, %b\n"
                 "}\n");
  auto r = evalNamed(*g, "s", {f32({2}, {0, 100}), f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(values((*r)[0]), (std::vector<float>{6, 115}));
  EXPECT_EQ((*r)[1].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values((*r)[1]), (std::vector<float>{6, 5, 3, 115, 111, 106}));
}

TEST(ControlFlowEval, ErrorsNameTheBodyAndTheIteration) {
  // The body's Concat fails once the carried value no longer matches the captured one.
  auto g = parse("graph @g(%x: f32[1,2]) -> (y: ?) {\n"
                 "  %m = constant i64[] dense<[4]>\n"
                 "  %y = loop(%m, _, %x, %x) {body = graph @b(%i: i64[], %c: bool[], %a: ?, %k: "
                 "?) -> (c: ?, a: ?) {\n"
                 "    %a2 = concat(%a, %k) {axis = 0} : ? loc(\"grow\")\n"
                 "    %a3 = add(%a2, %k) : ? loc(\"sum\")\n"
                 "    return %c, %a3\n"
                 "  }, num_captures = 1} : ? loc(\"l\")\n"
                 "  return %y\n"
                 "}\n");
  auto r = evalNamed(*g, "l",
                     {Tensor::scalarI64(4), Tensor(), f32({1, 2}, {1, 2}), f32({1, 2}, {1, 2})});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{5, 2}));
  auto bad = evalNamed(
      *g, "l", {Tensor::scalarI64(4), Tensor(), f32({1, 2}, {1, 2}), f32({1, 3}, {1, 2, 3})});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().message().substr(0, 60),
            "node 'l' (Loop): body 'body', iteration 0: node 'grow' (Conc");
}

} // namespace
} // namespace dlc
