// Programs: compiled on first use per device, kept in memory, and cached on
// disk (cache.hpp); and the names of OpenCL errors.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common.hpp"

namespace xdev::opencl {

std::string cl_error_name(cl_int code) {
  switch (code) {
#define XDEV_CL_ERROR(name) \
  case name: return #name;
    XDEV_CL_ERROR(CL_DEVICE_NOT_FOUND)
    XDEV_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    XDEV_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    XDEV_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    XDEV_CL_ERROR(CL_OUT_OF_RESOURCES)
    XDEV_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    XDEV_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    XDEV_CL_ERROR(CL_MEM_COPY_OVERLAP)
    XDEV_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    XDEV_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    XDEV_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    XDEV_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    XDEV_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    XDEV_CL_ERROR(CL_INVALID_VALUE)
    XDEV_CL_ERROR(CL_INVALID_DEVICE)
    XDEV_CL_ERROR(CL_INVALID_CONTEXT)
    XDEV_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    XDEV_CL_ERROR(CL_INVALID_MEM_OBJECT)
    XDEV_CL_ERROR(CL_INVALID_BINARY)
    XDEV_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    XDEV_CL_ERROR(CL_INVALID_PROGRAM)
    XDEV_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    XDEV_CL_ERROR(CL_INVALID_KERNEL_NAME)
    XDEV_CL_ERROR(CL_INVALID_KERNEL)
    XDEV_CL_ERROR(CL_INVALID_ARG_INDEX)
    XDEV_CL_ERROR(CL_INVALID_ARG_VALUE)
    XDEV_CL_ERROR(CL_INVALID_ARG_SIZE)
    XDEV_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    XDEV_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    XDEV_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    XDEV_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    XDEV_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    XDEV_CL_ERROR(CL_INVALID_EVENT)
    XDEV_CL_ERROR(CL_INVALID_OPERATION)
    XDEV_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    XDEV_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
#undef XDEV_CL_ERROR
    default: return "OpenCL error " + std::to_string(code);
  }
}

xdev_status_code_t status_code_for(cl_int code) {
  switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY: return XDEV_STATUS_OUT_OF_MEMORY;
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_DEVICE_NOT_FOUND: return XDEV_STATUS_UNAVAILABLE;
    default: return XDEV_STATUS_INTERNAL;
  }
}

namespace {

// The options every program is built with: OpenCL C 1.2, then whatever
// XDEV_OPENCL_BUILD_OPTIONS adds (read once; part of the cache key, so
// programs built with other options are never taken from the cache).
const char* build_options() {
  static const std::string options = [] {
    std::string text = "-cl-std=CL1.2";
    const char* extra = std::getenv("XDEV_OPENCL_BUILD_OPTIONS");
    if (extra != nullptr && extra[0] != '\0') text += std::string(" ") + extra;
    return text;
  }();
  return options.c_str();
}

std::string build_log(const DeviceInfo& info, cl_program program) {
  size_t size = 0;
  clGetProgramBuildInfo(program, info.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size != 0) {
    clGetProgramBuildInfo(program, info.id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// The device's binary of a built program (empty when it has none).
std::vector<unsigned char> program_binary(const xdev_device_t* d, cl_program program) {
  cl_uint count = 0;
  clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof count, &count, nullptr);
  std::vector<cl_device_id> devices(count);
  std::vector<size_t> sizes(count);
  clGetProgramInfo(program, CL_PROGRAM_DEVICES, count * sizeof(cl_device_id), devices.data(),
                   nullptr);
  clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, count * sizeof(size_t), sizes.data(),
                   nullptr);
  std::vector<std::vector<unsigned char>> binaries(count);
  std::vector<unsigned char*> pointers(count);
  for (cl_uint i = 0; i < count; ++i) {
    binaries[i].resize(sizes[i]);
    pointers[i] = sizes[i] ? binaries[i].data() : nullptr;
  }
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, count * sizeof(unsigned char*),
                       pointers.data(), nullptr) != CL_SUCCESS) {
    return {};
  }
  for (cl_uint i = 0; i < count; ++i) {
    if (devices[i] == d->info->id) return std::move(binaries[i]);
  }
  return {};
}

// A program from a cached binary; NULL (and `why`) when the driver refuses it.
cl_program from_binary(xdev_device_t* d, const std::vector<unsigned char>& binary,
                       std::string* why) {
  const unsigned char* bytes = binary.data();
  const size_t size = binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithBinary(d->context, 1, &d->info->id, &size, &bytes,
                                                 &binary_status, &err);
  if (err == CL_SUCCESS && binary_status == CL_SUCCESS) {
    err = clBuildProgram(program, 1, &d->info->id, build_options(), nullptr, nullptr);
    if (err == CL_SUCCESS) return program;
  }
  *why = "the driver refused the cached binary: " +
         cl_error_name(err != CL_SUCCESS ? err : binary_status);
  if (program != nullptr) clReleaseProgram(program);
  return nullptr;
}

}  // namespace

xdev_status_t* get_program(xdev_device_t* d, const std::string& source, cl_program* out) {
  std::lock_guard lock(d->program_mutex);
  if (auto it = d->programs.find(source); it != d->programs.end()) {
    *out = it->second;
    return nullptr;
  }
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, fnv1a64(source));
  const std::string key = d->info->cache_key + "|" + build_options() + "|" + hash + "|" +
                          std::to_string(source.size());
  const ProgramCache& cache = *d->plugin->cache;
  cl_program program = nullptr;
  ProgramCache::Loaded cached = cache.load(key);
  std::string why;
  if (cached.found == ProgramCache::Found::kHit) {
    program = from_binary(d, cached.payload, &why);
  } else if (cached.found == ProgramCache::Found::kCorrupt) {
    why = cached.why;
  }
  if (!why.empty()) {
    g_host.log(d->host, XDEV_LOG_WARNING,
               "opencl plugin: device %u (%s): kernel cache entry %s is corrupt (%s); "
               "rebuilding it", d->ordinal, d->info->name.c_str(), cache.path_for(key).c_str(),
               why.c_str());
  }
  if (program == nullptr) {
    const char* text = source.c_str();
    const size_t length = source.size();
    cl_int err = CL_SUCCESS;
    program = clCreateProgramWithSource(d->context, 1, &text, &length, &err);
    if (err != CL_SUCCESS) return cl_failure(d->host, d, "clCreateProgramWithSource", err);
    err = clBuildProgram(program, 1, &d->info->id, build_options(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      const std::string log = build_log(*d->info, program);
      clReleaseProgram(program);
      return g_host.fail(d->host, XDEV_STATUS_INTERNAL,
                         "opencl plugin: device %u (%s): clBuildProgram failed: %s (build "
                         "options \"%s\"); build log:\n%s", d->ordinal, d->info->name.c_str(),
                         cl_error_name(err).c_str(), build_options(), log.c_str());
    }
    const std::string stored = cache.store(key, program_binary(d, program));
    if (!stored.empty()) {
      g_host.log(d->host, XDEV_LOG_WARNING, "opencl plugin: kernel cache: %s", stored.c_str());
    }
  }
  d->programs.emplace(source, program);
  *out = program;
  return nullptr;
}

}  // namespace xdev::opencl
