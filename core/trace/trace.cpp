// The trace writer: one JSON object {"displayTimeUnit":..,"traceEvents":[..]}
// streamed to the file. Events are formatted by the thread that emits them
// and appended under one mutex to a buffer that is written out whenever it
// passes kFlushBytes, so memory stays bounded however long the trace runs.
#include "trace/trace.hpp"

#include <array>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <vector>

#include <xdev/error.hpp>
#include <xdev/trace.hpp>

#include "common/log.hpp"
#include "trace/trace_config.hpp"

namespace xdev::detail::trace {

std::atomic<bool> g_on{false};
std::atomic<uint64_t> g_session{0};

namespace {

constexpr size_t kFlushBytes = size_t{1} << 20;  // the buffer's bound

void append_quoted(std::string& out, std::string_view s);
constexpr int kHostPid = 0;                        // devices are 1 + index

struct Writer {
  std::mutex mutex;
  std::FILE* file = nullptr;
  std::string path;
  std::string buffer;
  bool first_event = true;
  bool write_failed = false;
  uint64_t origin_ns = 0;
  uint64_t events = 0;
  uint64_t session = 0;  // bumped by every start: per-session metadata
  std::vector<bool> device_named;
};

Writer& writer() {
  static Writer* w = new Writer;  // never destroyed: usable from static destructors
  return *w;
}

// Small per-thread ids for the host tracks, named once per session.
std::atomic<int> g_next_thread{1};
thread_local int t_thread_id = 0;
thread_local uint64_t t_named_session = 0;

void flush_locked(Writer& w) {
  if (w.buffer.empty() || w.file == nullptr) return;
  if (std::fwrite(w.buffer.data(), 1, w.buffer.size(), w.file) != w.buffer.size()) {
    w.write_failed = true;
  }
  w.buffer.clear();
}

void append_locked(Writer& w, const std::string& event) {
  if (!w.first_event) w.buffer += ",\n";
  w.first_event = false;
  w.buffer += event;
  ++w.events;
  if (w.buffer.size() >= kFlushBytes) flush_locked(w);
}

void append_number(std::string& out, uint64_t v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// Microseconds with three decimals (the format's unit), from nanoseconds.
void append_us(std::string& out, uint64_t ns, uint64_t origin) {
  const uint64_t rel = ns > origin ? ns - origin : 0;
  append_number(out, rel / 1000);
  const unsigned frac = static_cast<unsigned>(rel % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10), static_cast<char>('0' + frac % 10)};
  out.append(digits, 4);
}

std::string metadata(const char* what, int pid, int tid, std::string_view name) {
  return std::string("{\"ph\":\"M\",\"name\":\"") + what + "\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":" + quote(name) + "}}";
}

// pid and tid of `track`; names its process/thread the first time.
std::pair<int, int> place_locked(Writer& w, Track track) {
  if (track.device >= 0) {
    const size_t i = static_cast<size_t>(track.device);
    if (w.device_named.size() <= i) w.device_named.resize(i + 1, false);
    const int pid = track.device + 1;
    if (!w.device_named[i]) {
      w.device_named[i] = true;
      append_locked(w, metadata("process_name", pid, 0, track.device_name));
      append_locked(w, std::string("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":") +
                           std::to_string(pid) + ",\"tid\":0,\"args\":{\"sort_index\":" +
                           std::to_string(pid) + "}}");
      append_locked(w, metadata("thread_name", pid, 1, "stream 0"));
    }
    return {pid, 1};
  }
  if (t_thread_id == 0) t_thread_id = g_next_thread.fetch_add(1);
  if (t_named_session != w.session) {
    t_named_session = w.session;
    append_locked(w, metadata("thread_name", kHostPid, t_thread_id,
                              "host thread " + std::to_string(t_thread_id)));
  }
  return {kHostPid, t_thread_id};
}

// The start of an event, up to its name, into `out`.
void head(std::string& out, const char* ph, std::pair<int, int> where, std::string_view category,
          std::string_view name) {
  out += "{\"ph\":\"";
  out += ph;
  out += "\",\"pid\":";
  append_number(out, static_cast<uint64_t>(where.first));
  out += ",\"tid\":";
  append_number(out, static_cast<uint64_t>(where.second));
  // Categories and names are the core's own (op names of the op table,
  // "alloc", "copy host_to_device"): nothing to escape.
  out += ",\"cat\":\"";
  out += category;
  out += "\",\"name\":\"";
  out += name;
  out += '"';
}

// Appends one event to the buffer; the caller holds the lock.
void append_event_locked(Writer& w, const std::string& event) { append_locked(w, event); }

// Starts the trace XDEV_TRACE names and finishes it at exit.
struct EnvironmentTrace {
  EnvironmentTrace() {
    const std::string path = trace_path_from_environment();
    if (path.empty()) return;
    try {
      start(path);
    } catch (const std::exception& e) {
      log(XDEV_LOG_WARNING, std::string("XDEV_TRACE: ") + e.what());
    }
  }
  ~EnvironmentTrace() {
    try {
      stop();
    } catch (const std::exception& e) {
      log(XDEV_LOG_WARNING, std::string("XDEV_TRACE: ") + e.what());
    }
  }
};
EnvironmentTrace g_environment_trace;

}  // namespace

