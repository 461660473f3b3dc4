#pragma once
/// The outcome of building and running one kernel variant. Shared by the runtime, the verifier and
/// exploration, so that every layer reports failures with the same words.
#include <optional>
#include <string_view>

namespace liftx::runtime {

enum class Status {
  ok,               ///< built, ran, and (where checked) gave the right result
  build_error,      ///< the OpenCL compiler rejected the source
  run_error,        ///< the launch or the kernel failed for another reason (or the worker crashed)
  out_of_resources, ///< too many registers / too much local memory / too large a work-group
  timeout,          ///< did not finish within the time limit
  wrong_result,     ///< ran, but the verifier found a mismatch
};

/// "ok", "build_error", "run_error", "out_of_resources", "timeout", "wrong_result".
std::string_view to_string(Status status);

/// The inverse of to_string; nullopt for any other text.
std::optional<Status> parse_status(std::string_view text);

} // namespace liftx::runtime
