// MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad (docs/ops.md): direct loops
// over each window's elements inside the input, in window order (row-major
// over the taps). MaxPool takes the first NaN, else the first maximum;
// MaxPoolGrad routes each window's gradient to that same element. AvgPool
// divides by the number of elements inside the input (SAME's padding is not
// counted), summing in double. Forward ops split the output rows over
// oneTBB's threads (for_rows); the gradients, whose windows may overlap,
// split the images (cpu::parallel_for).
#include <xdev/op_names.h>
#include <oneapi/tbb/blocked_range.h>

#include <algorithm>
#include <cmath>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/rows.hpp"
#include "kernels/windows.hpp"
#include "parallel.hpp"

namespace xdev::cpu {
namespace {

constexpr const char* kPoolAttrs[] = {XDEV_ATTR_NAME_ksize, XDEV_ATTR_NAME_strides, XDEV_ATTR_NAME_padding, XDEV_ATTR_NAME_data_format, nullptr};
constexpr const char* kAvgPoolGradAttrs[] = {XDEV_ATTR_NAME_orig_input_shape, XDEV_ATTR_NAME_ksize, XDEV_ATTR_NAME_strides, XDEV_ATTR_NAME_padding,
                                             XDEV_ATTR_NAME_data_format, nullptr};

// Calls f(input offset) for the elements of window (b, oy, ox), channel ch,
// that lie inside the input, in window order; returns their count.
template <typename F>
int64_t for_window(const WindowGeometry& g, int64_t b, int64_t oy, int64_t ox, int64_t ch,
                   const F& f) {
  const int64_t y0 = oy * g.sy - g.py, x0 = ox * g.sx - g.px;
  const int64_t ky0 = std::max<int64_t>(0, -y0), ky1 = std::min(g.kh, g.in.h - y0);
  const int64_t kx0 = std::max<int64_t>(0, -x0), kx1 = std::min(g.kw, g.in.w - x0);
  for (int64_t ky = ky0; ky < ky1; ++ky) {
    for (int64_t kx = kx0; kx < kx1; ++kx) f(g.in.at(b, y0 + ky, x0 + kx, ch));
  }
  return std::max<int64_t>(0, ky1 - ky0) * std::max<int64_t>(0, kx1 - kx0);
}

// The offset of the first NaN of the window, else of its first maximum (-1:
// an empty window, which SAME and VALID never give).
template <typename T>
int64_t window_max(const WindowGeometry& g, const T* x, int64_t b, int64_t oy, int64_t ox,
                   int64_t ch) {
  int64_t best = -1;
  for_window(g, b, oy, ox, ch, [&](int64_t at) {
    if (best < 0 || (!std::isnan(x[best]) && (std::isnan(x[at]) || x[at] > x[best]))) best = at;
  });
  return best;
}

// Two float tensors of one dtype in, contiguous; windows over `image` giving
// `pooled`, whose channels are the image's.
xdev_status_t* pool_call(const xdev_kernel_call_t* call, int inputs, const char* const* known,
                         const xdev_tensor_t& image, const xdev_tensor_t& pooled,
                         WindowGeometry& g, xdev_dtype_t& dtype) {
  if (xdev_status_t* s = check_signature(call, inputs, kFloats, known, false, &dtype)) return s;
  for (int i = 0; i < inputs; ++i) {
    if (element_count(*call->inputs[i]) > 0 && !is_contiguous(*call->inputs[i])) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: input %d must be contiguous",
                         window_op(call), i);
    }
  }
  if (xdev_status_t* s = window_geometry(call, image, pooled, 0, 0, g)) return s;
  if (g.in.c != g.out.c) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the pooled image has %lld channels, the input %lld", window_op(call),
                       static_cast<long long>(g.out.c), static_cast<long long>(g.in.c));
  }
  return nullptr;
}

