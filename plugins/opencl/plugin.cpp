// The OpenCL plugin: OpenCL 1.2 devices through the ICD loader (README.md).
// This file: the ABI slots (devices, memory, streams, events, copies).
// Kernels: kernels.cpp; their OpenCL C: codegen.cpp; programs: programs.cpp.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.hpp"
#include "drivers.hpp"
#include "opencl_plugin_config.hpp"

namespace xdev::opencl {

ph::PluginHost g_host{"opencl"};

namespace {

// Address mode (README.md): set by the query for a core before 1.6 or by
// XDEV_OPENCL_MEMORY=addresses, read by initialize.
std::atomic<bool> g_address_mode{false};
// Made-up addresses of address mode: bits 62 and 55 set (non-canonical on
// x86-64, the kernel half on AArch64: a dereference faults), one 2^44-byte
// range per device.
constexpr uint64_t kAddressTag = UINT64_C(0x4080000000000000);
constexpr uint64_t kDeviceRange = UINT64_C(1) << 44;

std::string info_string(cl_device_id id, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(id, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string value(size, '\0');
  if (clGetDeviceInfo(id, what, size, value.data(), nullptr) != CL_SUCCESS) return {};
  value.resize(std::strlen(value.c_str()));
  return value;
}
template <typename T>
T info_value(cl_device_id id, cl_device_info what) {
  T value{};
  clGetDeviceInfo(id, what, sizeof value, &value, nullptr);
  return value;
}

// XDEV_OPENCL_CPU_DEVICES: "" or unset hides CPU-type OpenCL devices; else
// the type they appear as. Fails with a reason for a bad value.
xdev_status_t* cpu_device_type(const xdev_host_api_t* host, std::string* out) {
  out->clear();
  const char* value = std::getenv("XDEV_OPENCL_CPU_DEVICES");
  if (value == nullptr || value[0] == '\0') return nullptr;
  std::string type = value;
  for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!xdev_plugin_valid_type_name(value)) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "opencl plugin: XDEV_OPENCL_CPU_DEVICES='%s' is no device type name "
                       "(letters, digits and '_', starting with a letter, at most 31)",
                       value);
  }
  if (type == "CPU") {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "opencl plugin: XDEV_OPENCL_CPU_DEVICES=CPU: OpenCL CPU devices may not "
                       "take type CPU (CPU:0 is the host's cpu plugin); use GPU to let them "
                       "stand in for a GPU, or a type of their own such as OCL_CPU");
  }
  *out = type;
  return nullptr;
}

uint32_t type_index_for(xdev_plugin_t* p, const std::string& type, int32_t priority) {
  for (uint32_t i = 0; i < p->type_names.size(); ++i) {
    if (p->type_names[i] == type) return i;
  }
  p->type_names.push_back(type);
  xdev_device_type_info_t info{};
  info.struct_size = XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE;
  info.platform = "opencl";
  info.priority = priority;
  info.dlpack_device_type = XDEV_DLPACK_NONE;
  p->types.push_back(info);
  return static_cast<uint32_t>(p->types.size() - 1);
}

