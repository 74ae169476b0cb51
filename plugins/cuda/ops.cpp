// The cuda plugin's kernels (docs/ops.md): what each receives, checked
// cheaply, turned into a simplified layout and launched on the call's
// stream. Nothing here synchronizes: the work runs after the kernel returns,
// in stream order. MatMul in float32/float64 goes to cuBLAS.
#include <xdev/plugin.h>
#include <xdev/op_names.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <new>
#include <string_view>
#include <utility>

#include "blas.hpp"
#include "call.hpp"
#include "common.hpp"
#include "launch.hpp"
#include "layout.hpp"
#include "ops.hpp"

namespace xdev::cuda {
namespace {

// ---------------------------------------------------------------------------
// Elementwise ops

xdev_status_t* binary(const xdev_kernel_call_t* raw, BinaryOp op, const char* name,
                      uint64_t dtypes) noexcept {
  return guarded(raw, name, [&]() -> xdev_status_t* {
    Call call(raw, name);
    if (xdev_status_t* s = call.check(2)) return s;
    if (xdev_status_t* s = call.check_same_dtype(dtypes)) return s;
    const xdev_tensor_t& out = call.output();
    const xdev_tensor_t* inputs[2] = {&call.input(0), &call.input(1)};
    const ElementwiseLayout l = elementwise_layout(out, inputs, 2);
    return call.launched(launch_binary(op, out.dtype, l, data_of(*inputs[0]), data_of(*inputs[1]),
                                       data_of_output(out), call.cuda_stream()));
  });
}

xdev_status_t* unary(const xdev_kernel_call_t* raw, UnaryOp op, const char* name) noexcept {
  return guarded(raw, name, [&]() -> xdev_status_t* {
    Call call(raw, name);
    if (xdev_status_t* s = call.check(1)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kNumbers)) return s;
    const xdev_tensor_t& out = call.output();
    const xdev_tensor_t* inputs[1] = {&call.input(0)};
    const ElementwiseLayout l = elementwise_layout(out, inputs, 1);
    return call.launched(launch_unary(op, out.dtype, l, data_of(*inputs[0]),
                                      data_of_output(out), call.cuda_stream()));
  });
}

xdev_status_t* kernel_add(void*, const xdev_kernel_call_t* call) noexcept {
  return binary(call, BinaryOp::kAdd, XDEV_OP_Add, kAll);
}
xdev_status_t* kernel_sub(void*, const xdev_kernel_call_t* call) noexcept {
  return binary(call, BinaryOp::kSub, XDEV_OP_Sub, kNumbers);
}
xdev_status_t* kernel_mul(void*, const xdev_kernel_call_t* call) noexcept {
  return binary(call, BinaryOp::kMul, XDEV_OP_Mul, kNumbers);
}
xdev_status_t* kernel_div(void*, const xdev_kernel_call_t* call) noexcept {
  return binary(call, BinaryOp::kDiv, XDEV_OP_Div, kNumbers);
}
xdev_status_t* kernel_neg(void*, const xdev_kernel_call_t* call) noexcept {
  return unary(call, UnaryOp::kNeg, XDEV_OP_Neg);
}
xdev_status_t* kernel_relu(void*, const xdev_kernel_call_t* call) noexcept {
  return unary(call, UnaryOp::kRelu, XDEV_OP_Relu);
}

}  // namespace

cudaError_t copy_into(const xdev_tensor_t& x, const xdev_tensor_t& out, cudaStream_t stream) {
  const xdev_tensor_t* inputs[1] = {&x};
  const ElementwiseLayout l = elementwise_layout(out, inputs, 1);
  const size_t size = itemsize(out.dtype);
  if (l.contiguous[0]) {
    return cudaMemcpyAsync(data_of_output(out), data_of(x), static_cast<size_t>(l.count) * size,
                           cudaMemcpyDeviceToDevice, stream);
  }
  return launch_copy(size, l, data_of(x), data_of_output(out), stream);
}

