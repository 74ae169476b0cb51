// safetensors files (<xdev/interop.hpp>): 8 bytes little-endian header size,
// a JSON header {"name": {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {...}}, then the data, offsets counted from its start.
// Reading trusts nothing in the file: every size is checked against the file
// (overflow-checked) before anything is allocated.
#include <xdev/interop.hpp>
#include <xdev/ops.hpp>
#include <xdev/placement.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <xdev/half.hpp>

namespace xdev {
namespace {

namespace fs = std::filesystem;
static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this code copies it as is");

// The safetensors reference implementation refuses larger headers too.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// A file dtype: its name, bytes per element, and the xdev dtype that holds it
// (its own where xdev has it; U16, I16, U32 and U64, which it has not, widened).
struct FileDType {
  const char* name;
  uint64_t size;
  DType holds;
};
constexpr FileDType kFileDTypes[] = {
    {"F32", 4, DType::kFloat32}, {"F64", 8, DType::kFloat64}, {"I32", 4, DType::kInt32},
    {"I64", 8, DType::kInt64},   {"BOOL", 1, DType::kBool},   {"F16", 2, DType::kFloat16},
    {"BF16", 2, DType::kBFloat16}, {"U8", 1, DType::kUInt8},  {"I8", 1, DType::kInt8},
    {"U16", 2, DType::kInt32},   {"I16", 2, DType::kInt32},   {"U32", 4, DType::kInt64},
    {"U64", 8, DType::kInt64},
};

const FileDType* find_file_dtype(std::string_view name) {
  for (const FileDType& d : kFileDTypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

// The file dtype an xdev dtype is written as by default.
const char* native_file_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "F32";
    case DType::kFloat64: return "F64";
    case DType::kInt32: return "I32";
    case DType::kInt64: return "I64";
    case DType::kBool: return "BOOL";
    case DType::kFloat16: return "F16";
    case DType::kBFloat16: return "BF16";
    case DType::kUInt8: return "U8";
    case DType::kInt8: return "I8";
  }
  return "?";
}

[[noreturn]] void bad_file(const std::string& path, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "load_file: \"" + path + "\": " + why);
}

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Converts `n` elements of file dtype `from` into the dtype that holds it
// (the bytes as they are when that is the file dtype's own).
std::vector<std::byte> widen(const FileDType& from, const std::byte* src, uint64_t n,
                             const std::string& path, const std::string& name) {
  std::vector<std::byte> out(static_cast<size_t>(n) * itemsize(from.holds));
  const std::string_view f = from.name;
  auto put = [&](auto value, uint64_t i) { std::memcpy(out.data() + i * sizeof value, &value, sizeof value); };
  for (uint64_t i = 0; i < n; ++i) {
    const std::byte* p = src + i * from.size;
    if (f == "U16") put(static_cast<int32_t>(load<uint16_t>(p)), i);
    else if (f == "I16") put(static_cast<int32_t>(load<int16_t>(p)), i);
    else if (f == "U32") put(static_cast<int64_t>(load<uint32_t>(p)), i);
    else if (f == "U64") {
      const uint64_t v = load<uint64_t>(p);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        bad_file(path, "tensor \"" + name + "\" (U64) holds " + std::to_string(v) +
                           ", more than int64, xdev's widest integer, holds");
      }
      put(static_cast<int64_t>(v), i);
    } else if (f == "BOOL") {
      put(static_cast<uint8_t>(load<uint8_t>(p) != 0 ? 1 : 0), i);
    } else {  // the dtype is its own holder: the bytes as they are
      std::memcpy(out.data(), src, static_cast<size_t>(n * from.size));
      break;
    }
  }
  return out;
}