xdev_status_t* discover(xdev_plugin_t* p) {
  std::string cpu_type;
  if (xdev_status_t* s = cpu_device_type(p->host, &cpu_type)) return s;
  const std::string drivers = open_drivers_beside_foreign_llvm();
  if (!drivers.empty()) g_host.log(p->host, XDEV_LOG_INFO, "opencl plugin: %s", drivers.c_str());
  cl_uint platform_count = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &platform_count);
  if (err != CL_SUCCESS || platform_count == 0) {
    p->status_line = err == CL_SUCCESS || err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */
                         ? "no OpenCL platform (no ICD installed)"
                         : "clGetPlatformIDs failed: " + cl_error_name(err);
    return nullptr;
  }
  std::vector<cl_platform_id> platforms(platform_count);
  clGetPlatformIDs(platform_count, platforms.data(), nullptr);
  size_t hidden_cpus = 0;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(count);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
    std::vector<cl_device_id> used;
    for (cl_device_id id : ids) {
      const auto kind = info_value<cl_device_type>(id, CL_DEVICE_TYPE);
      std::string type;
      int32_t priority = XDEV_PRIORITY_GPU;
      if (kind & CL_DEVICE_TYPE_GPU) {
        type = "GPU";
      } else if (kind & CL_DEVICE_TYPE_CPU) {
        if (cpu_type.empty()) {
          ++hidden_cpus;
          continue;
        }
        type = cpu_type;
        if (type != "GPU") priority = XDEV_PRIORITY_CPU + 10;
      } else {
        continue;  // accelerators, custom devices: not yet
      }
      auto d = std::make_unique<DeviceInfo>();
      d->platform = platform;
      d->id = id;
      d->type_index = type_index_for(p, type, priority);
      d->name = info_string(id, CL_DEVICE_NAME);
      d->vendor = info_string(id, CL_DEVICE_VENDOR);
      d->driver = info_string(id, CL_DRIVER_VERSION);
      d->version = info_string(id, CL_DEVICE_VERSION);
      d->memory_total = info_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
      d->max_allocation = info_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      d->max_group = std::max<size_t>(1, info_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
      d->compute_units = std::max<cl_uint>(1, info_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
      d->cpu = (kind & CL_DEVICE_TYPE_CPU) != 0;
      d->unified_memory = info_value<cl_bool>(id, CL_DEVICE_HOST_UNIFIED_MEMORY) != 0 ||
                          (kind & CL_DEVICE_TYPE_CPU) != 0;
      const std::string extensions = info_string(id, CL_DEVICE_EXTENSIONS);
      d->fp64 = extensions.find("cl_khr_fp64") != std::string::npos;
      d->fp16 = extensions.find("cl_khr_fp16") != std::string::npos;
      d->cache_key = d->name + "|" + d->vendor + "|" + d->version + "|" + d->driver;
      d->description = "device: " + std::to_string(p->devices.size()) + ", name: " + d->name +
                       ", vendor: " + d->vendor + ", " + d->version + ", driver " + d->driver;
      d->properties.add("driver", d->driver);
      d->properties.add("vendor", d->vendor);
      d->properties.add("opencl_version", d->version);
      d->properties.add("fp64", d->fp64 ? "1" : "0");
      d->properties.add("fp16", d->fp16 ? "1" : "0");
      d->properties.add("opencl_device_type", (kind & CL_DEVICE_TYPE_GPU) ? "GPU" : "CPU");
      p->devices.push_back(std::move(d));
      used.push_back(id);
    }
    if (used.empty()) continue;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(platform), 0};
    cl_context context = clCreateContext(props, static_cast<cl_uint>(used.size()), used.data(),
                                         nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
      return g_host.fail(p->host, XDEV_STATUS_UNAVAILABLE,
                         "opencl plugin: clCreateContext failed for platform of %s: %s",
                         p->devices.back()->name.c_str(), cl_error_name(err).c_str());
    }
    p->contexts.push_back({platform, context});
  }
  for (auto& t : p->types) p->type_pointers.push_back(&t);
  for (size_t i = 0; i < p->types.size(); ++i) p->types[i].type = p->type_names[i].c_str();
  p->status_line = std::to_string(p->devices.size()) + " device(s)";
  if (hidden_cpus != 0) {
    p->status_line += ", " + std::to_string(hidden_cpus) +
                      " OpenCL CPU device(s) hidden (XDEV_OPENCL_CPU_DEVICES=GPU shows them)";
  }
  if (p->devices.empty() && hidden_cpus == 0) p->status_line = "no OpenCL GPU device";
  return nullptr;
}

cl_context context_of(xdev_plugin_t* p, cl_platform_id platform) {
  for (const auto& c : p->contexts) {
    if (c.platform == platform) return c.context;
  }
  return nullptr;
}

// ---- life cycle -----------------------------------------------------------

xdev_status_t* initialize(const xdev_plugin_init_args_t* args, xdev_plugin_t** out) noexcept {
  return g_host.initialize(args, out, [](xdev_plugin_t& p, const xdev_host_api_t* host) {
    p.host = host;
    p.registration = std::make_unique<ph::InstanceRegistration>(g_host, host);
    p.cache = std::make_unique<ProgramCache>(ProgramCache::directory_from_environment());
    p.address_mode = g_address_mode.load();
    if (xdev_status_t* s = discover(&p)) return s;
    register_kernels(&p);
    return static_cast<xdev_status_t*>(nullptr);
  });
}

