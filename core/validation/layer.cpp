// The validation layer (layer.hpp). Each handle the layer gives out is a
// small object of its own (VPlugin, VDevice, VStream, VEvent) that holds the
// plugin's handle; each slot unwraps, calls the plugin, checks the answer
// and reports what is wrong. Device memory is read and written only through
// the plugin's copy slots, so devices whose memory the host cannot address
// are checked too.
#include "validation/layer.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace xdev::validation {
namespace {

struct Layer;

struct VPlugin {
  Layer* layer;
  xdev_plugin_t* real;
};

struct Allocation {
  char* base;         // what the plugin returned
  uint64_t size;      // what the caller asked for
  uint64_t guard;     // bytes before and after
};

struct VStream;
struct VEvent;

struct VDevice {
  Layer* layer;
  xdev_device_t* real;
  std::string label;
  std::mutex mutex;
  std::map<char*, Allocation> allocations;  // by the address the caller got
  std::set<VStream*> streams;
  std::set<VEvent*> events;
  xdev_stream_t* internal = nullptr;  // the layer's own, for guards and poison
  bool exact_memory = false;          // free == total at open
  uint64_t free_at_open = 0;
};

struct VStream {
  VDevice* device;
  xdev_stream_t* real;
};

struct VEvent {
  VDevice* device;
  xdev_event_t* real;
};

struct VKernel {
  Layer* layer;
  xdev_kernel_info_t info;  // as the plugin registered it (fn, context)
  xdev_kernel_info_t wrapped;
};

struct Layer {
  const xdev_plugin_api_t* real;
  const xdev_host_api_t* host;
  xdev_plugin_api_t table;
  Options options;
  std::mutex mutex;
  std::map<uint32_t, std::string> device_names;
  std::set<VDevice*> open_devices;
  // One kernel list as the plugin gave it, wrapped (read once).
  struct KernelList {
    std::vector<std::unique_ptr<VKernel>> kernels;
    std::vector<const xdev_kernel_info_t*> ptrs;
    bool read = false;
  };
  KernelList type_kernels;                       // `kernels`
  std::map<uint32_t, KernelList> device_kernels;  // ABI 1.5 `device_kernels`, by ordinal

