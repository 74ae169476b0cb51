// Helpers for the cuda plugin's tests through the public SDK.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

namespace xdev_cuda_test {

// The cuda plugin's one-line status ("CUDA driver not found", "2 devices
// (...)"), or why there is none.
inline std::string cuda_plugin_status() {
  for (const xdev::PluginInfo& p : xdev::list_plugins()) {
    if (p.name == "cuda") return p.loaded ? p.status : "not loaded: " + p.reason;
  }
  return "the cuda plugin was not found (search path: " +
         [] {
           std::string s;
           for (const auto& d : xdev::plugin_search_path()) s += (s.empty() ? "" : ":") + d;
           return s;
         }() +
         ")";
}

// Every GPU test starts with this: the reason prints with the skip.
#define XDEV_REQUIRE_GPU()                                                            \
  do {                                                                                \
    if (xdev::num_gpus() == 0) {                                                      \
      GTEST_SKIP() << "no CUDA device (cuda plugin: "                                 \
                   << ::xdev_cuda_test::cuda_plugin_status() << ")";                  \
    }                                                                                 \
  } while (0)

// A tensor of `dtype` and `shape` with random values, created on /CPU:0.
// Floats in [lo, hi), integers in [lo, hi] (rounded), bools 0/1.
inline xdev::Tensor random_tensor(xdev::DType dtype, const xdev::Shape& shape, uint64_t seed,
                                  double lo = -2.0, double hi = 2.0) {
  xdev::DeviceScope cpu("/CPU:0");
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> integer(static_cast<int64_t>(std::ceil(lo)),
                                                 static_cast<int64_t>(std::floor(hi)));
  // A host vector of T drawn by `draw`, as a tensor.
  auto make = [&](auto zero, auto draw) {
    using T = decltype(zero);
    std::vector<T> v(static_cast<size_t>(shape.num_elements()));
    for (auto& x : v) x = static_cast<T>(draw());
    return xdev::constant(v.data(), dtype, shape);
  };
  auto uniform = [&] { return real(engine); };
  auto whole = [&] { return integer(engine); };
  switch (dtype) {
    case xdev::DType::kFloat32: return make(float{}, uniform);
    case xdev::DType::kFloat64: return make(double{}, uniform);
    case xdev::DType::kInt32: return make(int32_t{}, whole);
    case xdev::DType::kInt64: return make(int64_t{}, whole);
    case xdev::DType::kBool: return make(uint8_t{}, [&] { return engine() & 1; });
  }
  return {};
}

struct Tolerance {
  double relative = 0;  // |a - b| <= absolute + relative * |b|
  double absolute = 0;
};

// Compares two host tensors: same dtype and shape; integers and bools
// exactly, floats within `tol` (0: bit for bit, NaN equal to NaN).
inline ::testing::AssertionResult Same(const xdev::HostTensor& got,
                                       const xdev::HostTensor& want, Tolerance tol = {}) {
  if (got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << got.dtype() << " vs " << want.dtype();
  }
  if (!(got.shape() == want.shape())) {
    return ::testing::AssertionFailure() << "shape " << got.shape() << " vs " << want.shape();
  }
  const bool is_float = got.dtype() == xdev::DType::kFloat32 ||
                        got.dtype() == xdev::DType::kFloat64;
  int64_t bad = 0;
  std::ostringstream first;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const double a = got.value_as_double(i);
    const double b = want.value_as_double(i);
    bool ok;
    if (is_float) {
      if (std::isnan(a) || std::isnan(b)) {
        ok = std::isnan(a) && std::isnan(b);
      } else if (tol.relative == 0 && tol.absolute == 0) {
        const size_t item = xdev::itemsize(got.dtype());
        ok = std::memcmp(got.bytes() + i * item, want.bytes() + i * item, item) == 0;
      } else {
        ok = a == b || std::fabs(a - b) <= tol.absolute + tol.relative * std::fabs(b);
      }
    } else {
      ok = a == b;
    }
    if (!ok && bad++ == 0) {
      first.precision(17);
      first << "element " << i << ": " << a << " vs " << b;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.num_elements()
                                       << " elements differ; first: " << first.str();
}

// docs/ops.md's RandomUniform generator on the host.
inline uint64_t random_bits(uint64_t seed, uint64_t i) {
  uint64_t x = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Runs `op` under DeviceScope("/GPU:0") and under "/CPU:0" and compares the
// results (which must come from those devices).
using Compare = std::function<::testing::AssertionResult(const xdev::HostTensor& gpu,
                                                          const xdev::HostTensor& cpu)>;

// Runs `op` on both devices and compares the results with `compare`, or
// fails when an op did not run where it was asked to.
inline ::testing::AssertionResult GpuComparesToCpu(const std::function<xdev::Tensor()>& op,
                                                   const Compare& compare) {
  xdev::Tensor gpu, cpu;
  {
    xdev::DeviceScope scope("/GPU:0");
    gpu = op();
  }
  {
    xdev::DeviceScope scope("/CPU:0");
    cpu = op();
  }
  if (gpu.device().device_type != "GPU") {
    return ::testing::AssertionFailure()
           << "the op ran on " << gpu.device().name << ", not on GPU:0 (no cuda kernel?)";
  }
  if (cpu.device().device_type != "CPU") {
    return ::testing::AssertionFailure()
           << "the reference ran on " << cpu.device().name
           << ", not on CPU:0: the cpu plugin has no kernel for it, so there is nothing to "
              "compare with";
  }
  return compare(gpu.to_host(), cpu.to_host());
}

inline ::testing::AssertionResult GpuMatchesCpu(const std::function<xdev::Tensor()>& op,
                                                Tolerance tol = {}) {
  return GpuComparesToCpu(op, [&](const xdev::HostTensor& gpu, const xdev::HostTensor& cpu) {
    return Same(gpu, cpu, tol);
  });
}

}  // namespace xdev_cuda_test
