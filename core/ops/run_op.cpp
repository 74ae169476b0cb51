#include "ops/run_op.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "common/plugin_call.hpp"
#include "common/status.hpp"
#include "devices/runtime.hpp"
#include "ops/kernel_scratch.hpp"
#include "tensors/op_record.hpp"
#include "placement/decide.hpp"
#include "trace/trace.hpp"
#include "transfer/copy.hpp"

namespace xdev::detail {

thread_local OpRecorder* t_op_recorder __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

// Calls `kernel` for `op` on `device`'s stream with `inputs` and one output.
void launch(LogicalDeviceState* device, const KernelEntry& kernel, const char* op, DType dtype,
            std::span<TensorImpl* const> inputs, std::span<const TensorImpl* const> outs,
            std::span<const xdev_attr_t> attrs) {
  constexpr size_t kInline = 8;
  std::array<xdev_tensor_t, kInline> inline_descs;
  std::array<const xdev_tensor_t*, kInline> inline_desc_ptrs;
  std::vector<xdev_tensor_t> heap_descs;
  std::vector<const xdev_tensor_t*> heap_desc_ptrs;
  xdev_tensor_t* descs = inline_descs.data();
  const xdev_tensor_t** desc_ptrs = inline_desc_ptrs.data();
  if (inputs.size() > kInline) {
    heap_descs.resize(inputs.size());
    heap_desc_ptrs.resize(inputs.size());
    descs = heap_descs.data();
    desc_ptrs = heap_desc_ptrs.data();
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl* t = inputs[i];
    // ABI 1.6: the allocation and the offset inside it (pool block + view).
    const DeviceMemory at = t->memory();
    descs[i] = xdev_tensor_t{at.allocation, at.offset,
                             static_cast<xdev_dtype_t>(t->dtype), t->shape.rank(),
                             t->shape.data(), t->strides.data()};
    desc_ptrs[i] = &descs[i];
  }
  std::array<xdev_tensor_t, kMaxOpOutputs> out_descs;
  std::array<const xdev_tensor_t*, kMaxOpOutputs> out_ptrs;
  for (size_t o = 0; o < outs.size(); ++o) {
    const TensorImpl& out = *outs[o];
    const DeviceMemory at = out.memory();
    out_descs[o] = xdev_tensor_t{at.allocation, at.offset,
                                 static_cast<xdev_dtype_t>(out.dtype), out.shape.rank(),
                                 out.shape.data(), out.strides.data()};
    out_ptrs[o] = &out_descs[o];
  }

  xdev_kernel_call_t call{};
  call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  call.op = op;
  call.device = device->handle();
  call.stream = device->stream();
  call.inputs = desc_ptrs;
  call.input_count = static_cast<uint32_t>(inputs.size());
  call.outputs = out_ptrs.data();
  call.output_count = static_cast<uint32_t>(outs.size());
  call.attrs = attrs.empty() ? nullptr : attrs.data();
  call.attr_count = static_cast<uint32_t>(attrs.size());
  // ABI 1.2: scratch memory from this device's pool (kernel_scratch.hpp),
  // returned to the pool when `scratch` dies, after the call.
  KernelScratch scratch(device);
  // A handle device cannot take an address: only scratch_allocate_at (1.6).
  call.scratch_allocate = device->handle_memory() ? nullptr : &KernelScratch::allocate;
  call.scratch_context = &scratch;
  call.scratch_allocate_at = &KernelScratch::allocate_at;
  PluginCallSite site = device->call_site("kernel");
  site.op = op;
  site.dtype = to_string(dtype);
  xdev_status_t* status;
  if (device->concurrent_streams()) {
    status = call_plugin(site, kernel.fn, kernel.context, &call);
  } else {
    LogicalDeviceState::StreamLock lock(*device);
    status = call_plugin(site, kernel.fn, kernel.context, &call);
  }
  if (status != nullptr) {
    check(status, std::string(op) + "(" + std::string(to_string(dtype)) + ") on " +
                      device->name() + " (plugin " + device->plugin()->name + ")");
  }
}

// A contiguous copy of the strided view `t` on `device` (where it lives),
// made by the device's own Copy kernel: device memory never travels through
// the host to change its layout. Only a device without a Copy kernel for the
// dtype gathers through the host (exact, but two trips over the bus).
std::shared_ptr<TensorImpl> make_contiguous(LogicalDeviceState* device, const TensorImpl& t) {
  auto dense = make_tensor(device, t.dtype, t.shape, "Copy");
  if (dense->num_elements() == 0) return dense;
  if (const KernelEntry* copy = device->kernels().find(OpId::kCopy, t.dtype, t.dtype)) {
    TensorImpl* const inputs[1] = {const_cast<TensorImpl*>(&t)};
    const TensorImpl* const outs[1] = {dense.get()};
    launch(device, *copy, "Copy", t.dtype, inputs, outs, {});
    return dense;
  }
  HostTensor host = read_to_host(t);
  upload(device, dense->memory(), host.bytes(), host.byte_size());
  return dense;
}

// Tracing (trace/trace.hpp): the placement decision on the host thread's
// track and the op on its device's track.
void trace_placement(const Decision& decision) {
  std::string rejected = "[";
  for (const auto& [name, why] : decision.rejected) {
    if (rejected.size() > 1) rejected += ',';
    rejected += "{\"device\":" + trace::quote(name) + ",\"why\":" + trace::quote(why) + "}";
  }
  rejected += ']';
  trace::Args placement;
  placement.str("op", decision.op)
      .str("chosen", decision.device->name())
      .str("rule", decision.rule);
  if (!decision.requested.empty()) placement.str("requested", decision.requested);
  placement.raw("rejected", rejected);
  trace::instant(trace::host_track(), "placement", "place " + decision.op, placement);
}

// Decisions are cached and reused (placement/decide.cpp): each is traced the
// first time an op uses it in a trace; every op event names its rule.
bool first_use_in_trace(const Decision* decision) {
  static std::mutex mutex;
  static std::unordered_set<const Decision*> seen;
  static uint64_t session = 0;
  std::lock_guard lock(mutex);
  if (session != trace::session()) {
    seen.clear();
    session = trace::session();
  }
  return seen.insert(decision).second;
}

void trace_op(const Decision& decision, const OpRequest& request,
              std::span<TensorImpl* const> inputs, const TensorImpl& out, uint64_t bytes_copied,
              uint64_t begin_ns, uint64_t end_ns) {
  LogicalDeviceState* device = decision.device;
  if (first_use_in_trace(&decision)) trace_placement(decision);
  std::string shapes = "[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i > 0) shapes += ',';
    shapes += trace::dims_json(inputs[i]->shape.data(), inputs[i]->shape.rank());
  }
  shapes += ']';
  trace::Args args;
  args.id("device", device->name())
      .str("plugin", device->plugin()->name)
      .id("input_dtype", to_string(request.input_dtype))
      .id("output_dtype", to_string(request.output_dtype))
      .raw("input_shapes", shapes)
      .raw("output_shape", trace::dims_json(out.shape.data(), out.shape.rank()))
      .id("placement", decision.rule)
      .num("implicit_copy_bytes", bytes_copied);
  trace::complete(trace::Track{device->index(), device->name()}, "op", decision.op, begin_ns,
                  end_ns, args);
}

}  // namespace