void shutdown(xdev_plugin_t* p) noexcept {
  if (p == nullptr) return;
  for (auto& c : p->contexts) clReleaseContext(c.context);
  delete p;
}

const char* describe_status(xdev_plugin_t* p) noexcept {
  return p == nullptr ? "" : p->status_line.c_str();
}

xdev_status_t* device_types(xdev_plugin_t* p, const xdev_device_type_info_t* const** out,
                            uint32_t* out_count) noexcept {
  if (p == nullptr) return g_host.null_argument(nullptr, "device_types", "plugin");
  return g_host.hand_out(p->host, "device_types", "out_types", p->type_pointers.data(),
                         static_cast<uint32_t>(p->type_pointers.size()), out, out_count);
}

xdev_status_t* device_count(xdev_plugin_t* p, uint32_t* out) noexcept {
  if (auto* s = g_host.require(p ? p->host : nullptr, "device_count",
                               {{"plugin", p}, {"out_count", out}})) {
    return s;
  }
  *out = static_cast<uint32_t>(p->devices.size());
  return nullptr;
}

xdev_status_t* check_ordinal(xdev_plugin_t* p, uint32_t ordinal, const char* slot) {
  if (ordinal >= p->devices.size()) {
    return g_host.fail(p->host, XDEV_STATUS_NOT_FOUND,
                       "opencl plugin: %s: no device %u (the plugin has %zu)", slot, ordinal,
                       p->devices.size());
  }
  return nullptr;
}

xdev_status_t* device_get_properties(xdev_plugin_t* p, uint32_t ordinal,
                                     xdev_device_properties_t* props) noexcept {
  if (auto* s = g_host.require(p ? p->host : nullptr, "device_get_properties",
                               {{"plugin", p}, {"out_props", props}})) {
    return s;
  }
  if (auto* s = check_ordinal(p, ordinal, "device_get_properties")) return s;
  const DeviceInfo& d = *p->devices[ordinal];
  props->type_index = d.type_index;
  props->name = d.name.c_str();
  props->memory_total = d.memory_total;
  props->bus_id = "";
  props->numa_node = -1;
  props->description = d.description.c_str();
  props->properties = d.properties.data();
  props->property_count = d.properties.size();
  if (XDEV_HAS_FIELD(props, xdev_device_properties_t, memory_kind)) {
    props->max_allocation_bytes = d.max_allocation;
    props->memory_kind = d.unified_memory ? XDEV_MEMORY_KIND_HOST : XDEV_MEMORY_KIND_DEVICE;
  }
  return nullptr;
}

xdev_status_t* device_open(xdev_plugin_t* p, uint32_t ordinal, xdev_device_t** out) noexcept {
  if (auto* s = g_host.require(p ? p->host : nullptr, "device_open",
                               {{"plugin", p}, {"out_device", out}})) {
    return s;
  }
  if (auto* s = check_ordinal(p, ordinal, "device_open")) return s;
  return g_host.guard(p->host, "device_open", [&]() -> xdev_status_t* {
    auto d = std::make_unique<xdev_device_t>();
    d->plugin = p;
    d->ordinal = ordinal;
    d->info = p->devices[ordinal].get();
    d->host = p->host;
    d->context = context_of(p, d->info->platform);
    d->next_address = kAddressTag + kDeviceRange * ordinal;
    *out = d.release();
    return nullptr;
  });
}

void device_close(xdev_device_t* d) noexcept {
  if (d == nullptr) return;
  if (!d->allocations.empty()) {
    g_host.log(d->host, XDEV_LOG_WARNING, "opencl plugin: device_close on %s: %zu allocation(s) "
               "never freed; releasing them", d->info->name.c_str(), d->allocations.size());
  }
  for (auto& [mem, size] : d->allocations) clReleaseMemObject(mem);
  for (auto& [key, program] : d->programs) clReleaseProgram(program);
  delete d;
}

// ---- memory -----------------------------------------------------------------

