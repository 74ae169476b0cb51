// Host <-> device copies through the core's pinned staging buffers
// (core/transfer/staging.hpp), against the simulated accelerator: its memory
// is not host-addressable, it offers pinned host memory, and its streams run
// copies on a worker thread that reads the host buffer when the copy runs
// (XDEV_SIM_DELAY_US delays each one), so a staging buffer refilled before
// the device finished reading it shows up as wrong data.
//
// The staged path is proven by the core's staging counters; the data is
// checked byte for byte for sizes around the chunk boundaries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "device_names.hpp"
#include "ops/run_op.hpp"
#include "devices/runtime.hpp"
#include "placement/decide.hpp"
#include "transfer/copy.hpp"
#include "tensors/tensor_impl.hpp"
#include "transfer/staging.hpp"

namespace {

using xdev::detail::kStagingBufferBytes;
using xdev::detail::kStagingMinBytes;
using xdev::detail::staging_chunk_bytes;
using xdev::detail::staging_stats;
using xdev::detail::StagingStats;

using namespace xdev_test::devices;  // kCpu0, kGpu1, ...

std::vector<uint8_t> random_bytes(uint64_t size, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<uint8_t> bytes(size);
  for (auto& b : bytes) b = static_cast<uint8_t>(engine());
  return bytes;
}

// Chunks a staged copy of `bytes` is cut into.
uint64_t chunks_of(uint64_t bytes) {
  const uint64_t chunk = staging_chunk_bytes(bytes);
  return (bytes + chunk - 1) / chunk;
}

// The first index at which two byte arrays differ, or -1.
int64_t first_difference(const uint8_t* a, const uint8_t* b, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  }
  return -1;
}

TEST(StagingChunks, AtLeastTwoChunksPageAlignedAtMostOneBuffer) {
  EXPECT_EQ(staging_chunk_bytes(kStagingMinBytes), kStagingMinBytes / 2);
  EXPECT_EQ(staging_chunk_bytes(kStagingMinBytes + 1), kStagingMinBytes / 2 + 4096);
  EXPECT_EQ(staging_chunk_bytes(2 * kStagingBufferBytes), kStagingBufferBytes);
  EXPECT_EQ(staging_chunk_bytes(2 * kStagingBufferBytes - 2), kStagingBufferBytes);
  EXPECT_EQ(staging_chunk_bytes(100 * kStagingBufferBytes), kStagingBufferBytes);
  for (uint64_t bytes : {kStagingMinBytes, uint64_t{1000000}, 3 * kStagingBufferBytes + 1}) {
    EXPECT_GE(chunks_of(bytes), 2u) << bytes;
    EXPECT_EQ(staging_chunk_bytes(bytes) % 4096, 0u) << bytes;
  }
}

// bool tensors: one byte per element, so sizes can be odd.
class StagedCopies : public ::testing::TestWithParam<uint64_t> {};

TEST_P(StagedCopies, RoundTripIsExactAndTakesTheStagedPathFromItsSize) {
  const uint64_t bytes = GetParam();
  std::vector<uint8_t> values = random_bytes(bytes, bytes);
  for (auto& v : values) v &= 1;  // bool: 0 or 1

  const StagingStats before = staging_stats();
  xdev::Tensor t =
      xdev::constant(values.data(), xdev::DType::kBool, xdev::Shape{static_cast<int64_t>(bytes)});
  ASSERT_EQ(t.device().name, kGpu0);
  const StagingStats uploaded = staging_stats();
  xdev::HostTensor back = t.to_host();
  const StagingStats after = staging_stats();

  ASSERT_EQ(back.byte_size(), bytes);
  EXPECT_EQ(first_difference(reinterpret_cast<const uint8_t*>(back.bytes()), values.data(), bytes),
            -1)
      << bytes << " bytes";
  if (bytes >= kStagingMinBytes) {
    EXPECT_EQ(uploaded.staged_uploads, before.staged_uploads + 1);
    EXPECT_EQ(after.staged_downloads, uploaded.staged_downloads + 1);
    EXPECT_EQ(uploaded.chunks - before.chunks, chunks_of(bytes));
    EXPECT_EQ(after.chunks - uploaded.chunks, chunks_of(bytes));
    EXPECT_EQ(after.staged_bytes - before.staged_bytes, 2 * bytes);
  } else {
    EXPECT_EQ(after.staged_uploads, before.staged_uploads) << "too small to stage";
    EXPECT_EQ(after.staged_downloads, before.staged_downloads);
  }
  // The device's two buffers are made once and reused.
  EXPECT_LE(after.buffers_allocated, 2u);
}

constexpr uint64_t kBuf = kStagingBufferBytes;
INSTANTIATE_TEST_SUITE_P(
    AroundChunkBoundaries, StagedCopies,
    ::testing::Values(uint64_t{1}, kStagingMinBytes - 1, kStagingMinBytes, kStagingMinBytes + 1,
                      kBuf - 1, kBuf, kBuf + 1,              // two chunks of about half
                      2 * kBuf - 1, 2 * kBuf, 2 * kBuf + 1,  // 2 full chunks, then 3
                      3 * kBuf, 3 * kBuf + 4097, 5 * kBuf + 12345),
    [](const ::testing::TestParamInfo<uint64_t>& info) {
      return std::to_string(info.param) + "_bytes";
    });

