// MatMul: out[M, N] = op(a) · op(b), op(x) = x or xᵀ (transpose_a/_b).
//
// Paths:
//  - tiny (M·N·K <= kTinyMatMulVolume = 192) and all integer products: plain
//    loops. A BLAS call costs more than the arithmetic of, say, 2×3·3×2;
//    integer products have no BLAS. Large integer products split their rows
//    over oneTBB's threads.
//  - float32/float64, up to kTiledMatMulFlops: one single-threaded
//    cblas_sgemm/dgemm in the calling thread. OpenBLAS is loaded here, at
//    the first product that needs it (blas.hpp); if it cannot be loaded the
//    plain loops run instead.
//  - larger: the output is cut into tiles (two per thread, one from 2^31
//    flops) and each oneTBB task runs single-threaded OpenBLAS on its tile
//    (the plugin set OpenBLAS to one thread at initialize; README.md
//    "Threads"). If the user chose more OpenBLAS threads
//    (OPENBLAS_NUM_THREADS), one call lets OpenBLAS split it.
//
// Inputs are contiguous (docs/ops.md). A view whose inner dim has stride 1
// and whose outer stride is at least the inner size is accepted too (a BLAS
// leading dimension), as is its transpose (the transpose flag flips).
#include <xdev/op_names.h>
#include <oneapi/tbb/blocked_range.h>
#include "parallel.hpp"
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <type_traits>
#include <utility>

#include "blas.hpp"
#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/rows.hpp"

namespace xdev::cpu {
namespace {

// M·N·K at or below which a plain loop beats a BLAS call. Measured on the
// 2-core reference machine (single thread, float32, Debian's OpenBLAS with
// the Prescott kernels it picks there; README.md): the dot product loop took
// 13 ns for 2x2x3, 61 ns for 4x4x8 and 121 ns for 2x2x64, cblas_sgemm 93,
// 107 and 158 ns; at 8x8x8 BLAS won (150 vs 213 ns).
constexpr int64_t kTinyMatMulVolume = 192;
// 2·M·N·K above which the product is tiled over oneTBB's threads.
constexpr int64_t kTiledMatMulFlops = int64_t{1} << 22;  // ~ n = 128
// Smallest tile edge (rows or columns) of a tiled product.
constexpr int64_t kMinTileEdge = 64;
// 2·M·N·K from which a tiled product gets one tile per thread instead of
// two. Every tile packs its own panels of op(a) and op(b) (OpenBLAS's own
// threads share them), so fewer tiles pack less: on the 2-core reference
// machine n = 1024 and 2048 ran 4-13 % faster with one tile per thread in two
// interleaved runs (OpenBLAS's AVX-512 kernels; no difference with its SSE3
// ones). Smaller products keep two per thread, so that work can move off a
// thread that is held up.
constexpr int64_t kOneTilePerThreadFlops = int64_t{1} << 31;  // n = 1024

// op(x) as (pointer, row stride, column stride) in elements: element (i, j)
// of op(x) is at p[i * rs + j * cs]. For row-major BLAS: op(x) is either
// stored row-major (cs == 1: no transpose, leading dimension rs) or
// column-major (rs == 1: transpose, leading dimension cs).
template <typename T>
struct Operand {
  const T* p;
  int64_t rs;
  int64_t cs;
  bool trans;
  int64_t ld;
};

// Describes op(x) for x of rank 2, `t` = transpose flag. Returns false when
// no BLAS leading dimension describes it (not a dense matrix).
template <typename T>
bool operand(const xdev_tensor_t& x, bool t, Operand<T>* out) noexcept;

// The same for the matrix at `p` whose two axes have sizes d[0], d[1] and
// strides st[0], st[1] (the last two axes of a batched operand).
template <typename T>
bool operand_at(const T* p, const int64_t* d, const int64_t* st, bool t,
                Operand<T>* out) noexcept {
  const int64_t rows = d[t ? 1 : 0], cols = d[t ? 0 : 1];
  int64_t rs = st[t ? 1 : 0], cs = st[t ? 0 : 1];
  // The stride of a dim of size 1 is never used: pick one BLAS accepts.
  if (cols == 1) cs = 1;
  if (rows == 1) rs = std::max<int64_t>(cols, 1);
  out->p = p;
  out->rs = rs;
  out->cs = cs;
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) {
    out->trans = false;
    out->ld = rs;
    return true;
  }
  if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) {
    out->trans = true;
    out->ld = cs;
    return true;
  }
  return false;
}

