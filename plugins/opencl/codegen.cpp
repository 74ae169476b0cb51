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
// float16 and bfloat16 (docs/ops.md): stored as ushort, computed in float.
// float16 goes through vload_half/vstore_half_rte (OpenCL 1.2 core: no
// cl_khr_fp16 needed); bfloat16 is float32's top half, rounded to nearest
// even with bit operations. A computed NaN is stored as the quiet NaN of
// its sign (0x7e00/0xfe00, 0x7fc0/0xffc0): PoCL's NaNs have every payload
// bit set, which made 0xffff, the all-ones pattern the validation layer
// fills outputs with to find elements a kernel never wrote.
inline float xdev_f16_load(__global const ushort* p, long i) {
  return vload_half((size_t)i, (__global const half*)p);
}
inline void xdev_f16_store(__global ushort* p, long i, float v) {
  if (isnan(v)) {
    p[i] = (ushort)(((as_uint(v) >> 16) & 0x8000u) | 0x7e00u);
  } else {
    vstore_half_rte(v, (size_t)i, (__global half*)p);
  }
}
inline float xdev_bf16_load(__global const ushort* p, long i) { return as_float((uint)p[i] << 16); }
inline ushort xdev_bf16_bits(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)(((u >> 16) & 0x8000u) | 0x7fc0u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
// A value rounded to odd in float (toward zero, the last bit set when that
// was inexact): float has 13 more bits than float16 and 16 more than
// bfloat16, so rounding it to either once more is the exact value rounded
// once to nearest even (Cast from int32/int64/float64, docs/ops.md "Cast").
inline float xdev_odd_from_long(long v) {
  float f = convert_float_rtz(v);
  return convert_long_rtz(f) == v ? f : as_float(as_uint(f) | 1u);
}
#ifdef XDEV_FP64
inline float xdev_odd_from_double(double d) {
  float f = convert_float_rtz(d);
  return (isnan(d) || (double)f == d) ? f : as_float(as_uint(f) | 1u);
}
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
// Line kernels: the offset of a line's j-th element along the reduced axes.
inline long xdev_line_at(const xdev_index* ix, int k, long j) {
  long o = 0;
  for (int d = (int)ix->rrank - 1; d >= 0; --d) {
    long s = ix->rshape[d];
    o += (j % s) * ix->rst[k][d];
    j /= s;
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
    case XDEV_DTYPE_FLOAT16: return "ushort";  // computed in float (value_type)
    case XDEV_DTYPE_BFLOAT16: return "ushort";
    case XDEV_DTYPE_UINT8: return "uchar";
    case XDEV_DTYPE_INT8: return "char";
    default: return "void";
  }
}

bool is_half(xdev_dtype_t dtype) {
  return dtype == XDEV_DTYPE_FLOAT16 || dtype == XDEV_DTYPE_BFLOAT16;
}

const char* value_type(xdev_dtype_t dtype) { return is_half(dtype) ? "float" : cl_type(dtype); }

std::string load(xdev_dtype_t dtype, const std::string& pointer, const std::string& index) {
  if (dtype == XDEV_DTYPE_FLOAT16) return "xdev_f16_load(" + pointer + ", " + index + ")";
  if (dtype == XDEV_DTYPE_BFLOAT16) return "xdev_bf16_load(" + pointer + ", " + index + ")";
  return pointer + "[" + index + "]";
}

std::string store(xdev_dtype_t dtype, const std::string& pointer, const std::string& index,
                  const std::string& value) {
  if (dtype == XDEV_DTYPE_FLOAT16) {
    return "xdev_f16_store(" + pointer + ", " + index + ", (float)(" + value + "))";
  }
  if (dtype == XDEV_DTYPE_BFLOAT16) {
    return pointer + "[" + index + "] = xdev_bf16_bits((float)(" + value + "))";
  }
  return pointer + "[" + index + "] = (" + cl_type(dtype) + ")(" + value + ")";
}

namespace {

// The macros of a kernel over one input dtype and one output dtype: T and O
// the types computed in (float for the 16-bit floats), TS and OS the stored
// ones (of the pointers), LD(p, i) an input element as T, ST(p, i, v) v
// stored into an output element.
std::string dtype_macros(xdev_dtype_t input, xdev_dtype_t output) {
  return "#define T " + std::string(value_type(input)) + "\n#define TS " + cl_type(input) +
         "\n#define O " + value_type(output) + "\n#define OS " + cl_type(output) +
         "\n#define LD(p, i) " + load(input, "(p)", "(i)") + "\n#define ST(p, i, v) " +
         store(output, "(p)", "(i)", "v") + "\n";
}

}  // namespace

std::string elementwise_source(const std::string& expr, const std::vector<xdev_dtype_t>& inputs,
                               xdev_dtype_t output, const std::string& params, bool fp64,
                               bool tile) {
  static const char* const kNames[] = {"a", "b", "c"};
  // Values that only move (a copy, Select's branches) keep their bits: a
  // 16-bit input of the output's dtype is read and written as stored.
  const bool raw = is_half(output) &&
                   ((expr == "a" && inputs.size() == 1 && inputs[0] == output) ||
                    (expr == "a ? b : c" && inputs.size() == 3 && inputs[1] == output &&
                     inputs[2] == output));
  const auto moved = [&](size_t k) { return raw && (k > 0 || expr == "a"); };
  std::string s = prelude(fp64);
  s += "__kernel void xdev_kernel(";
  std::string loads;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string t = cl_type(inputs[k]);
    const std::string name = "in" + std::to_string(k);
    const std::string at = tile ? std::string("xdev_at_tile(&ix, i)")
                                : "xdev_at(&ix, " + std::to_string(k) + ", i)";
    s += "__global const " + t + "* " + name + ", ";
    loads += "  " + std::string(moved(k) ? t.c_str() : value_type(inputs[k])) + " " + kNames[k] +
             " = " + (moved(k) ? name + "[" + at + "]" : load(inputs[k], name, at)) + ";\n";
  }
  s += "__global " + std::string(cl_type(output)) + "* out, xdev_index ix";
  if (!params.empty()) s += ", " + params;
  s += ") {\n  long i = get_global_id(0);\n  if (i >= ix.n) return;\n" + loads;
  const std::string at = "xdev_at(&ix, " + std::to_string(inputs.size()) + ", i)";
  s += "  " + (raw ? "out[" + at + "] = (" + expr + ")" : store(output, "out", at, expr)) + ";\n}\n";
  const xdev_dtype_t first = inputs.empty() ? output : inputs[0];
  replace_all(s, "$T", value_type(first));
  replace_all(s, "$U", unsigned_type(first));
  replace_all(s, "$O", value_type(output));
  replace_all(s, "$F", first == XDEV_DTYPE_FLOAT32 || is_half(first) ? "f" : "");
  return s;
}

