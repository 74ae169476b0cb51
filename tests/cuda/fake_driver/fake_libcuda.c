/* A stand-in for the NVIDIA driver library (libcuda.so.1) with only what the
 * cuda plugin's shim asks before it loads anything else: cuInit,
 * cuDriverGetVersion, cuDeviceGetCount, cuGetErrorName/String. The tests of
 * the shim put it first on LD_LIBRARY_PATH to play a machine with a driver
 * of a chosen version, a chosen number of devices or a failing cuInit:
 *
 *   FAKE_CUDA_VERSION     what cuDriverGetVersion says (default 13000)
 *   FAKE_CUDA_DEVICES     what cuDeviceGetCount says (default 1)
 *   FAKE_CUDA_INIT_ERROR  what cuInit returns (default 0, success)
 *
 * The CUDA runtime cannot work on it (it lacks the rest of the driver API):
 * the implementation then reports why it sees no device, which is what the
 * tests check, besides which libraries were loaded. */
#include <stdlib.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

static int env_int(const char* name, int fallback) {
  const char* text = getenv(name);
  return text != NULL && *text != '\0' ? atoi(text) : fallback;
}

FAKE_EXPORT int cuInit(unsigned int flags) {
  (void)flags;
  return env_int("FAKE_CUDA_INIT_ERROR", 0);
}

FAKE_EXPORT int cuDriverGetVersion(int* version) {
  if (version == NULL) return 1;
  *version = env_int("FAKE_CUDA_VERSION", 13000);
  return 0;
}

FAKE_EXPORT int cuDeviceGetCount(int* count) {
  if (count == NULL) return 1;
  *count = env_int("FAKE_CUDA_DEVICES", 1);
  return 0;
}

FAKE_EXPORT int cuGetErrorName(int error, const char** name) {
  if (name == NULL) return 1;
  *name = error == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_FAKE";
  return 0;
}

FAKE_EXPORT int cuGetErrorString(int error, const char** text) {
  if (text == NULL) return 1;
  *text = error == 100 ? "no CUDA-capable device is detected" : "a fake driver error";
  return 0;
}
