#include "core/particle_set.hpp"

#include <algorithm>
#include <cassert>

namespace hoshi {

void ParticleSet::resize(std::size_t n) {
  const std::size_t old = size();
  for (auto* a : {&x, &y, &z, &vx, &vy, &vz, &m, &ax, &ay, &az, &pot}) a->resize(n, 0.0);
  id.resize(n);
  for (std::size_t i = old; i < n; ++i) id[i] = i;
}

void ParticleSet::reserve(std::size_t n) {
  for (auto* v : {&x, &y, &z, &vx, &vy, &vz, &m, &ax, &ay, &az, &pot}) v->reserve(n);
  id.reserve(n);
}

void ParticleSet::push_back(double px, double py, double pz, double pvx, double pvy, double pvz,
                            double pm, std::uint64_t pid) {
  x.push_back(px);
  y.push_back(py);
  z.push_back(pz);
  vx.push_back(pvx);
  vy.push_back(pvy);
  vz.push_back(pvz);
  m.push_back(pm);
  id.push_back(pid);
  for (auto* a : {&ax, &ay, &az, &pot}) a->push_back(0.0);
}

void ParticleSet::append(const ParticleSet& o) {
  // The combined size, or 1.5x the old capacity if that is more: one append (the galaxy
  // models' components) allocates exactly, where push_back's doubling left up to twice the
  // length allocated for the whole run; many appends (a multi-file snapshot's members) still
  // grow geometrically, not by a copy of everything per member.
  const std::size_t n = size() + o.size();
  if (n > x.capacity()) {
    const std::size_t c = std::max(n, x.capacity() + x.capacity() / 2);
    for (auto* v : {&x, &y, &z, &vx, &vy, &vz, &m, &ax, &ay, &az, &pot}) v->reserve(c);
    id.reserve(c);
  }
  for (std::size_t i = 0; i < o.size(); ++i)
    push_back(o.x[i], o.y[i], o.z[i], o.vx[i], o.vy[i], o.vz[i], o.m[i], o.id[i]);
}

void ParticleSet::shrink_to_fit() {
  for (auto* v : {&x, &y, &z, &vx, &vy, &vz, &m, &ax, &ay, &az, &pot}) v->shrink_to_fit();
  id.shrink_to_fit();
}

namespace {
template <class T>
void apply(std::vector<T>& a, const std::vector<std::size_t>& perm, std::vector<T>& tmp) {
  tmp.resize(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) tmp[i] = a[perm[i]];
  a.swap(tmp);
}
}  // namespace

void ParticleSet::permute(const std::vector<std::size_t>& perm) {
  assert(perm.size() == size());
  std::vector<double> tmp;
  for (auto* a : {&x, &y, &z, &vx, &vy, &vz, &m, &ax, &ay, &az, &pot}) apply(*a, perm, tmp);
  std::vector<std::uint64_t> tmp_id;
  apply(id, perm, tmp_id);
}

}  // namespace hoshi
