// BatchMatMulV2 and TensorScatterAdd (docs/ops.md).
//
// BatchMatMulV2: each matrix of the batch is MatMul's product (ops.cpp).
// float32/float64 go to cuBLAS: one strided batched GEMM when every
// operand's matrices lie a fixed stride apart (no broadcast, or a whole
// operand broadcast: stride 0), else one GEMM per matrix. int32/int64 run
// MatMul's integer kernel per matrix (matmul_int.cu).
//
// TensorScatterAdd: the indices come to the host and are checked there
// (gather_check.hpp), the tensor is copied into the output, then the
// updates are added atomically (batched.cu).
#include <xdev/plugin.h>
#include <xdev/op_names.h>

#include <cuda_runtime_api.h>

#include <cinttypes>
#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

#include "batched.hpp"
#include "blas.hpp"
#include "call.hpp"
#include "gather_check.hpp"
#include "launch.hpp"
#include "layout.hpp"
#include "ops.hpp"

namespace xdev::cuda {
namespace {

// Where each matrix of a batched product starts: the output's batch axes
// (all but the last two) unravelled, each input's batch strides applied (0
// along an axis it broadcasts).
struct Batches {
  int32_t axes = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[2][kMaxRank] = {};
  int64_t count = 1;

  // False when an input's batch axis is neither the output's size nor 1.
  bool set(const xdev_tensor_t& x, const xdev_tensor_t& y, const xdev_tensor_t& out) {
    axes = out.rank - 2;
    const xdev_tensor_t* in[2] = {&x, &y};
    for (int32_t i = 0; i < axes; ++i) {
      dims[i] = out.shape[i];
      count *= dims[i];
      for (int w = 0; w < 2; ++w) {
        const int32_t j = in[w]->rank - 2 - (axes - i);
        const int64_t d = j >= 0 ? in[w]->shape[j] : 1;
        if (d != dims[i] && d != 1) return false;
        strides[w][i] = j >= 0 && d != 1 ? in[w]->strides[j] : 0;
      }
    }
    return true;
  }
  // The element offset of matrix `b` of input `w`.
  int64_t offset(int w, int64_t b) const {
    int64_t o = 0;
    for (int32_t i = axes; i-- > 0;) {
      o += (b % dims[i]) * strides[w][i];
      b /= dims[i];
    }
    return o;
  }
  // Whether input w's matrix b starts at b * stride for one stride.
  bool uniform(int w, int64_t* stride) const {
    int64_t s = -1, inner = 1;
    for (int32_t i = axes; i-- > 0;) {
      if (dims[i] == 1) continue;
      if (s < 0) s = strides[w][i];  // inner is 1 here: the axes after are all of size 1
      if (strides[w][i] != s * inner) return false;
      inner *= dims[i];
    }
    *stride = s < 0 ? 0 : s;
    return true;
  }
};

// The last two axes of t as a rank-2 view.
xdev_tensor_t matrix_of(const xdev_tensor_t& t) {
  xdev_tensor_t m = t;
  m.rank = 2;
  m.shape = t.shape + t.rank - 2;
  m.strides = t.strides + t.rank - 2;
  return m;
}

template <typename T>
cublasStatus_t gemm_batched(const Blas& blas, cublasHandle_t handle, cublasOperation_t op_b,
                            cublasOperation_t op_a, int64_t n, int64_t m, int64_t k, const T* B,
                            int64_t ldb, int64_t stride_b, const T* A, int64_t lda,
                            int64_t stride_a, T* C, int64_t count) {
  const T alpha = 1, beta = 0;
  auto i = [](int64_t v) { return static_cast<int>(v); };
  if constexpr (sizeof(T) == 4) {
    return blas.sgemm_strided_batched(handle, op_b, op_a, i(n), i(m), i(k), &alpha, B, i(ldb),
                                      stride_b, A, i(lda), stride_a, &beta, C, i(n), m * n,
                                      i(count));
  } else {
    return blas.dgemm_strided_batched(handle, op_b, op_a, i(n), i(m), i(k), &alpha, B, i(ldb),
                                      stride_b, A, i(lda), stride_a, &beta, C, i(n), m * n,
                                      i(count));
  }
}

xdev_status_t* kernel_batch_mat_mul_v2(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_BatchMatMulV2;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(2)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kNumbers)) return s;
    const xdev_tensor_t& x = call.input(0);
    const xdev_tensor_t& y = call.input(1);
    const xdev_tensor_t& c = call.output();
    if (x.rank < 2 || y.rank < 2 || c.rank != (x.rank > y.rank ? x.rank : y.rank)) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: x and y need rank >= 2 and the output their larger rank, not %" PRId32
                         ", %" PRId32 " and %" PRId32,
                         kOp, x.rank, y.rank, c.rank);
    }
    const xdev_attr_t* ax_attr = find_attr(raw, XDEV_ATTR_NAME_adj_x, XDEV_ATTR_BOOL);
    const xdev_attr_t* ay_attr = find_attr(raw, XDEV_ATTR_NAME_adj_y, XDEV_ATTR_BOOL);
    const bool ax = ax_attr != nullptr && ax_attr->value.b != 0;
    const bool ay = ay_attr != nullptr && ay_attr->value.b != 0;
    const xdev_tensor_t a = matrix_of(x), b = matrix_of(y), cm = matrix_of(c);
    const int64_t m = a.shape[ax ? 1 : 0], k = a.shape[ax ? 0 : 1];
    const int64_t kb = b.shape[ay ? 1 : 0], n = b.shape[ay ? 0 : 1];
    Batches batches;
    if (k != kb || cm.shape[0] != m || cm.shape[1] != n || !batches.set(x, y, c)) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: op(x) is [%" PRId64 ", %" PRId64 "], op(y) [%" PRId64 ", %" PRId64
                         "], the output [%" PRId64 ", %" PRId64
                         "] (or the batch axes do not broadcast to the output's)",
                         kOp, m, k, kb, n, cm.shape[0], cm.shape[1]);
    }
    if (batches.count == 0 || m == 0 || n == 0) return nullptr;
    void* c_ptr = data_of_output(c);
    const size_t size = itemsize(c.dtype);
    if (k == 0) {  // empty sums: zeros
      return call.launched(cudaMemsetAsync(c_ptr, 0,
                                           static_cast<size_t>(batches.count * m * n) * size,
                                           call.cuda_stream()),
                           "cudaMemsetAsync");
    }
    const MatrixOperand ma = matrix_operand(a);
    const MatrixOperand mb = matrix_operand(b);
    if (!ma.ok || !mb.ok) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the matrices of input %s are neither row- nor column-major", kOp,
                         ma.ok ? "y" : "x");
    }
    const auto* x_base = static_cast<const char*>(data_of(x));
    const auto* y_base = static_cast<const char*>(data_of(y));
    auto* c_base = static_cast<char*>(c_ptr);
    const auto matrix_bytes = static_cast<int64_t>(size) * m * n;

    if (c.dtype == XDEV_DTYPE_INT32 || c.dtype == XDEV_DTYPE_INT64) {
      int64_t ar, ac, br, bc;
      operand_strides(ma, ax, &ar, &ac);
      operand_strides(mb, ay, &br, &bc);
      for (int64_t i = 0; i < batches.count; ++i) {
        if (xdev_status_t* s = call.launched(launch_matmul_int(
                c.dtype, m, n, k, x_base + batches.offset(0, i) * static_cast<int64_t>(size), ar,
                ac, y_base + batches.offset(1, i) * static_cast<int64_t>(size), br, bc,
                c_base + i * matrix_bytes, call.cuda_stream()))) {
          return s;
        }
      }
      return nullptr;
    }

    // Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ (ops.cpp's
    // MatMul): B first, the flag flipped for column-major storage.
    const Blas* blas = nullptr;
    cublasHandle_t handle = nullptr;
    if (xdev_status_t* s = blas_for_call(call, &blas, &handle)) return s;
    const cublasOperation_t op_b = (ay != mb.column_major) ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_a = (ax != ma.column_major) ? CUBLAS_OP_T : CUBLAS_OP_N;
    constexpr int64_t kIntMax = std::numeric_limits<int>::max();
    int64_t stride_x = 0, stride_y = 0;
    const bool one_call = batches.uniform(0, &stride_x) && batches.uniform(1, &stride_y) &&
                          m <= kIntMax && n <= kIntMax && k <= kIntMax && ma.ld <= kIntMax &&
                          mb.ld <= kIntMax && batches.count <= kIntMax;
    // Otherwise a matrix at a time, through ops.cpp's product (64-bit past INT_MAX).
    if (!one_call) {
      for (int64_t i = 0; i < batches.count; ++i) {
        const RowMajor a_i{x_base + batches.offset(0, i) * static_cast<int64_t>(size), ma.ld,
                           ax != ma.column_major};
        const RowMajor b_i{y_base + batches.offset(1, i) * static_cast<int64_t>(size), mb.ld,
                           ay != mb.column_major};
        if (xdev_status_t* s = row_major_gemm(call, blas, handle, c.dtype, m, n, k, a_i, b_i, 0.0,
                                              c_base + i * matrix_bytes, n)) {
          return s;
        }
      }
      return nullptr;
    }
    const cublasStatus_t status =
        c.dtype == XDEV_DTYPE_FLOAT32
            ? gemm_batched<float>(*blas, handle, op_b, op_a, n, m, k,
                                  reinterpret_cast<const float*>(y_base), mb.ld, stride_y,
                                  reinterpret_cast<const float*>(x_base), ma.ld, stride_x,
                                  reinterpret_cast<float*>(c_base), batches.count)
            : gemm_batched<double>(*blas, handle, op_b, op_a, n, m, k,
                                   reinterpret_cast<const double*>(y_base), mb.ld, stride_y,
                                   reinterpret_cast<const double*>(x_base), ma.ld, stride_x,
                                   reinterpret_cast<double*>(c_base), batches.count);
    if (status != CUBLAS_STATUS_SUCCESS) {
      (void)cudaGetLastError();
      return g_host.fail(
          call.host(),
          status == CUBLAS_STATUS_ALLOC_FAILED ? XDEV_STATUS_OUT_OF_MEMORY : XDEV_STATUS_INTERNAL,
          "%s: cuBLAS strided batched GEMM of %" PRId64 " matrices [%" PRId64 ", %" PRId64
          "] x [%" PRId64 ", %" PRId64 "] on cuda device %d failed: %s",
          kOp, batches.count, m, k, k, n, call.ordinal(), cublas_status_name(status));
    }
    return nullptr;
  });
}

