// <xdev/device_collectives.hpp>: collectives across processes on devices'
// own streams, through a plugin's ABI 1.7 slots (XDEV_CAP_COLLECTIVES).
// The core only enqueues and waits; the transport is the plugin's, and the
// id travels between processes by the caller's means (libxdev_mpi: MPI).
#include <xdev/device_collectives.hpp>

#include <mutex>
#include <set>
#include <sstream>

#include <xdev/error.hpp>

#include "common/checked_math.hpp"
#include "distribute/device_collectives.hpp"
#include "common/plugin_call.hpp"
#include "common/status.hpp"
#include "devices/runtime.hpp"
#include "placement/decide.hpp"
#include "tensors/tensor_impl.hpp"

namespace xdev {

using detail::LogicalDeviceState;
static_assert(DeviceCommunicator::kMaxIdBytes == XDEV_COLLECTIVE_ID_MAX_SIZE);

namespace {

std::vector<LogicalDeviceState*> resolve_all(const std::vector<Device>& devices) {
  std::vector<LogicalDeviceState*> out;
  for (const Device& d : devices) out.push_back(detail::resolve_device(d.name));
  return out;
}

bool offers_collectives(const xdev_plugin_api_t* api) {
  return (api->capabilities & XDEV_CAP_COLLECTIVES) != 0 &&
         XDEV_HAS_FIELD(api, xdev_plugin_api_t, collective) && api->collective != nullptr;
}

}  // namespace

std::string detail::device_collectives_unavailable(
    const std::vector<LogicalDeviceState*>& devices) {
  if (devices.empty()) return "no devices";
  for (LogicalDeviceState* d : devices) {
    if (d->plugin() != devices[0]->plugin()) {
      return d->name() + " (plugin " + d->plugin()->name + ") and " + devices[0]->name() +
             " (plugin " + devices[0]->plugin()->name + ") belong to different plugins";
    }
  }
  const detail::LoadedPlugin& p = *devices[0]->plugin();
  if (!offers_collectives(p.api)) {
    return devices[0]->name() + " is a device of plugin " + p.name + " (ABI " +
           std::to_string(p.abi_version.major) + "." + std::to_string(p.abi_version.minor) +
           "), which does not declare XDEV_CAP_COLLECTIVES (ABI 1.7)";
  }
  std::set<xdev_device_t*> physical;
  for (LogicalDeviceState* d : devices) {
    if (!physical.insert(d->handle()).second) {
      return "two of the devices share one physical device (" + d->name() +
             "): each rank of a device collective needs its own";
    }
  }
  return "";
}

namespace {

std::string why_not(const std::vector<LogicalDeviceState*>& devices) {
  return detail::device_collectives_unavailable(devices);
}

xdev_reduce_op_t abi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return XDEV_REDUCE_SUM;
    case ReduceOp::kMax: return XDEV_REDUCE_MAX;
    case ReduceOp::kMin: return XDEV_REDUCE_MIN;
    case ReduceOp::kMean: break;
  }
  throw Error(ErrorCode::kInvalidArgument,
              "device collectives reduce with SUM, MAX or MIN (a mean is a SUM the caller "
              "divides)");
}

xdev_collective_kind_t abi_kind(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return XDEV_COLLECTIVE_ALL_REDUCE;
    case CollectiveKind::kAllGather: return XDEV_COLLECTIVE_ALL_GATHER;
    case CollectiveKind::kBroadcast: return XDEV_COLLECTIVE_BROADCAST;
    case CollectiveKind::kReduceScatter: return XDEV_COLLECTIVE_REDUCE_SCATTER;
  }
  throw Error(ErrorCode::kInvalidArgument, "device collective: invalid kind");
}

}  // namespace

