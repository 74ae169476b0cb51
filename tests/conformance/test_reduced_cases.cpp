// xdev-conformance --reduced: the rule that picks an op's cases for each of
// its dtype runs (reduced_cases, suite/suite.hpp) runs every case once and
// gives every dtype run a case.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "suite/suite.hpp"

namespace {

using xdev_conformance::reduced_cases;

TEST(ReducedCases, OneRunTakesEveryCase) {
  EXPECT_EQ(reduced_cases(4, 0, 1), (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(reduced_cases(3, 0, 0), (std::vector<size_t>{0, 1, 2}));
  EXPECT_TRUE(reduced_cases(0, 0, 5).empty());
}

TEST(ReducedCases, EveryCaseRunsOnceAndEveryRunHasACase) {
  for (size_t cases = 1; cases <= 12; ++cases) {
    for (size_t runs = 1; runs <= 15; ++runs) {
      std::vector<int> times(cases, 0);
      for (size_t run = 0; run < runs; ++run) {
        const std::vector<size_t> chosen = reduced_cases(cases, run, runs);
        ASSERT_FALSE(chosen.empty()) << cases << " cases, run " << run << " of " << runs;
        for (size_t j : chosen) {
          ASSERT_LT(j, cases);
          ++times[j];
        }
      }
      for (size_t j = 0; j < cases; ++j) {
        // Once each; when there are more runs than cases the runs past the
        // cases repeat some (each run still needs one).
        if (runs <= cases) {
          EXPECT_EQ(times[j], 1) << "case " << j << " of " << cases << ", " << runs << " runs";
        } else {
          EXPECT_GE(times[j], 1) << "case " << j << " of " << cases << ", " << runs << " runs";
        }
      }
    }
  }
}

TEST(ReducedCases, RunsFewerCasesThanTheWholeSet) {
  // 10 dtypes of 8 cases: 80 calls whole, 10 reduced.
  size_t total = 0;
  for (size_t run = 0; run < 10; ++run) total += reduced_cases(8, run, 10).size();
  EXPECT_EQ(total, 10u);
  EXPECT_EQ(reduced_cases(8, 1, 3), (std::vector<size_t>{1, 4, 7}));
}

}  // namespace
