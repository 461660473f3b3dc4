#include "runtime/status.hpp"

#include <array>
#include <utility>

namespace liftx::runtime {

namespace {
constexpr std::array<std::pair<Status, std::string_view>, 6> kStatusNames{{
    {Status::ok, "ok"},
    {Status::build_error, "build_error"},
    {Status::run_error, "run_error"},
    {Status::out_of_resources, "out_of_resources"},
    {Status::timeout, "timeout"},
    {Status::wrong_result, "wrong_result"},
}};
} // namespace

std::string_view to_string(Status status) {
  for (const auto& [value, name] : kStatusNames)
    if (value == status)
      return name;
  return "unknown";
}

std::optional<Status> parse_status(std::string_view text) {
  for (const auto& [value, name] : kStatusNames)
    if (name == text)
      return value;
  return std::nullopt;
}

} // namespace liftx::runtime
