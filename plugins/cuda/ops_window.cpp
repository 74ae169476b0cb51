// The cuda plugin's sliding-window ops (docs/ops.md "Convolution and
// pooling"): Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter, MaxPool,
// AvgPool, MaxPoolGrad, AvgPoolGrad, float32 and float64, NHWC and NCHW.
// Checks and plans here (window_plan.hpp: the windows come from
// xdev/window_geometry.hpp, as in the core and the cpu plugin), kernels in
// window.cu.
//
// The convolutions are matrix products with cuBLAS, as on the cpu plugin:
// the column matrix col [N * OH * OW, KH * KW * Cin] (im2col: one row per
// output position, zeros for padding) times the filter [KH * KW * Cin,
// Cout] (HWIO, row-major) is the output, row by row (NHWC) or, per image,
// its transpose (NCHW: [Cout, OH * OW]). The column matrix is built in
// chunks of rows in kernel scratch from the core's pool (at most
// kColumnBudget bytes; halved while the pool cannot give that much; with
// no scratch at all, a direct kernel computes each element of the result,
// launch_conv_direct), each chunk followed by its products:
//   Conv2D               y[rows] = col · filter
//   Conv2DBackpropInput  col = dy[rows] · filterᵀ, then col2im adds col
//                        into dx (zeroed first)
//   Conv2DBackpropFilter dfilter (+)= colᵀ · dy[rows], beta 0 for the first
//                        product, 1 after: the chunks add in stream order,
//                        no atomics, so the result is deterministic.
// NCHW takes one product per image a chunk covers (for_image_segments).
#include <xdev/plugin.h>
#include <xdev/op_names.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>

#include "blas.hpp"
#include "call.hpp"
#include "launch.hpp"
#include "layout.hpp"
#include "ops.hpp"
#include "window_plan.hpp"

namespace xdev::cuda {
namespace {

// The most scratch the column matrix takes per chunk.
constexpr uint64_t kColumnBudget = uint64_t{64} << 20;

xdev_status_t* invalid(Call& call, const char* message) {
  return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT, "%s: %s", call.op(), message);
}

// The string attribute `name`, `a` (false) or `b` (true); `a` when absent
// and not required.
xdev_status_t* choice(Call& call, const char* name, const char* a, const char* b, bool required,
                      bool* second) {
  const char* value = string_attr(call, name);
  *second = false;
  if (value == nullptr && !required) return nullptr;
  if (value == nullptr || (std::strcmp(value, a) != 0 && std::strcmp(value, b) != 0)) {
    return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute '%s' must be the string %s or %s", call.op(), name, a,
                       b);
  }
  *second = std::strcmp(value, b) == 0;
  return nullptr;
}

// A (height, width) attribute (window::spatial_pair); (1, 1) when absent
// and not required.
xdev_status_t* pair(Call& call, const char* name, bool required, bool nchw, int64_t* h,
                    int64_t* w) {
  const xdev_attr_t* a = find_attr(call.raw(), name, XDEV_ATTR_INTS);
  *h = *w = 1;
  if (a == nullptr && !required) return nullptr;
  if (a == nullptr || (a->value.ints.count > 0 && a->value.ints.values == nullptr) ||
      !window::spatial_pair(a->value.ints.values, a->value.ints.count, nchw, *h, *w) || *h < 1 ||
      *w < 1) {
    return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute '%s' must be 2 ints (height, width) >= 1, or 4 with 1 "
                       "for batch and channels",
                       call.op(), name);
  }
  return nullptr;
}

