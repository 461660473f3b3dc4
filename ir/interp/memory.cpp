/// The host memory budget: a run at sizes the machine cannot hold is refused with a message before
/// anything is allocated, instead of ending in std::bad_alloc or the OOM killer.
#include "ir/interp/interp.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <unistd.h>

namespace liftx::interp {

namespace {
constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();
/// A map's result before it is stored: one interpreter Value (a variant of a scalar, a tuple and
/// an array reference) per element.
constexpr int64_t kBytesPerPendingValue = 64;

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

namespace {

/// Whether the interpreter stores a call's result (a map's results are collected into storage;
/// an iteration keeps its current and next value; views such as slide or pad store nothing).
bool stores_its_result(const ir::Fun& f) {
  return f.as<ir::Map>() || f.as<ir::MapSeq>() || f.as<ir::MapGlb>() || f.as<ir::MapWrg>() ||
         f.as<ir::MapLcl>() || f.as<ir::MapSeqSlide>() || f.as<ir::Iterate>() ||
         f.as<ir::Generate>();
}

/// The longest array a map of `f` walks, at these sizes (0 when not a map or not evaluable).
int64_t mapped_length(const ir::Call& call, const Sizes& sizes) {
  if (call.args.empty())
    return 0;
  const auto* array = call.args[0].type().as<ir::ArrayType>();
  if (!array || !stores_its_result(call.fun))
    return 0;
  try {
    return arith::evaluate(array->length, sizes);
  } catch (const UserError&) {
    return 0;
  }
}

} // namespace

int64_t estimated_host_bytes(const ir::Program& p, const Sizes& sizes) {
  // Inputs and result: the interpreter's doubles and the float copies written or compared.
  int64_t elements = element_count(p.result_type(), sizes);
  for (const ir::Expr& param : p.params)
    elements = saturating_add(elements, element_count(param.type(), sizes));
  // Every stored intermediate (counted once, also where it is one element's value inside an
  // outer map: those live one at a time), and the values a map holds for its results before
  // storing them densely, for the longest map.
  int64_t intermediate = 0, longest_map = 0;
  std::function<void(const ir::Expr&)> on_expr;
  std::function<void(const ir::Fun&)> on_fun = [&](const ir::Fun& f) {
    ir::for_each_child(f, on_fun, on_expr);
  };
  on_expr = [&](const ir::Expr& e) {
    if (const auto* call = e.as<ir::Call>(); call && stores_its_result(call->fun)) {
      const int64_t stored = element_count(e.type(), sizes);
      intermediate = saturating_add(
          intermediate, call->fun.as<ir::Iterate>() ? saturating_mul(stored, 2) : stored);
      longest_map = std::max(longest_map, mapped_length(*call, sizes));
    }
    ir::for_each_child(e, on_fun, on_expr);
  };
  on_expr(p.body);
  // The result is one of the intermediates (the outermost map's storage): not counted twice.
  intermediate = std::max<int64_t>(0, intermediate - element_count(p.result_type(), sizes));
  const int64_t dense = saturating_mul(elements, 2 * static_cast<int64_t>(sizeof(double)));
  return saturating_add(
      saturating_add(dense, saturating_mul(intermediate, static_cast<int64_t>(sizeof(double)))),
      saturating_mul(longest_map, kBytesPerPendingValue));
}

void check_host_memory(const ir::Program& p, const Sizes& sizes) {
  const int64_t needed = estimated_host_bytes(p, sizes), limit = host_memory_limit();
  std::string at;
  for (const auto& [name, value] : sizes)
    at += fmt::format("{}{}={}", at.empty() ? "" : " ", name, value);
  LIFTX_USER_CHECK(needed <= limit,
                   "{} at {} needs about {} of host memory for its inputs, intermediate arrays and "
                   "result, more than "
                   "the {} allowed (--max-memory, or LIFTX_MAX_MEMORY; the default is half the "
                   "physical memory): use smaller sizes",
                   p.name, at,
                   needed == kSaturated ? std::string("more than 8 EiB") : format_bytes(needed),
                   format_bytes(limit));
}

} // namespace liftx::interp
