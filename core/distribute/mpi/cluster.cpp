// XDEV_CONFIG and the launcher's environment (README.md in this folder).
#include "cluster.hpp"

#include <cstdlib>

#include <nlohmann/json.hpp>
#include <xdev/error.hpp>

namespace xdev::mpi {
namespace {

[[noreturn]] void bad_config(const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument,
              "XDEV_CONFIG: " + why +
                  " (expected {\"cluster\": {\"worker\": [\"host:port\", ...]}, "
                  "\"task\": {\"type\": \"worker\", \"index\": K}})");
}

}  // namespace

LaunchInfo read_launch_info() {
  LaunchInfo info;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) {
      info.under_mpirun = true;
      info.launcher_variable = name;
      break;
    }
  }
  const char* text = std::getenv("XDEV_CONFIG");
  if (text == nullptr || *text == '\0') return info;
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    bad_config(std::string("not JSON: ") + e.what());
  }
  if (!config.is_object() || !config.contains("cluster") || !config["cluster"].is_object()) {
    bad_config("no \"cluster\" object");
  }
  const auto& cluster = config["cluster"];
  for (const auto& [job, members] : cluster.items()) {
    if (job != "worker") {
      bad_config("job \"" + job + "\" is not supported (only \"worker\": every task trains)");
    }
  }
  if (!cluster.contains("worker") || !cluster["worker"].is_array() || cluster["worker"].empty()) {
    bad_config("cluster.worker is not a non-empty list of addresses");
  }
  std::vector<std::string> workers;
  for (const auto& w : cluster["worker"]) {
    if (!w.is_string()) bad_config("cluster.worker holds " + w.dump() + ", not an address string");
    workers.push_back(w.get<std::string>());
  }
  const auto task = config.value("task", nlohmann::json::object());
  if (!task.is_object()) bad_config("\"task\" is not an object");
  if (task.contains("type") && task["type"] != "worker") {
    bad_config("task.type is " + task["type"].dump() + ", not \"worker\"");
  }
  const auto index = task.value("index", nlohmann::json(0));
  if (!index.is_number_integer() || index.get<int64_t>() < 0 ||
      index.get<int64_t>() >= static_cast<int64_t>(workers.size())) {
    bad_config("task.index " + index.dump() + " is not in [0, " + std::to_string(workers.size()) +
               ")");
  }
  info.config_workers = std::move(workers);
  info.config_task = index.get<int>();
  return info;
}

}  // namespace xdev::mpi