namespace {

// Copy and Identity: a new dense tensor holding x (any strides).
xdev_status_t* copy_op(const xdev_kernel_call_t* raw, const char* name) noexcept {
  return guarded(raw, name, [&]() -> xdev_status_t* {
    Call call(raw, name);
    if (xdev_status_t* s = call.check(1)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kAll)) return s;
    return call.launched(copy_into(call.input(0), call.output(), call.cuda_stream()));
  });
}
xdev_status_t* kernel_copy(void*, const xdev_kernel_call_t* call) noexcept {
  return copy_op(call, XDEV_OP_Copy);
}
xdev_status_t* kernel_identity(void*, const xdev_kernel_call_t* call) noexcept {
  return copy_op(call, XDEV_OP_Identity);
}

xdev_status_t* kernel_add_n(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_AddN;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(-1)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kNumbers)) return s;
    const xdev_tensor_t& out = call.output();
    void* o = data_of_output(out);
    if (call.input_count() == 1) {
      return call.launched(copy_into(call.input(0), out, call.cuda_stream()));
    }
    // ((x0 + x1) + x2) + ...: the order a sequential host loop uses, so
    // float results agree bit for bit. Later steps read `out` in place.
    const xdev_tensor_t* first[2] = {&call.input(0), &call.input(1)};
    ElementwiseLayout l = elementwise_layout(out, first, 2);
    if (xdev_status_t* s = call.launched(launch_binary(BinaryOp::kAdd, out.dtype, l,
                                                       data_of(*first[0]), data_of(*first[1]), o,
                                                       call.cuda_stream()))) {
      return s;
    }
    for (uint32_t i = 2; i < call.input_count(); ++i) {
      const xdev_tensor_t* pair[2] = {&out, &call.input(i)};
      l = elementwise_layout(out, pair, 2);
      if (xdev_status_t* s =
              call.launched(launch_binary(BinaryOp::kAdd, out.dtype, l, o,
                                          data_of(call.input(i)), o, call.cuda_stream()))) {
        return s;
      }
    }
    return nullptr;
  });
}

xdev_status_t* kernel_cast(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_Cast;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(1)) return s;
    const xdev_tensor_t& x = call.input(0);
    const xdev_tensor_t& out = call.output();
    if (!in_mask(kAll, x.dtype)) return call.bad_dtype(x.dtype);
    if (!in_mask(kAll, out.dtype)) return call.bad_dtype(out.dtype);
    if (const xdev_attr_t* a = find_attr(raw, XDEV_ATTR_NAME_dtype, XDEV_ATTR_DTYPE);
        a != nullptr && a->value.dtype != out.dtype) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: attribute dtype is %s but the output is %s", kOp,
                         dtype_name(a->value.dtype), dtype_name(out.dtype));
    }
    if (x.dtype == out.dtype) {
      return call.launched(copy_into(x, out, call.cuda_stream()));
    }
    const xdev_tensor_t* inputs[1] = {&x};
    const ElementwiseLayout l = elementwise_layout(out, inputs, 1);
    return call.launched(
        launch_cast(x.dtype, out.dtype, l, data_of(x), data_of_output(out), call.cuda_stream()));
  });
}

// ---------------------------------------------------------------------------
// Creation

xdev_status_t* kernel_fill(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_Fill;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(0)) return s;
    const xdev_tensor_t& out = call.output();
    if (!in_mask(kAll, out.dtype)) return call.bad_dtype(out.dtype);
    const xdev_attr_t* a = find_attr(raw, XDEV_ATTR_NAME_value, XDEV_ATTR_FLOAT);
    if (a == nullptr) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: no float attribute 'value'", kOp);
    }
    const uint64_t pattern = fill_pattern(out.dtype, a->value.f);
    return call.launched(launch_fill(itemsize(out.dtype), pattern, data_of_output(out),
                                     element_count(out), call.cuda_stream()));
  });
}

xdev_status_t* kernel_random_uniform(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_RandomUniform;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(0)) return s;
    const xdev_tensor_t& out = call.output();
    if (!in_mask(kFloats, out.dtype)) return call.bad_dtype(out.dtype);
    const xdev_attr_t* seed = find_attr(raw, XDEV_ATTR_NAME_seed, XDEV_ATTR_INT);
    const xdev_attr_t* minval = find_attr(raw, XDEV_ATTR_NAME_minval, XDEV_ATTR_FLOAT);
    const xdev_attr_t* maxval = find_attr(raw, XDEV_ATTR_NAME_maxval, XDEV_ATTR_FLOAT);
    if (seed == nullptr || minval == nullptr || maxval == nullptr) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: needs the attributes seed (int), minval and maxval (float)", kOp);
    }
    return call.launched(launch_random_uniform(out.dtype, static_cast<uint64_t>(seed->value.i),
                                               minval->value.f, maxval->value.f,
                                               data_of_output(out), element_count(out),
                                               call.cuda_stream()));
  });
}

