// GradientTape, stop_gradient and Variable (<xdev/autodiff.hpp>).
//
// Each thread keeps the stack of its live tapes (ThreadTapes) and installs
// itself as the thread's op recorder (tensors/op_record.hpp) while the stack is
// not empty. A tape keeps one Record per op, view or copy whose inputs are on
// it, in the order they ran; gradient() walks them backwards, calling each
// op's entry of the gradient table (gradients.cpp) under a DeviceScope of
// the device that ran the op.
#include <xdev/autodiff.hpp>

#include <xdev/ops.hpp>
#include <xdev/placement.hpp>

#include <algorithm>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "autodiff/gradients.hpp"
#include "tensors/op_record.hpp"
#include "placement/placement_state.hpp"
#include "tensors/tensor_impl.hpp"

namespace xdev::detail {

struct VariableState {
  mutable std::mutex mutex;
  Tensor value;
  bool trainable = true;
  std::string name;
};

namespace {

struct Record {
  enum class Kind : uint8_t { kOp, kView, kCopy };
  Kind kind = Kind::kOp;
  OpId op = OpId::kCount;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  RecordedAttrs attrs;
};

bool is_float(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }

}  // namespace

struct TapeState {
  TapeState(bool p, bool w) : persistent(p), watch_variables(w) {}
  std::mutex mutex;
  const bool persistent;
  const bool watch_variables;
  bool alive = true;
  int stopped = 0;     // StopRecording scopes, and gradient() while it runs
  bool spent = false;  // a non-persistent tape after its gradient()
  std::unordered_set<const TensorImpl*> on_tape;
  std::vector<Tensor> watched;  // keeps the watched tensors' identity alive
  std::vector<std::shared_ptr<Record>> records;
  // Each variable watched, with the values of it the tape saw read.
  std::vector<std::pair<std::shared_ptr<VariableState>, std::vector<Tensor>>> variables;

  void watch_locked(const Tensor& x) {
    if (on_tape.insert(x.impl()).second) watched.push_back(x);
  }
  void release_locked() {
    on_tape.clear();
    watched.clear();
    records.clear();
    variables.clear();
  }
};

namespace {

// The live tapes of one thread; the thread's op recorder while there is one.
class ThreadTapes final : public OpRecorder {
 public:
  ~ThreadTapes() override {
    if (t_op_recorder == this) t_op_recorder = nullptr;
  }

  void push(std::shared_ptr<TapeState> tape) {
    tapes_.push_back(std::move(tape));
    t_op_recorder = this;
  }
  void remove(const TapeState* tape) {
    std::erase_if(tapes_, [&](const auto& t) { return t.get() == tape; });
    if (tapes_.empty()) t_op_recorder = nullptr;
  }

  void record_op(OpId op, std::span<const Tensor* const> inputs,
                 std::span<const xdev_attr_t> attrs, std::span<const Tensor> outputs) override {
    for_each_recording([&](TapeState& tape) {
      if (!any_on_tape(tape, inputs)) return;
      auto r = std::make_shared<Record>();
      r->kind = Record::Kind::kOp;
      r->op = op;
      for (const Tensor* t : inputs) r->inputs.push_back(*t);
      r->outputs.assign(outputs.begin(), outputs.end());
      r->attrs = RecordedAttrs(attrs);
      add(tape, std::move(r));
    });
  }
  void record_view(const Tensor& source, const Tensor& view) override {
    record_one(Record::Kind::kView, source, view);
  }
  void record_copy(const Tensor& source, const Tensor& copy) override {
    record_one(Record::Kind::kCopy, source, copy);
  }

  void variable_read(const std::shared_ptr<VariableState>& var, const Tensor& value) {
    for_each_recording([&](TapeState& tape) {
      if (!tape.watch_variables) return;
      watch_variable(tape, var, value);
    });
  }

  static void watch_variable(TapeState& tape, const std::shared_ptr<VariableState>& var,
                             const Tensor& value) {
    tape.watch_locked(value);
    for (auto& [v, reads] : tape.variables) {
      if (v == var) {
        for (const Tensor& t : reads) {
          if (t.impl() == value.impl()) return;
        }
        reads.push_back(value);
        return;
      }
    }
    tape.variables.push_back({var, {value}});
  }

