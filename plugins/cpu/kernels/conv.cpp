// Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter (docs/ops.md) as matrix
// products: im2col copies the window taps of a block of output positions of
// one image into a matrix [rows, KH * KW * Cin] (zeros for padding), whose
// product with the filter, row-major [KH * KW * Cin, Cout] as TensorFlow
// stores it (HWIO), is the output's rows (NHWC) or columns (NCHW).
// Gradients: the input's is the product of out_backprop with the filter's
// transpose scattered back by col2im; the filter's the sum over images of
// the columns' transpose times out_backprop.
//
// float32 NHWC Conv2D (and its input's gradient at stride 1) takes the direct
// kernel of conv_direct.hpp where it applies (AVX-512, output channels a
// multiple of 16). Products go to OpenBLAS (blas.hpp) in the calling oneTBB
// task, else to a plain loop. Work is split with cpu::parallel_for over
// (image, block of output rows) for Conv2D, over images for the input's
// gradient (col2im of one image adds into its own rows), and over chunks of
// images, each with its own partial filter, for the filter's gradient.
// Scratch: each task holds one column block of at most kColumnBlockElements
// elements (or one row when a row alone is larger), so memory does not grow
// with the image.
#include <xdev/op_names.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "blas.hpp"
#include "kernels/common.hpp"
#include "kernels/conv_direct.hpp"
#include "kernels/kernels.hpp"
#include "kernels/windows.hpp"
#include "parallel.hpp"

namespace xdev::cpu {
namespace {

// Elements of one task's column block: 512 KiB of floats (1 MiB of
// doubles), which im2col writes and OpenBLAS packs again while it is in the
// core's L2 cache (a ResNet 3×3 layer of 64 channels: 227 rows of 576).
// (1 Mi elements measured 2 % slower there, bench/torch Conv2D.)
constexpr int64_t kColumnBlockElements = int64_t{1} << 17;

void log_blas(void* call, xdev_log_level_t level, const char* message) {
  kernel_log(static_cast<const xdev_kernel_call_t*>(call), level, "%s", message);
}

// A row-major matrix operand: op(x)[i][j] = p[i * ld + j], or p[j * ld + i]
// when transposed.
template <typename T>
struct Mat {
  const T* p;
  int64_t ld;
  bool trans;
  T at(int64_t i, int64_t j) const noexcept { return trans ? p[j * ld + i] : p[i * ld + j]; }
};

// c[m, n] (row stride ldc) = beta * c + op(a)[m, k] · op(b)[k, n].
template <typename T>
void gemm(const BlasApi* lib, int64_t m, int64_t n, int64_t k, const Mat<T>& a, const Mat<T>& b,
          T beta, T* c, int64_t ldc) noexcept {
  if (m == 0 || n == 0) return;
  const bool fits = m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && a.ld <= INT_MAX &&
                    b.ld <= INT_MAX && ldc <= INT_MAX;
  if (lib != nullptr && fits && k > 0) {
    const auto ta = a.trans ? CblasTrans : CblasNoTrans;
    const auto tb = b.trans ? CblasTrans : CblasNoTrans;
    const auto mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    if constexpr (std::is_same_v<T, float>) {
      lib->sgemm(CblasRowMajor, ta, tb, mi, ni, ki, 1.0f, a.p, static_cast<int>(a.ld), b.p,
                 static_cast<int>(b.ld), beta, c, static_cast<int>(ldc));
    } else {
      lib->dgemm(CblasRowMajor, ta, tb, mi, ni, ki, 1.0, a.p, static_cast<int>(a.ld), b.p,
                 static_cast<int>(b.ld), beta, c, static_cast<int>(ldc));
    }
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a.at(i, p)) * static_cast<double>(b.at(p, j));
      }
      T& out = c[i * ldc + j];
      out = static_cast<T>(beta == T(0) ? sum : static_cast<double>(beta * out) + sum);
    }
  }
}

// The sizes of a call: columns of im2col (KH * KW * Cin), output positions
// per image, output channels, and the rows of one column block.
struct ConvSizes {
  int64_t width, positions, cout, rows;
  explicit ConvSizes(const WindowGeometry& g)
      : width(g.taps() * g.in.c), positions(g.positions()), cout(g.out.c),
        rows(std::max<int64_t>(1, kColumnBlockElements / std::max<int64_t>(1, width))) {}
  // f(p0, p1) for the blocks of rows of one image.
  template <typename F>
  void for_blocks(const F& f) const {
    for (int64_t p0 = 0; p0 < positions; p0 += rows) f(p0, std::min(positions, p0 + rows));
  }
};

// body(task, column block) for tasks [0, count), split over oneTBB's
// threads; one column block per range of tasks.
template <typename T, typename Body>
void for_tasks(int64_t count, const ConvSizes& z, const Body& body) {
  cpu::parallel_for(
      tbb::blocked_range<int64_t>(0, count, 1),
      [&](const tbb::blocked_range<int64_t>& range) {
        // Not zeroed: every use writes the rows it reads (im2col, or a
        // product with beta 0).
        const std::unique_ptr<T[]> col(
            new T[static_cast<size_t>(std::min(z.rows, z.positions) * z.width)]);
        for (int64_t t = range.begin(); t < range.end(); ++t) body(t, col.get());
      },
      tbb::simple_partitioner{});
}

