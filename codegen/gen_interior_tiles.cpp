// Interior tiles (Options::interior_tiles). A temporal tile repairs the grid's boundary at every
// fused step: its code asks which edges of the grid the tile touches (liftxTileEdge, 0 for
// none) and picks each repaired value's candidate by the answer, in selects a fused stencil
// spends a large share of its instructions on. Almost every tile is inside the grid and picks
// the inner candidate every time. So the body of the innermost parallel map gets a copy in
// which each such answer is the constant 0, run where all of them are 0, and the OpenCL compiler
// folds the picks away there. The copy is made of the body's text: the kernel's records
// (features, instrumentation slots) describe both copies, of which each tile runs one.
//
// A tile on the grid's edges still runs the repairs, several times slower than an interior one.
// GPUs start work-groups roughly in the order of their ids, so the edge tiles of the last rows
// would run after everything else and the launch would wait for them: the work-groups are
// mapped to tiles so that the edge tiles come first (order_edge_tiles_first).
#include "codegen/generator.hpp"
#include "codegen/tile_order.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::codegen {

namespace {

constexpr std::string_view kTileEdgeCall = "liftxTileEdge(";

/// Every call `liftxTileEdge(...)` in `text`, as written (its parentheses balanced).
void collect_tile_edge_calls(const std::string& text, std::set<std::string>& calls) {
  for (size_t at = text.find(kTileEdgeCall); at != std::string::npos;
       at = text.find(kTileEdgeCall, at + 1)) {
    if (at > 0 && cl::is_identifier_char(text[at - 1])) // another function's name ending so
      continue;
    int depth = 0;
    for (size_t end = at + kTileEdgeCall.size() - 1; end < text.size(); ++end) {
      depth += text[end] == '(' ? 1 : text[end] == ')' ? -1 : 0;
      if (depth == 0) {
        calls.insert(text.substr(at, end - at + 1));
        break;
      }
    }
  }
}

/// Whether every identifier in `text` is one of `names` (numbers are not identifiers).
bool names_only(std::string_view text, const std::set<std::string>& names) {
  for (size_t at = 0; at < text.size();) {
    if (!cl::is_identifier_char(text[at])) {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < text.size() && cl::is_identifier_char(text[end]))
      ++end;
    const std::string_view token = text.substr(at, end - at);
    if (std::isdigit(static_cast<unsigned char>(token[0])) == 0 &&
        names.count(std::string(token)) == 0)
      return false;
    at = end;
  }
  return true;
}

/// `text` with every occurrence of `call` replaced by 0.
std::string with_zero_for(const std::string& call, const std::string& text) {
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(call); at != std::string::npos; at = text.find(call, from)) {
    out.append(text, from, at - from);
    out += '0';
    from = at + call.size();
  }
  out.append(text, from, std::string::npos);
  return out;
}

} // namespace

void Generator::order_edge_tiles_first(const std::vector<std::string>& interior) {
  // The work-groups' loops, each one group per tile, and each asked about by one call.
  std::vector<const LoopFrame*> groups;
  for (const LoopFrame& frame : loops_)
    if (frame.level == Level::Wrg)
      groups.push_back(&frame);
  if (groups.empty() || groups.size() != interior.size())
    return;
  std::set<std::string> asked;
  for (const std::string& call : interior)
    asked.insert(arith::to_c(tile_edge_calls_.at(call).index));
  for (const LoopFrame* frame : groups) {
    const std::string name = arith::to_c(frame->var);
    if (frame->kind != cl::LoopKind::Block || frame->block == nullptr ||
        frame->block->stmts.empty() || asked.count(name) == 0)
      return;
    const auto* line = std::get_if<cl::Line>(&frame->block->stmts.front().node);
    if (line == nullptr ||
        line->text != fmt::format("int {} = get_group_id({});", name, frame->dim))
      return;
  }
  // GPUs start the groups in the order of their linear id, dimension 0 fastest.
  std::sort(groups.begin(), groups.end(),
            [](const LoopFrame* a, const LoopFrame* b) { return a->dim > b->dim; });
  const int rank = static_cast<int>(groups.size());
  std::string linear;
  std::string counts;
  for (const LoopFrame* frame : groups) {
    const std::string count = arith::to_c(frame->trip);
    linear = linear.empty()
                 ? fmt::format("get_group_id({})", frame->dim)
                 : fmt::format("({}) * ({}) + get_group_id({})", linear, count, frame->dim);
    counts += fmt::format(", {}", count);
  }
  for (int which = 0; which < rank; ++which) {
    const LoopFrame& frame = *groups[static_cast<size_t>(which)];
    std::get<cl::Line>(frame.block->stmts.front().node).text =
        fmt::format("int {} = {}({}{}, {});", arith::to_c(frame.var),
                    edge_tiles_first_function(rank), linear, counts, which);
  }
  edge_first_ranks_.insert(rank);
}