uint64_t now_ns() noexcept {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

namespace {
// Characters JSON strings must escape.
constexpr std::array<bool, 256> kEscape = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<size_t>(c)] = true;
  t['"'] = true;
  t['\\'] = true;
  return t;
}();

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  size_t run = 0;  // start of the characters not yet appended
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (!kEscape[c]) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
        out += buf;
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}
}  // namespace

std::string quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  append_quoted(out, s);
  return out;
}

std::string dims_json(const int64_t* dims, int rank) {
  std::string out = "[";
  for (int i = 0; i < rank; ++i) {
    if (i > 0) out += ',';
    out += std::to_string(dims[i]);
  }
  out += ']';
  return out;
}

void Args::key(std::string_view k) {
  // Keys are the core's own identifiers: nothing to escape.
  if (!body_.empty()) body_ += ',';
  body_ += '"';
  body_ += k;
  body_ += "\":";
}
Args& Args::str(std::string_view k, std::string_view value) {
  key(k);
  append_quoted(body_, value);
  return *this;
}
Args& Args::id(std::string_view k, std::string_view value) {
  key(k);
  body_ += '"';
  body_ += value;
  body_ += '"';
  return *this;
}
Args& Args::num(std::string_view k, uint64_t value) {
  key(k);
  append_number(body_, value);
  return *this;
}
Args& Args::num(std::string_view k, int64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}
Args& Args::real(std::string_view k, double value) {
  key(k);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  body_ += buf;
  return *this;
}
Args& Args::raw(std::string_view k, std::string_view json) {
  key(k);
  body_ += json;
  return *this;
}

// Each event is formatted in this thread's buffer under the lock (the pid,
// tid and time origin are the writer's), then appended to the file's buffer.
thread_local std::string t_event;

// One event: `end_ns` gives a span ("X"), else a point ("i").
void emit(Track track, std::string_view category, std::string_view name, uint64_t ts_ns,
          const uint64_t* end_ns, const Args& args) {
  Writer& w = writer();
  std::lock_guard lock(w.mutex);
  if (w.file == nullptr) return;  // stopped meanwhile
  auto where = place_locked(w, track);
  std::string& e = t_event;
  e.clear();
  head(e, end_ns != nullptr ? "X" : "i", where, category, name);
  if (end_ns == nullptr) e += ",\"s\":\"t\"";  // scoped to its thread's track
  e += ",\"ts\":";
  append_us(e, ts_ns, w.origin_ns);
  if (end_ns != nullptr) {
    e += ",\"dur\":";
    append_us(e, *end_ns, ts_ns);
  }
  e += ",\"args\":{";
  e += args.body();
  e += "}}";
  append_event_locked(w, e);
}

void complete(Track track, std::string_view category, std::string_view name, uint64_t begin_ns,
              uint64_t end_ns, const Args& args) {
  emit(track, category, name, begin_ns, &end_ns, args);
}

void instant(Track track, std::string_view category, std::string_view name, const Args& args) {
  emit(track, category, name, now_ns(), nullptr, args);
}

void start(const std::string& path) {
  Writer& w = writer();
  std::lock_guard lock(w.mutex);
  if (w.file != nullptr) {
    throw Error(ErrorCode::kFailedPrecondition,
                "a trace is already being written to " + w.path + " (stop it first)");
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    throw Error(ErrorCode::kInvalidArgument, "cannot open the trace file " + path + " for writing");
  }
  w.file = f;
  w.path = path;
  w.buffer = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"xdev\"},\"traceEvents\":[\n";
  w.first_event = true;
  w.write_failed = false;
  w.origin_ns = now_ns();
  w.events = 0;
  ++w.session;
  w.device_named.clear();
  append_locked(w, metadata("process_name", kHostPid, 0, "host"));
  g_session.store(w.session, std::memory_order_relaxed);
  g_on.store(true, std::memory_order_relaxed);
}

void stop() {
  Writer& w = writer();
  std::lock_guard lock(w.mutex);
  g_on.store(false, std::memory_order_relaxed);
  if (w.file == nullptr) return;
  w.buffer += "\n]}\n";
  flush_locked(w);
  const bool failed = std::fclose(w.file) != 0 || w.write_failed;
  w.file = nullptr;
  w.buffer.clear();
  w.buffer.shrink_to_fit();
  if (failed) {
    throw Error(ErrorCode::kInternal, "the trace file " + w.path + " could not be written completely");
  }
}

uint64_t events_written() {
  Writer& w = writer();
  std::lock_guard lock(w.mutex);
  return w.events;
}

}  // namespace xdev::detail::trace

namespace xdev::trace {

void start(const std::string& path) { detail::trace::start(path); }
void stop() { detail::trace::stop(); }
bool active() noexcept { return detail::trace::on(); }

}  // namespace xdev::trace