Tensor run_op(const OpRequest& request, std::span<const Tensor> inputs,
              std::span<const xdev_attr_t> attrs) {
  constexpr size_t kInline = 8;
  std::array<const Tensor*, kInline> inline_ptrs;
  std::vector<const Tensor*> heap_ptrs;
  const Tensor** ptrs = inline_ptrs.data();
  if (inputs.size() > kInline) {
    heap_ptrs.resize(inputs.size());
    ptrs = heap_ptrs.data();
  }
  for (size_t i = 0; i < inputs.size(); ++i) ptrs[i] = &inputs[i];
  return run_op(request, std::span<const Tensor* const>(ptrs, inputs.size()), attrs);
}

Tensor run_op(const OpRequest& request, std::span<const Tensor* const> inputs,
              std::span<const xdev_attr_t> attrs) {
  Tensor out;
  run_op_into(request, inputs, attrs, std::span<Tensor>(&out, 1));
  return out;
}

void run_op_into(const OpRequest& request, std::span<const Tensor* const> inputs,
                 std::span<const xdev_attr_t> attrs, std::span<Tensor> outputs) {
  if (outputs.size() != 1 + request.more_outputs.size() || outputs.size() > kMaxOpOutputs) {
    throw Error(ErrorCode::kInternal, std::string(op_name(request.op)) + ": " +
                                          std::to_string(outputs.size()) +
                                          " output tensors for a request of " +
                                          std::to_string(1 + request.more_outputs.size()));
  }
  Runtime& rt = Runtime::global();
  rt.ensure_initialized();
  const bool traced = trace::on();

  LogicalDeviceState* inputs_device = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    LogicalDeviceState* d = inputs[i]->impl()->device();
    if (i == 0) {
      inputs_device = d;
    } else if (d != inputs_device) {
      inputs_device = nullptr;
      break;
    }
  }
  const Decision* decision =
      place(rt, request.op, request.input_dtype, request.output_dtype, inputs_device);
  LogicalDeviceState* device = decision->device;
  if (decision->fallback) count_fallback(*decision);
  if (decision->soft) count_soft_placement();

  // Inputs on the op's device (copies kept alive in `moved`).
  constexpr size_t kInline = 8;
  std::array<TensorImpl*, kInline> inline_ptrs{};
  std::vector<TensorImpl*> heap_ptrs;
  TensorImpl** in = inline_ptrs.data();
  if (inputs.size() > kInline) {
    heap_ptrs.resize(inputs.size());
    in = heap_ptrs.data();
  }
  std::vector<std::shared_ptr<TensorImpl>> moved;
  uint64_t bytes_copied = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::shared_ptr<TensorImpl>& impl = inputs[i]->impl_ptr();
    in[i] = impl.get();
    if (impl->device() != device && request.share_physical_inputs &&
        impl->device()->handle() == device->handle()) {
      impl->device()->synchronize();
    } else if (impl->device() != device) {
      if (strict_placement()) {
        const std::string op(op_name(request.op));
        LogicalDeviceState* home = impl->device();
        if (home->kernels().find(request.op, request.input_dtype, request.output_dtype) ==
            nullptr) {
          // The cause is the missing kernel, not where the input lives.
          throw Error(ErrorCode::kFailedPrecondition,
                      "no kernel for op " + op + " on device " + home->name() + " (dtype " +
                          std::string(to_string(request.input_dtype)) + "), where input " +
                          std::to_string(i) + " lives; it would run on " + device->name() +
                          ", but strict placement forbids copying the input there");
        }
        throw Error(ErrorCode::kFailedPrecondition,
                    op + ": input " + std::to_string(i) + " lives on " + home->name() +
                        " but the op runs on " + device->name() +
                        " (strict placement: copy it with .to() first)");
      }
      auto copy = copy_tensor(*impl, device);
      uint64_t bytes = copy->span_bytes();
      count_implicit_copy(impl->device()->name(), device->name(), bytes);
      bytes_copied += bytes;
      in[i] = copy.get();
      moved.push_back(std::move(copy));
    }
    if (request.contiguous_inputs && !in[i]->contiguous()) {
      auto dense = make_contiguous(device, *in[i]);
      in[i] = dense.get();
      moved.push_back(std::move(dense));
    }
  }

  std::shared_ptr<TensorImpl> out =
      make_tensor(device, request.output_dtype, request.output_shape, op_name(request.op));
  // Further outputs (SoftmaxCrossEntropyWithLogits' backprop).
  std::array<std::shared_ptr<TensorImpl>, kMaxOpOutputs> more;
  std::array<const TensorImpl*, kMaxOpOutputs> outs{out.get()};
  bool any_elements = out->num_elements() > 0;
  for (size_t o = 0; o < request.more_outputs.size(); ++o) {
    const OutputRequest& r = request.more_outputs[o];
    more[o] = make_tensor(device, r.dtype, r.shape, op_name(request.op));
    outs[o + 1] = more[o].get();
    any_elements = any_elements || more[o]->num_elements() > 0;
  }
  const uint64_t begin_ns = traced ? trace::now_ns() : 0;
  if (any_elements) {
    launch(device, *decision->kernel, decision->op.c_str(), request.input_dtype,
           std::span<TensorImpl* const>(in, inputs.size()),
           std::span<const TensorImpl* const>(outs.data(), outputs.size()), attrs);
  }
  if (traced) {
    trace_op(*decision, request, std::span<TensorImpl* const>(in, inputs.size()), *out,
             bytes_copied, begin_ns, trace::now_ns());
  }
  if (log_placement_enabled()) log_placement(decision->op, device->name());
  record_placement(decision, bytes_copied);
  outputs[0] = Tensor(std::move(out));
  for (size_t o = 0; o < request.more_outputs.size(); ++o) outputs[o + 1] = Tensor(std::move(more[o]));
}

