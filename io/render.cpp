#include "io/render.hpp"

#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/number_text.hpp"
#include "io/atomic_file.hpp"

namespace hoshi::io {

namespace {

// (u, v) image coordinates of particle i for a projection along `axis`.
inline void project(const ParticleSet& p, int axis, std::size_t i, double& u, double& v) {
  switch (axis) {
    case 0:
      u = p.y[i], v = p.z[i];
      break;
    case 1:
      u = p.z[i], v = p.x[i];
      break;
    default:
      u = p.x[i], v = p.y[i];
      break;
  }
}

// A perceptually ordered dark-to-bright map (control points approximating "inferno").
std::array<std::uint8_t, 3> colour(double s) {
  static const double pts[][3] = {{0, 0, 4},     {40, 11, 84},   {101, 21, 110}, {159, 42, 99},
                                  {212, 72, 66}, {245, 125, 21}, {250, 193, 39}, {252, 255, 164}};
  constexpr int n = sizeof pts / sizeof pts[0];
  s = std::clamp(s, 0.0, 1.0) * (n - 1);
  const int k = std::min(static_cast<int>(s), n - 2);
  const double f = s - k;
  std::array<std::uint8_t, 3> c{};
  for (int j = 0; j < 3; ++j)
    c[j] = static_cast<std::uint8_t>(std::lround(pts[k][j] + f * (pts[k + 1][j] - pts[k][j])));
  return c;
}

// 5x7 glyphs for the scale bar label: 7 rows of 5 columns.
const char* glyph(char ch) {
  switch (ch) {
    case '0':
      return " ### #   ##  ### # ###  ##   # ### ";
    case '1':
      return "  #   ##    #    #    #    #   ### ";
    case '2':
      return " ### #   #    #   #   #   #   #####";
    case '3':
      return "#####   #   #     #     ##   # ### ";
    case '4':
      return "   #   ##  # # #  # #####   #    # ";
    case '5':
      return "######    ####     #    ##   # ### ";
    case '6':
      return "  ##  #   #    #### #   ##   # ### ";
    case '7':
      return "#####    #   #   #   #    #    #   ";
    case '8':
      return " ### #   ##   # ### #   ##   # ### ";
    case '9':
      return " ### #   ##   # ####    #   #  ##  ";
    case '.':
      return "                          ##   ##  ";
    case '-':
      return "               #####               ";
    case 'e':
      return "           ### #   #######     ### ";
    case 'k':
      return "#    #    #  # # #  ##   # #  #  # ";
    case 'p':
      return "          #### #   ##### #    #    ";
    case 'c':
      return "           ### #    #    #   # ### ";
    default:
      return nullptr;
  }
}

void fill_rect(Image& im, int x0, int y0, int w, int h, std::uint8_t value) {
  for (int y = std::max(0, y0); y < std::min(im.height, y0 + h); ++y)
    for (int x = std::max(0, x0); x < std::min(im.width, x0 + w); ++x)
      for (int c = 0; c < 3; ++c) im.rgb[3 * (std::size_t(y) * im.width + x) + c] = value;
}

void draw_text(Image& im, int x0, int y0, const std::string& text, int scale) {
  for (char ch : text) {
    const char* g = glyph(ch);
    if (g) {
      for (int r = 0; r < 7; ++r)
        for (int c = 0; c < 5; ++c)
          if (g[r * 5 + c] == '#') fill_rect(im, x0 + c * scale, y0 + r * scale, scale, scale, 255);
    }
    x0 += 6 * scale;
  }
}

// 1, 2 or 5 times a power of ten, at most `x`.
double nice_length(double x) {
  const double p = std::pow(10.0, std::floor(std::log10(x)));
  for (double m : {5.0, 2.0, 1.0})
    if (m * p <= x) return m * p;
  return p;
}

}  // namespace

std::string scale_bar_label(double length, const UnitSystem& units) {
  const double v = units.physical ? length * (units.length_cm / kKpcInCm) : length;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  // "2e+06" -> "2e6", "5e-05" -> "5e-5": the font has no '+' (the label showed "2e 06").
  std::string s = buf;
  if (const auto e = s.find('e'); e != std::string::npos) {
    std::string exp = s.substr(e + 1);
    const bool negative = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) exp.erase(0, 1);
    exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
    s = s.substr(0, e + 1) + (negative ? "-" : "") + exp;
  }
  return units.physical ? s + " kpc" : s;
}

bool drawable(const std::string& text) {
  for (char ch : text)
    if (ch != ' ' && !glyph(ch)) return false;
  return true;
}

