// Devices, configuration, placement: xdev.config, xdev.debugging, xdev.device.
#include "bindings.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <sstream>
#include <iterator>
#include <thread>
#include <vector>

namespace xdev::python {
namespace {

// One dict per item, filled by `fill(dict, item)`.
template <typename T, typename Fill>
nb::list dicts(const std::vector<T>& items, Fill fill) {
  nb::list out;
  for (const T& item : items) {
    nb::dict d;
    fill(d, item);
    out.append(d);
  }
  return out;
}

template <typename T>
std::string streamed(const T& value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

// `with xdev.device("/GPU:0"):` -- an xdev::DeviceScope for the block. Scopes
// are per thread, so the block must end on the thread that entered it.
class DeviceContext {
 public:
  explicit DeviceContext(std::string name) : name_(std::move(name)) {
    DeviceName::parse(name_);  // a malformed name fails here, as in C++
  }
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;
  const std::string& name() const { return name_; }
  void enter() {
    scopes_.push_back({std::make_unique<DeviceScope>(name_), std::this_thread::get_id()});
  }
  // One object may be entered by several threads (each gets its own scope):
  // leave the last one this thread entered.
  void exit() {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->thread == std::this_thread::get_id()) {
        scopes_.erase(std::next(it).base());
        return;
      }
    }
    throw Error(ErrorCode::kFailedPrecondition,
                "device scope " + name_ + " is left on a thread that did not enter it");
  }

 private:
  struct Entered {
    std::unique_ptr<DeviceScope> scope;
    std::thread::id thread;
  };
  std::string name_;
  std::vector<Entered> scopes_;
};

// `with xdev.experimental.strict_placement():` -- an xdev::StrictPlacement.
class StrictContext {
 public:
  explicit StrictContext(bool strict) : strict_(strict) {}
  StrictContext(const StrictContext&) = delete;
  StrictContext& operator=(const StrictContext&) = delete;
  void enter() { entered_.push_back({std::make_unique<StrictPlacement>(strict_), std::this_thread::get_id()}); }
  void exit() {
    for (auto it = entered_.rbegin(); it != entered_.rend(); ++it) {
      if (it->thread == std::this_thread::get_id()) {
        entered_.erase(std::next(it).base());
        return;
      }
    }
    throw Error(ErrorCode::kFailedPrecondition,
                "strict placement is left on a thread that did not enter it");
  }

 private:
  struct Entered {
    std::unique_ptr<StrictPlacement> scope;
    std::thread::id thread;
  };
  bool strict_;
  std::vector<Entered> entered_;
};

nb::dict memory_info_dict(const MemoryInfo& info) {
  nb::dict d;
  d["current"] = info.current;
  d["peak"] = info.peak;
  d["num_allocations"] = info.num_allocations;
  d["total_allocations"] = info.total_allocations;
  d["largest_free_block"] = info.largest_free_block;
  d["bytes_reserved"] = info.bytes_reserved;
  d["limit"] = info.limit;
  d["growth"] = info.growth;
  return d;
}

}  // namespace