// int32 data whose every element is its own index: a chunk landing at the
// wrong offset cannot go unnoticed.
TEST(StagedCopiesOfIndices, EveryElementLandsAtItsPlace) {
  const int64_t n = static_cast<int64_t>(3 * kBuf / 4) + 1001;  // 3 chunks and a bit
  std::vector<int32_t> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  const StagingStats before = staging_stats();
  xdev::Tensor t = xdev::constant(values, xdev::Shape{n});
  std::vector<int32_t> back = t.to_vector<int32_t>();
  EXPECT_EQ(staging_stats().staged_uploads, before.staged_uploads + 1);
  ASSERT_EQ(back.size(), values.size());
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(back[static_cast<size_t>(i)], i) << "element " << i;
  }
  // A CPU tensor moved to the device goes through the same path.
  xdev::Tensor on_cpu = t.to("CPU:0");
  xdev::Tensor again = on_cpu.to("GPU:0");
  EXPECT_EQ(again.to_vector<int32_t>(), values);
}

// Pinned memory the core handed out is copied directly: no staging.
TEST(PinnedHostMemory, IsCopiedDirectly) {
  using namespace xdev::detail;
  LogicalDeviceState* gpu = resolve_device("GPU:0");
  const uint64_t bytes = 2 * kBuf + 100;
  PinnedHostBuffer in(*gpu, bytes), out(*gpu, bytes);
  std::vector<uint8_t> values = random_bytes(bytes, 7);
  std::memcpy(in.data(), values.data(), bytes);
  auto tensor = make_tensor(gpu, xdev::DType::kBool, xdev::Shape{static_cast<int64_t>(bytes)});

  const StagingStats before = staging_stats();
  upload(gpu, tensor->memory(), in.data(), bytes);
  download(gpu, tensor->memory(), out.data(), bytes);
  const StagingStats after = staging_stats();
  EXPECT_EQ(after.direct_pinned_copies, before.direct_pinned_copies + 2);
  EXPECT_EQ(after.staged_uploads, before.staged_uploads);
  EXPECT_EQ(after.staged_downloads, before.staged_downloads);
  EXPECT_EQ(first_difference(static_cast<const uint8_t*>(out.data()), values.data(), bytes), -1);

  // A range inside a pinned buffer is pinned; one that runs past its end or
  // ordinary memory is not.
  EXPECT_TRUE(is_core_pinned(static_cast<char*>(in.data()) + 10, bytes - 10));
  EXPECT_FALSE(is_core_pinned(static_cast<char*>(in.data()) + 10, bytes));
  EXPECT_FALSE(is_core_pinned(values.data(), bytes));
}

TEST(PinnedHostMemory, IsRefusedWhereThePluginHasNone) {
  using namespace xdev::detail;
  LogicalDeviceState* cpu = resolve_device("CPU:0");
  try {
    PinnedHostBuffer buffer(*cpu, 4096);
    FAIL() << "the cpu plugin offers no pinned host memory";
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kUnimplemented);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("offers no pinned host memory"));
  }
}

}  // namespace

// HostTensor owns its bytes: the public constructor zero-fills, copies are
// deep, a moved-from tensor is empty, and buffers from 2 MiB on are 2 MiB
// aligned (transparent huge pages: to_host() of a fresh 256 MiB buffer took
// 65536 page faults on a GPU machine, most of its time).
TEST(HostTensorMemory, ZeroFilledDeepCopiesAndHugePageAlignment) {
  for (int64_t n : {int64_t{0}, int64_t{25}, int64_t{3} << 20}) {
    // Dirty the heap first, so a zero-filled buffer is not zero by chance.
    { std::vector<uint8_t> junk(static_cast<size_t>(n) + 64, 0xAB); }
    xdev::HostTensor a(xdev::DType::kBool, xdev::Shape{n});
    ASSERT_EQ(a.byte_size(), static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(a.bytes()[i], std::byte{0}) << i;
    if (n >= (int64_t{2} << 20)) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(a.bytes()) % (uintptr_t{2} << 20), 0u);
    }
    if (n > 0) a.bytes()[n - 1] = std::byte{1};

    xdev::HostTensor copy = a;
    ASSERT_EQ(copy.byte_size(), a.byte_size());
    if (n > 0) {
      EXPECT_NE(copy.bytes(), a.bytes());
      EXPECT_EQ(copy.bytes()[n - 1], std::byte{1});
      copy.bytes()[0] = std::byte{1};
      EXPECT_EQ(a.bytes()[0], std::byte{0}) << "a copy shares nothing";
    }
    copy = copy;  // self-assignment keeps the values
    if (n > 0) {
      EXPECT_EQ(copy.bytes()[n - 1], std::byte{1});
    }

    xdev::HostTensor moved = std::move(a);
    EXPECT_EQ(moved.byte_size(), static_cast<size_t>(n));
    EXPECT_EQ(a.byte_size(), 0u);  // NOLINT(bugprone-use-after-move): documented state
    a = std::move(moved);
    EXPECT_EQ(a.byte_size(), static_cast<size_t>(n));
    if (n > 0) {
      EXPECT_EQ(a.bytes()[n - 1], std::byte{1});
    }
  }
}
