// safetensors files: round trips of every dtype, the 16-bit and narrow
// integer dtypes held widened and written back bit for bit, the exact
// float16/bfloat16 conversions, and malformed files refused with the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <xdev/xdev.hpp>

#include <xdev/half.hpp>
#include "error_matchers.hpp"
#include "test_dir.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using xdev_test::ThrowsError;

class Safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = xdev_test::fresh_test_dir("xdev_safetensors");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // A file with this header and data, written by hand.
  std::string write_raw(const std::string& name, std::string header, const std::string& data,
                        std::optional<uint64_t> claimed_size = std::nullopt) const {
    std::string bytes(8, '\0');
    uint64_t n = claimed_size.value_or(header.size());
    for (int i = 0; i < 8; ++i, n >>= 8) bytes[i] = static_cast<char>(n & 0xff);
    std::ofstream(path(name), std::ios::binary) << bytes << header << data;
    return path(name);
  }
  // The error load_file throws for a file, with its code.
  static std::pair<xdev::ErrorCode, std::string> load_error(const std::string& p) {
    try {
      xdev::load_file(p);
    } catch (const xdev::Error& e) {
      return {e.code(), e.what()};
    }
    return {xdev::ErrorCode::kInternal, "no error"};
  }

  fs::path dir_;
};

TEST_F(Safetensors, RoundTripsEveryDtypeAndTheMetadata) {
  std::map<std::string, xdev::Tensor> tensors{
      {"f32", xdev::constant({{1.5f, -2.f}, {3.f, 4.25f}})},
      {"f64", xdev::constant({1e300, -0.5})},
      {"i32", xdev::constant({1, -2, 3})},
      {"i64", xdev::constant({int64_t{1} << 40, int64_t{-7}})},
      {"b", xdev::constant({true, false, true})},
      {"scalar", xdev::constant(7.f)},
      {"empty", xdev::zeros({0, 3})},
  };
  xdev::save_file(tensors, path("all.safetensors"), {{"format", "pt"}, {"who", "xdev"}});
  xdev::SafetensorsFile file = xdev::load_file(path("all.safetensors"), "/CPU:0");
  EXPECT_EQ(file.metadata, (std::map<std::string, std::string>{{"format", "pt"}, {"who", "xdev"}}));
  EXPECT_TRUE(file.dtypes.empty());
  ASSERT_EQ(file.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    SCOPED_TRACE(name);
    const xdev::Tensor& u = file.tensors.at(name);
    EXPECT_EQ(u.device().name, "/job:localhost/replica:0/task:0/device:CPU:0");
    EXPECT_EQ(u.dtype(), t.dtype());
    EXPECT_EQ(u.shape(), t.shape());
    xdev::HostTensor a = t.to_host(), b = u.to_host();
    ASSERT_EQ(a.byte_size(), b.byte_size());
    // A 0-element tensor may have no bytes at all (memcmp forbids NULL).
    if (a.byte_size() > 0) {
      EXPECT_EQ(std::memcmp(a.bytes(), b.bytes(), a.byte_size()), 0);
    }
  }
  // The layout the safetensors package writes: 8-aligned data, widest first.
  const std::string bytes = read(path("all.safetensors"));
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  EXPECT_EQ(header % 8, 0u);
  const std::string text = bytes.substr(8, header);
  EXPECT_EQ(text.find("{\"__metadata__\":{\"format\":\"pt\",\"who\":\"xdev\"}"), 0u) << text;
  EXPECT_LT(text.find("\"f64\""), text.find("\"f32\""));
  EXPECT_LT(text.find("\"f32\""), text.find("\"b\""));
  EXPECT_THAT(text, HasSubstr("\"scalar\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\""));
}

