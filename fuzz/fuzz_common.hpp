#pragma once
/// Shared by the fuzz targets: which outcomes are expected, and how a broken property is reported.
///
/// Bad input must end in a UserError (or NotImplemented: both are exit code 2 in the CLI); any
/// other exception escapes LLVMFuzzerTestOneInput, terminates the process and is a crash.
#include "support/error.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::fuzz {

/// Runs `body`; true if it finished, false if it rejected its input with a user error.
template <class Body>
bool expect_user_errors(Body&& body) {
  try {
    body();
    return true;
  } catch (const UserError&) {
    return false;
  } catch (const NotImplemented&) {
    return false;
  }
}

/// A broken property: prints what and where, then traps (libFuzzer saves the input).
[[noreturn]] inline void fail(std::string_view what, std::string_view detail,
                              const std::map<std::string, int64_t, std::less<>>& env = {}) {
  std::fprintf(stderr, "fuzz property broken: %.*s\n  %.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  for (const auto& [name, value] : env)
    std::fprintf(stderr, "  %s = %lld\n", name.c_str(), static_cast<long long>(value));
  __builtin_trap();
}

/// Whitespace-separated words.
inline std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r'))
      ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\r')
      ++i;
    if (i > start)
      words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

/// The input as text (libFuzzer's bytes may hold anything, NULs included).
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

} // namespace liftx::fuzz
