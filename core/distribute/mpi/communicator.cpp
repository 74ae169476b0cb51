// Host-memory collectives between workers over MPI (README.md in this folder).
#include "communicator.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include <xdev/env_value.hpp>
#include <xdev/error.hpp>

namespace xdev::mpi {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxAxes = 8;
constexpr int kProbeTag = 7177;
std::atomic<bool> g_failed{false};

// One worker's CallInfo as it travels (fixed size, trivially copyable).
struct Header {
  int32_t kind;
  int32_t op;
  int32_t dtype;
  int32_t root;
  int32_t rank;  // the tensor's
  int32_t pad;
  int64_t num_elements;
  int64_t dims[kMaxAxes];
  char name[64];
};

Header to_header(const CallInfo& call) {
  Header h{};
  h.kind = static_cast<int32_t>(call.kind);
  h.op = static_cast<int32_t>(call.op);
  h.dtype = static_cast<int32_t>(call.dtype);
  h.root = call.root;
  h.rank = static_cast<int32_t>(call.shape.rank());
  h.num_elements = call.shape.num_elements();
  for (int i = 0; i < std::min(h.rank, kMaxAxes); ++i) h.dims[i] = call.shape[i];
  std::strncpy(h.name, call.name.c_str(), sizeof(h.name) - 1);
  return h;
}

bool same_call(const Header& a, const Header& b) {
  if (a.kind != b.kind || a.op != b.op || a.dtype != b.dtype || a.root != b.root ||
      a.rank != b.rank || a.num_elements != b.num_elements ||
      std::strncmp(a.name, b.name, sizeof(a.name)) != 0) {
    return false;
  }
  return std::equal(a.dims, a.dims + std::min(a.rank, kMaxAxes), b.dims);
}

// "(3, 1) float32", as xdev prints shapes elsewhere.
std::string header_shape(const Header& h) {
  std::ostringstream out;
  if (h.rank <= kMaxAxes) {
    out << Shape(std::vector<int64_t>(h.dims, h.dims + h.rank));
  } else {
    out << "(";
    for (int i = 0; i < kMaxAxes; ++i) out << h.dims[i] << ", ";
    out << "... " << h.rank << " axes)";
  }
  out << " " << to_string(static_cast<DType>(h.dtype));
  return out.str();
}

std::string header_text(const Header& h) {
  std::string out(collective_name(static_cast<Collective>(h.kind)));
  if (h.kind == static_cast<int32_t>(Collective::kAllReduce) ||
      h.kind == static_cast<int32_t>(Collective::kReduceScatter)) {
    out += " " + std::string(to_string(static_cast<ReduceOp>(h.op)));
  }
  if (h.kind == static_cast<int32_t>(Collective::kBroadcast)) {
    out += " from task " + std::to_string(h.root);
  }
  return out + " of '" + std::string(h.name) + "' " + header_shape(h);
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return MPI_FLOAT;
    case DType::kFloat64: return MPI_DOUBLE;
    case DType::kInt32: return MPI_INT32_T;
    case DType::kInt64: return MPI_INT64_T;
    case DType::kBool: return MPI_UINT8_T;
    case DType::kUInt8: return MPI_UINT8_T;
    case DType::kInt8: return MPI_INT8_T;
    case DType::kFloat16:
    case DType::kBFloat16:
      throw Error(ErrorCode::kUnimplemented,
                  "collective: " + std::string(to_string(dtype)) +
                      " tensors are not sent over MPI (it has no 16-bit float type); cast them "
                      "to float32 first");
  }
  throw Error(ErrorCode::kInvalidArgument, "collective: invalid dtype");
}

MPI_Op mpi_op(ReduceOp op, DType dtype, const CallInfo& call) {
  check_reducible(dtype, call);
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean: return MPI_SUM;  // the caller divides
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
  }
  throw Error(ErrorCode::kInvalidArgument, "collective: invalid reduce op");
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    throw Error(ErrorCode::kInternal, std::string(what) + " failed: " + mpi_error_text(code));
  }
}

