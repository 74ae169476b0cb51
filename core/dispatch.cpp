#include "dispatch.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <vector>

#include "log.hpp"
#include "runtime.hpp"
#include "status.hpp"
#include "thread_state.hpp"
#include "transfer/staging.hpp"

namespace xdev::detail {
namespace {

std::string dtype_text(OpId op, DType in, DType out) {
  std::string text(to_string(in));
  if (op == OpId::kCast) {
    text += " to ";
    text += to_string(out);
  }
  return text;
}

std::string device_list(Runtime& rt) {
  std::string out;
  for (const auto& d : rt.logical_devices()) {
    if (!out.empty()) out += ", ";
    out += d->name();
  }
  return out.empty() ? "none" : out;
}

// The canonical spelling of what a scope asked for (unset parts filled in).
std::string requested_name(const DeviceName& name) {
  std::string out = "/job:" + name.job.value_or("localhost");
  out += "/replica:" + std::to_string(name.replica.value_or(0));
  out += "/task:" + std::to_string(name.task.value_or(0));
  if (name.type) {
    out += "/device:" + *name.type + ":" + (name.id ? std::to_string(*name.id) : "*");
  }
  return out;
}

struct DecisionStore {
  std::mutex mutex;
  std::deque<Decision> decisions;        // never shrinks: cached pointers stay valid
  std::set<std::string> warned;          // soft placements already reported
};
DecisionStore& store() {
  static DecisionStore* s = new DecisionStore;
  return *s;
}

const Decision* decide(Runtime& rt, OpId op, DType in, DType out, const ScopeEntry* scope,
                       LogicalDeviceState* scope_device, LogicalDeviceState* inputs_device) {
  const auto& devices = rt.logical_devices();
  auto kernel_of = [&](LogicalDeviceState* d) { return d->kernels().find(op, in, out); };
  const std::string what = std::string(op_name(op)) + "(" + dtype_text(op, in, out) + ")";
  auto no_kernel = [&](LogicalDeviceState* d) {
    return "has no kernel for " + what + " (type " + d->info().device_type + ", plugin " +
           d->plugin()->name + ")";
  };

  LogicalDeviceState* best = nullptr;
  for (const auto& d : devices) {
    if (kernel_of(d.get()) != nullptr) {
      best = d.get();
      break;
    }
  }

  Decision decision;
  decision.op = std::string(op_name(op));
  if (scope != nullptr) {
    decision.requested = requested_name(scope->name);
    if (scope_device != nullptr && kernel_of(scope_device) != nullptr) {
      decision.device = scope_device;
      decision.rule = "scope";
    } else {
      std::string reason = scope_device != nullptr ? no_kernel(scope_device) : "unknown device";
      if (!soft_device_placement()) {
        throw Error(scope_device != nullptr ? ErrorCode::kUnimplemented : ErrorCode::kNotFound,
                    what + " cannot run: " + decision.requested + " " + reason +
                        " (soft placement is off; devices: " + device_list(rt) + ")");
      }
      if (best == nullptr) {
        throw Error(ErrorCode::kUnimplemented,
                    what + " cannot run: " + decision.requested + " " + reason +
                        ", and no other device has a kernel for it (devices: " +
                        device_list(rt) + ")");
      }
      decision.device = best;
      decision.soft = true;
      decision.fallback = scope_device != nullptr;
      decision.rule = decision.fallback ? "fallback" : "soft placement";
      decision.rejected.emplace_back(decision.requested, reason);
      std::lock_guard lock(store().mutex);
      if (store().warned.insert(what + "@" + decision.requested).second) {
        log(XDEV_LOG_WARNING, "soft placement: " + what + " asked for " + decision.requested +
                                  ", which " + (scope_device ? reason : "is an unknown device") +
                                  "; running it on " + best->name());
      }
    }
  } else {
    if (best == nullptr) {
      throw Error(ErrorCode::kUnimplemented,
                  what + ": no device has a kernel for it (devices: " + device_list(rt) + ")");
    }
    if (inputs_device != nullptr && kernel_of(inputs_device) != nullptr &&
        inputs_device->priority() == best->priority()) {
      decision.device = inputs_device;
      decision.rule = "inputs";
    } else {
      decision.device = best;
      decision.rule = "priority";
    }
    if (!devices.empty() && devices.front()->priority() > decision.device->priority()) {
      decision.fallback = true;
      decision.rule = "fallback";
    }
  }
  decision.kernel = kernel_of(decision.device);
  for (const auto& d : devices) {
    if (d.get() == decision.device || d.get() == scope_device) continue;
    std::string reason;
    if (kernel_of(d.get()) == nullptr) {
      reason = no_kernel(d.get());
    } else if (scope != nullptr) {
      reason = "not the scope's device";
    } else if (d->priority() < decision.device->priority()) {
      reason = "lower priority";
    } else if (decision.rule == "inputs") {
      reason = "the inputs live on " + decision.device->name();
    } else {
      reason = "higher id";
    }
    decision.rejected.emplace_back(d->name(), std::move(reason));
  }
  std::lock_guard lock(store().mutex);
  store().decisions.push_back(std::move(decision));
  return &store().decisions.back();
}

using CacheSlot = PlacementCacheSlot;

const Decision* place(Runtime& rt, OpId op, DType in, DType out,
                      LogicalDeviceState* inputs_device) {
  const uint64_t generation = placement_generation();
  ScopeEntry* scope = current_scope();
  LogicalDeviceState* scope_device = nullptr;
  if (scope != nullptr) {
    if (scope->generation != generation) {
      scope->device = rt.find_logical_device(scope->name);
      scope->generation = generation;
    }
    scope_device = scope->device;
    // An unknown device is rare: decide every time (the message names it).
    if (scope_device == nullptr) return decide(rt, op, in, out, scope, nullptr, nullptr);
  }
  uint64_t key = static_cast<uint64_t>(op) | (static_cast<uint64_t>(in) << 8) |
                 (static_cast<uint64_t>(out) << 12) |
                 (static_cast<uint64_t>(scope_device ? scope_device->index() + 1 : 0) << 16) |
                 (static_cast<uint64_t>(inputs_device ? inputs_device->index() + 1 : 0) << 32) |
                 (uint64_t{1} << 63);
  uint64_t hash = key * 0x9E3779B97F4A7C15ull;
  CacheSlot& slot = thread_state().cache[(hash >> 56) & 0xFF];
  if (slot.key == key && slot.generation == generation) return slot.decision;
  const Decision* decision = decide(rt, op, in, out, scope, scope_device, inputs_device);
  slot = CacheSlot{key, generation, decision};
  return decision;
}

// Host <-> device transfers. The caller must not hold the device's stream lock.
void copy_within(LogicalDeviceState* dev, void* dst, const void* src, uint64_t bytes) {
  std::lock_guard lock(dev->stream_mutex());
  check(dev->api()->copy_device_to_device(dev->stream(), dst, src, bytes),
        "copying " + std::to_string(bytes) + " bytes within " + dev->name());
}

void transfer(LogicalDeviceState* src, const char* src_ptr, LogicalDeviceState* dst,
              char* dst_ptr, uint64_t bytes) {
  if (bytes == 0) return;
  if (src == dst) {
    copy_within(dst, dst_ptr, src_ptr, bytes);
    return;
  }
  src->synchronize();
  if (src->handle() == dst->handle()) {
    // Two logical devices of one physical device.
    copy_within(dst, dst_ptr, src_ptr, bytes);
    dst->synchronize();
    return;
  }
  if (src->plugin() == dst->plugin() && (dst->api()->capabilities & XDEV_CAP_PEER_COPY)) {
    xdev_status_t* status;
    {
      std::lock_guard lock(dst->stream_mutex());
      status = dst->api()->copy_peer(dst->stream(), dst_ptr, src->handle(), src_ptr, bytes);
    }
    if (status == nullptr) {
      dst->synchronize();
      return;
    }
    if (status->code != XDEV_STATUS_UNIMPLEMENTED) {
      check(status, "peer copy of " + std::to_string(bytes) + " bytes from " + src->name() +
                        " to " + dst->name());
    }
    StatusPtr ignored(status);  // no direct path for this pair: stage below
  }
  if (src->host_addressable()) {
    upload(dst, dst_ptr, 0, src_ptr, bytes);
  } else if (dst->host_addressable()) {
    download(src, src_ptr, 0, dst_ptr, bytes);
  } else {
    std::vector<char> staging(bytes);
    download(src, src_ptr, 0, staging.data(), bytes);
    upload(dst, dst_ptr, 0, staging.data(), bytes);
  }
}

}  // namespace

void upload(LogicalDeviceState* dst, void* dst_data, uint64_t dst_offset, const void* host,
            uint64_t bytes) {
  if (bytes == 0) return;
  char* target = static_cast<char*>(dst_data) + dst_offset;
  if (dst->host_addressable()) {
    dst->synchronize();
    std::memcpy(target, host, bytes);
    return;
  }
  if (dst->staging().upload(target, host, bytes)) return;  // pinned, double-buffered
  {
    std::lock_guard lock(dst->stream_mutex());
    check(dst->api()->copy_host_to_device(dst->stream(), target, host, bytes),
          "copying " + std::to_string(bytes) + " bytes to " + dst->name());
  }
  // The host buffer may go away when we return.
  dst->synchronize();
}

void download(LogicalDeviceState* src, const void* src_data, uint64_t src_offset, void* host,
              uint64_t bytes) {
  if (bytes == 0) return;
  const char* source = static_cast<const char*>(src_data) + src_offset;
  if (src->host_addressable()) {
    src->synchronize();
    std::memcpy(host, source, bytes);
    return;
  }
  if (src->staging().download(host, source, bytes)) return;  // pinned, double-buffered
  {
    std::lock_guard lock(src->stream_mutex());
    check(src->api()->copy_device_to_host(src->stream(), host, source, bytes),
          "copying " + std::to_string(bytes) + " bytes from " + src->name());
  }
  src->synchronize();
}

std::shared_ptr<TensorImpl> copy_tensor(const TensorImpl& src, LogicalDeviceState* dst) {
  const uint64_t item = itemsize(src.dtype);
  if (src.contiguous() || src.num_elements() == 0) {
    auto out = make_tensor(dst, src.dtype, src.shape);
    transfer(src.device(), static_cast<const char*>(src.storage->data) + src.byte_offset, dst,
             static_cast<char*>(out->storage->data), src.num_elements() * item);
    return out;
  }
  // A strided view: move only the bytes it spans, keep its strides.
  auto out = std::make_shared<TensorImpl>();
  auto storage = std::make_shared<Storage>(dst, std::max<uint64_t>(src.span_bytes(), 1));
  out->storage = storage.get();
  out->owner = storage;
  out->dtype = src.dtype;
  out->shape = src.shape;
  out->strides = src.strides;
  out->byte_offset = 0;
  transfer(src.device(), static_cast<const char*>(src.storage->data) + src.byte_offset, dst,
           static_cast<char*>(storage->data), src.span_bytes());
  return out;
}

LogicalDeviceState* resolve_device(std::string_view text) {
  Runtime& rt = Runtime::global();
  DeviceName name = DeviceName::parse(text);
  LogicalDeviceState* device = rt.find_logical_device(name);
  if (device == nullptr) {
    throw Error(ErrorCode::kNotFound, requested_name(name) + " unknown device (devices: " +
                                          device_list(rt) + ")");
  }
  return device;
}

LogicalDeviceState* place_creation(const char* op_name) {
  Runtime& rt = Runtime::global();
  const auto& devices = rt.logical_devices();
  if (devices.empty()) {
    throw Error(ErrorCode::kUnavailable,
                std::string(op_name) + ": there is no device (no plugin reported one; see "
                                       "xdev-smi)");
  }
  ScopeEntry* scope = current_scope();
  if (scope == nullptr) return devices.front().get();
  const uint64_t generation = placement_generation();
  if (scope->generation != generation) {
    scope->device = rt.find_logical_device(scope->name);
    scope->generation = generation;
  }
  if (scope->device != nullptr) return scope->device;
  std::string requested = requested_name(scope->name);
  if (!soft_device_placement()) {
    throw Error(ErrorCode::kNotFound, std::string(op_name) + " cannot run: " + requested +
                                          " unknown device (soft placement is off; devices: " +
                                          device_list(rt) + ")");
  }
  count_soft_placement();
  std::lock_guard lock(store().mutex);
  if (store().warned.insert(std::string(op_name) + "@" + requested).second) {
    log(XDEV_LOG_WARNING, std::string("soft placement: ") + op_name + " asked for " + requested +
                              ", which is an unknown device; running it on " +
                              devices.front()->name());
  }
  return devices.front().get();
}

Tensor run_op(const OpRequest& request, std::span<const Tensor> inputs, const Attrs& attrs) {
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
              const Attrs& attrs) {
  Runtime& rt = Runtime::global();
  rt.ensure_initialized();

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
  if (decision->fallback) count_fallback();
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
        throw Error(ErrorCode::kFailedPrecondition,
                    std::string(op_name(request.op)) + ": input " + std::to_string(i) +
                        " lives on " + impl->device()->name() + " but the op runs on " +
                        device->name() + " (strict placement: copy it with .to() first)");
      }
      auto copy = copy_tensor(*impl, device);
      uint64_t bytes = copy->span_bytes();
      count_implicit_copy(impl->device()->name(), device->name(), bytes);
      bytes_copied += bytes;
      in[i] = copy.get();
      moved.push_back(std::move(copy));
    }
    if (request.contiguous_inputs && !in[i]->contiguous()) {
      // Gather on the host and upload: rare (transposed views), and exact.
      std::shared_ptr<TensorImpl> base = moved.empty() || moved.back().get() != in[i]
                                             ? impl
                                             : moved.back();
      HostTensor host = read_to_host(*base);
      auto dense = make_tensor(device, host.dtype(), host.shape());
      upload(device, dense->storage->data, 0, host.bytes(), host.byte_size());
      in[i] = dense.get();
      moved.push_back(std::move(dense));
    }
  }

  std::shared_ptr<TensorImpl> out =
      make_tensor(device, request.output_dtype, request.output_shape);
  if (out->num_elements() > 0) {
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
      const TensorImpl* t = in[i];
      descs[i] = xdev_tensor_t{t->storage->data, t->byte_offset,
                               static_cast<xdev_dtype_t>(t->dtype), t->shape.rank(),
                               t->shape.data(), t->strides.data()};
      desc_ptrs[i] = &descs[i];
    }
    xdev_tensor_t out_desc{out->storage->data, 0, static_cast<xdev_dtype_t>(out->dtype),
                           out->shape.rank(), out->shape.data(), out->strides.data()};
    const xdev_tensor_t* out_ptr = &out_desc;

    xdev_kernel_call_t call{};
    call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
    call.op = decision->op.c_str();
    call.device = device->handle();
    call.stream = device->stream();
    call.inputs = desc_ptrs;
    call.input_count = static_cast<uint32_t>(inputs.size());
    call.outputs = &out_ptr;
    call.output_count = 1;
    call.attrs = attrs.data();
    call.attr_count = attrs.size();
    xdev_status_t* status;
    if (device->concurrent_streams()) {
      status = decision->kernel->fn(decision->kernel->context, &call);
    } else {
      std::lock_guard lock(device->stream_mutex());
      status = decision->kernel->fn(decision->kernel->context, &call);
    }
    if (status != nullptr) {
      check(status, decision->op + "(" + std::string(to_string(request.input_dtype)) + ") on " +
                        device->name() + " (plugin " + device->plugin()->name + ")");
    }
  }
  if (log_placement_enabled()) log_placement(decision->op, device->name());
  record_placement(decision, bytes_copied);
  return Tensor(std::move(out));
}

}  // namespace xdev::detail