template <typename T>
bool operand(const xdev_tensor_t& x, bool t, Operand<T>* out) noexcept {
  return operand_at(data_of<const T>(x), x.shape, x.strides, t, out);
}

// Plain loops. C is dense M×N.
template <typename T>
void matmul_loop(const Operand<T>& a, const Operand<T>& b, T* c, int64_t m, int64_t n, int64_t k,
                 int64_t row_begin, int64_t row_end) noexcept {
  // Integers accumulate in the unsigned type: wrapping, no undefined behaviour.
  using Acc = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>,
                                          std::type_identity<T>>::type;
  if (b.cs == 1 && n >= 8 && m * n * k > kTinyMatMulVolume) {
    // i-k-j: the inner loop runs along rows of op(b) and c (vectorizable);
    // for tiny products the vector loop's set-up costs more than it saves.
    for (int64_t i = row_begin; i < row_end; ++i) {
      Acc* __restrict ci = reinterpret_cast<Acc*>(c + i * n);
      for (int64_t j = 0; j < n; ++j) ci[j] = 0;
      for (int64_t p = 0; p < k; ++p) {
        const Acc aip = static_cast<Acc>(a.p[i * a.rs + p * a.cs]);
        const Acc* __restrict bp = reinterpret_cast<const Acc*>(b.p + p * b.rs);
        for (int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
      }
    }
  } else {
    // i-j-p dot products: tiny products, and op(b) stored column-major.
    // Pointers step by the strides: no index arithmetic in the inner loop.
    for (int64_t i = row_begin; i < row_end; ++i) {
      const T* const ai = a.p + i * a.rs;
      for (int64_t j = 0; j < n; ++j) {
        const T* pa = ai;
        const T* pb = b.p + j * b.cs;
        Acc sum = 0;
        for (int64_t p = 0; p < k; ++p, pa += a.cs, pb += b.rs) {
          sum += static_cast<Acc>(*pa) * static_cast<Acc>(*pb);
        }
        c[i * n + j] = static_cast<T>(sum);
      }
    }
  }
  (void)m;
}

template <typename T>
void gemm(const BlasApi& lib, const Operand<T>& a, const Operand<T>& b, T* c, int64_t m,
          int64_t n, int64_t k, int64_t ldc) noexcept {
  const auto ta = a.trans ? CblasTrans : CblasNoTrans;
  const auto tb = b.trans ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    lib.sgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, a.p, static_cast<int>(a.ld), b.p, static_cast<int>(b.ld),
                0.0f, c, static_cast<int>(ldc));
  } else {
    lib.dgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0, a.p, static_cast<int>(a.ld), b.p, static_cast<int>(b.ld),
                0.0, c, static_cast<int>(ldc));
  }
}

// op(x) restricted to rows [r0, ..) and columns [c0, ..).
template <typename T>
Operand<T> sub(const Operand<T>& x, int64_t r0, int64_t c0) noexcept {
  Operand<T> s = x;
  s.p = x.p + r0 * x.rs + c0 * x.cs;
  return s;
}

// Writes blas()'s log lines to the log of the call's plugin instance.
void log_to_call(void* call, xdev_log_level_t level, const char* message) {
  kernel_log(static_cast<const xdev_kernel_call_t*>(call), level, "%s", message);
}