// 16-bit floats and 8-bit integers load as those dtypes (they were widened to
// float32 and int32 while xdev lacked them); I16, which xdev lacks, is held
// in int32 and remembered. Written back, every byte is the input's.
TEST_F(Safetensors, HalfAndByteDtypesKeepTheirDtypeAndAreWrittenBackBitForBit) {
  // F16: 1, -2, 65504 (max), 2^-24 (smallest subnormal), inf, NaN;
  // BF16: 1, -3.5, 1e38-ish, -0.
  const uint16_t f16[] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x7e01};
  const uint16_t bf16[] = {0x3f80, 0xc060, 0x7e96, 0x8000};
  const uint8_t u8[] = {0, 200, 255};
  const int16_t i16[] = {-32768, 5};
  std::string data(reinterpret_cast<const char*>(f16), sizeof f16);
  data.append(reinterpret_cast<const char*>(bf16), sizeof bf16);
  data.append(reinterpret_cast<const char*>(i16), sizeof i16);
  data.append(reinterpret_cast<const char*>(u8), sizeof u8);
  std::string header =
      R"({"h":{"dtype":"F16","shape":[6],"data_offsets":[0,12]},)"
      R"("b":{"dtype":"BF16","shape":[2,2],"data_offsets":[12,20]},)"
      R"("s":{"dtype":"I16","shape":[2],"data_offsets":[20,24]},)"
      R"("u":{"dtype":"U8","shape":[3],"data_offsets":[24,27]}})";
  const std::string in = write_raw("half.safetensors", header, data);
  xdev::SafetensorsFile file = xdev::load_file(in);
  EXPECT_EQ(file.dtypes, (std::map<std::string, std::string>{{"s", "I16"}}));
  EXPECT_EQ(file.tensors.at("h").dtype(), xdev::DType::kFloat16);
  EXPECT_EQ(file.tensors.at("b").dtype(), xdev::DType::kBFloat16);
  EXPECT_EQ(file.tensors.at("u").dtype(), xdev::DType::kUInt8);
  EXPECT_EQ(file.tensors.at("s").dtype(), xdev::DType::kInt32);
  const xdev::HostTensor h_host = file.tensors.at("h").to_host();
  ASSERT_EQ(h_host.byte_size(), sizeof f16);
  EXPECT_EQ(std::memcmp(h_host.bytes(), f16, sizeof f16), 0);  // NaN payload included
  std::vector<float> h = xdev::cast(file.tensors.at("h"), xdev::DType::kFloat32).to_vector<float>();
  EXPECT_EQ(h[0], 1.f);
  EXPECT_EQ(h[1], -2.f);
  EXPECT_EQ(h[2], 65504.f);
  EXPECT_EQ(h[3], std::ldexp(1.f, -24));
  EXPECT_TRUE(std::isinf(h[4]));
  EXPECT_TRUE(std::isnan(h[5]));
  const xdev::HostTensor b_host = file.tensors.at("b").to_host();
  ASSERT_EQ(b_host.byte_size(), sizeof bf16);
  EXPECT_EQ(std::memcmp(b_host.bytes(), bf16, sizeof bf16), 0);
  std::vector<float> b = xdev::cast(file.tensors.at("b"), xdev::DType::kFloat32).to_vector<float>();
  EXPECT_EQ(b[1], -3.5f);
  EXPECT_TRUE(std::signbit(b[3]));
  EXPECT_EQ(file.tensors.at("s").to_vector<int32_t>(), (std::vector<int32_t>{-32768, 5}));
  EXPECT_EQ(file.tensors.at("u").to_vector<uint8_t>(), (std::vector<uint8_t>{0, 200, 255}));
  // An I8 file tensor is an int8 tensor.
  const int8_t i8[] = {-128, 0, 127};
  const std::string i8_file = write_raw(
      "i8.safetensors", R"({"q":{"dtype":"I8","shape":[3],"data_offsets":[0,3]}})",
      std::string(reinterpret_cast<const char*>(i8), sizeof i8));
  xdev::SafetensorsFile q = xdev::load_file(i8_file);
  EXPECT_EQ(q.tensors.at("q").dtype(), xdev::DType::kInt8);
  EXPECT_EQ(q.tensors.at("q").to_vector<int8_t>(), (std::vector<int8_t>{-128, 0, 127}));
  EXPECT_TRUE(q.dtypes.empty());

  xdev::save_file(file, path("again.safetensors"));
  xdev::SafetensorsFile again = xdev::load_file(path("again.safetensors"));
  EXPECT_EQ(again.dtypes, file.dtypes);
  // Same tensor bytes as the input file (the writer orders entries itself, so
  // compare the data of each entry).
  const std::string out = read(path("again.safetensors"));
  uint64_t n = 0;
  std::memcpy(&n, out.data(), 8);
  const std::string out_data = out.substr(8 + n);
  EXPECT_EQ(out_data.size(), data.size());
  auto bytes_of = [](const void* p, size_t size) { return std::string(static_cast<const char*>(p), size); };
  EXPECT_NE(out_data.find(bytes_of(f16, sizeof f16)), std::string::npos);
  EXPECT_NE(out_data.find(bytes_of(bf16, sizeof bf16)), std::string::npos);
  EXPECT_NE(out_data.find(bytes_of(i16, sizeof i16)), std::string::npos);
  EXPECT_NE(out_data.find(bytes_of(u8, sizeof u8)), std::string::npos);
}

