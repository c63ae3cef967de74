// Pictures of a particle set: the projected surface density Sigma(u, v) = sum of masses per
// unit area along one axis, deposited with cloud-in-cell weights, shown on a log scale with a
// colour map and a scale bar, written as PNG (libpng).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/particle_set.hpp"
#include "io/units.hpp"

namespace hoshi::io {

struct RenderOptions {
  int axis = 2;           // projection axis: 0 = x (image shows y, z), 1 = y (z, x), 2 = z (x, y)
  double extent = 0;      // side of the square field of view; <= 0: automatic (auto_extent)
  int resolution = 1024;  // pixels per side
  double decades = 4;     // dynamic range of the log scale (decades below the maximum)
  UnitSystem units;       // for the scale bar's label (kpc when physical)
};

// Sigma on a resolution x resolution grid centred on (cu, cv) with side `extent`; row 0 is the
// top of the image (largest v). Each particle is a pixel-sized square cloud (cloud in cell):
// sum(Sigma) * pixel area = the mass of the clouds' parts inside the field (all of a particle
// at least half a pixel inside the edge, part of one within half a pixel of it, either side).
std::vector<double> surface_density(const ParticleSet& p, int axis, double cu, double cv,
                                    double extent, int resolution);

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // row-major, 3 bytes per pixel
  double extent = 0;              // render_surface_density: the field of view drawn
};

// The automatic field of view: 1.1 x twice the projected half-side (max(|du|, |dv|)) enclosing
// 98% of the particles (by number, not mass) around the centre of mass (1 for empty or
// point-like sets). The image is centred on the centre of mass in any case.
double auto_extent(const ParticleSet& p, int axis);
// Throws std::invalid_argument "the automatic field of view (OPTION 0): value ..." when an
// automatic extent has no finite positive pixel size at `resolution` (coordinates near
// double's limits).
void check_auto_extent(double extent, int resolution, const std::string& option);

// The scale bar's label for a bar of `length` code units: "%g" without the exponent's sign and
// leading zeros ("2e6", "5e-5"), in kpc (" kpc") for physical units.
std::string scale_bar_label(double length, const UnitSystem& units);
// Whether the label font has a glyph for every character of `text` but spaces.
bool drawable(const std::string& text);

// The full picture: density, log scale, colour map, scale bar with its length as text.
Image render_surface_density(const ParticleSet& p, const RenderOptions& options);

// The options' own limits (resolution 16 to 16384, axis 0 to 2, a given extent finite with a
// finite positive pixel size), std::invalid_argument naming the option as `prefix` + its name
// ("--" for hoshi render, "--render-" for hoshi run, which checks before it starts).
void check_render_options(const RenderOptions& options, const std::string& prefix);

// Writes an 8-bit RGB PNG atomically; throws std::runtime_error on failure.
void write_png(const std::string& path, const Image& image);

// "x", "y", "z" -> 0, 1, 2; throws std::invalid_argument naming `option` and the value.
int parse_axis(const std::string& name, const std::string& option = "--axis");

}  // namespace hoshi::io
