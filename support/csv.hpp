#pragma once
// One CSV field as RFC 4180 writes it, for every CSV liftx prints.
#include <string>

namespace liftx {

/// `text` as one CSV field: as it is, or in double quotes (with its quotes doubled) when it holds
/// a comma, a quote or a line break.
inline std::string csv_quote(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos)
    return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"')
      quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

} // namespace liftx