void warn(const std::string& warning) {
  if (warning.empty()) return;
  std::fflush(stdout);
  std::fprintf(stderr, "xdev: warning: %s\n", warning.c_str());
}

}  // namespace

std::string_view collective_name(Collective kind) {
  switch (kind) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kBarrier: return "barrier";
  }
  return "collective";
}

bool any_collective_failed() { return g_failed.load(); }

void check_reducible(DType dtype, const CallInfo& call) {
  if (dtype == DType::kBool) {  // as in one process: AddN, Maximum, Minimum refuse bool
    throw Error(ErrorCode::kInvalidArgument,
                describe(call) + ": bool tensors are not reduced (cast them to int32 first)");
  }
}

std::string describe(const CallInfo& call) { return header_text(to_header(call)); }

Settings Settings::from_environment() {
  namespace ev = xdev::env_value;
  Settings s;
  auto timeout = ev::parse_uint("XDEV_COLLECTIVE_TIMEOUT_S", std::getenv("XDEV_COLLECTIVE_TIMEOUT_S"),
                                60, 1, 86400);
  warn(timeout.warning);
  s.timeout = std::chrono::seconds(timeout.value);
  auto chunk = ev::parse_uint("XDEV_COLLECTIVE_CHUNK_MIB", std::getenv("XDEV_COLLECTIVE_CHUNK_MIB"),
                              8, 1, 1024);
  warn(chunk.warning);
  s.chunk_bytes = chunk.value << 20;
  auto device = ev::parse_bool("XDEV_DEVICE_COLLECTIVES", std::getenv("XDEV_DEVICE_COLLECTIVES"),
                               true);
  warn(device.warning);
  s.device_collectives = device.value;
  return s;
}

