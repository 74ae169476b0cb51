#include "codegen.hpp"

namespace xdev::opencl {
namespace {

const char* unsigned_type(xdev_dtype_t dtype) {
  switch (dtype) {
    case XDEV_DTYPE_INT32: return "uint";
    case XDEV_DTYPE_INT64: return "ulong";
    default: return cl_type(dtype);
  }
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// Helpers the op expressions call, for int/long and float/double: integer
// ops wrap (through the unsigned type), a zero divisor gives 0, MIN / -1 is
// MIN; float maximum/minimum propagate NaN (fmax does not).
const char* kHelpers = R"CL(
#define XDEV_INT_HELPERS(T, U) \
  inline T xdev_neg_##T(T a) { return (T)((U)0 - (U)a); } \
  inline T xdev_div_##T(T a, T b) { return b == 0 ? (T)0 : (b == (T)-1 ? xdev_neg_##T(a) : a / b); } \
  inline T xdev_floordiv_##T(T a, T b) { \
    if (b == 0) return 0; \
    if (b == (T)-1) return xdev_neg_##T(a); \
    T q = a / b; \
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; } \
  inline T xdev_floormod_##T(T a, T b) { \
    if (b == 0 || b == (T)-1) return 0; \
    T r = a % b; \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; } \
  inline T xdev_max_##T(T a, T b) { return a > b ? a : b; } \
  inline T xdev_min_##T(T a, T b) { return a < b ? a : b; }
XDEV_INT_HELPERS(int, uint)
XDEV_INT_HELPERS(long, ulong)
#define XDEV_FLOAT_HELPERS(T) \
  inline T xdev_floormod_##T(T a, T b) { T r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; } \
  inline T xdev_max_##T(T a, T b) { return (isnan(a) || isnan(b)) ? a + b : fmax(a, b); } \
  inline T xdev_min_##T(T a, T b) { return (isnan(a) || isnan(b)) ? a + b : fmin(a, b); }
XDEV_FLOAT_HELPERS(float)
#ifdef XDEV_FP64
XDEV_FLOAT_HELPERS(double)
#endif
// docs/ops.md "RandomUniform": the bits of element i, bit for bit.
inline ulong xdev_random_bits(ulong seed, ulong i) {
  ulong x = seed + (i + 1) * 0x9E3779B97F4A7C15UL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9UL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBUL;
  return x ^ (x >> 31);
}
// Tile: input 0's coordinate is the output's modulo its shape (in rshape).
inline long xdev_at_tile(const xdev_index* ix, long i) {
  long o = ix->off[0];
  for (int d = (int)ix->rank - 1; d >= 0; --d) {
    long s = ix->shape[d];
    o += ((i % s) % ix->rshape[d]) * ix->st[0][d];
    i /= s;
  }
  return o;
}
inline long xdev_at(const xdev_index* ix, int k, long i) {
  long o = ix->off[k];
  for (int d = (int)ix->rank - 1; d >= 0; --d) {
    long s = ix->shape[d];
    o += (i % s) * ix->st[k][d];
    i /= s;
  }
  return o;
}
)CL";

std::string prelude(bool fp64) {
  std::string s = "#pragma OPENCL FP_CONTRACT OFF\n";
  if (fp64) s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define XDEV_FP64 1\n";
  s += "typedef struct { long n; long rank; long shape[8]; long off[4]; long st[4][8];\n"
       "  long rrank; long count; long rshape[8]; long rst[2][8]; } xdev_index;\n";
  s += kHelpers;
  return s;
}

}  // namespace

const char* cl_type(xdev_dtype_t dtype) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: return "float";
    case XDEV_DTYPE_FLOAT64: return "double";
    case XDEV_DTYPE_INT32: return "int";
    case XDEV_DTYPE_INT64: return "long";
    case XDEV_DTYPE_BOOL: return "uchar";
    case XDEV_DTYPE_FLOAT16: return "half";
    case XDEV_DTYPE_UINT8: return "uchar";
    case XDEV_DTYPE_INT8: return "char";
    default: return "void";
  }
}

