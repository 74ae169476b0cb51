// Reading a fuzzer's bytes as a sequence of choices (tests/fuzz). Past the
// end every read returns zero, so any input decodes to something.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

namespace xdev_fuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  bool flag() { return (byte() & 1) != 0; }
  // A value in [0, n) (n > 0).
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(u16() % n); }
  uint16_t u16() { return static_cast<uint16_t>(byte() | (byte() << 8)); }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return v;
  }
  // Up to `max` bytes as text (stops at a 0 byte, which it consumes).
  std::string text(size_t max) {
    std::string out;
    while (out.size() < max && !empty()) {
      const char c = static_cast<char>(byte());
      if (c == '\0') break;
      out += c;
    }
    return out;
  }
  // Whatever is left, as text (NUL bytes dropped: C strings end there).
  std::string rest() {
    std::string out;
    while (!empty()) {
      const char c = static_cast<char>(byte());
      if (c != '\0') out += c;
    }
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// Sets an environment variable for one scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// A property the target checks failed: report it and crash (libFuzzer keeps
// the input).
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what.c_str());
  std::abort();
}

}  // namespace xdev_fuzz
