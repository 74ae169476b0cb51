// The cuda plugin's BatchMatMulV2 and TensorScatterAdd against the cpu
// plugin's, through the public SDK (inputs on /CPU:0; each op once under
// DeviceScope("/GPU:0"), once under "/CPU:0"): broadcast batch axes (one
// strided batched GEMM, or a GEMM per matrix), adjoints, transposed views,
// empty batches and K = 0, every number dtype; repeated scatter indices
// (atomicAdd) and an index out of range. Integers are compared exactly,
// floats within docs/ops.md's bounds, doubled (each device may be that far
// from the exact result).
//
// Without a GPU every test skips with the reason (XDEV_REQUIRE_GPU).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "cuda_test_util.hpp"

namespace {

using ::testing::HasSubstr;
using xdev::DType;
using xdev::Shape;
using xdev::Tensor;
using xdev_cuda_test::GpuMatchesCpu;
using xdev_cuda_test::random_tensor;
using xdev_cuda_test::Tolerance;

constexpr DType kNumberTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                  DType::kInt64};

// (K + 2) eps |x| |y| summed over K, with |x|, |y| <= 2, doubled.
Tolerance product_tolerance(DType d, int64_t k) {
  if (d != DType::kFloat32 && d != DType::kFloat64) return {};
  const double eps = d == DType::kFloat32 ? 0x1p-23 : 0x1p-52;
  return {0, 2.0 * static_cast<double>(k + 2) * eps * 4.0 * static_cast<double>(k)};
}

TEST(CudaGpu, BatchMatMulMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  struct Spec {
    Shape x, y;
    bool ax, ay;
  };
  const Spec specs[] = {
      {{4, 3, 5}, {4, 5, 2}, false, false},      // one strided batched GEMM
      {{4, 5, 3}, {4, 2, 5}, true, true},
      {{2, 3, 3, 5}, {5, 4}, false, false},      // y broadcast whole: stride 0
      {{2, 1, 3, 5}, {1, 3, 5, 4}, false, false},  // both broadcast: a GEMM per matrix
      {{3, 5}, {5, 2}, false, false},            // rank 2
      {{0, 3, 5}, {5, 2}, false, false},         // no matrices
      {{2, 3, 0}, {2, 0, 4}, false, false},      // K = 0: zeros
      {{8, 64, 96}, {8, 80, 96}, false, true},
  };
  uint64_t seed = 31000;
  for (DType dtype : kNumberTypes) {
    for (const Spec& s : specs) {
      SCOPED_TRACE(std::string(xdev::to_string(dtype)));
      const Tensor x = random_tensor(dtype, s.x, seed++);
      const Tensor y = random_tensor(dtype, s.y, seed++);
      const int64_t k = s.x[s.x.size() - (s.ax ? 2 : 1)];
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::batch_matmul(x, y, s.ax, s.ay); },
                                product_tolerance(dtype, k)));
    }
    // A transposed view (the core makes it contiguous first).
    const Tensor stored = random_tensor(dtype, {3, 6, 4}, seed++);
    const Tensor y = random_tensor(dtype, {6, 2}, seed++);
    EXPECT_TRUE(GpuMatchesCpu(
        [&] { return xdev::batch_matmul(xdev::transpose(stored, {0, 2, 1}), y); },
        product_tolerance(dtype, 6)));
  }
}

TEST(CudaGpu, TensorScatterAddMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 32000;
  for (DType dtype : kNumberTypes) {
    for (DType index_type : {DType::kInt32, DType::kInt64}) {
      SCOPED_TRACE(std::string(xdev::to_string(dtype)) + " indices " +
                   std::string(xdev::to_string(index_type)));
      // Many repeated indices into few rows (atomicAdd), depth 1 and 2.
      const Tensor tensor = random_tensor(dtype, {5, 7}, seed++);
      const Tensor rows = random_tensor(index_type, {300, 1}, seed++, 0, 4);
      const Tensor row_updates = random_tensor(dtype, {300, 7}, seed++);
      // Each element sums at most ~300 terms of magnitude <= 2.
      const double eps = dtype == DType::kFloat32 ? 0x1p-23 : 0x1p-52;
      const Tolerance tol = dtype == DType::kFloat32 || dtype == DType::kFloat64
                                ? Tolerance{0, 2.0 * 302 * eps * 2.0 * 301}
                                : Tolerance{};
      EXPECT_TRUE(GpuMatchesCpu(
          [&] { return xdev::tensor_scatter_add(tensor, rows, row_updates); }, tol));
      const Tensor cells = xdev::concat({random_tensor(index_type, {200, 1}, seed++, 0, 4),
                                         random_tensor(index_type, {200, 1}, seed++, 0, 6)},
                                        1);
      const Tensor cell_updates = random_tensor(dtype, {200}, seed++);
      EXPECT_TRUE(GpuMatchesCpu(
          [&] { return xdev::tensor_scatter_add(tensor, cells, cell_updates); }, tol));
      // No indices: a copy.
      const Tensor none = random_tensor(index_type, {0, 1}, seed++, 0, 1);
      const Tensor no_updates = random_tensor(dtype, {0, 7}, seed++);
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::tensor_scatter_add(tensor, none, no_updates); }));
    }
  }
}

TEST(CudaGpu, TensorScatterAddRefusesAnIndexOutOfRange) {
  XDEV_REQUIRE_GPU();
  const Tensor tensor = random_tensor(DType::kFloat32, {5, 3}, 1);
  const Tensor updates = random_tensor(DType::kFloat32, {3, 3}, 2);
  for (const std::vector<int64_t>& bad : {std::vector<int64_t>{0, 5, 1}, {2, 1, -1}}) {
    const Tensor idx = xdev::constant(bad, Shape{3, 1});
    xdev::DeviceScope gpu("/GPU:0");
    try {
      (void)xdev::tensor_scatter_add(tensor, idx, updates).to_host();
      ADD_FAILURE() << "no error for an index out of range";
    } catch (const xdev::Error& e) {
      EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument) << e.what();
      EXPECT_THAT(e.what(), HasSubstr("TensorScatterAdd"));
      EXPECT_THAT(e.what(), HasSubstr("out of range [0, 5)")) << e.what();
      EXPECT_THAT(e.what(), HasSubstr(bad[1] == 5 ? "index 5 (indices element 1"
                                                  : "index -1 (indices element 2"));
    }
  }
}

}  // namespace
