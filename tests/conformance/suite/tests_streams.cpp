// stream.*, event.* and concurrency.*: in-order streams, ordering across
// streams with events, event states, several threads at once.
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "suite.hpp"

namespace xdev_conformance {
namespace {

using Clock = std::chrono::steady_clock;

// --- stream --------------------------------------------------------------

XDEV_CONFORMANCE_TEST(stream_ordering, "stream.ordering",
                      "H2D, D2D, D2H twice on one stream with one synchronize gives both results") {
  xdev_device_t* dev = ctx.device();
  Stream stream(ctx, dev);
  for (uint64_t size : {uint64_t{1}, uint64_t{4097}, uint64_t{(4u << 20) + 3}}) {
    DeviceMemory a(ctx, dev, size), b(ctx, dev, size);
    // H2D, D2D, D2H, then the same buffers again with other data, all
    // enqueued before one synchronize: an in-order stream gives both.
    auto first = random_bytes(ctx, size);
    auto second = random_bytes(ctx, size);
    std::vector<unsigned char> out1(size), out2(size);
    stream.upload(a.at(), first.data(), size);
    stream.copy(b.at(), a.at(), size);
    stream.download(out1.data(), b.at(), size);
    stream.upload(a.at(), second.data(), size);
    stream.copy(b.at(), a.at(), size);
    stream.download(out2.data(), b.at(), size);
    stream.synchronize();
    std::string diff = first_difference(out1.data(), first.data(), size);
    require(diff.empty(), "H2D, D2D, D2H of " + std::to_string(size) +
                              " bytes on one stream (first round): " + diff);
    diff = first_difference(out2.data(), second.data(), size);
    require(diff.empty(), "H2D, D2D, D2H of " + std::to_string(size) +
                              " bytes on one stream (second round, same buffers): " + diff);
  }
}

XDEV_CONFORMANCE_TEST(stream_many, "stream.many",
                      "16 streams at once; 100 create/synchronize/destroy") {
  xdev_device_t* dev = ctx.device();
  std::vector<Stream> streams;
  for (int i = 0; i < 16; ++i) streams.emplace_back(ctx, dev);
  for (Stream& s : streams) s.synchronize();  // empty: returns at once
  streams.clear();
  for (int i = 0; i < 100; ++i) {
    Stream s(ctx, dev);
    s.synchronize();
  }
}

XDEV_CONFORMANCE_TEST(stream_cross_stream_event, "stream.cross_stream_event",
                      "upload on one stream, event, copy and download on another") {
  xdev_device_t* dev = ctx.device();
  Stream producer(ctx, dev), consumer(ctx, dev);
  Event ready(ctx, dev);
  const xdev_plugin_api_t& api = ctx.api();
  const uint64_t size = (8u << 20) + 5;
  DeviceMemory a(ctx, dev, size), b(ctx, dev, size);
  auto data = random_bytes(ctx, size);
  std::vector<unsigned char> out(size);
  producer.upload(a.at(), data.data(), size);
  check(api.event_record(ready.get(), producer.get()), "event_record");
  check(api.stream_wait_event(consumer.get(), ready.get()), "stream_wait_event");
  consumer.copy(b.at(), a.at(), size);
  consumer.download(out.data(), b.at(), size);
  // Only the consumer is synchronized: the event alone orders the two.
  consumer.synchronize();
  std::string diff = first_difference(out.data(), data.data(), size);
  require(diff.empty(), "upload on stream 1, event, D2D + D2H on stream 2: " + diff);
  producer.synchronize();
}

// --- event ---------------------------------------------------------------

XDEV_CONFORMANCE_TEST(event_unrecorded, "event.unrecorded",
                      "an event never recorded counts as completed") {
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  Event e(ctx, dev);
  int32_t done = -1;
  check(api.event_query(e.get(), &done), "event_query on an event never recorded");
  require(done == 1, "event_query on an event never recorded says " + std::to_string(done) +
                         "; it counts as completed (1)");
  check(api.event_synchronize(e.get()), "event_synchronize on an event never recorded");
  Stream s(ctx, dev);
  check(api.stream_wait_event(s.get(), e.get()), "stream_wait_event on an event never recorded");
  s.synchronize();
}

XDEV_CONFORMANCE_TEST(event_record_synchronize, "event.record_synchronize",
                      "event_synchronize waits for the work before the record") {
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  Stream s(ctx, dev), other(ctx, dev);
  Event e(ctx, dev);
  const uint64_t size = (4u << 20) + 1;
  DeviceMemory mem(ctx, dev, size);
  auto data = random_bytes(ctx, size);
  s.upload(mem.at(), data.data(), size);
  check(api.event_record(e.get(), s.get()), "event_record");
  check(api.event_synchronize(e.get()), "event_synchronize");
  int32_t done = -1;
  check(api.event_query(e.get(), &done), "event_query");
  require(done == 1, "event_query after event_synchronize says " + std::to_string(done));
  // The upload completed: another stream sees the data without waiting.
  other.require_contents(mem.at(), data, "data after event_synchronize, read on another stream");
}

XDEV_CONFORMANCE_TEST(event_elapsed, "event.elapsed",
                      "XDEV_CAP_EVENT_TIMING (1.4): event_elapsed_ms times the work between two "
                      "records and refuses an event never recorded") {
  ctx.require_capability(XDEV_CAP_EVENT_TIMING, "XDEV_CAP_EVENT_TIMING");
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  Stream s(ctx, dev);
  Event start(ctx, dev), end(ctx, dev), never(ctx, dev);
  const uint64_t size = 4u << 20;
  DeviceMemory mem(ctx, dev, size);
  auto data = random_bytes(ctx, size);
  check(api.event_record(start.get(), s.get()), "event_record(start)");
  s.upload(mem.at(), data.data(), size);
  check(api.event_record(end.get(), s.get()), "event_record(end)");
  s.synchronize();
  double ms = -1;
  check(api.event_elapsed_ms(start.get(), end.get(), &ms), "event_elapsed_ms(start, end)");
  require(ms >= 0, "event_elapsed_ms(start, end) after a 4 MiB upload is " + std::to_string(ms) +
                       " ms; the end was recorded after the start");
  double reversed = 0;
  check(api.event_elapsed_ms(end.get(), start.get(), &reversed), "event_elapsed_ms(end, start)");
  require(reversed <= 0, "event_elapsed_ms(end, start) is " + std::to_string(reversed) +
                             " ms; it must be negative or 0");
  double untouched = 12345;
  expect_error(api.event_elapsed_ms(start.get(), never.get(), &untouched),
               "event_elapsed_ms with an event never recorded", {XDEV_STATUS_FAILED_PRECONDITION});
  require(untouched == 12345, "event_elapsed_ms wrote *out_ms although it failed");
}

XDEV_CONFORMANCE_TEST(event_rerecord, "event.rerecord",
                      "recording again moves the event to the new end") {
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  Event e(ctx, dev);
  Stream s(ctx, dev), other(ctx, dev);
  const uint64_t size = 65536 + 3;
  DeviceMemory mem(ctx, dev, size);
  auto first = random_bytes(ctx, size);
  auto second = random_bytes(ctx, size);
  s.upload(mem.at(), first.data(), size);
  check(api.event_record(e.get(), s.get()), "event_record");
  check(api.event_synchronize(e.get()), "event_synchronize");
  s.upload(mem.at(), second.data(), size);
  check(api.event_record(e.get(), s.get()), "event_record (again)");
  check(api.event_synchronize(e.get()), "event_synchronize (after recording again)");
  other.require_contents(mem.at(), second,
                         "re-recording must move the event to the new end of the stream");
}

XDEV_CONFORMANCE_TEST(event_asynchronous, "event.asynchronous",
                      "XDEV_CAP_EVENTS: event_query alone sees the event complete") {
  ctx.require_capability(XDEV_CAP_EVENTS, "XDEV_CAP_EVENTS (its events complete when recorded)");
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  Stream s(ctx, dev);
  Event e(ctx, dev);
  const uint64_t size = 16u << 20;
  DeviceMemory a(ctx, dev, size), b(ctx, dev, size);
  auto data = random_bytes(ctx, size);
  s.upload(a.at(), data.data(), size);
  for (int i = 0; i < 4; ++i) s.copy(b.at(), a.at(), size);
  check(api.event_record(e.get(), s.get()), "event_record");
  // Without any synchronize, polling alone must see it complete.
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  int32_t done = 0;
  int polls = 0;
  while (true) {
    check(api.event_query(e.get(), &done), "event_query");
    ++polls;
    require(done == 0 || done == 1, "event_query wrote " + std::to_string(done) + ", not 0 or 1");
    if (done == 1) break;
    require(Clock::now() < deadline,
            "the event did not complete within 20 s of polling event_query (" +
                std::to_string(polls) + " polls, no synchronize)");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  s.require_contents(b.at(), data, "data after the event completed");
}

// --- concurrency ---------------------------------------------------------

// Runs `body(thread index)` on `threads` threads; the first failure wins.
template <typename Body>
void run_threads(int threads, Body body) {
  std::mutex mutex;
  std::string first_failure;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        body(t);
      } catch (const TestFailed& f) {
        std::lock_guard lock(mutex);
        if (first_failure.empty()) first_failure = "thread " + std::to_string(t) + ": " + f.reason;
      } catch (const TestSkipped& s) {
        std::lock_guard lock(mutex);
        if (first_failure.empty()) first_failure = "thread " + std::to_string(t) + ": " + s.reason;
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        if (first_failure.empty()) first_failure = "thread " + std::to_string(t) + ": " + e.what();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (!first_failure.empty()) fail(first_failure);
}

// Allocate, upload, copy, download, compare, free: `rounds` times on its own
// stream of `dev`.
void copy_rounds(Context& ctx, xdev_device_t* dev, uint64_t seed, int rounds) {
  std::mt19937_64 random(seed);
  Stream stream(ctx, dev);
  for (int r = 0; r < rounds; ++r) {
    const uint64_t size = 1 + random() % (256u << 10);
    DeviceMemory a(ctx, dev, size), b(ctx, dev, size + 7);
    std::vector<unsigned char> data(size), back(size);
    for (auto& c : data) c = static_cast<unsigned char>(random());
    stream.upload(a.at(), data.data(), size);
    stream.copy(b.at(7), a.at(), size);
    stream.download(back.data(), b.at(7), size);
    stream.synchronize();
    std::string diff = first_difference(back.data(), data.data(), size);
    require(diff.empty(), "round " + std::to_string(r) + " (" + std::to_string(size) +
                              " bytes): " + diff);
  }
}

XDEV_CONFORMANCE_TEST(concurrency_streams, "concurrency.streams",
                      "4 threads, each its own stream: allocate, copy, compare, free") {
  xdev_device_t* dev = ctx.device();
  const uint64_t base = ctx.random()();
  run_threads(4, [&](int t) { copy_rounds(ctx, dev, base + static_cast<uint64_t>(t), 40); });
}

XDEV_CONFORMANCE_TEST(concurrency_allocate_free, "concurrency.allocate_free",
                      "4 threads allocating, freeing, creating streams and events") {
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  const uint64_t base = ctx.random()();
  run_threads(4, [&](int t) {
    std::mt19937_64 random(base + static_cast<uint64_t>(t));
    std::vector<void*> live;
    for (int i = 0; i < 400; ++i) {
      if (!live.empty() && random() % 3 == 0) {
        size_t k = random() % live.size();
        api.memory_free(dev, live[k]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      void* ptr = nullptr;
      const uint64_t size = 1 + random() % 20000;
      check(api.memory_allocate(dev, size, 64u << (random() % 3), &ptr),
            "memory_allocate(" + std::to_string(size) + ")");
      require(ptr != nullptr, "memory_allocate returned NULL");
      live.push_back(ptr);
      if (i % 50 == 0) {
        uint64_t free_bytes = 0, total = 0;
        check(api.memory_query(dev, &free_bytes, &total), "memory_query");
        xdev_stream_t* s = nullptr;
        check(api.stream_create(dev, &s), "stream_create");
        api.stream_destroy(s);
        xdev_event_t* e = nullptr;
        check(api.event_create(dev, &e), "event_create");
        api.event_destroy(e);
      }
    }
    for (void* p : live) api.memory_free(dev, p);
  });
}

XDEV_CONFORMANCE_TEST(concurrency_devices, "concurrency.devices",
                      "one thread per device (needs 2 devices) copying at once") {
  const uint32_t count = ctx.devices(2);
  std::vector<xdev_device_t*> devs;
  for (uint32_t i = 0; i < count; ++i) devs.push_back(ctx.device(i));
  const uint64_t base = ctx.random()();
  const int threads = static_cast<int>(std::max<uint32_t>(count, 4));
  run_threads(threads, [&](int t) {
    copy_rounds(ctx, devs[static_cast<size_t>(t) % devs.size()], base + static_cast<uint64_t>(t),
                20);
  });
}

}  // namespace

}  // namespace xdev_conformance