// The shapes fit: the output is tensor's shape, indices [..., D] with D <=
// rank, updates indices[:-1] + tensor[D:].
bool scatter_shapes_fit(const xdev_tensor_t& tensor, const xdev_tensor_t& indices,
                        const xdev_tensor_t& updates, const xdev_tensor_t& out) {
  if (out.rank != tensor.rank || indices.rank < 1) return false;
  for (int32_t d = 0; d < tensor.rank; ++d) {
    if (out.shape[d] != tensor.shape[d]) return false;
  }
  const int64_t depth = indices.shape[indices.rank - 1];
  if (depth > tensor.rank || updates.rank != indices.rank - 1 + tensor.rank - depth) return false;
  for (int32_t u = 0; u < updates.rank; ++u) {
    const int64_t want = u + 1 < indices.rank ? indices.shape[u]
                                              : tensor.shape[depth + u - (indices.rank - 1)];
    if (updates.shape[u] != want) return false;
  }
  return true;
}

xdev_status_t* kernel_tensor_scatter_add(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_TensorScatterAdd;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(3)) return s;
    const xdev_tensor_t& tensor = call.input(0);
    const xdev_tensor_t& indices = call.input(1);
    const xdev_tensor_t& updates = call.input(2);
    const xdev_tensor_t& out = call.output();
    if (!in_mask(kNumbers, tensor.dtype) || updates.dtype != tensor.dtype ||
        out.dtype != tensor.dtype) {
      return call.bad_dtype(out.dtype);
    }
    if (!in_mask(kInt32 | kInt64, indices.dtype)) return call.bad_dtype(indices.dtype);
    if (!is_contiguous(tensor) || !is_contiguous(indices) || !is_contiguous(updates)) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the inputs must be contiguous (the op table says so)", kOp);
    }
    if (!scatter_shapes_fit(tensor, indices, updates, out)) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the shapes of tensor (rank %" PRId32 "), indices (rank %" PRId32
                         ") and updates (rank %" PRId32
                         ") do not fit (updates: indices[:-1] + tensor[D:]), or the output is "
                         "not tensor's shape",
                         kOp, tensor.rank, indices.rank, updates.rank);
    }
    ScatterLayout l;
    l.depth = static_cast<int32_t>(indices.shape[indices.rank - 1]);
    l.rows = 1;
    for (int32_t d = 0; d + 1 < indices.rank; ++d) l.rows *= indices.shape[d];
    l.inner = 1;
    for (int32_t d = 0; d < tensor.rank; ++d) {
      if (d < l.depth) l.dims[d] = tensor.shape[d];
      else l.inner *= tensor.shape[d];
    }
    // docs/ops.md: an index out of range is an error, reported before any
    // write. The indices come to the host (after the work before them on
    // the stream) and are checked there.
    std::vector<unsigned char> host;
    if (xdev_status_t* s = indices_to_host(call, indices, host)) return s;
    int64_t value = 0;
    const int64_t bad = first_bad_index_row(host.data(), indices.dtype, l.rows, l.depth, l.dims, &value);
    if (bad >= 0) {
      const int32_t d = static_cast<int32_t>(bad % l.depth);
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: index %" PRId64 " (indices element %" PRId64 ", position %" PRId32
                         " of index row %" PRId64 ") is out of range [0, %" PRId64
                         ") for axis %" PRId32 " of tensor",
                         kOp, value, bad, d, bad / l.depth, l.dims[d], d);
    }
    const int64_t total = element_count(out);
    if (total == 0) return nullptr;
    if (xdev_status_t* s = call.launched(
            cudaMemcpyAsync(data_of_output(out), data_of(tensor),
                            static_cast<size_t>(total) * itemsize(out.dtype),
                            cudaMemcpyDeviceToDevice, call.cuda_stream()),
            "copying the tensor into the output")) {
      return s;
    }
    return call.launched(launch_scatter_add(out.dtype, indices.dtype, l, data_of(indices),
                                            data_of(updates), data_of_output(out),
                                            call.cuda_stream()));
  });
}

using ph::kernel_info;

constexpr xdev_kernel_info_t kBatchedKernels[] = {
    kernel_info(XDEV_OP_BatchMatMulV2, kNumbers, kNumbers, &kernel_batch_mat_mul_v2),
    // Looked up by the tensor's dtype; the indices int32 or int64.
    kernel_info(XDEV_OP_TensorScatterAdd, kNumbers, kNumbers, &kernel_tensor_scatter_add),
};

}  // namespace

KernelTable batched_kernels() noexcept {
  return {kBatchedKernels, std::size(kBatchedKernels)};
}

}  // namespace xdev::cuda