std::string line_source(const std::string& body, xdev_dtype_t input, xdev_dtype_t output,
                        const char* accumulator, bool fp64, const std::string& extra) {
  std::string s = prelude(fp64);
  s += dtype_macros(input, output) + "#define U " + unsigned_type(input) + "\n#define A " +
       accumulator + "\n";
  s += R"CL(
__kernel void xdev_kernel(__global const TS* in, __global OS* out, xdev_index ix $EXTRA) {
  long line = get_global_id(0);
  if (line >= ix.n) return;
  const long base_in = xdev_at(&ix, 0, line);
  const long base_out = xdev_at(&ix, 1, line);
  const long count = ix.count;
#define X(j) LD(in, base_in + xdev_line_at(&ix, 0, (j)))
#define SET_Y(j, v) ST(out, base_out + xdev_line_at(&ix, 1, (j)), v)
#define SET_OUT(v) ST(out, base_out, v)
)CL";
  s += body;
  s += "\n}\n";
  replace_all(s, "$EXTRA", extra);
  return s;
}

std::string tree_source(const TreeReduce& body, xdev_dtype_t input, xdev_dtype_t output,
                        const char* accumulator, bool fp64, int stage, int group,
                        bool chunked) {
  std::string s = prelude(fp64);
  s += std::string("#define CHUNKED ") + (chunked ? "1" : "0") + "\n";
  s += dtype_macros(input, output) + "#define U " + unsigned_type(input) + "\n#define A " +
       accumulator + "\n#define STAGE " + std::to_string(stage) + "\n";
  s += "typedef " + std::string(body.state) + " S;\n";
  s += "#define INIT(s) { " + std::string(body.init) + "; }\n";
  s += "#define ADD(s, x, j) { " + std::string(body.add) + "; }\n";
  s += "#define MERGE(a, b) { " + std::string(body.merge) + "; }\n";
  s += "#define FINISH(s) (" + std::string(body.finish) + ")\n";
  s += R"CL(
__kernel void xdev_kernel(__global const TS* in, __global OS* out, __global uchar* partials_bytes,
                          xdev_index ix, long parts, long partials_offset, __local S* tree) {
  __global S* partials = (__global S*)(partials_bytes + partials_offset);
  const long group = get_group_id(0);
  const long line = group / parts, part = group % parts;
  const int lid = (int)get_local_id(0), size = (int)get_local_size(0);
  const long count = ix.count;
  S s;
  INIT(s);
#if STAGE == 2
  for (long j = lid; j < parts; j += size) {
    S b = partials[line * parts + j];
    MERGE(s, b);
  }
#else
  const long base_in = xdev_at(&ix, 0, line);
#if CHUNKED
  // Each item a contiguous run of the line (CPU devices: one thread streams it).
  const long items = parts * size, chunk = (count + items - 1) / items;
  const long first = (part * size + lid) * chunk, step = 1;
  const long last = first + chunk < count ? first + chunk : count;
#else
  // Items side by side (GPUs: neighbouring items read neighbouring elements).
  const long first = part * size + lid, step = parts * size, last = count;
#endif
  if (ix.rrank == 1) {
    const long stride = ix.rst[0][0];
    for (long j = first; j < last; j += step) {
      T x = LD(in, base_in + j * stride);
      ADD(s, x, j);
    }
  } else {
    for (long j = first; j < last; j += step) {
      T x = LD(in, base_in + xdev_line_at(&ix, 0, j));
      ADD(s, x, j);
    }
  }
#endif
  tree[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
$TREE
  if (lid != 0) return;
  s = tree[0];
  if (STAGE == 2 || parts == 1) {
    ST(out, xdev_at(&ix, 1, line), FINISH(s));
  } else {
    partials[group] = s;
  }
}
)CL";
  // The tree's levels unrolled for the group size: no barrier inside a loop
  // (which PoCL's work-item loops handle far more slowly).
  std::string levels;
  for (int width = group / 2; width > 0; width /= 2) {
    const std::string w = std::to_string(width);
    levels += "  if (lid < " + w + ") { S a = tree[lid], b = tree[lid + " + w +
              "]; MERGE(a, b); tree[lid] = a; }\n  barrier(CLK_LOCAL_MEM_FENCE);\n";
  }
  replace_all(s, "$TREE", levels);
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

std::string scatter_source(xdev_dtype_t updates, xdev_dtype_t out, xdev_dtype_t indices,
                           bool fp64) {
  std::string s = prelude(fp64);
  // Integers add in their unsigned type (wrapping), 16-bit floats in float.
  s += dtype_macros(updates, out) + "#define U " +
       (is_half(updates) ? "float" : unsigned_type(updates)) + "\n#define I " + cl_type(indices) +
       "\n";
  s += R"CL(
__kernel void xdev_kernel(__global const TS* updates, __global const I* indices, __global OS* out,
                          xdev_index ix, long rows, long depth, long inner, __global int* errors) {
  long c = get_global_id(0);
  if (c >= ix.n) return;
  for (long j = 0; j < rows; ++j) {
    long t = 0;
    int ok = 1;
    for (long d = 0; d < depth && ok; ++d) {
      long v = (long)indices[ix.off[1] + j * depth + d];
      if (v < 0 || v >= ix.shape[d]) {
        if (atomic_cmpxchg(errors, 0, 1) == 0) ((__global long*)errors)[1] = v;
        ok = 0;
      }
      t = t * ix.shape[d] + v;
    }
    if (!ok) continue;
    long o = ix.off[2] + t * inner + c;
    out[o] = (OS)((U)out[o] + (U)LD(updates, ix.off[0] + j * inner + c));
  }
}
)CL";
  return s;
}

