// MultiWorkerMirroredStrategy: MirroredStrategy inside a process, MPI between
// processes, device tensors staged through host memory (README.md here).
#include <xdev/multi_worker.hpp>

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include <xdev/device_collectives.hpp>
#include <xdev/indexing.hpp>
#include <xdev/interop.hpp>
#include <xdev/ops.hpp>
#include <xdev/placement.hpp>
#include <xdev/xdev.hpp>

#include "cluster.hpp"
#include "communicator.hpp"
#include "interop/dlpack.h"  // the core's copy of DLPack's structs (their fields)

namespace xdev {
namespace {

void log_line(const std::string& line) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", line.c_str());
}

// MPI is started once per process (by the first strategy, unless the program
// did) and finalized at exit unless a collective failed (requests to a lost
// worker stay pending; MPI_Finalize would wait for them).
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && !mpi::any_collective_failed()) MPI_Finalize();
}

void start_mpi() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return;  // the program started MPI: it finalizes it too
    // Open MPI's non-blocking all-reduce (libnbc) picks a binomial tree for
    // few ranks, about half the bandwidth of the blocking call (coll/tuned);
    // its ring matches the blocking call (docs/performance.md). Only when the
    // user chose nothing, and only for the process xdev starts.
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
      throw Error(ErrorCode::kUnavailable, "MultiWorkerMirroredStrategy: MPI_Init_thread failed");
    }
    std::atexit(finalize_at_exit);
  });
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string out(text, static_cast<size_t>(length));
  const size_t comma = out.find(',');  // "Open MPI v4.1.4, package: ..."
  return comma == std::string::npos ? out : out.substr(0, comma);
}

std::string worker_device_name(const std::string& local_name, int task) {
  const size_t at = local_name.find("/device:");
  const std::string tail = at == std::string::npos ? local_name : local_name.substr(at);
  return "/job:worker/replica:0/task:" + std::to_string(task) + tail;
}

std::string python_tuple(const std::vector<std::string>& names) {
  std::string out = "(";
  for (size_t i = 0; i < names.size(); ++i) out += (i > 0 ? ", '" : "'") + names[i] + "'";
  return out + (names.size() == 1 ? ",)" : ")");
}

mpi::CallInfo call_info(mpi::Collective kind, ReduceOp op, const Tensor& t, int root,
                        const std::string& name) {
  mpi::CallInfo call;
  call.kind = kind;
  call.op = op;
  call.dtype = t.dtype();
  call.shape = t.shape();
  call.root = root;
  call.name = name;
  return call;
}

// Host memory of xdev's making, handed to from_dlpack (which frees it
// through the deleter when the last tensor using it is gone).
struct OwnedHostBuffer {
  DLManagedTensorVersioned managed{};
  std::vector<int64_t> shape;
  std::unique_ptr<std::byte[]> data;

  static DLManagedTensorVersioned* make(DType dtype, const Shape& shape, uint64_t bytes) {
    auto* owned = new OwnedHostBuffer;
    owned->shape.assign(shape.begin(), shape.end());
    owned->data.reset(new std::byte[bytes == 0 ? 1 : bytes]);
    DLManagedTensorVersioned& m = owned->managed;
    m.version = {XDEV_DLPACK_MAJOR_VERSION, XDEV_DLPACK_MINOR_VERSION};
    m.manager_ctx = owned;
    m.deleter = [](DLManagedTensorVersioned* self) {
      delete static_cast<OwnedHostBuffer*>(self->manager_ctx);
    };
    m.dl_tensor.data = owned->data.get();
    m.dl_tensor.device = {kDLCPU, 0};
    m.dl_tensor.ndim = shape.rank();
    m.dl_tensor.shape = owned->shape.data();
    const uint8_t bits = static_cast<uint8_t>(itemsize(dtype) * 8);
    switch (dtype) {
      case DType::kFloat32:
      case DType::kFloat64: m.dl_tensor.dtype = {kDLFloat, bits, 1}; break;
      case DType::kInt32:
      case DType::kInt64: m.dl_tensor.dtype = {kDLInt, bits, 1}; break;
      case DType::kBool: m.dl_tensor.dtype = {kDLBool, 8, 1}; break;
      case DType::kFloat16: m.dl_tensor.dtype = {kDLFloat, 16, 1}; break;
      case DType::kBFloat16: m.dl_tensor.dtype = {kDLBfloat, 16, 1}; break;
      case DType::kUInt8: m.dl_tensor.dtype = {kDLUInt, 8, 1}; break;
      case DType::kInt8: m.dl_tensor.dtype = {kDLInt, 8, 1}; break;
    }
    return &m;
  }
};