// ---------------------------------------------------------------------------
// Reductions

xdev_status_t* reduce(const xdev_kernel_call_t* raw, bool mean, const char* name) noexcept {
  return guarded(raw, name, [&]() -> xdev_status_t* {
    Call call(raw, name);
    if (xdev_status_t* s = call.check(1)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kNumbers)) return s;
    const xdev_tensor_t& x = call.input(0);
    const xdev_tensor_t& out = call.output();
    bool reduced[kMaxRank] = {};
    if (xdev_status_t* s = read_axes(call, x.rank, reduced)) return s;
    const ReduceLayout l = reduce_layout(x, reduced);
    if (l.outer_count != element_count(out)) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the output has %" PRId64 " elements; the kept axes make %" PRId64,
                         name, element_count(out), l.outer_count);
    }

    const int multiprocessors = call.multiprocessors();
    // Partial sums of a split reduction live in kernel scratch from the
    // core's pool; without it the reduction is not split.
    const size_t scratch_bytes = reduce_scratch_bytes(out.dtype, l, multiprocessors);
    void* scratch = call.scratch(scratch_bytes);
    return call.launched(launch_reduce(mean, out.dtype, l, data_of(x), data_of_output(out),
                                       scratch, scratch != nullptr ? scratch_bytes : 0,
                                       multiprocessors, call.cuda_stream()));
  });
}

xdev_status_t* kernel_sum(void*, const xdev_kernel_call_t* call) noexcept {
  return reduce(call, false, XDEV_OP_Sum);
}
xdev_status_t* kernel_mean(void*, const xdev_kernel_call_t* call) noexcept {
  return reduce(call, true, XDEV_OP_Mean);
}

// ---------------------------------------------------------------------------
// MatMul

// The cuBLAS workspace NVIDIA recommends: 32 MiB on Hopper and newer, 4 MiB
// before (cublasSetWorkspace).
uint64_t blas_workspace_bytes(const DeviceInfo& info) {
  return info.cc_major >= 9 ? uint64_t{32} << 20 : uint64_t{4} << 20;
}

}  // namespace

xdev_status_t* blas_for_call(Call& call, const Blas** out_blas, cublasHandle_t* out) {
  xdev_stream_t* stream = call.stream();
  std::string error;
  const Blas* blas = load_blas(&error);
  if (blas == nullptr || stream->blas == nullptr) {
    return g_host.fail(call.host(), XDEV_STATUS_UNAVAILABLE, "%s: no cuBLAS on cuda device %d: %s",
                       call.op(), call.ordinal(),
                       stream->blas_error.empty() ? error.c_str() : stream->blas_error.c_str());
  }
  const uint64_t bytes = blas_workspace_bytes(*stream->device->info);
  void* workspace = call.scratch(bytes);
  const cublasStatus_t s =
      workspace != nullptr
          ? blas->set_workspace(stream->blas, workspace, static_cast<size_t>(bytes))
          : blas->set_stream(stream->blas, stream->stream);
  if (s != CUBLAS_STATUS_SUCCESS) {
    return g_host.fail(call.host(), XDEV_STATUS_INTERNAL,
                       "%s: setting the cuBLAS workspace on cuda "
                       "device %d: %s",
                       call.op(), call.ordinal(), cublas_status_name(s));
  }
  *out_blas = blas;
  *out = stream->blas;
  return nullptr;
}

