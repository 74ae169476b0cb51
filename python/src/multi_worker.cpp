// The extension module xdev._xdev_mpi: xdev::MultiWorkerMirroredStrategy
// (libxdev_mpi, <xdev/multi_worker.hpp>) for xdev.distribute. A module of its
// own, built only when meson finds MPI (python/meson.build), for the reason
// libxdev_mpi is a library of its own: `import xdev` never loads libmpi;
// xdev.distribute.MultiWorkerMirroredStrategy imports this module when it is
// constructed. The types it shares with xdev._xdev (Tensor, ReduceOp,
// _MirroredStrategy, _MirroredVariable, the errors) are bound there; nanobind
// shares them between the two modules.
//
// Every collective releases the GIL while it waits for the other workers. MPI
// runs with MPI_THREAD_FUNNELED: the collectives belong to the thread that
// constructed the strategy (the C++ side refuses other threads).
#include "bindings.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include <xdev/multi_worker.hpp>

NB_MODULE(_xdev_mpi, m) {
  using namespace xdev;
  using xdev::python::release_gil;
  namespace nb = nanobind;
  m.doc() = "xdev's MultiWorkerMirroredStrategy over MPI (use xdev.distribute, not this module)";
  // Tensor, ReduceOp, _MirroredStrategy, _MirroredVariable and the error
  // translator are registered by xdev._xdev.
  nb::module_::import_("xdev._xdev");

  // Public names (this module is private to the package): its type stub,
  // _xdev_mpi.pyi, lists them.
  nb::class_<ClusterSpec>(m, "ClusterSpec")
      .def_ro("workers", &ClusterSpec::workers)
      .def_ro("task_id", &ClusterSpec::task_id)
      .def_ro("source", &ClusterSpec::source);

  nb::class_<MultiWorkerMirroredStrategy>(m, "MultiWorkerMirroredStrategy")
      .def("__init__", [](MultiWorkerMirroredStrategy* self,
                          const std::vector<std::string>& local_devices) {
        nb::gil_scoped_release release;  // start-up talks to every worker
        new (self) MultiWorkerMirroredStrategy(local_devices);
      }, nb::arg("local_devices"))
      .def_prop_ro("cluster", &MultiWorkerMirroredStrategy::cluster,
                   nb::rv_policy::reference_internal)
      .def_prop_ro("task_id", &MultiWorkerMirroredStrategy::task_id)
      .def_prop_ro("num_workers", &MultiWorkerMirroredStrategy::num_workers)
      .def_prop_ro("is_chief", &MultiWorkerMirroredStrategy::is_chief)
      // This worker's replicas: xdev._xdev._MirroredStrategy, whose run()
      // runs the step functions (MultiWorkerMirroredStrategy::run is its run).
      .def_prop_ro("local", &MultiWorkerMirroredStrategy::local, nb::rv_policy::reference_internal)
      .def("cross_replica_sum",
           [](const MultiWorkerMirroredStrategy& s) { return cross_replica_sum(s); },
           nb::keep_alive<0, 1>(),
           "SUM over every replica of every worker, for optimizers (xdev._xdev._CrossReplicaSum).")
      .def_prop_ro("num_local_replicas", &MultiWorkerMirroredStrategy::num_local_replicas)
      .def_prop_ro("num_replicas_in_sync", &MultiWorkerMirroredStrategy::num_replicas_in_sync)
      .def("global_replica_id", [](const MultiWorkerMirroredStrategy& s, int local_replica) {
        ReplicaContext replica;
        replica.replica_id = local_replica;
        return s.global_replica_id(replica);
      }, nb::arg("local_replica_id"))
      .def_prop_ro("device_names", &MultiWorkerMirroredStrategy::device_names)
      .def("create_variable", &MultiWorkerMirroredStrategy::create_variable, nb::arg("initial"),
           release_gil())
      .def("split_batch", &MultiWorkerMirroredStrategy::split_batch, nb::arg("global_batch"),
           release_gil())
      .def("all_reduce", &MultiWorkerMirroredStrategy::all_reduce, nb::arg("op"),
           nb::arg("per_replica"), nb::arg("name") = "", release_gil(),
           "SUM/MEAN/MAX/MIN over every replica of every worker (one tensor per local "
           "replica); the result on every local replica device. `name` names the tensor in "
           "errors and logs.")
      .def("broadcast", &MultiWorkerMirroredStrategy::broadcast, nb::arg("value"),
           nb::arg("root_task") = 0, nb::arg("name") = "", release_gil(),
           "Task `root_task`'s `value` on every local replica device.")
      .def("all_gather", &MultiWorkerMirroredStrategy::all_gather, nb::arg("per_replica"),
           nb::arg("name") = "", release_gil(),
           "Every replica's tensor concatenated along axis 0 in global replica order.")
      .def("reduce_scatter", &MultiWorkerMirroredStrategy::reduce_scatter, nb::arg("op"),
           nb::arg("per_replica"), nb::arg("name") = "", release_gil(),
           "all_reduce, then global replica g keeps its share of rows along axis 0.")
      .def("barrier", &MultiWorkerMirroredStrategy::barrier, release_gil(),
           "Returns when every worker has called it.")
      .def("save_checkpoint", &MultiWorkerMirroredStrategy::save_checkpoint,
           nb::arg("variables"), nb::arg("path"), release_gil(),
           "A safetensors file of replica 0's values, written by task 0 only; then a barrier.");
}