// im2col of positions [p0, p1) of image b into col [p1 - p0, K]: each tap's
// Cin channels, one copy where they are dense (NHWC), zeros in the padding.
template <typename T>
void im2col(const WindowGeometry& g, const T* x, int64_t b, int64_t p0, int64_t p1, T* col) {
  const int64_t width = g.taps() * g.in.c, channels = g.in.c, step = g.in.step_c;
  for_taps(g, b, p0, p1, [&](int64_t r, int64_t column, int64_t at) {
    T* to = col + r * width + column;
    if (at < 0) {
      std::fill(to, to + channels, T(0));
    } else if (step == 1) {
      std::memcpy(to, x + at, static_cast<size_t>(channels) * sizeof(T));
    } else {
      for (int64_t ci = 0; ci < channels; ++ci) to[ci] = x[at + ci * step];
    }
  });
}

// out_backprop's rows [p0, p1) of image b as op(a) [rows, Cout].
template <typename T>
Mat<T> out_rows(const WindowGeometry& g, const T* dy, int64_t b, int64_t p0) {
  if (g.nchw) return {dy + b * g.out.step_n + p0, g.positions(), true};
  return {dy + b * g.out.step_n + p0 * g.out.c, g.out.c, false};
}

// The checks every kernel of the three starts with: two inputs of one float
// dtype, one output, the known attributes; then the windows over `image`
// (input or output) giving `out_image`, and a filter [KH, KW, Cin, Cout]
// matching the images' channels.
xdev_status_t* conv_call(const xdev_kernel_call_t* call, const char* const* known, int image,
                         int filter, int out_image, WindowGeometry& g, xdev_dtype_t& dtype) {
  if (xdev_status_t* s = check_signature(call, 2, kFloats, known, false, &dtype)) return s;
  auto tensor = [&](int i) -> const xdev_tensor_t& {
    return i < 2 ? *call->inputs[i] : *call->outputs[0];
  };
  for (int i : {0, 1}) {
    if (element_count(tensor(i)) > 0 && !is_contiguous(tensor(i))) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: input %d must be contiguous",
                         window_op(call), i);
    }
  }
  const xdev_tensor_t& f = tensor(filter);
  if (f.rank != 4) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: the filter needs rank 4",
                       window_op(call));
  }
  if (xdev_status_t* s = window_geometry(call, tensor(image), tensor(out_image), f.shape[0],
                                         f.shape[1], g)) {
    return s;
  }
  if (f.shape[2] != g.in.c || f.shape[3] != g.out.c) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: filter [%lld, %lld, %lld, %lld] does not match %lld input and %lld "
                       "output channels",
                       window_op(call), static_cast<long long>(f.shape[0]),
                       static_cast<long long>(f.shape[1]), static_cast<long long>(f.shape[2]),
                       static_cast<long long>(f.shape[3]), static_cast<long long>(g.in.c),
                       static_cast<long long>(g.out.c));
  }
  return nullptr;
}

const BlasApi* blas_for(const xdev_kernel_call_t* call) {
  return blas(&log_blas, const_cast<xdev_kernel_call_t*>(call));
}

constexpr const char* kConvAttrs[] = {XDEV_ATTR_NAME_strides, XDEV_ATTR_NAME_padding, XDEV_ATTR_NAME_dilations, XDEV_ATTR_NAME_data_format, nullptr};

xdev_status_t* conv2d(const xdev_kernel_call_t* call) noexcept {
  WindowGeometry g;
  xdev_dtype_t dtype;
  if (xdev_status_t* s = conv_call(call, kConvAttrs, 0, 1, 2, g, dtype)) return s;
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<const T>(*call->inputs[0]);
    const T* f = data_of<const T>(*call->inputs[1]);
    T* y = data_of<T>(*call->outputs[0]);
    const ConvSizes z(g);
    if (element_count(*call->outputs[0]) == 0) return;
    if (z.width == 0) {  // no input channels: zeros
      std::fill(y, y + element_count(*call->outputs[0]), T(0));
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (conv2d_direct_f32(g, x, f, y)) return;
    }
    const BlasApi* lib = blas_for(call);
    const int64_t blocks = (z.positions + z.rows - 1) / z.rows;
    for_tasks<T>(g.out.n * blocks, z, [&](int64_t t, T* col) {
      const int64_t b = t / blocks, p0 = t % blocks * z.rows;
      const int64_t p1 = std::min(z.positions, p0 + z.rows), n = p1 - p0;
      im2col(g, x, b, p0, p1, col);
      T* out = y + b * g.out.step_n;
      if (g.nchw) {  // [Cout, rows] = filterᵀ · colᵀ
        gemm<T>(lib, z.cout, n, z.width, {f, z.cout, true}, {col, z.width, true}, T(0), out + p0,
                z.positions);
      } else {  // [rows, Cout] = col · filter
        gemm<T>(lib, n, z.cout, z.width, {col, z.width, false}, {f, z.cout, false}, T(0),
                out + p0 * z.cout, z.cout);
      }
    });
  });
}