namespace {

// One cuBLAS product in T (float: sgemm, double: dgemm), the 64-bit entry
// point when a size passes INT_MAX.
template <typename T, typename Gemm, typename Gemm64>
cublasStatus_t gemm_in(Gemm gemm, Gemm64 gemm64, cublasHandle_t handle, int64_t m, int64_t n,
                       int64_t k, const RowMajor& a, const RowMajor& b, double beta, void* c,
                       int64_t ldc) {
  const cublasOperation_t op_a = a.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = b.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  const T alpha = 1, t_beta = static_cast<T>(beta);
  const auto* A = static_cast<const T*>(a.p);
  const auto* B = static_cast<const T*>(b.p);
  auto* C = static_cast<T*>(c);
  if (m <= kIntMax && n <= kIntMax && k <= kIntMax && a.ld <= kIntMax && b.ld <= kIntMax &&
      ldc <= kIntMax) {
    const auto i = [](int64_t v) { return static_cast<int>(v); };
    return gemm(handle, op_b, op_a, i(n), i(m), i(k), &alpha, B, i(b.ld), A, i(a.ld), &t_beta, C,
                i(ldc));
  }
  return gemm64(handle, op_b, op_a, n, m, k, &alpha, B, b.ld, A, a.ld, &t_beta, C, ldc);
}

}  // namespace

// Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: B goes
// first, m and n swap.
xdev_status_t* row_major_gemm(Call& call, const Blas* blas, cublasHandle_t handle,
                              xdev_dtype_t dtype, int64_t m, int64_t n, int64_t k, RowMajor a,
                              RowMajor b, double beta, void* c, int64_t ldc) {
  if (m == 0 || n == 0) return nullptr;
  const cublasStatus_t status =
      dtype == XDEV_DTYPE_FLOAT32
          ? gemm_in<float>(blas->sgemm, blas->sgemm_64, handle, m, n, k, a, b, beta, c, ldc)
          : gemm_in<double>(blas->dgemm, blas->dgemm_64, handle, m, n, k, a, b, beta, c, ldc);
  if (status == CUBLAS_STATUS_SUCCESS) return nullptr;
  (void)cudaGetLastError();
  return g_host.fail(
      call.host(),
      status == CUBLAS_STATUS_ALLOC_FAILED ? XDEV_STATUS_OUT_OF_MEMORY : XDEV_STATUS_INTERNAL,
      "%s: cuBLAS %s [%" PRId64 ", %" PRId64 "] x [%" PRId64 ", %" PRId64
      "] on cuda device %d failed: %s",
      call.op(), dtype == XDEV_DTYPE_FLOAT32 ? "sgemm" : "dgemm", m, k, k, n, call.ordinal(),
      cublas_status_name(status));
}

namespace {

xdev_status_t* kernel_matmul(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_MatMul;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(2)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kNumbers)) return s;
    const xdev_tensor_t& a = call.input(0);
    const xdev_tensor_t& b = call.input(1);
    const xdev_tensor_t& c = call.output();
    if (a.rank != 2 || b.rank != 2 || c.rank != 2) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT, "%s: needs rank-2 operands",
                         kOp);
    }
    const xdev_attr_t* ta_attr = find_attr(raw, XDEV_ATTR_NAME_transpose_a, XDEV_ATTR_BOOL);
    const xdev_attr_t* tb_attr = find_attr(raw, XDEV_ATTR_NAME_transpose_b, XDEV_ATTR_BOOL);
    const bool ta = ta_attr != nullptr && ta_attr->value.b != 0;
    const bool tb = tb_attr != nullptr && tb_attr->value.b != 0;
    const int64_t m = ta ? a.shape[1] : a.shape[0];
    const int64_t k = ta ? a.shape[0] : a.shape[1];
    const int64_t kb = tb ? b.shape[1] : b.shape[0];
    const int64_t n = tb ? b.shape[0] : b.shape[1];
    if (k != kb || c.shape[0] != m || c.shape[1] != n) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: shapes do not agree: op(a) is [%" PRId64 ", %" PRId64
                         "], op(b) [%" PRId64 ", %" PRId64 "], output [%" PRId64 ", %" PRId64 "]",
                         kOp, m, k, kb, n, c.shape[0], c.shape[1]);
    }
    void* c_ptr = data_of_output(c);
    const size_t size = itemsize(c.dtype);
    if (k == 0) {  // an empty sum: zeros
      return call.launched(cudaMemsetAsync(c_ptr, 0, static_cast<size_t>(m * n) * size,
                                           call.cuda_stream()),
                           "cudaMemsetAsync");
    }
    const MatrixOperand ma = matrix_operand(a);
    const MatrixOperand mb = matrix_operand(b);
    if (!ma.ok || !mb.ok) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: input %s has strides [%" PRId64 ", %" PRId64
                         "]; neither row- nor "
                         "column-major",
                         kOp, ma.ok ? "b" : "a", ma.ok ? b.strides[0] : a.strides[0],
                         ma.ok ? b.strides[1] : a.strides[1]);
    }

    if (c.dtype == XDEV_DTYPE_INT32 || c.dtype == XDEV_DTYPE_INT64) {
      // Element strides of op(A) [M, K] and op(B) [K, N].
      int64_t ar, ac, br, bc;
      operand_strides(ma, ta, &ar, &ac);
      operand_strides(mb, tb, &br, &bc);
      return call.launched(launch_matmul_int(c.dtype, m, n, k, data_of(a), ar, ac, data_of(b), br,
                                             bc, c_ptr, call.cuda_stream()));
    }

    // A row-major operand seen column-major is its transpose: the flag
    // flips for column-major storage.
    const Blas* blas = nullptr;
    cublasHandle_t handle = nullptr;
    if (xdev_status_t* s = blas_for_call(call, &blas, &handle)) return s;
    return row_major_gemm(call, blas, handle, c.dtype, m, n, k,
                          {data_of(a), ma.ld, ta != ma.column_major},
                          {data_of(b), mb.ld, tb != mb.column_major}, 0.0, c_ptr, n);
  });
}