  void report(std::string slot, std::string device, std::string tensor, std::string message) {
    Report r{options.plugin_file, std::move(slot), std::move(device), std::move(tensor),
             std::move(message)};
    std::lock_guard lock(mutex);
    if (options.sink) options.sink(r);
  }
  bool code_is(const xdev_status_t* s, xdev_status_code_t code) const {
    return s != nullptr && options.status_code && options.status_code(s) == code;
  }
  // A status the layer received from its own calls and does not pass on.
  void drop(xdev_status_t* s) const {
    if (s != nullptr && options.status_destroy) options.status_destroy(s);
  }
  std::string label(uint32_t ordinal) {
    std::lock_guard lock(mutex);
    auto it = device_names.find(ordinal);
    return "device " + std::to_string(ordinal) +
           (it != device_names.end() ? " (" + it->second + ")" : std::string());
  }
};

std::mutex g_layers_mutex;
std::map<const xdev_host_api_t*, Layer*>& layers_by_host() {
  static auto* m = new std::map<const xdev_host_api_t*, Layer*>;
  return *m;
}
// The layer wrapped last: the one a call with a NULL handle goes to (the
// core never passes NULL handles; the conformance runner wraps one plugin
// and passes them on purpose, to see the plugin refuse them).
Layer* g_last_layer = nullptr;
Layer* last_layer() {
  std::lock_guard lock(g_layers_mutex);
  return g_last_layer;
}

const char* dtype_name(xdev_dtype_t d) {
  switch (d) {
    case XDEV_DTYPE_FLOAT32: return "float32";
    case XDEV_DTYPE_FLOAT64: return "float64";
    case XDEV_DTYPE_INT32: return "int32";
    case XDEV_DTYPE_INT64: return "int64";
    case XDEV_DTYPE_BOOL: return "bool";
    case XDEV_DTYPE_FLOAT16: return "float16";
    case XDEV_DTYPE_BFLOAT16: return "bfloat16";
    case XDEV_DTYPE_UINT8: return "uint8";
    case XDEV_DTYPE_INT8: return "int8";
    default: return "invalid dtype";
  }
}

uint64_t element_size(xdev_dtype_t d) {
  switch (d) {
    case XDEV_DTYPE_FLOAT64:
    case XDEV_DTYPE_INT64: return 8;
    case XDEV_DTYPE_FLOAT32:
    case XDEV_DTYPE_INT32: return 4;
    case XDEV_DTYPE_FLOAT16:
    case XDEV_DTYPE_BFLOAT16: return 2;
    case XDEV_DTYPE_BOOL:
    case XDEV_DTYPE_UINT8:
    case XDEV_DTYPE_INT8: return 1;
    default: return 0;
  }
}

unsigned char canary_byte(xdev_dtype_t d) {
  return d == XDEV_DTYPE_FLOAT16 || d == XDEV_DTYPE_BFLOAT16 ? kHalfCanary : kCanary;
}

std::string tensor_text(const char* role, uint32_t index, const xdev_tensor_t& t) {
  std::string s = std::string(role) + " " + std::to_string(index) + " [";
  for (int32_t k = 0; k < t.rank && t.shape != nullptr; ++k) {
    if (k > 0) s += ',';
    s += std::to_string(t.shape[k]);
  }
  return s + "] " + dtype_name(t.dtype);
}

// Bytes of a dense row-major tensor, 0 when it is not dense or too large to
// check (the layer copies each output twice).
uint64_t dense_bytes(const xdev_tensor_t& t) {
  constexpr uint64_t kMaxChecked = uint64_t{1} << 28;
  const uint64_t item = element_size(t.dtype);
  if (item == 0 || t.rank < 0 || t.rank > XDEV_MAX_RANK || t.data == nullptr) return 0;
  uint64_t n = 1;
  int64_t expect = 1;
  for (int32_t k = t.rank - 1; k >= 0; --k) {
    const int64_t d = t.shape[k];
    if (d <= 0) return 0;
    if (d > 1 && t.strides[k] != expect) return 0;
    expect *= d;
    n *= static_cast<uint64_t>(d);
    if (n * item > kMaxChecked) return 0;
  }
  return n * item;
}

// --- device memory through the plugin's copy slots ------------------------

// Each helper returns the first failing status (the caller owns it) or NULL.
xdev_status_t* write_bytes(const Layer& l, xdev_stream_t* stream, void* dst, const void* src,
                           uint64_t size) {
  if (size == 0) return nullptr;
  return l.real->copy_host_to_device(stream, dst, src, size);
}
xdev_status_t* read_bytes(const Layer& l, xdev_stream_t* stream, void* dst, const void* src,
                          uint64_t size) {
  if (size == 0) return nullptr;
  return l.real->copy_device_to_host(stream, dst, src, size);
}

// The layer's stream of `d` (created on first use). Caller holds d->mutex.
xdev_stream_t* internal_stream(VDevice* d) {
  if (d->internal == nullptr) {
    xdev_stream_t* s = nullptr;
    xdev_status_t* e = d->layer->real->stream_create(d->real, &s);
    if (e == nullptr) d->internal = s;
    d->layer->drop(e);
  }
  return d->internal;
}

// --- the slots ------------------------------------------------------------

xdev_status_t* v_initialize(const xdev_plugin_init_args_t* args, xdev_plugin_t** out) {
  Layer* l = nullptr;
  {
    std::lock_guard lock(g_layers_mutex);
    auto it = layers_by_host().find(args != nullptr ? args->host : nullptr);
    l = it != layers_by_host().end() ? it->second : g_last_layer;
  }
  if (args == nullptr || out == nullptr) return l->real->initialize(args, out);
  xdev_plugin_t* real = nullptr;
  xdev_status_t* s = l->real->initialize(args, &real);
  if (s != nullptr) return s;
  if (real == nullptr) {
    l->report("initialize", "", "", "succeeded but returned no plugin state (NULL)");
    *out = nullptr;
    return nullptr;
  }
  *out = reinterpret_cast<xdev_plugin_t*>(new VPlugin{l, real});
  return nullptr;
}

VPlugin* vp(xdev_plugin_t* p) { return reinterpret_cast<VPlugin*>(p); }
VDevice* vd(xdev_device_t* d) { return reinterpret_cast<VDevice*>(d); }
VStream* vs(xdev_stream_t* s) { return reinterpret_cast<VStream*>(s); }
VEvent* ve(xdev_event_t* e) { return reinterpret_cast<VEvent*>(e); }

// The plugin's own handle behind each of ours (NULL stays NULL) and the layer
// a call goes to.
xdev_plugin_t* real(xdev_plugin_t* p) { return p != nullptr ? vp(p)->real : nullptr; }
xdev_device_t* real(xdev_device_t* d) { return d != nullptr ? vd(d)->real : nullptr; }
xdev_stream_t* real(xdev_stream_t* s) { return s != nullptr ? vs(s)->real : nullptr; }
xdev_event_t* real(xdev_event_t* e) { return e != nullptr ? ve(e)->real : nullptr; }
Layer* layer(xdev_plugin_t* p) { return p != nullptr ? vp(p)->layer : last_layer(); }
Layer* layer(xdev_device_t* d) { return d != nullptr ? vd(d)->layer : last_layer(); }
Layer* layer(xdev_stream_t* s) { return s != nullptr ? vs(s)->device->layer : last_layer(); }
Layer* layer(xdev_event_t* e) { return e != nullptr ? ve(e)->device->layer : last_layer(); }

void v_shutdown(xdev_plugin_t* plugin) {
  if (plugin == nullptr) return last_layer()->real->shutdown(nullptr);
  VPlugin* p = vp(plugin);
  Layer* l = p->layer;
  size_t open = 0;
  {
    std::lock_guard lock(l->mutex);
    open = l->open_devices.size();
  }
  if (open > 0) {
    l->report("shutdown", "", "",
              std::to_string(open) + " device(s) still open: shutdown before device_close");
  }
  l->real->shutdown(p->real);
  delete p;
}

const char* v_describe_status(xdev_plugin_t* plugin) {
  return layer(plugin)->real->describe_status(real(plugin));
}

xdev_status_t* v_device_types(xdev_plugin_t* plugin, const xdev_device_type_info_t* const** out,
                              uint32_t* out_count) {
  Layer* l = layer(plugin);
  xdev_status_t* s = l->real->device_types(real(plugin), out, out_count);
  if (s == nullptr && out != nullptr && out_count != nullptr && *out_count > 0 && *out == nullptr) {
    l->report("device_types", "", "",
                     "reported " + std::to_string(*out_count) + " types but no array");
  }
  return s;
}

xdev_status_t* v_device_count(xdev_plugin_t* plugin, uint32_t* out_count) {
  return layer(plugin)->real->device_count(real(plugin), out_count);
}

xdev_status_t* v_device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                       xdev_device_properties_t* props) {
  Layer* l = layer(plugin);
  xdev_status_t* s = l->real->device_get_properties(real(plugin), ordinal, props);
  // ABI 1.5: v_memory_allocate asks the plugin for the block and two guards
  // (at most 4096 bytes each); the core must leave room for them under the
  // device's largest single allocation.
  if (s == nullptr && props != nullptr &&
      XDEV_HAS_FIELD(props, xdev_device_properties_t, max_allocation_bytes) &&
      props->max_allocation_bytes != 0) {
    const uint64_t guards = 2 * std::max<uint64_t>(kGuardBytes, 4096);
    props->max_allocation_bytes =
        props->max_allocation_bytes > guards ? props->max_allocation_bytes - guards : 1;
  }
  if (s == nullptr && props != nullptr) {
    if (props->name == nullptr || props->name[0] == '\0') {
      l->report("device_get_properties", "device " + std::to_string(ordinal), "",
                       "succeeded but left the name empty");
    } else {
      std::lock_guard lock(l->mutex);
      l->device_names[ordinal] = props->name;
    }
  }
  return s;
}

