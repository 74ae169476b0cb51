// The recording hook of reverse-mode autodiff (core/autodiff/): every op the
// SDK runs (run_defined_op, run_defined_op_outputs), every view it makes
// without an op (tensors/views.cpp: storage_view) and every explicit copy to
// another device (Tensor::to, copy_to) is reported to the recorder of the
// thread that ran it, if one is installed. autodiff/ installs one while a
// GradientTape is alive on the thread; the cost of the hook otherwise is one
// initial-exec TLS load per op.
//
// The hook is declared here, below autodiff/, so that ops/ and tensors/ call
// down into an interface instead of up into the tape (core/README.md).
#pragma once

#include <span>

#include <xdev/plugin.h>
#include <xdev/tensor.hpp>

#include "opdefs/op_table.hpp"

namespace xdev::detail {

class OpRecorder {
 public:
  virtual ~OpRecorder() = default;
  // `op` ran on `inputs` with `attrs` (what the kernel got: defaults filled
  // in; the recorder copies what it keeps) and gave `outputs`.
  virtual void record_op(OpId op, std::span<const Tensor* const> inputs,
                         std::span<const xdev_attr_t> attrs, std::span<const Tensor> outputs) = 0;
  // `view` is a view of `source`'s storage made without an op.
  virtual void record_view(const Tensor& source, const Tensor& view) = 0;
  // `copy` holds `source`'s values on another device (or a new buffer).
  virtual void record_copy(const Tensor& source, const Tensor& copy) = 0;
};

// This thread's recorder, or nullptr (no tape records on this thread).
extern thread_local OpRecorder* t_op_recorder __attribute__((tls_model("initial-exec")));

inline OpRecorder* op_recorder() { return t_op_recorder; }

// While alive, no tape records this thread's ops (variable assignments,
// optimizer updates).
class NoRecording {
 public:
  NoRecording() : saved_(t_op_recorder) { t_op_recorder = nullptr; }
  ~NoRecording() { t_op_recorder = saved_; }
  NoRecording(const NoRecording&) = delete;
  NoRecording& operator=(const NoRecording&) = delete;

 private:
  OpRecorder* saved_;
};

}  // namespace xdev::detail
