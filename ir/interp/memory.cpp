/// The host memory budget: a run at sizes the machine cannot hold is refused with a message before
/// anything is allocated, instead of ending in std::bad_alloc or the OOM killer.
#include "ir/interp/interp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unistd.h>

namespace liftx::interp {

namespace {
constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();
/// One interpreter Value (a variant of a scalar, a tuple and an array reference): what a map holds
/// per element before storing its results, and what it stores per element of arrays.
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

/// Whether the interpreter collects a call's results into storage (every map, whatever its
/// function; an iteration keeps its current and next value; views such as slide or pad store
/// nothing).
bool is_map(const ir::Fun& f) {
  return f.as<ir::Map>() || f.as<ir::MapSeq>() || f.as<ir::MapGlb>() || f.as<ir::MapWrg>() ||
         f.as<ir::MapLcl>() || f.as<ir::MapSeqSlide>() || f.as<ir::Generate>();
}

int64_t evaluated_length(const arith::Expr& length, const Sizes& sizes) {
  try {
    return std::max<int64_t>(0, arith::evaluate(length, sizes));
  } catch (const UserError&) {
    return 0; // a length over variables bound inside the program: not counted
  }
}

/// What the interpreter stores for the maps and iterations of a program, in bytes: a map of
/// scalars (or tuples of them) stores them densely (8 bytes each); a map of arrays stores one
/// value per element, a reference to the array its function gave (64 bytes), and that array is
/// counted where it is made, once per element of every map around it. The longest map also
/// holds one pending value per element before storing them.
struct StorageEstimate {
  const Sizes& sizes;
  int64_t bytes = 0;
  int64_t longest_map = 0;
  int64_t around = 1; ///< iterations of the maps around the expression being visited

  void expr(const ir::Expr& e) {
    const auto* call = e.as<ir::Call>();
    if (!call) {
      ir::for_each_child(
          e, [&](const ir::Fun& f) { fun(f); }, [&](const ir::Expr& x) { expr(x); });
      return;
    }
    for (const ir::Expr& arg : call->args)
      expr(arg);
    const int64_t outer = around;
    if (is_map(call->fun)) {
      const auto* result = e.type().as<ir::ArrayType>();
      const int64_t length = result ? evaluated_length(result->length, sizes) : 0;
      const bool dense = result && !result->element.as<ir::ArrayType>();
      const int64_t per_element =
          dense ? saturating_mul(element_count(result->element, sizes), 8) : kBytesPerPendingValue;
      bytes = saturating_add(bytes, saturating_mul(around, saturating_mul(length, per_element)));
      longest_map = std::max(longest_map, length);
      around = saturating_mul(around, std::max<int64_t>(1, length));
    } else if (call->fun.as<ir::Iterate>()) {
      bytes = saturating_add(
          bytes, saturating_mul(around, saturating_mul(element_count(e.type(), sizes), 16)));
    }
    fun(call->fun);
    around = outer;
  }
  void fun(const ir::Fun& f) {
    ir::for_each_child(
        f, [&](const ir::Fun& g) { fun(g); }, [&](const ir::Expr& x) { expr(x); });
  }
};

} // namespace

namespace {

/// Inputs and result: the interpreter's doubles and the float copies written or compared.
int64_t estimated_buffer_bytes(const ir::Program& p, const Sizes& sizes) {
  int64_t elements = element_count(p.result_type(), sizes);
  for (const ir::Expr& param : p.params)
    elements = saturating_add(elements, element_count(param.type(), sizes));
  return saturating_mul(elements, 2 * static_cast<int64_t>(sizeof(double)));
}

} // namespace

int64_t estimated_host_bytes(const ir::Program& p, const Sizes& sizes) {
  const int64_t dense = estimated_buffer_bytes(p, sizes);
  // The intermediates; the result is one of them (its map's storage), counted above already.
  StorageEstimate storage{sizes};
  storage.expr(p.body);
  const int64_t intermediate = std::max<int64_t>(
      0, storage.bytes - saturating_mul(element_count(p.result_type(), sizes), 8));
  return saturating_add(saturating_add(dense, intermediate),
                        saturating_mul(storage.longest_map, kBytesPerPendingValue));
}

void check_host_memory(const ir::Program& p, const Sizes& sizes, bool intermediates) {
  const int64_t needed =
      intermediates ? estimated_host_bytes(p, sizes) : estimated_buffer_bytes(p, sizes);
  const int64_t limit = host_memory_limit();
  std::string at;
  for (const auto& [name, value] : sizes)
    at += fmt::format("{}{}={}", at.empty() ? "" : " ", name, value);
  LIFTX_USER_CHECK(needed <= limit,
                   "{} at {} needs about {} of host memory for its inputs, intermediate arrays and "
                   "result, more than the {} allowed (--max-memory, or LIFTX_MAX_MEMORY; the "
                   "default is half the physical memory): use smaller sizes",
                   p.name, at,
                   needed == kSaturated ? std::string("more than 8 EiB") : format_bytes(needed),
                   format_bytes(limit));
}

} // namespace liftx::interp
