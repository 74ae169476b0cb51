// A compensated (Neumaier) sum of doubles for kernels, in host code and in
// CUDA device code alike. Its error does not grow with the number of terms
// (about one rounding of the result, where a plain running sum of n terms
// may be off by n roundings), so two devices that add the same terms in
// different orders, a sequential loop on one and a tree of partial sums on
// the other, agree within a few ulp. Softmax's and LogSoftmax's Σ e^(x - max)
// use it (docs/ops.md states their tolerance). Header-only; a plugin links
// nothing for it. Adding 1e16, 1.0 and -1e16 gives 1.0 (a plain sum: 0.0).
//
// Terms are finite in intended use; once the running sum is not finite (an
// infinity or a NaN among the terms) value() is that sum, as a plain sum's.
#pragma once

#if defined(__CUDACC__)
#define XDEV_HOST_DEVICE __host__ __device__
#else
#define XDEV_HOST_DEVICE
#endif

namespace xdev {

struct CompensatedSum {
  double sum = 0.0;
  double compensation = 0.0;  // what the rounding of `sum` lost, summed

  XDEV_HOST_DEVICE void add(double x) {
    const double t = sum + x;
    const double abs_sum = sum < 0 ? -sum : sum;
    const double abs_x = x < 0 ? -x : x;
    // The smaller term's low bits are what t dropped.
    compensation += abs_sum >= abs_x ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  // Merges another partial sum (a tree of partial sums stays compensated).
  XDEV_HOST_DEVICE void add(const CompensatedSum& other) {
    add(other.sum);
    compensation += other.compensation;
  }
  XDEV_HOST_DEVICE double value() const {
    return sum - sum == 0.0 ? sum + compensation : sum;  // sum - sum is 0 iff finite
  }
};

}  // namespace xdev
