// A C++ program hands tensors to libtorch and takes libtorch's back, without
// a copy: xdev::to_dlpack_legacy -> at::fromDLPack, at::toDLPack ->
// xdev::from_dlpack (libtorch 1.13 speaks DLPack 0.6, the unversioned struct).
// The data pointers prove that no copy was made.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <gtest/gtest.h>

#include <vector>

#include <xdev/xdev.hpp>

namespace {

TEST(LibtorchDLPack, XdevToTorchSharesMemory) {
  xdev::Tensor x = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  ASSERT_EQ(xdev::dlpack_device(x).device_type, 1);  // kDLCPU
  at::Tensor t = at::fromDLPack(xdev::to_dlpack_legacy(x));
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.scalar_type(), at::kFloat);
  // Same memory: torch's pointer is the one xdev exports.
  DLManagedTensor* probe = xdev::to_dlpack_legacy(x);
  EXPECT_EQ(t.data_ptr(), probe->dl_tensor.data);
  probe->deleter(probe);
  EXPECT_FLOAT_EQ(t.sum().item<float>(), 21.f);
  // A transposed view arrives as a strided torch tensor over the same memory.
  xdev::Tensor col = xdev::slice(x, {xdev::Index::all(), xdev::Index(2)});
  at::Tensor tc = at::fromDLPack(xdev::to_dlpack_legacy(col));
  EXPECT_EQ(tc.stride(0), 3);
  EXPECT_EQ(static_cast<float*>(tc.data_ptr()), static_cast<float*>(t.data_ptr()) + 2);
  EXPECT_FLOAT_EQ(tc[1].item<float>(), 6.f);
  // Torch keeps the memory alive after xdev dropped its tensor.
  x = xdev::Tensor();
  col = xdev::Tensor();
  EXPECT_FLOAT_EQ(t[1][2].item<float>(), 6.f);
}

TEST(LibtorchDLPack, TorchToXdevSharesMemory) {
  at::Tensor t = at::arange(12, at::kDouble).reshape({3, 4});
  const void* data = t.data_ptr();
  xdev::Tensor x = xdev::from_dlpack(at::toDLPack(t));
  EXPECT_EQ(x.dtype(), xdev::DType::kFloat64);
  EXPECT_EQ(x.shape(), (xdev::Shape{3, 4}));
  DLManagedTensor* probe = xdev::to_dlpack_legacy(x);
  EXPECT_EQ(probe->dl_tensor.data, data);
  probe->deleter(probe);
  // xdev computes on torch's memory; torch's writes are visible (it is one buffer).
  EXPECT_EQ(xdev::sum(x).item<double>(), 66.0);
  t.mul_(2);
  EXPECT_EQ(xdev::sum(x).item<double>(), 132.0);
  // A non-contiguous torch view (a transpose) comes over as a strided view.
  xdev::Tensor xt = xdev::from_dlpack(at::toDLPack(t.t()));
  EXPECT_FALSE(xt.is_contiguous());
  EXPECT_EQ(xt.to_vector<double>()[1], 8.0);  // t.t()[0][1] = t[1][0] = 4 * 2
}

TEST(LibtorchDLPack, RoundTripKeepsValuesAndDtypes) {
  xdev::Tensor ints = xdev::constant({int64_t{1} << 40, int64_t{-3}});
  at::Tensor t = at::fromDLPack(xdev::to_dlpack_legacy(ints));
  EXPECT_EQ(t.scalar_type(), at::kLong);
  xdev::Tensor back = xdev::from_dlpack(at::toDLPack(t));
  EXPECT_EQ(back.to_vector<int64_t>(), (std::vector<int64_t>{int64_t{1} << 40, -3}));
}

}  // namespace