// The host memory one collective works on. For a contiguous tensor in host
// memory (logical CPUs) MPI reads the tensor where it is (a read-only DLPack
// view) and writes the result into a buffer xdev then adopts without a copy;
// otherwise one DLPack copy to the host is both (in place), adopted the same
// way (copied onto the device when it cannot address host memory).
class HostStaging {
 public:
  HostStaging(const Tensor& t, bool separate_result) : dtype_(t.dtype()) {
    bytes_ = static_cast<uint64_t>(t.num_elements()) * itemsize(dtype_);
    if (separate_result && t.is_contiguous() && dlpack_device(t).device_type == kDLCPU) {
      input_ = to_dlpack(t);  // a view, no copy
      result_ = OwnedHostBuffer::make(dtype_, t.shape(), bytes_);
    } else {
      ToDLPackOptions options;
      options.device = DLPackDevice{kDLCPU, 0};
      options.copy = true;
      result_ = to_dlpack(t, options);
    }
    send_ = address(input_ != nullptr ? input_ : result_);
    recv_ = address(result_);
  }
  ~HostStaging() {
    for (DLManagedTensorVersioned* m : {input_, result_}) {
      if (m != nullptr && m->deleter != nullptr) m->deleter(m);
    }
  }
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;
  const void* send() const { return send_; }  // == recv() when in place
  void* recv() const { return recv_; }
  uint64_t bytes() const { return bytes_; }
  DType dtype() const { return dtype_; }
  Tensor adopt(const Device& device) {
    DeviceScope scope(device);
    Tensor out = from_dlpack(result_);
    result_ = nullptr;  // xdev owns it now
    return out;
  }

 private:
  static unsigned char* address(DLManagedTensorVersioned* m) {
    return static_cast<unsigned char*>(m->dl_tensor.data) + m->dl_tensor.byte_offset;
  }
  DLManagedTensorVersioned* input_ = nullptr;
  DLManagedTensorVersioned* result_ = nullptr;
  const void* send_ = nullptr;
  void* recv_ = nullptr;
  uint64_t bytes_ = 0;
  DType dtype_;
};

}  // namespace

struct MultiWorkerMirroredStrategy::State {
  ClusterSpec cluster;
  std::unique_ptr<MirroredStrategy> local;
  std::unique_ptr<mpi::Communicator> comm;  // none for a single worker
  // The device path (ABI 1.7 device collectives), when every worker's local
  // devices belong to one plugin that offers them; else none (host path).
  std::unique_ptr<DeviceCommunicator> device;
  std::string device_path_note;  // why not, for the start-up line
  mutable int variables = 0;                // names the broadcasts of create_variable

