#include "cache.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <system_error>

namespace xdev::opencl {
namespace {

constexpr char kMagic[8] = {'X', 'D', 'E', 'V', 'C', 'L', 'B', '1'};
constexpr size_t kHeader = sizeof(kMagic) + 3 * sizeof(uint64_t);

uint64_t read_u64(const unsigned char* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void append_u64(std::string& out, uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
uint64_t checksum(std::string_view key, const unsigned char* payload, size_t size) noexcept {
  return fnv1a64(std::string_view(reinterpret_cast<const char*>(payload), size), fnv1a64(key));
}

}  // namespace

uint64_t fnv1a64(std::string_view bytes, uint64_t seed) noexcept {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string ProgramCache::directory_from_environment() {
  if (const char* dir = std::getenv("XDEV_OPENCL_CACHE_DIR")) {
    const std::string value = dir;
    return value == "off" ? std::string() : value;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/xdev/opencl";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return std::string(home) + "/.cache/xdev/opencl";
  }
  return {};
}

std::string ProgramCache::path_for(std::string_view key) const {
  if (directory_.empty()) return {};
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.clbin",
                static_cast<unsigned long long>(fnv1a64(key)));
  return directory_ + "/" + name;
}

namespace {

// Reads and checks the entry at `path`; `key` NULL accepts any key.
ProgramCache::Loaded read_entry(const std::string& path, const std::string_view* key) {
  ProgramCache::Loaded result;
  std::ifstream in(path, std::ios::binary);
  if (!in) return result;  // missing
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  result.found = ProgramCache::Found::kCorrupt;
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    result.why = "no cache header (" + std::to_string(bytes.size()) + " bytes)";
    return result;
  }
  const uint64_t key_size = read_u64(bytes.data() + 8);
  const uint64_t payload_size = read_u64(bytes.data() + 16);
  const uint64_t sum = read_u64(bytes.data() + 24);
  const uint64_t body = bytes.size() - kHeader;
  if (key_size > body || payload_size != body - key_size) {
    result.why = "truncated or padded: header says " + std::to_string(key_size) + " + " +
                 std::to_string(payload_size) + " bytes, the file has " + std::to_string(body);
    return result;
  }
  const std::string_view stored_key(reinterpret_cast<const char*>(bytes.data() + kHeader),
                                    key_size);
  if (key != nullptr && stored_key != *key) {
    result.why = "written for another key (a hash collision or a foreign file)";
    return result;
  }
  const unsigned char* payload = bytes.data() + kHeader + key_size;
  if (checksum(stored_key, payload, payload_size) != sum) {
    result.why = "checksum mismatch";
    return result;
  }
  result.found = ProgramCache::Found::kHit;
  result.payload.assign(payload, payload + payload_size);
  return result;
}

}  // namespace

ProgramCache::Loaded ProgramCache::load(std::string_view key) const {
  if (directory_.empty()) return {};
  return read_entry(path_for(key), &key);
}

std::string ProgramCache::check_file(const std::string& path) {
  const Loaded loaded = read_entry(path, nullptr);
  if (loaded.found == Found::kMissing) return "missing";
  return loaded.why;
}

std::string ProgramCache::store(std::string_view key,
                                const std::vector<unsigned char>& payload) const {
  if (directory_.empty()) return {};
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return "cannot create " + directory_ + ": " + ec.message();
  std::string header(kMagic, sizeof kMagic);
  append_u64(header, key.size());
  append_u64(header, payload.size());
  append_u64(header, checksum(key, payload.data(), payload.size()));
  const std::string path = path_for(key);
  std::random_device rd;
  const std::string temp = path + ".tmp" + std::to_string(rd());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(reinterpret_cast<const char*>(payload.data()),
              static_cast<std::streamsize>(payload.size()));
    if (!out.flush()) {
      std::filesystem::remove(temp, ec);
      return "cannot write " + temp;
    }
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    return "cannot rename " + temp + " to " + path;
  }
  return {};
}

}  // namespace xdev::opencl
