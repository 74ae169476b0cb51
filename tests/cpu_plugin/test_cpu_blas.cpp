// The cpu plugin's OpenBLAS: loaded at the first matrix product, not at
// discovery; its kernel set chosen from cpuid unless the user chose; one
// OpenBLAS thread unless the user chose (plugins/cpu/blas.hpp).
//
// What happens when a library loads can only be seen once per process, so
// every case runs the plugin in a fresh child process (this same program
// with --scenario) under an environment the test sets, and reads back what
// the child printed: "key=value" lines and "log:LEVEL:message" lines from
// the host table's log. The parent itself never loads the plugin or
// OpenBLAS.
#include <dirent.h>
#include <dlfcn.h>
#include <spawn.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <xdev/plugin.h>

#include "blas_coretype.hpp"
#include "plugin_harness.hpp"

extern char** environ;

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using xdev::cpu::choose_blas_coretype;
using xdev::cpu::X86Features;

// ===========================================================================
// The child: drives the plugin through its ABI and prints what it saw.

struct ChildStatus {
  xdev_status_code_t code;
  std::string message;
};

xdev_status_t* child_status_create(void*, xdev_status_code_t code, const char* message) {
  return reinterpret_cast<xdev_status_t*>(new ChildStatus{code, message ? message : ""});
}

const char* level_name(xdev_log_level_t level) {
  switch (level) {
    case XDEV_LOG_DEBUG:
      return "DEBUG";
    case XDEV_LOG_INFO:
      return "INFO";
    case XDEV_LOG_WARNING:
      return "WARNING";
    default:
      return "ERROR";
  }
}

void child_log(void*, xdev_log_level_t level, const char* message) {
  std::printf("log:%s:%s\n", level_name(level), message);
}

const xdev_host_api_t kChildHost = {
    .struct_size = XDEV_HOST_API_STRUCT_SIZE,
    .ext = nullptr,
    .abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
    .host_context = nullptr,
    .status_create = &child_status_create,
    .log = &child_log,
};

[[noreturn]] void child_fail(const std::string& what, xdev_status_t* status = nullptr) {
  std::string message = what;
  if (status != nullptr) {
    auto* s = reinterpret_cast<ChildStatus*>(status);
    message += ": " + s->message;
    delete s;
  }
  std::printf("error=%s\n", message.c_str());
  std::fflush(stdout);
  std::_Exit(3);
}

void child_check(xdev_status_t* status, const char* what) {
  if (status != nullptr) child_fail(what, status);
}

// Threads of this process (entries of /proc/self/task).
int thread_count() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

bool openblas_loaded() {
  void* handle = dlopen(XDEV_TEST_OPENBLAS_SONAME, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);  // only drops the reference NOLOAD took
  return true;
}

// A function of the OpenBLAS this process has loaded (NULL if none).
template <typename Fn>
Fn openblas_function(const char* symbol) {
  void* handle = dlopen(XDEV_TEST_OPENBLAS_SONAME, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  Fn fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  dlclose(handle);
  return fn;
}

const char* env_or_unset(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "(unset)";
}

// C = op(A) · op(B) through the plugin's MatMul kernel, checked against a
// long-double reference. Returns the largest error as a fraction of the
// bound every floating-point inner product of length k meets, whatever its
// summation order or use of FMA (Higham, Accuracy and Stability of Numerical
// Algorithms, 3.1): |ĉ - c| <= γ_k Σ|a||b|, γ_k = k·u / (1 - k·u). A result
// within bounds gives at most 1; a wrong one gives far more.
template <typename T>
double matmul_error(const xdev_plugin_api_t* api, xdev_device_t* device, xdev_stream_t* stream,
                    const xdev_kernel_info_t* kernel, int64_t m, int64_t n, int64_t k, bool ta,
                    bool tb, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<T> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)),
      c(static_cast<size_t>(m * n), T{-7});
  for (T& v : a) v = static_cast<T>(uniform(engine));
  for (T& v : b) v = static_cast<T>(uniform(engine));
  // Stored shapes: a is m×k (k×m when transposed), b is k×n (n×k).
  const xdev_dtype_t dtype = sizeof(T) == 4 ? XDEV_DTYPE_FLOAT32 : XDEV_DTYPE_FLOAT64;
  xdev_test::KernelCall call("MatMul", device, stream);
  call.input(a.data(), dtype, {ta ? k : m, ta ? m : k})
      .input(b.data(), dtype, {tb ? n : k, tb ? k : n})
      .output(c.data(), dtype, {m, n})
      .attr("transpose_a", ta)
      .attr("transpose_b", tb);
  child_check(kernel->fn(kernel->kernel_context, call.get()), "MatMul");
  child_check(api->stream_synchronize(stream), "stream_synchronize");
  auto at = [&](int64_t i, int64_t p) { return ta ? a[p * m + i] : a[i * k + p]; };
  auto bt = [&](int64_t p, int64_t j) { return tb ? b[j * k + p] : b[p * n + j]; };
  const long double u = sizeof(T) == 4 ? std::ldexp(1.0L, -24) : std::ldexp(1.0L, -53);
  const long double gamma = k * u / (1 - k * u);
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      long double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        sum += static_cast<long double>(at(i, p)) * bt(p, j);
        magnitude += std::fabs(static_cast<long double>(at(i, p)) * bt(p, j));
      }
      const double error = static_cast<double>(
          std::fabs(static_cast<long double>(c[i * n + j]) - sum) /
          std::max(gamma * magnitude, 1e-300L));
      worst = std::max(worst, std::isnan(error) ? INFINITY : error);
    }
  }
  return worst;
}

