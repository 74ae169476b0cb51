#include "kernels.hpp"

#include <cinttypes>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace xdev::sim {
namespace {

// A tensor of a kernel call, copied out of the call and checked against the
// device's memory.
struct TensorView {
  std::string role;  // "MatMul input a", for messages
  xdev_dtype_t dtype = XDEV_DTYPE_INVALID;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements, any sign, 0 = broadcast
  int64_t elements = 0;
  uint64_t begin = 0;        // device address of the lowest byte touched
  uint64_t bytes = 0;        // bytes from `begin` to past the highest; 0 when empty
  uint64_t first_shift = 0;  // element 0 is at begin + first_shift
  std::shared_ptr<const void> pin;  // Arena::pin of its allocation, while queued
};

// "MatMul on Sim Accelerator 0 (sim:00)", the start of every message.
std::string where(const char* op, const Arena& arena) {
  return std::string(op) + " on " + arena.label();
}

Failure make_view(std::string role, const xdev_tensor_t* tensor, const Arena& arena,
                  TensorView* out) {
  out->role = std::move(role);
  const char* name = out->role.c_str();
  if (tensor == nullptr) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s is NULL", name);
  }
  if (tensor->rank < 0 || tensor->rank > XDEV_MAX_RANK) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s has rank %" PRId32 ", outside [0, %d]",
                        name, tensor->rank, XDEV_MAX_RANK);
  }
  const uint64_t item = xdev_plugin_dtype_size(tensor->dtype);
  if (item == 0) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s has an unknown dtype (%d)", name,
                        static_cast<int>(tensor->dtype));
  }
  const auto rank = static_cast<size_t>(tensor->rank);
  if (rank > 0 && (tensor->shape == nullptr || tensor->strides == nullptr)) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s has rank %zu but no %s", name, rank,
                        tensor->shape == nullptr ? "shape" : "strides");
  }
  out->dtype = tensor->dtype;
  out->shape.assign(tensor->shape, tensor->shape + rank);
  out->strides.assign(tensor->strides, tensor->strides + rank);

  int64_t elements = 1;
  for (size_t k = 0; k < rank; ++k) {
    if (out->shape[k] < 0) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s has negative dimension %" PRId64
                          " on axis %zu", name, out->shape[k], k);
    }
    if (__builtin_mul_overflow(elements, out->shape[k], &elements)) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s has too many elements", name);
    }
  }
  out->elements = elements;
  if (elements == 0) return {};  // touches no memory

  // The lowest and highest element offsets the strides reach.
  int64_t low = 0;
  int64_t high = 0;
  bool overflow = false;
  for (size_t k = 0; k < rank; ++k) {
    int64_t span = 0;
    overflow |= __builtin_mul_overflow(out->strides[k], out->shape[k] - 1, &span);
    overflow |= span < 0 ? __builtin_add_overflow(low, span, &low)
                         : __builtin_add_overflow(high, span, &high);
  }
  int64_t extent = 0;
  overflow |= __builtin_sub_overflow(high, low, &extent);
  overflow |= __builtin_add_overflow(extent, 1, &extent);
  uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(static_cast<uint64_t>(extent), item, &bytes);
  if (overflow) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s: its strides reach past the address space", name);
  }
  // -low <= high - low < extent, and extent * item did not overflow.
  out->first_shift = static_cast<uint64_t>(-low) * item;
  const uint64_t first = reinterpret_cast<uint64_t>(tensor->data) + tensor->byte_offset;
  if (first % item != 0) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s: element 0 at 0x%" PRIx64 " is not aligned to its %" PRIu64
                        "-byte elements", name, first, item);
  }
  out->begin = first - out->first_shift;
  out->bytes = bytes;
  std::byte* host = nullptr;
  if (Failure failure = arena.resolve(out->begin, out->bytes, name, &host)) return failure;
  out->pin = arena.pin(out->begin);
  return {};
}

