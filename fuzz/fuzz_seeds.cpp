// Writes a small seed corpus for the fuzz targets: DIR/tipsy/*, DIR/gadget/* and DIR/csv/*,
// valid files of every variant the readers accept (a few particles each, so mutations reach
// the records).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "core/particle_set.hpp"
#include "io/byte_reader.hpp"
#include "io/csv.hpp"
#include "io/gadget_binary.hpp"
#include "io/tipsy.hpp"

namespace fs = std::filesystem;

namespace {

hoshi::ParticleSet particles(int n) {
  hoshi::ParticleSet p;
  for (int i = 0; i < n; ++i)
    p.push_back(0.1 * i, -0.2 * i, 0.3, 0.01 * i, 0.0, -0.01, 1.0 / n, 10 + i);
  return p;
}

void put(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seeds DIR\n";
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir / "tipsy");
  fs::create_directories(dir / "gadget");
  // Standard tipsy through the real writer (it also writes a .param file: remove it).
  for (int n : {0, 1, 4}) {
    const fs::path f = dir / "tipsy" / ("standard_" + std::to_string(n));
    hoshi::io::write_tipsy(f.string(), particles(n), 0.5, hoshi::io::units_henon(), 0.01);
    fs::remove(f.string() + ".param");
  }
  // Bonsai little-endian, version 2: one gas, two dark, one star.
  {
    std::string b;
    hoshi::io::put_bytes(b, 1.5, false);
    for (std::int32_t v : {4, 3, 1, 2, 1, 2}) hoshi::io::put_bytes(b, v, false);
    for (int k = 0; k < 12; ++k) hoshi::io::put_bytes(b, 0.25f, false);
    for (int i = 0; i < 3; ++i) {
      for (int k = 0; k < 7; ++k) hoshi::io::put_bytes(b, 0.5f + i + k, false);
      if (i == 2) hoshi::io::put_bytes(b, 0.0f, false), hoshi::io::put_bytes(b, 0.0f, false);
      hoshi::io::put_bytes(b, std::uint64_t(1000 + i), false);
    }
    put(dir / "tipsy" / "bonsai_v2", b);
  }
  int k = 0;
  for (int format : {1, 2})
    for (bool big : {false, true})
      for (bool dbl : {false, true})
        for (bool ids64 : {false, true}) {
          hoshi::io::GadgetWriteOptions o{format, big, dbl, ids64, (k % 3) == 0};
          put(dir / "gadget" / ("g" + std::to_string(k++)),
              hoshi::io::gadget_binary_bytes(particles(3), 0.25, o));
        }
  // CSV: the writer's output, and the variants people write (comments, numpy.savetxt's header
  // and float ids, a byte order mark, CRLF line ends).
  fs::create_directories(dir / "csv");
  hoshi::io::write_csv((dir / "csv" / "plain").string(), particles(3));
  const std::string rows = "0,0.1,0.2,0.3,0,0,0,0.5\n1,-0.1,0,0.2,0.01,0,0,0.5\n";
  put(dir / "csv" / "comments", "# made by hand\n\nid,x,y,z,vx,vy,vz,m\n# a row comment\n" + rows);
  put(dir / "csv" / "numpy",
      "# id,x,y,z,vx,vy,vz,m\n0.000000000000000000e+00,1.000000000000000000e-01,0,0,0,0,0,"
      "1.000000000000000000e+00\n1.000000000000000000e+00,0,1,0,0,0,0,1\n");
  put(dir / "csv" / "bom_crlf",
      "\xEF\xBB\xBFid,x,y,z,vx,vy,vz,m\r\n0,1,2,3,0,0,0,1\r\n1,2,3,4,0,0,0,1\r\n");
  std::cout << "seeds written to " << dir.string() << "\n";
  return 0;
}