xdev_status_t* memory_allocate(xdev_device_t* d, uint64_t size, uint64_t alignment,
                               void** out) noexcept {
  if (auto* s = g_host.require(d ? d->host : nullptr, "memory_allocate",
                               {{"device", d}, {"out_ptr", out}})) {
    return s;
  }
  if (auto* s = g_host.check_allocation(d->host, "memory_allocate", size, alignment)) return s;
  if (alignment > 4096) {
    return g_host.fail(d->host, XDEV_STATUS_INVALID_ARGUMENT,
                       "memory_allocate: alignment %" PRIu64 " is above 4096", alignment);
  }
  if (d->info->max_allocation != 0 && size > d->info->max_allocation) {
    return g_host.fail(d->host, XDEV_STATUS_INVALID_ARGUMENT,
                       "opencl plugin: memory_allocate on %s: %" PRIu64
                       " bytes is above the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE %" PRIu64,
                       d->info->name.c_str(), size, d->info->max_allocation);
  }
  return g_host.guard(d->host, "memory_allocate", [&]() -> xdev_status_t* {
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(d->context, CL_MEM_READ_WRITE, size, nullptr, &err);
    if (err != CL_SUCCESS) {
      return g_host.fail(d->host, err == CL_INVALID_BUFFER_SIZE ? XDEV_STATUS_INVALID_ARGUMENT
                                                                 : XDEV_STATUS_OUT_OF_MEMORY,
                         "opencl plugin: %s: clCreateBuffer of %" PRIu64 " bytes failed: %s",
                         d->info->name.c_str(), size, cl_error_name(err).c_str());
    }
    std::lock_guard lock(d->memory_mutex);
    d->allocations.emplace(mem, size);
    d->allocated_bytes += size;
    if (d->plugin->address_mode) {
      // A made-up address, past the last one with a gap (an address one
      // past the end belongs to no buffer), 4096-aligned.
      const uint64_t address = d->next_address;
      d->next_address = (address + size + 8191) & ~UINT64_C(4095);
      d->addresses.emplace(address, mem);
      *out = reinterpret_cast<void*>(address);
      return nullptr;
    }
    *out = mem;  // the handle itself (XDEV_CAP_HANDLE_MEMORY)
    return nullptr;
  });
}

void memory_free(xdev_device_t* d, void* ptr) noexcept {
  if (d == nullptr || ptr == nullptr) return;
  cl_mem mem = static_cast<cl_mem>(ptr);
  {
    std::lock_guard lock(d->memory_mutex);
    if (d->plugin->address_mode) {
      const auto a = d->addresses.find(reinterpret_cast<uint64_t>(ptr));
      mem = a != d->addresses.end() ? a->second : nullptr;
      if (mem != nullptr) d->addresses.erase(a);
    }
    const auto it = d->allocations.find(mem);
    if (it == d->allocations.end()) {
      g_host.log(d->host, XDEV_LOG_ERROR, "opencl plugin: memory_free on %s: %p is no "
                 "allocation of this device", d->info->name.c_str(), ptr);
      return;
    }
    d->allocated_bytes -= it->second;
    d->allocations.erase(it);
  }
  clReleaseMemObject(mem);
}

xdev_status_t* memory_query(xdev_device_t* d, uint64_t* out_free, uint64_t* out_total) noexcept {
  if (auto* s = g_host.require(d ? d->host : nullptr, "memory_query",
                               {{"device", d}, {"out_free", out_free}, {"out_total", out_total}})) {
    return s;
  }
  std::lock_guard lock(d->memory_mutex);
  *out_total = d->info->memory_total;
  *out_free = d->info->memory_total > d->allocated_bytes
                  ? d->info->memory_total - d->allocated_bytes : 0;
  return nullptr;
}

// ---- streams and events -----------------------------------------------------

