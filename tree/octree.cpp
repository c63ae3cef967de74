#include "tree/octree.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "core/bounds.hpp"
#include "core/parallel_errors.hpp"
#include "tree/morton.hpp"

namespace hoshi {

BoundingCube bounding_cube(const double* x, const double* y, const double* z, std::size_t n) {
  BoundingCube c;
  if (n == 0) return c;
  const Box b = bounding_box(x, y, z, 0, n);
  double ext = 2 * std::max({b.half(0), b.half(1), b.half(2)});
  if (!(ext > 0)) ext = 1.0;  // one point, or all coincident: any positive side will do
  c.side = ext * (1.0 + 0x1.0p-20);
  c.lo_x = b.centre(0) - 0.5 * c.side;
  c.lo_y = b.centre(1) - 0.5 * c.side;
  c.lo_z = b.centre(2) - 0.5 * c.side;
  return c;
}

namespace {

// Lower corner of the finest-level cell of `key`: the origin of the keys inside that cell
// (key_deep_cells) and of the geometry of the nodes below it (OctreeBuilder::make_node), one
// expression for both.
void deep_cell_corner(std::uint64_t key, const BoundingCube& c, double& lo_x, double& lo_y,
                      double& lo_z) {
  std::uint32_t ix, iy, iz;
  morton_decode(key, ix, iy, iz);
  const double cell = c.side / static_cast<double>(kMortonCells);
  lo_x = c.lo_x + ix * cell;
  lo_y = c.lo_y + iy * cell;
  lo_z = c.lo_z + iz * cell;
}

}  // namespace

void compute_morton_keys(const double* x, const double* y, const double* z, std::size_t n,
                         const BoundingCube& c, std::uint64_t* keys) {
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < nn; ++i)
    keys[i] = morton_key(x[i], y[i], z[i], c.lo_x, c.lo_y, c.lo_z, c.side);
}

namespace {

// Key bits below kLowBits are left to the fix-up of sort_keys: in a Morton key they only
// order particles within a cell of 1/2^16 of the box side, which rarely holds two of them.
constexpr int kLowBits = 3 * kMortonBits - 48;  // 15: the radix passes sort the top 48 bits
constexpr int kDigitBits = 12;
constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
constexpr int kPasses = 48 / kDigitBits;  // 4
// Threads share the scatter's destination lines at the edges of every (bucket, thread) range;
// with a few keys per bucket and thread that false sharing costs more than the second core
// gives (2 cores: one thread sorts 8192 keys 2x and 65536 keys 1.3-1.7x faster than two; two
// win from 131072 on): at least this many keys per thread, i.e. 16 per bucket.
constexpr std::size_t kMinKeysPerThread = 16 * kBuckets;

// Stable LSD radix sort of (keys, idx) by the key bits [kLowBits, 63), 12 bits per pass,
// OpenMP-parallel from 2 kMinKeysPerThread keys on; passes whose digit is the same for every key
// are skipped. idx_a and idx_b are two index buffers of n entries (contents ignored: the first pass
// that moves data writes 0..n-1 in its order). keys ends sorted in place; returns the buffer that
// holds the index, or nullptr when every pass was skipped (the index is then the identity). Scratch
// arrays are allocated without being zeroed: every entry is written before it is read.
template <class Idx>
Idx* radix_sort_high(std::vector<std::uint64_t>& keys, Idx* idx_a, Idx* idx_b) {
  const std::size_t n = keys.size();
  const auto tmp_keys = std::make_unique_for_overwrite<std::uint64_t[]>(n);
  const int max_threads = static_cast<int>(std::clamp<std::size_t>(
      n / kMinKeysPerThread, 1, static_cast<std::size_t>(omp_get_max_threads())));
  std::vector<std::size_t> hist(static_cast<std::size_t>(max_threads) * kBuckets);
  bool skip = false;
  std::uint64_t* keys_at = keys.data();
  Idx* idx_at = nullptr;
#pragma omp parallel num_threads(max_threads)
  {
    // Each thread swaps its own copies of the buffer pointers after every pass.
    std::uint64_t* src_k = keys.data();
    Idx* src_i = idx_a;
    std::uint64_t* dst_k = tmp_keys.get();
    Idx* dst_i = idx_b;
    bool first = true;  // src_i not yet written: the index of element i is i
    const int t = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    const std::size_t b = n * t / nt, e = n * (t + 1) / nt;
    for (int pass = 0; pass < kPasses; ++pass) {
      const int shift = kLowBits + pass * kDigitBits;
      std::size_t* h = hist.data() + static_cast<std::size_t>(t) * kBuckets;
      std::fill(h, h + kBuckets, 0);
      for (std::size_t i = b; i < e; ++i) ++h[(src_k[i] >> shift) & (kBuckets - 1)];
#pragma omp barrier
#pragma omp single
      {
        // Exclusive prefix over (digit, thread): thread t's keys of digit d go after all
        // keys of smaller digits and after threads < t's keys of digit d (stability).
        std::size_t sum = 0;
        skip = false;
        for (std::size_t d = 0; d < kBuckets; ++d) {
          std::size_t count_d = 0;
          for (int u = 0; u < nt; ++u) {
            std::size_t& c = hist[static_cast<std::size_t>(u) * kBuckets + d];
            count_d += c;
            const std::size_t off = sum;
            sum += c;
            c = off;
          }
          if (count_d == n) skip = true;  // every key has this digit: nothing to do
        }
      }  // implicit barrier
      if (!skip) {
        for (std::size_t i = b; i < e; ++i) {
          const std::size_t pos = h[(src_k[i] >> shift) & (kBuckets - 1)]++;
          dst_k[pos] = src_k[i];
          dst_i[pos] = first ? static_cast<Idx>(i) : src_i[i];
        }
        first = false;
#pragma omp barrier
        std::swap(src_k, dst_k);
        std::swap(src_i, dst_i);
      }
#pragma omp barrier
    }
#pragma omp single
    {
      keys_at = src_k;
      idx_at = first ? nullptr : src_i;
    }
  }
  if (keys_at != keys.data()) {  // an odd number of passes moved data
    const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t k = 0; k < nn; ++k) keys[k] = keys_at[k];
  }
  return idx_at;
}