// The windows over the image `in` giving `out` (rank 4, data_format order):
// kh, kw from the filter (convolutions) or, when 0, from ksize (pools).
xdev_status_t* windows(Call& call, const xdev_tensor_t& in, const xdev_tensor_t& out, int64_t kh,
                       int64_t kw, WindowLayout* l) {
  WindowAttrs a;
  bool valid = false;
  if (xdev_status_t* s = choice(call, XDEV_ATTR_NAME_data_format, "NHWC", "NCHW", false, &a.nchw)) return s;
  if (xdev_status_t* s = choice(call, XDEV_ATTR_NAME_padding, "SAME", "VALID", true, &valid)) return s;
  a.same = !valid;
  if (in.rank != 4 || out.rank != 4) return invalid(call, "images of rank 4 expected");
  if (xdev_status_t* s = pair(call, XDEV_ATTR_NAME_strides, true, a.nchw, &a.sy, &a.sx)) return s;
  if (kh > 0) {
    if (xdev_status_t* s = pair(call, XDEV_ATTR_NAME_dilations, false, a.nchw, &a.dy, &a.dx)) return s;
    a.kh = kh;
    a.kw = kw;
  } else if (xdev_status_t* s = pair(call, XDEV_ATTR_NAME_ksize, true, a.nchw, &a.kh, &a.kw)) {
    return s;
  }
  if (!plan_windows(a, in.shape, out.shape, *l)) {
    return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: windows of %" PRId64 "x%" PRId64 " over %" PRId64 "x%" PRId64
                       " (batch %" PRId64 ") do not give the output's %" PRId64 "x%" PRId64
                       " (batch %" PRId64 ")",
                       call.op(), a.kh, a.kw, l->in.h, l->in.w, l->in.n, l->out.h, l->out.w,
                       l->out.n);
  }
  return nullptr;
}

// The call's inputs and output share a float dtype; the inputs are
// contiguous (the op table asks for it).
xdev_status_t* float_call(Call& call, int inputs) {
  if (xdev_status_t* s = call.check(inputs)) return s;
  if (xdev_status_t* s = call.check_same_dtype(kFloats)) return s;
  for (uint32_t i = 0; i < call.input_count(); ++i) {
    if (!is_contiguous(call.input(i))) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: input %" PRIu32 " must be contiguous", call.op(), i);
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Pools

// Windows over `image` giving `pooled`, whose channels are the image's.
xdev_status_t* pool_windows(Call& call, const xdev_tensor_t& image, const xdev_tensor_t& pooled,
                            WindowLayout* l) {
  if (xdev_status_t* s = windows(call, image, pooled, 0, 0, l)) return s;
  if (l->in.c != l->out.c) {
    return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the pooled image has %" PRId64 " channels, the input %" PRId64,
                       call.op(), l->out.c, l->in.c);
  }
  return nullptr;
}

template <bool kMax>
xdev_status_t* pool(const xdev_kernel_call_t* raw, const char* op) noexcept {
  return guarded(raw, op, [&]() -> xdev_status_t* {
    Call call(raw, op);
    if (xdev_status_t* s = float_call(call, 1)) return s;
    WindowLayout l;
    if (xdev_status_t* s = pool_windows(call, call.input(0), call.output(), &l)) return s;
    return call.launched(launch_pool(kMax, call.output().dtype, l, data_of(call.input(0)),
                                     data_of_output(call.output()), call.cuda_stream()));
  });
}

xdev_status_t* kernel_max_pool(void*, const xdev_kernel_call_t* raw) noexcept {
  return pool<true>(raw, XDEV_OP_MaxPool);
}
xdev_status_t* kernel_avg_pool(void*, const xdev_kernel_call_t* raw) noexcept {
  return pool<false>(raw, XDEV_OP_AvgPool);
}

// inputs: orig_input, orig_output, grad; output: orig_input's gradient.
xdev_status_t* kernel_max_pool_grad(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_MaxPoolGrad;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = float_call(call, 3)) return s;
    const xdev_tensor_t& x = call.input(0);
    const xdev_tensor_t& grad = call.input(2);
    WindowLayout l;
    if (xdev_status_t* s = pool_windows(call, x, grad, &l)) return s;
    if (!same_shape(call.input(1), grad) || !same_shape(x, call.output())) {
      return invalid(call, "orig_output must have grad's shape and the output orig_input's");
    }
    return call.launched(launch_max_pool_grad(x.dtype, l, data_of(x), data_of(grad),
                                              data_of_output(call.output()), call.cuda_stream()));
  });
}

