// The whole-set checks (coincident positions, shared ids) against a brute-force search: they
// sort on every thread, coincident positions by a hash of the position.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <new>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/checks.hpp"
#include "core/parallel_errors.hpp"
#include "io/validate.hpp"

namespace hoshi {
namespace {

using Pair = std::optional<std::pair<std::size_t, std::size_t>>;

ParticleSet random_set(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  ParticleSet p;
  for (std::size_t i = 0; i < n; ++i) p.push_back(u(g), u(g), u(g), 0, 0, 0, 1, 5 * n - 3 * i);
  return p;
}

// Of all coincident positions the smallest in (x, y, z) order, with its two smallest indices.
Pair brute_coincident(const ParticleSet& p) {
  Pair best;
  auto key = [&](std::size_t i) { return std::make_tuple(p.x[i], p.y[i], p.z[i]); };
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j)
      if (key(i) == key(j) && (!best || key(i) < key(best->first) ||
                               (key(i) == key(best->first) && std::pair(i, j) < *best)))
        best = std::pair(i, j);
  return best;
}

// The smallest shared id, with its two smallest indices.
Pair brute_shared_id(const ParticleSet& p) {
  Pair best;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j)
      if (p.id[i] == p.id[j] && (!best || p.id[i] < p.id[best->first] ||
                                 (p.id[i] == p.id[best->first] && std::pair(i, j) < *best)))
        best = std::pair(i, j);
  return best;
}

TEST(Checks, CoincidentPositionsMatchTheBruteForceSearch) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    ParticleSet p = random_set(600, seed);
    std::mt19937_64 g(seed);
    // 0 to 3 planted coincidences, one of them a triple in some sets, and +0 beside -0 (equal
    // positions whose bits differ).
    const int planted = static_cast<int>(seed % 4);
    for (int k = 0; k < planted; ++k) {
      const std::size_t a = g() % p.size(), b = g() % p.size();
      p.x[b] = p.x[a], p.y[b] = p.y[a], p.z[b] = p.z[a];
      if (k == 1) {
        const std::size_t c = g() % p.size();
        p.x[c] = p.x[a], p.y[c] = p.y[a], p.z[c] = p.z[a];
      }
    }
    if (seed % 5 == 0) {
      p.x[10] = 0.0, p.y[10] = 0.5, p.z[10] = -0.0;
      p.x[400] = -0.0, p.y[400] = 0.5, p.z[400] = 0.0;
    }
    EXPECT_EQ(find_coincident_pair(p), brute_coincident(p)) << "seed " << seed;
  }
}

// A crowd of coincident particles (all at the origin) is found in n log n and named by its two
// smallest indices; so is the same position reached through other hash runs.
TEST(Checks, ACrowdAtOnePointIsNamedByItsFirstTwo) {
  ParticleSet p = random_set(20000, 3);
  for (std::size_t i = 5000; i < 15000; i += 2) p.x[i] = p.y[i] = p.z[i] = 0;
  EXPECT_EQ(find_coincident_pair(p), Pair(std::pair<std::size_t, std::size_t>(5000, 5002)));
  EXPECT_FALSE(find_coincident_pair(random_set(20000, 4)).has_value());
}

TEST(Checks, SharedIdsMatchTheBruteForceSearch) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    ParticleSet p = random_set(600, seed);  // decreasing ids: the sorting path
    std::mt19937_64 g(seed + 100);
    for (int k = 0; k < static_cast<int>(seed % 4); ++k)
      p.id[g() % p.size()] = p.id[g() % p.size()];
    EXPECT_EQ(io::first_shared_id(p), brute_shared_id(p)) << "seed " << seed;
  }
  // Increasing ids (the one-pass path) share none; one repeated is found.
  ParticleSet q = random_set(100, 9);
  for (std::size_t i = 0; i < q.size(); ++i) q.id[i] = 2 * i;
  EXPECT_FALSE(io::first_shared_id(q).has_value());
  q.id[51] = q.id[50];
  EXPECT_EQ(io::first_shared_id(q), Pair(std::pair<std::size_t, std::size_t>(50, 51)));
}

// An exception thrown inside an OpenMP region (a failed allocation in a walk's buffers, a
// sort's run copy) ended the program there; ParallelErrors rethrows the first one after the
// region, on the calling thread, and skips the work after it. Without it this test aborts.
TEST(ParallelErrors, RethrowsTheFirstExceptionAfterTheRegion) {
  ParallelErrors errors;
  std::vector<int> done(1000, 0);
#pragma omp parallel for schedule(dynamic, 1)
  for (int k = 0; k < 1000; ++k)
    errors.run([&] {
      if (k == 10) throw std::bad_alloc();
      done[k] = 1;
    });
  EXPECT_TRUE(errors.failed());
  EXPECT_THROW(errors.rethrow(), std::bad_alloc);
  EXPECT_EQ(done[10], 0);
  // A region with its own worksharing loop: every thread still reaches the loop's barrier.
  ParallelErrors inner;
  std::vector<int> seen(64, 0);
#pragma omp parallel
  {
    inner.run([&] {
      if (omp_get_thread_num() == 0) throw std::runtime_error("thread 0");
    });
#pragma omp for
    for (int k = 0; k < 64; ++k) inner.run([&] { seen[k] = 1; });
  }
  try {
    inner.rethrow();
    FAIL() << "nothing rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "thread 0");
  }
  ParallelErrors none;
#pragma omp parallel for
  for (int k = 0; k < 64; ++k) none.run([&] { seen[k] = 2; });
  EXPECT_FALSE(none.failed());
  EXPECT_NO_THROW(none.rethrow());
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 2), 64);
}

}  // namespace
}  // namespace hoshi