xdev_status_t* v_device_open(xdev_plugin_t* plugin, uint32_t ordinal, xdev_device_t** out) {
  Layer* l = layer(plugin);
  if (plugin == nullptr || out == nullptr) return l->real->device_open(real(plugin), ordinal, out);
  VPlugin* p = vp(plugin);
  xdev_device_t* real = nullptr;
  xdev_status_t* s = l->real->device_open(p->real, ordinal, &real);
  if (s != nullptr) return s;
  auto* d = new VDevice{};
  d->layer = l;
  d->real = real;
  d->label = l->label(ordinal);
  if (real == nullptr) l->report("device_open", d->label, "", "succeeded but returned NULL");
  uint64_t free = 0, total = 0;
  if (real != nullptr) {
    if (xdev_status_t* e = l->real->memory_query(real, &free, &total)) {
      l->drop(e);
    } else {
      d->exact_memory = free == total;
      d->free_at_open = free;
    }
  }
  {
    std::lock_guard lock(l->mutex);
    l->open_devices.insert(d);
  }
  *out = reinterpret_cast<xdev_device_t*>(d);
  return nullptr;
}

void v_device_close(xdev_device_t* device) {
  if (device == nullptr) return last_layer()->real->device_close(nullptr);
  VDevice* d = vd(device);
  Layer* l = d->layer;
  std::vector<std::string> leaks;
  {
    std::lock_guard lock(d->mutex);
    if (!d->allocations.empty()) {
      leaks.push_back(std::to_string(d->allocations.size()) + " allocation(s)");
    }
    if (!d->streams.empty()) leaks.push_back(std::to_string(d->streams.size()) + " stream(s)");
    if (!d->events.empty()) leaks.push_back(std::to_string(d->events.size()) + " event(s)");
    if (d->internal != nullptr) {
      l->real->stream_destroy(d->internal);
      d->internal = nullptr;
    }
  }
  if (!leaks.empty()) {
    std::string what;
    for (const auto& s : leaks) what += (what.empty() ? "" : ", ") + s;
    l->report("device_close", d->label, "",
              what + " of this device were never released before device_close (the caller "
                     "leaked them)");
  } else if (d->exact_memory) {
    uint64_t free = 0, total = 0;
    if (xdev_status_t* s = l->real->memory_query(d->real, &free, &total)) {
      l->drop(s);
    } else if (free < d->free_at_open) {
      l->report("device_close", d->label, "",
                "memory_query reports " + std::to_string(d->free_at_open - free) +
                    " bytes less free than at device_open although every allocation, stream "
                    "and event was released: the plugin leaks (memory_free, stream_destroy "
                    "or event_destroy keeps memory)");
    }
  }
  {
    std::lock_guard lock(l->mutex);
    l->open_devices.erase(d);
  }
  l->real->device_close(d->real);
  delete d;
}

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

xdev_status_t* v_memory_allocate(xdev_device_t* device, uint64_t size, uint64_t alignment,
                                 void** out_ptr) {
  if (device == nullptr || out_ptr == nullptr) {
    return layer(device)->real->memory_allocate(real(device), size, alignment, out_ptr);
  }
  VDevice* d = vd(device);
  Layer* l = d->layer;
  const bool valid = size > 0 && power_of_two(alignment) && alignment <= 4096;
  const uint64_t guard = std::max<uint64_t>(kGuardBytes, alignment);
  if (!valid || size > UINT64_MAX - 2 * guard) {
    // The plugin must refuse; should it not, the block is tracked unguarded.
    xdev_status_t* s = l->real->memory_allocate(d->real, size, alignment, out_ptr);
    if (s == nullptr && *out_ptr != nullptr) {
      std::lock_guard lock(d->mutex);
      d->allocations[static_cast<char*>(*out_ptr)] =
          Allocation{static_cast<char*>(*out_ptr), size, 0};
    }
    return s;
  }
  void* base = nullptr;
  xdev_status_t* s = l->real->memory_allocate(d->real, size + 2 * guard, alignment, &base);
  if (s != nullptr) return s;
  if (base == nullptr) {
    l->report("memory_allocate", d->label, "",
              "succeeded but returned NULL for " + std::to_string(size) + " bytes");
    *out_ptr = nullptr;
    return nullptr;
  }
  if (reinterpret_cast<uintptr_t>(base) % std::min<uint64_t>(alignment, 64) != 0) {
    l->report("memory_allocate", d->label, "",
              "returned an address not aligned to " + std::to_string(alignment) + " bytes");
  }
  char* user = static_cast<char*>(base) + guard;
  std::lock_guard lock(d->mutex);
  if (xdev_stream_t* st = internal_stream(d)) {
    std::vector<unsigned char> pattern(guard, kGuard);
    xdev_status_t* e = write_bytes(*l, st, base, pattern.data(), guard);
    if (e == nullptr) e = write_bytes(*l, st, user + size, pattern.data(), guard);
    if (e == nullptr) e = l->real->stream_synchronize(st);
    if (e != nullptr) {
      l->report("memory_allocate", d->label, "",
                "copy_host_to_device into a block it just allocated failed");
      l->drop(e);
    }
  }
  d->allocations[user] = Allocation{static_cast<char*>(base), size, guard};
  *out_ptr = user;
  return nullptr;
}

// Reads both guards of `a`; reports overwritten bytes. Caller holds d->mutex.
void check_guards(VDevice* d, const Allocation& a, const char* slot, const std::string& when) {
  Layer* l = d->layer;
  xdev_stream_t* st = internal_stream(d);
  if (st == nullptr) return;
  std::vector<unsigned char> before(a.guard), after(a.guard);
  xdev_status_t* e = read_bytes(*l, st, before.data(), a.base, a.guard);
  if (e == nullptr) e = read_bytes(*l, st, after.data(), a.base + a.guard + a.size, a.guard);
  if (e == nullptr) e = l->real->stream_synchronize(st);
  if (e != nullptr) {
    l->drop(e);
    return;
  }
  auto changed = [](const std::vector<unsigned char>& v) {
    return static_cast<uint64_t>(std::count_if(v.begin(), v.end(),
                                               [](unsigned char c) { return c != kGuard; }));
  };
  const uint64_t b = changed(before), f = changed(after);
  if (b + f > 0) {
    l->report(slot, d->label, "",
              "the guard bytes around the " + std::to_string(a.size) + "-byte block at " +
                  std::to_string(reinterpret_cast<uintptr_t>(a.base + a.guard)) + " were overwritten (" +
                  std::to_string(b) + " before it, " + std::to_string(f) + " after it)" + when);
  }
}