struct DeviceCommunicator::Impl {
  std::vector<LogicalDeviceState*> devices;
  const xdev_plugin_api_t* api = nullptr;
  std::string plugin;
  int nranks = 0;
  std::vector<xdev_communicator_t*> comms;
  std::vector<xdev_event_t*> events;  // one per device: the end of the last collective
  std::vector<Tensor> in_flight;      // kept alive until poll() says done
  bool pending = false;
  bool aborted = false;

  detail::PluginCallSite site(const char* slot, size_t i = 0) const {
    return devices[i]->call_site(slot);
  }
  void live(const char* what) const {
    if (aborted) {
      throw Error(ErrorCode::kFailedPrecondition,
                  std::string("device collectives of plugin ") + plugin + ": " + what +
                      " after the communicators were aborted");
    }
  }
  ~Impl() {
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i] != nullptr) {
        detail::call_plugin_void(site("event_destroy", i), api->event_destroy, events[i]);
      }
    }
  }
};

std::string DeviceCommunicator::plugin_for(const std::vector<Device>& devices, std::string* why) {
  detail::Runtime::global().ensure_initialized();
  const std::vector<LogicalDeviceState*> resolved = resolve_all(devices);
  std::string reason = why_not(resolved);
  if (why != nullptr) *why = reason;
  return reason.empty() ? resolved[0]->plugin()->name : "";
}

std::vector<uint8_t> DeviceCommunicator::unique_id(const std::vector<Device>& devices) {
  detail::Runtime::global().ensure_initialized();
  const std::vector<LogicalDeviceState*> resolved = resolve_all(devices);
  if (std::string reason = why_not(resolved); !reason.empty()) {
    throw Error(ErrorCode::kFailedPrecondition, "device collectives: " + reason);
  }
  const detail::LoadedPlugin& p = *resolved[0]->plugin();
  std::vector<uint8_t> id(XDEV_COLLECTIVE_ID_MAX_SIZE);
  size_t size = 0;
  detail::check(detail::call_plugin(resolved[0]->call_site("collective_id"), p.api->collective_id,
                                    p.handle, id.data(), id.size(), &size),
                "making a device collective id (plugin " + p.name + ")");
  if (size == 0 || size > id.size()) {
    throw Error(ErrorCode::kInternal, "plugin " + p.name + ": collective_id reported " +
                                          std::to_string(size) + " bytes (1 to " +
                                          std::to_string(id.size()) + " expected)");
  }
  id.resize(size);
  return id;
}

DeviceCommunicator::DeviceCommunicator(const std::vector<Device>& devices,
                                       const std::vector<uint8_t>& id, int nranks,
                                       const std::vector<int>& ranks,
                                       std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  detail::Runtime::global().ensure_initialized();
  Impl& m = *impl_;
  m.devices = resolve_all(devices);
  if (std::string reason = why_not(m.devices); !reason.empty()) {
    throw Error(ErrorCode::kFailedPrecondition, "device collectives: " + reason);
  }
  if (ranks.size() != devices.size()) {
    throw Error(ErrorCode::kInvalidArgument,
                "DeviceCommunicator: " + std::to_string(ranks.size()) + " ranks for " +
                    std::to_string(devices.size()) + " devices");
  }
  std::set<int> seen;
  for (int r : ranks) {
    if (r < 0 || r >= nranks || !seen.insert(r).second) {
      throw Error(ErrorCode::kInvalidArgument,
                  "DeviceCommunicator: rank " + std::to_string(r) + " is out of [0, " +
                      std::to_string(nranks) + ") or given twice");
    }
  }
  if (id.empty() || id.size() > XDEV_COLLECTIVE_ID_MAX_SIZE) {
    throw Error(ErrorCode::kInvalidArgument, "DeviceCommunicator: an id of " +
                                                 std::to_string(id.size()) + " bytes (1 to " +
                                                 std::to_string(XDEV_COLLECTIVE_ID_MAX_SIZE) +
                                                 ")");
  }
  const detail::LoadedPlugin& p = *m.devices[0]->plugin();
  m.api = p.api;
  m.plugin = p.name;
  m.nranks = nranks;
  xdev_collective_init_t init{};
  init.struct_size = XDEV_COLLECTIVE_INIT_STRUCT_SIZE;
  init.id = id.data();
  init.id_size = id.size();
  init.nranks = nranks;
  init.timeout_ms = static_cast<uint64_t>(timeout.count());
  std::vector<xdev_device_t*> handles;
  for (LogicalDeviceState* d : m.devices) handles.push_back(d->handle());
  std::vector<int32_t> abi_ranks(ranks.begin(), ranks.end());
  m.comms.assign(devices.size(), nullptr);
  m.events.assign(devices.size(), nullptr);
  for (size_t i = 0; i < m.devices.size(); ++i) {
    detail::check(detail::call_plugin(m.site("event_create", i), m.api->event_create,
                                      m.devices[i]->handle(), &m.events[i]),
                  "creating an event on " + m.devices[i]->name());
  }
  detail::check(detail::call_plugin(m.site("communicator_create"), m.api->communicator_create,
                                    p.handle, &init, handles.data(), abi_ranks.data(),
                                    static_cast<int32_t>(handles.size()), m.comms.data()),
                "joining " + std::to_string(devices.size()) + " device(s) to a group of " +
                    std::to_string(nranks) + " ranks (plugin " + p.name + ")");
}