// Where element 0 of `view` is in host memory now; checks again that its
// memory is still allocated (the core may have freed it since the call).
Failure locate(const TensorView& view, const Arena& arena, std::byte** out_first) {
  *out_first = nullptr;
  if (view.bytes == 0) return {};
  std::byte* host = nullptr;
  if (Failure failure = arena.resolve(view.begin, view.bytes, view.role.c_str(), &host)) {
    return failure;
  }
  *out_first = host + view.first_shift;
  return {};
}

// locate() for each (view, out_first) pair in turn; the first failure.
Failure locate_all(const Arena& arena,
                   std::initializer_list<std::pair<const TensorView*, std::byte**>> views) {
  for (const auto& [view, out_first] : views) {
    if (Failure failure = locate(*view, arena, out_first)) return failure;
  }
  return {};
}

bool row_major(const TensorView& view) {
  if (view.elements == 0) return true;
  int64_t expected = 1;
  for (size_t k = view.shape.size(); k-- > 0;) {
    if (view.shape[k] != 1 && view.strides[k] != expected) return false;
    expected *= view.shape[k];
  }
  return true;
}

bool overlap(const TensorView& a, const TensorView& b) {
  return a.bytes > 0 && b.bytes > 0 && a.begin < b.begin + b.bytes && b.begin < a.begin + a.bytes;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k > 0) text += ", ";
    text += std::to_string(shape[k]);
  }
  return text + "]";
}

// Checks what every kernel call shares: counts, tensors, one registered
// dtype, a contiguous output that aliases no input.
Failure check_call(const xdev_kernel_call_t& call, const char* op, const Arena& arena,
                   const std::vector<const char*>& input_names, std::vector<TensorView>* inputs,
                   TensorView* output) {
  const std::string at = where(op, arena);
  if (call.input_count != input_names.size()) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: expects %zu inputs, got %" PRIu32,
                        at.c_str(), input_names.size(), call.input_count);
  }
  if (call.output_count != 1) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: expects 1 output, got %" PRIu32,
                        at.c_str(), call.output_count);
  }
  if (call.inputs == nullptr || call.outputs == nullptr) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: the %s array is NULL", at.c_str(),
                        call.inputs == nullptr ? "inputs" : "outputs");
  }
  inputs->resize(input_names.size());
  for (size_t i = 0; i < input_names.size(); ++i) {
    if (Failure failure = make_view(std::string(op) + " input " + input_names[i], call.inputs[i],
                                    arena, &(*inputs)[i])) {
      return failure;
    }
  }
  if (Failure failure = make_view(std::string(op) + " output", call.outputs[0], arena, output)) {
    return failure;
  }
  auto registered = [](xdev_dtype_t dtype) {
    return (kKernelDtypes & XDEV_DTYPE_BIT(dtype)) != 0;
  };
  std::vector<const TensorView*> all;
  for (const TensorView& input : *inputs) all.push_back(&input);
  all.push_back(output);
  for (const TensorView* view : all) {
    if (!registered(view->dtype)) {
      return make_failure(XDEV_STATUS_UNIMPLEMENTED,
                          "%s: no kernel for dtype %s (%s); registered: float32, float64",
                          at.c_str(), dtype_name(view->dtype).c_str(), view->role.c_str());
    }
    if (view->dtype != output->dtype) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                          "%s: %s is %s but the output is %s; all must share one dtype",
                          at.c_str(), view->role.c_str(), dtype_name(view->dtype).c_str(),
                          dtype_name(output->dtype).c_str());
    }
  }
  if (!row_major(*output)) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s: the output must be contiguous and row-major", at.c_str());
  }
  for (const TensorView& input : *inputs) {
    if (overlap(input, *output)) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: the output aliases %s", at.c_str(),
                          input.role.c_str());
    }
  }
  return {};
}

// ---------------------------------------------------------------------------
// MatMul

