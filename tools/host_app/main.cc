// host_app: runs a model library written by `dlc compile -o model.so` through dlc's C++
// wrapper over the C API (an installed dlc: find_package(dlc)).
//
//   host_app MODEL.so --input NAME=FILE.npy... [--output-dir DIR] [--device auto|cpu|gpu]
//                     [--threads N] [--runs N]
//
// Prints the model's interface, where it runs, the time from loading the library to the first
// result, and each output (shape, dtype, first values). --output-dir writes each output as
// DIR/NAME.npy. --threads N runs one session per thread on the same inputs and checks that
// every thread gets the same bytes. Exit status 1 on any error (the message names it).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <dlc/dlc.hpp>

namespace {

struct Args {
  std::string model;
  std::map<std::string, std::string> inputs;
  std::string outputDir;
  dlc_device device = DLC_DEVICE_AUTO;
  int threads = 1;
  int runs = 1;
};

void usage() {
  std::cerr << "usage: host_app MODEL.so --input NAME=FILE.npy... [--output-dir DIR] "
               "[--device auto|cpu|gpu] [--threads N] [--runs N]\n";
}

bool parse(int argc, char **argv, Args &a) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--input") {
      std::string v = value();
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        throw std::runtime_error("--input " + v + ": expected NAME=FILE.npy");
      a.inputs[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (arg == "--output-dir") {
      a.outputDir = value();
    } else if (arg == "--device") {
      std::string v = value();
      if (v == "auto")
        a.device = DLC_DEVICE_AUTO;
      else if (v == "cpu")
        a.device = DLC_DEVICE_CPU;
      else if (v == "gpu")
        a.device = DLC_DEVICE_GPU;
      else
        throw std::runtime_error("--device " + v + ": expected auto, cpu or gpu");
    } else if (arg == "--threads" || arg == "--runs") {
      int n = std::stoi(value());
      if (n < 1 || n > 256)
        throw std::runtime_error(arg + " must be in [1, 256]");
      (arg == "--threads" ? a.threads : a.runs) = n;
    } else if (arg == "-h" || arg == "--help") {
      return false;
    } else if (!arg.empty() && arg[0] == '-') {
      throw std::runtime_error("unknown option " + arg);
    } else if (a.model.empty()) {
      a.model = arg;
    } else {
      throw std::runtime_error("unexpected argument " + arg);
    }
  }
  return !a.model.empty();
}

std::string typeName(const DLDataType &t) {
  switch (t.code) {
  case kDLFloat:
    return "float" + std::to_string(t.bits);
  case kDLBfloat:
    return "bfloat16";
  case kDLInt:
    return "int" + std::to_string(t.bits);
  case kDLUInt:
    return t.bits == 1 ? "bool" : "uint" + std::to_string(t.bits);
  default:
    return "?";
  }
}

std::string shapeText(const std::vector<int64_t> &shape, const std::vector<std::string> &names) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + (shape[i] < 0 ? names[i] : std::to_string(shape[i]));
  return s + "]";
}

size_t byteSize(const DLTensor &t) {
  size_t n = 1;
  for (int32_t i = 0; i < t.ndim; ++i)
    n *= static_cast<size_t>(t.shape[i]);
  return n * (t.dtype.bits == 1 ? 1 : t.dtype.bits / 8);
}

