#pragma once
// An environment variable set for a scope (this process and the commands it starts), shared by
// the test folders.
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include <unistd.h>

namespace liftx_test {

/// Sets `name` to `value` (unsets it for null) for the scope, restoring the old value after.
class ScopedEnv {
public:
  ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str()))
      old_ = old;
    if (value)
      ::setenv(name_.c_str(), value, 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  std::string name_;
  std::optional<std::string> old_;
};

} // namespace liftx_test