  // MPI_THREAD_FUNNELED: only the thread that started MPI may call it (not
  // a replica's thread inside run(), say).
  void check_thread(const char* what) const {
    if (!comm) return;
    int level = 0, is_main = 0;
    MPI_Query_thread(&level);
    MPI_Is_thread_main(&is_main);
    if (level < MPI_THREAD_MULTIPLE && !is_main) {
      throw Error(ErrorCode::kFailedPrecondition,
                  std::string(what) +
                      ": called from a thread other than the one that started MPI (the "
                      "strategy's collectives run on that thread, outside run()'s step)");
    }
  }
  void check_per_replica(const char* what, const std::vector<Tensor>& values) const {
    check_thread(what);
    if (values.size() != local->devices().size()) {
      throw Error(ErrorCode::kInvalidArgument,
                  std::string(what) + ": " + std::to_string(values.size()) + " values for " +
                      std::to_string(local->devices().size()) + " local replicas");
    }
  }
  // `first` (MEAN: divided by the number of replicas) on every local
  // replica device.
  std::vector<Tensor> replicate(Tensor first, ReduceOp op, bool divide) const {
    const std::vector<Device>& devices = local->devices();
    {
      DeviceScope scope(devices[0]);
      if (divide && op == ReduceOp::kMean) {
        const int64_t replicas = static_cast<int64_t>(cluster.workers.size() * devices.size());
        first = div(first, scalar_like(first, replicas));
      }
      if (!(first.device() == devices[0])) first = first.to(devices[0]);
    }
    std::vector<Tensor> out{first};
    for (size_t i = 1; i < devices.size(); ++i) out.push_back(first.copy_to(devices[i]));
    return out;
  }
  std::vector<Tensor> upload(const HostTensor& host) const {
    DeviceScope scope(local->devices()[0]);
    return replicate(constant(host.bytes(), host.dtype(), host.shape()), ReduceOp::kSum, false);
  }
  void log_path(const mpi::CallInfo& call, uint64_t bytes) const {
    if (!log_device_placement()) return;
    std::string line = "Collective " + mpi::describe(call) + " (" + std::to_string(bytes) +
                       " B) over " + std::to_string(cluster.workers.size()) + " workers x " +
                       std::to_string(local->devices().size()) + " local replicas: ";
    if (device) {
      line += "via " + device->plugin() + " device collectives";
    } else {
      line += "in-process via " + local->all_reduce_path();
      if (comm) line += ", across workers via MPI over host memory";
    }
    log_line(line);
  }

  // Task 0's plugin makes the id, MPI carries it to every worker, and each
  // joins its local devices as global replicas task·L ... task·L + L-1. Only
  // when every worker's devices can: otherwise every worker keeps the host path.
  void start_device_collectives() {
    const std::vector<Device>& devices = local->devices();
    std::string why;
    std::string plugin = comm->settings().device_collectives
                             ? DeviceCommunicator::plugin_for(devices, &why)
                             : std::string();
    if (!comm->settings().device_collectives) why = "XDEV_DEVICE_COLLECTIVES=0";
    const std::vector<std::string> all = comm->gather_strings(plugin);
    for (int r = 0; r < comm->size(); ++r) {
      if (all[r] != all[0] && why.empty()) {
        why = "task " + std::to_string(r) + " offers " +
              (all[r].empty() ? std::string("none") : all[r]) + ", task 0 " +
              (all[0].empty() ? std::string("none") : all[0]);
      }
    }
    if (!why.empty() || plugin.empty()) {
      device_path_note = "host memory (no device collectives: " + why + ")";
      return;
    }
    // A fixed-size message: the id's length, then its bytes.
    std::vector<uint8_t> message(8 + DeviceCommunicator::kMaxIdBytes, 0);
    if (comm->rank() == 0) {
      const std::vector<uint8_t> id = DeviceCommunicator::unique_id(devices);
      const uint64_t size = id.size();
      std::memcpy(message.data(), &size, sizeof size);
      std::memcpy(message.data() + 8, id.data(), id.size());
    }
    mpi::CallInfo call;
    call.kind = mpi::Collective::kBroadcast;
    call.dtype = DType::kInt64;  // bytes, described as the message's words
    call.shape = Shape{static_cast<int64_t>(message.size() / 8)};
    call.name = "device collective id";
    comm->broadcast(message.data(), message.size(), 0, call);
    uint64_t size = 0;
    std::memcpy(&size, message.data(), sizeof size);
    const std::vector<uint8_t> id(message.begin() + 8,
                                  message.begin() + 8 + static_cast<std::ptrdiff_t>(
                                                            std::min<uint64_t>(size, DeviceCommunicator::kMaxIdBytes)));
    const int replicas = static_cast<int>(devices.size());
    std::vector<int> ranks;
    for (int l = 0; l < replicas; ++l) ranks.push_back(comm->rank() * replicas + l);
    device = std::make_unique<DeviceCommunicator>(devices, id, comm->size() * replicas, ranks,
                                                  comm->settings().timeout);
    device_path_note = plugin + " device collectives";
  }

