#include "io/units.hpp"

#include <cmath>
#include <stdexcept>

namespace hoshi::io {

UnitSystem units_henon() {
  return UnitSystem{};
}

UnitSystem units_galaxy() {
  UnitSystem u;
  u.name = "galaxy";
  u.length_cm = kKpcInCm;
  u.mass_g = 1e10 * kSolarMassInG;
  u.velocity_cm_s = 1e5;
  u.physical = true;
  return u;
}

UnitSystem parse_units(const std::string& name) {
  if (name == "henon") return units_henon();
  if (name == "galaxy") return units_galaxy();
  throw std::invalid_argument("--units: value '" + name + "' is not one of henon, galaxy");
}

UnitSystem units_from_cgs(double length_cm, double mass_g, double velocity_cm_s) {
  auto close = [](double a, double b) { return std::abs(a - b) <= 1e-6 * std::abs(b); };
  for (const UnitSystem& u : {units_henon(), units_galaxy()})
    if (close(length_cm, u.length_cm) && close(mass_g, u.mass_g) &&
        close(velocity_cm_s, u.velocity_cm_s))
      return u;
  UnitSystem u;
  u.name = "custom";
  u.length_cm = length_cm;
  u.mass_g = mass_g;
  u.velocity_cm_s = velocity_cm_s;
  u.physical = true;
  return u;
}

double convert_units(ParticleSet& p, const UnitSystem& from, const UnitSystem& to) {
  const double l = from.length_cm / to.length_cm, v = from.velocity_cm_s / to.velocity_cm_s,
               m = from.mass_g / to.mass_g, a = v * v / l, phi = v * v;
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.x[i] *= l, p.y[i] *= l, p.z[i] *= l;
    p.vx[i] *= v, p.vy[i] *= v, p.vz[i] *= v;
    p.m[i] *= m;
    p.ax[i] *= a, p.ay[i] *= a, p.az[i] *= a;
    p.pot[i] *= phi;
  }
  return from.time_s() / to.time_s();
}

UnitSystem units_g1(double length_cm, double mass_g) {
  UnitSystem u = units_from_cgs(length_cm, mass_g, std::sqrt(kGravityCgs * mass_g / length_cm));
  return u;
}

}  // namespace hoshi::io
