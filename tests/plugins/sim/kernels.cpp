#include "kernels.hpp"

#include <xdev/plugin_helpers.h>

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cinttypes>
#include <condition_variable>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The cpu plugin's host kernels (plugins/cpu, the host_kernels library).
#include "kernels/common.hpp"
#include "kernels/kernels.hpp"

namespace xdev::sim {
namespace {

// A tensor of a kernel call, copied out of the call and checked against the
// device's memory.
struct TensorView {
  std::string role;  // "MatMul input 0", for messages
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


// "float32, int64" for a dtype mask.
std::string mask_text(uint64_t mask) {
  std::string text;
  for (xdev_dtype_t dtype : {XDEV_DTYPE_FLOAT32, XDEV_DTYPE_FLOAT64, XDEV_DTYPE_INT32,
                             XDEV_DTYPE_INT64, XDEV_DTYPE_BOOL, XDEV_DTYPE_FLOAT16,
                             XDEV_DTYPE_BFLOAT16, XDEV_DTYPE_UINT8, XDEV_DTYPE_INT8}) {
    if (cpu::in_mask(dtype, mask)) text += (text.empty() ? "" : ", ") + dtype_name(dtype);
  }
  return text.empty() ? "none" : text;
}

// An attribute of a call, copied out of it: the core's strings and arrays
// die when the call returns.
struct AttrCopy {
  xdev_attr_t attr{};  // its pointers are rebuilt from the members below
  bool has_name = false;
  std::string name;
  bool has_text = false;
  std::string text;            // XDEV_ATTR_STRING
  std::vector<int64_t> ints;   // XDEV_ATTR_INTS
};

Failure copy_attrs(const xdev_kernel_call_t& call, const std::string& at,
                   std::vector<AttrCopy>* out) {
  if (call.attr_count > 0 && call.attrs == nullptr) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: %" PRIu32 " attributes but no array",
                        at.c_str(), call.attr_count);
  }
  out->resize(call.attr_count);
  for (uint32_t i = 0; i < call.attr_count; ++i) {
    const xdev_attr_t& attr = call.attrs[i];
    AttrCopy& copy = (*out)[i];
    copy.attr = attr;
    copy.has_name = attr.name != nullptr;
    if (copy.has_name) copy.name = attr.name;
    if (attr.kind == XDEV_ATTR_STRING && attr.value.s != nullptr) {
      copy.has_text = true;
      copy.text = attr.value.s;
    }
    if (attr.kind == XDEV_ATTR_INTS) {
      // No op takes more than a few ints (axes: at most XDEV_MAX_RANK); a
      // count past kMaxInts is garbage, refused before it is copied.
      constexpr int64_t kMaxInts = 4096;
      if (attr.value.ints.count < 0 || attr.value.ints.count > kMaxInts ||
          (attr.value.ints.count > 0 && attr.value.ints.values == nullptr)) {
        return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                            "%s: attribute '%s' has %" PRId64 " ints at %p", at.c_str(),
                            copy.has_name ? copy.name.c_str() : "(NULL name)",
                            attr.value.ints.count, static_cast<const void*>(attr.value.ints.values));
      }
      copy.ints.assign(attr.value.ints.values, attr.value.ints.values + attr.value.ints.count);
    }
  }
  return {};
}

// A kernel call copied out of the core's arrays and checked against the
// device's memory: what runs on the worker.
struct HostCall {
  const xdev_kernel_info_t* kernel = nullptr;  // static storage of the host kernels
  std::string at;                              // "Sub on Sim Accelerator 0 (sim:00)"
  std::vector<TensorView> inputs;
  std::vector<TensorView> outputs;
  std::vector<AttrCopy> attrs;
};

