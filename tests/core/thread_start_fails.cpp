// MirroredStrategy::run when the system gives no thread for a replica
// (pthread_create fails, fail_pthread_create.c preloaded): an xdev::Error that
// names the replica, the replicas already started finish, and the next run
// works; not std::terminate.
#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

int main() {
  using Arm = void (*)(int);
  auto arm = reinterpret_cast<Arm>(dlsym(RTLD_DEFAULT, "xdev_test_fail_pthread_create_after"));
  if (arm == nullptr) {
    std::puts("FAIL: fail_pthread_create.so is not preloaded (LD_PRELOAD)");
    return 1;
  }
  xdev::set_logical_device_configuration(xdev::list_physical_devices("CPU").at(0), {{}, {}});
  xdev::MirroredStrategy strategy(std::vector<std::string>{"/CPU:0", "/CPU:1"});
  int calls = 0;
  auto step = [&](const xdev::ReplicaContext&) {
    ++calls;  // no op: the step starts no thread of its own
    return std::vector<xdev::Tensor>{};
  };
  strategy.run(step);
  arm(1);  // replica 0's thread starts, replica 1's does not
  try {
    strategy.run(step);
    std::puts("FAIL: run succeeded without a thread for replica 1");
    return 1;
  } catch (const xdev::Error& e) {
    const std::string m = e.what();
    std::printf("error: %s\n", m.c_str());
    if (e.code() != xdev::ErrorCode::kUnavailable ||
        m.find("cannot start the thread of replica 1 on "
               "/job:localhost/replica:0/task:0/device:CPU:1") == std::string::npos) {
      std::puts("FAIL: not the error expected");
      return 1;
    }
  }
  arm(-1);
  strategy.run(step);
  if (calls != 5) {  // 2, then replica 0's alone, then 2
    std::printf("FAIL: the step ran %d times, expected 5\n", calls);
    return 1;
  }
  std::puts("ok");
  return 0;
}