int parse_axis(const std::string& name, const std::string& option) {
  if (name == "x") return 0;
  if (name == "y") return 1;
  if (name == "z") return 2;
  throw std::invalid_argument(option + ": value '" + name + "' is not one of x, y, z");
}

namespace {
// The mass of the clouds on each pixel (surface_density's grid times the pixel area): the
// image's colours are relative to its brightest pixel, so they need no area, which overflows
// or underflows for fields beyond ~1e154 or below ~1e-150 (a set at +-1e300 was not drawable).
std::vector<double> pixel_mass(const ParticleSet& p, int axis, double cu, double cv, double extent,
                               int n) {
  std::vector<double> grid(std::size_t(n) * n, 0.0);
  const double h = extent / n, u0 = cu - 0.5 * extent, v0 = cv - 0.5 * extent;
  for (std::size_t i = 0; i < p.size(); ++i) {
    double u, v;
    project(p, axis, i, u, v);
    // Cloud in cell: the particle is a pixel-sized square; its mass is shared among the four
    // pixels it overlaps, in proportion to the overlap (weights sum to 1).
    const double fu = (u - u0) / h - 0.5, fv = (v - v0) / h - 0.5;
    if (!(fu > -1 && fu < n && fv > -1 && fv < n)) continue;
    const int iu = static_cast<int>(std::floor(fu)), iv = static_cast<int>(std::floor(fv));
    const double wu = fu - iu, wv = fv - iv;
    for (int du = 0; du < 2; ++du)
      for (int dv = 0; dv < 2; ++dv) {
        const int a = iu + du, b = iv + dv;
        if (a < 0 || a >= n || b < 0 || b >= n) continue;
        const double w = (du ? wu : 1 - wu) * (dv ? wv : 1 - wv);
        grid[std::size_t(n - 1 - b) * n + a] += w * p.m[i];
      }
  }
  return grid;
}

// The centre of mass in the image plane, as an offset from the first particle: exact for a
// point-like set (the plain sum m u / M of 100 masses 0.01 at 1e15 put it 0.7 off, outside
// the field of 1 it gets, and the image was blank) and finite for any finite set (m u
// overflowed at 1e308).
void image_centre(const ParticleSet& p, int axis, double& cu, double& cv) {
  cu = cv = 0;
  if (p.empty()) return;
  double u0, v0, mass = 0;
  project(p, axis, 0, u0, v0);
  for (double m : p.m) mass += m;
  if (!(mass > 0) || !std::isfinite(mass)) {
    cu = u0, cv = v0;
    return;
  }
  // Halves of the offsets: u - u0 overflows for coordinates beyond 2^1023 / 2 either side.
  double du = 0, dv = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    double u, v;
    project(p, axis, i, u, v);
    const double w = p.m[i] / mass;
    du += w * (0.5 * u - 0.5 * u0), dv += w * (0.5 * v - 0.5 * v0);
  }
  cu = u0 + 2 * du, cv = v0 + 2 * dv;
}

// auto_extent about a centre already known (the image's).
double auto_extent_about(const ParticleSet& p, int axis, double cu, double cv) {
  std::vector<double> r(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    double u, v;
    project(p, axis, i, u, v);
    r[i] = std::max(std::abs(u - cu), std::abs(v - cv));
  }
  if (r.empty()) return 1.0;
  const std::size_t k = std::min(r.size() - 1, static_cast<std::size_t>(0.98 * r.size()));
  std::nth_element(r.begin(), r.begin() + k, r.end());
  // Point-like (all at one point: the spread is the centre of mass's rounding, ~1e-16 of its
  // distance from the origin, which gave a field of 1e-16): 1.
  const double rounding = 1e-12 * (std::abs(cu) + std::abs(cv));
  return r[k] > rounding && std::isfinite(r[k]) ? 2.2 * r[k] : 1.0;
}

// Whether a field of `extent` has pixels of a finite positive size at `resolution` (beyond
// ~1e308 or below ~1e-320 it has not).
bool pixel_size_ok(double extent, int resolution) {
  const double h = extent / resolution;
  return h > 0 && std::isfinite(h);
}
}  // namespace

std::vector<double> surface_density(const ParticleSet& p, int axis, double cu, double cv,
                                    double extent, int n) {
  if (!pixel_size_ok(extent, n))
    throw std::invalid_argument("--extent: value " + number_text(extent) +
                                " (its pixel size is not a finite positive number)");
  const double h = extent / n;
  std::vector<double> grid = pixel_mass(p, axis, cu, cv, extent, n);
  for (double& s : grid) s = s / h / h;
  return grid;
}