// input: grad; output: the gradient of AvgPool's input.
xdev_status_t* kernel_avg_pool_grad(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_AvgPoolGrad;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = float_call(call, 1)) return s;
    const xdev_tensor_t& grad = call.input(0);
    WindowLayout l;
    if (xdev_status_t* s = pool_windows(call, call.output(), grad, &l)) return s;
    return call.launched(launch_avg_pool_grad(grad.dtype, l, data_of(grad),
                                              data_of_output(call.output()), call.cuda_stream()));
  });
}

// ---------------------------------------------------------------------------
// Convolutions

// Element `offset` of a float tensor's memory.
const void* at(const void* base, int64_t offset, size_t size) {
  return static_cast<const char*>(base) + offset * static_cast<int64_t>(size);
}
void* at(void* base, int64_t offset, size_t size) {
  return static_cast<char*>(base) + offset * static_cast<int64_t>(size);
}

// The cuBLAS handle and the products of one call.
class Products {
 public:
  explicit Products(Call& call) : call_(call), dtype_(call.output().dtype) {}

  xdev_status_t* open() { return blas_for_call(call_, &blas_, &handle_); }

  xdev_status_t* gemm(int64_t m, int64_t n, int64_t k, RowMajor a, RowMajor b, double beta,
                      void* c, int64_t ldc) {
    return row_major_gemm(call_, blas_, handle_, dtype_, m, n, k, a, b, beta, c, ldc);
  }

 private:
  Call& call_;
  xdev_dtype_t dtype_;
  const Blas* blas_ = nullptr;
  cublasHandle_t handle_ = nullptr;
};

// The three convolutions: two inputs, the output; `image` and `out_image`
// the tensors (0, 1: inputs, 2: the output) the windows slide over and
// give, `filter` the filter's ([KH, KW, Cin, Cout]).
struct Conv {
  WindowLayout l;
  ColumnPlan plan;
  void* col = nullptr;
  size_t size = 0;
};

xdev_status_t* conv_call(Call& call, int image, int filter, int out_image, Conv* c) {
  if (xdev_status_t* s = float_call(call, 2)) return s;
  auto tensor = [&](int i) -> const xdev_tensor_t& {
    return i < 2 ? call.input(static_cast<uint32_t>(i)) : call.output();
  };
  const xdev_tensor_t& f = tensor(filter);
  if (f.rank != 4) return invalid(call, "the filter needs rank 4");
  if (xdev_status_t* s =
          windows(call, tensor(image), tensor(out_image), f.shape[0], f.shape[1], &c->l)) {
    return s;
  }
  if (f.shape[2] != c->l.in.c || f.shape[3] != c->l.out.c) {
    return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: filter [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                       "] does not match %" PRId64 " input and %" PRId64 " output channels",
                       call.op(), f.shape[0], f.shape[1], f.shape[2], f.shape[3], c->l.in.c,
                       c->l.out.c);
  }
  c->size = itemsize(call.output().dtype);
  // The filter holds KH * KW * Cin * Cout elements; with Cout > 0 the
  // column width KH * KW * Cin cannot overflow (callers return first when
  // Cout is 0).
  return nullptr;
}

xdev_status_t* zero(Call& call, const xdev_tensor_t& t) {
  const uint64_t bytes = static_cast<uint64_t>(element_count(t)) * itemsize(t.dtype);
  if (bytes == 0) return nullptr;
  return call.launched(cudaMemsetAsync(data_of_output(t), 0, bytes, call.cuda_stream()),
                       "cudaMemsetAsync");
}

// Plans the column chunks and takes their scratch: plan.rows halved until
// the pool gives plan.bytes() (at least one row). False when it gives none
// (an older core, a full pool): the caller runs the direct kernel.
bool columns(Call& call, Conv* c) {
  c->plan = plan_columns(c->l, c->size, kColumnBudget);
  for (;;) {
    c->col = call.scratch(c->plan.bytes());
    if (c->col != nullptr) return true;
    if (c->plan.rows <= 1) return false;
    c->plan.rows /= 2;
  }
}