Communicator::Communicator(MPI_Comm parent, int key, Settings settings)
    : settings_(settings) {
  check_mpi(MPI_Comm_split(parent, 0, key, &comm_), "MPI_Comm_split");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_dup(comm_, &probe_comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(probe_comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Communicator::~Communicator() {
  // After a failure requests may still be pending on them: leave them.
  if (broken_) return;
  MPI_Comm_free(&probe_comm_);
  MPI_Comm_free(&comm_);
}

std::string Communicator::label(int rank) const {
  if (rank >= 0 && static_cast<size_t>(rank) < labels_.size()) return labels_[rank];
  return "task " + std::to_string(rank);
}

std::vector<std::string> Communicator::gather_strings(const std::string& mine) {
  constexpr int kWidth = 256;
  std::vector<char> send(kWidth, '\0'), recv(static_cast<size_t>(kWidth) * size_, '\0');
  std::strncpy(send.data(), mine.c_str(), kWidth - 1);
  check_mpi(MPI_Allgather(send.data(), kWidth, MPI_CHAR, recv.data(), kWidth, MPI_CHAR, comm_),
            "MPI_Allgather of the host names");
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r) out.emplace_back(recv.data() + static_cast<size_t>(r) * kWidth);
  return out;
}

void Communicator::fail(const CallInfo& call, const std::string& why) {
  broken_ = true;
  g_failed = true;
  // Which workers still answer? Every survivor is stuck in the same
  // collective and reaches its own deadline about when this one did, so each
  // sends a probe to every other and waits a grace period for theirs.
  const auto grace = std::clamp(settings_.timeout / 4, std::chrono::milliseconds(2000),
                                std::chrono::milliseconds(10000));
  std::vector<int> token(static_cast<size_t>(size_), rank_), got(static_cast<size_t>(size_), -1);
  std::vector<MPI_Request> sends, recvs(static_cast<size_t>(size_), MPI_REQUEST_NULL);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MPI_Request s;
    if (MPI_Isend(&token[r], 1, MPI_INT, r, kProbeTag, probe_comm_, &s) == MPI_SUCCESS) {
      sends.push_back(s);
    }
    MPI_Irecv(&got[r], 1, MPI_INT, r, kProbeTag, probe_comm_, &recvs[r]);
  }
  std::vector<bool> answered(static_cast<size_t>(size_), false);
  answered[rank_] = true;
  const auto until = Clock::now() + grace;
  while (Clock::now() < until) {
    bool all = true;
    for (int r = 0; r < size_; ++r) {
      if (answered[r]) continue;
      int done = 0;
      if (recvs[r] != MPI_REQUEST_NULL &&
          MPI_Test(&recvs[r], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
        answered[r] = true;
      } else {
        all = false;
      }
    }
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<int> lost;
  for (int r = 0; r < size_; ++r) {
    if (!answered[r]) lost.push_back(r);
  }
  std::ostringstream m;
  m << describe(call) << " on task " << rank_ << " of " << size_ << ": " << why << "; ";
  if (lost.empty()) {
    m << "every task answered a liveness probe afterwards (a slow worker: raise "
         "XDEV_COLLECTIVE_TIMEOUT_S)";
  } else {
    m << "lost ";
    for (size_t i = 0; i < lost.size(); ++i) m << (i > 0 ? ", " : "") << label(lost[i]);
    m << ": " << (lost.size() == 1 ? "it" : "they")
      << " did not answer a liveness probe (died or hangs)";
  }
  m << ". The strategy's collectives are unusable from now on";
  throw Error(ErrorCode::kUnavailable, m.str());
}

void Communicator::wait(MPI_Request* requests, int count, const CallInfo& call) {
  for (int i = 0; i < count; ++i) {
    poll_until(
        [&] {
          int done = 0;
          int rc = MPI_Test(&requests[i], &done, MPI_STATUS_IGNORE);
          if (rc != MPI_SUCCESS) fail(call, "MPI reported " + mpi_error_text(rc));
          return done != 0;
        },
        [] {}, call, "");
  }
}

void Communicator::wait_until(const std::function<bool()>& done,
                              const std::function<void()>& abort, const CallInfo& call) {
  poll_until(
      [&] {
        try {
          return done();
        } catch (const Error& e) {
          abort();
          fail(call, std::string("the device collective failed: ") + e.what());
        }
      },
      abort, call, " waiting for the device collective");
}

void Communicator::poll_until(const std::function<bool()>& done,
                              const std::function<void()>& abort, const CallInfo& call,
                              const char* where) {
  const auto started = Clock::now();
  for (;;) {
    if (done()) return;
    const auto now = Clock::now();
    if (now - started > settings_.timeout) {
      abort();
      fail(call, "no progress within " +
                     std::to_string(
                         std::chrono::duration_cast<std::chrono::seconds>(settings_.timeout)
                             .count()) +
                     " s (XDEV_COLLECTIVE_TIMEOUT_S)" + where);
    }
    // Spin while the call is young (MPI_Test drives the progress engine),
    // then give the core away: a peer may share it (--oversubscribe).
    if (now - started > std::chrono::seconds(1)) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    } else if (now - started > std::chrono::milliseconds(2)) {
      std::this_thread::yield();
    }
  }
}

void Communicator::agree(const CallInfo& call) {
  if (broken_) {
    throw Error(ErrorCode::kFailedPrecondition,
                describe(call) + ": an earlier collective failed; the strategy is unusable");
  }
  const Header mine = to_header(call);
  std::vector<Header> all(static_cast<size_t>(size_));
  MPI_Request request;
  int rc = MPI_Iallgather(&mine, sizeof(Header), MPI_BYTE, all.data(), sizeof(Header), MPI_BYTE,
                          comm_, &request);
  if (rc != MPI_SUCCESS) fail(call, "MPI_Iallgather of the call headers: " + mpi_error_text(rc));
  wait(&request, 1, call);
  for (int r = 1; r < size_; ++r) {
    if (same_call(all[0], all[r])) continue;
    // Every worker sees the same headers, so every worker throws this.
    std::ostringstream m;
    const bool same_name = std::strncmp(all[0].name, all[r].name, sizeof(Header::name)) == 0 &&
                           all[0].kind == all[r].kind;
    m << collective_name(call.kind) << " '" << call.name << "' across " << size_
      << " workers: " << (same_name ? "shapes or dtypes differ" : "the workers disagree")
      << ": task 0 has " << header_text(all[0]) << ", task " << r << " has "
      << header_text(all[r]);
    throw Error(ErrorCode::kInvalidArgument, m.str());
  }
}

void Communicator::all_reduce(const void* send, void* recv, uint64_t bytes, DType dtype,
                              ReduceOp op, const CallInfo& call) {
  agree(call);
  const MPI_Datatype type = mpi_type(dtype);
  const MPI_Op reduce = mpi_op(op, dtype, call);
  const uint64_t item = itemsize(dtype);
  const uint64_t chunk = std::max<uint64_t>(item, settings_.chunk_bytes / item * item);
  std::vector<MPI_Request> flight;
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  for (uint64_t offset = 0; offset < bytes; offset += chunk) {
    if (flight.size() == static_cast<size_t>(settings_.depth)) {
      wait(flight.data(), 1, call);
      flight.erase(flight.begin());
    }
    const uint64_t n = std::min(chunk, bytes - offset) / item;
    MPI_Request r;
    int rc = MPI_Iallreduce(in == out ? MPI_IN_PLACE : in + offset, out + offset,
                            static_cast<int>(n), type, reduce, comm_, &r);
    if (rc != MPI_SUCCESS) fail(call, "MPI_Iallreduce: " + mpi_error_text(rc));
    flight.push_back(r);
  }
  wait(flight.data(), static_cast<int>(flight.size()), call);
}

void Communicator::broadcast(void* data, uint64_t bytes, int root, const CallInfo& call) {
  agree(call);
  std::vector<MPI_Request> flight;
  auto* bytes_ptr = static_cast<unsigned char*>(data);
  const uint64_t chunk = settings_.chunk_bytes;
  for (uint64_t offset = 0; offset < bytes; offset += chunk) {
    if (flight.size() == static_cast<size_t>(settings_.depth)) {
      wait(flight.data(), 1, call);
      flight.erase(flight.begin());
    }
    MPI_Request r;
    int rc = MPI_Ibcast(bytes_ptr + offset, static_cast<int>(std::min(chunk, bytes - offset)),
                        MPI_BYTE, root, comm_, &r);
    if (rc != MPI_SUCCESS) fail(call, "MPI_Ibcast: " + mpi_error_text(rc));
    flight.push_back(r);
  }
  wait(flight.data(), static_cast<int>(flight.size()), call);
}

void Communicator::all_gather(const void* send, void* recv, uint64_t bytes_each,
                              const CallInfo& call) {
  agree(call);
  if (bytes_each > static_cast<uint64_t>(INT32_MAX)) {
    throw Error(ErrorCode::kInvalidArgument, describe(call) + ": more than 2 GiB per worker");
  }
  MPI_Request r;
  int rc = MPI_Iallgather(send, static_cast<int>(bytes_each), MPI_BYTE, recv,
                          static_cast<int>(bytes_each), MPI_BYTE, comm_, &r);
  if (rc != MPI_SUCCESS) fail(call, "MPI_Iallgather: " + mpi_error_text(rc));
  wait(&r, 1, call);
}

void Communicator::reduce_scatter(const void* send, void* recv, uint64_t count_each, DType dtype,
                                  ReduceOp op, const CallInfo& call) {
  agree(call);
  const MPI_Op reduce = mpi_op(op, dtype, call);
  if (count_each > static_cast<uint64_t>(INT32_MAX)) {
    throw Error(ErrorCode::kInvalidArgument, describe(call) + ": too many elements per worker");
  }
  MPI_Request r;
  int rc = MPI_Ireduce_scatter_block(send, recv, static_cast<int>(count_each), mpi_type(dtype),
                                     reduce, comm_, &r);
  if (rc != MPI_SUCCESS) fail(call, "MPI_Ireduce_scatter_block: " + mpi_error_text(rc));
  wait(&r, 1, call);
}

void Communicator::barrier(const CallInfo& call) {
  agree(call);
  MPI_Request r;
  int rc = MPI_Ibarrier(comm_, &r);
  if (rc != MPI_SUCCESS) fail(call, "MPI_Ibarrier: " + mpi_error_text(rc));
  wait(&r, 1, call);
}

}  // namespace xdev::mpi