void bind_devices(nb::module_& m) {
  nb::class_<PhysicalDevice>(m, "PhysicalDevice",
                             "A device a plugin found (tf.config.PhysicalDevice).")
      .def_ro("name", &PhysicalDevice::name)
      .def_ro("device_type", &PhysicalDevice::device_type)
      .def_ro("id", &PhysicalDevice::id)
      .def_ro("platform", &PhysicalDevice::platform)
      .def_ro("plugin", &PhysicalDevice::plugin)
      .def_ro("model", &PhysicalDevice::model)
      .def_ro("memory_limit", &PhysicalDevice::memory_limit)
      .def_ro("bus_id", &PhysicalDevice::bus_id)
      .def_ro("numa_node", &PhysicalDevice::numa_node)
      .def_ro("incarnation", &PhysicalDevice::incarnation)
      .def_ro("physical_device_desc", &PhysicalDevice::physical_device_desc)
      .def_ro("properties", &PhysicalDevice::properties)
      .def("__repr__", [](const PhysicalDevice& d) { return streamed(d); })
      .def("__eq__", [](const PhysicalDevice& a, const PhysicalDevice& b) { return a.name == b.name; })
      .def("__hash__", [](const PhysicalDevice& d) { return nb::hash(nb::str(d.name.c_str())); });

  nb::class_<Device>(m, "LogicalDevice",
                     "A device ops and tensors are placed on (tf.config.LogicalDevice).")
      .def_ro("name", &Device::name)
      .def_ro("device_type", &Device::device_type)
      .def_ro("id", &Device::id)
      .def("__repr__", [](const Device& d) { return streamed(d); })
      .def("__eq__", [](const Device& a, const Device& b) { return a == b; })
      .def("__hash__", [](const Device& d) { return nb::hash(nb::str(d.name.c_str())); });

  nb::class_<PluginInfo>(m, "PluginInfo", "A plugin file the runtime found, loaded or skipped.")
      .def_ro("file", &PluginInfo::file)
      .def_ro("loaded", &PluginInfo::loaded)
      .def_ro("reason", &PluginInfo::reason)
      .def_ro("name", &PluginInfo::name)
      .def_ro("abi_version", &PluginInfo::abi_version)
      .def_ro("version", &PluginInfo::version)
      .def_ro("status", &PluginInfo::status)
      .def_ro("device_count", &PluginInfo::device_count)
      .def("__repr__", [](const PluginInfo& p) {
        return "PluginInfo(name='" + p.name + "', file='" + p.file + "', " +
               (p.loaded ? std::string("loaded") : "skipped: " + p.reason) + ")";
      });

  m.def("version", [] { return std::string(version()); });
  m.def("list_physical_devices", &list_physical_devices, nb::arg("device_type") = "",
        release_gil());
  m.def("list_logical_devices", &list_logical_devices, nb::arg("device_type") = "",
        release_gil());
  m.def("num_gpus", &num_gpus, release_gil());
  m.def("list_plugins", &list_plugins, release_gil());
  m.def("plugin_search_path", &plugin_search_path, release_gil());

  // Configuration (before the devices are initialized).
  // The list overload (the SDK also has a one-device template overload).
  m.def("set_visible_devices",
        static_cast<void (*)(const std::vector<PhysicalDevice>&, std::string_view)>(
            &set_visible_devices),
        nb::arg("devices"),
        nb::arg("device_type") = "", release_gil());
  m.def("get_visible_devices", &get_visible_devices, nb::arg("device_type") = "", release_gil());
  m.def("set_memory_growth", &set_memory_growth, nb::arg("device"), nb::arg("enable"),
        release_gil());
  m.def("get_memory_growth", &get_memory_growth, nb::arg("device"), release_gil());
  // Memory limits in MiB, one entry per logical device (None: no limit).
  m.def(
      "set_logical_device_configuration",
      [](const PhysicalDevice& device, const std::vector<std::optional<int64_t>>& limits) {
        std::vector<LogicalDeviceConfiguration> config;
        for (const auto& limit : limits) config.push_back({limit});
        set_logical_device_configuration(device, config);
      },
      nb::arg("device"), nb::arg("memory_limits"), release_gil());
  m.def(
      "get_logical_device_configuration",
      [](const PhysicalDevice& device) {
        std::vector<std::optional<int64_t>> limits;
        for (const auto& c : get_logical_device_configuration(device)) {
          limits.push_back(c.memory_limit);
        }
        return limits;
      },
      nb::arg("device"), release_gil());
  m.def("set_per_process_memory_fraction", &set_per_process_memory_fraction,
        nb::arg("fraction"), release_gil());
  m.def("devices_initialized", &devices_initialized);
  m.def(
      "get_memory_info",
      [](std::string_view device) {
        MemoryInfo info;
        {
          nb::gil_scoped_release release;
          info = get_memory_info(device);
        }
        return memory_info_dict(info);
      },
      nb::arg("device"));
  m.def("reset_memory_stats", &reset_memory_stats, nb::arg("device"), release_gil());

  // Placement.
  m.def("set_log_device_placement", &set_log_device_placement, nb::arg("enabled"));
  m.def("get_log_device_placement", [] { return log_device_placement(); });
  m.def("set_soft_device_placement", &set_soft_device_placement, nb::arg("enabled"));
  m.def("get_soft_device_placement", [] { return soft_device_placement(); });
  m.def("placement_counters", [] {
    const PlacementCounters c = placement_counters();
    nb::dict d;
    d["implicit_copies"] = c.implicit_copies;
    d["implicit_copy_bytes"] = c.implicit_copy_bytes;
    d["implicit_copies_by_pair"] =
        dicts(c.implicit_copies_by_pair, [](nb::dict& e, const CopyCount& p) {
          e["from"] = p.from;
          e["to"] = p.to;
          e["copies"] = p.copies;
          e["bytes"] = p.bytes;
        });
    d["explicit_copies"] = c.explicit_copies;
    d["explicit_copy_bytes"] = c.explicit_copy_bytes;
    d["read_backs"] = c.read_backs;
    d["read_back_bytes"] = c.read_back_bytes;
    d["fallbacks"] = c.fallbacks;
    d["fallbacks_by_kernel"] =
        dicts(c.fallbacks_by_kernel, [](nb::dict& e, const FallbackCount& f) {
          e["op"] = f.op;
          e["input"] = f.input;
          e["output"] = f.output;
          e["device"] = f.device;
          e["ran_on"] = f.ran_on;
          e["ops"] = f.ops;
        });
    d["soft_placements"] = c.soft_placements;
    return d;
  });

  // Fallback (never silent) and the kernels a device has.
  m.def("set_fallback_policy", [](std::string_view policy) {
    if (policy == "warn") {
      set_fallback_policy(FallbackPolicy::kWarn);
    } else if (policy == "error") {
      set_fallback_policy(FallbackPolicy::kError);
    } else {
      throw Error(ErrorCode::kInvalidArgument, "set_fallback_policy: '" + std::string(policy) +
                                                   "' is not one of warn, error");
    }
  }, nb::arg("policy"));
  m.def("get_fallback_policy",
        [] { return fallback_policy() == FallbackPolicy::kError ? "error" : "warn"; });
  m.def(
      "has_kernel",
      [](std::string_view device, std::string_view op, nb::handle dtype,
         nb::handle output_dtype) {
        const DType input = to_dtype(dtype);
        std::optional<DType> output;
        if (!output_dtype.is_none()) output = to_dtype(output_dtype);
        nb::gil_scoped_release release;
        return has_kernel(device, op, input, output);
      },
      nb::arg("device"), nb::arg("op"), nb::arg("dtype"),
      nb::arg("output_dtype").none() = nb::none());
  m.def(
      "list_kernels",
      [](std::string_view device) {
        std::vector<OpKernels> ops;
        {
          nb::gil_scoped_release release;
          ops = list_kernels(device);
        }
        auto pairs = [](const std::vector<KernelDTypes>& list) {
          nb::list out;
          for (const KernelDTypes& p : list) out.append(nb::make_tuple(p.input, p.output));
          return out;
        };
        return dicts(ops, [&](nb::dict& d, const OpKernels& op) {
          d["op"] = op.op;
          d["defined"] = pairs(op.defined);
          d["available"] = pairs(op.available);
        });
      },
      nb::arg("device"));
  m.def("reset_placement_counters", &reset_placement_counters);
  m.def("recent_placements", [] {
    return dicts(recent_placements(), [](nb::dict& d, const PlacementRecord& r) {
      d["op"] = r.op;
      d["device"] = r.device;
      d["requested"] = r.requested;
      d["rule"] = r.rule;
      d["rejected"] = r.rejected;
      d["bytes_copied"] = r.bytes_copied;
    });
  });
  m.def("clear_recent_placements", &clear_recent_placements);

  nb::class_<DeviceContext>(m, "DeviceScope",
                            "`with xdev.device(name):` places every op and tensor of the block "
                            "on that device (tf.device).")
      .def(nb::init<std::string>(), nb::arg("name"))
      .def_prop_ro("name", &DeviceContext::name)
      .def("__enter__", [](DeviceContext& c) -> DeviceContext& {
        c.enter();
        return c;
      }, nb::rv_policy::reference)
      .def("__exit__", [](DeviceContext& c, nb::handle, nb::handle, nb::handle) {
        c.exit();
        return false;
      }, nb::arg("exc_type").none(), nb::arg("exc_value").none(), nb::arg("traceback").none())
      .def("__repr__", [](const DeviceContext& c) { return "xdev.device('" + c.name() + "')"; });

  nb::class_<StrictContext>(m, "StrictPlacement",
                            "`with xdev.experimental.strict_placement():` an op whose inputs "
                            "live on another device fails instead of copying them.")
      .def(nb::init<bool>(), nb::arg("strict") = true)
      .def("__enter__", [](StrictContext& c) -> StrictContext& {
        c.enter();
        return c;
      }, nb::rv_policy::reference)
      .def("__exit__", [](StrictContext& c, nb::handle, nb::handle, nb::handle) {
        c.exit();
        return false;
      }, nb::arg("exc_type").none(), nb::arg("exc_value").none(), nb::arg("traceback").none());
}

}  // namespace xdev::python