DeviceCommunicator::~DeviceCommunicator() {
  Impl& m = *impl_;
  if (m.aborted) return;
  for (size_t i = 0; i < m.comms.size(); ++i) {
    if (m.comms[i] == nullptr) continue;
    try {
      m.devices[i]->synchronize();  // "all its collectives have completed"
    } catch (const Error&) {
      // Reported by the collective's own wait; the stream is drained now.
    }
    detail::call_plugin_void(m.site("communicator_destroy", i), m.api->communicator_destroy,
                             m.comms[i]);
  }
}

const std::string& DeviceCommunicator::plugin() const { return impl_->plugin; }
int DeviceCommunicator::nranks() const { return impl_->nranks; }

void DeviceCommunicator::enqueue(CollectiveKind kind, ReduceOp op,
                                 const std::vector<Tensor>& send, const std::vector<Tensor>& recv,
                                 int root) {
  Impl& m = *impl_;
  m.live("a collective");
  const size_t n = m.devices.size();
  if (send.size() != n || recv.size() != n) {
    throw Error(ErrorCode::kInvalidArgument,
                "device collective: " + std::to_string(send.size()) + " send and " +
                    std::to_string(recv.size()) + " recv tensors for " + std::to_string(n) +
                    " devices");
  }
  const bool reduces = kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter;
  const xdev_reduce_op_t reduce = reduces ? abi_op(op) : XDEV_REDUCE_SUM;
  std::vector<xdev_collective_call_t> calls(n);
  std::vector<xdev_stream_t*> streams(n);
  for (size_t i = 0; i < n; ++i) {
    const detail::TensorImpl* s = send[i].impl();
    const detail::TensorImpl* r = recv[i].impl();
    if (s == nullptr || r == nullptr || !s->contiguous() || !r->contiguous() ||
        s->device() != m.devices[i] || r->device() != m.devices[i] || s->dtype != r->dtype) {
      throw Error(ErrorCode::kInvalidArgument,
                  "device collective: send and recv of rank slot " + std::to_string(i) +
                      " must be contiguous tensors of one dtype on " + m.devices[i]->name());
    }
    const uint64_t send_count = static_cast<uint64_t>(s->num_elements());
    const uint64_t recv_count = static_cast<uint64_t>(r->num_elements());
    const uint64_t ranks = static_cast<uint64_t>(m.nranks);
    uint64_t count = send_count;
    bool sizes_ok = true;
    switch (kind) {
      case CollectiveKind::kAllReduce:
      case CollectiveKind::kBroadcast: sizes_ok = recv_count == send_count; break;
      case CollectiveKind::kAllGather:
        sizes_ok = detail::checked_mul(send_count, ranks) == recv_count;
        break;
      case CollectiveKind::kReduceScatter:
        count = recv_count;
        sizes_ok = detail::checked_mul(recv_count, ranks) == send_count;
        break;
    }
    if (!sizes_ok) {
      throw Error(ErrorCode::kInvalidArgument,
                  "device collective: " + std::to_string(send_count) + " elements sent, " +
                      std::to_string(recv_count) + " received by " + m.devices[i]->name() +
                      " do not fit " + std::to_string(m.nranks) + " ranks");
    }
    xdev_collective_call_t& c = calls[i];
    c.struct_size = XDEV_COLLECTIVE_CALL_STRUCT_SIZE;
    c.kind = abi_kind(kind);
    c.op = reduce;
    c.dtype = static_cast<xdev_dtype_t>(s->dtype);
    c.root = root;
    // ABI 1.6: the allocation memory_allocate returned and the offset inside
    // it (the pool's sub-offset plus the view's), as run_op forms tensors.
    const detail::DeviceMemory send_at = s->memory();
    const detail::DeviceMemory recv_at = r->memory();
    c.send_allocation = send_at.allocation;
    c.send_offset = send_at.offset;
    c.recv_allocation = recv_at.allocation;
    c.recv_offset = recv_at.offset;
    c.count = count;
    streams[i] = m.devices[i]->stream();
  }
  // The stream rule: hold every device's stream while the group is enqueued
  // and the events recorded (in device order: one order, no deadlock).
  std::vector<std::unique_lock<std::mutex>> locks;
  for (LogicalDeviceState* d : m.devices) {
    if (!d->concurrent_streams()) locks.emplace_back(d->stream_mutex());
  }
  detail::check(detail::call_plugin(m.site("collective"), m.api->collective, m.comms.data(),
                                    streams.data(), calls.data(), static_cast<int32_t>(n)),
                "enqueueing a device collective (plugin " + m.plugin + ")");
  for (size_t i = 0; i < n; ++i) {
    detail::check(detail::call_plugin(m.site("event_record", i), m.api->event_record, m.events[i],
                                      streams[i]),
                  "recording the end of a device collective on " + m.devices[i]->name());
  }
  m.in_flight.clear();
  m.in_flight.insert(m.in_flight.end(), send.begin(), send.end());
  m.in_flight.insert(m.in_flight.end(), recv.begin(), recv.end());
  m.pending = true;
}