// The whole child: what --scenario does. `preload` loads OpenBLAS before the
// plugin, as a program that links it does.
int child_main(bool preload) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (preload) {
    if (dlopen(XDEV_TEST_OPENBLAS_SONAME, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      child_fail(std::string("preloading OpenBLAS: ") + dlerror());
    }
    auto corename = openblas_function<char* (*)()>("openblas_get_corename");
    std::printf("preloaded_corename=%s\n", corename != nullptr ? corename() : "?");
  }
  const char* path = std::getenv("XDEV_TEST_CPU_PLUGIN");
  if (path == nullptr) child_fail("XDEV_TEST_CPU_PLUGIN is not set");
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) child_fail(std::string("dlopen: ") + dlerror());
  auto query = reinterpret_cast<xdev_plugin_query_fn_t>(dlsym(library, XDEV_PLUGIN_ENTRY_SYMBOL));
  if (query == nullptr) child_fail("no entry symbol");
  xdev_plugin_query_args_t args{};
  args.struct_size = XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE;
  args.core_min_version = {XDEV_ABI_VERSION_MAJOR, 0};
  args.core_max_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  args.host = &kChildHost;
  child_check(query(&args), "xdev_plugin_query");
  const xdev_plugin_api_t* api = args.plugin_api;
  xdev_plugin_init_args_t init{};
  init.struct_size = XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE;
  init.host = &kChildHost;
  xdev_plugin_t* plugin = nullptr;
  child_check(api->initialize(&init, &plugin), "initialize");

  // Discovery: what the core does for every plugin at start-up.
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t type_count = 0, device_count = 0, kernel_count = 0;
  child_check(api->device_types(plugin, &types, &type_count), "device_types");
  child_check(api->device_count(plugin, &device_count), "device_count");
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  child_check(api->device_get_properties(plugin, 0, &props), "device_get_properties");
  for (uint32_t i = 0; i < props.property_count; ++i) {
    std::printf("property.%s=%s\n", props.properties[i].key, props.properties[i].value);
  }
  const xdev_kernel_info_t* const* kernels = nullptr;
  child_check(api->kernels(plugin, &kernels, &kernel_count), "kernels");
  const xdev_kernel_info_t* matmul = nullptr;
  for (uint32_t i = 0; i < kernel_count; ++i) {
    if (std::strcmp(kernels[i]->op, "MatMul") == 0) matmul = kernels[i];
  }
  if (matmul == nullptr) child_fail("no MatMul kernel");
  xdev_device_t* device = nullptr;
  xdev_stream_t* stream = nullptr;
  child_check(api->device_open(plugin, 0, &device), "device_open");
  child_check(api->stream_create(device, &stream), "stream_create");
  std::printf("loaded_after_discovery=%d\n", openblas_loaded() ? 1 : 0);

  // The first product that needs BLAS (64×64×64: one BLAS call in this
  // thread, no oneTBB task): OpenBLAS loads here.
  const int threads_before = thread_count();
  const double first = matmul_error<float>(api, device, stream, matmul, 64, 64, 64, false,
                                           false, 1);
  std::printf("loaded_after_first_product=%d\n", openblas_loaded() ? 1 : 0);
  std::printf("threads_added_by_first_product=%d\n", thread_count() - threads_before);
  auto corename = openblas_function<char* (*)()>("openblas_get_corename");
  auto num_threads = openblas_function<int (*)()>("openblas_get_num_threads");
  std::printf("corename=%s\n", corename != nullptr ? corename() : "?");
  std::printf("openblas_threads=%d\n", num_threads != nullptr ? num_threads() : -1);
  std::printf("env.OPENBLAS_CORETYPE=%s\n", env_or_unset("OPENBLAS_CORETYPE"));
  std::printf("env.OPENBLAS_NUM_THREADS=%s\n", env_or_unset("OPENBLAS_NUM_THREADS"));

  // GEMM against the reference: shapes on every path of the kernel (one
  // BLAS call, transposed operands, tiles over oneTBB), both dtypes.
  double worst_f32 = first, worst_f64 = 0;
  struct Case {
    int64_t m, n, k;
    bool ta, tb;
  };
  const Case cases[] = {{17, 33, 29, false, false}, {64, 48, 80, true, false},
                        {50, 70, 90, false, true},  {96, 96, 96, true, true},
                        {300, 260, 280, false, false}};
  uint64_t seed = 2;
  for (const Case& c : cases) {
    worst_f32 = std::max(worst_f32, matmul_error<float>(api, device, stream, matmul, c.m, c.n,
                                                        c.k, c.ta, c.tb, seed++));
    worst_f64 = std::max(worst_f64, matmul_error<double>(api, device, stream, matmul, c.m, c.n,
                                                         c.k, c.ta, c.tb, seed++));
  }
  std::printf("gemm_error_f32=%.3e\n", worst_f32);
  std::printf("gemm_error_f64=%.3e\n", worst_f64);

  api->stream_destroy(stream);
  api->device_close(device);
  api->shutdown(plugin);
  std::printf("done=1\n");
  std::fflush(stdout);
  return 0;
}

