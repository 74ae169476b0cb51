// DLPack export and import through the public SDK, with the cpu plugin
// (declares DLPack CPU: zero-copy both ways) and the simulated accelerator
// (declares EXT_DEV: exported as such, foreign memory refused). The DLPack
// structs come from the core's copy of dlpack.h, as a consumer's would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include <xdev/xdev.hpp>

#include "device_names.hpp"
#include "error_matchers.hpp"
#include "interop/dlpack.h"

namespace {

using ::testing::ElementsAre;
using ::testing::AllOf;
using ::testing::HasSubstr;
using xdev_test::ThrowsError;

using namespace xdev_test::devices;  // kCpu0, kGpu1, ...

// A producer outside xdev: owns a vector, counts deleter calls.
struct Producer {
  std::vector<float> values;
  std::vector<int64_t> shape, strides;
  DLManagedTensorVersioned managed{};
  int deleted = 0;

  Producer(std::vector<float> v, std::vector<int64_t> s, std::vector<int64_t> st = {})
      : values(std::move(v)), shape(std::move(s)), strides(std::move(st)) {
    managed.version = {1, 0};
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensorVersioned* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deleted;
    };
    DLTensor& t = managed.dl_tensor;
    t.data = values.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = 0;
  }
};

void release(DLManagedTensorVersioned* m) { m->deleter(m); }

TEST(DLPack, ExportsACpuTensorInPlaceReadOnly) {
  xdev::Tensor t;
  {
    xdev::DeviceScope scope("/CPU:0");
    t = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  }
  EXPECT_EQ(xdev::dlpack_device(t), (xdev::DLPackDevice{kDLCPU, 0}));
  DLManagedTensorVersioned* m = xdev::to_dlpack(t);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->version.minor, 1u);
  EXPECT_EQ(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  EXPECT_EQ(m->flags & DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  const DLTensor& d = m->dl_tensor;
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 32);
  EXPECT_EQ(d.shape[0], 2);
  EXPECT_EQ(d.shape[1], 3);
  EXPECT_EQ(d.strides[0], 3);
  EXPECT_EQ(d.strides[1], 1);
  const float* p = static_cast<const float*>(d.data);
  EXPECT_EQ(std::vector<float>(p, p + 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  // A view keeps its strides; the memory is the tensor's own.
  DLManagedTensorVersioned* v = xdev::to_dlpack(t.transpose().reshape({3, 2}));
  xdev::Tensor tt = xdev::slice(t, {xdev::Index::all(), xdev::Index(1)});  // column 1
  DLManagedTensorVersioned* col = xdev::to_dlpack(tt);
  EXPECT_EQ(col->dl_tensor.data, static_cast<const float*>(d.data) + 1);
  EXPECT_EQ(col->dl_tensor.strides[0], 3);
  release(col);
  release(v);

  // The memory outlives the tensor until the deleter runs.
  t = xdev::Tensor();
  EXPECT_EQ(p[5], 6.f);
  release(m);
}

TEST(DLPack, RoundTripOfAnExportIsTheSameTensor) {
  xdev::Tensor t = xdev::constant({1.f, 2.f});  // on the sim GPU:0
  DLManagedTensorVersioned* m = xdev::to_dlpack(t);
  xdev::Tensor u = xdev::from_dlpack(m);  // takes ownership
  EXPECT_EQ(u.impl(), t.impl());
  DLManagedTensor* legacy = xdev::to_dlpack_legacy(t);
  xdev::Tensor w = xdev::from_dlpack(legacy);
  EXPECT_EQ(w.impl(), t.impl());
}

TEST(DLPack, ImportsHostMemoryInPlaceAndReleasesItOnce) {
  Producer producer({1, 2, 3, 4, 5, 6}, {2, 3});
  {
    xdev::Tensor t = xdev::from_dlpack(&producer.managed);
    EXPECT_EQ(t.device().name, kCpu0);
    EXPECT_EQ(t.dtype(), xdev::DType::kFloat32);
    EXPECT_EQ(t.shape(), (xdev::Shape{2, 3}));
    // Same memory: an export of it points at the producer's vector.
    DLManagedTensorVersioned* again = xdev::to_dlpack(t);
    EXPECT_EQ(again->dl_tensor.data, producer.values.data());
    release(again);
    // Ops read it where it is.
    xdev::Tensor s = xdev::sum(t, {1});
    EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{6, 15}));
    xdev::Tensor view = t.transpose();
    EXPECT_EQ(producer.deleted, 0);
  }
  EXPECT_EQ(producer.deleted, 1);
}

