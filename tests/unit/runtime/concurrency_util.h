// One model run from many threads at once, every result compared bit for bit with the same run
// made alone. Used by tests/unit/runtime/threads_test.cc (CPU) and tests/unit/gpu (GPU
// sessions); the `tsan` preset runs both under ThreadSanitizer.
#pragma once

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/jit/model.h"
#include "runtime/random_tensor.h"

namespace dlc::testing {

/// The inputs of run `k`: each input random from a seed of its own, symbolic dims bound to
/// 1 + k % 3, so concurrent runs differ in values and in shapes.
inline std::map<std::string, Tensor> inputsOfRun(const std::vector<TensorInfo> &inputs, int k) {
  std::mt19937_64 rng(static_cast<uint64_t>(1000 + k));
  std::map<std::string, Tensor> out;
  for (const TensorInfo &in : inputs) {
    std::vector<int64_t> shape;
    for (const Dim &d : in.type.shape.dims())
      shape.push_back(d.isKnown() ? d.value() : 1 + k % 3);
    Expected<Tensor> t = randomTensor(in.type.dtype, shape, rng);
    EXPECT_TRUE(t) << t.status().message();
    if (t)
      out.emplace(in.name, std::move(*t));
  }
  return out;
}

/// "" when `a` and `b` hold the same outputs, bit for bit; else what differs.
inline std::string differences(const std::map<std::string, Tensor> &a,
                               const std::map<std::string, Tensor> &b) {
  if (a.size() != b.size())
    return "a different number of outputs";
  for (const auto &[name, t] : a) {
    auto it = b.find(name);
    if (it == b.end())
      return "output '" + name + "' missing";
    const Tensor &u = it->second;
    if (t.dtype() != u.dtype() || t.shape() != u.shape())
      return "output '" + name + "' has another type";
    if (std::memcmp(t.raw(), u.raw(), static_cast<size_t>(t.byteSize())) != 0)
      return "output '" + name + "' has other values";
  }
  return "";
}

/// Runs 0..total-1 one after another on `session`: their inputs (inputsOfRun) and outputs.
/// Returns an error message for the first run that fails, else "".
inline std::string runAlone(const Model &model, const Session &session, int total,
                            std::vector<std::map<std::string, Tensor>> &inputs,
                            std::vector<std::map<std::string, Tensor>> &outputs) {
  for (int k = 0; k < total; ++k) {
    inputs.push_back(inputsOfRun(model.inputs(), k));
    auto out = session.run(inputs.back());
    if (!out)
      return "run " + std::to_string(k) + " alone: " + out.status().message();
    outputs.push_back(std::move(*out));
  }
  return "";
}

/// Runs `runsPerThread` runs on each of `threads` threads at once (thread t makes runs
/// t * runsPerThread ...), half the threads on one shared session and half on a session of
/// their own, and compares each with the same run made alone on one thread beforehand.
/// Returns one line per failed or differing run (empty when all agree).
inline std::vector<std::string> concurrentRunFailures(const Model &model,
                                                      const SessionOptions &options, int threads,
                                                      int runsPerThread) {
  std::vector<std::string> failures;
  Expected<Session> shared = model.createSession(options);
  if (!shared)
    return {"createSession: " + shared.status().message()};
  std::vector<std::map<std::string, Tensor>> inputs, alone;
  if (std::string why = runAlone(model, *shared, threads * runsPerThread, inputs, alone);
      !why.empty())
    return {why};
  std::vector<std::vector<std::string>> perThread(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<std::string> &mine = perThread[static_cast<size_t>(t)];
      Expected<Session> own = model.createSession(options);
      if (!own) {
        mine.push_back("thread " + std::to_string(t) + ": " + own.status().message());
        return;
      }
      const Session &s = t % 2 == 0 ? *shared : *own;
      for (int r = 0; r < runsPerThread; ++r) {
        const int k = t * runsPerThread + r;
        auto out = s.run(inputs[static_cast<size_t>(k)]);
        std::string why =
            out ? differences(*out, alone[static_cast<size_t>(k)]) : out.status().message();
        if (!why.empty())
          mine.push_back("thread " + std::to_string(t) + " run " + std::to_string(k) + ": " + why);
      }
    });
  }
  for (std::thread &th : pool)
    th.join();
  for (const auto &lines : perThread)
    failures.insert(failures.end(), lines.begin(), lines.end());
  return failures;
}

} // namespace dlc::testing