 private:
  template <typename F>
  void for_each_recording(F&& f) {
    bool dead = false;
    for (const auto& tape : tapes_) {
      std::lock_guard lock(tape->mutex);
      if (!tape->alive) {
        dead = true;
        continue;
      }
      if (tape->stopped == 0) f(*tape);
    }
    if (dead) {
      // Tapes destroyed on another thread (they only stopped recording).
      std::erase_if(tapes_, [](const auto& t) {
        std::lock_guard lock(t->mutex);
        return !t->alive;
      });
      if (tapes_.empty()) t_op_recorder = nullptr;
    }
  }
  static bool any_on_tape(const TapeState& tape, std::span<const Tensor* const> inputs) {
    for (const Tensor* t : inputs) {
      if (tape.on_tape.count(t->impl()) != 0) return true;
    }
    return false;
  }
  static void add(TapeState& tape, std::shared_ptr<Record> r) {
    for (const Tensor& out : r->outputs) tape.on_tape.insert(out.impl());
    tape.records.push_back(std::move(r));
  }
  void record_one(Record::Kind kind, const Tensor& source, const Tensor& result) {
    for_each_recording([&](TapeState& tape) {
      if (tape.on_tape.count(source.impl()) == 0) return;
      auto r = std::make_shared<Record>();
      r->kind = kind;
      r->inputs = {source};
      r->outputs = {result};
      add(tape, std::move(r));
    });
  }