TEST(DLPack, ImportsStridedAndBroadcastHostMemoryInPlace) {
  // Every other element of a 2x6 buffer, and a row broadcast over 3 rows.
  Producer strided({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {2, 3}, {6, 2});
  xdev::Tensor a = xdev::from_dlpack(&strided.managed);
  EXPECT_FALSE(a.is_contiguous());
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  Producer broadcast({1, 2}, {3, 2}, {0, 1});
  xdev::Tensor b = xdev::from_dlpack(&broadcast.managed);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2, 1, 2, 1, 2}));
}

TEST(DLPack, CopiesHostMemoryWithNegativeStrides) {
  Producer reversed({1, 2, 3, 4}, {4}, {-1});
  reversed.managed.dl_tensor.data = reversed.values.data() + 3;
  xdev::Tensor t = xdev::from_dlpack(&reversed.managed);
  EXPECT_EQ(reversed.deleted, 1);  // copied: released at once
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{4, 3, 2, 1}));
}

TEST(DLPack, CopiesMisalignedHostMemory) {
  std::vector<char> bytes(4 * 3 + 1);
  const float values[3] = {7, 8, 9};
  std::memcpy(bytes.data() + 1, values, sizeof values);
  Producer p({}, {3});
  p.managed.dl_tensor.data = bytes.data() + 1;
  xdev::Tensor t = xdev::from_dlpack(&p.managed);
  EXPECT_EQ(p.deleted, 1);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{7, 8, 9}));
}

// float16, bfloat16, uint8 and int8 are xdev dtypes: they come in (a copy of
// the host memory) with their DLPack codes and go out with them.
TEST(DLPack, SixteenBitFloatsAndBytesRoundTrip) {
  const std::vector<xdev::float16> h = {xdev::float16(1.5f), xdev::float16(-2.0f)};
  const xdev::Tensor t = xdev::constant(h, xdev::Shape{2});
  DLManagedTensorVersioned* m = xdev::to_dlpack(t);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 16);
  const xdev::Tensor back = xdev::from_dlpack(m);
  EXPECT_EQ(back.dtype(), xdev::DType::kFloat16);
  EXPECT_EQ(back.to_vector<xdev::float16>()[1].bits, h[1].bits);
  const xdev::Tensor b = xdev::cast(t, xdev::DType::kBFloat16);
  DLManagedTensorVersioned* mb = xdev::to_dlpack(b);
  EXPECT_EQ(mb->dl_tensor.dtype.code, kDLBfloat);
  EXPECT_EQ(xdev::from_dlpack(mb).dtype(), xdev::DType::kBFloat16);
  DLManagedTensorVersioned* mu =
      xdev::to_dlpack(xdev::constant(std::vector<uint8_t>{7}, xdev::Shape{1}));
  EXPECT_EQ(mu->dl_tensor.dtype.code, kDLUInt);
  EXPECT_EQ(xdev::from_dlpack(mu).to_vector<uint8_t>(), (std::vector<uint8_t>{7}));
}

TEST(DLPack, RefusesDtypesXdevDoesNotHaveAndLeavesOwnership) {
  Producer p({1, 2}, {2});
  p.managed.dl_tensor.dtype = {kDLInt, 16, 1};
  p.managed.dl_tensor.shape[0] = 4;
  EXPECT_THAT([&] { xdev::from_dlpack(&p.managed); },
              ThrowsError(xdev::ErrorCode::kInvalidArgument,
                          HasSubstr("dtype int16 has no xdev dtype")));
  EXPECT_EQ(p.deleted, 0);  // still the caller's
  p.managed.dl_tensor.dtype = {kDLFloat, 32, 1};
  p.managed.version = {2, 0};
  try {
    xdev::from_dlpack(&p.managed);
    FAIL() << "DLPack 2.0 was accepted";
  } catch (const xdev::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("DLPack version 2.0 is not supported"));
  }
}