// MaxPool and AvgPool: one output row (image, oy) per body call.
template <bool kMax>
xdev_status_t* pool(const xdev_kernel_call_t* call) noexcept {
  WindowGeometry g;
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_call(call, 1)) return s;
  if (xdev_status_t* s =
          pool_call(call, 1, kPoolAttrs, *call->inputs[0], *call->outputs[0], g, dtype)) {
    return s;
  }
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<const T>(*call->inputs[0]);
    T* y = data_of<T>(*call->outputs[0]);
    for_rows(g.out.n * g.out.h, g.out.w * g.out.c * g.taps(), [&](int64_t row) {
      const int64_t b = row / g.out.h, oy = row % g.out.h;
      for (int64_t ox = 0; ox < g.out.w; ++ox) {
        for (int64_t ch = 0; ch < g.out.c; ++ch) {
          T& out = y[g.out.at(b, oy, ox, ch)];
          if constexpr (kMax) {
            const int64_t best = window_max(g, x, b, oy, ox, ch);
            out = best < 0 ? -INFINITY : x[best];
          } else {
            double sum = 0.0;
            const int64_t count =
                for_window(g, b, oy, ox, ch, [&](int64_t at) { sum += static_cast<double>(x[at]); });
            out = static_cast<T>(count > 0 ? sum / static_cast<double>(count) : NAN);
          }
        }
      }
    });
  });
}

// The gradients: dx zeroed, then every window of one image adds its share;
// images in parallel (windows of one image may overlap).
template <typename T, typename Window>
void scatter_windows(const WindowGeometry& g, T* dx, const Window& window) {
  const int64_t total = g.in.n * g.in.step_n;
  std::fill(dx, dx + total, T(0));
  if (g.out.n * g.out.h * g.out.w * g.out.c == 0) return;
  cpu::parallel_for(tbb::blocked_range<int64_t>(0, g.in.n, 1),
                    [&](const tbb::blocked_range<int64_t>& range) {
                      for (int64_t b = range.begin(); b < range.end(); ++b) {
                        for (int64_t oy = 0; oy < g.out.h; ++oy) {
                          for (int64_t ox = 0; ox < g.out.w; ++ox) {
                            for (int64_t ch = 0; ch < g.out.c; ++ch) window(b, oy, ox, ch);
                          }
                        }
                      }
                    });
}

// inputs: orig_input, orig_output, grad; output: orig_input's gradient.
xdev_status_t* max_pool_grad(const xdev_kernel_call_t* call) noexcept {
  if (xdev_status_t* s = check_call(call, 3)) return s;
  WindowGeometry g;
  xdev_dtype_t dtype;
  const xdev_tensor_t& grad = *call->inputs[2];
  if (xdev_status_t* s = pool_call(call, 3, kPoolAttrs, *call->inputs[0], grad, g, dtype)) {
    return s;
  }
  if (!same_shape(*call->inputs[1], grad) || !same_shape(*call->inputs[0], *call->outputs[0])) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: orig_output must have grad's shape and the output orig_input's",
                       window_op(call));
  }
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<const T>(*call->inputs[0]);
    const T* dy = data_of<const T>(grad);
    T* dx = data_of<T>(*call->outputs[0]);
    scatter_windows(g, dx, [&](int64_t b, int64_t oy, int64_t ox, int64_t ch) {
      const int64_t best = window_max(g, x, b, oy, ox, ch);
      if (best >= 0) dx[best] += dy[g.out.at(b, oy, ox, ch)];
    });
  });
}

// input: grad; output: the gradient of AvgPool's input.
xdev_status_t* avg_pool_grad(const xdev_kernel_call_t* call) noexcept {
  if (xdev_status_t* s = check_call(call, 1)) return s;
  WindowGeometry g;
  xdev_dtype_t dtype;
  const xdev_tensor_t& grad = *call->inputs[0];
  if (xdev_status_t* s = pool_call(call, 1, kAvgPoolGradAttrs, *call->outputs[0], grad, g,
                                   dtype)) {
    return s;
  }
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* dy = data_of<const T>(grad);
    T* dx = data_of<T>(*call->outputs[0]);
    scatter_windows(g, dx, [&](int64_t b, int64_t oy, int64_t ox, int64_t ch) {
      const int64_t count = for_window(g, b, oy, ox, ch, [](int64_t) {});
      if (count == 0) return;
      const T share = static_cast<T>(static_cast<double>(dy[g.out.at(b, oy, ox, ch)]) /
                                     static_cast<double>(count));
      for_window(g, b, oy, ox, ch, [&](int64_t at) { dx[at] += share; });
    });
  });
}

}  // namespace

XDEV_CPU_KERNEL(kernel_max_pool, pool<true>)
XDEV_CPU_KERNEL(kernel_avg_pool, pool<false>)
XDEV_CPU_KERNEL(kernel_max_pool_grad, max_pool_grad)
XDEV_CPU_KERNEL(kernel_avg_pool_grad, avg_pool_grad)

}  // namespace xdev::cpu
