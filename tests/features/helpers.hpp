#pragma once
// Shared by the feature tests: parsing a program from text, profiles, and the dynamic side (an
// instrumented run on PoCL) that the static features are validated against.
#include "exec/run.hpp"
#include "features/features.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace liftx::features::test {

inline ir::Program parse_program(const std::string& source) {
  return parse::parse_module(source, "<test>").main();
}

/// The text of a file of the source tree, e.g. "stencils/variants/jacobi2d5pt/global2d.lift".
inline std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(LIFTX_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Kernel builds are cached; keep the cache out of the home directory.
inline void use_temporary_cache_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / "liftx-test-features-cache";
    std::filesystem::create_directories(d);
    return d;
  }();
  setenv("LIFTX_CACHE_DIR", dir.c_str(), 1);
}

inline runtime::Device& pocl() {
  static runtime::Device device = [] {
    use_temporary_cache_dir();
    return runtime::select_device("cpu");
  }();
  return device;
}

} // namespace liftx::features::test