template <typename T>
void matmul(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool transpose_a,
            bool transpose_b) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const T x = transpose_a ? a[p * m + i] : a[i * k + p];
        const T y = transpose_b ? b[j * k + p] : b[p * n + j];
        sum += x * y;
      }
      c[i * n + j] = sum;
    }
  }
}

Failure read_matmul_attrs(const xdev_kernel_call_t& call, const std::string& at,
                          bool* transpose_a, bool* transpose_b) {
  *transpose_a = false;
  *transpose_b = false;
  if (call.attr_count > 0 && call.attrs == nullptr) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: %" PRIu32 " attributes but no array",
                        at.c_str(), call.attr_count);
  }
  for (uint32_t i = 0; i < call.attr_count; ++i) {
    const xdev_attr_t& attr = call.attrs[i];
    if (attr.name == nullptr) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: attribute %" PRIu32 " has no name",
                          at.c_str(), i);
    }
    bool* target = nullptr;
    if (std::strcmp(attr.name, "transpose_a") == 0) target = transpose_a;
    if (std::strcmp(attr.name, "transpose_b") == 0) target = transpose_b;
    // docs/ops.md: unknown attributes are ignored (a later minor version may
    // add one).
    if (target == nullptr) continue;
    if (attr.kind != XDEV_ATTR_BOOL) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                          "%s: attribute '%s' must be a bool (kind %d), got kind %d", at.c_str(),
                          attr.name, static_cast<int>(XDEV_ATTR_BOOL), static_cast<int>(attr.kind));
    }
    *target = attr.value.b != 0;
  }
  return {};
}

// ---------------------------------------------------------------------------
// Add

// out[i] = x[i] + y[i] over the output's row-major order; x and y point to
// their element 0 and may have any strides (0 on broadcast axes).
template <typename T>
void add(const T* x, const std::vector<int64_t>& x_strides, const T* y,
         const std::vector<int64_t>& y_strides, T* out, const std::vector<int64_t>& shape) {
  const size_t rank = shape.size();
  if (rank == 0) {
    out[0] = x[0] + y[0];
    return;
  }
  const int64_t inner = shape[rank - 1];
  const int64_t x_step = x_strides[rank - 1];
  const int64_t y_step = y_strides[rank - 1];
  int64_t outer = 1;
  for (size_t k = 0; k + 1 < rank; ++k) outer *= shape[k];
  std::vector<int64_t> index(rank, 0);
  int64_t x_offset = 0;
  int64_t y_offset = 0;
  for (int64_t row = 0; row < outer; ++row) {
    for (int64_t j = 0; j < inner; ++j) {
      *out++ = x[x_offset + j * x_step] + y[y_offset + j * y_step];
    }
    // Step the outer index like an odometer.
    for (size_t d = rank - 1; d-- > 0;) {
      x_offset += x_strides[d];
      y_offset += y_strides[d];
      if (++index[d] < shape[d]) break;
      x_offset -= x_strides[d] * shape[d];
      y_offset -= y_strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

Failure enqueue_matmul(const xdev_kernel_call_t& call, const Arena& arena, WorkQueue& queue) {
  const std::string at = where("MatMul", arena);
  std::vector<TensorView> inputs;
  TensorView output;
  if (Failure f = check_call(call, "MatMul", arena, {"a", "b"}, &inputs, &output)) return f;
  bool transpose_a = false;
  bool transpose_b = false;
  if (Failure failure = read_matmul_attrs(call, at, &transpose_a, &transpose_b)) return failure;
  for (const TensorView* view : {&inputs[0], &inputs[1], &output}) {
    if (view->shape.size() != 2) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: %s must have rank 2, has %zu",
                          at.c_str(), view->role.c_str(), view->shape.size());
    }
  }
  for (const TensorView& input : inputs) {
    if (!row_major(input)) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                          "%s: %s must be contiguous and row-major (strides %s for shape %s)",
                          at.c_str(), input.role.c_str(), shape_text(input.strides).c_str(),
                          shape_text(input.shape).c_str());
    }
  }
  const std::vector<int64_t>& a = inputs[0].shape;
  const std::vector<int64_t>& b = inputs[1].shape;
  const int64_t m = transpose_a ? a[1] : a[0];
  const int64_t k = transpose_a ? a[0] : a[1];
  const int64_t k_b = transpose_b ? b[1] : b[0];
  const int64_t n = transpose_b ? b[0] : b[1];
  if (k != k_b) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s: inner dimensions differ: a %s%s, b %s%s", at.c_str(),
                        shape_text(a).c_str(), transpose_a ? " transposed" : "",
                        shape_text(b).c_str(), transpose_b ? " transposed" : "");
  }
  if (output.shape[0] != m || output.shape[1] != n) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: the output is %s, expected [%" PRId64
                        ", %" PRId64 "]", at.c_str(), shape_text(output.shape).c_str(), m, n);
  }
  if (output.elements == 0) return {};

  queue.enqueue(
      [&arena, a_view = std::move(inputs[0]), b_view = std::move(inputs[1]),
       c_view = std::move(output), m, n, k, transpose_a, transpose_b]() -> Failure {
        std::byte* a_data = nullptr;
        std::byte* b_data = nullptr;
        std::byte* c_data = nullptr;
        if (Failure failure =
                locate_all(arena, {{&a_view, &a_data}, {&b_view, &b_data}, {&c_view, &c_data}})) {
          return failure;
        }
        if (c_view.dtype == XDEV_DTYPE_FLOAT32) {
          matmul(reinterpret_cast<const float*>(a_data), reinterpret_cast<const float*>(b_data),
                 reinterpret_cast<float*>(c_data), m, n, k, transpose_a, transpose_b);
        } else {
          matmul(reinterpret_cast<const double*>(a_data), reinterpret_cast<const double*>(b_data),
                 reinterpret_cast<double*>(c_data), m, n, k, transpose_a, transpose_b);
        }
        return {};
      },
      /*delayed=*/true);
  return {};
}