// ===========================================================================
// The parent: runs children and checks what they printed.

struct ChildRun {
  int exit_code = -1;
  std::map<std::string, std::string> values;  // key=value lines
  std::vector<std::string> logs;              // "LEVEL:message"
  std::string output;                         // everything, for failure messages

  std::string value(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? "(missing)" : it->second;
  }
  // The log lines at `level` (INFO, WARNING) joined by newlines.
  std::string logs_at(const std::string& level) const {
    std::string out;
    for (const auto& line : logs) {
      if (line.rfind(level + ":", 0) == 0) out += line.substr(level.size() + 1) + "\n";
    }
    return out;
  }
};

// Runs this program with --scenario=NAME under the parent's environment
// changed by `set` (name -> value) and `unset`.
ChildRun run_child(const std::string& scenario, const std::map<std::string, std::string>& set,
                   const std::vector<std::string>& unset) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (set.count(name) != 0) continue;
    if (std::find(unset.begin(), unset.end(), name) != unset.end()) continue;
    env_text.push_back(entry);
  }
  for (const auto& [name, value] : set) env_text.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : env_text) envp.push_back(entry.data());
  envp.push_back(nullptr);

  std::string self(4096, '\0');
  const ssize_t len = readlink("/proc/self/exe", self.data(), self.size() - 1);
  self.resize(len > 0 ? static_cast<size_t>(len) : 0);
  std::string flag = "--scenario=" + scenario;
  char* argv[] = {self.data(), flag.data(), nullptr};

  ChildRun run;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return run;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    run.output = std::string("posix_spawn failed: ") + std::strerror(spawned);
    return run;
  }
  char buffer[4096];
  ssize_t got;
  while ((got = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) run.output.append(buffer, got);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  size_t start = 0;
  while (start < run.output.size()) {
    size_t end = run.output.find('\n', start);
    if (end == std::string::npos) end = run.output.size();
    const std::string line = run.output.substr(start, end - start);
    start = end + 1;
    if (line.rfind("log:", 0) == 0) {
      run.logs.push_back(line.substr(4));
    } else if (const size_t eq = line.find('='); eq != std::string::npos) {
      run.values[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return run;
}

// Every element within the rounding-error bound of matmul_error().
void expect_gemm_exact_enough(const ChildRun& run) {
  ASSERT_EQ(run.value("done"), "1") << run.output;
  EXPECT_LE(std::stod(run.value("gemm_error_f32")), 1.0) << run.output;
  EXPECT_LE(std::stod(run.value("gemm_error_f64")), 1.0) << run.output;
}

bool same_name(const std::string& a, const std::string& b) {
  return strcasecmp(a.c_str(), b.c_str()) == 0;
}

const std::vector<std::string> kBlasVariables = {"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS"};

// --- the choice itself, on made-up processors --------------------------------

X86Features avx512_machine() {
  X86Features f;
  f.x86 = f.intel = true;
  f.ssse3 = f.sse4_2 = f.avx = f.fma = f.avx2 = true;
  f.avx512f = f.avx512dq = f.avx512cd = f.avx512bw = f.avx512vl = true;
  f.os_avx = f.os_avx512 = true;
  return f;
}

TEST(BlasCoretypeChoice, PicksTheBestKernelSetWhoseInstructionsAreAllThere) {
  X86Features f = avx512_machine();
  EXPECT_EQ(choose_blas_coretype(f).coretype, "SKYLAKEX");
  f.avx512_bf16 = true;
  EXPECT_EQ(choose_blas_coretype(f).coretype, "COOPERLAKE");
  EXPECT_THAT(choose_blas_coretype(f).reason, HasSubstr("AVX512_BF16"));
}

TEST(BlasCoretypeChoice, NeedsEveryAvx512SubsetAndTheOsSavingItsState) {
  for (bool X86Features::*missing : {&X86Features::avx512f, &X86Features::avx512dq,
                                     &X86Features::avx512cd, &X86Features::avx512bw,
                                     &X86Features::avx512vl, &X86Features::os_avx512}) {
    X86Features f = avx512_machine();
    f.avx512_bf16 = true;
    f.*missing = false;
    EXPECT_EQ(choose_blas_coretype(f).coretype, "HASWELL");
  }
}

TEST(BlasCoretypeChoice, FallsBackStepByStep) {
  X86Features f = avx512_machine();
  f.avx512f = false;
  f.amd = true;
  f.intel = false;
  EXPECT_EQ(choose_blas_coretype(f).coretype, "ZEN");
  f.amd = false;
  EXPECT_EQ(choose_blas_coretype(f).coretype, "HASWELL");
  f.fma = false;  // AVX2 without FMA is not enough for Haswell's kernels
  EXPECT_EQ(choose_blas_coretype(f).coretype, "SANDYBRIDGE");
  f.os_avx = false;  // the OS does not save YMM registers: no AVX at all
  EXPECT_EQ(choose_blas_coretype(f).coretype, "NEHALEM");
  f.sse4_2 = false;
  EXPECT_EQ(choose_blas_coretype(f).coretype, "CORE2");
  f.ssse3 = false;
  EXPECT_EQ(choose_blas_coretype(f).coretype, "");  // OpenBLAS's own choice
  EXPECT_EQ(choose_blas_coretype(X86Features{}).coretype, "");
  EXPECT_EQ(choose_blas_coretype(X86Features{}).reason, "not an x86 processor");
}

TEST(BlasCoretypeChoice, ThisMachineGetsAKernelSetItsCpuidReports) {
  const X86Features f = xdev::cpu::read_x86_features();
  const std::string chosen = choose_blas_coretype(f).coretype;
  if (chosen == "SKYLAKEX" || chosen == "COOPERLAKE") {
    EXPECT_TRUE(f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.os_avx512);
  }
  if (chosen == "HASWELL" || chosen == "ZEN") {
    EXPECT_TRUE(f.avx2 && f.fma && f.os_avx);
  }
#if defined(__x86_64__)
  EXPECT_TRUE(f.x86);
  EXPECT_FALSE(chosen.empty()) << "every x86-64 CPU since 2006 has at least SSSE3";
#endif
}

// --- the plugin in fresh processes -------------------------------------------

TEST(CpuPluginBlas, DiscoveryLoadsNoOpenBlasTheFirstProductDoes) {
  const ChildRun run = run_child("plugin", {}, {});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.value("loaded_after_discovery"), "0")
      << "initialize, properties, kernels or device_open loaded OpenBLAS\n"
      << run.output;
  EXPECT_EQ(run.value("loaded_after_first_product"), "1") << run.output;
  EXPECT_THAT(run.value("property.blas"), HasSubstr("loaded at the first matrix product"));
  expect_gemm_exact_enough(run);
}

TEST(CpuPluginBlas, ChoosesTheKernelSetFromCpuidWhenTheUserDidNot) {
  const ChildRun run = run_child("plugin", {}, kBlasVariables);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const xdev::cpu::CoretypeChoice choice =
      choose_blas_coretype(xdev::cpu::read_x86_features());
  const std::string info = run.logs_at("INFO");
  if (choice.coretype.empty()) {
    EXPECT_THAT(info, HasSubstr("OpenBLAS's own choice")) << run.output;
  } else {
    EXPECT_THAT(info, HasSubstr("OPENBLAS_CORETYPE=" + choice.coretype +
                                " set by the cpu plugin: " + choice.reason))
        << run.output;
    EXPECT_TRUE(same_name(run.value("corename"), choice.coretype)) << run.output;
    EXPECT_THAT(run.value("property.blas_core"), HasSubstr(choice.coretype));
  }
  EXPECT_THAT(info, HasSubstr("loaded OpenBLAS")) << run.output;
  EXPECT_EQ(run.logs_at("WARNING"), "") << run.output;
  // The plugin took its settings back out of the environment after loading.
  EXPECT_EQ(run.value("env.OPENBLAS_CORETYPE"), "(unset)");
  EXPECT_EQ(run.value("env.OPENBLAS_NUM_THREADS"), "(unset)");
  expect_gemm_exact_enough(run);
}

TEST(CpuPluginBlas, KeepsTheUsersKernelSet) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "uses OpenBLAS's x86 kernel set PRESCOTT as the user's choice";
#endif
  // Prescott (SSE3) runs on every x86-64 CPU, and the plugin never picks it.
  const ChildRun run = run_child("plugin", {{"OPENBLAS_CORETYPE", "PRESCOTT"}},
                                 {"OPENBLAS_NUM_THREADS"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.value("corename"), "Prescott") << run.output;
  EXPECT_THAT(run.logs_at("INFO"), HasSubstr("OPENBLAS_CORETYPE=PRESCOTT set by the user"));
  EXPECT_THAT(run.logs_at("INFO"), Not(HasSubstr("set by the cpu plugin: the CPU")));
  EXPECT_THAT(run.value("property.blas_core"), HasSubstr("PRESCOTT (OPENBLAS_CORETYPE"));
  EXPECT_EQ(run.value("env.OPENBLAS_CORETYPE"), "PRESCOTT");
  expect_gemm_exact_enough(run);
}

TEST(CpuPluginBlas, UsesAnOpenBlasTheProgramLoadedAsItIs) {
  const ChildRun run = run_child("preloaded", {}, kBlasVariables);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.value("loaded_after_discovery"), "1");
  // OpenBLAS chose when the program loaded it; the plugin changes nothing.
  EXPECT_EQ(run.value("corename"), run.value("preloaded_corename")) << run.output;
  EXPECT_THAT(run.logs_at("INFO"), HasSubstr("had already loaded")) << run.output;
  // The properties say what is in use, not what the plugin would have chosen.
  EXPECT_EQ(run.value("property.blas_core"), run.value("preloaded_corename"));
  EXPECT_THAT(run.value("property.blas"), HasSubstr("OpenBLAS 0."));
  EXPECT_EQ(run.value("env.OPENBLAS_CORETYPE"), "(unset)");
  expect_gemm_exact_enough(run);
}

TEST(CpuPluginBlas, RunsOneOpenBlasThreadAndStartsNoPool) {
  const ChildRun run = run_child("plugin", {}, kBlasVariables);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.value("openblas_threads"), "1") << run.output;
  // Loading OpenBLAS with one thread starts none of its pool: the first
  // product (one BLAS call in the calling thread) adds no thread.
  EXPECT_EQ(run.value("threads_added_by_first_product"), "0") << run.output;
  EXPECT_EQ(run.value("property.blas_threads"), "1 (set by the cpu plugin)");
  EXPECT_THAT(run.logs_at("INFO"), HasSubstr("1 thread (set by the cpu plugin"));
}

TEST(CpuPluginBlas, KeepsTheUsersThreadCount) {
  const ChildRun run = run_child("plugin", {{"OPENBLAS_NUM_THREADS", "2"}},
                                 {"OPENBLAS_CORETYPE"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.value("openblas_threads"), "2") << run.output;
  EXPECT_EQ(run.value("property.blas_threads"), "2 (set by OPENBLAS_NUM_THREADS)");
  EXPECT_THAT(run.logs_at("INFO"), HasSubstr("OPENBLAS_NUM_THREADS=2 set by the user"));
  EXPECT_EQ(run.value("env.OPENBLAS_NUM_THREADS"), "2");
  expect_gemm_exact_enough(run);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--scenario=plugin") return child_main(/*preload=*/false);
    if (arg == "--scenario=preloaded") return child_main(/*preload=*/true);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