// Each narrow integer file dtype takes both ends of its range and refuses
// the integer just past each (U64: up to int64's maximum, what xdev holds).
TEST_F(Safetensors, NarrowIntegersKeepTheEndsOfTheirRanges) {
  struct Range {
    const char* dtype;
    int64_t lo, hi;
  };
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  for (const Range& r : {Range{"U8", 0, 255}, Range{"I8", -128, 127}, Range{"U16", 0, 65535},
                         Range{"I16", -32768, 32767}, Range{"U32", 0, 4294967295LL},
                         Range{"U64", 0, kMax}}) {
    SCOPED_TRACE(r.dtype);
    const std::string file = path(std::string(r.dtype) + ".safetensors");
    const std::vector<int64_t> ends = {r.lo, r.hi};
    xdev::save_file({{"x", xdev::constant(ends, {2})}}, file, {}, {{"x", r.dtype}});
    xdev::SafetensorsFile back = xdev::load_file(file);
    const xdev::Tensor& x = back.tensors.at("x");
    // U8 and I8 come back as uint8 and int8; the others, which xdev lacks,
    // held wider with their file dtype remembered.
    const std::string_view name = r.dtype;
    if (name == "U8" || name == "I8") {
      EXPECT_EQ(back.dtypes.count("x"), 0u);
      EXPECT_EQ(x.dtype(), name == "U8" ? xdev::DType::kUInt8 : xdev::DType::kInt8);
    } else {
      EXPECT_EQ(back.dtypes.at("x"), r.dtype);
    }
    EXPECT_EQ(xdev::cast(x, xdev::DType::kInt64).to_vector<int64_t>(), ends);
    const std::string range =
        std::string(r.dtype) + " (" + std::to_string(r.lo) + ".." + std::to_string(r.hi) + ")";
    std::vector<int64_t> past = {r.lo - 1};
    if (r.hi < kMax) past.push_back(r.hi + 1);
    for (int64_t v : past) {
      EXPECT_THAT([&] {
        xdev::save_file({{"x", xdev::constant(std::vector<int64_t>{v}, {1})}},
                        path("past.safetensors"), {}, {{"x", r.dtype}});
      }, ThrowsError(xdev::ErrorCode::kInvalidArgument,
                     HasSubstr("holds " + std::to_string(v) + ", outside the range of " + range)));
    }
  }
}

TEST_F(Safetensors, NarrowIntegersOutOfRangeAreRefused) {
  try {
    xdev::save_file({{"x", xdev::constant({1, 300})}}, path("x.safetensors"), {}, {{"x", "U8"}});
    FAIL() << "300 was written as U8";
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("tensor \"x\" holds 300, outside the range of U8 (0..255)"));
  }
  EXPECT_FALSE(fs::exists(path("x.safetensors")));
  EXPECT_THROW(xdev::save_file({{"x", xdev::constant({1.5})}}, path("x.safetensors"), {},
                               {{"x", "F16"}}),  // float64 -> F16 is not offered
               xdev::Error);
  EXPECT_THROW(xdev::save_file({{"x", xdev::constant({1.f})}}, path("x.safetensors"), {},
                               {{"y", "F16"}}),  // names no tensor
               xdev::Error);
}