Failure enqueue_add(const xdev_kernel_call_t& call, const Arena& arena, WorkQueue& queue) {
  const std::string at = where("Add", arena);
  std::vector<TensorView> inputs;
  TensorView output;
  if (Failure f = check_call(call, "Add", arena, {"x", "y"}, &inputs, &output)) return f;
  for (const TensorView& input : inputs) {
    if (input.shape != output.shape) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                          "%s: %s has shape %s, but inputs come broadcast to the output's %s",
                          at.c_str(), input.role.c_str(), shape_text(input.shape).c_str(),
                          shape_text(output.shape).c_str());
    }
  }
  if (output.elements == 0) return {};

  queue.enqueue(
      [&arena, x_view = std::move(inputs[0]), y_view = std::move(inputs[1]),
       out_view = std::move(output)]() -> Failure {
        std::byte* x_data = nullptr;
        std::byte* y_data = nullptr;
        std::byte* out_data = nullptr;
        if (Failure failure = locate_all(
                arena, {{&x_view, &x_data}, {&y_view, &y_data}, {&out_view, &out_data}})) {
          return failure;
        }
        if (out_view.dtype == XDEV_DTYPE_FLOAT32) {
          add(reinterpret_cast<const float*>(x_data), x_view.strides,
              reinterpret_cast<const float*>(y_data), y_view.strides,
              reinterpret_cast<float*>(out_data), out_view.shape);
        } else {
          add(reinterpret_cast<const double*>(x_data), x_view.strides,
              reinterpret_cast<const double*>(y_data), y_view.strides,
              reinterpret_cast<double*>(out_data), out_view.shape);
        }
        return {};
      },
      /*delayed=*/true);
  return {};
}

}  // namespace xdev::sim