  // One collective on the device path: the header exchange over MPI (which
  // names mismatches on every worker), then each local replica's part on its
  // device's stream, waited for against XDEV_COLLECTIVE_TIMEOUT_S.
  std::vector<Tensor> run_device(const mpi::CallInfo& call, CollectiveKind kind,
                                 const std::vector<Tensor>& send, std::vector<Tensor> recv,
                                 int root_rank, uint64_t bytes) const {
    comm->agree(call);
    const bool reduces = kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter;
    if (reduces) mpi::check_reducible(call.dtype, call);
    log_path(call, bytes);
    const ReduceOp op = call.op == ReduceOp::kMean ? ReduceOp::kSum : call.op;
    device->enqueue(kind, op, send, recv, root_rank);
    comm->wait_until([this] { return device->poll(); }, [this] { device->abort(); }, call);
    if (reduces && call.op == ReduceOp::kMean) {
      const int64_t replicas = static_cast<int64_t>(comm->size()) * static_cast<int64_t>(recv.size());
      for (size_t i = 0; i < recv.size(); ++i) {
        DeviceScope scope(local->devices()[i]);
        recv[i] = div(recv[i], scalar_like(recv[i], replicas));
      }
    }
    return recv;
  }
  // `t` contiguous on local replica `i`'s device.
  Tensor on_replica(const Tensor& t, size_t i) const {
    const Device& d = local->devices()[i];
    Tensor out = t.to(d);
    return out.is_contiguous() ? out : out.copy_to(d);
  }
  // A new tensor of `shape` on every local replica's device (the results).
  std::vector<Tensor> fresh(const Shape& shape, DType dtype) const {
    std::vector<Tensor> out;
    for (const Device& d : local->devices()) {
      DeviceScope scope(d);
      out.push_back(zeros(shape, dtype));
    }
    return out;
  }
  // The device path needs one shape and dtype on every local replica.
  void check_same(const char* what, const std::vector<Tensor>& values) const {
    for (size_t i = 1; i < values.size(); ++i) {
      if (values[i].dtype() != values[0].dtype() || !(values[i].shape() == values[0].shape())) {
        std::ostringstream m;
        m << what << ": local replica " << i << " has " << values[i].shape() << " "
          << values[i].dtype() << ", replica 0 has " << values[0].shape() << " "
          << values[0].dtype();
        throw Error(ErrorCode::kInvalidArgument, m.str());
      }
    }
  }
  uint64_t byte_size(const Tensor& t) const {
    return static_cast<uint64_t>(t.num_elements()) * itemsize(t.dtype());
  }
};

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(
    const std::vector<std::string>& local_devices)
    : state_(std::make_unique<State>()) {
  const mpi::LaunchInfo launch = mpi::read_launch_info();
  ClusterSpec& cluster = state_->cluster;
  if (!launch.under_mpirun) {
    if (launch.config_workers && launch.config_workers->size() > 1) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "MultiWorkerMirroredStrategy: XDEV_CONFIG names " +
                      std::to_string(launch.config_workers->size()) +
                      " workers, but this process was not started by mpirun (xdev's transport "
                      "between workers is Open MPI): start them with mpirun -np " +
                      std::to_string(launch.config_workers->size()));
    }
    cluster.workers = launch.config_workers.value_or(std::vector<std::string>{"localhost"});
    cluster.task_id = 0;
    cluster.source = "single worker";
    log_line("MultiWorkerMirroredStrategy: not started by mpirun (no OMPI_COMM_WORLD_SIZE, "
             "PMIX_RANK or PMI_SIZE) and no cluster in XDEV_CONFIG: running as a single worker "
             "(task 0 of 1)");
  } else {
    start_mpi();
    int world_rank = 0, world_size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (launch.config_workers && static_cast<int>(launch.config_workers->size()) != world_size) {
      throw Error(ErrorCode::kInvalidArgument,
                  "XDEV_CONFIG names " + std::to_string(launch.config_workers->size()) +
                      " workers, but mpirun started " + std::to_string(world_size) +
                      " processes");
    }
    const int task = launch.config_workers ? launch.config_task : world_rank;
    state_->comm = std::make_unique<mpi::Communicator>(MPI_COMM_WORLD, task,
                                                       mpi::Settings::from_environment());
    mpi::Communicator& comm = *state_->comm;
    if (launch.config_workers) {
      // Every index once: the communicator's ranks are the task indices.
      std::vector<std::string> tasks = comm.gather_strings(std::to_string(task));
      for (int r = 0; r < comm.size(); ++r) {
        if (tasks[r] != std::to_string(r)) {
          throw Error(ErrorCode::kInvalidArgument,
                      "XDEV_CONFIG: task.index " + tasks[r] +
                          " is given to two processes (each of the " +
                          std::to_string(world_size) + " needs its own index)");
        }
      }
      cluster.workers = *launch.config_workers;
      cluster.source = "XDEV_CONFIG";
    } else {
      char host[MPI_MAX_PROCESSOR_NAME];
      int length = 0;
      MPI_Get_processor_name(host, &length);
      cluster.workers = comm.gather_strings(std::string(host, static_cast<size_t>(length)));
      cluster.source = "mpi";
    }
    cluster.task_id = comm.rank();
  }
  state_->local = std::make_unique<MirroredStrategy>(local_devices);
  if (state_->comm) {
    std::vector<std::string> labels;
    for (int r = 0; r < state_->comm->size(); ++r) {
      labels.push_back("task " + std::to_string(r) + " (" + cluster.workers[r] + ")");
    }
    state_->comm->set_task_labels(labels);
    // The same number of replicas everywhere, or global replica ids and
    // batch shares would disagree.
    mpi::CallInfo call;
    call.kind = mpi::Collective::kAllGather;
    call.dtype = DType::kInt64;
    call.shape = Shape{1};
    call.name = "local replica counts";
    std::vector<int64_t> counts(static_cast<size_t>(num_workers()));
    const int64_t mine = num_local_replicas();
    state_->comm->all_gather(&mine, counts.data(), sizeof(int64_t), call);
    for (int r = 0; r < num_workers(); ++r) {
      if (counts[r] != mine) {
        throw Error(ErrorCode::kInvalidArgument,
                    "MultiWorkerMirroredStrategy: task " + std::to_string(r) + " has " +
                        std::to_string(counts[r]) + " local replicas, task " +
                        std::to_string(task_id()) + " has " + std::to_string(mine) +
                        " (every worker needs the same number)");
      }
    }
    state_->start_device_collectives();
  }
  std::string spec = "{'worker': [";
  for (size_t i = 0; i < cluster.workers.size(); ++i) {
    spec += (i > 0 ? ", '" : "'") + cluster.workers[i] + "'";
  }
  spec += "]}";
  log_line("Using MultiWorkerMirroredStrategy with cluster_spec = " + spec +
           ", task_type = 'worker', task_id = " + std::to_string(task_id()) +
           ", num_workers = " + std::to_string(num_workers()) +
           ", local_devices = " + python_tuple(device_names()) + ", communication = " +
           (state_->comm ? "MPI (" + mpi_library_version() + "), across workers via " +
                               state_->device_path_note
                         : std::string("none")));
}

MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() = default;

const ClusterSpec& MultiWorkerMirroredStrategy::cluster() const { return state_->cluster; }
const MirroredStrategy& MultiWorkerMirroredStrategy::local() const { return *state_->local; }

std::vector<std::string> MultiWorkerMirroredStrategy::device_names() const {
  std::vector<std::string> out;
  for (const Device& d : local().devices()) out.push_back(worker_device_name(d.name, task_id()));
  return out;
}

std::vector<std::vector<Tensor>> MultiWorkerMirroredStrategy::run(
    const std::function<std::vector<Tensor>(const ReplicaContext&)>& step) const {
  return local().run(step);
}

std::vector<Tensor> MultiWorkerMirroredStrategy::split_batch(const Tensor& global_batch) const {
  if (!global_batch.defined() || global_batch.rank() == 0) {
    throw Error(ErrorCode::kInvalidArgument, "split_batch: the batch needs at least one axis");
  }
  const int64_t rows = global_batch.shape()[0];
  const int64_t n = num_replicas_in_sync();
  if (rows < n) {
    throw Error(ErrorCode::kInvalidArgument,
                "split_batch: " + std::to_string(rows) + " rows cannot feed " + std::to_string(n) +
                    " replicas");
  }
  // Rows of global replicas [task·L, (task+1)·L), as MirroredStrategy over n
  // replicas would give them; the local split then gives each its own share.
  auto start_of = [&](int64_t g) { return g * (rows / n) + std::min(g, rows % n); };
  const int64_t first = static_cast<int64_t>(task_id()) * num_local_replicas();
  const int64_t begin = start_of(first), end = start_of(first + num_local_replicas());
  Tensor mine = slice(global_batch, {Index::range(begin, end)});
  return local().split_batch(mine);
}