Failure check_call(const xdev_kernel_info_t& kernel, uint64_t input_dtypes,
                   const xdev_kernel_call_t& call, const Arena& arena, HostCall* out) {
  const char* op = kernel.op;
  out->kernel = &kernel;
  out->at = where(op, arena);
  const char* at = out->at.c_str();
  if (call.output_count == 0) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: the call has no output", at);
  }
  if ((call.input_count > 0 && call.inputs == nullptr) || call.outputs == nullptr) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: the %s array is NULL", at,
                        call.outputs == nullptr ? "outputs" : "inputs");
  }
  // Every tensor lies in live memory of this device (and is pinned there
  // until the work ran).
  out->inputs.resize(call.input_count);
  for (uint32_t i = 0; i < call.input_count; ++i) {
    if (Failure failure = make_view(std::string(op) + " input " + std::to_string(i),
                                    call.inputs[i], arena, &out->inputs[i])) {
      return failure;
    }
  }
  out->outputs.resize(call.output_count);
  for (uint32_t i = 0; i < call.output_count; ++i) {
    if (Failure failure = make_view(std::string(op) + " output " + std::to_string(i),
                                    call.outputs[i], arena, &out->outputs[i])) {
      return failure;
    }
  }
  // The kernel table's lookup (docs/plugin-abi.md): input 0's dtype (the
  // output's for an op without inputs) among the entry's input dtypes, the
  // output's among its output dtypes.
  const TensorView& key = call.input_count > 0 ? out->inputs[0] : out->outputs[0];
  if (!cpu::in_mask(key.dtype, input_dtypes)) {
    return make_failure(XDEV_STATUS_UNIMPLEMENTED,
                        "%s: no kernel for dtype %s (%s); registered: %s", at,
                        dtype_name(key.dtype).c_str(), key.role.c_str(),
                        mask_text(input_dtypes).c_str());
  }
  const TensorView& result = out->outputs[0];
  if (kernel.output_dtypes != 0 && !cpu::in_mask(result.dtype, kernel.output_dtypes)) {
    return make_failure(XDEV_STATUS_UNIMPLEMENTED,
                        "%s: no kernel for output dtype %s; registered: %s", at,
                        dtype_name(result.dtype).c_str(), mask_text(kernel.output_dtypes).c_str());
  }
  // docs/ops.md: outputs are contiguous, row-major, and alias nothing.
  for (size_t o = 0; o < out->outputs.size(); ++o) {
    const TensorView& output = out->outputs[o];
    if (!row_major(output)) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: %s must be contiguous and row-major",
                          at, output.role.c_str());
    }
    for (const TensorView& input : out->inputs) {
      if (overlap(input, output)) {
        return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: %s aliases %s", at,
                            output.role.c_str(), input.role.c_str());
      }
    }
    for (size_t other = 0; other < o; ++other) {
      if (overlap(out->outputs[other], output)) {
        return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s: %s aliases %s", at,
                            output.role.c_str(), out->outputs[other].role.c_str());
      }
    }
  }
  return copy_attrs(call, out->at, &out->attrs);
}

// ---------------------------------------------------------------------------
// Statuses of the host kernels on the worker

// The host kernel call in progress on this thread. The kernels report a
// failure through kernel_fail (below), which keeps it here as plain data: a
// status object made with the host's table would never reach the core, and
// only the core frees statuses.
struct HostRun {
  const xdev_host_api_t* log = nullptr;
  Failure failure;
};
thread_local HostRun* t_run = nullptr;

// What kernel_fail returns to the kernel. Never dereferenced; run() turns it
// back into t_run's failure, so it never leaves this file.
unsigned char g_failed;
xdev_status_t* failed_status() noexcept { return reinterpret_cast<xdev_status_t*>(&g_failed); }

void record_failure(xdev_status_code_t code, std::string message) noexcept {
  if (t_run == nullptr || t_run->failure) return;  // the first one counts
  t_run->failure.code = code;
  t_run->failure.message = std::move(message);
}