  std::vector<std::shared_ptr<TapeState>> tapes_;
};

ThreadTapes& thread_tapes() {
  static thread_local ThreadTapes tapes;
  return tapes;
}

// --- the backward pass of views and copies --------------------------------------

// Calls f(position) for each element of a strided layout, row-major;
// positions in elements from the storage's start.
template <typename F>
void for_each_position(const Shape& shape, const Shape& strides, int64_t base, F&& f) {
  const int rank = shape.rank();
  const int64_t n = shape.num_elements();
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t pos = base;
  for (int64_t e = 0; e < n; ++e) {
    f(pos);
    for (int k = rank - 1; k >= 0; --k) {
      const size_t i = static_cast<size_t>(k);
      if (++index[i] < shape[i]) {
        pos += strides[i];
        break;
      }
      pos -= strides[i] * (shape[i] - 1);
      index[i] = 0;
    }
  }
}

// The gradient of `source` from that of `view` (a view of its storage).
Tensor view_grad(const Tensor& source, const Tensor& view, const Tensor& grad) {
  const TensorImpl& s = *source.impl();
  const TensorImpl& v = *view.impl();
  const int64_t n = s.num_elements();
  // A reshape: the same elements in the same order.
  if (s.contiguous() && v.contiguous() && s.byte_offset == v.byte_offset &&
      v.num_elements() == n) {
    return reshape(grad, s.shape);
  }
  // A transpose: the same elements, the axes permuted.
  if (s.contiguous() && s.byte_offset == v.byte_offset && v.shape.rank() == s.shape.rank()) {
    const int rank = s.shape.rank();
    std::vector<int> perm(static_cast<size_t>(rank), -1);
    std::vector<bool> used(static_cast<size_t>(rank), false);
    bool ok = true;
    for (int k = 0; k < rank && ok; ++k) {
      ok = false;
      for (int j = 0; j < rank; ++j) {
        const size_t kk = static_cast<size_t>(k), jj = static_cast<size_t>(j);
        if (!used[jj] && v.shape[kk] == s.shape[jj] && v.strides[kk] == s.strides[jj]) {
          perm[kk] = j;
          used[jj] = true;
          ok = true;
          break;
        }
      }
    }
    if (ok) {
      std::vector<int> inverse(static_cast<size_t>(rank));
      for (int k = 0; k < rank; ++k) inverse[static_cast<size_t>(perm[static_cast<size_t>(k)])] = k;
      return transpose(grad, inverse);
    }
  }
  // Broadcast axes (stride 0, more than one element) are summed first.
  Shape vshape = v.shape;
  std::vector<int> broadcast;
  for (int k = 0; k < vshape.rank(); ++k) {
    const size_t i = static_cast<size_t>(k);
    if (v.strides[i] == 0 && vshape[i] > 1) {
      broadcast.push_back(k);
      vshape[i] = 1;
    }
  }
  const Tensor g = broadcast.empty() ? grad : sum(grad, broadcast, true);
  // Which element of the source each element of the view is.
  const int64_t item = static_cast<int64_t>(itemsize(s.dtype));
  std::unordered_map<int64_t, int64_t> index_of;
  index_of.reserve(static_cast<size_t>(n));
  int64_t j = 0;
  for_each_position(s.shape, s.strides, static_cast<int64_t>(s.byte_offset) / item,
                    [&](int64_t pos) { index_of.emplace(pos, j++); });
  std::vector<int64_t> picked;
  picked.reserve(static_cast<size_t>(vshape.num_elements()));
  for_each_position(vshape, v.strides, static_cast<int64_t>(v.byte_offset) / item,
                    [&](int64_t pos) {
                      auto it = index_of.find(pos);
                      if (it == index_of.end()) {
                        throw Error(ErrorCode::kInternal,
                                    "gradient: a view reaches an element outside its source");
                      }
                      picked.push_back(it->second);
                    });
  return selection_grad(g, picked, s.shape);
}

std::vector<Tensor> record_grads(const Record& r, std::span<const Tensor> grads,
                                 uint64_t needed) {
  switch (r.kind) {
    case Record::Kind::kView: return {view_grad(r.inputs[0], r.outputs[0], grads[0])};
    case Record::Kind::kCopy: return {grads[0].to(r.inputs[0].device())};
    case Record::Kind::kOp: break;
  }
  const GradientDef& def = gradient_def(r.op);
  const GradContext ctx{r.op, r.inputs, r.outputs, grads, r.attrs, needed};
  return def.fn(ctx);
}

// Whether input `i` of `r` can carry a gradient.
bool edge(const Record& r, size_t i) {
  if (r.kind != Record::Kind::kOp) return true;
  const GradientDef& def = gradient_def(r.op);
  return i >= 32 || (def.no_gradient_inputs & (1u << i)) == 0;
}

std::string record_name(const Record& r) {
  switch (r.kind) {
    case Record::Kind::kView: return "a view";
    case Record::Kind::kCopy: return "a copy";
    case Record::Kind::kOp: break;
  }
  return std::string(op_name(r.op));
}

// The backward pass (GradientTape::gradient).
std::vector<Tensor> tape_gradient(TapeState& tape, const Tensor& target,
                                  const std::vector<Tensor>& sources,
                                  const Tensor& output_gradient) {
  if (!target.defined()) {
    throw Error(ErrorCode::kInvalidArgument, "GradientTape.gradient: the target is an empty tensor");
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i].defined()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "GradientTape.gradient: source " + std::to_string(i) + " is an empty tensor");
    }
  }
  std::vector<std::shared_ptr<Record>> records;
  // Sources the tape never saw get no gradient (TensorFlow's None), even
  // when a recorded op took them beside a watched tensor.
  std::unordered_set<const TensorImpl*> source_set;
  {
    std::lock_guard lock(tape.mutex);
    for (const Tensor& s : sources) {
      if (tape.on_tape.count(s.impl()) != 0) source_set.insert(s.impl());
    }
    if (tape.spent) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "GradientTape.gradient: a non-persistent tape computes gradients once; make "
                  "it GradientTape(/*persistent=*/true) to call gradient() again");
    }
    if (tape.persistent) {
      records = tape.records;
    } else {
      // The backward pass owns the records and frees each when past it.
      records = std::move(tape.records);
      tape.spent = true;
      tape.release_locked();
    }
    ++tape.stopped;
  }
  struct Resume {
    TapeState& t;
    ~Resume() {
      std::lock_guard lock(t.mutex);
      --t.stopped;
    }
  } resume{tape};


  // Which records lie on a way from a source to the target.
  std::unordered_set<const TensorImpl*> from_source = source_set;
  std::vector<char> forward(records.size(), 0);
  for (size_t k = 0; k < records.size(); ++k) {
    const Record& r = *records[k];
    for (size_t i = 0; i < r.inputs.size() && !forward[k]; ++i) {
      forward[k] = edge(r, i) && from_source.count(r.inputs[i].impl()) != 0;
    }
    if (forward[k]) {
      for (const Tensor& o : r.outputs) from_source.insert(o.impl());
    }
  }
  std::unordered_set<const TensorImpl*> to_target{target.impl()};
  std::vector<char> on_path(records.size(), 0);
  for (size_t k = records.size(); k-- > 0;) {
    const Record& r = *records[k];
    bool reaches = false;
    for (const Tensor& o : r.outputs) reaches = reaches || to_target.count(o.impl()) != 0;
    if (!reaches) continue;
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      if (edge(r, i)) to_target.insert(r.inputs[i].impl());
    }
    on_path[k] = forward[k];
  }
  // Gradients cannot pass ops without one, nor integer or bool values.
  for (size_t k = 0; k < records.size(); ++k) {
    if (!on_path[k]) continue;
    const Record& r = *records[k];
    if (r.kind == Record::Kind::kOp) {
      const GradientDef& def = gradient_def(r.op);
      if (def.fn == nullptr) {
        throw Error(ErrorCode::kInvalidArgument,
                    "GradientTape.gradient: the target depends on a source through op " +
                        record_name(r) + ", which is not differentiable: " +
                        def.not_differentiable + " (xdev::stop_gradient cuts such a path)");
      }
    }
    for (const Tensor& o : r.outputs) {
      if (!is_float(o.dtype()) && to_target.count(o.impl()) && from_source.count(o.impl())) {
        throw Error(ErrorCode::kInvalidArgument,
                    "GradientTape.gradient: the target depends on a source through op " +
                        record_name(r) + ", whose output is " + std::string(to_string(o.dtype())) +
                        ": integer and bool tensors carry no gradient");
      }
    }
  }

  std::unordered_map<const TensorImpl*, Tensor> grads;
  if (output_gradient.defined()) {
    if (!(output_gradient.shape() == target.shape()) || output_gradient.dtype() != target.dtype()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "GradientTape.gradient: output_gradient must have the target's shape and dtype");
    }
    grads[target.impl()] = output_gradient;
  } else {
    if (!is_float(target.dtype()) && source_set.count(target.impl()) == 0) {
      bool depends = false;
      for (char p : on_path) depends = depends || p;
      if (depends) {
        throw Error(ErrorCode::kInvalidArgument,
                    "GradientTape.gradient: the target is " +
                        std::string(to_string(target.dtype())) +
                        "; only float32 and float64 targets have gradients");
      }
    }
    DeviceScope scope(target.device());
    grads[target.impl()] = ones(target.shape(), target.dtype());
  }

  for (size_t k = records.size(); k-- > 0;) {
    if (!on_path[k]) continue;
    std::shared_ptr<Record> r = records[k];
    std::vector<Tensor> gout(r->outputs.size());
    bool any = false;
    for (size_t o = 0; o < r->outputs.size(); ++o) {
      const TensorImpl* impl = r->outputs[o].impl();
      auto it = grads.find(impl);
      if (it == grads.end()) continue;
      gout[o] = it->second;
      any = true;
      if (source_set.count(impl) == 0) grads.erase(it);  // nothing later needs it
    }
    if (any) {
      // The inputs whose gradients lead to a source: no work for the others.
      uint64_t needed = 0;
      for (size_t i = 0; i < r->inputs.size() && i < 64; ++i) {
        if (edge(*r, i) && from_source.count(r->inputs[i].impl()) != 0) needed |= uint64_t{1} << i;
      }
      std::vector<Tensor> gin;
      {
        DeviceScope scope(r->outputs[0].device());
        gin = record_grads(*r, gout, needed);
      }
      gout.clear();
      for (size_t i = 0; i < r->inputs.size() && i < gin.size(); ++i) {
        if (!gin[i].defined() || !edge(*r, i)) continue;
        const Tensor& in = r->inputs[i];
        if (from_source.count(in.impl()) == 0) continue;
        Tensor g = std::move(gin[i]);
        if (!(g.shape() == in.shape())) {
          throw Error(ErrorCode::kInternal, "gradient of " + record_name(*r) + ": input " +
                                                std::to_string(i) +
                                                " got a gradient of another shape");
        }
        // The adjoint of the implicit copy that brought the input over.
        if (g.impl()->device() != in.impl()->device()) g = g.to(in.device());
        auto [it, fresh] = grads.try_emplace(in.impl(), g);
        if (!fresh) {
          DeviceScope scope(in.device());
          it->second = add(it->second, g);
        }
      }
    }
    // Past this record: a non-persistent tape lets its tensors go now.
    records[k].reset();
  }

  std::vector<Tensor> out;
  out.reserve(sources.size());
  for (const Tensor& s : sources) {
    auto it = source_set.count(s.impl()) != 0 ? grads.find(s.impl()) : grads.end();
    out.push_back(it == grads.end() ? Tensor() : it->second);
  }
  return out;
}