// Converts a tensor's host values into file dtype `to`; throws naming the
// tensor for an integer out of `to`'s range.
std::vector<std::byte> narrow(const HostTensor& host, const FileDType& to, const std::string& name) {
  const uint64_t n = static_cast<uint64_t>(host.num_elements());
  std::vector<std::byte> out(static_cast<size_t>(n * to.size));
  const std::string_view t = to.name;
  if (t == native_file_dtype(host.dtype())) {
    // A 0-element tensor may have no host bytes at all (memcpy forbids NULL).
    if (!out.empty()) std::memcpy(out.data(), host.bytes(), out.size());
    return out;
  }
  auto integer = [&](uint64_t i) -> int64_t {
    return host.dtype() == DType::kInt32 ? load<int32_t>(host.bytes() + i * 4)
                                         : load<int64_t>(host.bytes() + i * 8);
  };
  auto in_range = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) {
      throw Error(ErrorCode::kInvalidArgument,
                  "save_file: tensor \"" + name + "\" holds " + std::to_string(v) +
                      ", outside the range of " + to.name + " (" + std::to_string(lo) + ".." +
                      std::to_string(hi) + ")");
    }
    return v;
  };
  // Element i as the integer type of zero, checked against its range (U64's
  // ends at int64's maximum: no xdev dtype holds more).
  auto store_integer = [&](auto zero, uint64_t i, std::byte* p) {
    using T = decltype(zero);
    constexpr int64_t lo = std::numeric_limits<T>::min();
    constexpr int64_t hi = std::numeric_limits<T>::max() > std::numeric_limits<int64_t>::max()
                               ? std::numeric_limits<int64_t>::max()
                               : static_cast<int64_t>(std::numeric_limits<T>::max());
    const auto v = static_cast<T>(in_range(integer(i), lo, hi));
    std::memcpy(p, &v, sizeof v);
  };
  for (uint64_t i = 0; i < n; ++i) {
    std::byte* p = out.data() + i * to.size;
    if (t == "F16" || t == "BF16") {
      const float v = load<float>(host.bytes() + i * 4);
      const uint16_t bits = t == "F16" ? float_to_half(v) : float_to_bfloat16(v);
      std::memcpy(p, &bits, 2);
      continue;
    }
    if (t == "U8") store_integer(uint8_t{}, i, p);
    else if (t == "I8") store_integer(int8_t{}, i, p);
    else if (t == "U16") store_integer(uint16_t{}, i, p);
    else if (t == "I16") store_integer(int16_t{}, i, p);
    else if (t == "U32") store_integer(uint32_t{}, i, p);
    else if (t == "U64") store_integer(uint64_t{}, i, p);
  }
  return out;
}