// Runs longer than this are ordered by two counting-sort passes over their low 15 bits (8 + 7)
// instead of std::stable_sort: a cluster within 1/2^16 of the box side of each other, e.g. a
// whole system beside an escaper 1e6 away, is one such run (1e5 particles: ~8 ms serial with
// the comparison sort).
constexpr std::size_t kRadixRun = 2048;
static_assert(kLowBits > 8 && kLowBits <= 16, "two passes of at most 8 bits");

// Within each run of keys equal in their bits [kLowBits, 63) (input order, from the stable
// radix passes), orders by the whole key, stably (runs that need it are rare: particles
// within 1/2^16 of the box side of each other). Parallel over runs.
void sort_low_bits(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& index) {
  const std::size_t n = keys.size();
  auto high = [&](std::size_t k) { return keys[k] >> kLowBits; };
  // A run holds a copy of its keys and indices (32 B per particle; a whole system beside a far
  // escaper is one run): a failed allocation is rethrown after the region.
  ParallelErrors errors;
#pragma omp parallel
  errors.run([&] {
    const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    // This thread's runs: those that start in [b, e).
    std::size_t b = n * t / nt, e = n * (t + 1) / nt;
    while (b > 0 && b < n && high(b) == high(b - 1)) ++b;
    while (e > 0 && e < n && high(e) == high(e - 1)) ++e;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> run, tmp;
    for (std::size_t r = b; r < e;) {
      std::size_t q = r + 1;
      bool sorted = true;
      for (; q < n && high(q) == high(r); ++q) sorted = sorted && keys[q - 1] <= keys[q];
      if (!sorted) {
        run.clear();
        for (std::size_t k = r; k < q; ++k) run.emplace_back(keys[k], index[k]);
        if (q - r <= kRadixRun) {
          std::stable_sort(run.begin(), run.end(),
                           [](const auto& x, const auto& y) { return x.first < y.first; });
        } else {  // stable LSD passes over bits [0, 8) and [8, 15)
          tmp.resize(run.size());
          for (const auto& [shift, bits] : {std::pair{0, 8}, std::pair{8, kLowBits - 8}}) {
            std::array<std::size_t, 257> count{};
            const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
            for (const auto& kv : run) ++count[((kv.first >> shift) & mask) + 1];
            for (std::size_t d = 1; d < count.size(); ++d) count[d] += count[d - 1];
            for (const auto& kv : run) tmp[count[(kv.first >> shift) & mask]++] = kv;
            run.swap(tmp);
          }
        }
        for (std::size_t k = r; k < q; ++k) std::tie(keys[k], index[k]) = run[k - r];
      }
      r = q;
    }
  });
  errors.rethrow();
}

}  // namespace

void sort_keys(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& index) {
  const std::size_t n = keys.size();
  index.resize(n);
  if (n < 2) {
    if (n == 1) index[0] = 0;
    return;
  }
  // 32-bit indices while they suffice: 12 instead of 16 bytes moved per key and pass.
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
  auto sort_high = [&](auto* a, auto* b) {
    const auto* idx = radix_sort_high(keys, a, b);
    if (!idx) {
      std::iota(index.begin(), index.end(), std::uint64_t{0});
      return;
    }
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t k = 0; k < nn; ++k) index[k] = idx[k];
  };
  if (n <= std::numeric_limits<std::uint32_t>::max())
    sort_high(std::make_unique_for_overwrite<std::uint32_t[]>(n).get(),
              std::make_unique_for_overwrite<std::uint32_t[]>(n).get());
  else
    sort_high(std::make_unique_for_overwrite<std::uint64_t[]>(n).get(),
              std::make_unique_for_overwrite<std::uint64_t[]>(n).get());
  sort_low_bits(keys, index);
}