// The host kernels running on stream workers, and whether they may still
// start. A program may exit while a stream of the sim still has work queued
// (the core's global runtime is never destroyed): its workers then run on
// while the exit handlers tear down the libraries, and a host kernel entering
// oneTBB then died in oneTBB's destroyed scheduler ("pure virtual method
// called", 1 run in 60 of ops_fallback). So the sim closes the gate when
// this library's static objects are destroyed, which is before oneTBB's (the
// library depends on it, so oneTBB was initialized first): the kernels that
// run are waited for, and later ones do not run.
class HostKernelGate {
 public:
  // False once closed: the kernel must not run.
  bool enter() {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    ++running_;
    return true;
  }
  void leave() {
    std::lock_guard lock(mutex_);
    if (--running_ == 0) idle_.notify_all();
  }
  void close() {
    std::unique_lock lock(mutex_);
    closed_ = true;
    idle_.wait(lock, [this] { return running_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int running_ = 0;
  bool closed_ = false;
};

// Never destroyed: workers may still ask it after the exit handlers ran. In
// the library's own storage, not on the heap: a heap object would leak at
// every unload (LeakSanitizer).
HostKernelGate& gate() {
  alignas(HostKernelGate) static unsigned char storage[sizeof(HostKernelGate)];
  static HostKernelGate* const kGate = new (storage) HostKernelGate;
  return *kGate;
}

// Closes the gate when this library's static objects are destroyed (at exit
// or when the library is unloaded; then no stream is left, nothing waits).
struct CloseGateAtExit {
  CloseGateAtExit() { gate(); }
  ~CloseGateAtExit() { gate().close(); }
} g_close_gate_at_exit;

// Runs `call` on the worker: the addresses again (the core may have freed
// the memory since), then the host kernel over host pointers.
Failure run(const HostCall& call, const Arena& arena, const xdev_host_api_t* log) {
  std::vector<xdev_tensor_t> tensors;
  tensors.reserve(call.inputs.size() + call.outputs.size());
  for (const std::vector<TensorView>* views : {&call.inputs, &call.outputs}) {
    for (const TensorView& view : *views) {
      std::byte* first = nullptr;
      if (Failure failure = locate(view, arena, &first)) return failure;
      tensors.push_back(xdev_tensor_t{first, 0, view.dtype, static_cast<int32_t>(view.shape.size()),
                                      view.shape.data(), view.strides.data()});
    }
  }
  std::vector<const xdev_tensor_t*> pointers;
  for (const xdev_tensor_t& tensor : tensors) pointers.push_back(&tensor);
  std::vector<xdev_attr_t> attrs;
  for (const AttrCopy& copy : call.attrs) {
    xdev_attr_t attr = copy.attr;
    attr.name = copy.has_name ? copy.name.c_str() : nullptr;
    if (attr.kind == XDEV_ATTR_STRING) attr.value.s = copy.has_text ? copy.text.c_str() : nullptr;
    if (attr.kind == XDEV_ATTR_INTS) attr.value.ints.values = copy.ints.data();
    attrs.push_back(attr);
  }

  xdev_kernel_call_t host_call{};
  host_call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  host_call.op = call.kernel->op;
  host_call.inputs = call.inputs.empty() ? nullptr : pointers.data();
  host_call.input_count = static_cast<uint32_t>(call.inputs.size());
  host_call.outputs = pointers.data() + call.inputs.size();
  host_call.output_count = static_cast<uint32_t>(call.outputs.size());
  host_call.attrs = attrs.empty() ? nullptr : attrs.data();
  host_call.attr_count = static_cast<uint32_t>(attrs.size());
  // device and stream stay NULL: the host kernels do not use them.

  HostRun host_run{log, {}};
  t_run = &host_run;
  // In an arena of one slot: the kernel's oneTBB loops run on this worker
  // alone, so the sim starts no oneTBB worker threads. It then holds no
  // oneTBB scheduler handle, which would keep the cpu plugin's shutdown from
  // joining its own workers in a process that loads both (tbb::finalize
  // fails while another handle lives).
  struct Entered {
    ~Entered() {
      gate().leave();
      t_run = nullptr;
    }
  };
  xdev_status_t* status = nullptr;
  if (!gate().enter()) {
    t_run = nullptr;
    return make_failure(XDEV_STATUS_UNAVAILABLE, "%s: not run: the process is exiting",
                        call.at.c_str());
  }
  {
    const Entered entered;
    tbb::task_arena one_slot(1);
    one_slot.execute(
        [&] { status = call.kernel->fn(call.kernel->kernel_context, &host_call); });
  }
  if (status == nullptr) return {};
  if (status != failed_status() || !host_run.failure) {
    return make_failure(XDEV_STATUS_INTERNAL, "%s: the host kernel failed without saying why",
                        call.at.c_str());
  }
  host_run.failure.message = call.at + ", when it ran: " + host_run.failure.message;
  return host_run.failure;
}

}  // namespace

namespace {

// The comma-separated items of `list` (spaces around each dropped), each
// passed to `accept`, which returns false for an item it does not know; that
// item is then named in an INVALID_ARGUMENT failure with `what` it should be.
template <typename Accept>
Failure for_each_item(const char* variable, const char* list, const char* what, Accept&& accept) {
  std::string_view rest(list);
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!accept(item)) {
      return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                          "%s='%s': '%.*s' is not %s; the sim plugin does not start", variable,
                          list, static_cast<int>(item.size()), item.data(), what);
    }
    if (comma == std::string_view::npos) return {};
    rest.remove_prefix(comma + 1);
  }
}

}  // namespace