// The convolution `which` without a column matrix: a thread per element of
// the output.
xdev_status_t* direct(Call& call, int which, const Conv& c, const void* a, const void* b) {
  const xdev_tensor_t& out = call.output();
  return call.launched(launch_conv_direct(which, out.dtype, c.l, a, b, data_of_output(out),
                                          element_count(out), call.cuda_stream()));
}

// f(r0, r1) for the chunks of rows, in order; stops at the first status.
template <typename F>
xdev_status_t* for_chunks(const ColumnPlan& plan, F&& f) {
  for (int64_t r0 = 0; r0 < plan.total_rows; r0 += plan.rows) {
    const int64_t r1 = r0 + plan.rows < plan.total_rows ? r0 + plan.rows : plan.total_rows;
    if (xdev_status_t* s = f(r0, r1)) return s;
  }
  return nullptr;
}

xdev_status_t* kernel_conv2d(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_Conv2D;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    Conv c;
    if (xdev_status_t* s = conv_call(call, 0, 1, 2, &c)) return s;
    const xdev_tensor_t& out = call.output();
    if (element_count(out) == 0) return nullptr;
    const WindowLayout& l = c.l;
    if (l.in.c == 0) return zero(call, out);  // an empty sum per element
    const xdev_dtype_t dtype = out.dtype;
    const void* x = data_of(call.input(0));
    const void* f = data_of(call.input(1));
    if (!columns(call, &c)) return direct(call, kConvForward, c, x, f);
    Products products(call);
    if (xdev_status_t* s = products.open()) return s;
    void* y = data_of_output(out);
    const int64_t width = c.plan.width, cout = l.out.c, positions = l.out.h * l.out.w;
    return for_chunks(c.plan, [&](int64_t r0, int64_t r1) -> xdev_status_t* {
      if (xdev_status_t* s = call.launched(
              launch_im2col(dtype, l, x, r0, r1 - r0, c.col, call.cuda_stream()))) {
        return s;
      }
      if (!l.in.nchw) {  // y[r0:r1, Cout] = col · filter
        return products.gemm(r1 - r0, cout, width, {c.col, width, false}, {f, cout, false}, 0.0,
                             at(y, r0 * cout, c.size), cout);
      }
      xdev_status_t* status = nullptr;
      for_image_segments(r0, r1, positions, [&](int64_t b, int64_t p0, int64_t p1) {
        // y_b[Cout, p0:p1] = filterᵀ · colᵀ
        if (status == nullptr) {
          status = products.gemm(cout, p1 - p0, width, {f, cout, true},
                                 {at(c.col, (b * positions + p0 - r0) * width, c.size), width,
                                  true},
                                 0.0, at(y, b * l.out.step_n + p0, c.size), positions);
        }
      });
      return status;
    });
  });
}

// inputs: filter, out_backprop; output: the input's gradient.
xdev_status_t* kernel_conv2d_backprop_input(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_Conv2DBackpropInput;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    Conv c;
    if (xdev_status_t* s = conv_call(call, 2, 0, 1, &c)) return s;
    const xdev_tensor_t& dx_tensor = call.output();
    if (xdev_status_t* s = zero(call, dx_tensor)) return s;
    const WindowLayout& l = c.l;
    const int64_t cout = l.out.c, positions = l.out.h * l.out.w;
    if (element_count(dx_tensor) == 0 || cout == 0 || positions == 0) return nullptr;
    const xdev_dtype_t dtype = dx_tensor.dtype;
    const void* f = data_of(call.input(0));
    const void* dy = data_of(call.input(1));
    if (!columns(call, &c)) return direct(call, kConvInput, c, dy, f);
    Products products(call);
    if (xdev_status_t* s = products.open()) return s;
    void* dx = data_of_output(dx_tensor);
    const int64_t width = c.plan.width;
    return for_chunks(c.plan, [&](int64_t r0, int64_t r1) -> xdev_status_t* {
      xdev_status_t* status = nullptr;
      if (!l.in.nchw) {  // col = dy[r0:r1, Cout] · filterᵀ
        status = products.gemm(r1 - r0, width, cout, {at(dy, r0 * cout, c.size), cout, false},
                               {f, cout, true}, 0.0, c.col, width);
      } else {
        for_image_segments(r0, r1, positions, [&](int64_t b, int64_t p0, int64_t p1) {
          // col rows of image b = (dy_b[Cout, p0:p1])ᵀ · filterᵀ
          if (status == nullptr) {
            status = products.gemm(p1 - p0, width, cout,
                                   {at(dy, b * l.out.step_n + p0, c.size), positions, true},
                                   {f, cout, true}, 0.0,
                                   at(c.col, (b * positions + p0 - r0) * width, c.size), width);
          }
        });
      }
      if (status != nullptr) return status;
      return call.launched(launch_col2im(dtype, l, c.col, r0, r1 - r0, dx, call.cuda_stream()));
    });
  });
}