namespace {

// The deepest level to which the crowded cell of `key` may be split, from 22 up to 42 (or 21:
// not at all): its nodes' geometry must stay well above the coordinates' resolution, at least
// kDeepUlps ulps of the largest coordinate in the cell (centres of mass and cell corners are
// rounded to an ulp: ~1e-4 of the node's side at most), and the float moments of a node that
// holds the run's heaviest particle, m_max side^2 (quadrupole, mr2 and the relative
// criterion's M l^2), at least kDeepMoment, far above float's smallest normal (2^-126) so that
// they keep their 24 bits. Past either bound a node is a leaf: its particles are summed
// pairwise, with relative positions in double, exactly as a whole crowded cell was before.
// The heaviest, not the lightest: one particle of 1e-30 the others' mass in a cell kept it
// whole (7.8x the p-p terms of Plummer 1e5 beside an escaper, review); a node of such light
// particles alone may have moments below float's range, and its force is as small.
constexpr double kDeepUlps = 4096;
constexpr double kDeepMoment = 0x1.0p-100;

// Crowded cells of more particles than this are keyed, sorted and permuted with all threads
// each (one after the other); smaller ones in parallel, one thread each.
constexpr std::uint64_t kBigDeepRun = std::uint64_t{1} << 16;

int deep_level_cap(std::uint64_t key, const BoundingCube& cube, double m_max) {
  double lo_x, lo_y, lo_z;
  deep_cell_corner(key, cube, lo_x, lo_y, lo_z);
  const double cell = cube.side / static_cast<double>(kMortonCells);
  const double c = std::max({std::abs(lo_x), std::abs(lo_y), std::abs(lo_z)}) + cell;
  const double min_side = kDeepUlps * (std::nextafter(c, HUGE_VAL) - c);
  int level = kMortonMaxLevel;
  while (level < kTreeMaxLevel) {
    const double side = std::ldexp(cube.side, -(level + 1));
    if (side < min_side || m_max * side * side < kDeepMoment) break;
    ++level;
  }
  return level;
}

}  // namespace

void key_deep_cells(const std::uint64_t* keys, const double* x, const double* y, const double* z,
                    const double* m, std::size_t n, const BoundingCube& cube, int n_leaf,
                    DeepCells& deep) {
  deep.runs.clear();
  deep.start.clear();
  deep.keys.clear();
  deep.order.clear();
  const std::uint64_t leaf = static_cast<std::uint64_t>(std::max(1, n_leaf));
  // The runs of more than `leaf` equal keys, each found by the thread in whose share of [0, n)
  // it starts; the threads' lists in order are the runs in order.
  std::vector<std::vector<DeepCells::Run>> found(static_cast<std::size_t>(omp_get_max_threads()));
  ParallelErrors errors;
#pragma omp parallel
  errors.run([&] {
    const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::size_t b = n * t / nt;
    const std::size_t e = n * (t + 1) / nt;
    while (b > 0 && b < n && keys[b] == keys[b - 1]) ++b;
    for (std::size_t r = b; r < e;) {
      std::size_t q = r + 1;
      while (q < n && keys[q] == keys[r]) ++q;
      if (q - r > leaf) {
        double m_max = 0;
        for (std::size_t k = r; k < q; ++k) m_max = std::max(m_max, m[k]);
        // A cell that cannot be split (cap 21) is still ordered below: it is a leaf of more
        // than n_leaf particles that the group walks cut into groups in order.
        found[t].push_back({r, q, deep_level_cap(keys[r], cube, m_max)});
      }
      r = q;
    }
  });
  errors.rethrow();
  std::uint64_t total = 0;
  for (const auto& f : found)
    for (const DeepCells::Run& run : f) {
      deep.runs.push_back(run);
      deep.start.push_back(total);
      total += run.end - run.begin;
    }
  if (deep.runs.empty()) return;
  deep.keys.resize(total);
  deep.order.resize(total);
  const double cell = cube.side / static_cast<double>(kMortonCells);
  const std::ptrdiff_t nr = static_cast<std::ptrdiff_t>(deep.runs.size());
  // Particles with one key inside the cell too (a cell at the deepest level, or one that cannot
  // be split, holds a whole cluster beside an escaper 1e12 away) are ordered by position, then
  // mass, then input position: the groups that the walks cut from such a leaf, and so the
  // forces, were those of the input order (1.7e-3 apart for Plummer 2e4 shuffled).
  const auto by_position = [&](std::uint64_t begin) {
    return [=](std::uint64_t a, std::uint64_t b) {
      const std::uint64_t i = begin + a, j = begin + b;
      if (x[i] != x[j]) return x[i] < x[j];
      if (y[i] != y[j]) return y[i] < y[j];
      if (z[i] != z[j]) return z[i] < z[j];
      if (m[i] != m[j]) return m[i] < m[j];
      return a < b;
    };
  };
  // Big runs (a whole system beside a far escaper, or a cusp at 1e8) one after the other, each
  // keyed in parallel and sorted by the parallel radix sort_keys (stable: its index is the
  // position in the run), then its stretches of equal keys by position in parallel; the others
  // in parallel over runs, each by one thread.
  for (std::ptrdiff_t r = 0; r < nr; ++r) {
    const DeepCells::Run run = deep.runs[r];
    const std::uint64_t len = run.end - run.begin;
    if (len <= kBigDeepRun) continue;
    double lo_x, lo_y, lo_z;
    deep_cell_corner(keys[run.begin], cube, lo_x, lo_y, lo_z);
    std::vector<std::uint64_t> sub(len), index;
    const std::ptrdiff_t nl = static_cast<std::ptrdiff_t>(len);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t s = 0; s < nl; ++s) {
      const std::uint64_t k = run.begin + static_cast<std::uint64_t>(s);
      sub[s] = morton_key(x[k], y[k], z[k], lo_x, lo_y, lo_z, cell);
    }
    sort_keys(sub, index);
    std::vector<std::pair<std::size_t, std::size_t>> ties;  // [a, b) of one key, b - a > 1
    for (std::size_t a = 0, b; a < sub.size(); a = b) {
      for (b = a + 1; b < sub.size() && sub[b] == sub[a];) ++b;
      if (b - a > 1) ties.emplace_back(a, b);
    }
    const std::ptrdiff_t nt = static_cast<std::ptrdiff_t>(ties.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t s = 0; s < nt; ++s)
      std::sort(index.begin() + static_cast<std::ptrdiff_t>(ties[s].first),
                index.begin() + static_cast<std::ptrdiff_t>(ties[s].second),
                by_position(run.begin));
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t s = 0; s < nl; ++s) {
      deep.keys[deep.start[r] + s] = sub[s];
      deep.order[deep.start[r] + s] = index[s];
    }
  }
  ParallelErrors small_runs;