Failure select_kernels(const char* variable, const char* names,
                       std::vector<const xdev_kernel_info_t*>* out) {
  uint32_t count = 0;
  const xdev_kernel_info_t* const* all = cpu::kernel_infos(&count);
  out->clear();
  if (names == nullptr || names[0] == '\0') {
    out->assign(all, all + count);
    return {};
  }
  std::vector<std::string_view> wanted;
  if (Failure failure = for_each_item(
          variable, names,
          "an op the sim plugin has a kernel for (op names of docs/ops.md, comma-separated, "
          "e.g. MatMul,Add)",
          [&](std::string_view name) {
            wanted.push_back(name);
            return std::any_of(all, all + count, [name](const xdev_kernel_info_t* kernel) {
              return name == kernel->op;
            });
          })) {
    return failure;
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (std::find(wanted.begin(), wanted.end(), std::string_view(all[i]->op)) != wanted.end()) {
      out->push_back(all[i]);
    }
  }
  return {};
}

Failure select_dtypes(const char* variable, const char* names, uint64_t* out) {
  *out = ~uint64_t{0};
  if (names == nullptr || names[0] == '\0') return {};
  uint64_t mask = 0;
  if (Failure failure = for_each_item(
          variable, names,
          "a dtype of docs/ops.md (float32, float64, int32, int64, bool, float16, bfloat16, "
          "uint8, int8)",
          [&](std::string_view name) {
            for (xdev_dtype_t dtype :
                 {XDEV_DTYPE_FLOAT32, XDEV_DTYPE_FLOAT64, XDEV_DTYPE_INT32, XDEV_DTYPE_INT64,
                  XDEV_DTYPE_BOOL, XDEV_DTYPE_FLOAT16, XDEV_DTYPE_BFLOAT16, XDEV_DTYPE_UINT8,
                  XDEV_DTYPE_INT8}) {
              if (name == dtype_name(dtype)) {
                mask |= XDEV_DTYPE_BIT(dtype);
                return true;
              }
            }
            return false;
          })) {
    return failure;
  }
  *out = mask;
  return {};
}

Failure enqueue_kernel(const xdev_kernel_info_t& kernel, uint64_t input_dtypes,
                       const xdev_kernel_call_t& call, const Arena& arena, WorkQueue& queue,
                       const xdev_host_api_t* log) {
  HostCall host_call;
  if (Failure failure = check_call(kernel, input_dtypes, call, arena, &host_call)) return failure;
  // docs/ops.md: the core never calls a kernel whose outputs are all empty;
  // when it does, there is nothing to run.
  if (std::all_of(host_call.outputs.begin(), host_call.outputs.end(),
                  [](const TensorView& view) { return view.elements == 0; })) {
    return {};
  }
  queue.enqueue(
      [&arena, log, host_call = std::move(host_call)]() -> Failure {
        return run(host_call, arena, log);
      },
      /*delayed=*/true);
  return {};
}

}  // namespace xdev::sim

// ---------------------------------------------------------------------------
// What the host kernels leave to the plugin that links them
// (plugins/cpu/kernels/common.hpp): here, failures kept for the worker's
// next stream_synchronize and log lines to the calling instance's host.

namespace xdev::cpu {

xdev_status_t* kernel_fail(const xdev_kernel_call_t*, xdev_status_code_t code, const char* format,
                           ...) noexcept {
  va_list args;
  va_start(args, format);
  char text[1024];
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  try {
    sim::record_failure(code, text);
  } catch (...) {
    // No memory for the message: the run reports a failure without it.
  }
  return sim::failed_status();
}

void kernel_log(const xdev_kernel_call_t*, xdev_log_level_t level, const char* format,
                ...) noexcept {
  if (sim::t_run == nullptr || sim::t_run->log == nullptr) return;
  va_list args;
  va_start(args, format);
  xdev_plugin_vlog(sim::t_run->log, level, format, args);
  va_end(args);
}

xdev_status_t* kernel_unexpected(const xdev_kernel_call_t* call) noexcept {
  const char* op = call != nullptr && call->op != nullptr ? call->op : "kernel";
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return kernel_fail(call, XDEV_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
  } catch (const std::exception& error) {
    return kernel_fail(call, XDEV_STATUS_INTERNAL, "%s: unexpected exception: %s", op,
                       error.what());
  } catch (...) {
    return kernel_fail(call, XDEV_STATUS_INTERNAL, "%s: unexpected exception", op);
  }
}

}  // namespace xdev::cpu
