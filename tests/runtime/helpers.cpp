#include "helpers.hpp"

#include <atomic>
#include <cstdlib>

#include <unistd.h>

namespace liftx::runtime::testing {

TempDir::TempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  path = std::filesystem::temp_directory_path() /
         ("liftx-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

namespace {
// Every cache the tests (and the liftx children they start) touch lives here, not in ~/.cache.
struct CacheDirFixture {
  TempDir dir{"cache"};
  CacheDirFixture() { ::setenv("LIFTX_CACHE_DIR", dir.path.c_str(), 1); }
};
CacheDirFixture& cache_fixture() {
  static CacheDirFixture fixture;
  return fixture;
}
[[maybe_unused]] const bool cache_dir_set_before_main = (cache_fixture(), true);
} // namespace

const std::filesystem::path& test_cache_dir() {
  return cache_fixture().dir.path;
}

} // namespace liftx::runtime::testing