template <typename T>
void matmul(const xdev_kernel_call_t* call, const Operand<T>& a, const Operand<T>& b, T* c,
            int64_t m, int64_t n, int64_t k) {
  const int64_t volume = m * n * k;
  const bool fits_int =
      m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && a.ld <= INT_MAX && b.ld <= INT_MAX;
  const BlasApi* api = nullptr;
  if constexpr (std::is_floating_point_v<T>) {
    if (volume > kTinyMatMulVolume && fits_int) {
      api = blas(&log_to_call, const_cast<xdev_kernel_call_t*>(call));
    }
  }
  if (api != nullptr) {
    if constexpr (std::is_floating_point_v<T>) {
      const BlasApi& lib = *api;
      const int threads = tbb::this_task_arena::max_concurrency();
      if (2 * volume <= kTiledMatMulFlops || threads <= 1 || lib.get_num_threads() > 1) {
        gemm(lib, a, b, c, m, n, k, n);
        return;
      }
      // Tiles: split the longer side of the output first, into one or two
      // tiles per thread, each at least kMinTileEdge wide.
      const int64_t per_thread = 2 * volume >= kOneTilePerThreadFlops ? 1 : 2;
      const int64_t want = per_thread * int64_t{threads};
      int64_t row_tiles = 1, col_tiles = 1;
      while (row_tiles * col_tiles < want) {
        const bool rows_can = m / (row_tiles * 2) >= kMinTileEdge;
        const bool cols_can = n / (col_tiles * 2) >= kMinTileEdge;
        if (rows_can && (m / row_tiles >= n / col_tiles || !cols_can)) {
          row_tiles *= 2;
        } else if (cols_can) {
          col_tiles *= 2;
        } else {
          break;
        }
      }
      const int64_t tiles = row_tiles * col_tiles;
      if (tiles == 1) {
        gemm(lib, a, b, c, m, n, k, n);
        return;
      }
      cpu::parallel_for(
          tbb::blocked_range<int64_t>(0, tiles, 1),
          [&](const tbb::blocked_range<int64_t>& r) {
            for (int64_t t = r.begin(); t < r.end(); ++t) {
              const int64_t ti = t / col_tiles, tj = t % col_tiles;
              const int64_t r0 = m * ti / row_tiles, r1 = m * (ti + 1) / row_tiles;
              const int64_t c0 = n * tj / col_tiles, c1 = n * (tj + 1) / col_tiles;
              gemm(lib, sub(a, r0, 0), sub(b, 0, c0), c + r0 * n + c0, r1 - r0, c1 - c0, k,
                   n);
            }
          },
          tbb::simple_partitioner{});
      return;
    }
  }
  if (volume < kParallelMinElements * 4 || m == 1) {
    matmul_loop(a, b, c, m, n, k, 0, m);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, (kParallelMinElements * 4) / (n * k));
  cpu::parallel_for(tbb::blocked_range<int64_t>(0, m, grain),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      matmul_loop(a, b, c, m, n, k, r.begin(), r.end());
                    });
}

// The common call checked inline and cheaply (this runs for every tiny
// product): two inputs and an output, present, of one dtype of `mask`, rank
// 2, with data. False: take check_call(), which reports what is wrong.
bool plain_matmul_call(const xdev_kernel_call_t* call, uint64_t mask) noexcept {
  if (call == nullptr || call->struct_size < XDEV_KERNEL_CALL_STRUCT_SIZE_1_0 ||
      call->input_count != 2 || call->output_count != 1 || call->inputs == nullptr ||
      call->outputs == nullptr || (call->attr_count > 0 && call->attrs == nullptr)) {
    return false;
  }
  const xdev_tensor_t* t[3] = {call->inputs[0], call->inputs[1], call->outputs[0]};
  for (const xdev_tensor_t* x : t) {
    if (x == nullptr || x->rank != 2 || x->shape == nullptr || x->strides == nullptr ||
        x->shape[0] < 0 || x->shape[1] < 0 ||
        (x->data == nullptr && x->shape[0] * x->shape[1] > 0)) {
      return false;
    }
  }
  return t[0]->dtype == t[2]->dtype && t[1]->dtype == t[2]->dtype && in_mask(t[2]->dtype, mask) &&
         is_contiguous(*t[2]);
}

}  // namespace

