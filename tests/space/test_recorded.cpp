// The variant space and the static features, against tables recorded before the outer ring was
// consolidated (tests/data/): a refactoring that changes a count, a rejection reason or a feature
// value fails here. Regenerate a table only for a deliberate change of behaviour, and say so.
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "space/space.hpp"

#include "../sanitized.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace liftx;

namespace {

std::string source_path(const std::string& relative) {
  return std::string(LIFTX_SOURCE_DIR) + "/" + relative;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// The counts of one space in the recorded table's format.
std::vector<std::string> space_table(const std::string& stencil, const std::string& profile,
                                     int64_t m, int64_t n) {
  ir::Module module = parse::parse_file(source_path("stencils/" + stencil + ".lift"));
  space::SpaceOptions options;
  options.sizes = {{"M", m}, {"N", n}};
  options.device = runtime::named_profile(profile).limits();
  space::VariantStream stream(module.main(), options);
  space::Variant v;
  while (stream.next(v)) {
  }
  const space::SpaceCounts& c = stream.counts();
  std::vector<std::string> out{fmt::format(
      "{} {} M={} N={}: variants {} sources {} lowered {} high_level {}", stencil, profile, m, n,
      c.variants, c.distinct_sources, c.lowered_programs, c.high_level_programs)};
  for (const auto& [strategy, count] : c.per_strategy)
    out.push_back(fmt::format("  strategy {}: {}", strategy, count));
  for (const auto& [reason, count] : c.rejections)
    out.push_back(fmt::format("  rejection {}: {}", reason, count));
  return out;
}

std::string run_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    out.append(buffer, n);
  const int status = pclose(pipe);
  const bool succeeded = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  CHECK_MESSAGE(succeeded, command);
  return out;
}

} // namespace

TEST_CASE("variant counts per stencil and profile equal the recorded table") {
  const std::vector<std::string> recorded =
      lines_of(read_file(source_path("tests/data/space_counts_16x24.txt")));
#ifdef LIFTX_SANITIZED
  // Under the sanitizers (enumeration runs ten times slower or more) one profile and one stencil:
  // the table checks behaviour, which the plain build checks whole; the sanitizers check memory on
  // the same code paths.
  const std::vector<std::string> profiles{"nvidia"};
  const std::vector<std::string> stencils{"jacobi2d5pt"};
#else
  const std::vector<std::string> profiles{"nvidia", "amd", "cpu"};
  const std::vector<std::string> stencils{"gaussian",    "gradient", "hotspot2d", "jacobi2d5pt",
                                          "jacobi2d9pt", "srad1",    "srad2",     "stencil2d"};
#endif
  std::vector<std::string> computed;
  for (const std::string& stencil : stencils)
    for (const std::string& profile : profiles) {
      std::vector<std::string> table = space_table(stencil, profile, 16, 24);
      computed.insert(computed.end(), table.begin(), table.end());
    }
  // LIFTX_RECORD_SPACE_COUNTS=1 rewrites the table from this build (after a deliberate change
  // of the space; the diff is the review).
  if (std::getenv("LIFTX_RECORD_SPACE_COUNTS") != nullptr && !test::kSanitized) {
    std::ofstream out(source_path("tests/data/space_counts_16x24.txt"));
    for (const std::string& line : computed)
      out << line << "\n";
    return;
  }
  // Compare with the recorded lines of the stencils and profiles computed: a table starts with
  // "<stencil> <profile> M=..", its indented lines follow it.
  std::vector<std::string> expected;
  bool keep = false;
  for (const std::string& line : recorded) {
    if (!line.starts_with("  ")) {
      std::istringstream words(line);
      std::string stencil, profile;
      words >> stencil >> profile;
      keep = std::find(profiles.begin(), profiles.end(), profile) != profiles.end() &&
             std::find(stencils.begin(), stencils.end(), stencil) != stencils.end();
    }
    if (keep)
      expected.push_back(line);
  }
  REQUIRE(computed.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    CHECK(computed[i] == expected[i]);
}

TEST_CASE("features of the hand-lowered variants equal the recorded table") {
  const std::vector<std::string> recorded =
      lines_of(read_file(source_path("tests/data/hand_variant_features_64x128.csv")));
  REQUIRE(recorded.size() == 81); // header + 40 variants x 2 profiles
  std::vector<std::string> computed{recorded.front()};
  for (const char* profile : {"nvidia", "cpu"})
    for (const char* stencil : {"gaussian", "gradient", "hotspot2d", "jacobi2d5pt", "jacobi2d9pt",
                                "srad1", "srad2", "stencil2d"}) {
      const std::string csv = run_command(
          fmt::format("cd '{}' && '{}' features stencils/variants/{} --device-profile {} --size "
                      "M=64,N=128",
                      LIFTX_SOURCE_DIR, LIFTX_BINARY, stencil, profile));
      const std::vector<std::string> rows = lines_of(csv);
      REQUIRE(rows.size() == 6); // header + 5 variants
      for (size_t i = 1; i < rows.size(); ++i)
        computed.push_back(std::string(profile) + "," + rows[i]);
    }
  REQUIRE(computed.size() == recorded.size());
  for (size_t i = 0; i < recorded.size(); ++i)
    CHECK(computed[i] == recorded[i]);
}