std::string elementwise_source(const std::string& expr, const std::vector<xdev_dtype_t>& inputs,
                               xdev_dtype_t output, const std::string& params, bool fp64,
                               bool tile) {
  static const char* const kNames[] = {"a", "b", "c"};
  std::string s = prelude(fp64);
  s += "__kernel void xdev_kernel(";
  std::string loads;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string t = cl_type(inputs[k]);
    s += "__global const " + t + "* in" + std::to_string(k) + ", ";
    loads += "  " + t + " " + kNames[k] + " = in" + std::to_string(k) + "[" +
             (tile ? std::string("xdev_at_tile(&ix, i)")
                   : "xdev_at(&ix, " + std::to_string(k) + ", i)") + "];\n";
  }
  s += "__global " + std::string(cl_type(output)) + "* out, xdev_index ix";
  if (!params.empty()) s += ", " + params;
  s += ") {\n  long i = get_global_id(0);\n  if (i >= ix.n) return;\n" + loads;
  s += "  out[xdev_at(&ix, " + std::to_string(inputs.size()) + ", i)] = (" +
       std::string(cl_type(output)) + ")(" + expr + ");\n}\n";
  const xdev_dtype_t first = inputs.empty() ? output : inputs[0];
  replace_all(s, "$T", cl_type(first));
  replace_all(s, "$U", unsigned_type(first));
  replace_all(s, "$O", cl_type(output));
  replace_all(s, "$F", first == XDEV_DTYPE_FLOAT32 ? "f" : "");
  return s;
}

std::string line_source(const std::string& body, xdev_dtype_t input, xdev_dtype_t output,
                        const char* accumulator, bool fp64, const std::string& extra) {
  std::string s = prelude(fp64);
  s += "#define T " + std::string(cl_type(input)) + "\n#define U " + unsigned_type(input) +
       "\n#define O " + cl_type(output) + "\n#define A " + accumulator + "\n";
  s += R"CL(
inline long xdev_line_at(const xdev_index* ix, int k, long j) {
  long o = 0;
  for (int d = (int)ix->rrank - 1; d >= 0; --d) {
    long s = ix->rshape[d];
    o += (j % s) * ix->rst[k][d];
    j /= s;
  }
  return o;
}
__kernel void xdev_kernel(__global const T* in, __global O* out, xdev_index ix $EXTRA) {
  long line = get_global_id(0);
  if (line >= ix.n) return;
  const long base_in = xdev_at(&ix, 0, line);
  const long base_out = xdev_at(&ix, 1, line);
  const long count = ix.count;
#define X(j) in[base_in + xdev_line_at(&ix, 0, (j))]
#define Y(j) out[base_out + xdev_line_at(&ix, 1, (j))]
#define OUT out[base_out]
)CL";
  s += body;
  s += "\n}\n";
  replace_all(s, "$EXTRA", extra);
  return s;
}

std::string gather_source(xdev_dtype_t params, xdev_dtype_t indices, bool fp64) {
  std::string s = prelude(fp64);
  s += "#define T " + std::string(cl_type(params)) + "\n#define I " + cl_type(indices) + "\n";
  s += R"CL(
__kernel void xdev_kernel(__global const T* params, __global const I* indices, __global T* out,
                          xdev_index ix, long n, long m, long inner, __global int* errors) {
  long i = get_global_id(0);
  if (i >= ix.n) return;
  long in_i = i % inner, t = i / inner, j = t % m, o = t / m;
  long v = (long)indices[ix.off[1] + j];
  if (v < 0 || v >= n) {
    if (atomic_cmpxchg(errors, 0, 1) == 0) ((__global long*)errors)[1] = v;
    out[ix.off[2] + i] = (T)0;
    return;
  }
  out[ix.off[2] + i] = params[ix.off[0] + (o * n + v) * inner + in_i];
}
)CL";
  return s;
}

}  // namespace xdev::opencl