xdev_status_t* stream_create(xdev_device_t* d, xdev_stream_t** out) noexcept {
  if (auto* s = g_host.require(d ? d->host : nullptr, "stream_create",
                               {{"device", d}, {"out_stream", out}})) {
    return s;
  }
  return g_host.guard(d->host, "stream_create", [&]() -> xdev_status_t* {
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(d->context, d->info->id, 0, &err);
    if (err != CL_SUCCESS) return cl_failure(d->host, d, "clCreateCommandQueue", err);
    cl_mem errors = clCreateBuffer(d->context, CL_MEM_READ_WRITE, 16, nullptr, &err);
    const cl_long zero[2] = {0, 0};
    if (err == CL_SUCCESS) {
      err = clEnqueueWriteBuffer(q, errors, CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr);
    }
    if (err != CL_SUCCESS) {
      if (errors != nullptr) clReleaseMemObject(errors);
      clReleaseCommandQueue(q);
      return cl_failure(d->host, d, "creating the stream's error flag", err);
    }
    *out = new xdev_stream_t{d, q, errors};
    return nullptr;
  });
}

void stream_destroy(xdev_stream_t* s) noexcept {
  if (s == nullptr) return;
  clFinish(s->queue);
  clReleaseMemObject(s->errors);
  clReleaseCommandQueue(s->queue);
  delete s;
}