void Attrs::throw_full(const char* name) {
  throw Error(ErrorCode::kInternal, std::string("attribute '") + name + "' is one more than the " +
                                        std::to_string(kMaxOpAttrs) + " an op call can carry");
}

namespace {

// The inputs' dtypes and shapes for check_call; `info` has room for them.
void describe_inputs(const OpDef& def, std::span<const Tensor* const> inputs, InputInfo* info) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl* impl = inputs[i]->impl();
    if (impl == nullptr) {
      throw_invalid(def, (def.variadic && i + 1 >= def.inputs.size()
                              ? "input " + std::to_string(i)
                              : std::string(def.input(i).name)) +
                             " is an empty (default-constructed) tensor");
    }
    info[i] = InputInfo{impl->dtype, &impl->shape};
  }
}

// Storage for one entry per input: inline for the usual few, else on the heap.
template <typename T>
class PerInput {
 public:
  explicit PerInput(size_t n) {
    if (n > inline_.size()) heap_.reset(new T[n]);
    data_ = n > inline_.size() ? heap_.get() : inline_.data();
  }
  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }

 private:
  std::array<T, 8> inline_;
  std::unique_ptr<T[]> heap_;
  T* data_;
};

// An op call checked against the op's definition (describe_inputs, then
// check_call): all of check_defined_op, and where run_defined_op starts.
struct CheckedOpCall {
  CheckedOpCall(OpId op, std::span<const Tensor* const> inputs, const Attrs& attrs)
      : def(op_def(op)), info(inputs.size()) {
    describe_inputs(def, inputs, info.data());
    check_call(def, std::span<const InputInfo>(info.data(), inputs.size()), attrs, call);
  }
  const OpDef& def;
  PerInput<InputInfo> info;
  CheckedCall call;
};