// inputs: input, out_backprop; output: the filter's gradient.
xdev_status_t* kernel_conv2d_backprop_filter(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_Conv2DBackpropFilter;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    Conv c;
    if (xdev_status_t* s = conv_call(call, 0, 2, 1, &c)) return s;
    const xdev_tensor_t& df_tensor = call.output();
    if (element_count(df_tensor) == 0) return nullptr;
    const WindowLayout& l = c.l;
    const int64_t cout = l.out.c, positions = l.out.h * l.out.w;
    // No output position: an empty sum per element.
    if (l.out.n * positions == 0) return zero(call, df_tensor);
    const xdev_dtype_t dtype = df_tensor.dtype;
    const void* x = data_of(call.input(0));
    const void* dy = data_of(call.input(1));
    if (!columns(call, &c)) return direct(call, kConvFilter, c, x, dy);
    Products products(call);
    if (xdev_status_t* s = products.open()) return s;
    void* df = data_of_output(df_tensor);
    const int64_t width = c.plan.width;
    double beta = 0.0;  // the first product writes, the next ones add
    return for_chunks(c.plan, [&](int64_t r0, int64_t r1) -> xdev_status_t* {
      if (xdev_status_t* s = call.launched(
              launch_im2col(dtype, l, x, r0, r1 - r0, c.col, call.cuda_stream()))) {
        return s;
      }
      xdev_status_t* status = nullptr;
      if (!l.in.nchw) {  // dfilter (+)= colᵀ · dy[r0:r1, Cout]
        status = products.gemm(width, cout, r1 - r0, {c.col, width, true},
                               {at(dy, r0 * cout, c.size), cout, false}, beta, df, cout);
        beta = 1.0;
        return status;
      }
      for_image_segments(r0, r1, positions, [&](int64_t b, int64_t p0, int64_t p1) {
        // dfilter (+)= (col rows of image b)ᵀ · (dy_b[Cout, p0:p1])ᵀ
        if (status == nullptr) {
          status = products.gemm(width, cout, p1 - p0,
                                 {at(c.col, (b * positions + p0 - r0) * width, c.size), width,
                                  true},
                                 {at(dy, b * l.out.step_n + p0, c.size), positions, true}, beta,
                                 df, cout);
          beta = 1.0;
        }
      });
      return status;
    });
  });
}

using ph::kernel_info;

constexpr xdev_kernel_info_t kWindowKernels[] = {
    kernel_info(XDEV_OP_Conv2D, kFloats, kFloats, &kernel_conv2d),
    kernel_info(XDEV_OP_Conv2DBackpropInput, kFloats, kFloats, &kernel_conv2d_backprop_input),
    kernel_info(XDEV_OP_Conv2DBackpropFilter, kFloats, kFloats, &kernel_conv2d_backprop_filter),
    kernel_info(XDEV_OP_MaxPool, kFloats, kFloats, &kernel_max_pool),
    kernel_info(XDEV_OP_AvgPool, kFloats, kFloats, &kernel_avg_pool),
    kernel_info(XDEV_OP_MaxPoolGrad, kFloats, kFloats, &kernel_max_pool_grad),
    kernel_info(XDEV_OP_AvgPoolGrad, kFloats, kFloats, &kernel_avg_pool_grad),
};

}  // namespace

KernelTable window_kernels() noexcept {
  return {kWindowKernels, std::size(kWindowKernels)};
}

}  // namespace xdev::cuda