TEST_F(Safetensors, MalformedFilesAreRefusedWithTheReason) {
  auto [code, what] = load_error(path("missing.safetensors"));
  EXPECT_EQ(code, xdev::ErrorCode::kNotFound);
  EXPECT_THAT(what, HasSubstr("cannot open"));

  std::tie(code, what) = load_error(write_raw("big.safetensors", "{}", "", uint64_t{1} << 40));
  EXPECT_EQ(code, xdev::ErrorCode::kInvalidArgument);
  EXPECT_THAT(what, HasSubstr("the header claims 1099511627776 bytes"));

  std::tie(code, what) = load_error(write_raw("json.safetensors", "{nope", ""));
  EXPECT_THAT(what, HasSubstr("the header is not valid JSON"));

  std::tie(code, what) = load_error(write_raw(
      "offsets.safetensors", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
      std::string(8, '\0')));
  EXPECT_THAT(what, HasSubstr("tensor \"w\" has data_offsets [0, 16], but its 4 F32 elements need "
                              "16 bytes inside the 8 bytes of data"));

  std::tie(code, what) = load_error(write_raw(
      "overflow.safetensors",
      R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""));
  EXPECT_THAT(what, HasSubstr("its element count overflows"));

  std::tie(code, what) = load_error(write_raw(
      "dtype.safetensors", R"({"w":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})",
      std::string(1, '\0')));
  EXPECT_EQ(code, xdev::ErrorCode::kUnimplemented);
  EXPECT_THAT(what, HasSubstr("has dtype F8_E4M3, which xdev cannot hold"));

  std::ofstream(path("short.safetensors"), std::ios::binary) << "abc";
  std::tie(code, what) = load_error(path("short.safetensors"));
  EXPECT_EQ(code, xdev::ErrorCode::kInvalidArgument);
  EXPECT_THAT(what, HasSubstr("it has 3 bytes, fewer than the 8 of the header size"));
}

// As strictly as the safetensors package: the tensors cover the data exactly,
// in offset order, with no overlap, no gap and no trailing bytes.
TEST_F(Safetensors, OverlapsGapsAndTrailingBytesAreRefused) {
  const std::string two = std::string(16, '\0');
  auto [code, what] = load_error(write_raw(
      "overlap.safetensors",
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      two));
  EXPECT_EQ(code, xdev::ErrorCode::kInvalidArgument);
  EXPECT_THAT(what, HasSubstr("tensor \"b\" starts at data byte 4, but tensor \"a\" ends at 8: "
                              "their bytes overlap"));
  std::tie(code, what) = load_error(write_raw(
      "gap.safetensors",
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
      two));
  EXPECT_THAT(what, HasSubstr("tensor \"b\" starts at data byte 12, but tensor \"a\" ends at 8: "
                              "a gap of bytes no tensor holds"));
  std::tie(code, what) = load_error(write_raw(
      "trailing.safetensors", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", two));
  EXPECT_THAT(what, HasSubstr("its data has 16 bytes, but the tensors hold 8: 8 trailing bytes"));
  // Out of order in the header but contiguous by offset, and empty tensors: accepted.
  const std::string ok = write_raw(
      "ok.safetensors",
      R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
      R"("e":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      two);
  EXPECT_EQ(xdev::load_file(ok).tensors.size(), 3u);
}

// Every float16 value survives float16 -> float32 -> float16 unchanged, and
// the float32 value is the exact one.
TEST(HalfConversions, Float16RoundTripsEveryValue) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float f = xdev::half_to_float(h);
    ASSERT_EQ(xdev::float_to_half(f), h) << std::hex << bits;
    const uint32_t exp = (bits >> 10) & 0x1f, mant = bits & 0x3ff;
    if (exp != 0 && exp != 31) {
      const float expected = std::ldexp(1.f + static_cast<float>(mant) / 1024.f, static_cast<int>(exp) - 15);
      ASSERT_EQ(std::fabs(f), expected) << std::hex << bits;
    }
  }
}

TEST(HalfConversions, Float32ToFloat16RoundsToNearestEven) {
  using xdev::float_to_half;
  EXPECT_EQ(float_to_half(1.f + std::ldexp(1.f, -11)), 0x3c00);   // tie, to even (down)
  EXPECT_EQ(float_to_half(1.f + 3 * std::ldexp(1.f, -11)), 0x3c02);  // tie, to even (up)
  EXPECT_EQ(float_to_half(65519.f), 0x7bff);                       // below the tie: max
  EXPECT_EQ(float_to_half(65520.f), 0x7c00);                       // the tie: inf
  EXPECT_EQ(float_to_half(std::ldexp(1.f, -25)), 0x0000);          // tie to even: 0
  EXPECT_EQ(float_to_half(std::ldexp(3.f, -25)), 0x0002);          // tie to even: 2
  EXPECT_EQ(float_to_half(-0.f), 0x8000);
  EXPECT_EQ(float_to_half(1e-30f), 0x0000);
  EXPECT_EQ(float_to_half(std::ldexp(1023.f, -24)), 0x03ff);       // largest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(2047.f, -25)), 0x0400);       // rounds up to the smallest normal
  EXPECT_EQ(float_to_half(1e10f), 0x7c00);
  EXPECT_EQ(float_to_half(std::bit_cast<float>(0x7f800001u)) & 0x7c00, 0x7c00);  // NaN stays NaN
  EXPECT_NE(float_to_half(std::bit_cast<float>(0x7f800001u)) & 0x3ff, 0);
}

TEST(HalfConversions, Bfloat16RoundTripsAndRoundsToNearestEven) {
  using xdev::bfloat16_to_float;
  using xdev::float_to_bfloat16;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    ASSERT_EQ(float_to_bfloat16(bfloat16_to_float(static_cast<uint16_t>(bits))), bits) << std::hex << bits;
  }
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even: down
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, even: up
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x7f7fffffu)), 0x7f80);  // rounds to inf
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x7f800001u)) & 0x7f, 0x40);  // NaN stays NaN
}