xdev_status_t* kernel_matmul(void*, const xdev_kernel_call_t* call) noexcept {
  xdev_dtype_t dtype;
  if (plain_matmul_call(call, kNumeric)) {
    dtype = call->outputs[0]->dtype;
  } else {
    if (xdev_status_t* s = check_call(call, 2)) return s;
    if (xdev_status_t* s = check_dtypes(call, kNumeric, &dtype)) return s;
  }
  // One pass over the attributes (this runs for every tiny product too).
  bool ta = false, tb = false;
  for (uint32_t i = 0; i < call->attr_count; ++i) {
    const xdev_attr_t& a = call->attrs[i];
    const bool is_a = name_is(a.name, XDEV_ATTR_NAME_transpose_a);
    const bool is_b = !is_a && name_is(a.name, XDEV_ATTR_NAME_transpose_b);
    if (!is_a && !is_b) continue;  // not ours: ignored (docs/ops.md)
    if (a.kind != XDEV_ATTR_BOOL && a.kind != XDEV_ATTR_INT) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "MatMul: the attribute '%s' must be a bool (kind %d given)", a.name,
                         static_cast<int>(a.kind));
    }
    (is_a ? ta : tb) = a.kind == XDEV_ATTR_BOOL ? a.value.b != 0 : a.value.i != 0;
  }
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& y = *call->inputs[1];
  const xdev_tensor_t& out = *call->outputs[0];
  if (x.rank != 2 || y.rank != 2 || out.rank != 2) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "MatMul: a, b and the output must have rank 2, not %" PRId32 ", %" PRId32
                       " and %" PRId32,
                       x.rank, y.rank, out.rank);
  }
  const int64_t m = x.shape[ta ? 1 : 0], k = x.shape[ta ? 0 : 1];
  const int64_t kb = y.shape[tb ? 1 : 0], n = y.shape[tb ? 0 : 1];
  if (k != kb || out.shape[0] != m || out.shape[1] != n) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "MatMul: op(a) is %" PRId64 "x%" PRId64 ", op(b) %" PRId64 "x%" PRId64
                       ", the output %" PRId64 "x%" PRId64,
                       m, k, kb, n, out.shape[0], out.shape[1]);
  }
  try {
    if (m == 0 || n == 0) return nullptr;
    auto run = [&](auto zero) -> xdev_status_t* {
      using T = decltype(zero);
      if (k == 0) {  // empty inputs: the output is zeros
        std::fill(data_of<T>(out), data_of<T>(out) + m * n, T{0});
        return nullptr;
      }
      Operand<T> a, b;
      if (!operand(x, ta, &a) || !operand(y, tb, &b)) {
        return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                           "MatMul: inputs must be contiguous (a row-major or column-major "
                           "matrix)");
      }
      matmul(call, a, b, data_of<T>(out), m, n, k);
      return nullptr;
    };
    xdev_status_t* status = nullptr;
    visit_dtypes<kNumeric>(dtype, [&](auto zero) { status = run(zero); });
    return status;
  } catch (...) {
    return kernel_unexpected(call);
  }
}

namespace {

// Where each matrix of a batched product starts: the output's batch axes
// (all but the last two) unravelled, each input's batch strides applied (0
// along an axis it broadcasts: size 1 or absent).
struct BatchLayout {
  int32_t axes = 0;
  int64_t dims[XDEV_MAX_RANK] = {};
  int64_t x_strides[XDEV_MAX_RANK] = {};
  int64_t y_strides[XDEV_MAX_RANK] = {};
  int64_t count = 1;

  void offsets(int64_t b, int64_t* x_off, int64_t* y_off) const noexcept {
    int64_t xo = 0, yo = 0;
    for (int32_t i = axes; i-- > 0;) {
      const int64_t at = b % dims[i];
      b /= dims[i];
      xo += at * x_strides[i];
      yo += at * y_strides[i];
    }
    *x_off = xo;
    *y_off = yo;
  }
};

// False when an input's batch axis is neither the output's size nor 1.
bool batch_layout(const xdev_tensor_t& x, const xdev_tensor_t& y, const xdev_tensor_t& out,
                  BatchLayout* layout) noexcept {
  layout->axes = out.rank - 2;
  for (int32_t i = 0; i < layout->axes; ++i) {
    const int64_t d = out.shape[i];
    layout->dims[i] = d;
    layout->count *= d;
    const int32_t from_end = layout->axes - i;  // >= 1
    for (const auto& [t, strides] : {std::pair{&x, layout->x_strides}, {&y, layout->y_strides}}) {
      const int32_t j = t->rank - 2 - from_end;
      const int64_t dt = j >= 0 ? t->shape[j] : 1;
      if (dt != d && dt != 1) return false;
      strides[i] = j >= 0 && dt != 1 ? t->strides[j] : 0;
    }
  }
  return true;
}

}  // namespace