std::string Generator::edge_tiles_first_helpers() const {
  std::string code;
  for (int rank : edge_first_ranks_)
    code += edge_tiles_first_source(rank);
  return code;
}

void Generator::with_interior_copy(const std::function<void()>& body) {
  cl::Block whole;
  const int64_t group_streams_before = group_streams_;
  blocks_.push_back(&whole);
  body();
  blocks_.pop_back();
  // Columns exchanged inside were assigned in the body's own blocks.
  exchanged_columns_.clear();
  // The calls whose arguments are known where the body starts: the enclosing loops' variables
  // and the sizes (not those of a loop inside the body).
  std::set<std::string> known;
  for (const LoopFrame& frame : loops_)
    known.insert(arith::to_c(frame.var));
  for (const arith::Expr& size : program_.size_vars())
    known.insert(size.node().name);
  std::set<std::string> calls;
  cl::for_each_text(whole, [&](std::string& text) { collect_tile_edge_calls(text, calls); });
  std::vector<std::string> interior;
  std::string condition;
  for (const std::string& call : calls) {
    const std::string_view arguments = std::string_view(call).substr(kTileEdgeCall.size());
    if (!names_only(arguments, known))
      continue;
    interior.push_back(call);
    condition += fmt::format("{}{} == 0", condition.empty() ? "" : " && ", call);
  }
  // Every work-item of the group takes the same copy (the edges are its tile's), so barriers
  // inside are allowed. A shared stream (rows shared by a work-group in local memory) keeps one
  // copy: copied, it computed wrong results on PoCL (LLVM 15), also in its tiles on the grid's
  // edges, which run the code as it was, so its copies could not be checked on CI.
  const bool barriers = cl::census(whole).barriers > 0;
  if (interior.empty() || (barriers && group_streams_ > group_streams_before)) {
    for (cl::Stmt& stmt : whole.stmts)
      current().stmts.push_back(std::move(stmt));
    return;
  }
  for (const std::string& call : interior) {
    const auto length = tile_edge_calls_.find(call);
    LIFTX_INTERNAL_CHECK(length != tile_edge_calls_.end(), "{} was not generated", call);
    kernel_.interior_tile_counts.push_back(length->second.count);
  }
  if (options_.edge_tiles_first)
    order_edge_tiles_first(interior);
  cl::Block copy = whole;
  cl::for_each_text(copy, [&](std::string& text) {
    for (const std::string& call : interior)
      text = with_zero_for(call, text);
  });
  emit_stmt({cl::If{condition, std::move(copy)}});
  // OpenCL needs nothing between the two, but PoCL's work-group functions (LLVM 15) crash on two
  // consecutive conditional blocks with barriers unless a barrier separates them.
  if (barriers)
    emit_stmt({cl::Barrier{true, false}});
  emit_stmt({cl::If{fmt::format("!({})", condition), std::move(whole)}});
}

} // namespace liftx::codegen
