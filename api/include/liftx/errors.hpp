#pragma once
/// Errors of the liftx API. Every failure is an exception:
/// - liftx::UserError (support/error.hpp): the request is wrong: an unknown device, a program that
///   does not type-check or cannot be lowered, sizes that do not bind the program's size
///   variables, inputs of the wrong count, element kind or length, a buffer of another OpenCL
///   context. `what()` is the whole message (with `file:line:col` for .lift input).
/// - liftx::KernelError (here): the device failed a kernel liftx generated: the OpenCL compiler
///   rejected it, a launch failed or ran out of resources, or its result differed from the
///   reference interpreter. `status()` says which.
/// - liftx::NotImplemented: a legal request liftx does not support yet (e.g. bool arrays).
/// - liftx::InternalError: a bug in liftx.
#include "support/error.hpp"

#include <stdexcept>
#include <string>

namespace liftx {

class KernelError : public std::runtime_error {
public:
  KernelError(std::string status, const std::string& message)
      : std::runtime_error(message), status_(std::move(status)) {}
  /// "build_error", "run_error", "out_of_resources", "timeout" or "wrong_result".
  const std::string& status() const { return status_; }

private:
  std::string status_;
};

} // namespace liftx