void v_memory_free(xdev_device_t* device, void* ptr) {
  if (device == nullptr || ptr == nullptr) {
    layer(device)->real->memory_free(real(device), ptr);
    return;
  }
  VDevice* d = vd(device);
  Layer* l = d->layer;
  std::lock_guard lock(d->mutex);
  auto it = d->allocations.find(static_cast<char*>(ptr));
  if (it == d->allocations.end()) {
    l->report("memory_free", d->label, "",
              "a pointer that memory_allocate of this device did not return (or that was "
              "freed already): not passed on");
    return;
  }
  const Allocation a = it->second;
  d->allocations.erase(it);
  check_guards(d, a, "memory_free", ", found when it was freed");
  if (xdev_stream_t* st = internal_stream(d)) {
    std::vector<unsigned char> poison(static_cast<size_t>(std::min<uint64_t>(a.size, 1 << 20)),
                                      kPoison);
    for (uint64_t done = 0; done < a.size; done += poison.size()) {
      const uint64_t n = std::min<uint64_t>(poison.size(), a.size - done);
      if (xdev_status_t* e = write_bytes(*l, st, a.base + a.guard + done, poison.data(), n)) {
        l->drop(e);
        break;
      }
    }
    l->drop(l->real->stream_synchronize(st));
  }
  l->real->memory_free(d->real, a.base);
}

xdev_status_t* v_memory_query(xdev_device_t* device, uint64_t* out_free, uint64_t* out_total) {
  Layer* l = layer(device);
  xdev_status_t* s = l->real->memory_query(real(device), out_free, out_total);
  if (s == nullptr && device != nullptr && out_free != nullptr && out_total != nullptr &&
      *out_free > *out_total) {
    l->report("memory_query", vd(device)->label, "",
                     "free (" + std::to_string(*out_free) + ") exceeds total (" +
                         std::to_string(*out_total) + ")");
  }
  return s;
}

xdev_status_t* v_host_memory_allocate(xdev_device_t* device, uint64_t size, void** out) {
  Layer* l = layer(device);
  xdev_status_t* s = l->real->host_memory_allocate(real(device), size, out);
  if (s == nullptr && device != nullptr && out != nullptr && *out == nullptr) {
    l->report("host_memory_allocate", vd(device)->label, "", "succeeded but returned NULL");
  }
  return s;
}

void v_host_memory_free(xdev_device_t* device, void* ptr) {
  layer(device)->real->host_memory_free(real(device), ptr);
}

// stream_create/event_create and their destroy: the plugin's object wrapped
// in ours (V: VStream or VEvent), tracked in the device's set for the leak
// check at device_close.
template <typename V, typename Real>
xdev_status_t* create_tracked(const char* slot, xdev_device_t* device, Real** out,
                              xdev_status_t* (*const xdev_plugin_api_t::*create)(xdev_device_t*,
                                                                                 Real**),
                              std::set<V*> VDevice::*tracked) {
  if (device == nullptr || out == nullptr) return (layer(device)->real->*create)(real(device), out);
  VDevice* d = vd(device);
  Real* handle = nullptr;
  if (xdev_status_t* s = (d->layer->real->*create)(d->real, &handle)) return s;
  if (handle == nullptr) d->layer->report(slot, d->label, "", "succeeded but returned NULL");
  auto* w = new V{d, handle};
  {
    std::lock_guard lock(d->mutex);
    (d->*tracked).insert(w);
  }
  *out = reinterpret_cast<Real*>(w);
  return nullptr;
}

template <typename V, typename Real>
void destroy_tracked(Real* handle, void (*const xdev_plugin_api_t::*destroy)(Real*),
                     std::set<V*> VDevice::*tracked) {
  if (handle == nullptr) return (last_layer()->real->*destroy)(nullptr);
  V* w = reinterpret_cast<V*>(handle);
  {
    std::lock_guard lock(w->device->mutex);
    (w->device->*tracked).erase(w);
  }
  (w->device->layer->real->*destroy)(w->real);
  delete w;
}

xdev_status_t* v_stream_create(xdev_device_t* device, xdev_stream_t** out) {
  return create_tracked<VStream>("stream_create", device, out, &xdev_plugin_api_t::stream_create,
                                 &VDevice::streams);
}

void v_stream_destroy(xdev_stream_t* stream) {
  destroy_tracked<VStream>(stream, &xdev_plugin_api_t::stream_destroy, &VDevice::streams);
}

xdev_status_t* v_stream_synchronize(xdev_stream_t* stream) {
  return layer(stream)->real->stream_synchronize(real(stream));
}

xdev_status_t* v_event_create(xdev_device_t* device, xdev_event_t** out) {
  return create_tracked<VEvent>("event_create", device, out, &xdev_plugin_api_t::event_create,
                                &VDevice::events);
}

void v_event_destroy(xdev_event_t* event) {
  destroy_tracked<VEvent>(event, &xdev_plugin_api_t::event_destroy, &VDevice::events);
}

xdev_status_t* v_event_record(xdev_event_t* event, xdev_stream_t* stream) {
  return layer(event)->real->event_record(real(event), real(stream));
}

xdev_status_t* v_stream_wait_event(xdev_stream_t* stream, xdev_event_t* event) {
  return layer(stream)->real->stream_wait_event(real(stream), real(event));
}

xdev_status_t* v_event_synchronize(xdev_event_t* event) {
  return layer(event)->real->event_synchronize(real(event));
}

xdev_status_t* v_event_query(xdev_event_t* event, int32_t* out_done) {
  xdev_status_t* s = layer(event)->real->event_query(real(event), out_done);
  if (s == nullptr && event != nullptr && out_done != nullptr && *out_done != 0 &&
      *out_done != 1) {
    VEvent* e = ve(event);
    e->device->layer->report("event_query", e->device->label, "",
                             "set *out_done to " + std::to_string(*out_done) + ", not 0 or 1");
  }
  return s;
}

xdev_status_t* v_copy_h2d(xdev_stream_t* stream, void* dst, const void* src, uint64_t size) {
  return layer(stream)->real->copy_host_to_device(real(stream), dst, src, size);
}
xdev_status_t* v_copy_d2h(xdev_stream_t* stream, void* dst, const void* src, uint64_t size) {
  return layer(stream)->real->copy_device_to_host(real(stream), dst, src, size);
}
xdev_status_t* v_copy_d2d(xdev_stream_t* stream, void* dst, const void* src, uint64_t size) {
  return layer(stream)->real->copy_device_to_device(real(stream), dst, src, size);
}
xdev_status_t* v_copy_peer(xdev_stream_t* stream, void* dst, xdev_device_t* src_device,
                           const void* src, uint64_t size) {
  return layer(stream)->real->copy_peer(real(stream), dst, real(src_device), src, size);
}