double auto_extent(const ParticleSet& p, int axis) {
  double cu, cv;
  image_centre(p, axis, cu, cv);
  return auto_extent_about(p, axis, cu, cv);
}

void check_auto_extent(double extent, int resolution, const std::string& option) {
  if (!pixel_size_ok(extent, resolution))
    throw std::invalid_argument(
        "the automatic field of view (" + option + " 0): value " + number_text(extent) +
        " (its pixel size is not a finite positive number; give " + option + ")");
}

void check_render_options(const RenderOptions& o, const std::string& prefix) {
  if (o.resolution < 16 || o.resolution > 16384)
    throw std::invalid_argument(prefix + "resolution: value " + std::to_string(o.resolution) +
                                " (must be between 16 and 16384)");
  if (o.axis < 0 || o.axis > 2)
    throw std::invalid_argument(prefix + "axis: value " + std::to_string(o.axis) +
                                " (must be 0, 1 or 2)");
  if (o.extent > 0) {
    if (!std::isfinite(o.extent) || !pixel_size_ok(o.extent, o.resolution))
      throw std::invalid_argument(prefix + "extent: value " + number_text(o.extent) +
                                  " (its pixel size is not a finite positive number)");
  }
}

Image render_surface_density(const ParticleSet& p, const RenderOptions& o) {
  check_render_options(o, "--");
  double cu, cv;
  image_centre(p, o.axis, cu, cv);
  const double extent = o.extent > 0 ? o.extent : auto_extent_about(p, o.axis, cu, cv);
  const int n = o.resolution;
  if (!(o.extent > 0)) check_auto_extent(extent, n, "--extent");
  if (!(std::isfinite(cu) && std::isfinite(cv)))
    throw std::invalid_argument("the image centre (the centre of mass) is not finite: value (" +
                                number_text(cu) + ", " + number_text(cv) + ")");
  // Colours relative to the brightest pixel: the mass per pixel serves as the density.
  const std::vector<double> sigma = pixel_mass(p, o.axis, cu, cv, extent, n);
  const double smax = *std::max_element(sigma.begin(), sigma.end());
  Image im;
  im.width = im.height = n;
  im.extent = extent;
  im.rgb.assign(std::size_t(n) * n * 3, 0);
  const double lmax = smax > 0 ? std::log10(smax) : 0, lmin = lmax - o.decades;
  for (std::size_t k = 0; k < sigma.size(); ++k) {
    const double s = sigma[k] > 0 ? (std::log10(sigma[k]) - lmin) / o.decades : 0.0;
    const auto c = colour(s);
    std::copy(c.begin(), c.end(), im.rgb.begin() + 3 * k);
  }
  // Scale bar: a nice length near a fifth of the field, bottom left, with its label.
  const double len = nice_length(0.2 * extent);
  const int px = std::max(1, static_cast<int>(std::lround(len / extent * n)));
  const int scale = std::max(1, n / 256), margin = 6 * scale;
  const int y = n - margin - 2 * scale;
  fill_rect(im, margin, y, px, 2 * scale, 255);
  fill_rect(im, margin, y - 3 * scale, scale, 8 * scale, 255);
  fill_rect(im, margin + px - scale, y - 3 * scale, scale, 8 * scale, 255);
  const std::string label = scale_bar_label(len, o.units);
  draw_text(im, margin, y - 12 * scale, label, scale);
  return im;
}

void write_png(const std::string& path, const Image& im) {
  write_atomically(path, [&](const std::string& tmp) {
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw std::runtime_error(path + ": cannot create " + tmp);
    // libpng's own handlers print "libpng error: Write Error" before hoshi's one line: silent
    // ones (the error handler must not return: back to the setjmp below).
    const auto silent_error = [](png_structp p, png_const_charp) { png_longjmp(p, 1); };
    const auto silent_warning = [](png_structp, png_const_charp) {};
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, silent_error, silent_warning);
    png_infop info = png ? png_create_info_struct(png) : nullptr;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
      png_destroy_write_struct(&png, &info);
      std::fclose(f);
      throw std::runtime_error(path + ": PNG write failed (disk full?)");
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, im.width, im.height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < im.height; ++y)
      png_write_row(png, const_cast<png_bytep>(im.rgb.data() + 3 * std::size_t(y) * im.width));
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    if (std::fclose(f) != 0) throw std::runtime_error(path + ": PNG write failed (disk full?)");
  });
}

}  // namespace hoshi::io