// BatchMatMulV2: out[..., M, N] = op(x)[..., M, K] · op(y)[..., K, N], the
// batch axes broadcast. Each matrix is one MatMul as above (BLAS, tiles or
// loops, integers in wrapping arithmetic); the matrices run in parallel over
// oneTBB's threads, several per task when they are small.
xdev_status_t* kernel_batch_mat_mul_v2(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_adj_x, XDEV_ATTR_NAME_adj_y, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 2, kNumeric, kKnown, false, &dtype)) return s;
  bool ax = false, ay = false;
  if (xdev_status_t* s = attr_bool(call, XDEV_ATTR_NAME_adj_x, false, &ax)) return s;
  if (xdev_status_t* s = attr_bool(call, XDEV_ATTR_NAME_adj_y, false, &ay)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& y = *call->inputs[1];
  const xdev_tensor_t& out = *call->outputs[0];
  if (x.rank < 2 || y.rank < 2 || out.rank != std::max(x.rank, y.rank)) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "BatchMatMulV2: x and y need rank >= 2 and the output their larger "
                       "rank, not %" PRId32 ", %" PRId32 " and %" PRId32,
                       x.rank, y.rank, out.rank);
  }
  const int64_t m = x.shape[x.rank - (ax ? 1 : 2)], k = x.shape[x.rank - (ax ? 2 : 1)];
  const int64_t ky = y.shape[y.rank - (ay ? 1 : 2)], n = y.shape[y.rank - (ay ? 2 : 1)];
  BatchLayout layout;
  if (k != ky || out.shape[out.rank - 2] != m || out.shape[out.rank - 1] != n ||
      !batch_layout(x, y, out, &layout)) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "BatchMatMulV2: op(x) is %" PRId64 "x%" PRId64 ", op(y) %" PRId64
                       "x%" PRId64 ", the output %" PRId64 "x%" PRId64
                       " (or the batch axes do not broadcast to the output's)",
                       m, k, ky, n, out.shape[out.rank - 2], out.shape[out.rank - 1]);
  }
  const int64_t batches = layout.count;
  if (batches == 0 || m == 0 || n == 0) return nullptr;
  auto run = [&](auto zero) -> xdev_status_t* {
    using T = decltype(zero);
    T* const c = data_of<T>(out);
    const int64_t per_matrix = m * n;
    if (k == 0) {  // empty inputs: the output is zeros
      for_rows(batches, per_matrix, [&](int64_t b) {
        std::fill(c + b * per_matrix, c + (b + 1) * per_matrix, T{0});
      });
      return nullptr;
    }
    Operand<T> a0, b0;
    if (!operand_at(data_of<const T>(x), x.shape + x.rank - 2, x.strides + x.rank - 2, ax, &a0) ||
        !operand_at(data_of<const T>(y), y.shape + y.rank - 2, y.strides + y.rank - 2, ay, &b0)) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "BatchMatMulV2: inputs must be contiguous (each matrix row-major or "
                         "column-major)");
    }
    auto product = [&](int64_t b) {
      int64_t xo = 0, yo = 0;
      layout.offsets(b, &xo, &yo);
      Operand<T> a = a0, bb = b0;
      a.p += xo;
      bb.p += yo;
      matmul(call, a, bb, c + b * per_matrix, m, n, k);
    };
    const int64_t volume = m * n * k;
    if (batches == 1 || batches * volume < kParallelMinElements * 4) {
      for (int64_t b = 0; b < batches; ++b) product(b);
      return nullptr;
    }
    // Several small matrices per task; a large one alone (its own product
    // may split further over the threads).
    const int64_t grain = std::max<int64_t>(1, (kParallelMinElements * 4) / volume);
    cpu::parallel_for(tbb::blocked_range<int64_t>(0, batches, grain),
                      [&](const tbb::blocked_range<int64_t>& r) {
                        for (int64_t b = r.begin(); b < r.end(); ++b) product(b);
                      });
    return nullptr;
  };
  try {
    xdev_status_t* status = nullptr;
    visit_dtypes<kNumeric>(dtype, [&](auto zero) { status = run(zero); });
    return status;
  } catch (...) {
    return kernel_unexpected(call);
  }
}

}  // namespace xdev::cpu