// Whether a tensor of `dtype` may be written as file dtype `to`.
bool writable_as(DType dtype, const FileDType& to) {
  const std::string_view t = to.name;
  if (t == native_file_dtype(dtype)) return true;
  if (t == "F16" || t == "BF16") return dtype == DType::kFloat32;
  if (t == "U8" || t == "I8" || t == "U16" || t == "I16" || t == "U32" || t == "U64") {
    return dtype == DType::kInt32 || dtype == DType::kInt64;
  }
  return false;
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

SafetensorsFile load_file(const std::string& path, std::string_view device) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorCode::kNotFound, "load_file: cannot open \"" + path + "\": " + errno_text());
  }
  std::error_code ec;
  const uint64_t file_size = fs::file_size(path, ec);
  if (ec) bad_file(path, "cannot read its size: " + ec.message());
  if (file_size < 8) bad_file(path, "it has " + std::to_string(file_size) + " bytes, fewer than the 8 of the header size");
  unsigned char size_bytes[8];
  in.read(reinterpret_cast<char*>(size_bytes), 8);
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | size_bytes[i];
  if (header_size > kMaxHeaderBytes || header_size > file_size - 8) {
    bad_file(path, "the header claims " + std::to_string(header_size) + " bytes, but the file has " +
                       std::to_string(file_size - 8) + " after the size (at most " +
                       std::to_string(kMaxHeaderBytes) + " are accepted)");
  }
  std::string header_text(static_cast<size_t>(header_size), '\0');
  in.read(header_text.data(), static_cast<std::streamsize>(header_size));
  if (!in) bad_file(path, "cannot read the header: " + errno_text());
  const uint64_t data_start = 8 + header_size;
  const uint64_t data_size = file_size - data_start;

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_text);
  } catch (const nlohmann::json::exception& e) {
    bad_file(path, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) bad_file(path, "the header is not a JSON object");

  struct Entry {
    std::string name;
    const FileDType* dtype;
    Shape shape;
    uint64_t begin, end;
  };
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) bad_file(path, "\"__metadata__\" is not an object");
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) bad_file(path, "metadata \"" + key + "\" is not a string");
        file.metadata[key] = text.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor \"" + name + "\"";
    if (!value.is_object()) bad_file(path, where + " is not an object");
    const auto dtype = value.find("dtype");
    const auto shape = value.find("shape");
    const auto offsets = value.find("data_offsets");
    if (dtype == value.end() || !dtype->is_string()) bad_file(path, where + " has no \"dtype\" string");
    if (shape == value.end() || !shape->is_array()) bad_file(path, where + " has no \"shape\" list");
    if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
      bad_file(path, where + " has no \"data_offsets\" [begin, end]");
    }
    Entry e{name, find_file_dtype(dtype->get<std::string>()), {}, 0, 0};
    if (e.dtype == nullptr) {
      throw Error(ErrorCode::kUnimplemented,
                  "load_file: \"" + path + "\": " + where + " has dtype " +
                      dtype->get<std::string>() +
                      ", which xdev cannot hold (F32, F64, I32, I64, BOOL, F16, BF16, U8, I8, "
                      "U16, I16, U32, U64 can be loaded)");
    }
    if (shape->size() > static_cast<size_t>(kMaxRank)) {
      bad_file(path, where + " has rank " + std::to_string(shape->size()) + "; xdev tensors have at most " +
                         std::to_string(kMaxRank));
    }
    uint64_t elements = 1;
    for (const auto& d : *shape) {
      if (!d.is_number_unsigned()) bad_file(path, where + " has a dimension that is not a non-negative integer");
      const uint64_t dim = d.get<uint64_t>();
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(elements, dim, &elements)) {
        bad_file(path, where + ": its element count overflows");
      }
      e.shape.push_back(static_cast<int64_t>(dim));
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(elements, e.dtype->size, &bytes)) {
      bad_file(path, where + ": its byte size overflows");
    }
    e.begin = (*offsets)[0].get<uint64_t>();
    e.end = (*offsets)[1].get<uint64_t>();
    if (e.begin > e.end || e.end > data_size || e.end - e.begin != bytes) {
      bad_file(path, where + " has data_offsets [" + std::to_string(e.begin) + ", " +
                         std::to_string(e.end) + "], but its " + std::to_string(elements) + " " +
                         e.dtype->name + " elements need " + std::to_string(bytes) +
                         " bytes inside the " + std::to_string(data_size) + " bytes of data");
    }
    entries.push_back(std::move(e));
  }
  // As strictly as the safetensors package reads a file: in the order of
  // their offsets the tensors cover the data exactly, each starting where the
  // one before ends (no overlap, no gap) and the last ending at the file's end.
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  for (size_t i = 0; i < by_offset.size(); ++i) {
    const Entry& e = *by_offset[i];
    if (e.begin != covered) {
      bad_file(path, "tensor \"" + e.name + "\" starts at data byte " + std::to_string(e.begin) +
                         ", but " +
                         (i == 0 ? std::string("the data starts at 0")
                                 : "tensor \"" + by_offset[i - 1]->name + "\" ends at " +
                                       std::to_string(covered)) +
                         (e.begin < covered ? ": their bytes overlap" : ": a gap of bytes no tensor holds"));
    }
    covered = e.end;
  }
  if (covered != data_size) {
    bad_file(path, "its data has " + std::to_string(data_size) + " bytes, but the tensors hold " +
                       std::to_string(covered) + ": " + std::to_string(data_size - covered) +
                       " trailing bytes");
  }

  std::optional<DeviceScope> scope;
  if (!device.empty()) scope.emplace(device);
  std::vector<std::byte> buffer;
  for (const Entry& e : entries) {
    buffer.resize(static_cast<size_t>(e.end - e.begin));
    in.seekg(static_cast<std::streamoff>(data_start + e.begin));
    in.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(buffer.size()));
    if (!in) bad_file(path, "cannot read tensor \"" + e.name + "\": " + errno_text());
    const uint64_t n = static_cast<uint64_t>(e.shape.num_elements());
    std::vector<std::byte> values = widen(*e.dtype, buffer.data(), n, path, e.name);
    file.tensors.emplace(e.name, constant(values.data(), e.dtype->holds, e.shape));
    if (std::string_view(e.dtype->name) != native_file_dtype(e.dtype->holds)) {
      file.dtypes[e.name] = e.dtype->name;
    }
  }
  return file;
}