constexpr const char* kInputGradAttrs[] = {XDEV_ATTR_NAME_input_sizes, XDEV_ATTR_NAME_strides, XDEV_ATTR_NAME_padding, XDEV_ATTR_NAME_dilations,
                                           XDEV_ATTR_NAME_data_format, nullptr};

// inputs: filter, out_backprop; output: the input's gradient.
xdev_status_t* conv2d_backprop_input(const xdev_kernel_call_t* call) noexcept {
  WindowGeometry g;
  xdev_dtype_t dtype;
  if (xdev_status_t* s = conv_call(call, kInputGradAttrs, 2, 0, 1, g, dtype)) return s;
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* f = data_of<const T>(*call->inputs[0]);
    const T* dy = data_of<const T>(*call->inputs[1]);
    T* dx = data_of<T>(*call->outputs[0]);
    const ConvSizes z(g);
    if constexpr (std::is_same_v<T, float>) {
      if (z.width > 0 && z.positions > 0 && g.in.n > 0 &&
          conv2d_backprop_input_direct_f32(g, f, dy, dx)) {
        return;
      }
    }
    std::fill(dx, dx + element_count(*call->outputs[0]), T(0));
    if (z.width == 0 || z.positions == 0 || g.in.n == 0) return;
    const BlasApi* lib = blas_for(call);
    for_tasks<T>(g.in.n, z, [&](int64_t b, T* col) {
      z.for_blocks([&](int64_t p0, int64_t p1) {
        // col [rows, K] = out_backprop rows · filterᵀ, then col2im.
        gemm<T>(lib, p1 - p0, z.width, z.cout, out_rows(g, dy, b, p0), {f, z.cout, true}, T(0),
                col, z.width);
        // col2im: each tap's channels added back where they came from.
        const int64_t channels = g.in.c, step = g.in.step_c;
        for_taps(g, b, p0, p1, [&](int64_t r, int64_t column, int64_t at) {
          if (at < 0) return;
          const T* from = col + r * z.width + column;
          T* to = dx + at;
          if (step == 1) {
            for (int64_t ci = 0; ci < channels; ++ci) to[ci] += from[ci];
          } else {
            for (int64_t ci = 0; ci < channels; ++ci) to[ci * step] += from[ci];
          }
        });
      });
    });
  });
}

constexpr const char* kFilterGradAttrs[] = {XDEV_ATTR_NAME_filter_sizes, XDEV_ATTR_NAME_strides, XDEV_ATTR_NAME_padding, XDEV_ATTR_NAME_dilations,
                                            XDEV_ATTR_NAME_data_format, nullptr};

// inputs: input, out_backprop; output: the filter's gradient.
xdev_status_t* conv2d_backprop_filter(const xdev_kernel_call_t* call) noexcept {
  WindowGeometry g;
  xdev_dtype_t dtype;
  if (xdev_status_t* s = conv_call(call, kFilterGradAttrs, 0, 2, 1, g, dtype)) return s;
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<const T>(*call->inputs[0]);
    const T* dy = data_of<const T>(*call->inputs[1]);
    T* df = data_of<T>(*call->outputs[0]);
    const ConvSizes z(g);
    const int64_t size = z.width * z.cout;
    std::fill(df, df + size, T(0));
    if (size == 0 || z.positions == 0 || g.in.n == 0) return;
    const BlasApi* lib = blas_for(call);
    // Chunks of images, each summed into its own filter (chunk 0: the output).
    const int64_t chunks =
        std::min<int64_t>(g.in.n, std::max(1, tbb::this_task_arena::max_concurrency()));
    std::vector<T> partial(static_cast<size_t>((chunks - 1) * size), T(0));
    for_tasks<T>(chunks, z, [&](int64_t chunk, T* col) {
      T* sum = chunk == 0 ? df : partial.data() + (chunk - 1) * size;
      for (int64_t b = g.in.n * chunk / chunks; b < g.in.n * (chunk + 1) / chunks; ++b) {
        z.for_blocks([&](int64_t p0, int64_t p1) {
          im2col(g, x, b, p0, p1, col);
          // [K, Cout] += colᵀ · out_backprop rows
          gemm<T>(lib, z.width, z.cout, p1 - p0, {col, z.width, true}, out_rows(g, dy, b, p0),
                  T(1), sum, z.cout);
        });
      }
    });
    for (int64_t chunk = 1; chunk < chunks; ++chunk) {
      const T* part = partial.data() + (chunk - 1) * size;
      for (int64_t i = 0; i < size; ++i) df[i] += part[i];
    }
  });
}

}  // namespace

XDEV_CPU_KERNEL(kernel_conv2d, conv2d)
XDEV_CPU_KERNEL(kernel_conv2d_backprop_input, conv2d_backprop_input)
XDEV_CPU_KERNEL(kernel_conv2d_backprop_filter, conv2d_backprop_filter)

}  // namespace xdev::cpu
