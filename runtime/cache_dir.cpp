#include "runtime/cache_dir.hpp"

#include "support/error.hpp"
#include "support/hash.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>

namespace liftx::runtime {

std::filesystem::path default_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
  };
  if (std::string dir = env("LIFTX_CACHE_DIR"); !dir.empty())
    return dir;
  if (std::string dir = env("XDG_CACHE_HOME"); !dir.empty())
    return std::filesystem::path(dir) / "liftx";
  if (std::string home = env("HOME"); !home.empty())
    return std::filesystem::path(home) / ".cache" / "liftx";
  return "/tmp/liftx-cache";
}

std::optional<std::string> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad())
    return std::nullopt;
  return std::move(bytes).str();
}

bool write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  std::error_code ec;
  if (path.has_parent_path())
    std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    return false;
  try {
    replace_file(path, bytes, /*durable=*/false); // a cache entry: losing it costs a rebuild
    return true;
  } catch (const UserError&) {
    return false;
  }
}

std::string content_hash(std::string_view bytes) {
  // FNV-1a, then a second FNV-style hash with another offset basis that also mixes in the
  // position, so that the two halves are not trivially correlated.
  const uint64_t h1 = fnv1a(bytes);
  uint64_t h2 = 0x84222325cbf29ce4ULL;
  uint64_t position = 0;
  for (char c : bytes) {
    auto byte = static_cast<uint64_t>(static_cast<unsigned char>(c));
    h2 = (h2 ^ (byte + (position++ << 8))) * kFnvPrime;
    h2 ^= h2 >> 29;
  }
  return fmt::format("{:016x}{:016x}", h1, h2);
}

} // namespace liftx::runtime