void save_file(const std::map<std::string, Tensor>& tensors, const std::string& path,
               const std::map<std::string, std::string>& metadata,
               const std::map<std::string, std::string>& dtypes) {
  for (const auto& [name, dtype] : dtypes) {
    if (tensors.count(name) == 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  "save_file: dtypes names \"" + name + "\", which is not among the tensors");
    }
  }
  struct Entry {
    std::string name;
    const FileDType* dtype;
    Shape shape;
    std::vector<std::byte> bytes;
  };
  std::vector<Entry> entries;
  for (const auto& [name, tensor] : tensors) {
    if (name.empty() || name == "__metadata__") {
      throw Error(ErrorCode::kInvalidArgument, "save_file: \"" + name + "\" is not a valid tensor name");
    }
    if (!tensor.defined()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "save_file: tensor \"" + name + "\" is empty (default-constructed)");
    }
    const auto named = dtypes.find(name);
    const std::string dtype_name =
        named != dtypes.end() ? named->second : native_file_dtype(tensor.dtype());
    const FileDType* file_dtype = find_file_dtype(dtype_name);
    if (file_dtype == nullptr || !writable_as(tensor.dtype(), *file_dtype)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "save_file: tensor \"" + name + "\" (" + std::string(to_string(tensor.dtype())) +
                      ") cannot be written as " + dtype_name +
                      " (float32 can be F16 or BF16; int32 and int64 can be U8, I8, U16, I16, "
                      "U32, U64)");
    }
    HostTensor host = tensor.to_host();
    entries.push_back({name, file_dtype, tensor.shape(), narrow(host, *file_dtype, name)});
  }
  // Widest elements first, then by name (as the safetensors package does):
  // every tensor's data starts aligned to its element size.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.dtype->size != b.dtype->size) return a.dtype->size > b.dtype->size;
    return a.name < b.name;
  });
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const Entry& e : entries) {
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["dtype"] = e.dtype->name;
    entry["shape"] = e.shape.to_vector();
    entry["data_offsets"] = {offset, offset + e.bytes.size()};
    header[e.name] = entry;
    offset += e.bytes.size();
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');  // data starts 8-aligned

  // Written beside the target, then renamed: `path` is never half written.
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error(fs::exists(fs::path(path).parent_path().empty() ? fs::path(".")
                                                                  : fs::path(path).parent_path())
                      ? ErrorCode::kUnavailable
                      : ErrorCode::kNotFound,
                  "save_file: cannot write \"" + path + "\": " + errno_text());
    }
    unsigned char size_bytes[8];
    uint64_t n = header_text.size();
    for (int i = 0; i < 8; ++i, n >>= 8) size_bytes[i] = static_cast<unsigned char>(n & 0xff);
    out.write(reinterpret_cast<const char*>(size_bytes), 8);
    out.write(header_text.data(), static_cast<std::streamsize>(header_text.size()));
    for (const Entry& e : entries) {
      out.write(reinterpret_cast<const char*>(e.bytes.data()), static_cast<std::streamsize>(e.bytes.size()));
    }
    out.flush();
    if (!out) {
      const std::string why = errno_text();
      out.close();
      std::remove(temp.c_str());
      throw Error(ErrorCode::kUnavailable, "save_file: cannot write \"" + path + "\": " + why);
    }
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    throw Error(ErrorCode::kUnavailable, "save_file: cannot write \"" + path + "\": " + ec.message());
  }
}

void save_file(const SafetensorsFile& file, const std::string& path) {
  save_file(file.tensors, path, file.metadata, file.dtypes);
}

}  // namespace xdev