// Runs `request` with the inputs whose shape differs from the output's
// passed as stride-0 views of it (run_defined_op, broadcast_inputs).
Tensor run_broadcast(const OpRequest& request, std::span<const Tensor* const> inputs,
                     std::span<const xdev_attr_t> kernel_attrs);

}  // namespace

void check_defined_op(OpId op, std::span<const Tensor* const> inputs, const Attrs& attrs) {
  [[maybe_unused]] const CheckedOpCall checked(op, inputs, attrs);
}

std::vector<Tensor> run_defined_op_outputs(OpId op, std::span<const Tensor* const> inputs,
                                           const Attrs& attrs) {
  CheckedOpCall checked(op, inputs, attrs);
  const OpDef& def = checked.def;
  const CheckedCall& call = checked.call;
  if (def.broadcast_inputs) {
    // Broadcast views are made for ops of one output (run_defined_op).
    throw Error(ErrorCode::kInternal, std::string(def.name) + ": broadcast_inputs needs one output");
  }
  std::array<OutputRequest, kMaxOpOutputs> more;
  for (size_t o = 1; o < call.output_count; ++o) {
    more[o - 1] = OutputRequest{call.output_dtypes[o], call.output_shapes[o]};
  }
  OpRequest request{op, call.kernel_input_dtype, call.output_dtypes[0], call.output_shapes[0],
                    def.contiguous_inputs};
  request.more_outputs = std::span<const OutputRequest>(more.data(), call.output_count - 1);
  std::vector<Tensor> outputs(call.output_count);
  const std::span<const xdev_attr_t> kernel_attrs(call.kernel_attrs.data(),
                                                  call.kernel_attr_count);
  run_op_into(request, inputs, kernel_attrs, outputs);
  if (OpRecorder* recorder = op_recorder()) recorder->record_op(op, inputs, kernel_attrs, outputs);
  return outputs;
}