// ABI 1.6 copies of (allocation, offset): the caller names a block the layer
// handed out; the plugin allocated it `guard` bytes earlier.
struct RealPlace {
  void* allocation;
  uint64_t offset;
};
RealPlace real_place(xdev_device_t* device, const void* allocation, uint64_t offset) {
  void* a = const_cast<void*>(allocation);
  if (device == nullptr || a == nullptr) return {a, offset};
  VDevice* d = vd(device);
  std::lock_guard lock(d->mutex);
  auto it = d->allocations.find(static_cast<char*>(a));
  if (it == d->allocations.end()) return {a, offset};  // the plugin judges it
  return {it->second.base, offset + it->second.guard};
}
xdev_device_t* device_of(xdev_stream_t* s) {
  return s != nullptr ? reinterpret_cast<xdev_device_t*>(vs(s)->device) : nullptr;
}

xdev_status_t* v_copy_h2d_at(xdev_stream_t* stream, void* dst, uint64_t dst_offset,
                             const void* src, uint64_t size) {
  const RealPlace d = real_place(device_of(stream), dst, dst_offset);
  return layer(stream)->real->copy_host_to_device_at(real(stream), d.allocation, d.offset, src,
                                                     size);
}
xdev_status_t* v_copy_d2h_at(xdev_stream_t* stream, void* dst, const void* src,
                             uint64_t src_offset, uint64_t size) {
  const RealPlace s = real_place(device_of(stream), src, src_offset);
  return layer(stream)->real->copy_device_to_host_at(real(stream), dst, s.allocation, s.offset,
                                                     size);
}
xdev_status_t* v_copy_d2d_at(xdev_stream_t* stream, void* dst, uint64_t dst_offset,
                             const void* src, uint64_t src_offset, uint64_t size) {
  const RealPlace d = real_place(device_of(stream), dst, dst_offset);
  const RealPlace s = real_place(device_of(stream), src, src_offset);
  return layer(stream)->real->copy_device_to_device_at(real(stream), d.allocation, d.offset,
                                                       s.allocation, s.offset, size);
}
xdev_status_t* v_copy_peer_at(xdev_stream_t* stream, void* dst, uint64_t dst_offset,
                              xdev_device_t* src_device, const void* src, uint64_t src_offset,
                              uint64_t size) {
  const RealPlace d = real_place(device_of(stream), dst, dst_offset);
  const RealPlace s = real_place(src_device, src, src_offset);
  return layer(stream)->real->copy_peer_at(real(stream), d.allocation, d.offset,
                                           real(src_device), s.allocation, s.offset, size);
}

xdev_status_t* v_event_elapsed_ms(xdev_event_t* start, xdev_event_t* end, double* out_ms) {
  if (start == nullptr || end == nullptr) {
    return layer(start)->real->event_elapsed_ms(real(start), real(end), out_ms);
  }
  VEvent* a = ve(start);
  VEvent* b = ve(end);
  if (a->device != b->device) {
    a->device->layer->report("event_elapsed_ms", a->device->label, "",
                             "called with events of two devices (the caller's mistake)");
  }
  return a->device->layer->real->event_elapsed_ms(a->real, b->real, out_ms);
}

xdev_status_t* v_stream_native_handle(xdev_stream_t* stream, int64_t* out) {
  return layer(stream)->real->stream_native_handle(real(stream), out);
}

// --- kernels --------------------------------------------------------------

// One output's checks: the canary before the kernel, the bytes around it.
struct OutputCheck {
  uint32_t index = 0;
  char* begin = nullptr;
  uint64_t bytes = 0;
  std::vector<unsigned char> canary, after_kernel;
  char* before_begin = nullptr;  // neighbours inside the enclosing allocation
  std::vector<unsigned char> before, before_after_kernel;
  char* after_begin = nullptr;
  std::vector<unsigned char> after, after_after_kernel;
};

// Kernel scratch (ABI 1.2) handed out during one call: the kernel may write
// it, so the bytes around an output that are scratch are not "outside".
struct ScratchSpy {
  void* (*allocate)(void*, uint64_t);
  void* context;
  std::vector<std::pair<char*, uint64_t>> given;
  void* (*allocate_at)(void*, uint64_t, uint64_t*) = nullptr;  // ABI 1.6
  static void* call(void* self, uint64_t size) {
    auto* spy = static_cast<ScratchSpy*>(self);
    void* p = spy->allocate(spy->context, size);
    if (p != nullptr) spy->given.emplace_back(static_cast<char*>(p), size);
    return p;
  }
  // scratch_allocate_at: the layer only wraps plugins whose memory is
  // addresses, so allocation + offset is where the scratch lies.
  static void* call_at(void* self, uint64_t size, uint64_t* out_offset) {
    auto* spy = static_cast<ScratchSpy*>(self);
    void* p = spy->allocate_at(spy->context, size, out_offset);
    if (p != nullptr) spy->given.emplace_back(static_cast<char*>(p) + *out_offset, size);
    return p;
  }
  bool covers(const char* p) const {
    for (const auto& [begin, size] : given) {
      if (p >= begin && p < begin + size) return true;
    }
    return false;
  }
};