// ---------------------------------------------------------------------------
// The list

using ph::kernel_info;

constexpr xdev_kernel_info_t kKernels[] = {
    kernel_info(XDEV_OP_MatMul, kNumbers, kNumbers, &kernel_matmul),
    kernel_info(XDEV_OP_Add, kAll, kAll, &kernel_add),
    kernel_info(XDEV_OP_Sub, kNumbers, kNumbers, &kernel_sub),
    kernel_info(XDEV_OP_Mul, kNumbers, kNumbers, &kernel_mul),
    kernel_info(XDEV_OP_Div, kNumbers, kNumbers, &kernel_div),
    kernel_info(XDEV_OP_Neg, kNumbers, kNumbers, &kernel_neg),
    kernel_info(XDEV_OP_Relu, kNumbers, kNumbers, &kernel_relu),
    kernel_info(XDEV_OP_AddN, kNumbers, kNumbers, &kernel_add_n),
    kernel_info(XDEV_OP_Cast, kAll, kAll, &kernel_cast),
    kernel_info(XDEV_OP_Sum, kNumbers, kNumbers, &kernel_sum),
    kernel_info(XDEV_OP_Mean, kNumbers, kNumbers, &kernel_mean),
    kernel_info(XDEV_OP_Copy, kAll, kAll, &kernel_copy),
    kernel_info(XDEV_OP_Fill, kAll, kAll, &kernel_fill),
    kernel_info(XDEV_OP_RandomUniform, kFloats, kFloats, &kernel_random_uniform),
    kernel_info(XDEV_OP_Identity, kAll, kAll, &kernel_identity),
};

// This file's kernels, then those of ops_math.cpp, ops_reduce.cpp,
// ops_movement.cpp, ops_nn.cpp, ops_indexing.cpp, ops_window.cpp and
// ops_batched.cpp: room for every op of the op table.
constexpr size_t kMaxKernels = 128;
struct AllKernels {
  std::array<const xdev_kernel_info_t*, kMaxKernels> pointers{};
  uint32_t count = 0;
  void add(const xdev_kernel_info_t* items, size_t n) noexcept {
    for (size_t i = 0; i < n && count < kMaxKernels; ++i) pointers[count++] = &items[i];
  }
};

}  // namespace

const xdev_kernel_info_t* const* kernel_list(uint32_t* out_count) noexcept {
  static const AllKernels all = [] {
    AllKernels k;
    k.add(kKernels, std::size(kKernels));
    for (const KernelTable t : {math_kernels(), reduce_kernels(), movement_kernels(), nn_kernels(),
                                indexing_kernels(), window_kernels(), batched_kernels()}) {
      k.add(t.items, t.count);
    }
    return k;
  }();
  *out_count = all.count;
  return all.pointers.data();
}

}  // namespace xdev::cuda
