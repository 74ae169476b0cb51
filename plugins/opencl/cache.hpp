// The on-disk cache of compiled OpenCL programs (README.md, "Kernel cache").
// Plain files, no OpenCL: the format and its checks are unit-tested on their
// own (tests/opencl/test_opencl_cache.cpp).
//
// One file per program, named by the key's 64-bit hash. A file is
//   "XDEVCLB1" (8 bytes) | key length (u64) | payload length (u64) |
//   FNV-1a 64 of key and payload (u64) | key bytes | payload bytes
// (little-endian as the host writes it). The key is the whole text the hash
// was made of (device name, driver version, build options, source hash), so
// two keys with one hash never mix. A file that is short, long, has another
// magic or key, or whose checksum does not match is "corrupt": load() says
// so, and the caller rebuilds the program and stores it again. Files are
// written to a temporary name and renamed, so a reader never sees half a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xdev::opencl {

// FNV-1a, 64 bits, continuing from `seed`.
uint64_t fnv1a64(std::string_view bytes, uint64_t seed = 0xcbf29ce484222325ULL) noexcept;

class ProgramCache {
 public:
  // What load() found.
  enum class Found { kHit, kMissing, kCorrupt };
  struct Loaded {
    Found found = Found::kMissing;
    std::vector<unsigned char> payload;  // kHit only
    std::string why;                     // kCorrupt: what was wrong
  };

  // `directory` "" disables the cache (load() misses, store() does nothing).
  explicit ProgramCache(std::string directory) : directory_(std::move(directory)) {}

  // The directory from the environment: $XDEV_OPENCL_CACHE_DIR ("" or "off"
  // disables it), else $XDG_CACHE_HOME/xdev/opencl, else
  // $HOME/.cache/xdev/opencl, else disabled.
  static std::string directory_from_environment();

  const std::string& directory() const noexcept { return directory_; }
  // The file a key lives in ("" when disabled).
  std::string path_for(std::string_view key) const;

  Loaded load(std::string_view key) const;
  // "" when the file at `path` is a whole, uncorrupted entry (of any key),
  // else what is wrong with it.
  static std::string check_file(const std::string& path);
  // Writes the entry; returns "" or why it could not (the cache is an
  // optimisation: the caller logs and goes on).
  std::string store(std::string_view key, const std::vector<unsigned char>& payload) const;

 private:
  std::string directory_;
};

}  // namespace xdev::opencl
