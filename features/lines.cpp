#include "features/model_internal.hpp"

#include <algorithm>

namespace liftx::features {

namespace detail {

LineCount distinct_lines_of(const int64_t* index, const uint8_t* active, size_t lanes,
                            int64_t element_bytes, int64_t line_bytes, int64_t width,
                            std::vector<int64_t>& lines) {
  lines.clear();
  std::optional<int64_t> first;
  bool sorted = true; // a warp usually touches its lines in order: no sort needed then
  // Lines are powers of two: floor division is then an arithmetic shift, not two hardware
  // divisions per lane.
  const bool power_of_two = line_bytes > 0 && (line_bytes & (line_bytes - 1)) == 0;
  const int shift = power_of_two ? __builtin_ctzll(static_cast<uint64_t>(line_bytes)) : 0;
  auto line_of = [&](int64_t byte) {
    return power_of_two ? byte >> shift : floor_div(byte, line_bytes);
  };
  // A warp usually touches its lines in order, each lane's lines from where the previous lane's
  // end: then they are counted as they come, without a list. Out of order, the list is sorted.
  {
    LineCount count;
    int64_t previous_last = 0;
    bool in_order = true, any = false;
    const int64_t span = checked_mul(width, element_bytes) - 1;
    for (size_t l = 0; l < lanes && in_order; ++l) {
      if (!active[l])
        continue;
      if (!first)
        first = index[l];
      const int64_t begin = checked_mul(index[l] - *first, element_bytes);
      const int64_t first_line = line_of(begin), last_line = line_of(begin + span);
      if (any && first_line < previous_last) {
        in_order = false;
        break;
      }
      count.lines += last_line - first_line + 1 - (any && first_line == previous_last ? 1 : 0);
      count.segments += !any || first_line > previous_last + 1;
      previous_last = last_line;
      any = true;
    }
    if (in_order)
      return count;
  }
  for (size_t l = 0; l < lanes; ++l) {
    if (!active[l])
      continue;
    if (!first)
      first = index[l];
    // A vector access spans `width` elements: every line from its first to its last byte.
    const int64_t begin = checked_mul(index[l] - *first, element_bytes);
    const int64_t end = begin + checked_mul(width, element_bytes) - 1;
    for (int64_t line = line_of(begin); line <= line_of(end); ++line) {
      sorted = sorted && (lines.empty() || lines.back() <= line);
      lines.push_back(line);
    }
  }
  if (!sorted)
    std::sort(lines.begin(), lines.end());
  LineCount count;
  for (size_t k = 0; k < lines.size(); ++k) {
    count.lines += k == 0 || lines[k] != lines[k - 1];
    count.segments += k == 0 || lines[k] > lines[k - 1] + 1;
  }
  return count;
}

/// bank_conflict_degree over lanes given as values and activity flags; `words` and `banks_hit`
/// are reused scratch.
double bank_conflict_degree_of(const int64_t* index, const uint8_t* active, size_t lanes,
                               int64_t element_bytes, int64_t banks, std::vector<int64_t>& words,
                               std::vector<int64_t>& banks_hit) {
  if (banks <= 0)
    banks = 32;
  double sum = 0;
  int groups = 0;
  for (size_t start = 0; start < lanes; start += static_cast<size_t>(banks)) {
    words.clear();
    size_t stop = std::min(lanes, start + static_cast<size_t>(banks));
    for (size_t k = start; k < stop; ++k)
      if (active[k])
        words.push_back(floor_div(checked_mul(index[k], element_bytes), 4));
    if (words.empty())
      continue;
    if (!std::is_sorted(words.begin(), words.end()))
      std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    int worst = 1;
    // Distinct words spanning fewer than `banks` words fall in distinct banks: the usual case
    // needs no count per bank.
    int64_t span = 0;
    if (__builtin_sub_overflow(words.back(), words.front(), &span) || span >= banks) {
      banks_hit.clear();
      for (int64_t w : words)
        banks_hit.push_back(((w % banks) + banks) % banks);
      std::sort(banks_hit.begin(), banks_hit.end());
      int run = 0;
      for (size_t k = 0; k < banks_hit.size(); ++k) {
        run = k > 0 && banks_hit[k] == banks_hit[k - 1] ? run + 1 : 1;
        worst = std::max(worst, run);
      }
    }
    sum += worst;
    ++groups;
  }
  return groups == 0 ? 0.0 : sum / groups;
}

} // namespace detail

namespace {

using namespace detail;

/// The lanes of `indices` as values and activity flags.
void split_lanes(const std::vector<std::optional<int64_t>>& indices, std::vector<int64_t>& index,
                 std::vector<uint8_t>& active) {
  index.assign(indices.size(), 0);
  active.assign(indices.size(), 0);
  for (size_t l = 0; l < indices.size(); ++l)
    if (indices[l]) {
      index[l] = *indices[l];
      active[l] = 1;
    }
}

/// distinct_lines_of over lanes given as optional indices (nullopt = inactive).
LineCount count_lines(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                      int64_t line_bytes, int64_t width) {
  std::vector<int64_t> index, lines;
  std::vector<uint8_t> active;
  split_lanes(indices, index, active);
  return distinct_lines_of(index.data(), active.data(), index.size(), element_bytes, line_bytes,
                           width, lines);
}

} // namespace

int64_t distinct_lines(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                       int64_t line_bytes, int64_t width) {
  return count_lines(indices, element_bytes, line_bytes, width).lines;
}

int64_t line_segments(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                      int64_t line_bytes, int64_t width) {
  return count_lines(indices, element_bytes, line_bytes, width).segments;
}

double bank_conflict_degree(const std::vector<std::optional<int64_t>>& indices,
                            int64_t element_bytes, int64_t banks) {
  std::vector<int64_t> index, words, banks_hit;
  std::vector<uint8_t> active;
  split_lanes(indices, index, active);
  return bank_conflict_degree_of(index.data(), active.data(), index.size(), element_bytes, banks,
                                 words, banks_hit);
}

} // namespace liftx::features