std::vector<Tensor> MultiWorkerMirroredStrategy::all_reduce(ReduceOp op,
                                                            const std::vector<Tensor>& values,
                                                            const std::string& name) const {
  state_->check_per_replica("all_reduce", values);
  if (!state_->comm) return local().all_reduce(op, values);
  const ReduceOp local_op = op == ReduceOp::kMean ? ReduceOp::kSum : op;
  const mpi::CallInfo call = call_info(mpi::Collective::kAllReduce, op, values[0], 0, name);
  if (state_->device) {
    state_->check_same("all_reduce", values);
    std::vector<Tensor> send;
    for (size_t i = 0; i < values.size(); ++i) send.push_back(state_->on_replica(values[i], i));
    return state_->run_device(call, CollectiveKind::kAllReduce, send,
                              state_->fresh(values[0].shape(), values[0].dtype()), 0,
                              state_->byte_size(values[0]));
  }
  HostStaging host(values.size() == 1 ? values[0] : local().reduce(local_op, values, "/CPU:0"),
                   /*separate_result=*/true);
  state_->log_path(call, host.bytes());
  state_->comm->all_reduce(host.send(), host.recv(), host.bytes(), host.dtype(), op, call);
  return state_->replicate(host.adopt(local().devices()[0]), op, /*divide=*/true);
}

std::vector<Tensor> MultiWorkerMirroredStrategy::broadcast(const Tensor& value, int root_task,
                                                           const std::string& name) const {
  state_->check_thread("broadcast");
  if (root_task < 0 || root_task >= num_workers()) {
    throw Error(ErrorCode::kInvalidArgument,
                "broadcast: root task " + std::to_string(root_task) + " is not in [0, " +
                    std::to_string(num_workers()) + ")");
  }
  if (!state_->comm) return state_->replicate(value, ReduceOp::kSum, false);
  const mpi::CallInfo call =
      call_info(mpi::Collective::kBroadcast, ReduceOp::kSum, value, root_task, name);
  if (state_->device) {
    std::vector<Tensor> send;
    for (size_t i = 0; i < local().devices().size(); ++i) {
      send.push_back(state_->on_replica(value, i));
    }
    return state_->run_device(call, CollectiveKind::kBroadcast, send,
                              state_->fresh(value.shape(), value.dtype()),
                              root_task * num_local_replicas(), state_->byte_size(value));
  }
  HostStaging host(value, /*separate_result=*/false);
  state_->log_path(call, host.bytes());
  state_->comm->broadcast(host.recv(), host.bytes(), root_task, call);
  return state_->replicate(host.adopt(local().devices()[0]), ReduceOp::kSum, false);
}

std::vector<Tensor> MultiWorkerMirroredStrategy::all_gather(const std::vector<Tensor>& values,
                                                            const std::string& name) const {
  state_->check_per_replica("all_gather", values);
  if (values[0].rank() == 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "all_gather '" + name + "': scalars cannot be concatenated along axis 0");
  }
  if (state_->device) {
    state_->check_same("all_gather", values);
    const mpi::CallInfo call =
        call_info(mpi::Collective::kAllGather, ReduceOp::kSum, values[0], 0, name);
    std::vector<Tensor> send;
    for (size_t i = 0; i < values.size(); ++i) send.push_back(state_->on_replica(values[i], i));
    Shape shape = values[0].shape();
    shape[0] *= num_replicas_in_sync();
    return state_->run_device(call, CollectiveKind::kAllGather, send,
                              state_->fresh(shape, values[0].dtype()), 0,
                              state_->byte_size(values[0]));
  }
  Tensor mine;
  {
    DeviceScope scope("/CPU:0");
    mine = values.size() == 1 ? values[0] : concat(values, 0);
  }
  HostTensor local_rows = mine.to_host();
  if (!state_->comm) return state_->upload(local_rows);
  const mpi::CallInfo call =
      call_info(mpi::Collective::kAllGather, ReduceOp::kSum, values[0], 0, name);
  Shape shape = local_rows.shape();
  shape[0] *= num_workers();
  HostTensor all(local_rows.dtype(), shape);
  state_->log_path(call, local_rows.byte_size());
  state_->comm->all_gather(local_rows.bytes(), all.bytes(), local_rows.byte_size(), call);
  return state_->upload(all);
}

