// xdev::MirroredStrategy for xdev.distribute (the Python class adds scope(),
// PerReplica values and TensorFlow's argument handling).
#include "bindings.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <mutex>
#include <string>
#include <vector>

namespace xdev::python {

void bind_distribute(nb::module_& m) {
  nb::enum_<ReduceOp>(m, "ReduceOp",
                      "How all-reduce combines values (tf.distribute.ReduceOp; MAX and MIN as "
                      "Horovod and NCCL offer them).")
      .value("SUM", ReduceOp::kSum)
      .value("MEAN", ReduceOp::kMean)
      .value("MAX", ReduceOp::kMax)
      .value("MIN", ReduceOp::kMin);

  nb::class_<MirroredVariable>(m, "_MirroredVariable")
      .def_prop_ro("values", &MirroredVariable::values)
      .def("local", [](const MirroredVariable& v, int replica) { return v.local(replica); },
           nb::arg("replica_id"))
      .def("assign_sub", &MirroredVariable::assign_sub, nb::arg("deltas"), nb::arg("scale") = 1.0,
           release_gil())
      .def("assign", &MirroredVariable::assign, nb::arg("value"), release_gil());

  nb::class_<CrossReplicaSum>(m, "_CrossReplicaSum",
                              "How a strategy sums one tensor per local replica over all its "
                              "replicas (xdev::CrossReplicaSum), for optimizers; it keeps its "
                              "strategy alive.")
      .def_ro("devices", &CrossReplicaSum::devices);

  nb::class_<MirroredStrategy>(m, "_MirroredStrategy")
      .def("__init__", [](MirroredStrategy* self, const std::vector<std::string>& devices) {
        nb::gil_scoped_release release;
        new (self) MirroredStrategy(devices);
      }, nb::arg("devices"))
      .def_prop_ro("devices", &MirroredStrategy::devices)
      .def_prop_ro("num_replicas_in_sync", &MirroredStrategy::num_replicas_in_sync)
      .def("create_variable", &MirroredStrategy::create_variable, nb::arg("initial"),
           release_gil())
      .def("split_batch", &MirroredStrategy::split_batch, nb::arg("batch"), release_gil())
      .def("all_reduce", &MirroredStrategy::all_reduce, nb::arg("op"), nb::arg("per_replica"),
           release_gil())
      .def("reduce", &MirroredStrategy::reduce, nb::arg("op"), nb::arg("per_replica"),
           nb::arg("destination") = "/CPU:0", release_gil())
      .def("all_reduce_path", &MirroredStrategy::all_reduce_path, release_gil())
      .def("cross_replica_sum",
           [](const MirroredStrategy& s) { return cross_replica_sum(s); },
           nb::keep_alive<0, 1>())
      // Calls fn(replica_id) once per replica, concurrently, each on its own
      // thread under a scope of its device; fn returns a list of tensors. The
      // replicas take turns holding the GIL to run Python and release it in
      // every op. The first Python exception a replica raised is raised again
      // here, with the replica and device in a note.
      .def("run", [](const MirroredStrategy& s, nb::callable fn) {
        std::mutex mutex;
        nb::object first_error;  // touched only with the GIL held
        int failed_replica = -1;
        std::vector<std::vector<Tensor>> results;
        try {
          nb::gil_scoped_release release;
          results = s.run([&](const ReplicaContext& replica) {
            nb::gil_scoped_acquire acquire;
            try {
              return nb::cast<std::vector<Tensor>>(fn(replica.replica_id));
            } catch (nb::python_error& e) {
              std::lock_guard lock(mutex);
              if (!first_error.is_valid()) {
                first_error = nb::borrow(e.value());
                failed_replica = replica.replica_id;
              }
              throw Error(ErrorCode::kInternal, e.what());
            }
          });
        } catch (const Error&) {
          if (!first_error.is_valid()) throw;
          const std::string note = "raised by replica " + std::to_string(failed_replica) + " on " +
                                   s.devices()[static_cast<size_t>(failed_replica)].name +
                                   " in MirroredStrategy.run";
          if (nb::hasattr(first_error, "add_note")) first_error.attr("add_note")(note);
          PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(first_error.ptr())),
                          first_error.ptr());
          throw nb::python_error();
        }
        return results;
      }, nb::arg("fn"));
}

}  // namespace xdev::python
