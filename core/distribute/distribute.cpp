// Mirrored data parallelism and modules (docs/behaviour.md B22, B23, B25).
#include <xdev/distribute.hpp>
#include <xdev/ops.hpp>
#include <xdev/xdev.hpp>
#include <xdev/placement.hpp>

#include <exception>
#include <sstream>
#include <system_error>
#include <thread>

#include "trace/trace.hpp"
#include "ops/run_op.hpp"
#include "placement/decide.hpp"
#include "common/log.hpp"
#include "placement/placement_state.hpp"
#include "devices/runtime.hpp"
#include "tensors/tensor_impl.hpp"

namespace xdev {
namespace {

std::string bytes_text(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  std::ostringstream out;
  out << (u == 0 ? static_cast<double>(bytes) : v) << ' ' << units[u];
  return out.str();
}

std::string device_tuple(const std::vector<Device>& devices) {
  std::string out = "(";
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i > 0) out += ", ";
    out += "'" + devices[i].name + "'";
  }
  return out + ")";
}

std::vector<Device> default_devices() {
  std::vector<Device> devices = list_logical_devices("GPU");
  if (devices.empty()) devices = list_logical_devices("CPU");
  if (devices.empty()) {
    throw Error(ErrorCode::kUnavailable, "MirroredStrategy: there is no GPU and no CPU device");
  }
  return devices;
}

void check_per_replica(const char* what, const std::vector<Tensor>& values,
                       const std::vector<Device>& devices) {
  if (values.size() != devices.size()) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + ": " + std::to_string(values.size()) + " values for " +
                    std::to_string(devices.size()) + " replicas");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].defined()) {
      throw Error(ErrorCode::kInvalidArgument,
                  std::string(what) + ": the value of replica " + std::to_string(i) + " is empty");
    }
    if (values[i].dtype() != values[0].dtype() || !(values[i].shape() == values[0].shape())) {
      std::ostringstream m;
      m << what << ": replica " << i << " has " << values[i].shape() << " "
        << values[i].dtype() << ", replica 0 has " << values[0].shape() << " "
        << values[0].dtype();
      throw Error(ErrorCode::kInvalidArgument, m.str());
    }
  }
}

// The elementwise maximum or minimum of `values`, computed where the first
// one lives (the others are copied there).
Tensor fold_extreme(ReduceOp op, const std::vector<Tensor>& values) {
  Tensor out = values[0];
  for (size_t i = 1; i < values.size(); ++i) {
    out = op == ReduceOp::kMax ? maximum(out, values[i]) : minimum(out, values[i]);
  }
  return out;
}

}  // namespace

std::string_view to_string(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::kSum: return "SUM";
    case ReduceOp::kMean: return "MEAN";
    case ReduceOp::kMax: return "MAX";
    case ReduceOp::kMin: return "MIN";
  }
  return "invalid";
}

MirroredStrategy::MirroredStrategy(const std::vector<std::string>& devices) {
  if (devices.empty()) {
    devices_ = default_devices();
  } else {
    for (const std::string& name : devices) {
      devices_.push_back(detail::resolve_device(name)->info());
    }
  }
  for (size_t i = 0; i < devices_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (devices_[i] == devices_[j]) {
        throw Error(ErrorCode::kInvalidArgument,
                    "MirroredStrategy: " + devices_[i].name + " is given twice");
      }
    }
  }
  detail::log_raw("Using MirroredStrategy with devices " + device_tuple(devices_));
}

MirroredStrategy::MirroredStrategy(const std::vector<Device>& devices)
    : MirroredStrategy([&] {
        std::vector<std::string> names;
        for (const Device& d : devices) names.push_back(d.name);
        if (names.empty()) {
          throw Error(ErrorCode::kInvalidArgument, "MirroredStrategy: the device list is empty");
        }
        return names;
      }()) {}

MirroredVariable MirroredStrategy::create_variable(const Tensor& initial) const {
  if (!initial.defined()) {
    throw Error(ErrorCode::kInvalidArgument, "create_variable: the initial value is empty");
  }
  MirroredVariable variable;
  for (const Device& d : devices_) variable.values_.push_back(initial.copy_to(d));
  variable.identity_ = std::make_shared<const char>('\0');
  return variable;
}

