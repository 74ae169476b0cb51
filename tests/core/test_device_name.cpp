// Device name parsing and printing (docs/behaviour.md B3).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <xdev/device.hpp>
#include <xdev/error.hpp>

namespace xdev {
namespace {

struct Valid {
  const char* text;
  const char* type;  // nullptr: not set
  int id;            // -1: not set
  const char* printed;
};

class ValidName : public ::testing::TestWithParam<Valid> {};

TEST_P(ValidName, ParsesTypeIdAndPrintsCanonicalParts) {
  const Valid& v = GetParam();
  DeviceName name = DeviceName::parse(v.text);
  if (v.type != nullptr) {
    ASSERT_TRUE(name.type.has_value());
    EXPECT_EQ(*name.type, v.type);
  } else {
    EXPECT_FALSE(name.type.has_value());
  }
  if (v.id >= 0) {
    ASSERT_TRUE(name.id.has_value());
    EXPECT_EQ(*name.id, v.id);
  } else {
    EXPECT_FALSE(name.id.has_value());
  }
  EXPECT_EQ(name.to_string(), v.printed);
}

INSTANTIATE_TEST_SUITE_P(
    Spellings, ValidName,
    ::testing::Values(
        Valid{"/device:CPU:0", "CPU", 0, "/device:CPU:0"},
        Valid{"/CPU:0", "CPU", 0, "/device:CPU:0"},
        Valid{"CPU:0", "CPU", 0, "/device:CPU:0"},
        Valid{"/cpu:0", "CPU", 0, "/device:CPU:0"},
        Valid{"/GPU:1", "GPU", 1, "/device:GPU:1"},
        Valid{"/gpu:1", "GPU", 1, "/device:GPU:1"},
        Valid{"gPu:12", "GPU", 12, "/device:GPU:12"},
        Valid{"/device:GPU:1", "GPU", 1, "/device:GPU:1"},
        Valid{"/device:gpu:1", "GPU", 1, "/device:GPU:1"},
        Valid{"/job:localhost/replica:0/task:0/device:GPU:1", "GPU", 1,
              "/job:localhost/replica:0/task:0/device:GPU:1"},
        Valid{"/job:localhost/device:GPU:0", "GPU", 0, "/job:localhost/device:GPU:0"},
        Valid{"/job:localhost/replica:0/task:0/cpu:0", "CPU", 0,
              "/job:localhost/replica:0/task:0/device:CPU:0"},
        Valid{"/physical_device:GPU:0", "GPU", 0, "/device:GPU:0"},
        Valid{"GPU", "GPU", -1, "/device:GPU:*"},
        Valid{"/device:GPU:*", "GPU", -1, "/device:GPU:*"},
        Valid{"/device:my_npu2:3", "MY_NPU2", 3, "/device:MY_NPU2:3"},
        Valid{"/job:worker", nullptr, -1, "/job:worker"},
        Valid{"/task:3/replica:2", nullptr, -1, "/replica:2/task:3"}));

struct Invalid {
  const char* text;
  const char* message;  // the exact message
};

class InvalidName : public ::testing::TestWithParam<Invalid> {};

TEST_P(InvalidName, ThrowsInvalidArgumentNamingTheBadPart) {
  const Invalid& v = GetParam();
  try {
    DeviceName::parse(v.text);
    FAIL() << "parsed " << v.text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), v.message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Spellings, InvalidName,
    ::testing::Values(
        Invalid{"", "invalid device name \"\": the name is empty"},
        Invalid{"/", "invalid device name \"/\": the name has no parts after \"/\""},
        Invalid{"/gpu:x",
                "invalid device name \"/gpu:x\": device index \"x\" in \"gpu:x\" is not a "
                "non-negative integer"},
        Invalid{"/gpu:-1",
                "invalid device name \"/gpu:-1\": device index \"-1\" in \"gpu:-1\" is not a "
                "non-negative integer"},
        Invalid{"/device:GPU:1x",
                "invalid device name \"/device:GPU:1x\": device index \"1x\" in "
                "\"device:GPU:1x\" is not a non-negative integer"},
        Invalid{"/device:9PU:0",
                "invalid device name \"/device:9PU:0\": device type \"9PU\" in "
                "\"device:9PU:0\" is not a type name (letters, digits and '_', starting with "
                "a letter)"},
        Invalid{"/job:localhost/replcia:0/device:CPU:0",
                "invalid device name \"/job:localhost/replcia:0/device:CPU:0\": unknown part "
                "\"replcia:0\" (expected job:NAME, replica:N, task:N, device:TYPE:N or "
                "TYPE:N)"},
        Invalid{"/job:localhost//device:CPU:0",
                "invalid device name \"/job:localhost//device:CPU:0\": empty part between "
                "\"/\" separators"},
        Invalid{"/device:CPU:0/",
                "invalid device name \"/device:CPU:0/\": the name ends with \"/\""},
        Invalid{"/device:CPU:0/gpu:1",
                "invalid device name \"/device:CPU:0/gpu:1\": names two devices, \"device:CPU:0\" "
                "and \"gpu:1\""},
        Invalid{"/replica:a/device:CPU:0",
                "invalid device name \"/replica:a/device:CPU:0\": replica \"a\" in "
                "\"replica:a\" is not a non-negative integer"},
        Invalid{"/device:",
                "invalid device name \"/device:\": \"device:\" names no device type"},
        Invalid{"/job:a/job:b", "invalid device name \"/job:a/job:b\": \"job\" is given twice"},
        Invalid{"/gpu:0/job:a",
                "invalid device name \"/gpu:0/job:a\": unknown part \"gpu:0\" (expected "
                "job:NAME, replica:N, task:N, device:TYPE:N or TYPE:N)"},
        Invalid{"/job", "invalid device name \"/job\": \"job\" needs a value (e.g. job:0)"},
        Invalid{"/gpu:99999999999",
                "invalid device name \"/gpu:99999999999\": device index \"99999999999\" in "
                "\"gpu:99999999999\" is not a non-negative integer"}));

// A NUL or another control character in a name is shown, not where the
// message stops.
TEST(DeviceName, ControlCharactersInABadNameAreShownEscaped) {
  const std::string name("/gpu\0:1\n", 8);
  try {
    DeviceName::parse(name);
    FAIL() << "parsed a name with a NUL";
  } catch (const xdev::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\0'), std::string::npos);
    EXPECT_THAT(message, ::testing::StartsWith("invalid device name \"/gpu\\x00:1\\x0a\": "));
  }
}

TEST(DeviceName, PartialNamesMatchTheCanonicalDevice) {
  DeviceName full = DeviceName::parse(canonical_device_name("GPU", 1));
  EXPECT_TRUE(DeviceName::parse("/gpu:1").matches(full));
  EXPECT_TRUE(DeviceName::parse("GPU").matches(full));
  EXPECT_TRUE(DeviceName::parse("/job:localhost").matches(full));
  EXPECT_TRUE(DeviceName::parse("/job:localhost/replica:0/task:0/device:GPU:1").matches(full));
  EXPECT_FALSE(DeviceName::parse("/gpu:0").matches(full));
  EXPECT_FALSE(DeviceName::parse("/cpu:1").matches(full));
  EXPECT_FALSE(DeviceName::parse("/job:worker/gpu:1").matches(full));
}

TEST(DeviceName, CanonicalNameIsFullyQualified) {
  EXPECT_EQ(canonical_device_name("CPU", 0), "/job:localhost/replica:0/task:0/device:CPU:0");
  DeviceName round = DeviceName::parse(canonical_device_name("GPU", 7));
  EXPECT_EQ(round.to_string(), "/job:localhost/replica:0/task:0/device:GPU:7");
}

}  // namespace
}  // namespace xdev
