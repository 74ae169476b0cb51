// memory.* and copy.*: raw allocation, alignment, out of memory, free/total,
// copies in every direction at odd sizes and offsets. Device memory is only
// touched through copies, unless the plugin declares XDEV_CAP_HOST_ADDRESSABLE.
#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "suite.hpp"

namespace xdev_conformance {
namespace {

constexpr unsigned char kGuard = 0x5A;

std::string bytes_text(uint64_t n) { return std::to_string(n) + " bytes"; }

// Uploads `data` into `mem` at `offset` and reads the whole allocation back.
std::vector<unsigned char> roundtrip(Stream& stream, const DeviceMemory& mem,
                                     const std::vector<unsigned char>& data, uint64_t offset) {
  stream.upload(mem.at(offset), data.data(), data.size());
  std::vector<unsigned char> back(mem.size());
  stream.download(back.data(), mem.at(), back.size());
  stream.synchronize();
  return back;
}

// --- memory ----------------------------------------------------------------------

XDEV_CONFORMANCE_TEST(memory_allocate_sizes, "memory.allocate_sizes",
                      "1 byte to 1 MiB + 13, odd sizes; no overlap; every byte usable") {
  xdev_device_t* dev = ctx.device();
  Stream stream(ctx, dev);
  const uint64_t sizes[] = {1, 3, 17, 255, 4097, 65543, (1u << 20) + 13};
  std::vector<DeviceMemory> blocks;
  for (uint64_t size : sizes) blocks.emplace_back(ctx, dev, size, 64);
  // Live allocations never overlap. Handles (XDEV_CAP_HANDLE_MEMORY) have
  // no address range: they must at least be distinct.
  if (ctx.handle_memory()) {
    std::vector<void*> handles;
    for (const auto& b : blocks) handles.push_back(b.get());
    std::sort(handles.begin(), handles.end());
    require(std::adjacent_find(handles.begin(), handles.end()) == handles.end(),
            "memory_allocate returned the same handle for two live allocations");
  }
  std::vector<std::pair<uintptr_t, uint64_t>> ranges;
  for (const auto& b : blocks) {
    if (!ctx.handle_memory()) ranges.emplace_back(reinterpret_cast<uintptr_t>(b.get()), b.size());
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    require(ranges[i - 1].first + ranges[i - 1].second <= ranges[i].first,
            "two live allocations overlap");
  }
  // Every byte of each is usable.
  for (const auto& b : blocks) {
    auto data = random_bytes(ctx, b.size());
    auto back = roundtrip(stream, b, data, 0);
    std::string diff = first_difference(back.data(), data.data(), data.size());
    require(diff.empty(), "allocation of " + bytes_text(b.size()) + ": " + diff);
  }
}

XDEV_CONFORMANCE_TEST(memory_alignment, "memory.alignment",
                      "alignments 1 to 256 honoured (at least 64)") {
  ctx.require_addresses("checking the alignment of an allocation");
  xdev_device_t* dev = ctx.device();
  for (uint64_t alignment = 1; alignment <= 256; alignment *= 2) {
    for (uint64_t size : {uint64_t{1}, uint64_t{100}, uint64_t{4099}}) {
      DeviceMemory mem(ctx, dev, size, alignment);
      const uint64_t want = std::max<uint64_t>(alignment, 64);
      auto address = reinterpret_cast<uintptr_t>(mem.get());
      if (address % want != 0) {
        char text[160];
        std::snprintf(text, sizeof text,
                      "memory_allocate(%" PRIu64 " bytes, alignment %" PRIu64
                      ") returned 0x%" PRIxPTR ", not aligned to %" PRIu64,
                      size, alignment, address, want);
        fail(text);
      }
    }
  }
}

XDEV_CONFORMANCE_TEST(memory_large, "memory.large",
                      "a quarter of free memory (at most 256 MiB and the device's "
                      "max_allocation_bytes), first/middle/last page") {
  xdev_device_t* dev = ctx.device();
  uint64_t free_bytes = 0, total = 0;
  check(ctx.api().memory_query(dev, &free_bytes, &total), "memory_query");
  uint64_t size = std::max<uint64_t>(std::min<uint64_t>(free_bytes / 4, 256ull << 20), 1u << 20);
  // ABI 1.5: never more than one allocation may be (0: no limit).
  const uint64_t max_allocation = ctx.properties(ctx.default_device()).max_allocation_bytes;
  if (max_allocation != 0) size = std::min(size, max_allocation);
  DeviceMemory mem(ctx, dev, size, 256);
  Stream stream(ctx, dev);
  // A page at the start, in the middle and at the very end.
  const uint64_t chunk = 4096;
  for (uint64_t offset : {uint64_t{0}, size / 2 + 7, size - chunk}) {
    auto data = random_bytes(ctx, chunk);
    std::vector<unsigned char> back(chunk);
    stream.upload(mem.at(offset), data.data(), chunk);
    stream.download(back.data(), mem.at(offset), chunk);
    stream.synchronize();
    std::string diff = first_difference(back.data(), data.data(), chunk);
    require(diff.empty(), "allocation of " + bytes_text(size) + " at offset " +
                              std::to_string(offset) + ": " + diff);
  }
}

XDEV_CONFORMANCE_TEST(memory_zero_size, "memory.zero_size",
                      "memory_allocate of 0 bytes is INVALID_ARGUMENT") {
  xdev_device_t* dev = ctx.device();
  void* ptr = reinterpret_cast<void*>(uintptr_t{1});
  expect_error(ctx.api().memory_allocate(dev, 0, 64, &ptr), "memory_allocate(0 bytes)",
               {XDEV_STATUS_INVALID_ARGUMENT});
}

XDEV_CONFORMANCE_TEST(memory_free_null, "memory.free_null", "memory_free(NULL) is a no-op") {
  xdev_device_t* dev = ctx.device();
  ctx.api().memory_free(dev, nullptr);
  DeviceMemory still_works(ctx, dev, 128);
}

XDEV_CONFORMANCE_TEST(
    memory_out_of_memory, "memory.out_of_memory",
    "more than memory_query's total is OUT_OF_MEMORY, an absurd size too; the device still works") {
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  uint64_t free_bytes = 0, total = 0;
  check(api.memory_query(dev, &free_bytes, &total), "memory_query");
  require(total > 0, "memory_query reports total 0");
  const uint64_t too_much = total > (UINT64_MAX >> 2) ? UINT64_MAX / 2 : total * 2;
  void* ptr = nullptr;
  xdev_status_t* s = api.memory_allocate(dev, too_much, 64, &ptr);
  if (s == nullptr) {
    api.memory_free(dev, ptr);
    fail("memory_allocate(" + bytes_text(too_much) + ") succeeded on a device of " +
         bytes_text(total) + "; it must return OUT_OF_MEMORY");
  }
  // Above a declared largest single allocation (ABI 1.5) INVALID_ARGUMENT
  // is fine too (OpenCL's CL_INVALID_BUFFER_SIZE); the core never asks.
  const uint64_t max_allocation = ctx.properties(ctx.default_device()).max_allocation_bytes;
  if (max_allocation != 0 && too_much > max_allocation) {
    expect_error(s, "memory_allocate(" + bytes_text(too_much) + ")",
                 {XDEV_STATUS_OUT_OF_MEMORY, XDEV_STATUS_INVALID_ARGUMENT});
  } else {
    expect_error(s, "memory_allocate(" + bytes_text(too_much) + ")", {XDEV_STATUS_OUT_OF_MEMORY});
  }
  // An absurd size is refused too, never an abort.
  ptr = nullptr;
  xdev_status_t* huge = api.memory_allocate(dev, UINT64_MAX - 4095, 64, &ptr);
  if (huge == nullptr) {
    api.memory_free(dev, ptr);
    fail("memory_allocate(" + bytes_text(UINT64_MAX - 4095) + ") succeeded");
  }
  expect_error(huge, "memory_allocate(2^64 - 4096 bytes)",
               {XDEV_STATUS_OUT_OF_MEMORY, XDEV_STATUS_INVALID_ARGUMENT});
  // The device still works afterwards.
  DeviceMemory after(ctx, dev, 4096);
}

XDEV_CONFORMANCE_TEST(memory_query, "memory.query",
                      "free <= total, total matches memory_total, stable") {
  const uint32_t count = ctx.devices();
  for (uint32_t i = 0; i < count; ++i) {
    xdev_device_t* dev = ctx.device(i);
    const std::string where = "device " + std::to_string(i);
    uint64_t free_bytes = 0, total = 0;
    check(ctx.api().memory_query(dev, &free_bytes, &total), where + ": memory_query");
    require(total > 0, where + ": memory_query reports total 0");
    require(free_bytes <= total, where + ": memory_query reports free " + bytes_text(free_bytes) +
                                     " > total " + bytes_text(total));
    const uint64_t reported = ctx.properties(i).memory_total;
    const uint64_t diff = total > reported ? total - reported : reported - total;
    require(diff <= reported / 100,
            where + ": memory_query's total " + bytes_text(total) +
                " differs from the properties' memory_total " + bytes_text(reported) +
                " by more than 1%");
    DeviceMemory held(ctx, dev, 1 << 20);
    uint64_t free_after = 0, total_after = 0;
    check(ctx.api().memory_query(dev, &free_after, &total_after), where + ": memory_query");
    require(total_after == total, where + ": total memory changed after an allocation");
    require(free_after <= total_after, where + ": free > total after an allocation");
  }
}

XDEV_CONFORMANCE_TEST(memory_host_addressable, "memory.host_addressable",
                      "XDEV_CAP_HOST_ADDRESSABLE: the CPU reads and writes device memory") {
  ctx.require_capability(XDEV_CAP_HOST_ADDRESSABLE, "XDEV_CAP_HOST_ADDRESSABLE");
  xdev_device_t* dev = ctx.device();
  Stream stream(ctx, dev);
  const size_t size = 4099;
  DeviceMemory mem(ctx, dev, size);
  auto data = random_bytes(ctx, size);
  stream.upload(mem.at(), data.data(), size);
  stream.synchronize();
  std::string diff =
      first_difference(static_cast<const unsigned char*>(mem.get()), data.data(), size);
  require(diff.empty(), "reading device memory with the CPU after an upload: " + diff);
  auto other = random_bytes(ctx, size);
  std::memcpy(mem.get(), other.data(), size);
  std::vector<unsigned char> back(size);
  stream.download(back.data(), mem.at(), size);
  stream.synchronize();
  diff = first_difference(back.data(), other.data(), size);
  require(diff.empty(), "downloading memory the CPU wrote: " + diff);
}

// --- copy -------------------------------------------------------------------------

XDEV_CONFORMANCE_TEST(copy_host_device, "copy.host_device",
                      "host<->device, random data, odd sizes and offsets, guard bytes intact") {
  xdev_device_t* dev = ctx.device();
  Stream stream(ctx, dev);
  struct Case {
    uint64_t size, device_offset, host_offset;
  };
  const Case cases[] = {{1, 0, 0},      {3, 1, 3},       {127, 5, 1},
                        {4099, 63, 7},  {65537, 129, 5}, {(1u << 20) + 3, 17, 11},
                        {(5u << 20) + 1, 3, 2}};
  for (const Case& c : cases) {
    const std::string where = bytes_text(c.size) + " at device offset " +
                              std::to_string(c.device_offset) + ", host offset " +
                              std::to_string(c.host_offset);
    const uint64_t alloc = c.device_offset + c.size + 61;
    DeviceMemory mem(ctx, dev, alloc);
    // Known guard bytes around the target range.
    std::vector<unsigned char> expected(alloc, kGuard);
    stream.upload(mem.at(), expected.data(), alloc);
    std::vector<unsigned char> host(c.host_offset + c.size);
    auto data = random_bytes(ctx, c.size);
    std::memcpy(host.data() + c.host_offset, data.data(), c.size);
    stream.upload(mem.at(c.device_offset), host.data() + c.host_offset, c.size);
    std::memcpy(expected.data() + c.device_offset, data.data(), c.size);
    std::vector<unsigned char> whole(alloc);
    stream.download(whole.data(), mem.at(), alloc);
    // And just the range, into an odd host offset.
    std::vector<unsigned char> part(c.host_offset + c.size + 5, kGuard);
    stream.download(part.data() + c.host_offset, mem.at(c.device_offset), c.size);
    stream.synchronize();
    std::string diff = first_difference(whole.data(), expected.data(), alloc);
    require(diff.empty(), "upload of " + where + " (whole allocation read back): " + diff);
    diff = first_difference(part.data() + c.host_offset, data.data(), c.size);
    require(diff.empty(), "download of " + where + ": " + diff);
    for (size_t i = 0; i < c.host_offset; ++i) {
      require(part[i] == kGuard, "download of " + where + " wrote before its host range");
    }
    for (size_t i = c.host_offset + c.size; i < part.size(); ++i) {
      require(part[i] == kGuard, "download of " + where + " wrote past its host range");
    }
  }
}

XDEV_CONFORMANCE_TEST(copy_device_to_device, "copy.device_to_device",
                      "between and within allocations at odd offsets") {
  xdev_device_t* dev = ctx.device();
  Stream stream(ctx, dev);
  const uint64_t sizes[] = {1, 7, 1000, 65539, (2u << 20) + 9};
  for (uint64_t size : sizes) {
    const std::string where = bytes_text(size);
    DeviceMemory a(ctx, dev, size + 40);
    DeviceMemory b(ctx, dev, size + 40);
    std::vector<unsigned char> guard(size + 40, kGuard);
    stream.upload(b.at(), guard.data(), guard.size());
    auto data = random_bytes(ctx, size);
    stream.upload(a.at(3), data.data(), size);
    // Between two allocations, odd offsets on both sides.
    stream.copy(b.at(19), a.at(3), size);
    std::vector<unsigned char> back(size + 40);
    stream.download(back.data(), b.at(), back.size());
    stream.synchronize();
    std::vector<unsigned char> expected = guard;
    std::memcpy(expected.data() + 19, data.data(), size);
    std::string diff = first_difference(back.data(), expected.data(), back.size());
    require(diff.empty(), "copy_device_to_device of " + where + " between allocations: " + diff);

    // Within one allocation, to a disjoint range.
    DeviceMemory c(ctx, dev, 2 * size + 11);
    auto second = random_bytes(ctx, size);
    stream.upload(c.at(1), second.data(), size);
    stream.copy(c.at(size + 5), c.at(1), size);
    stream.require_contents(c.at(size + 5), second,
                            "copy_device_to_device of " + where + " within an allocation");
  }
}

XDEV_CONFORMANCE_TEST(copy_zero_bytes, "copy.zero_bytes",
                      "copies of 0 bytes succeed and change nothing") {
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  Stream stream(ctx, dev);
  DeviceMemory a(ctx, dev, 64), b(ctx, dev, 64);
  std::vector<unsigned char> data(64, 0x11);
  stream.upload(a.at(), data.data(), 64);
  stream.upload(b.at(), data.data(), 64);
  unsigned char host[64];
  std::memset(host, 0x22, sizeof host);
  const bool handles = ctx.handle_memory();
  check(copy_host_to_device(api, handles, stream.get(), a.at(), host, 0),
        "copy_host_to_device(0 bytes)");
  check(copy_device_to_host(api, handles, stream.get(), host, a.at(), 0),
        "copy_device_to_host(0 bytes)");
  check(copy_device_to_device(api, handles, stream.get(), b.at(), a.at(), 0),
        "copy_device_to_device(0 bytes)");
  stream.synchronize();
  for (unsigned char c : host) require(c == 0x22, "a copy of 0 bytes changed the host buffer");
  stream.require_contents(a.at(), data, "device memory after copies of 0 bytes");
}

XDEV_CONFORMANCE_TEST(copy_pinned_host_memory, "copy.pinned_host_memory",
                      "XDEV_CAP_HOST_MEMORY: pinned host memory round trip") {
  ctx.require_capability(XDEV_CAP_HOST_MEMORY, "XDEV_CAP_HOST_MEMORY");
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  const uint64_t size = (1u << 20) + 7;
  void* src = nullptr;
  void* dst = nullptr;
  const xdev_plugin_api_t* table = &api;
  check(api.host_memory_allocate(dev, size, &src), "host_memory_allocate");
  ctx.on_finish([table, dev, src] { table->host_memory_free(dev, src); });
  check(api.host_memory_allocate(dev, size, &dst), "host_memory_allocate");
  ctx.on_finish([table, dev, dst] { table->host_memory_free(dev, dst); });
  require(src != nullptr && dst != nullptr, "host_memory_allocate returned NULL");
  // Pinned memory is ordinary host memory to the CPU.
  auto data = random_bytes(ctx, size);
  std::memcpy(src, data.data(), size);
  std::memset(dst, 0, size);
  DeviceMemory mem(ctx, dev, size);
  Stream stream(ctx, dev);
  stream.upload(mem.at(), src, size);
  stream.download(dst, mem.at(), size);
  stream.synchronize();
  std::string diff = first_difference(static_cast<unsigned char*>(dst), data.data(), size);
  require(diff.empty(), "round trip through pinned host memory: " + diff);
}

XDEV_CONFORMANCE_TEST(copy_peer, "copy.peer", "XDEV_CAP_PEER_COPY: device 0 <-> device 1") {
  ctx.require_capability(XDEV_CAP_PEER_COPY, "XDEV_CAP_PEER_COPY");
  ctx.devices(2);
  const xdev_plugin_api_t& api = ctx.api();
  for (auto [from, to] : {std::pair<uint32_t, uint32_t>{0, 1}, {1, 0}}) {
    xdev_device_t* src_dev = ctx.device(from);
    xdev_device_t* dst_dev = ctx.device(to);
    const uint64_t size = 65536 + 13;
    DeviceMemory src(ctx, src_dev, size + 8);
    DeviceMemory dst(ctx, dst_dev, size + 8);
    Stream src_stream(ctx, src_dev);
    Stream dst_stream(ctx, dst_dev);
    auto data = random_bytes(ctx, size);
    src_stream.upload(src.at(5), data.data(), size);
    src_stream.synchronize();
    xdev_status_t* s =
        copy_peer(api, ctx.handle_memory(), dst_stream.get(), dst.at(3), src_dev, src.at(5), size);
    if (s != nullptr && s->code == XDEV_STATUS_UNIMPLEMENTED) {
      delete s;
      skip("copy_peer reports no direct path from device " + std::to_string(from) +
           " to device " + std::to_string(to) + " (UNIMPLEMENTED; the core stages through the host)");
    }
    check(s, "copy_peer from device " + std::to_string(from) + " to " + std::to_string(to));
    dst_stream.require_contents(
        dst.at(3), data,
        "copy_peer from device " + std::to_string(from) + " to " + std::to_string(to));
  }
}

}  // namespace

}  // namespace xdev_conformance
