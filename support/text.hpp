#pragma once
// Small text helpers for names that come from drivers and users: case-insensitive matching,
// trimming, and slugs (the filesystem-safe form of a name in keys).
#include <cctype>
#include <string>
#include <string_view>

namespace liftx {

inline std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline bool contains_nocase(std::string_view haystack, std::string_view needle) {
  return lowercase(haystack).find(lowercase(needle)) != std::string::npos;
}

inline std::string trim(std::string text) {
  while (!text.empty() &&
         (text.back() == '\0' || std::isspace(static_cast<unsigned char>(text.back()))))
    text.pop_back();
  size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start])))
    ++start;
  return text.substr(start);
}

/// Lower-case letters and digits; every other run of characters becomes one '-'.
inline std::string slug(std::string_view text) {
  std::string out;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u))
      out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-')
    out.pop_back();
  return out.empty() ? "unknown" : out;
}

} // namespace liftx
