#pragma once
/// Error kinds shared by every liftx library.
///
/// - UserError: the input is wrong (bad program, type error, sizes that do not divide, unreadable
///   file). Carries an optional source location and prints as `file:line:col: error: message`.
///   The CLI turns it into exit code 2.
/// - InternalError: a broken invariant inside liftx (a bug). Carries the C++ file and line.
/// - NotImplemented: a legal request liftx does not support yet.
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace liftx {

struct SourceLoc {
  std::string file; ///< empty when the input has no file name (e.g. a string)
  int line = 0;     ///< 1-based; 0 means "no location"
  int col = 0;      ///< 1-based
  bool valid() const { return line > 0; }
  std::string to_string() const {
    if (!valid())
      return file;
    return fmt::format("{}:{}:{}", file.empty() ? "<input>" : file, line, col);
  }
};

class UserError : public std::runtime_error {
public:
  explicit UserError(std::string message, SourceLoc loc = {})
      : std::runtime_error(format(message, loc)), message_(std::move(message)),
        loc_(std::move(loc)) {}
  /// The message without location or "error:" prefix.
  const std::string& message() const { return message_; }
  const SourceLoc& loc() const { return loc_; }
  /// The same error, located at `loc` unless it already has a location.
  UserError located(const SourceLoc& loc) const {
    return loc_.valid() ? *this : UserError(message_, loc);
  }

private:
  static std::string format(const std::string& message, const SourceLoc& loc) {
    if (loc.valid())
      return fmt::format("{}: error: {}", loc.to_string(), message);
    if (!loc.file.empty())
      return fmt::format("{}: error: {}", loc.file, message);
    return fmt::format("error: {}", message);
  }
  std::string message_;
  SourceLoc loc_;
};

class InternalError : public std::logic_error {
public:
  InternalError(const std::string& message, const char* file, int line)
      : std::logic_error(fmt::format("internal error: {} ({}:{})", message, file, line)) {}
};

class NotImplemented : public std::runtime_error {
public:
  explicit NotImplemented(const std::string& what)
      : std::runtime_error(fmt::format("not implemented: {}", what)) {}
};

} // namespace liftx

// One spelling per kind of failure: the CHECK macros state each rule as what must hold, so grep
// finds them all, and a bare throw is one that no macro can say.
// - A user error with a condition is LIFTX_USER_CHECK(what must hold, fmt, args...). `throw
//   UserError(...)` stays where there is no condition to state (after a switch or a lookup that
//   found nothing, in a catch that re-throws with context, `.located(...)`), where the error
//   carries a SourceLoc (the macro takes none), and where the `if` declares what the message
//   shows (`if (auto why = ...)`) or is a branch of an if-else chain.
// - An internal error with a condition is LIFTX_INTERNAL_CHECK, one without is LIFTX_UNREACHABLE;
//   neither is written as `throw InternalError(...)`, so every one carries __FILE__ and __LINE__.
// The macros' messages are fmt format strings: a literal brace in one is doubled.

/// Throws UserError(fmt::format(...)) unless `cond` holds.
#define LIFTX_USER_CHECK(cond, ...)                                                                \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      throw ::liftx::UserError(fmt::format(__VA_ARGS__));                                          \
  } while (0)

/// Throws InternalError unless `cond` holds: use for invariants, never for bad input.
#define LIFTX_INTERNAL_CHECK(cond, ...)                                                            \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      throw ::liftx::InternalError(fmt::format(__VA_ARGS__), __FILE__, __LINE__);                  \
  } while (0)

/// Throws InternalError unconditionally: a case that cannot occur, or a failure that is a bug in
/// liftx (e.g. caught around a call that must not fail).
#define LIFTX_UNREACHABLE(...)                                                                     \
  throw ::liftx::InternalError(fmt::format(__VA_ARGS__), __FILE__, __LINE__)