#pragma omp parallel
  {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> sub;  // (key in the cell, position)
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t r = 0; r < nr; ++r)
      small_runs.run([&] {
        const DeepCells::Run run = deep.runs[r];
        if (run.end - run.begin > kBigDeepRun) return;
        double lo_x, lo_y, lo_z;
        deep_cell_corner(keys[run.begin], cube, lo_x, lo_y, lo_z);
        sub.clear();
        for (std::uint64_t k = run.begin; k < run.end; ++k)
          sub.emplace_back(morton_key(x[k], y[k], z[k], lo_x, lo_y, lo_z, cell), k - run.begin);
        const auto tie = by_position(run.begin);
        std::sort(sub.begin(), sub.end(), [&](const auto& a, const auto& b) {
          return a.first != b.first ? a.first < b.first : tie(a.second, b.second);
        });
        for (std::size_t s = 0; s < sub.size(); ++s)
          std::tie(deep.keys[deep.start[r] + s], deep.order[deep.start[r] + s]) = sub[s];
      });
  }
  small_runs.rethrow();
}

template <class T>
void DeepCells::permute(T* a) const {
  const std::ptrdiff_t nr = static_cast<std::ptrdiff_t>(runs.size());
  for (std::ptrdiff_t r = 0; r < nr; ++r) {  // big runs: each in parallel
    const Run& run = runs[r];
    if (run.end - run.begin <= kBigDeepRun) continue;
    const std::ptrdiff_t len = static_cast<std::ptrdiff_t>(run.end - run.begin);
    std::vector<T> old(static_cast<std::size_t>(len));
    const std::uint64_t* o = order.data() + start[r];
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t k = 0; k < len; ++k) old[k] = a[run.begin + k];
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t k = 0; k < len; ++k) a[run.begin + k] = old[o[k]];
  }
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t r = 0; r < nr; ++r)
    errors.run([&] {
      const Run& run = runs[r];
      if (run.end - run.begin > kBigDeepRun) return;
      const std::vector<T> old(a + run.begin, a + run.end);
      const std::uint64_t* o = order.data() + start[r];
      for (std::uint64_t k = 0; k < run.end - run.begin; ++k) a[run.begin + k] = old[o[k]];
    });
  errors.rethrow();
}
template void DeepCells::permute(double*) const;
template void DeepCells::permute(std::uint64_t*) const;
template void DeepCells::permute(std::uint32_t*) const;

namespace {

// The parallel units of the tree build and of the moments: subtrees of at most this many
// particles, found by particle count rather than at a fixed level, so that a centrally
// concentrated system (a Plummer sphere in the cube of its outliers holds most particles in a
// few level-3 cells) still splits into ~n / 4096 balanced tasks (with level-3 subtrees, the
// build and the moments stopped scaling beyond 4 threads on a 16-core host).
inline std::size_t task_particles(std::size_t n) {
  return std::max<std::size_t>(4096, n / 1024);
}

class OctreeBuilder {
 public:
  OctreeBuilder(const std::uint64_t* keys, const BoundingCube& cube, int n_leaf,
                const DeepCells* deep)
      : keys_(keys),
        cube_(cube),
        n_leaf_(static_cast<std::size_t>(n_leaf)),
        deep_(deep && !deep->empty() ? deep : nullptr) {}

  // Number of nodes of the subtree over [b, e) at `level`; raises `deepest` to the level of
  // its deepest node.
  std::uint64_t count_subtree(std::size_t b, std::size_t e, int level, int& deepest) const {
    deepest = std::max(deepest, level);
    if (is_leaf(b, e, level)) return 1;
    std::uint64_t c = 1;
    for_each_child(b, e, level, [&](std::size_t cb, std::size_t ce) {
      c += count_subtree(cb, ce, level + 1, deepest);
    });
    return c;
  }