std::vector<Tensor> MirroredStrategy::split_batch(const Tensor& batch) const {
  if (!batch.defined() || batch.rank() == 0) {
    throw Error(ErrorCode::kInvalidArgument, "split_batch: the batch needs at least one axis");
  }
  const int64_t rows = batch.shape()[0];
  const int64_t n = num_replicas_in_sync();
  if (rows < n) {
    throw Error(ErrorCode::kInvalidArgument,
                "split_batch: " + std::to_string(rows) + " rows cannot feed " + std::to_string(n) +
                    " replicas");
  }
  std::vector<Tensor> shards;
  int64_t start = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t count = rows / n + (i < rows % n ? 1 : 0);
    Shape shape = batch.shape();
    shape[0] = count;
    uint64_t offset = batch.impl()->byte_offset +
                      static_cast<uint64_t>(start * batch.strides()[0]) * itemsize(batch.dtype());
    Tensor shard(detail::make_view(batch.impl_ptr(), shape, batch.strides(), offset));
    shards.push_back(shard.to(devices_[static_cast<size_t>(i)]));
    start += count;
  }
  return shards;
}

std::vector<std::vector<Tensor>> MirroredStrategy::run(
    const std::function<std::vector<Tensor>(const ReplicaContext&)>& step) const {
  const size_t n = devices_.size();
  std::vector<std::vector<Tensor>> results(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    try {
      threads.emplace_back([&, i] {
        try {
          DeviceScope scope(devices_[i]);
          results[i] =
              step(ReplicaContext{static_cast<int>(i), static_cast<int>(n), devices_[i]});
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    } catch (const std::system_error& e) {
      // The system gave no thread (a process or thread limit): the replicas
      // already started finish, then the step fails as an error, never as
      // std::terminate on a joinable thread.
      for (std::thread& t : threads) t.join();
      throw Error(ErrorCode::kUnavailable,
                  "MirroredStrategy.run: cannot start the thread of replica " + std::to_string(i) +
                      " on " + devices_[i].name + " (" + e.what() + "); " +
                      std::to_string(i) + " replicas ran their step and the step is lost");
    }
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < n; ++i) {
    if (!errors[i]) continue;
    std::string prefix = "MirroredStrategy.run: replica " + std::to_string(i) + " on " +
                         devices_[i].name + " failed: ";
    try {
      std::rethrow_exception(errors[i]);
    } catch (const Error& e) {
      throw Error(e.code(), prefix + e.what());
    } catch (const std::exception& e) {
      throw Error(ErrorCode::kInternal, prefix + e.what());
    } catch (...) {
      throw Error(ErrorCode::kInternal, prefix + "an exception that is not a std::exception");
    }
  }
  return results;
}

std::string MirroredStrategy::all_reduce_path() const {
  bool shared = true, direct = true;
  detail::LogicalDeviceState* root = detail::resolve_device(devices_[0].name);
  for (const Device& d : devices_) {
    detail::LogicalDeviceState* s = detail::resolve_device(d.name);
    if (s->handle() != root->handle()) shared = false;
    bool peer = s->plugin() == root->plugin() &&
                (s->api()->capabilities & XDEV_CAP_PEER_COPY) != 0;
    if (s != root && s->handle() != root->handle() && !peer && !s->host_addressable() &&
        !root->host_addressable()) {
      direct = false;
    }
  }
  return shared ? "shared memory" : direct ? "direct copies" : "host staging";
}

std::vector<Tensor> MirroredStrategy::all_reduce(ReduceOp op,
                                                 const std::vector<Tensor>& values) const {
  check_per_replica("all_reduce", values, devices_);
  const uint64_t begin_ns = detail::trace::on() ? detail::trace::now_ns() : 0;
  const size_t n = devices_.size();
  detail::LogicalDeviceState* root = detail::resolve_device(devices_[0].name);
  const Tensor& first = values[0];
  if (detail::log_placement_enabled()) {
    uint64_t bytes = static_cast<uint64_t>(first.num_elements()) * itemsize(first.dtype());
    detail::log_raw(std::string("All-reduce ") + std::string(to_string(op)) +
                    " of " + std::to_string(n) + " x " + bytes_text(bytes) + " over " +
                    device_tuple(devices_) + " via " + all_reduce_path());
  }
  // Reduce on the root: inputs of the same physical device are read in place,
  // others are copied there by the best path (peer, host-addressable, staging).
  Tensor total;
  {
    DeviceScope scope(devices_[0]);
    if (op == ReduceOp::kMax || op == ReduceOp::kMin) {
      total = fold_extreme(op, values);
    } else {
      detail::OpRequest request{detail::OpId::kAddN, first.dtype(), first.dtype(), first.shape()};
      request.share_physical_inputs = true;
      total = detail::run_op(request, values, detail::Attrs{});
    }
    if (op == ReduceOp::kMean) total = div(total, scalar_like(total, static_cast<int64_t>(n)));
    // AddN or Div may have been soft-placed off the root (no kernel there):
    // the result lives on the replica devices all the same.
    if (total.device().name != root->name()) total = total.to(devices_[0]);
  }
  std::vector<Tensor> out;
  out.push_back(total);
  for (size_t i = 1; i < n; ++i) out.push_back(total.copy_to(devices_[i]));
  if (begin_ns != 0) {
    detail::trace::Args args;
    args.str("reduce", std::string(to_string(op)))
        .num("replicas", static_cast<uint64_t>(n))
        .num("bytes_each", static_cast<uint64_t>(first.num_elements()) * itemsize(first.dtype()))
        .str("devices", device_tuple(devices_))
        .str("path", all_reduce_path());
    detail::trace::complete(detail::trace::host_track(), "collective", "all_reduce", begin_ns,
                            detail::trace::now_ns(), args);
  }
  return out;
}

Tensor MirroredStrategy::reduce(ReduceOp op, const std::vector<Tensor>& values,
                                const std::string& destination) const {
  check_per_replica("reduce", values, devices_);
  DeviceScope scope(destination);
  if (op == ReduceOp::kMax || op == ReduceOp::kMin) return fold_extreme(op, values).to(destination);
  Tensor total = add_n(values);
  if (op == ReduceOp::kMean) {
    total = div(total, scalar_like(total, static_cast<int64_t>(values.size())));
  }
  return total;
}

CrossReplicaSum cross_replica_sum(const MirroredStrategy& strategy) {
  return {strategy.devices(), [&strategy](const std::vector<Tensor>& values, const std::string&) {
            return strategy.all_reduce(ReduceOp::kSum, values);
          }};
}

std::vector<Tensor> per_replica(const std::vector<std::vector<Tensor>>& results, size_t index) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < results.size(); ++i) {
    if (index >= results[i].size()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "per_replica: replica " + std::to_string(i) + " returned " +
                      std::to_string(results[i].size()) + " values, not more than " +
                      std::to_string(index));
    }
    out.push_back(results[i][index]);
  }
  return out;
}

void MirroredVariable::assign_sub(const std::vector<Tensor>& deltas, double scale) {
  if (deltas.size() != values_.size()) {
    throw Error(ErrorCode::kInvalidArgument,
                "assign_sub: " + std::to_string(deltas.size()) + " deltas for " +
                    std::to_string(values_.size()) + " replicas");
  }
  std::vector<Tensor> updated;
  for (size_t i = 0; i < values_.size(); ++i) {
    DeviceScope scope(values_[i].device());
    Tensor delta = deltas[i];
    if (scale != 1.0) delta = mul(delta, scalar_like(delta, scale));
    updated.push_back(sub(values_[i], delta).to(values_[i].device()));
  }
  values_ = std::move(updated);  // all or nothing
}

void MirroredVariable::assign(const Tensor& value) {
  std::vector<Tensor> updated;
  for (const Tensor& v : values_) updated.push_back(value.copy_to(v.device()));
  values_ = std::move(updated);
}

}  // namespace xdev
