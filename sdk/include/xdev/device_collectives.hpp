// Collectives between devices of many processes on the devices' own streams,
// through a plugin that offers them (plugin ABI 1.7, XDEV_CAP_COLLECTIVES:
// NCCL in the cuda plugin, shared host memory in the sim test plugin).
// libxdev_mpi's MultiWorkerMirroredStrategy uses them; libxdev itself knows
// no transport between processes, so the caller carries the id
// (not compiled: rank, nranks and the transport are the caller's):
//   std::vector<xdev::Device> mine = ...;            // this process's devices
//   if (xdev::DeviceCommunicator::plugin_for(mine).empty()) { /* host path */ }
//   std::vector<uint8_t> id;
//   if (rank == 0) id = xdev::DeviceCommunicator::unique_id(mine);
//   /* send `id` to every process (MPI_Bcast) */
//   xdev::DeviceCommunicator comm(mine, id, nranks, my_ranks, std::chrono::seconds(60));
//   comm.enqueue(xdev::CollectiveKind::kAllReduce, xdev::ReduceOp::kSum, send, recv);
//   while (!comm.poll()) { /* a deadline: comm.abort() */ }
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <xdev/device.hpp>
#include <xdev/distribute.hpp>
#include <xdev/export.hpp>
#include <xdev/tensor.hpp>

namespace xdev {

enum class CollectiveKind { kAllReduce, kAllGather, kBroadcast, kReduceScatter };

class XDEV_API DeviceCommunicator {
 public:
  // The most bytes unique_id() returns (plugin.h's XDEV_COLLECTIVE_ID_MAX_SIZE).
  static constexpr size_t kMaxIdBytes = 256;

  // The name of the plugin every one of `devices` belongs to when it offers
  // device collectives; "" otherwise, and `why` (when given) says why not
  // ("/CPU:0 is a device of plugin cpu, which does not declare
  // XDEV_CAP_COLLECTIVES"). Throws kNotFound for an unknown device.
  static std::string plugin_for(const std::vector<Device>& devices, std::string* why = nullptr);
  // A new bootstrap id from the plugin of `devices` (plugin_for must name
  // one): made in one process, sent by the caller to every other.
  static std::vector<uint8_t> unique_id(const std::vector<Device>& devices);

  // Joins `devices` to the group `id` names, devices[i] as rank ranks[i] of
  // `nranks` (over all processes). Blocks until every rank joined; throws
  // xdev::Error(kUnavailable) after `timeout` without them.
  DeviceCommunicator(const std::vector<Device>& devices, const std::vector<uint8_t>& id,
                     int nranks, const std::vector<int>& ranks, std::chrono::milliseconds timeout);
  // Waits for this process's collectives and frees the communicators (after
  // abort(): nothing left to free).
  ~DeviceCommunicator();
  DeviceCommunicator(const DeviceCommunicator&) = delete;
  DeviceCommunicator& operator=(const DeviceCommunicator&) = delete;

  const std::string& plugin() const;
  int nranks() const;

  // Enqueues one collective, send[i] and recv[i] on devices[i] (contiguous,
  // the dtype and sizes plugin.h's xdev_collective_kind_t asks for; recv
  // may be send for all-reduce and broadcast). kMean is refused: reduce with
  // kSum and divide. `root` is a rank (broadcast). Returns at once; the
  // tensors must stay alive until poll() says done.
  void enqueue(CollectiveKind kind, ReduceOp op, const std::vector<Tensor>& send,
               const std::vector<Tensor>& recv, int root = 0);
  // True when the last enqueued collective completed on every device (its
  // errors thrown); throws the plugin's asynchronous error (a peer aborted)
  // as xdev::Error. Does not block.
  bool poll();
  // Tears the communicators down with their pending work (a lost peer): the
  // devices' streams drain; every later call throws kFailedPrecondition.
  void abort();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace xdev
