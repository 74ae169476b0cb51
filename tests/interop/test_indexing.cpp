// Basic indexing (<xdev/indexing.hpp>): views with NumPy's rules, on the cpu
// plugin and on the simulated accelerator (views never touch device memory).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include <xdev/xdev.hpp>

namespace {

using ::testing::HasSubstr;
using xdev::Index;

// [[0 1 2 3] [4 5 6 7] [8 9 10 11]] as float32.
xdev::Tensor grid() {
  std::vector<float> v(12);
  std::iota(v.begin(), v.end(), 0.f);
  return xdev::constant(v, xdev::Shape{3, 4});
}

TEST(Indexing, IntegersRangesNewAxesAndEllipsis) {
  for (const char* device : {"/CPU:0", "/GPU:0"}) {
    SCOPED_TRACE(device);
    xdev::DeviceScope scope(device);
    xdev::Tensor t = grid();
    xdev::Tensor row = xdev::slice(t, {Index(1)});
    EXPECT_EQ(row.shape(), (xdev::Shape{4}));
    EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{4, 5, 6, 7}));
    EXPECT_EQ(row.device(), t.device());
    EXPECT_EQ(xdev::slice(t, {Index(-1), Index(-2)}).to_vector<float>(), (std::vector<float>{10}));
    EXPECT_EQ(xdev::slice(t, {Index(-1), Index(-2)}).shape(), xdev::Shape{});
    xdev::Tensor cols = xdev::slice(t, {Index::all(), Index::range(1, std::nullopt, 2)});
    EXPECT_EQ(cols.shape(), (xdev::Shape{3, 2}));
    EXPECT_FALSE(cols.is_contiguous());
    EXPECT_EQ(cols.to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9, 11}));
    EXPECT_EQ(xdev::slice(t, {Index::range(-2, 100)}).to_vector<float>(),
              (std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11}));
    EXPECT_EQ(xdev::slice(t, {Index::range(2, 1)}).shape(), (xdev::Shape{0, 4}));
    xdev::Tensor expanded = xdev::slice(t, {Index::ellipsis(), Index::new_axis()});
    EXPECT_EQ(expanded.shape(), (xdev::Shape{3, 4, 1}));
    EXPECT_TRUE(expanded.is_contiguous());
    EXPECT_EQ(xdev::slice(t, {Index::new_axis(), Index::ellipsis(), Index(0)}).shape(),
              (xdev::Shape{1, 3}));
    // Ops take views: the sum of the odd columns.
    EXPECT_EQ(xdev::sum(cols, {0}).to_vector<float>(), (std::vector<float>{15, 21}));
  }
}

TEST(Indexing, ErrorsNameTheAxis) {
  xdev::Tensor t = grid();
  try {
    xdev::slice(t, {Index::all(), Index(4)});
    FAIL();
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("index 4 is out of bounds for axis 1 with size 4"));
  }
  EXPECT_THROW(xdev::slice(t, {Index(0), Index(0), Index(0)}), xdev::Error);
  EXPECT_THROW(xdev::slice(t, {Index::ellipsis(), Index::ellipsis()}), xdev::Error);
  EXPECT_THROW(xdev::slice(t, {Index::range(0, 2, 0)}), xdev::Error);
  try {
    xdev::slice(t, {Index::range(std::nullopt, std::nullopt, -1)});
    FAIL();
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kUnimplemented);
  }
}

}  // namespace