xdev_status_t* v_kernel(void* context, const xdev_kernel_call_t* call) {
  VKernel* k = static_cast<VKernel*>(context);
  Layer* l = k->layer;
  if (call == nullptr || call->device == nullptr || call->stream == nullptr) {
    if (call == nullptr) return k->info.fn(k->info.kernel_context, nullptr);
    xdev_kernel_call_t bad;  // the plugin must refuse it: let it
    std::memset(&bad, 0, sizeof bad);
    std::memcpy(&bad, call, std::min<size_t>(call->struct_size, sizeof bad));
    bad.device = real(call->device);
    bad.stream = real(call->stream);
    return k->info.fn(k->info.kernel_context, &bad);
  }
  VDevice* d = vd(call->device);
  VStream* w = vs(call->stream);
  xdev_kernel_call_t fwd;
  std::memset(&fwd, 0, sizeof fwd);
  std::memcpy(&fwd, call, std::min<size_t>(call->struct_size, sizeof fwd));
  fwd.device = d->real;
  fwd.stream = w->real;
  ScratchSpy spy{nullptr, nullptr, {}};
  if (XDEV_HAS_FIELD(call, xdev_kernel_call_t, scratch_context) &&
      call->scratch_allocate != nullptr) {
    spy.allocate = call->scratch_allocate;
    spy.context = call->scratch_context;
    fwd.scratch_allocate = &ScratchSpy::call;
    fwd.scratch_context = &spy;
  }
  if (XDEV_HAS_FIELD(call, xdev_kernel_call_t, scratch_allocate_at) &&
      call->scratch_allocate_at != nullptr) {
    spy.allocate_at = call->scratch_allocate_at;
    spy.context = call->scratch_context;
    fwd.scratch_allocate_at = &ScratchSpy::call_at;
    fwd.scratch_context = &spy;
  }
  const std::string op = call->op != nullptr ? call->op : "?";
  const std::string slot = "kernel " + op;

  // A call with a dtype the kernel did not declare must be refused by it
  // (the conformance suite makes such calls on purpose; the core never
  // does): nothing to check around it.
  for (uint32_t i = 0; i < call->input_count; ++i) {
    const xdev_tensor_t* t = call->inputs != nullptr ? call->inputs[i] : nullptr;
    if (t == nullptr || (k->info.input_dtypes & XDEV_DTYPE_BIT(t->dtype)) == 0) {
      return k->info.fn(k->info.kernel_context, &fwd);
    }
  }

  if (call->output_count > 0 && call->outputs == nullptr) {
    return k->info.fn(k->info.kernel_context, &fwd);  // the kernel must refuse it
  }
  std::vector<OutputCheck> checks;
  for (uint32_t i = 0; i < call->output_count; ++i) {
    const xdev_tensor_t* t = call->outputs[i];
    if (t == nullptr) continue;
    const uint64_t bytes = dense_bytes(*t);
    if (bytes == 0) continue;
    OutputCheck c;
    c.index = i;
    c.begin = static_cast<char*>(t->data) + t->byte_offset;
    c.bytes = bytes;
    c.canary.assign(bytes, canary_byte(t->dtype));
    {
      std::lock_guard lock(d->mutex);
      auto it = d->allocations.upper_bound(c.begin);
      if (it != d->allocations.begin()) {
        --it;
        const Allocation& a = it->second;
        char* lo = a.base;
        char* hi = a.base + a.guard + a.size + a.guard;
        if (c.begin >= lo && c.begin + bytes <= hi) {
          c.before_begin = std::max(lo, c.begin - 256);
          c.before.resize(static_cast<size_t>(c.begin - c.before_begin));
          c.after_begin = c.begin + bytes;
          c.after.resize(static_cast<size_t>(std::min<ptrdiff_t>(256, hi - c.after_begin)));
        }
      }
    }
    xdev_status_t* e = read_bytes(*l, fwd.stream, c.before.data(), c.before_begin, c.before.size());
    if (e == nullptr) e = read_bytes(*l, fwd.stream, c.after.data(), c.after_begin, c.after.size());
    if (e == nullptr) e = write_bytes(*l, fwd.stream, c.begin, c.canary.data(), bytes);
    if (e != nullptr) return e;  // the plugin cannot copy here: its error is the kernel's
    checks.push_back(std::move(c));
  }
  if (!checks.empty()) {
    if (xdev_status_t* e = l->real->stream_synchronize(fwd.stream)) return e;
  }

  xdev_status_t* status = k->info.fn(k->info.kernel_context, &fwd);
  if (status != nullptr) {
    if (l->code_is(status, XDEV_STATUS_UNIMPLEMENTED) && call->input_count > 0 &&
        call->inputs[0] != nullptr &&
        (k->info.input_dtypes & XDEV_DTYPE_BIT(call->inputs[0]->dtype)) != 0) {
      l->report(slot, d->label, tensor_text("input", 0, *call->inputs[0]),
                "returned UNIMPLEMENTED for a dtype the kernel declares (input_dtypes)");
    }
    return status;
  }
  if (checks.empty()) return nullptr;
  for (OutputCheck& c : checks) {
    c.after_kernel.resize(c.bytes);
    c.before_after_kernel.resize(c.before.size());
    c.after_after_kernel.resize(c.after.size());
    xdev_status_t* e = read_bytes(*l, fwd.stream, c.after_kernel.data(), c.begin, c.bytes);
    if (e == nullptr) {
      e = read_bytes(*l, fwd.stream, c.before_after_kernel.data(), c.before_begin, c.before.size());
    }
    if (e == nullptr) {
      e = read_bytes(*l, fwd.stream, c.after_after_kernel.data(), c.after_begin, c.after.size());
    }
    if (e != nullptr) return e;
  }
  if (xdev_status_t* e = l->real->stream_synchronize(fwd.stream)) return e;

  for (const OutputCheck& c : checks) {
    const xdev_tensor_t& t = *call->outputs[c.index];
    const std::string tensor = tensor_text("output", c.index, t);
    const uint64_t item = element_size(t.dtype);
    const uint64_t n = c.bytes / item;
    uint64_t unwritten = 0, first = n;
    for (uint64_t e = 0; e < n; ++e) {
      bool canary = true;
      for (uint64_t b = 0; b < item && canary; ++b) {
        canary = c.after_kernel[e * item + b] == c.canary[0];
      }
      if (canary) {
        ++unwritten;
        if (first == n) first = e;
      }
    }
    // One-byte integers may hold the canary's value legitimately: only an
    // output left wholly untouched counts for them.
    const bool exact = item > 1 || t.dtype == XDEV_DTYPE_BOOL;
    if (unwritten == n && (exact || n >= 16)) {
      l->report(slot, d->label, tensor,
                "the kernel returned success but never wrote the output (all " +
                    std::to_string(n) + " elements still hold the canary)");
    } else if (unwritten > 0 && exact) {
      l->report(slot, d->label, tensor,
                "the kernel left " + std::to_string(unwritten) + " of " + std::to_string(n) +
                    " elements unwritten (the first at flat index " + std::to_string(first) + ")");
    }
    auto diff = [&spy](const char* at, const std::vector<unsigned char>& a,
                       const std::vector<unsigned char>& b) {
      uint64_t count = 0;
      for (size_t i = 0; i < a.size(); ++i) count += a[i] != b[i] && !spy.covers(at + i);
      return count;
    };
    const uint64_t before = diff(c.before_begin, c.before, c.before_after_kernel);
    const uint64_t after = diff(c.after_begin, c.after, c.after_after_kernel);
    if (after > 0) {
      l->report(slot, d->label, tensor,
                "the kernel wrote outside its output: " + std::to_string(after) +
                    " byte(s) changed in the " + std::to_string(c.after.size()) +
                    " bytes after its end");
    }
    if (before > 0) {
      l->report(slot, d->label, tensor,
                "the kernel wrote outside its output: " + std::to_string(before) +
                    " byte(s) changed in the " + std::to_string(c.before.size()) +
                    " bytes before its start");
    }
  }
  return nullptr;
}

