// The row-wise NN ops of docs/ops.md ("NN ops"): SoftmaxCrossEntropyWithLogits
// and LayerNorm. A segment of `lanes` threads per row (segment.cuh, sized by
// segment_plan.hpp), several passes over the row in one kernel, everything
// in double as the cpu plugin (plugins/cpu/kernels/nn.cpp), each output
// rounded once to the element type. Sums are compensated
// (xdev/compensated_sum.hpp) so the tree of the segment's partial sums
// agrees with the cpu plugin's sequential sum within about an ulp.
// (BiasAdd needs no kernel of its own: ops_nn.cpp runs Add's.)
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <xdev/compensated_sum.hpp>

#include "indexing.hpp"
#include "kernel_util.cuh"
#include "launch.hpp"
#include "segment.cuh"

namespace xdev::cuda {
namespace {

struct MaxOrNan {
  __device__ double operator()(double a, double b) const { return max_or_nan(a, b); }
};

// Per row b, in double: m = max_c f (NaN if any is NaN), s = Σ e^(f − m),
// loss[b] = Σ_c labels · (ln s − (f − m)), backprop = e^(f − m) / s − labels.
template <typename T>
__global__ void xent_kernel(XentLayout l, const T* __restrict__ features,
                            const T* __restrict__ labels, T* __restrict__ loss,
                            T* __restrict__ backprop, int lanes) {
  double* top_slots = shared_slots<double>();
  const int64_t n = l.cols;
  for_segment_lines(l.rows, lanes, [&](int64_t row, bool active, int lane) {
    const T* f = features + (active ? row * l.features_row : 0);
    const T* y = labels + (active ? row * l.labels_row : 0);
    double top = -static_cast<double>(INFINITY);
    if (active) {
      for (int64_t c = lane; c < n; c += lanes) {
        top = max_or_nan(top, static_cast<double>(f[c * l.features_col]));
      }
    }
    top = segment_reduce(top, top_slots, lanes, MaxOrNan{});
    CompensatedSum partial;
    if (active) {
      for (int64_t c = lane; c < n; c += lanes) {
        partial.add(exp(static_cast<double>(f[c * l.features_col]) - top));
      }
    }
    const double sum = segment_sum(partial, lanes);
    const double log_sum = log(sum);
    CompensatedSum row_loss;
    if (active) {
      T* b = backprop + row * n;
      for (int64_t c = lane; c < n; c += lanes) {
        const double shifted = static_cast<double>(f[c * l.features_col]) - top;
        const double label = static_cast<double>(y[c * l.labels_col]);
        row_loss.add(label * (log_sum - shifted));
        b[c] = static_cast<T>(exp(shifted) / sum - label);
      }
    }
    const double total = segment_sum(row_loss, lanes);
    if (active && lane == 0) loss[row] = static_cast<T>(total);
  });
}

// Per line, in double: the mean, the population variance (a second pass
// over x − mean), then (x − mean) / √(variance + epsilon) · gamma + beta.
template <typename T>
__global__ void layer_norm_kernel(LayerNormLayout l, double epsilon, const T* __restrict__ x,
                                  const T* __restrict__ gamma, const T* __restrict__ beta,
                                  T* __restrict__ out, int lanes) {
  const int64_t n = l.x.inner_count;
  const double count = static_cast<double>(n);
  for_segment_lines(l.x.outer_count, lanes, [&](int64_t line, bool active, int lane) {
    const T* p = x + (active ? outer_offset<int64_t>(l.x, line) : 0);
    CompensatedSum sum;
    if (active) {
      for (int64_t r = lane; r < n; r += lanes) {
        sum.add(static_cast<double>(p[inner_offset<int64_t>(l.x, r)]));
      }
    }
    const double mean = segment_sum(sum, lanes) / count;
    CompensatedSum squares;
    if (active) {
      for (int64_t r = lane; r < n; r += lanes) {
        const double d = static_cast<double>(p[inner_offset<int64_t>(l.x, r)]) - mean;
        squares.add(d * d);
      }
    }
    const double rstd = 1.0 / sqrt(segment_sum(squares, lanes) / count + epsilon);
    if (active) {
      T* q = out + outer_offset<int64_t>(l.out, line);
      for (int64_t r = lane; r < n; r += lanes) {
        const double d = static_cast<double>(p[inner_offset<int64_t>(l.x, r)]) - mean;
        const double g = static_cast<double>(gamma[inner_offset<int64_t>(l.gamma, r)]);
        const double b = static_cast<double>(beta[inner_offset<int64_t>(l.beta, r)]);
        q[inner_offset<int64_t>(l.out, r)] = static_cast<T>(d * rstd * g + b);
      }
    }
  });
}

}  // namespace

cudaError_t launch_xent(xdev_dtype_t dtype, const XentLayout& layout, const void* features,
                        const void* labels, void* loss, void* backprop, int lanes,
                        cudaStream_t stream) {
  if (!valid_lanes(lanes)) return cudaErrorInvalidValue;
  if (layout.rows <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    xent_kernel<T><<<segment_grid(layout.rows, lanes), kThreads, 0, stream>>>(
        layout, static_cast<const T*>(features), static_cast<const T*>(labels),
        static_cast<T*>(loss), static_cast<T*>(backprop), lanes);
    return cudaGetLastError();
  });
}

cudaError_t launch_layer_norm(xdev_dtype_t dtype, const LayerNormLayout& layout, double epsilon,
                              const void* x, const void* gamma, const void* beta, void* out,
                              int lanes, cudaStream_t stream) {
  if (!valid_lanes(lanes)) return cudaErrorInvalidValue;
  if (layout.x.outer_count <= 0 || layout.x.inner_count <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    layer_norm_kernel<T><<<segment_grid(layout.x.outer_count, lanes), kThreads, 0, stream>>>(
        layout, epsilon, static_cast<const T*>(x), static_cast<const T*>(gamma),
        static_cast<const T*>(beta), static_cast<T*>(out), lanes);
    return cudaGetLastError();
  });
}

}  // namespace xdev::cuda