bool DeviceCommunicator::poll() {
  Impl& m = *impl_;
  m.live("poll");
  for (size_t i = 0; i < m.comms.size(); ++i) {
    detail::check(detail::call_plugin(m.site("communicator_poll", i), m.api->communicator_poll,
                                      m.comms[i]),
                  "device collective on " + m.devices[i]->name() + " (plugin " + m.plugin + ")");
  }
  if (!m.pending) return true;
  for (size_t i = 0; i < m.events.size(); ++i) {
    int32_t done = 0;
    detail::check(detail::call_plugin(m.site("event_query", i), m.api->event_query, m.events[i],
                                      &done),
                  "querying the end of a device collective on " + m.devices[i]->name());
    if (done == 0) return false;
  }
  m.pending = false;
  m.in_flight.clear();
  // An error of the collective's work on a stream (found when it ran).
  for (LogicalDeviceState* d : m.devices) d->synchronize();
  return true;
}

void DeviceCommunicator::abort() {
  Impl& m = *impl_;
  if (m.aborted) return;
  m.aborted = true;
  for (size_t i = 0; i < m.comms.size(); ++i) {
    if (m.comms[i] == nullptr) continue;
    detail::call_plugin_void(m.site("communicator_abort", i), m.api->communicator_abort,
                             m.comms[i]);
    m.comms[i] = nullptr;
  }
  // The tensors of the aborted collective stay referenced: their streams
  // may still hold them until the plugin drained them.
}

}  // namespace xdev
