// The trace writer behind <xdev/trace.hpp>: events in Chrome's trace-event
// format, streamed to the file through a bounded buffer. README.md says
// which layer emits which event.
//
// The cost when tracing is off is one relaxed atomic load and a predicted
// branch at each call site:  if (trace::on()) { ...build the event... }
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace xdev::detail::trace {

extern std::atomic<bool> g_on;

// True while a trace is being written. Call sites test it before building
// an event, so an untraced program pays nothing else.
inline bool on() noexcept {
  return __builtin_expect(g_on.load(std::memory_order_relaxed), false);
}

// Which trace is being written: changes with every start().
extern std::atomic<uint64_t> g_session;
inline uint64_t session() noexcept { return g_session.load(std::memory_order_relaxed); }

// Nanoseconds on the trace's clock (steady_clock).
uint64_t now_ns() noexcept;

// One event's "args" object, built key by key: keys are identifiers (written
// as they are), values are JSON-escaped.
class Args {
 public:
  Args& str(std::string_view key, std::string_view value);
  // A value the core made that needs no escaping (device and dtype names).
  Args& id(std::string_view key, std::string_view value);
  Args& num(std::string_view key, uint64_t value);
  Args& num(std::string_view key, int64_t value);
  Args& real(std::string_view key, double value);
  // `json` is already a JSON value (an array, an object).
  Args& raw(std::string_view key, std::string_view json);
  // "{...}"
  std::string text() const { return body_.empty() ? "{}" : "{" + body_ + "}"; }
  // What is between the braces.
  const std::string& body() const { return body_; }

 private:
  void key(std::string_view k);
  std::string body_;
};

// A JSON string literal of `s`, quotes included.
std::string quote(std::string_view s);
// "[2,3]" for the dims of a shape.
std::string dims_json(const int64_t* dims, int rank);

// Where an event is drawn: the stream track of logical device `device`
// (its index; `device_name` names the track), or, with device < 0, the
// track of the calling host thread.
struct Track {
  int device = -1;
  std::string_view device_name;
};
inline Track host_track() { return Track{}; }

// A span from begin_ns to end_ns ("ph":"X"). `category` and `name` are the
// core's own words (op names, "alloc"): written without escaping.
void complete(Track track, std::string_view category, std::string_view name, uint64_t begin_ns,
              uint64_t end_ns, const Args& args);
// A point in time ("ph":"i"), now.
void instant(Track track, std::string_view category, std::string_view name, const Args& args);

// The writer's state, for the SDK functions and the tests.
void start(const std::string& path);
void stop();
// Events written since start (metadata events included).
uint64_t events_written();

}  // namespace xdev::detail::trace
