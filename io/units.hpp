// Unit systems of a run: the numbers written into a snapshot's /Units group and the value of G
// in code units. Every length, velocity and mass hoshi stores is in code units; these say what
// one code unit is in cgs so that yt and pynbody can attach physical units.
#pragma once

#include <string>

#include "core/particle_set.hpp"

namespace hoshi::io {

// Newton's constant in cgs as Gadget-2 uses it; with it the galaxy preset has G = 43007.1.
inline constexpr double kGravityCgs = 6.672e-8;
inline constexpr double kKpcInCm = 3.085678e21;
inline constexpr double kSolarMassInG = 1.989e33;
inline constexpr double kGyrInS = 3.15576e16;  // Julian year, 365.25 d

struct UnitSystem {
  std::string name = "henon";
  double length_cm = kKpcInCm;                    // one code length in cm
  double mass_g = kKpcInCm * 1e10 / kGravityCgs;  // one code mass in g
  double velocity_cm_s = 1e5;                     // one code velocity in cm/s
  bool physical = false;  // false: Henon (G = 1) units (render labels its scale bar in code units)

  double time_s() const { return length_cm / velocity_cm_s; }
  // G in code units: G_cgs M t^2 / L^3 = G_cgs M / (L V^2).
  double G() const { return kGravityCgs * mass_g / (length_cm * velocity_cm_s * velocity_cm_s); }
};

// Henon units: G = 1. For tools that insist on units the scaling written to /Units is the
// usual G = 1 choice 1 kpc, 1 km/s, 2.325e5 Msun (so G computed from /Units is also 1).
UnitSystem units_henon();
// Galaxy units: 1 kpc, 1 km/s, 1e10 Msun; G = 43007.1.
UnitSystem units_galaxy();
// "henon" or "galaxy"; anything else throws std::invalid_argument naming the value.
UnitSystem parse_units(const std::string& name);
// The preset whose scalings match (within 1e-6 relative), else a custom system named "custom".
UnitSystem units_from_cgs(double length_cm, double mass_g, double velocity_cm_s);

// Re-expresses positions, velocities, masses, accelerations and potentials given in `from`
// in the units `to` (a pure change of units; physical quantities are unchanged). Returns the
// factor by which times scale (from.time / to.time).
double convert_units(ParticleSet& p, const UnitSystem& from, const UnitSystem& to);
// A gravitational constant in `from` re-expressed in `to` (G in code units scales as
// M / (L V^2)): the physical G goes to to.G(), any other (a -G run's) in proportion.
inline double convert_G(double G, const UnitSystem& from, const UnitSystem& to) {
  return G * to.G() / from.G();
}
// A G = 1 system with the given length and mass units (velocity = sqrt(G_cgs M / L)): the
// convention of tipsy files (ChaNGa, PKDGRAV, pynbody: dKpcUnit, dMsolUnit).
UnitSystem units_g1(double length_cm, double mass_g);
}  // namespace hoshi::io