TEST(DLPack, SimulatedDevicesExportAsExtDevAndRefuseForeignMemory) {
  xdev::Tensor t;
  {
    xdev::DeviceScope scope("/GPU:1");
    t = xdev::constant({1.f, 2.f, 3.f});
  }
  EXPECT_EQ(xdev::dlpack_device(t), (xdev::DLPackDevice{kDLExtDev, 1}));
  DLManagedTensorVersioned* m = xdev::to_dlpack(t);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLExtDev);
  EXPECT_EQ(m->dl_tensor.device.device_id, 1);
  EXPECT_EQ(m->flags & DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  release(m);

  // To the host: a copy, flagged so.
  xdev::ToDLPackOptions host;
  host.device = xdev::DLPackDevice{kDLCPU, 0};
  DLManagedTensorVersioned* h = xdev::to_dlpack(t, host);
  EXPECT_EQ(h->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(h->flags & DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_IS_COPIED);
  const float* p = static_cast<const float*>(h->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(p, p + 3), (std::vector<float>{1, 2, 3}));
  release(h);
  host.copy = false;
  EXPECT_THROW(xdev::to_dlpack(t, host), xdev::Error);
  host.device = xdev::DLPackDevice{kDLCUDA, 0};
  host.copy.reset();
  EXPECT_THROW(xdev::to_dlpack(t, host), xdev::Error);

  // Memory of a device nobody declared: refused, naming it.
  EXPECT_EQ(xdev::dlpack_zero_copy_device({kDLExtDev, 1}), std::nullopt);
  Producer foreign({1, 2}, {2});
  foreign.managed.dl_tensor.device = {kDLCUDA, 0};
  EXPECT_THAT([&] { xdev::from_dlpack(&foreign.managed); },
              ThrowsError(xdev::ErrorCode::kNotFound,
                          AllOf(HasSubstr("no xdev device can address memory on cuda:0"),
                                HasSubstr(kCpu0 + " (cpu:0"))));
  EXPECT_EQ(foreign.deleted, 0);
}

TEST(DLPack, ZeroCopyDeviceFollowsTheScope) {
  EXPECT_EQ(xdev::dlpack_zero_copy_device({kDLCPU, 0})->name, kCpu0);
  EXPECT_EQ(xdev::dlpack_zero_copy_device({kDLCUDAHost, 0})->name, kCpu0);
  xdev::DeviceScope scope("/GPU:0");  // cannot hold host memory: still CPU:0
  EXPECT_EQ(xdev::dlpack_zero_copy_device({kDLCPU, 0})->name, kCpu0);
}

// The fakecl fixture declares DLPack OpenCL memory (its memory is host
// memory behind that label) and a stream handle.
const std::string kFakeCl0 = xdev_test::logical_device_name("FAKECL", 0);

TEST(DLPack, DeviceMemoryOfADeclaredTypeIsTakenInPlace) {
  EXPECT_EQ(xdev::dlpack_zero_copy_device({kDLOpenCL, 0})->name, kFakeCl0);
  EXPECT_EQ(xdev::dlpack_zero_copy_device({kDLOpenCL, 1}), std::nullopt);  // no ordinal 1
  Producer producer({1, 2, 3}, {3});
  producer.managed.dl_tensor.device = {kDLOpenCL, 0};
  {
    xdev::Tensor t = xdev::from_dlpack(&producer.managed);
    EXPECT_EQ(t.device().name, kFakeCl0);
    EXPECT_EQ(xdev::dlpack_device(t), (xdev::DLPackDevice{kDLOpenCL, 0}));
    DLManagedTensorVersioned* again = xdev::to_dlpack(t);
    EXPECT_EQ(again->dl_tensor.data, producer.values.data());  // the very same memory
    release(again);
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3}));  // read through the plugin
    EXPECT_EQ(producer.deleted, 0);
  }
  EXPECT_EQ(producer.deleted, 1);
  Producer other({1}, {1});
  other.managed.dl_tensor.device = {kDLOpenCL, 1};
  EXPECT_THROW(xdev::from_dlpack(&other.managed), xdev::Error);
  EXPECT_EQ(other.deleted, 0);
}

TEST(DLPack, StreamHandlesComeFromThePlugin) {
  EXPECT_EQ(xdev::dlpack_stream("FAKECL:0"), int64_t{0x5eed0c1});
  EXPECT_EQ(xdev::dlpack_stream("/CPU:0"), std::nullopt);  // the cpu plugin offers none
  EXPECT_EQ(xdev::dlpack_stream("GPU:0"), std::nullopt);   // nor the sim plugin
  EXPECT_THROW(xdev::dlpack_stream("GPU:9"), xdev::Error);
}

TEST(DLPack, CopyOnRequestIsANewBuffer) {
  xdev::DeviceScope scope("/CPU:0");
  xdev::Tensor t = xdev::constant({1, 2, 3});
  DLManagedTensorVersioned* same = xdev::to_dlpack(t);
  xdev::ToDLPackOptions copy;
  copy.copy = true;
  DLManagedTensorVersioned* fresh = xdev::to_dlpack(t, copy);
  EXPECT_NE(fresh->dl_tensor.data, same->dl_tensor.data);
  EXPECT_EQ(fresh->flags, DLPACK_FLAG_BITMASK_IS_COPIED);  // not read-only: the consumer's own
  EXPECT_EQ(same->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  EXPECT_EQ(fresh->dl_tensor.dtype.code, kDLInt);
  release(fresh);
  release(same);
}

}  // namespace