std::vector<Tensor> MultiWorkerMirroredStrategy::reduce_scatter(ReduceOp op,
                                                                const std::vector<Tensor>& values,
                                                                const std::string& name) const {
  state_->check_per_replica("reduce_scatter", values);
  const int64_t replicas = num_replicas_in_sync();
  if (values[0].rank() == 0 || values[0].shape()[0] % replicas != 0) {
    std::ostringstream m;
    m << "reduce_scatter '" << name << "': axis 0 of " << values[0].shape()
      << " does not divide among " << replicas << " replicas";
    throw Error(ErrorCode::kInvalidArgument, m.str());
  }
  if (state_->comm && state_->device) {
    state_->check_same("reduce_scatter", values);
    const mpi::CallInfo call =
        call_info(mpi::Collective::kReduceScatter, op, values[0], 0, name);
    std::vector<Tensor> send;
    for (size_t i = 0; i < values.size(); ++i) send.push_back(state_->on_replica(values[i], i));
    Shape shape = values[0].shape();
    shape[0] /= replicas;
    return state_->run_device(call, CollectiveKind::kReduceScatter, send,
                              state_->fresh(shape, values[0].dtype()), 0,
                              state_->byte_size(values[0]));
  }
  const ReduceOp local_op = op == ReduceOp::kMean ? ReduceOp::kSum : op;
  Tensor reduced = local().reduce(local_op, values, "/CPU:0");
  if (!state_->comm) {
    if (op == ReduceOp::kMean) reduced = div(reduced, scalar_like(reduced, replicas));
    return local().split_batch(reduced);
  }
  const mpi::CallInfo call = call_info(mpi::Collective::kReduceScatter, op, values[0], 0, name);
  HostTensor host = reduced.to_host();
  Shape shape = host.shape();
  shape[0] /= num_workers();
  HostTensor block(host.dtype(), shape);
  state_->log_path(call, host.byte_size());
  state_->comm->reduce_scatter(host.bytes(), block.bytes(),
                               static_cast<uint64_t>(block.num_elements()), host.dtype(), op,
                               call);
  Tensor mine;
  {
    DeviceScope scope("/CPU:0");
    mine = constant(block.bytes(), block.dtype(), block.shape());
    if (op == ReduceOp::kMean) mine = div(mine, scalar_like(mine, replicas));
  }
  return local().split_batch(mine);
}

void MultiWorkerMirroredStrategy::barrier() const {
  if (!state_->comm) return;
  state_->check_thread("barrier");
  mpi::CallInfo call;
  call.kind = mpi::Collective::kBarrier;
  call.name = "barrier";
  state_->comm->barrier(call);
}

MirroredVariable MultiWorkerMirroredStrategy::create_variable(const Tensor& initial) const {
  if (!initial.defined()) {
    throw Error(ErrorCode::kInvalidArgument, "create_variable: the initial value is empty");
  }
  const std::string name = "variable " + std::to_string(state_->variables++);
  return local().create_variable(broadcast(initial, 0, name)[0]);
}

void MultiWorkerMirroredStrategy::save_checkpoint(
    const std::vector<std::pair<std::string, MirroredVariable>>& variables,
    const std::string& path) const {
  std::exception_ptr failure;
  if (is_chief()) {
    try {
      std::map<std::string, Tensor> tensors;
      for (const auto& [name, variable] : variables) tensors[name] = variable.value();
      save_file(tensors, path, {{"written_by", "task 0 of " + std::to_string(num_workers())}});
    } catch (...) {
      failure = std::current_exception();
    }
  }
  barrier();  // after the rename: a worker that returns sees the whole file
  if (failure) std::rethrow_exception(failure);
}

}  // namespace xdev