  // Writes the subtree over [b, e) in pre-order at nodes[i], nodes[i + 1], ...; returns the
  // index after it.
  std::uint32_t write_subtree(std::size_t b, std::size_t e, int level, TreeNode* nodes,
                              std::uint32_t i) const {
    nodes[i] = make_node(b, e, level);
    std::uint32_t j = i + 1;
    if (!is_leaf(b, e, level)) {
      nodes[i].first_child = j;
      for_each_child(b, e, level, [&](std::size_t cb, std::size_t ce) {
        j = write_subtree(cb, ce, level + 1, nodes, j);
      });
    }
    nodes[i].next = j;
    return j;
  }

  // The whole tree, in two parallel passes and without intermediate copies (the node array
  // is the largest array of the tree): the nodes with more than task_particles(n) particles
  // (the skeleton) are listed in pre-order with the subtrees that hang below them; the
  // subtrees' node counts are computed in parallel, giving every subtree its place; then each
  // is written there.
  // Returns the level of the deepest node.
  int build(std::size_t n, std::vector<TreeNode>& nodes) const {
    struct Item {
      std::size_t b, e;
      int level;
      bool subtree;
      std::uint64_t count = 1, index = 0, next = 0;
      int deepest = 0;
    };
    std::vector<Item> items;
    const std::size_t task = task_particles(n);
    auto collect = [&](auto&& self, std::size_t b, std::size_t e, int level) -> void {
      const bool subtree = e - b <= task || is_leaf(b, e, level);
      items.push_back({b, e, level, subtree});
      if (subtree) return;
      for_each_child(b, e, level,
                     [&](std::size_t cb, std::size_t ce) { self(self, cb, ce, level + 1); });
    };
    collect(collect, 0, n, 0);
    const std::ptrdiff_t ni = static_cast<std::ptrdiff_t>(items.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t k = 0; k < ni; ++k)
      if (items[k].subtree)
        items[k].count = count_subtree(items[k].b, items[k].e, items[k].level, items[k].deepest);
    // Indices in pre-order; a skeleton node's next is the index where the first later item of
    // its level or above starts.
    std::uint64_t total = 0;
    int deepest = 0;
    std::vector<std::size_t> open;
    for (std::size_t k = 0; k < items.size(); ++k) {
      deepest = std::max({deepest, items[k].level, items[k].deepest});
      while (!open.empty() && items[open.back()].level >= items[k].level) {
        items[open.back()].next = total;
        open.pop_back();
      }
      items[k].index = total;
      total += items[k].count;
      if (!items[k].subtree) open.push_back(k);
    }
    for (std::size_t k : open) items[k].next = total;
    if (total >= std::numeric_limits<std::uint32_t>::max())
      throw std::length_error("build_octree: " + std::to_string(total) +
                              " nodes exceed 32-bit node indices");
    nodes.resize(total);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t k = 0; k < ni; ++k) {
      const Item& it = items[k];
      if (it.subtree) {
        write_subtree(it.b, it.e, it.level, nodes.data(), static_cast<std::uint32_t>(it.index));
      } else {
        TreeNode& nd = nodes[it.index];
        nd = make_node(it.b, it.e, it.level);
        nd.first_child = static_cast<std::uint32_t>(it.index + 1);
        nd.next = static_cast<std::uint32_t>(it.next);
      }
    }
    return deepest;
  }

 private:
  // Below level 21 a node lies in one crowded cell: the run of deep_ that holds position b
  // (a level-21 node with more than n_leaf particles is a whole run); -1 if none.
  std::ptrdiff_t run_of(std::size_t b) const {
    if (!deep_) return -1;
    const auto& runs = deep_->runs;
    auto it =
        std::upper_bound(runs.begin(), runs.end(), std::uint64_t{b},
                         [](std::uint64_t v, const DeepCells::Run& r) { return v < r.begin; });
    if (it == runs.begin() || b >= (--it)->end) return -1;
    return it - runs.begin();
  }

  // The key of sorted position k in run r, inside its cell.
  std::uint64_t deep_key(std::ptrdiff_t r, std::size_t k) const {
    return deep_->keys[deep_->start[r] + (k - deep_->runs[r].begin)];
  }

  bool is_leaf(std::size_t b, std::size_t e, int level) const {
    if (e - b <= n_leaf_) return true;
    if (level < kMortonMaxLevel) return false;
    const std::ptrdiff_t r = run_of(b);
    return r < 0 || level >= deep_->runs[r].max_level;
  }

  // Calls f(cb, ce) for each non-empty child range in octant order: the digit of the child's
  // level of the Morton key, below level 21 of the key inside the crowded cell.
  template <class F>
  void for_each_child(std::size_t b, std::size_t e, int level, F&& f) const {
    const int child_level = level + 1;
    if (child_level <= kMortonMaxLevel) {
      split_children(b, e, f, [&](std::size_t k) { return morton_octant(keys_[k], child_level); });
    } else {
      const std::ptrdiff_t r = run_of(b);
      const int sub_level = child_level - kMortonMaxLevel;
      split_children(b, e, f,
                     [&](std::size_t k) { return morton_octant(deep_key(r, k), sub_level); });
    }
  }

