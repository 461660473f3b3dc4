// lbm: a D2Q9 lattice Boltzmann simulation that keeps its lattice as a std::vector of its own node
// struct (nine distributions, reflected by Boost.Hana) and steps it with a liftx kernel compiled
// from a .lift file, once per storage layout the kernel may read the grids in: apart (one array
// per distribution), AoS and AoSoA(32). The application's data never changes with the layout:
// liftx::run_cells splits the nodes per member and the kernel's run packs them. Checks that every
// step conserves the total mass and that the three layouts end in the same state.
//
//   lbm D2Q9.lift [--size N] [--steps S] [--device D]
//
// Exit status: 0 when the checks hold, 1 when one fails, 2 on bad arguments or a liftx error.
#include <liftx/cells.hpp>
#include <liftx/liftx.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace {

// A lattice node: each distribution relative to the fluid at rest, d_i = f_i / w_i - 1 (the
// stencil file says why); member names match the program's parameters.
struct Node {
  BOOST_HANA_DEFINE_STRUCT(Node, (float, d0), (float, d1), (float, d2), (float, d3), (float, d4),
                           (float, d5), (float, d6), (float, d7), (float, d8));
};

constexpr double kWeights[9] = {4.0 / 9,  1.0 / 9,  1.0 / 9,  1.0 / 9, 1.0 / 9,
                                1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36};

double total_mass(const std::vector<Node>& nodes) {
  double mass = 0;
  for (const Node& n : nodes) {
    const float d[9] = {n.d0, n.d1, n.d2, n.d3, n.d4, n.d5, n.d6, n.d7, n.d8};
    for (int i = 0; i < 9; ++i)
      mass += kWeights[i] * (1.0 + d[i]);
  }
  return mass;
}

/// `source` with the clause `layout` added to the definition's parameter list.
std::string with_layout(const std::string& source, const std::string& layout) {
  if (layout.empty())
    return source;
  const size_t def = source.find("def ");
  const size_t end = source.find(") =", def);
  if (def == std::string::npos || end == std::string::npos)
    throw liftx::UserError("the stencil file has no 'def NAME(...) =' to add a layout to");
  return source.substr(0, end + 1) + " layout " + layout + source.substr(end + 1);
}

} // namespace

int main(int argc, char** argv) {
  std::string file, device = "cpu";
  int64_t size = 64;
  int64_t steps = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--size" || arg == "--steps" || arg == "--device") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--device") {
        device = value;
        continue;
      }
      size_t used = 0;
      long long number = -1;
      try {
        number = std::stoll(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size() || number < 1 || number > 1 << 20) {
        std::fprintf(stderr, "lbm: %s needs a whole number from 1 to 1048576, got '%s'\n",
                     arg.c_str(), value.c_str());
        return 2;
      }
      (arg == "--size" ? size : steps) = number;
    } else if (file.empty() && arg.rfind("--", 0) != 0) {
      file = arg;
    } else {
      std::fprintf(stderr, "usage: lbm D2Q9.lift [--size N] [--steps S] [--device D]\n");
      return 2;
    }
  }
  if (file.empty() || size < 4 || steps < 1) {
    std::fprintf(stderr, "usage: lbm D2Q9.lift [--size N >= 4] [--steps S >= 1] [--device D]\n");
    return 2;
  }
  try {
    std::ifstream in(file);
    if (!in)
      throw liftx::UserError("cannot read " + file);
    const std::string source{std::istreambuf_iterator<char>(in), {}};
    // A fluid at rest with small random disturbances.
    std::vector<Node> start(static_cast<size_t>(size * size));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> noise(-0.05f, 0.05f);
    for (Node& n : start)
      boost::hana::for_each(boost::hana::accessors<Node>(),
                            [&](auto member) { boost::hana::second(member)(n) = noise(rng); });
    const double mass = total_mass(start);

    std::string members;
    for (const std::string& name : liftx::cell_fields<Node>())
      members += (members.empty() ? "" : ", ") + name;
    liftx::Context ctx(device);
    std::printf("device   %s\nlattice  %lld x %lld, %lld steps, mass %.6f\n",
                ctx.device().name.c_str(), static_cast<long long>(size),
                static_cast<long long>(size), static_cast<long long>(steps), mass);
    std::vector<std::vector<Node>> finals;
    bool ok = true;
    for (const std::string layout :
         {std::string(), "aos(" + members + ")", "aosoa(32, " + members + ")"}) {
      liftx::Kernel step = ctx.compile(liftx::parse_program(with_layout(source, layout)),
                                       {{"M", size}, {"N", size}});
      std::vector<Node> now = start, next(now.size());
      double kernel_ms = 0, drift = 0;
      for (int64_t s = 0; s < steps; ++s) {
        kernel_ms += liftx::run_cells<Node>(step, now, next).kernel_ms;
        std::swap(now, next);
        drift = std::max(drift, std::fabs(total_mass(now) - mass) / mass);
      }
      const bool conserved = drift < 1e-5;
      ok = ok && conserved;
      std::printf("%-7s  %.4f ms per step, mass drift %.2e %s\n",
                  layout.empty() ? "apart" : layout.substr(0, layout.find('(')).c_str(),
                  kernel_ms / static_cast<double>(steps), drift,
                  conserved ? "ok" : "NOT CONSERVED");
      finals.push_back(std::move(now));
    }
    // Every layout computes the same steps.
    double worst = 0;
    for (size_t l = 1; l < finals.size(); ++l)
      for (size_t i = 0; i < finals[0].size(); ++i)
        boost::hana::for_each(boost::hana::accessors<Node>(), [&](auto member) {
          auto get = boost::hana::second(member);
          worst = std::max(worst, double(std::fabs(get(finals[l][i]) - get(finals[0][i]))));
        });
    const bool agree = worst < 1e-5;
    std::printf("layouts  agree to %.2e %s\n", worst, agree ? "ok" : "DIFFER");
    return ok && agree ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lbm: %s\n", e.what());
    return 2;
  }
}