// Hands out `list`, wrapping the plugin's answer (`real`, `count`) the first
// time; `slot` names the list in reports.
void wrap_kernel_list(Layer* l, Layer::KernelList& list, const char* slot,
                      const xdev_kernel_info_t* const* real, uint32_t count,
                      const xdev_kernel_info_t* const** out, uint32_t* out_count) {
  if (count > 0 && real == nullptr) {
    l->report(slot, "", "", "reported " + std::to_string(count) + " kernels but no array");
    count = 0;
  }
  if (!list.read) {
    list.read = true;
    for (uint32_t i = 0; i < count; ++i) {
      const xdev_kernel_info_t* info = real[i];
      if (info == nullptr || info->fn == nullptr) {
        list.kernels.push_back(nullptr);
        list.ptrs.push_back(info);  // the loader rejects it itself
        continue;
      }
      auto k = std::make_unique<VKernel>();
      k->layer = l;
      k->info = *info;
      k->wrapped = *info;
      k->wrapped.fn = &v_kernel;
      k->wrapped.kernel_context = k.get();
      list.ptrs.push_back(&k->wrapped);
      list.kernels.push_back(std::move(k));
    }
  }
  *out = list.ptrs.empty() ? nullptr : list.ptrs.data();
  *out_count = static_cast<uint32_t>(list.ptrs.size());
}

xdev_status_t* v_kernels(xdev_plugin_t* plugin, const xdev_kernel_info_t* const** out,
                         uint32_t* out_count) {
  Layer* l = layer(plugin);
  if (plugin == nullptr || out == nullptr || out_count == nullptr) {
    return l->real->kernels(real(plugin), out, out_count);
  }
  VPlugin* p = vp(plugin);
  const xdev_kernel_info_t* const* real = nullptr;
  uint32_t count = 0;
  xdev_status_t* s = l->real->kernels(p->real, &real, &count);
  if (s != nullptr) return s;
  std::lock_guard lock(l->mutex);
  wrap_kernel_list(l, l->type_kernels, "kernels", real, count, out, out_count);
  return nullptr;
}

// ABI 1.5: one device's own kernels, wrapped like the type's.
xdev_status_t* v_device_kernels(xdev_plugin_t* plugin, uint32_t ordinal,
                                const xdev_kernel_info_t* const** out, uint32_t* out_count) {
  Layer* l = layer(plugin);
  if (plugin == nullptr || out == nullptr || out_count == nullptr) {
    return l->real->device_kernels(real(plugin), ordinal, out, out_count);
  }
  VPlugin* p = vp(plugin);
  const xdev_kernel_info_t* const* real = nullptr;
  uint32_t count = 0;
  xdev_status_t* s = l->real->device_kernels(p->real, ordinal, &real, &count);
  if (s != nullptr) return s;
  std::lock_guard lock(l->mutex);
  wrap_kernel_list(l, l->device_kernels[ordinal], "device_kernels", real, count, out, out_count);
  return nullptr;
}

}  // namespace

std::string Report::text() const {
  std::string s = "validation: " + plugin_file + ": " + slot;
  if (!device.empty()) s += " on " + device;
  if (!tensor.empty()) s += ", " + tensor;
  return s + ": " + message;
}

// ABI 1.7: a communicator of the real plugin, with the layer that made it.
struct VComm {
  Layer* layer;
  xdev_communicator_t* real;
  xdev_device_t* device;  // the layer's device (its allocations name the buffers)
};
VComm* vc(xdev_communicator_t* c) { return reinterpret_cast<VComm*>(c); }

xdev_status_t* v_collective_id(xdev_plugin_t* plugin, uint8_t* id, size_t capacity,
                               size_t* out_size) {
  return layer(plugin)->real->collective_id(real(plugin), id, capacity, out_size);
}

xdev_status_t* v_communicator_create(xdev_plugin_t* plugin, const xdev_collective_init_t* init,
                                     xdev_device_t* const* devices, const int32_t* ranks,
                                     int32_t count, xdev_communicator_t** out_comms) {
  Layer* l = layer(plugin);
  std::vector<xdev_device_t*> real_devices;
  for (int32_t i = 0; devices != nullptr && i < count; ++i) real_devices.push_back(real(devices[i]));
  std::vector<xdev_communicator_t*> comms(count > 0 ? static_cast<size_t>(count) : 0, nullptr);
  xdev_status_t* s = l->real->communicator_create(real(plugin), init,
                                                  devices != nullptr ? real_devices.data() : nullptr,
                                                  ranks, count, comms.data());
  if (s == nullptr && out_comms != nullptr) {
    for (size_t i = 0; i < comms.size(); ++i) {
      out_comms[i] = reinterpret_cast<xdev_communicator_t*>(new VComm{l, comms[i], devices[i]});
    }
  }
  return s;
}

void v_communicator_destroy(xdev_communicator_t* comm) {
  if (comm == nullptr) return;
  vc(comm)->layer->real->communicator_destroy(vc(comm)->real);
  delete vc(comm);
}

void v_communicator_abort(xdev_communicator_t* comm) {
  if (comm == nullptr) return;
  vc(comm)->layer->real->communicator_abort(vc(comm)->real);
  delete vc(comm);
}

xdev_status_t* v_communicator_poll(xdev_communicator_t* comm) {
  if (comm == nullptr) return last_layer()->real->communicator_poll(nullptr);
  return vc(comm)->layer->real->communicator_poll(vc(comm)->real);
}