  // The octants of [b, e) ascend (sorted keys): binary search for the end of each.
  template <class F, class Octant>
  static void split_children(std::size_t b, std::size_t e, F& f, const Octant& octant) {
    std::size_t cb = b;
    for (unsigned o = 0; o < 8 && cb < e; ++o) {
      std::size_t lo = cb, hi = e;  // first position whose octant exceeds o
      while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (octant(mid) <= o)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo > cb) f(cb, lo);
      cb = lo;
    }
  }

  TreeNode make_node(std::size_t b, std::size_t e, int level) const {
    TreeNode n{};
    n.begin = b;
    n.end = e;
    n.side = std::ldexp(cube_.side, -level);
    std::uint32_t ix, iy, iz;
    const double cell = cube_.side / static_cast<double>(kMortonCells);
    if (level <= kMortonMaxLevel) {
      morton_decode(morton_cell_prefix(keys_[b], level), ix, iy, iz);
      n.cx = cube_.lo_x + ix * cell + 0.5 * n.side;
      n.cy = cube_.lo_y + iy * cell + 0.5 * n.side;
      n.cz = cube_.lo_z + iz * cell + 0.5 * n.side;
    } else {  // inside a crowded cell: its corner plus the cell's own keys' cells
      double lo_x, lo_y, lo_z;
      deep_cell_corner(keys_[b], cube_, lo_x, lo_y, lo_z);
      morton_decode(morton_cell_prefix(deep_key(run_of(b), b), level - kMortonMaxLevel), ix, iy,
                    iz);
      const double fine = cell / static_cast<double>(kMortonCells);
      n.cx = lo_x + ix * fine + 0.5 * n.side;
      n.cy = lo_y + iy * fine + 0.5 * n.side;
      n.cz = lo_z + iz * fine + 0.5 * n.side;
    }
    return n;
  }

  const std::uint64_t* keys_;
  BoundingCube cube_;
  std::size_t n_leaf_;
  const DeepCells* deep_;
};

}  // namespace

int build_octree(const std::uint64_t* keys, std::size_t n, const BoundingCube& cube, int n_leaf,
                 std::vector<TreeNode>& nodes, const DeepCells* deep) {
  if (n_leaf < 1)
    throw std::invalid_argument("invalid n_leaf " + std::to_string(n_leaf) + " (must be >= 1)");
  if (n == 0) {
    nodes.clear();
    return 0;
  }
  // Every node is assigned in full by build(), so a node array kept from the previous
  // evaluation is resized, not cleared: only nodes beyond its old size are zeroed first.
  return OctreeBuilder(keys, cube, n_leaf, deep).build(n, nodes);
}