Tensor run_defined_op(OpId op, std::span<const Tensor* const> inputs, const Attrs& attrs) {
  CheckedOpCall checked(op, inputs, attrs);
  const OpDef& def = checked.def;
  const CheckedCall& call = checked.call;
  PerInput<InputInfo>& info = checked.info;
  if (call.output_count != 1) {
    throw Error(ErrorCode::kInternal, std::string(def.name) + " has " +
                                          std::to_string(call.output_count) +
                                          " outputs: run it with run_defined_op_outputs");
  }
  const Shape& out = call.output_shapes[0];
  OpRequest request{op, call.kernel_input_dtype, call.output_dtypes[0], out,
                    def.contiguous_inputs};
  const std::span<const xdev_attr_t> kernel_attrs(call.kernel_attrs.data(),
                                                  call.kernel_attr_count);
  bool broadcast = false;
  if (def.broadcast_inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) broadcast = broadcast || !(*info[i].shape == out);
  }
  Tensor result;
  if (!broadcast) {
    result = run_op(request, inputs, kernel_attrs);
  } else {
    result = run_broadcast(request, inputs, kernel_attrs);
  }
  // The inputs as the caller gave them (not the broadcast views): the
  // gradient reduces back to their shapes.
  if (OpRecorder* recorder = op_recorder()) {
    recorder->record_op(op, inputs, kernel_attrs, std::span<const Tensor>(&result, 1));
  }
  return result;
}

namespace {

// Inputs of the output's shape go as they are; others as stride-0 views.
Tensor run_broadcast(const OpRequest& request, std::span<const Tensor* const> inputs,
                     std::span<const xdev_attr_t> kernel_attrs) {
  const Shape& out = request.output_shape;
  PerInput<const Tensor*> ptrs(inputs.size());
  PerInput<Tensor> views(inputs.size());
  const int rank = out.rank();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    const TensorImpl& impl = *t.impl();
    if (impl.shape == out) {
      ptrs[i] = &t;
      continue;
    }
    Shape strides;
    strides.resize(rank);
    for (int k = 0; k < rank; ++k) {
      const int src = k - (rank - impl.shape.rank());
      strides[static_cast<size_t>(k)] =
          src < 0 || impl.shape[static_cast<size_t>(src)] == 1
              ? 0
              : impl.strides[static_cast<size_t>(src)];
    }
    views[i] = Tensor(make_view(t.impl_ptr(), out, strides, impl.byte_offset));
    ptrs[i] = &views[i];
  }
  return run_op(request, std::span<const Tensor* const>(ptrs.data(), inputs.size()), kernel_attrs);
}

}  // namespace

}  // namespace xdev::detail