/// Element i as a double: floats (f16 and bf16 decoded), signed and unsigned integers, bool.
double element(const DLTensor &t, size_t i) {
  const char *p = static_cast<const char *>(t.data) + t.byte_offset;
  const size_t bytes = t.dtype.bits == 1 ? 1 : t.dtype.bits / 8;
  p += i * bytes;
  uint64_t raw = 0;
  std::memcpy(&raw, p, bytes);
  switch (t.dtype.code) {
  case kDLFloat:
    if (t.dtype.bits == 64) {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    if (t.dtype.bits == 32) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    { // IEEE half
      const uint32_t sign = (raw >> 15) & 1, exp = (raw >> 10) & 0x1F, frac = raw & 0x3FF;
      double v = exp == 0    ? std::ldexp(static_cast<double>(frac), -24)
                 : exp == 31 ? (frac ? NAN : INFINITY)
                             : std::ldexp(1.0 + frac / 1024.0, static_cast<int>(exp) - 15);
      return sign ? -v : v;
    }
  case kDLBfloat: {
    const uint32_t bits = static_cast<uint32_t>(raw) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case kDLInt: {
    const int shift = 64 - static_cast<int>(t.dtype.bits);
    return static_cast<double>(static_cast<int64_t>(raw << shift) >> shift);
  }
  default: // unsigned and bool
    return static_cast<double>(raw);
  }
}

std::string firstValues(const DLTensor &t) {
  const size_t count = byteSize(t) / (t.dtype.bits == 1 ? 1 : t.dtype.bits / 8);
  std::string s;
  for (size_t i = 0; i < count && i < 6; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", element(t, i));
    s += (s.empty() ? "" : ", ") + std::string(buf);
  }
  return s;
}

/// One session: binds the inputs, runs `runs` times, returns each output's bytes by name.
std::map<std::string, std::vector<uint8_t>>
runSession(const dlc::api::Model &model, const std::map<std::string, dlc::api::Array> &in,
           const Args &args) {
  dlc::api::Session session(model, args.device);
  for (auto &[name, array] : in)
    session.setInput(name, array.tensor());
  for (int r = 0; r < args.runs; ++r)
    session.run();
  std::map<std::string, std::vector<uint8_t>> out;
  for (const dlc::api::TensorInfo &o : model.outputs()) {
    const DLTensor &t = session.output(o.name);
    const auto *p = static_cast<const uint8_t *>(t.data) + t.byte_offset;
    out[o.name].assign(p, p + byteSize(t));
  }
  return out;
}

int run(const Args &args) {
  const auto start = std::chrono::steady_clock::now();
  dlc::api::Model model = dlc::api::Model::load(args.model);
  std::cout << "model " << args.model << ": compiled by dlc " << model.compilerVersion()
            << ", runtime " << dlc_version() << ", GPU arches:";
  for (const std::string &a : model.arches())
    std::cout << " " << a;
  std::cout << (model.arches().empty() ? " none\n" : "\n");
  for (const dlc::api::TensorInfo &t : model.inputs())
    std::cout << "  input  '" << t.name << "': " << typeName(t.dtype) << " "
              << shapeText(t.shape, t.dimNames) << "\n";
  for (const dlc::api::TensorInfo &t : model.outputs())
    std::cout << "  output '" << t.name << "': " << typeName(t.dtype) << " "
              << shapeText(t.shape, t.dimNames) << "\n";

  // Read by dlc's own .npy reader (the C API's dlc_array_read_npy): the host app accepts
  // exactly the files `dlc run` accepts.
  std::map<std::string, dlc::api::Array> inputs;
  for (const auto &[name, path] : args.inputs)
    inputs.emplace(name, dlc::api::Array::readNpy(path));

  dlc::api::Session session(model, args.device);
  std::cout << "running on the " << (session.device() == DLC_DEVICE_GPU ? "GPU" : "CPU") << "\n";
  for (auto &[name, array] : inputs)
    session.setInput(name, array.tensor());
  session.run();
  const double firstMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << "load to first result: " << firstMs << " ms\n";
  for (int r = 1; r < args.runs; ++r)
    session.run();

  for (const dlc::api::TensorInfo &o : model.outputs()) {
    const DLTensor &t = session.output(o.name);
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    std::cout << "output '" << o.name << "': " << typeName(t.dtype) << " "
              << shapeText(shape, std::vector<std::string>(shape.size())) << " [" << firstValues(t)
              << (byteSize(t) > 6 * (t.dtype.bits == 1 ? 1u : t.dtype.bits / 8u) ? ", ..." : "")
              << "]\n";
    if (!args.outputDir.empty()) {
      std::filesystem::create_directories(args.outputDir);
      dlc::api::writeNpy((std::filesystem::path(args.outputDir) / (o.name + ".npy")).string(), t);
    }
  }

  if (args.threads > 1) { // one session per thread, all on the same model
    std::vector<std::map<std::string, std::vector<uint8_t>>> results(args.threads);
    std::vector<std::string> errors(args.threads);
    std::vector<std::thread> pool;
    for (int i = 0; i < args.threads; ++i)
      pool.emplace_back([&, i] {
        try { // the sessions only read the input arrays
          results[i] = runSession(model, inputs, args);
        } catch (const std::exception &e) {
          errors[i] = e.what();
        }
      });
    for (std::thread &t : pool)
      t.join();
    for (int i = 0; i < args.threads; ++i) {
      if (!errors[i].empty())
        throw std::runtime_error("thread " + std::to_string(i) + ": " + errors[i]);
      if (results[i] != results[0])
        throw std::runtime_error("thread " + std::to_string(i) + " got different outputs");
    }
    std::cout << args.threads << " threads, one session each: identical outputs\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Args args;
  try {
    if (!parse(argc, argv, args)) {
      usage();
      return 2;
    }
    return run(args);
  } catch (const std::exception &e) {
    std::cerr << "host_app: error: " << e.what() << "\n";
    return 1;
  }
}