void variable_read(const std::shared_ptr<VariableState>& var, const Tensor& value) {
  if (op_recorder() == nullptr || !var->trainable) return;
  thread_tapes().variable_read(var, value);
}

}  // namespace
}  // namespace xdev::detail

namespace xdev {

using detail::TapeState;
using detail::VariableState;

// --- GradientTape ----------------------------------------------------------------

GradientTape::GradientTape(bool persistent, bool watch_accessed_variables)
    : state_(std::make_shared<TapeState>(persistent, watch_accessed_variables)) {
  detail::thread_tapes().push(state_);
}

GradientTape::~GradientTape() {
  {
    std::lock_guard lock(state_->mutex);
    state_->alive = false;
    state_->release_locked();
  }
  // On another thread the owner's stack drops it at its next op.
  detail::ThreadTapes& mine = detail::thread_tapes();
  mine.remove(state_.get());
}

void GradientTape::watch(const Tensor& x) {
  if (!x.defined()) throw Error(ErrorCode::kInvalidArgument, "GradientTape.watch: an empty tensor");
  if (!detail::is_float(x.dtype())) {
    throw Error(ErrorCode::kInvalidArgument,
                "GradientTape.watch: the tensor is " + std::string(to_string(x.dtype())) +
                    "; only float32 and float64 tensors have gradients");
  }
  std::lock_guard lock(state_->mutex);
  state_->watch_locked(x);
}

void GradientTape::watch(const Variable& v) {
  if (!v.defined()) throw Error(ErrorCode::kInvalidArgument, "GradientTape.watch: an empty variable");
  Tensor value;
  {
    std::lock_guard lock(v.state()->mutex);
    value = v.state()->value;
  }
  std::lock_guard lock(state_->mutex);
  detail::ThreadTapes::watch_variable(*state_, v.state(), value);
}

std::vector<Variable> GradientTape::watched_variables() const {
  std::vector<Variable> out;
  std::lock_guard lock(state_->mutex);
  for (const auto& [var, reads] : state_->variables) {
    Variable v;
    v.state_ = var;
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Tensor>& sources,
                                           const Tensor& output_gradient) {
  return detail::tape_gradient(*state_, target, sources, output_gradient);
}

Tensor GradientTape::gradient(const Tensor& target, const Tensor& source) {
  return gradient(target, std::vector<Tensor>{source}).front();
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target,
                                           const std::vector<Variable>& sources,
                                           const Tensor& output_gradient) {
  return gradient(target, std::vector<Tensor>{}, sources, output_gradient);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target,
                                           const std::vector<Tensor>& tensors,
                                           const std::vector<Variable>& variables,
                                           const Tensor& output_gradient) {
  // The tensors, then every value of each variable the tape saw read, as
  // tensor sources of one backward pass.
  std::vector<Tensor> sources = tensors;
  std::vector<std::pair<size_t, size_t>> ranges;  // per variable: [begin, end) in sources
  {
    std::lock_guard lock(state_->mutex);
    for (const Variable& v : variables) {
      if (!v.defined()) {
        throw Error(ErrorCode::kInvalidArgument, "GradientTape.gradient: an empty variable");
      }
      const size_t begin = sources.size();
      for (const auto& [var, reads] : state_->variables) {
        if (var == v.state()) sources.insert(sources.end(), reads.begin(), reads.end());
      }
      ranges.emplace_back(begin, sources.size());
    }
  }
  std::vector<Tensor> grads = gradient(target, sources, output_gradient);
  std::vector<Tensor> out(grads.begin(), grads.begin() + static_cast<std::ptrdiff_t>(tensors.size()));
  for (const auto& [begin, end] : ranges) {
    Tensor total;
    for (size_t i = begin; i < end; ++i) {
      if (!grads[i].defined()) continue;
      total = total.defined() ? add(total, grads[i]) : grads[i];
    }
    out.push_back(total);
  }
  return out;
}

Tensor GradientTape::gradient(const Tensor& target, const Variable& source) {
  return gradient(target, std::vector<Variable>{source}).front();
}

size_t GradientTape::num_records() const {
  std::lock_guard lock(state_->mutex);
  return state_->records.size();
}

GradientTape::StopRecording::StopRecording(GradientTape& tape) : state_(tape.state_) {
  std::lock_guard lock(state_->mutex);
  ++state_->stopped;
}

GradientTape::StopRecording::~StopRecording() {
  std::lock_guard lock(state_->mutex);
  --state_->stopped;
}

Tensor stop_gradient(const Tensor& x) {
  if (!x.defined()) throw Error(ErrorCode::kInvalidArgument, "stop_gradient: an empty tensor");
  const detail::TensorImpl& impl = *x.impl();
  // A view made past the recording hook: a new tensor no tape has seen.
  return Tensor(detail::make_view(x.impl_ptr(), impl.shape, impl.strides, impl.byte_offset));
}

// --- Variable ----------------------------------------------------------------------

Variable::Variable(const Tensor& initial, bool trainable, std::string name)
    : state_(std::make_shared<VariableState>()) {
  if (!initial.defined()) {
    throw Error(ErrorCode::kInvalidArgument, "Variable: the initial value is an empty tensor");
  }
  detail::NoRecording pause;
  const detail::ScopeEntry* scope = detail::current_scope();
  state_->value = scope != nullptr ? initial.copy_to(scope->text) : initial.copy_to(initial.device());
  state_->trainable = trainable;
  state_->name = std::move(name);
}


namespace {
const VariableState& checked(const std::shared_ptr<VariableState>& s) {
  if (s == nullptr) throw Error(ErrorCode::kInvalidArgument, "Variable: an empty variable");
  return *s;
}
}  // namespace

Tensor Variable::read_value() const {
  const VariableState& s = checked(state_);
  Tensor value;
  {
    std::lock_guard lock(s.mutex);
    value = s.value;
  }
  detail::variable_read(state_, value);
  return value;
}

void Variable::assign(const Tensor& value) {
  checked(state_);
  if (!value.defined()) throw Error(ErrorCode::kInvalidArgument, "Variable.assign: an empty tensor");
  std::lock_guard lock(state_->mutex);
  const Tensor& old = state_->value;
  if (!(value.shape() == old.shape()) || value.dtype() != old.dtype()) {
    std::ostringstream m;
    m << "Variable.assign: " << (state_->name.empty() ? "the variable" : state_->name) << " is "
      << to_string(old.dtype()) << " of shape " << old.shape() << "; the value is "
      << to_string(value.dtype()) << " of shape " << value.shape();
    throw Error(ErrorCode::kInvalidArgument, m.str());
  }
  detail::NoRecording pause;
  state_->value = value.to(old.device());
}

namespace {
void update(VariableState& s, const Tensor& delta, bool subtract) {
  if (!delta.defined()) throw Error(ErrorCode::kInvalidArgument, "Variable: an empty delta");
  detail::NoRecording pause;
  std::lock_guard lock(s.mutex);
  DeviceScope scope(s.value.device());
  Tensor next = subtract ? sub(s.value, delta) : add(s.value, delta);
  if (!(next.shape() == s.value.shape())) {
    std::ostringstream m;
    m << "Variable." << (subtract ? "assign_sub" : "assign_add") << ": a delta of shape "
      << delta.shape() << " does not broadcast to the variable's shape " << s.value.shape();
    throw Error(ErrorCode::kInvalidArgument, m.str());
  }
  s.value = std::move(next);
}
}  // namespace

void Variable::move_to(const std::string& device) {
  checked(state_);
  detail::NoRecording pause;
  std::lock_guard lock(state_->mutex);
  state_->value = state_->value.to(device);
}

void Variable::assign_add(const Tensor& delta) {
  checked(state_);
  update(*state_, delta, false);
}
void Variable::assign_sub(const Tensor& delta) {
  checked(state_);
  update(*state_, delta, true);
}

DType Variable::dtype() const {
  std::lock_guard lock(checked(state_).mutex);
  return state_->value.dtype();
}
Shape Variable::shape() const {
  std::lock_guard lock(checked(state_).mutex);
  return state_->value.shape();
}
Device Variable::device() const {
  std::lock_guard lock(checked(state_).mutex);
  return state_->value.device();
}
bool Variable::trainable() const { return checked(state_).trainable; }
const std::string& Variable::name() const { return checked(state_).name; }

}  // namespace xdev