xdev_status_t* stream_synchronize(xdev_stream_t* s) noexcept {
  if (s == nullptr) return g_host.null_argument(nullptr, "stream_synchronize", "stream");
  cl_int err = clFinish(s->queue);
  if (err != CL_SUCCESS) return cl_failure(s->device->host, s->device, "clFinish", err);
  if (!s->check_errors) return nullptr;
  s->check_errors = false;
  cl_long found[2] = {0, 0};
  err = clEnqueueReadBuffer(s->queue, s->errors, CL_TRUE, 0, sizeof found, found, 0, nullptr,
                            nullptr);
  if (err != CL_SUCCESS) return cl_failure(s->device->host, s->device, "reading the error flag", err);
  if (static_cast<cl_int>(found[0]) == 0) return nullptr;
  const cl_long zero[2] = {0, 0};
  err = clEnqueueWriteBuffer(s->queue, s->errors, CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return cl_failure(s->device->host, s->device, "clearing the error flag", err);
  return g_host.fail(s->device->host, XDEV_STATUS_INVALID_ARGUMENT,
                     "opencl plugin: %s on device %u (%s): index %lld is out of range (%s)",
                     s->error_op, s->device->ordinal, s->device->info->name.c_str(),
                     static_cast<long long>(found[1]), s->error_effect);
}

xdev_status_t* event_create(xdev_device_t* d, xdev_event_t** out) noexcept {
  if (auto* s = g_host.require(d ? d->host : nullptr, "event_create",
                               {{"device", d}, {"out_event", out}})) {
    return s;
  }
  return g_host.guard(d->host, "event_create", [&]() -> xdev_status_t* {
    *out = new xdev_event_t{d, nullptr};
    return nullptr;
  });
}

void event_destroy(xdev_event_t* e) noexcept {
  if (e == nullptr) return;
  if (e->event != nullptr) clReleaseEvent(e->event);
  delete e;
}

xdev_status_t* event_record(xdev_event_t* e, xdev_stream_t* s) noexcept {
  if (auto* st = g_host.require(e ? e->device->host : nullptr, "event_record",
                                {{"event", e}, {"stream", s}})) {
    return st;
  }
  cl_event marker = nullptr;
  const cl_int err = clEnqueueMarkerWithWaitList(s->queue, 0, nullptr, &marker);
  if (err != CL_SUCCESS) return cl_failure(s->device->host, s->device, "clEnqueueMarker", err);
  clFlush(s->queue);
  if (e->event != nullptr) clReleaseEvent(e->event);
  e->event = marker;
  return nullptr;
}

xdev_status_t* stream_wait_event(xdev_stream_t* s, xdev_event_t* e) noexcept {
  if (auto* st = g_host.require(s ? s->device->host : nullptr, "stream_wait_event",
                                {{"stream", s}, {"event", e}})) {
    return st;
  }
  if (e->event == nullptr) return nullptr;
  if (e->device->context != s->device->context) {
    // Another platform: wait on the host (the event is flushed already).
    const cl_int err = clWaitForEvents(1, &e->event);
    return err == CL_SUCCESS ? nullptr : cl_failure(s->device->host, e->device,
                                                    "clWaitForEvents", err);
  }
  const cl_int err = clEnqueueBarrierWithWaitList(s->queue, 1, &e->event, nullptr);
  if (err != CL_SUCCESS) return cl_failure(s->device->host, s->device, "clEnqueueBarrier", err);
  return nullptr;
}

xdev_status_t* event_synchronize(xdev_event_t* e) noexcept {
  if (e == nullptr) return g_host.null_argument(nullptr, "event_synchronize", "event");
  if (e->event == nullptr) return nullptr;
  const cl_int err = clWaitForEvents(1, &e->event);
  if (err != CL_SUCCESS) return cl_failure(e->device->host, e->device, "clWaitForEvents", err);
  return nullptr;
}

xdev_status_t* event_query(xdev_event_t* e, int32_t* out_done) noexcept {
  if (auto* st = g_host.require(e ? e->device->host : nullptr, "event_query",
                                {{"event", e}, {"out_done", out_done}})) {
    return st;
  }
  if (e->event == nullptr) {
    *out_done = 1;
    return nullptr;
  }
  cl_int state = CL_COMPLETE;
  const cl_int err = clGetEventInfo(e->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state,
                                    &state, nullptr);
  if (err != CL_SUCCESS) return cl_failure(e->device->host, e->device, "clGetEventInfo", err);
  if (state < 0) {
    return cl_failure(e->device->host, e->device, "the work before the event", state);
  }
  *out_done = state == CL_COMPLETE ? 1 : 0;
  return nullptr;
}

// ---- copies -----------------------------------------------------------------

xdev_status_t* copy_host_to_device_at(xdev_stream_t* s, void* dst, uint64_t dst_offset,
                                      const void* src, uint64_t size) noexcept {
  if (s == nullptr) return g_host.null_argument(nullptr, "copy_host_to_device_at", "stream");
  if (size == 0) return nullptr;
  if (src == nullptr) return g_host.null_argument(s->device->host, "copy_host_to_device_at", "src");
  Location to;
  if (auto* st = resolve(s->device, dst, dst_offset, size, "copy_host_to_device_at: dst", &to)) {
    return st;
  }
  const cl_int err = clEnqueueWriteBuffer(s->queue, to.mem, CL_FALSE, to.offset, size, src, 0,
                                          nullptr, nullptr);
  if (err != CL_SUCCESS) return cl_failure(s->device->host, s->device, "clEnqueueWriteBuffer", err);
  clFlush(s->queue);
  return nullptr;
}

xdev_status_t* copy_device_to_host_at(xdev_stream_t* s, void* dst, const void* src,
                                      uint64_t src_offset, uint64_t size) noexcept {
  if (s == nullptr) return g_host.null_argument(nullptr, "copy_device_to_host_at", "stream");
  if (size == 0) return nullptr;
  if (dst == nullptr) return g_host.null_argument(s->device->host, "copy_device_to_host_at", "dst");
  Location from;
  if (auto* st = resolve(s->device, src, src_offset, size, "copy_device_to_host_at: src", &from)) {
    return st;
  }
  const cl_int err = clEnqueueReadBuffer(s->queue, from.mem, CL_FALSE, from.offset, size, dst, 0,
                                         nullptr, nullptr);
  if (err != CL_SUCCESS) return cl_failure(s->device->host, s->device, "clEnqueueReadBuffer", err);
  clFlush(s->queue);
  return nullptr;
}

// Buffer to buffer on `s`; the buffers may belong to two devices of one
// context (copy_peer_at).
xdev_status_t* copy_buffers(xdev_stream_t* s, const char* slot, const Location& to,
                            const Location& from, uint64_t size) {
  if (from.mem == to.mem && from.offset < to.offset + size && to.offset < from.offset + size) {
    return g_host.fail(s->device->host, XDEV_STATUS_INVALID_ARGUMENT,
                       "opencl plugin: %s on %s: source and destination overlap", slot,
                       s->device->info->name.c_str());
  }
  const cl_int err = clEnqueueCopyBuffer(s->queue, from.mem, to.mem, from.offset, to.offset, size,
                                         0, nullptr, nullptr);
  if (err != CL_SUCCESS) return cl_failure(s->device->host, s->device, "clEnqueueCopyBuffer", err);
  clFlush(s->queue);
  return nullptr;
}

xdev_status_t* copy_device_to_device_at(xdev_stream_t* s, void* dst, uint64_t dst_offset,
                                        const void* src, uint64_t src_offset,
                                        uint64_t size) noexcept {
  if (s == nullptr) return g_host.null_argument(nullptr, "copy_device_to_device_at", "stream");
  if (size == 0) return nullptr;
  Location from, to;
  if (auto* st = resolve(s->device, src, src_offset, size, "copy_device_to_device_at: src", &from)) {
    return st;
  }
  if (auto* st = resolve(s->device, dst, dst_offset, size, "copy_device_to_device_at: dst", &to)) {
    return st;
  }
  return copy_buffers(s, "copy_device_to_device_at", to, from, size);
}

// Devices of one platform share a context, so their buffers copy directly.
xdev_status_t* copy_peer_at(xdev_stream_t* s, void* dst, uint64_t dst_offset,
                            xdev_device_t* src_device, const void* src, uint64_t src_offset,
                            uint64_t size) noexcept {
  if (auto* st = g_host.require(s ? s->device->host : nullptr, "copy_peer_at",
                                {{"stream", s}, {"src_device", src_device}})) {
    return st;
  }
  if (size == 0) return nullptr;
  if (src_device->context != s->device->context) {
    return g_host.fail(s->device->host, XDEV_STATUS_UNIMPLEMENTED,
                       "opencl plugin: copy_peer_at: %s and %s are on two OpenCL platforms",
                       src_device->info->name.c_str(), s->device->info->name.c_str());
  }
  Location from, to;
  if (auto* st = resolve(src_device, src, src_offset, size, "copy_peer_at: src", &from)) return st;
  if (auto* st = resolve(s->device, dst, dst_offset, size, "copy_peer_at: dst", &to)) return st;
  return copy_buffers(s, "copy_peer_at", to, from, size);
}

// Address mode's copy slots: an address is (its buffer, the offset in it),
// which locate() finds.
xdev_status_t* copy_host_to_device(xdev_stream_t* s, void* dst, const void* src,
                                   uint64_t size) noexcept {
  return copy_host_to_device_at(s, dst, 0, src, size);
}
xdev_status_t* copy_device_to_host(xdev_stream_t* s, void* dst, const void* src,
                                   uint64_t size) noexcept {
  return copy_device_to_host_at(s, dst, src, 0, size);
}
xdev_status_t* copy_device_to_device(xdev_stream_t* s, void* dst, const void* src,
                                     uint64_t size) noexcept {
  return copy_device_to_device_at(s, dst, 0, src, 0, size);
}
xdev_status_t* copy_peer(xdev_stream_t* s, void* dst, xdev_device_t* src_device, const void* src,
                         uint64_t size) noexcept {
  return copy_peer_at(s, dst, 0, src_device, src, 0, size);
}

xdev_status_t* kernels(xdev_plugin_t* p, const xdev_kernel_info_t* const** out,
                       uint32_t* out_count) noexcept {
  if (p == nullptr) return g_host.null_argument(nullptr, "kernels", "plugin");
  return g_host.hand_out(p->host, "kernels", "out_kernels", p->type_kernels.data(),
                         p->type_kernels.size(), out, out_count);
}

xdev_status_t* device_kernels(xdev_plugin_t* p, uint32_t ordinal,
                              const xdev_kernel_info_t* const** out,
                              uint32_t* out_count) noexcept {
  if (p == nullptr) return g_host.null_argument(nullptr, "device_kernels", "plugin");
  if (auto* s = check_ordinal(p, ordinal, "device_kernels")) return s;
  const DeviceInfo& d = *p->devices[ordinal];
  return g_host.hand_out(p->host, "device_kernels", "out_kernels", d.kernels.data(),
                         d.kernels.size(), out, out_count);
}

constexpr xdev_plugin_api_t kApi = [] {
  xdev_plugin_api_t api{};
  api.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE;
  api.abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  api.name = "opencl";
  api.plugin_version = XDEV_OPENCL_PLUGIN_VERSION;
  api.capabilities = XDEV_CAP_EVENTS | XDEV_CAP_PEER_COPY | XDEV_CAP_HANDLE_MEMORY;
  api.initialize = initialize;
  api.shutdown = shutdown;
  api.describe_status = describe_status;
  api.device_types = device_types;
  api.device_count = device_count;
  api.device_get_properties = device_get_properties;
  api.device_open = device_open;
  api.device_close = device_close;
  api.memory_allocate = memory_allocate;
  api.memory_free = memory_free;
  api.memory_query = memory_query;
  api.stream_create = stream_create;
  api.stream_destroy = stream_destroy;
  api.stream_synchronize = stream_synchronize;
  api.event_create = event_create;
  api.event_destroy = event_destroy;
  api.event_record = event_record;
  api.stream_wait_event = stream_wait_event;
  api.event_synchronize = event_synchronize;
  api.event_query = event_query;
  api.kernels = kernels;
  api.device_kernels = device_kernels;
  api.copy_host_to_device_at = copy_host_to_device_at;
  api.copy_device_to_host_at = copy_device_to_host_at;
  api.copy_device_to_device_at = copy_device_to_device_at;
  api.copy_peer_at = copy_peer_at;
  return api;
}();

// Address mode: made-up addresses, the old copy slots.
constexpr xdev_plugin_api_t kAddressApi = [] {
  xdev_plugin_api_t api = kApi;
  api.capabilities = XDEV_CAP_EVENTS | XDEV_CAP_PEER_COPY;
  api.copy_host_to_device = copy_host_to_device;
  api.copy_device_to_host = copy_device_to_host;
  api.copy_device_to_device = copy_device_to_device;
  api.copy_peer = copy_peer;
  return api;
}();

bool wants_address_mode(const xdev_plugin_query_args_t* args) {
  if (const char* mode = std::getenv("XDEV_OPENCL_MEMORY")) {
    if (std::strcmp(mode, "addresses") == 0) return true;
  }
  // A core before 1.6 cannot take handles.
  return args != nullptr && args->struct_size >= XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE &&
         (args->core_max_version.major == XDEV_ABI_VERSION_MAJOR &&
          args->core_max_version.minor < 6);
}

}  // namespace