xdev_status_t* v_collective(xdev_communicator_t* const* comms, xdev_stream_t* const* streams,
                            const xdev_collective_call_t* calls, int32_t count) {
  if (comms == nullptr || streams == nullptr || count < 1 || comms[0] == nullptr) {
    return last_layer()->real->collective(comms, streams, calls, count);
  }
  std::vector<xdev_communicator_t*> real_comms;
  std::vector<xdev_stream_t*> real_streams;
  // ABI 1.6: the buffers name blocks the layer handed out; the plugin
  // allocated each `guard` bytes earlier (as for the *_at copies).
  std::vector<xdev_collective_call_t> real_calls;
  for (int32_t i = 0; i < count; ++i) {
    real_comms.push_back(comms[i] != nullptr ? vc(comms[i])->real : nullptr);
    real_streams.push_back(real(streams[i]));
    if (calls == nullptr) continue;
    xdev_collective_call_t c = calls[i];
    xdev_device_t* device = comms[i] != nullptr ? vc(comms[i])->device : nullptr;
    const RealPlace send = real_place(device, c.send_allocation, c.send_offset);
    const RealPlace recv = real_place(device, c.recv_allocation, c.recv_offset);
    c.send_allocation = send.allocation;
    c.send_offset = send.offset;
    c.recv_allocation = recv.allocation;
    c.recv_offset = recv.offset;
    real_calls.push_back(c);
  }
  return vc(comms[0])->layer->real->collective(real_comms.data(), real_streams.data(),
                                               calls != nullptr ? real_calls.data() : nullptr,
                                               count);
}

const xdev_plugin_api_t* wrap(const xdev_plugin_api_t* api, const xdev_host_api_t* host,
                              Options options) {
  if ((api->capabilities & XDEV_CAP_HANDLE_MEMORY) != 0) {
    // ABI 1.6: guard bytes and canaries need addresses; a plugin whose
    // memory is handles is not wrapped (yet), and says so.
    if (host != nullptr && host->log != nullptr) {
      host->log(host->host_context, XDEV_LOG_WARNING,
                (std::string("validation: ") + (api->name != nullptr ? api->name : "?") +
                 ": not validated: its memory is handles (XDEV_CAP_HANDLE_MEMORY), which the "
                 "validation layer cannot check yet")
                    .c_str());
    }
    return api;
  }
  auto* l = new Layer{};  // lives for the process, like the plugin's table
  l->real = api;
  l->host = host;
  l->options = std::move(options);
  std::memset(&l->table, 0, sizeof l->table);
  const size_t size = std::min<size_t>(api->struct_size, sizeof l->table);
  std::memcpy(&l->table, api, size);
  l->table.struct_size = size;
  xdev_plugin_api_t& t = l->table;
  t.initialize = &v_initialize;
  t.shutdown = &v_shutdown;
  if (api->describe_status != nullptr) t.describe_status = &v_describe_status;
  t.device_types = &v_device_types;
  t.device_count = &v_device_count;
  t.device_get_properties = &v_device_get_properties;
  t.device_open = &v_device_open;
  t.device_close = &v_device_close;
  t.memory_allocate = &v_memory_allocate;
  t.memory_free = &v_memory_free;
  t.memory_query = &v_memory_query;
  if (api->host_memory_allocate != nullptr) t.host_memory_allocate = &v_host_memory_allocate;
  if (api->host_memory_free != nullptr) t.host_memory_free = &v_host_memory_free;
  t.stream_create = &v_stream_create;
  t.stream_destroy = &v_stream_destroy;
  t.stream_synchronize = &v_stream_synchronize;
  t.event_create = &v_event_create;
  t.event_destroy = &v_event_destroy;
  t.event_record = &v_event_record;
  t.stream_wait_event = &v_stream_wait_event;
  t.event_synchronize = &v_event_synchronize;
  t.event_query = &v_event_query;
  t.copy_host_to_device = &v_copy_h2d;
  t.copy_device_to_host = &v_copy_d2h;
  t.copy_device_to_device = &v_copy_d2d;
  if (api->copy_peer != nullptr) t.copy_peer = &v_copy_peer;
  t.kernels = &v_kernels;
  if (XDEV_HAS_FIELD(api, xdev_plugin_api_t, stream_native_handle) &&
      api->stream_native_handle != nullptr) {
    t.stream_native_handle = &v_stream_native_handle;
  }
  if (XDEV_HAS_FIELD(api, xdev_plugin_api_t, event_elapsed_ms) &&
      api->event_elapsed_ms != nullptr) {
    t.event_elapsed_ms = &v_event_elapsed_ms;
  }
  if (XDEV_HAS_FIELD(api, xdev_plugin_api_t, device_kernels) && api->device_kernels != nullptr) {
    t.device_kernels = &v_device_kernels;
  }
  // ABI 1.6: the (allocation, offset) copies, when the plugin has them.
  if (XDEV_HAS_FIELD(api, xdev_plugin_api_t, copy_peer_at)) {
    if (api->copy_host_to_device_at != nullptr) t.copy_host_to_device_at = &v_copy_h2d_at;
    if (api->copy_device_to_host_at != nullptr) t.copy_device_to_host_at = &v_copy_d2h_at;
    if (api->copy_device_to_device_at != nullptr) t.copy_device_to_device_at = &v_copy_d2d_at;
    if (api->copy_peer_at != nullptr) t.copy_peer_at = &v_copy_peer_at;
  }
  // ABI 1.7 device collectives: passed through with the layer's handles
  // unwrapped (each buffer's (allocation, offset) translated back to the
  // plugin's guarded block, as for the *_at copies).
  if (XDEV_HAS_FIELD(api, xdev_plugin_api_t, collective) && api->collective != nullptr) {
    t.collective_id = &v_collective_id;
    t.communicator_create = &v_communicator_create;
    t.communicator_destroy = &v_communicator_destroy;
    t.communicator_abort = &v_communicator_abort;
    t.communicator_poll = &v_communicator_poll;
    t.collective = &v_collective;
  }
  std::lock_guard lock(g_layers_mutex);
  layers_by_host()[host] = l;
  g_last_layer = l;
  return &l->table;
}

}  // namespace xdev::validation