std::string window_source(WindowOp op, xdev_dtype_t dtype, bool fp64) {
  static const char* const kBodies[] = {
      "ST(out, o, best < 0 ? -INFINITY : LD(a, best));",  // the pools pick below
      "ST(out, o, xdev_avg(&g, a, i));",
      "ST(out, o, xdev_pool_grad(&g, a, c, i, 1));",
      "ST(out, o, xdev_pool_grad(&g, a, a, i, 0));",
      "ST(out, o, xdev_conv_tap_sum(&g, a, b, i, 0));",
      "ST(out, o, xdev_conv_tap_sum(&g, b, a, i, 1));",
      "ST(out, o, xdev_conv_filter(&g, a, b, i));",
  };
  std::string s = prelude(fp64);
  s += dtype_macros(dtype, dtype) + "#define A " + (fp64 ? "double" : "float") + "\n";
  s += R"CL(
typedef struct { long nchw, n, h, w, c, step_n, step_h, step_w, step_c; } xdev_image;
typedef struct { xdev_image in, out; long kh, kw, sy, sx, dy, dx, py, px; } xdev_window;
inline long xdev_image_offset(const xdev_image* im, long b, long y, long x, long ch) {
  return b * im->step_n + y * im->step_h + x * im->step_w + ch * im->step_c;
}
inline void xdev_image_coordinates(const xdev_image* im, long i, long* b, long* y, long* x,
                                   long* ch) {
  *b = i / im->step_n;
  i -= *b * im->step_n;
  if (!im->nchw) {
    *y = i / im->step_h; i -= *y * im->step_h; *x = i / im->step_w; *ch = i - *x * im->step_w;
  } else {
    *ch = i / im->step_c; i -= *ch * im->step_c; *y = i / im->step_h; *x = i - *y * im->step_h;
  }
}
inline void xdev_covering(long at, long size, long stride, long pad, long out, long* first,
                          long* last) {
  long hi = at + pad, lo = hi - size + 1;
  *first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  long l = hi / stride;
  *last = l < out - 1 ? l : out - 1;
}
inline bool xdev_tap_window(const xdev_window* g, long iy, long ix, long ky, long kx, long* oy,
                            long* ox) {
  long ty = iy + g->py - ky * g->dy, tx = ix + g->px - kx * g->dx;
  if (ty < 0 || tx < 0 || ty % g->sy != 0 || tx % g->sx != 0) return false;
  *oy = ty / g->sy;
  *ox = tx / g->sx;
  return *oy < g->out.h && *ox < g->out.w;
}
typedef struct { long y0, x0, ky0, ky1, kx0, kx1; } xdev_taps;
inline xdev_taps xdev_pool_taps(const xdev_window* g, long oy, long ox) {
  xdev_taps t;
  t.y0 = oy * g->sy - g->py;
  t.x0 = ox * g->sx - g->px;
  t.ky0 = t.y0 < 0 ? -t.y0 : 0;
  t.ky1 = g->in.h - t.y0 < g->kh ? g->in.h - t.y0 : g->kh;
  t.kx0 = t.x0 < 0 ? -t.x0 : 0;
  t.kx1 = g->in.w - t.x0 < g->kw ? g->in.w - t.x0 : g->kw;
  return t;
}
inline long xdev_taps_count(const xdev_taps* t) {
  return (t->ky1 > t->ky0 ? t->ky1 - t->ky0 : 0) * (t->kx1 > t->kx0 ? t->kx1 - t->kx0 : 0);
}
// The offset of window (b, oy, ox, ch)'s first NaN, else first maximum.
inline long xdev_window_max(const xdev_window* g, __global const TS* x, long b, long oy, long ox,
                            long ch) {
  xdev_taps t = xdev_pool_taps(g, oy, ox);
  long best = -1;
  T best_value = 0;
  for (long ky = t.ky0; ky < t.ky1; ++ky) {
    for (long kx = t.kx0; kx < t.kx1; ++kx) {
      long at = xdev_image_offset(&g->in, b, t.y0 + ky, t.x0 + kx, ch);
      T v = LD(x, at);
      if (best < 0 || (best_value == best_value && (v != v || v > best_value))) {
        best = at;
        best_value = v;
      }
    }
  }
  return best;
}
inline T xdev_avg(const xdev_window* g, __global const TS* x, long i) {
  long b, oy, ox, ch;
  xdev_image_coordinates(&g->out, i, &b, &oy, &ox, &ch);
  xdev_taps t = xdev_pool_taps(g, oy, ox);
  A sum = 0;
  for (long ky = t.ky0; ky < t.ky1; ++ky)
    for (long kx = t.kx0; kx < t.kx1; ++kx)
      sum += (A)LD(x, xdev_image_offset(&g->in, b, t.y0 + ky, t.x0 + kx, ch));
  long n = xdev_taps_count(&t);
  return (T)(n > 0 ? sum / (A)n : (A)NAN);
}
// Element i of dx: what each window over it sends, in row-major window order.
inline T xdev_pool_grad(const xdev_window* g, __global const TS* x, __global const TS* dy, long i,
                        int max) {
  long b, iy, ix, ch;
  xdev_image_coordinates(&g->in, i, &b, &iy, &ix, &ch);
  long oy0, oy1, ox0, ox1;
  xdev_covering(iy, g->kh, g->sy, g->py, g->out.h, &oy0, &oy1);
  xdev_covering(ix, g->kw, g->sx, g->px, g->out.w, &ox0, &ox1);
  T sum = 0;
  for (long oy = oy0; oy <= oy1; ++oy) {
    for (long ox = ox0; ox <= ox1; ++ox) {
      T grad = LD(dy, xdev_image_offset(&g->out, b, oy, ox, ch));
      if (max) {
        if (xdev_window_max(g, x, b, oy, ox, ch) == i) sum += grad;
      } else {
        xdev_taps t = xdev_pool_taps(g, oy, ox);
        sum += (T)((A)grad / (A)xdev_taps_count(&t));
      }
    }
  }
  return sum;
}
inline long xdev_filter_offset(const xdev_window* g, long ky, long kx, long ci, long co) {
  return ((ky * g->kw + kx) * g->in.c + ci) * g->out.c + co;
}
// Conv2D (input 0): element i of y; Conv2DBackpropInput (input 1): of dx.
inline T xdev_conv_tap_sum(const xdev_window* g, __global const TS* a, __global const TS* f, long i,
                           int input) {
  const xdev_image* own = input ? &g->in : &g->out;
  const xdev_image* other = input ? &g->out : &g->in;
  long b, y, x, ch;
  xdev_image_coordinates(own, i, &b, &y, &x, &ch);
  A sum = 0;
  for (long ky = 0; ky < g->kh; ++ky) {
    for (long kx = 0; kx < g->kw; ++kx) {
      long p, q;
      if (input) {
        if (!xdev_tap_window(g, y, x, ky, kx, &p, &q)) continue;
      } else {
        p = y * g->sy - g->py + ky * g->dy;
        q = x * g->sx - g->px + kx * g->dx;
        if (p < 0 || p >= g->in.h || q < 0 || q >= g->in.w) continue;
      }
      for (long c = 0; c < other->c; ++c) {
        long w = input ? xdev_filter_offset(g, ky, kx, ch, c) : xdev_filter_offset(g, ky, kx, c, ch);
        sum += (A)LD(a, xdev_image_offset(other, b, p, q, c)) * (A)LD(f, w);
      }
    }
  }
  return (T)sum;
}
inline T xdev_conv_filter(const xdev_window* g, __global const TS* x, __global const TS* dy, long i) {
  long co = i % g->out.c, k = i / g->out.c;
  long ci = k % g->in.c, tap = k / g->in.c;
  long ky = tap / g->kw, kx = tap % g->kw;
  A sum = 0;
  for (long b = 0; b < g->out.n; ++b) {
    for (long oy = 0; oy < g->out.h; ++oy) {
      for (long ox = 0; ox < g->out.w; ++ox) {
        long iy = oy * g->sy - g->py + ky * g->dy, ix = ox * g->sx - g->px + kx * g->dx;
        if (iy < 0 || iy >= g->in.h || ix < 0 || ix >= g->in.w) continue;
        sum += (A)LD(x, xdev_image_offset(&g->in, b, iy, ix, ci)) *
               (A)LD(dy, xdev_image_offset(&g->out, b, oy, ox, co));
      }
    }
  }
  return (T)sum;
}
__kernel void xdev_kernel(__global const TS* a0, __global const TS* b0, __global const TS* c0,
                          __global TS* out0, xdev_index ix, xdev_window g) {
  long i = get_global_id(0);
  if (i >= ix.n) return;
  __global const TS* a = a0 + ix.off[0];
  __global const TS* b = b0 + ix.off[1];
  __global const TS* c = c0 + ix.off[2];
  __global TS* out = out0 + ix.off[3];
  long o = i;
$BODY
}
)CL";
  std::string body = kBodies[static_cast<int>(op)];
  if (op == WindowOp::kMaxPool) {
    body = "  long bb, oy, ox, ch; xdev_image_coordinates(&g.out, i, &bb, &oy, &ox, &ch);\n"
           "  long best = xdev_window_max(&g, a, bb, oy, ox, ch);\n  " + body;
  }
  replace_all(s, "$BODY", "  " + body);
  return s;
}

std::string gemm_source(xdev_dtype_t dtype, bool fp64) {
  std::string s = prelude(fp64);
  // Integers accumulate in their unsigned type (wrapping), float16 and
  // bfloat16 in float (docs/ops.md), the other floats in their own type.
  s += dtype_macros(dtype, dtype) + "#define U " +
       (is_half(dtype) ? "float" : unsigned_type(dtype)) + "\n";
  s += R"CL(
__kernel void xdev_kernel(__global const TS* x, __global const TS* y, __global TS* out, xdev_index ix,
                          long m, long n, long k, long xm, long xk, long yk, long yn) {
  long i = get_global_id(0);
  if (i >= ix.n) return;
  long mn = m * n, b = i / mn, r = i % mn, row = r / n, col = r % n;
  long xo = xdev_at(&ix, 0, b) + row * xm, yo = xdev_at(&ix, 1, b) + col * yn;
  U acc = 0;
  for (long j = 0; j < k; ++j) acc += (U)LD(x, xo + j * xk) * (U)LD(y, yo + j * yk);
  ST(out, ix.off[2] + i, (T)acc);
}
)CL";
  return s;
}

}  // namespace xdev::opencl