std::string locate(xdev_device_t* d, const void* alloc, uint64_t offset, uint64_t size,
                   Location* out) {
  cl_mem mem = static_cast<cl_mem>(const_cast<void*>(alloc));
  std::lock_guard lock(d->memory_mutex);
  if (d->plugin->address_mode) {
    // An address anywhere inside a buffer: the buffer at or below it.
    const auto a = reinterpret_cast<uint64_t>(alloc);
    auto it = d->addresses.upper_bound(a);
    mem = nullptr;
    if (it != d->addresses.begin()) {
      --it;
      mem = it->second;
      offset += a - it->first;
    }
  }
  const auto it = d->allocations.find(mem);
  if (it == d->allocations.end()) {
    return ph::format("%p is no live allocation of device %u (%s)", alloc, d->ordinal,
                      d->info->name.c_str());
  }
  if (offset > it->second || size > it->second - offset) {
    return ph::format("%" PRIu64 " bytes at offset %" PRIu64 " overrun allocation %p of %" PRIu64
                      " bytes on device %u (%s)", size, offset, alloc, it->second, d->ordinal,
                      d->info->name.c_str());
  }
  *out = {mem, offset};
  return {};
}

xdev_status_t* resolve(xdev_device_t* d, const void* alloc, uint64_t offset, uint64_t size,
                       const char* what, Location* out) {
  const std::string why = locate(d, alloc, offset, size, out);
  if (why.empty()) return nullptr;
  return g_host.fail(d->host, XDEV_STATUS_INVALID_ARGUMENT, "opencl plugin: %s: %s", what,
                     why.c_str());
}

xdev_status_t* cl_failure(const xdev_host_api_t* host, const xdev_device_t* d, const char* call,
                          cl_int code) {
  return g_host.fail(host, status_code_for(code), "opencl plugin: device %u (%s): %s failed: %s",
                     d->ordinal, d->info->name.c_str(), call, cl_error_name(code).c_str());
}

}  // namespace xdev::opencl

extern "C" XDEV_PLUGIN_EXPORT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  using namespace xdev::opencl;
  const bool addresses = wants_address_mode(args);
  g_address_mode.store(addresses);
  return g_host.answer_query(args, addresses ? kAddressApi : kApi);
}
