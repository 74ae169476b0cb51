// Which sanitizer a test program was built with. GCC says so with
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang 14 only through
// __has_feature. Tests that repeat work to prove something does not grow (a
// loop of steps, of ops) use kSanitized to repeat less in the sanitizer lanes,
// where each repetition costs 20-50x and the lane looks for memory and
// threading errors, not for growth the main build measures at full length.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define XDEV_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XDEV_TEST_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define XDEV_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define XDEV_TEST_TSAN 1
#endif
#endif

namespace xdev_test {

#if defined(XDEV_TEST_ASAN) || defined(XDEV_TEST_TSAN)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace xdev_test
