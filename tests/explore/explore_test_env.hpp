#pragma once
// Scratch folders and environment variables for the tests of tests/explore/.
#include "../scoped_env.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <unistd.h>

namespace explore_test {

namespace fs = std::filesystem;

/// A fresh folder per test, removed afterwards.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::temp_directory_path() / fmt::format("liftx-test-explore-{}-{}", name, ::getpid());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

using liftx_test::ScopedEnv;

} // namespace explore_test
