/// The host memory budget: a run at sizes the machine cannot hold is refused with a message before
/// anything is allocated, instead of ending in std::bad_alloc or the OOM killer.
#include "ir/interp/interp.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unistd.h>

namespace liftx::interp {

namespace {
constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}
int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

/// Elements of a value of type t at `sizes`, saturated; lengths that do not evaluate count as 0
/// here (check_sizes and concrete_shape report them with their own messages).
int64_t element_count(const ir::Type& t, const Sizes& sizes) {
  try {
    int64_t n = 1;
    for (int64_t length : concrete_shape(t, sizes))
      n = saturating_mul(n, length);
    return n;
  } catch (const UserError&) {
    return 0;
  }
}
} // namespace

int64_t parse_memory_size(std::string_view text, std::string_view what) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(s.c_str(), &end);
  double scale = 1;
  std::string_view suffix(end);
  if (suffix.size() == 1 || (suffix.size() == 2 && (suffix[1] == 'B' || suffix[1] == 'b')) ||
      (suffix.size() == 3 && suffix.substr(1) == "iB")) {
    switch (suffix[0]) {
    case 'k':
    case 'K':
      scale = 1024.0;
      break;
    case 'm':
    case 'M':
      scale = 1024.0 * 1024;
      break;
    case 'g':
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      break;
    case 't':
    case 'T':
      scale = 1024.0 * 1024 * 1024 * 1024;
      break;
    default:
      scale = 0;
      break;
    }
  } else if (!suffix.empty()) {
    scale = 0;
  }
  const double bytes = value * scale;
  LIFTX_USER_CHECK(end != s.c_str() && errno == 0 && scale > 0 && std::isfinite(bytes) &&
                       bytes >= 1 && bytes < 9.2e18,
                   "{} {}: expected a positive amount of memory such as 4096, 512M or 8G", what,
                   text);
  return static_cast<int64_t>(bytes);
}

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} bytes", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

int64_t host_memory_limit() {
  if (const char* text = std::getenv("LIFTX_MAX_MEMORY"); text && *text)
    return parse_memory_size(text, "LIFTX_MAX_MEMORY=");
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0)
    return kSaturated; // unknown: no budget rather than a wrong one
  return saturating_mul(pages, page_size) / 2;
}

int64_t estimated_host_bytes(const ir::Program& p, const Sizes& sizes) {
  int64_t elements = element_count(p.result_type(), sizes);
  for (const ir::Expr& param : p.params)
    elements = saturating_add(elements, element_count(param.type(), sizes));
  return saturating_mul(elements, 2 * static_cast<int64_t>(sizeof(double)));
}

void check_host_memory(const ir::Program& p, const Sizes& sizes) {
  const int64_t needed = estimated_host_bytes(p, sizes), limit = host_memory_limit();
  std::string at;
  for (const auto& [name, value] : sizes)
    at += fmt::format("{}{}={}", at.empty() ? "" : " ", name, value);
  LIFTX_USER_CHECK(needed <= limit,
                   "{} at {} needs about {} of host memory for its inputs and result, more than "
                   "the {} allowed (--max-memory, or LIFTX_MAX_MEMORY; the default is half the "
                   "physical memory): use smaller sizes",
                   p.name, at,
                   needed == kSaturated ? std::string("more than 8 EiB") : format_bytes(needed),
                   format_bytes(limit));
}

} // namespace liftx::interp