// From double and int64 the rounding is one rounding of the exact value:
// a plain cast to float first would round 1 + 2^-11 + 2^-40 to the tie
// 1 + 2^-11 and then to even (down); the exact value is above the tie.
TEST(HalfConversions, DoubleAndInt64RoundOnce) {
  EXPECT_EQ(xdev::double_to_half(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
  EXPECT_EQ(xdev::double_to_half(1.0 + std::ldexp(1.0, -11)), 0x3c00);  // the tie itself: even
  EXPECT_EQ(xdev::double_to_half(-65520.0), 0xfc00);
  EXPECT_EQ(xdev::double_to_half(65519.999), 0x7bff);
  EXPECT_EQ(xdev::double_to_half(1e300), 0x7c00);
  EXPECT_EQ(xdev::double_to_half(std::ldexp(1.0, -25) + std::ldexp(1.0, -60)), 0x0001);
  EXPECT_EQ(xdev::double_to_bfloat16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)), 0x3f81);
  EXPECT_EQ(xdev::double_to_bfloat16(1e-300), 0x0000);
  EXPECT_EQ(xdev::double_to_bfloat16(-1e300), 0xff80);
  EXPECT_TRUE(std::isnan(xdev::bfloat16_to_float(xdev::double_to_bfloat16(std::nan("")))));
  // 2^24 + 2^16 + 1: through float (2^24 + 2^16, a tie) it would round down.
  const int64_t above_tie = (int64_t{1} << 24) + (int64_t{1} << 16) + 1;
  EXPECT_EQ(xdev::bfloat16(above_tie).bits, 0x4b81);
  EXPECT_EQ(xdev::bfloat16(-above_tie).bits, 0xcb81);
  EXPECT_EQ(xdev::float16(int64_t{1} << 62).bits, 0x7c00);
  EXPECT_EQ(static_cast<float>(xdev::float16(0.1)), xdev::half_to_float(0x2e66));
  EXPECT_EQ(xdev::bfloat16(int64_t{-3}).bits, 0xc040);
}

}  // namespace