namespace {

// Double-precision moments of one node, used while combining children.
// No member initialisers: the per-node array is allocated without zeroing (every entry is
// assigned, Moments{} being all zeros).
struct Moments {
  double m, x, y, z;
  double qxx, qxy, qxz, qyy, qyz, qzz;
  double mr2;  // sum m |x - com|^2
};

// Centre of mass from the mass M and the mass-weighted offsets (sx, sy, sz) from the node's
// geometric centre; the geometric centre when the node is massless.
void set_centre_of_mass(const TreeNode& n, double M, double sx, double sy, double sz, Moments& r) {
  r.x = n.cx + (M > 0 ? sx / M : 0.0);
  r.y = n.cy + (M > 0 ? sy / M : 0.0);
  r.z = n.cz + (M > 0 ? sz / M : 0.0);
}

void leaf_moments(const TreeNode& n, const double* x, const double* y, const double* z,
                  const double* m, Moments& r) {
  double M = 0, sx = 0, sy = 0, sz = 0;
  // Relative to the node centre for precision, then shifted.
  for (std::uint64_t j = n.begin; j < n.end; ++j) {
    M += m[j];
    sx += m[j] * (x[j] - n.cx);
    sy += m[j] * (y[j] - n.cy);
    sz += m[j] * (z[j] - n.cz);
  }
  r = Moments{};
  r.m = M;
  if (n.end - n.begin == 1) {  // exact: no round-off quadrupole (float denormals are slow)
    r.x = x[n.begin];
    r.y = y[n.begin];
    r.z = z[n.begin];
    return;
  }
  set_centre_of_mass(n, M, sx, sy, sz, r);
  for (std::uint64_t j = n.begin; j < n.end; ++j) {
    const double dx = x[j] - r.x, dy = y[j] - r.y, dz = z[j] - r.z;
    const double r2 = dx * dx + dy * dy + dz * dz;
    r.qxx += m[j] * (3 * dx * dx - r2);
    r.qxy += m[j] * (3 * dx * dy);
    r.qxz += m[j] * (3 * dx * dz);
    r.qyy += m[j] * (3 * dy * dy - r2);
    r.qyz += m[j] * (3 * dy * dz);
    r.qzz += m[j] * (3 * dz * dz - r2);
    r.mr2 += m[j] * r2;
  }
}

void internal_moments(std::uint32_t i, const std::vector<TreeNode>& nodes, const Moments* mom,
                      Moments& r) {
  const TreeNode& n = nodes[i];
  double M = 0, sx = 0, sy = 0, sz = 0;
  for (std::uint32_t c = n.first_child; c < n.next; c = nodes[c].next) {
    M += mom[c].m;
    sx += mom[c].m * (mom[c].x - n.cx);
    sy += mom[c].m * (mom[c].y - n.cy);
    sz += mom[c].m * (mom[c].z - n.cz);
  }
  r = Moments{};
  r.m = M;
  set_centre_of_mass(n, M, sx, sy, sz, r);
  // Parallel-axis shift of each child's traceless quadrupole to the parent's com.
  for (std::uint32_t c = n.first_child; c < n.next; c = nodes[c].next) {
    const Moments& k = mom[c];
    const double dx = k.x - r.x, dy = k.y - r.y, dz = k.z - r.z;
    const double r2 = dx * dx + dy * dy + dz * dz;
    r.qxx += k.qxx + k.m * (3 * dx * dx - r2);
    r.qxy += k.qxy + k.m * (3 * dx * dy);
    r.qxz += k.qxz + k.m * (3 * dx * dz);
    r.qyy += k.qyy + k.m * (3 * dy * dy - r2);
    r.qyz += k.qyz + k.m * (3 * dy * dz);
    r.qzz += k.qzz + k.m * (3 * dz * dz - r2);
    r.mr2 += k.mr2 + k.m * r2;
  }
}

// Distance from (px, py, pz) to the farthest particle of node c, given the exact b_max of
// every node below c (bmax, double) and the centres of mass (mom); `best` is a distance
// already reached. A child whose bound |com_child - p| + b_max(child) does not exceed the best
// distance found cannot hold a farther particle and is skipped; children are tried in order
// of decreasing bound, so the farthest is usually found on the first path and the rest is
// pruned: b_max stays exact at a cost of a few nodes per node instead of a pass over all the
// node's particles at every level (O(N depth)).
double farthest_below(std::uint32_t c, double px, double py, double pz, double best,
                      const std::vector<TreeNode>& nodes, const Moments* mom, const double* bmax,
                      const double* x, const double* y, const double* z) {
  const TreeNode& n = nodes[c];
  if (n.first_child == 0) {
    double b2 = best * best;
    for (std::uint64_t j = n.begin; j < n.end; ++j) {
      const double dx = x[j] - px, dy = y[j] - py, dz = z[j] - pz;
      b2 = std::max(b2, dx * dx + dy * dy + dz * dz);
    }
    return std::sqrt(b2);
  }
  std::array<std::pair<double, std::uint32_t>, 8> child;
  int nc = 0;
  for (std::uint32_t k = n.first_child; k < n.next; k = nodes[k].next) {
    const double dx = mom[k].x - px, dy = mom[k].y - py, dz = mom[k].z - pz;
    child[nc++] = {std::sqrt(dx * dx + dy * dy + dz * dz) + bmax[k], k};
  }
  std::sort(child.begin(), child.begin() + nc,
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (int k = 0; k < nc && child[k].first > best; ++k)
    best = farthest_below(child[k].second, px, py, pz, best, nodes, mom, bmax, x, y, z);
  return best;
}

// A float quadrupole component below FLT_MIN is round-off of a (nearly) point-like node and
// would be a denormal, which makes the SIMD kernels several times slower: store it as 0.
float quad_float(double q) {
  return std::abs(q) < static_cast<double>(std::numeric_limits<float>::min())
             ? 0.0f
             : static_cast<float>(q);
}

void store(TreeNode& n, const Moments& r) {
  n.com_x = r.x;
  n.com_y = r.y;
  n.com_z = r.z;
  n.m = r.m;
  n.qxx = quad_float(r.qxx);
  n.qxy = quad_float(r.qxy);
  n.qxz = quad_float(r.qxz);
  n.qyy = quad_float(r.qyy);
  n.qyz = quad_float(r.qyz);
  n.qzz = quad_float(r.qzz);
  n.mr2 = quad_float(r.mr2);
}

void set_critical_radius(TreeNode& n, Criterion criterion, double theta, double kernel_radius) {
  const double dx = n.com_x - n.cx, dy = n.com_y - n.cy, dz = n.com_z - n.cz;
  const double delta = std::sqrt(dx * dx + dy * dy + dz * dz);
  // Guard: never accept a node from inside the sphere of radius b_max around its centre of
  // mass, which holds all of its particles, so a target (or group box) never uses a cell
  // that contains itself. It binds only for bh at theta > 1/sqrt(3), barnes94 at
  // theta > 2/sqrt(3) and bmax at theta >= 1 (the known self-acceptance flaw of the plain
  // criteria, Salmon & Warren 1994). The factor covers the float rounding of b_max.
  // kernel_radius (the spline's h) widens it so that every particle of an accepted node is
  // beyond h from every target, where the kernel, and so the unsoftened cell term, is exactly
  // Newtonian; without it a node within h was used as a point mass of 1/r^2 force (errors of
  // order 1 at eps comparable to the interparticle distance; Gadget-2 instead softens the
  // monopole of such a node).
  const double guard = static_cast<double>(n.b_max) * (1 + 1e-6) + kernel_radius;
  n.rcrit2 = std::max(mac_rcrit2(criterion, theta, n.side, delta, n.b_max), guard * guard);
}

}  // namespace

double cell_kernel_radius(Softening kernel, double eps) {
  return kernel == Softening::spline ? spline_h_over_eps * eps : 0.0;
}

void set_critical_radii(std::vector<TreeNode>& nodes, Criterion criterion, double theta,
                        double kernel_radius) {
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(nodes.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < nn; ++i)
    set_critical_radius(nodes[i], criterion, theta, kernel_radius);
}

void compute_multipoles(std::vector<TreeNode>& nodes, const double* x, const double* y,
                        const double* z, const double* m, Criterion criterion, double theta,
                        double kernel_radius) {
  const std::uint32_t nn = static_cast<std::uint32_t>(nodes.size());
  if (nn == 0) return;
  const auto mom_buf = std::make_unique_for_overwrite<Moments[]>(nn);
  Moments* const mom = mom_buf.get();
  // Independent subtrees: the largest nodes of at most task_particles particles (and leaves
  // above them), each processed bottom-up (reverse pre-order: children follow their parent) by
  // one thread; then the nodes above them (the skeleton), in reverse pre-order.
  const std::uint64_t task = task_particles(nodes[0].end - nodes[0].begin);
  std::vector<std::uint32_t> roots, skeleton;
  for (std::uint32_t i = 0; i < nn;) {
    if (nodes[i].end - nodes[i].begin <= task || nodes[i].first_child == 0) {
      roots.push_back(i);
      i = nodes[i].next;
    } else {
      skeleton.push_back(i);
      ++i;
    }
  }
  const auto bmax_buf = std::make_unique_for_overwrite<double[]>(nn);
  double* const bmax = bmax_buf.get();
  // Children come after their parent in pre-order: in reverse order a node's children (and
  // their b_max) are done before it.
  auto one_node = [&](std::uint32_t i) {
    if (nodes[i].first_child == 0)
      leaf_moments(nodes[i], x, y, z, m, mom[i]);
    else
      internal_moments(i, nodes, mom, mom[i]);
    bmax[i] = farthest_below(i, mom[i].x, mom[i].y, mom[i].z, 0.0, nodes, mom, bmax, x, y, z);
    // The node's stored fields now, while it is in cache (the walk reads only these; the
    // double moments stay in mom for the parent).
    TreeNode& n = nodes[i];
    store(n, mom[i]);
    n.b_max = static_cast<float>(bmax[i]);
    set_critical_radius(n, criterion, theta, kernel_radius);
  };
  const std::ptrdiff_t nr = static_cast<std::ptrdiff_t>(roots.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t r = 0; r < nr; ++r) {
    const std::uint32_t root = roots[r];
    for (std::uint32_t i = nodes[root].next; i-- > root;) one_node(i);
  }
  for (std::size_t k = skeleton.size(); k-- > 0;) one_node(skeleton[k]);
}

TreeView Octree::view() const {
  TreeView v;
  v.nodes = nodes.data();
  v.n_nodes = static_cast<std::uint32_t>(nodes.size());
  v.x = x.data();
  v.y = y.data();
  v.z = z.data();
  v.m = m.data();
  v.n_particles = x.size();
  v.lo_x = cube.lo_x;
  v.lo_y = cube.lo_y;
  v.lo_z = cube.lo_z;
  v.side = cube.side;
  v.max_level = static_cast<std::uint32_t>(max_level);
  return v;
}

std::size_t Octree::bytes() const {
  return (keys.capacity() + index.capacity()) * sizeof(std::uint64_t) +
         (x.capacity() + y.capacity() + z.capacity() + m.capacity()) * sizeof(double) +
         nodes.capacity() * sizeof(TreeNode) + deep.runs.capacity() * sizeof(DeepCells::Run) +
         (deep.start.capacity() + deep.keys.capacity() + deep.order.capacity()) *
             sizeof(std::uint64_t);
}

void build_tree(const ParticleSet& p, const TreeBuildParams& params, Octree& t, PhaseTimes& times) {
  const std::size_t n = p.size();
  Stopwatch sw;
  t.cube = bounding_cube(p.x.data(), p.y.data(), p.z.data(), n);
  t.keys.resize(n);
  compute_morton_keys(p.x.data(), p.y.data(), p.z.data(), n, t.cube, t.keys.data());
  times["keys"] += sw.seconds();

  sw.restart();
  sort_keys(t.keys, t.index);
  times["sort"] += sw.seconds();

  sw.restart();
  t.x.resize(n);
  t.y.resize(n);
  t.z.resize(n);
  t.m.resize(n);
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < nn; ++k) {
    const std::size_t i = t.index[k];
    t.x[k] = p.x[i];
    t.y[k] = p.y[i];
    t.z[k] = p.z[i];
    t.m[k] = p.m[i];
  }
  key_deep_cells(t.keys.data(), t.x.data(), t.y.data(), t.z.data(), t.m.data(), n, t.cube,
                 params.n_leaf, t.deep);
  if (!t.deep.empty()) {
    t.deep.permute(t.index.data());
    t.deep.permute(t.x.data());
    t.deep.permute(t.y.data());
    t.deep.permute(t.z.data());
    t.deep.permute(t.m.data());
  }
  times["permute"] += sw.seconds();

  sw.restart();
  t.max_level = build_octree(t.keys.data(), n, t.cube, params.n_leaf, t.nodes, &t.deep);
  times["build"] += sw.seconds();

  sw.restart();
  compute_multipoles(t.nodes, t.x.data(), t.y.data(), t.z.data(), t.m.data(), params.criterion,
                     params.theta, params.kernel_radius);
  times["moments"] += sw.seconds();
}

}  // namespace hoshi
