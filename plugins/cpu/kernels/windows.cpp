#include <xdev/op_names.h>
#include "kernels/windows.hpp"

#include <xdev/window_geometry.hpp>

#include <cinttypes>
#include <cstring>

#include "kernels/common.hpp"

namespace xdev::cpu {
namespace {

ImageDims image_dims(const xdev_tensor_t& t, bool nchw) noexcept {
  const window::Image im = window::dense_image(t.shape, nchw);
  return {im.n, im.h, im.w, im.c, im.step_n, im.step_h, im.step_w, im.step_c};
}

// The string attribute `name`, one of `a` and `b` (a when absent): 0 or 1.
xdev_status_t* attr_choice(const xdev_kernel_call_t* call, const char* name, const char* a,
                           const char* b, bool required, bool& second) noexcept {
  second = false;
  const xdev_attr_t* f = find_attr(call, name);
  if (f == nullptr && !required) return nullptr;
  if (f == nullptr || f->kind != XDEV_ATTR_STRING || f->value.s == nullptr ||
      (std::strcmp(f->value.s, a) != 0 && std::strcmp(f->value.s, b) != 0)) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute '%s' must be the string %s or %s", window_op(call), name,
                       a, b);
  }
  second = std::strcmp(f->value.s, b) == 0;
  return nullptr;
}

// A (height, width) ints attribute; absent and not required: (1, 1).
xdev_status_t* attr_pair(const xdev_kernel_call_t* call, const char* name, bool required,
                         bool nchw, int64_t& h, int64_t& w) noexcept {
  const xdev_attr_t* a = find_attr(call, name);
  h = w = 1;
  if (a == nullptr && !required) return nullptr;
  if (a == nullptr || a->kind != XDEV_ATTR_INTS ||
      (a->value.ints.count > 0 && a->value.ints.values == nullptr) ||
      !window::spatial_pair(a->value.ints.values, a->value.ints.count, nchw, h, w) || h < 1 ||
      w < 1) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute '%s' must be 2 ints (height, width) >= 1, or 4 with 1 "
                       "for batch and channels",
                       window_op(call), name);
  }
  return nullptr;
}

}  // namespace

xdev_status_t* window_geometry(const xdev_kernel_call_t* call, const xdev_tensor_t& in,
                               const xdev_tensor_t& out, int64_t kh, int64_t kw,
                               WindowGeometry& g) noexcept {
  bool nchw = false, valid = false;
  if (xdev_status_t* s = attr_choice(call, XDEV_ATTR_NAME_data_format, "NHWC", "NCHW", false, nchw)) return s;
  if (xdev_status_t* s = attr_choice(call, XDEV_ATTR_NAME_padding, "SAME", "VALID", true, valid)) return s;
  if (in.rank != 4 || out.rank != 4) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: images of rank 4 expected, not %" PRId32 " and %" PRId32,
                       window_op(call), in.rank, out.rank);
  }
  g.nchw = nchw;
  g.in = image_dims(in, nchw);
  g.out = image_dims(out, nchw);
  if (xdev_status_t* s = attr_pair(call, XDEV_ATTR_NAME_strides, true, nchw, g.sy, g.sx)) return s;
  if (xdev_status_t* s = attr_pair(call, XDEV_ATTR_NAME_dilations, false, nchw, g.dy, g.dx)) return s;
  if (kh < 1 || kw < 1) {
    if (xdev_status_t* s = attr_pair(call, XDEV_ATTR_NAME_ksize, true, nchw, kh, kw)) return s;
  }
  g.kh = kh;
  g.kw = kw;
  window::Axis y{g.in.h, kh, g.sy, g.dy}, x{g.in.w, kw, g.sx, g.dx};
  if (!window::resolve(y, !valid) || !window::resolve(x, !valid) || y.out != g.out.h ||
      x.out != g.out.w || g.out.n != g.in.n) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: windows of %" PRId64 "x%" PRId64 " over %" PRId64 "x%" PRId64
                       " (batch %" PRId64 ") do not give the output's %" PRId64 "x%" PRId64
                       " (batch %" PRId64 ")",
                       window_op(call), kh, kw, g.in.h, g.in.w, g.in.n, g.out.h, g.out.w,
                       g.out.n);
  }
  g.py = y.pad_before;
  g.px = x.pad_before;
  return nullptr;
}

}  // namespace xdev::cpu
