// Register windows (mapSeqSlide): the window lives in scalar registers `win_k_j`; the first
// size - step elements are loaded once, then each step loads `step` new ones (consecutive global
// elements grouped into aligned vector loads), applies f and rotates the registers.
#include "codegen/generator.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace liftx::codegen {

namespace {

/// The scalar kinds of the registers holding one value of `type`, row-major (tuples: their
/// components in order); nullopt when an array length is not a constant.
std::optional<std::vector<ir::ScalarKind>> register_kinds(const ir::Type& type) {
  if (const auto* s = type.as<ir::ScalarType>())
    return std::vector<ir::ScalarKind>{s->kind};
  std::vector<ir::ScalarKind> kinds;
  if (const auto* t = type.as<ir::TupleType>()) {
    for (const ir::Type& e : t->elements) {
      auto inner = register_kinds(e);
      if (!inner)
        return std::nullopt;
      kinds.insert(kinds.end(), inner->begin(), inner->end());
    }
    return kinds;
  }
  const auto* a = type.as<ir::ArrayType>();
  std::optional<int64_t> n = a ? a->length.as_constant() : std::nullopt;
  if (!n)
    return std::nullopt;
  auto inner = register_kinds(a->element);
  if (!inner)
    return std::nullopt;
  for (int64_t i = 0; i < *n; ++i)
    kinds.insert(kinds.end(), inner->begin(), inner->end());
  return kinds;
}

/// The scalars of a value of constant size, in the layout of register_kinds.
void flatten(const Value& v, std::vector<ScalarValue>& out) {
  if (const ScalarValue* s = as_scalar(v)) {
    LIFTX_INTERNAL_CHECK(s->width == 1, "flattening a vector");
    out.push_back(*s);
    return;
  }
  if (const TupleValue* t = as_tuple(v)) {
    for (const Value& e : t->elements)
      flatten(e, out);
    return;
  }
  const ArrayValue* a = as_array(v);
  const int64_t n = *a->type.as<ir::ArrayType>()->length.as_constant();
  for (int64_t i = 0; i < n; ++i)
    flatten(a->at(arith::Expr(i)), out);
}

} // namespace

/// A value of `type` held in the registers `names[offset ...]` (layout of register_kinds);
/// array indices must be constants, as they are once the maps reading a window are unrolled.
Value Generator::register_value(const ir::Type& type, const RegisterNames& names, int64_t offset) {
  if (type.is_scalar()) {
    const auto& [name, kind] = names->at(static_cast<size_t>(offset));
    return ScalarValue{name, kind};
  }
  if (const auto* t = type.as<ir::TupleType>()) {
    auto tuple = std::make_shared<TupleValue>();
    for (const ir::Type& e : t->elements) {
      tuple->elements.push_back(register_value(e, names, offset));
      offset += static_cast<int64_t>(register_kinds(e)->size());
    }
    return tuple;
  }
  ir::Type element = type.as<ir::ArrayType>()->element;
  const auto stride = static_cast<int64_t>(register_kinds(element)->size());
  return make_array(
      type,
      [this, element, names, offset, stride](const arith::Expr& i) {
        std::optional<int64_t> k = i.as_constant();
        if (!k)
          throw UserError(fmt::format("mapSeqSlide: the window is read at index {}, which is "
                                      "not a constant (registers need constant indices: read "
                                      "it with mapSeq, which is unrolled)",
                                      arith::to_c(i)),
                          loc_);
        return register_value(element, names, offset + *k * stride);
      },
      true);
}

/// Copies `parts` into the registers `names`: runs of consecutive, aligned global elements with
/// one vector load each, the rest one by one.
void Generator::load_registers(const std::vector<ScalarValue>& parts,
                               const std::vector<std::string>& names) {
  static constexpr const char* kComponents = "0123456789abcdef";
  size_t j = 0;
  while (j < parts.size()) {
    const Load* first = direct_load(parts[j]);
    size_t run = 0;
    if (first && first->space == AddressSpace::Global) {
      run = 1;
      while (j + run < parts.size() && run < 16) {
        const Load* next = direct_load(parts[j + run]);
        if (!next || next->buffer != first->buffer || next->space != first->space ||
            !arith::prove_eq(next->index - first->index, arith::Expr(int64_t(run))))
          break;
        ++run;
      }
    }
    int width = 0;
    for (int w : {16, 8, 4, 2})
      if (size_t(w) <= run && provably_aligned(first->index, w, divisors_)) {
        width = w;
        break;
      }
    if (width == 0) {
      emit(fmt::format("{} = {};", names[j], parts[j].text));
      record_loads(parts[j]);
      ++j;
      continue;
    }
    std::vector<ScalarValue> group(parts.begin() + long(j), parts.begin() + long(j) + width);
    ScalarValue vector = vector_of(std::move(group), divisors_);
    std::string temp = fresh("v");
    emit(fmt::format("const {} {} = {};", value_type_name(vector.kind, width), temp, vector.text));
    record_loads(vector);
    for (int k = 0; k < width; ++k)
      emit(fmt::format("{} = {}.s{};", names[j + size_t(k)], temp, kComponents[k]));
    j += size_t(width);
  }
}

std::vector<ir::ScalarKind> Generator::window_kinds(const ir::MapSeqSlide& node,
                                                    const ir::Type& element) const {
  std::optional<int64_t> size = node.size.as_constant();
  std::optional<int64_t> step = node.step.as_constant();
  if (!size || !step)
    throw UserError(fmt::format("mapSeqSlide: the window size and step must be constants, got "
                                "{} and {}",
                                node.size.to_string(), node.step.to_string()),
                    loc_);
  if (*step > *size)
    throw UserError(fmt::format("mapSeqSlide: step {} is larger than the window {}", *step, *size),
                    loc_);
  std::optional<std::vector<ir::ScalarKind>> kinds = register_kinds(element);
  if (!kinds || *size * static_cast<int64_t>(kinds->size()) > kMaxWindowRegisters)
    throw UserError(fmt::format("mapSeqSlide: a window of {} elements of type {} does not fit "
                                "in {} registers",
                                *size, element.to_string(), kMaxWindowRegisters),
                    loc_);
  return *kinds;
}

Generator::RegisterWindow Generator::declare_window(const ir::MapSeqSlide& node,
                                                    const ir::Type& element) {
  const std::vector<ir::ScalarKind> kinds = window_kinds(node, element);
  RegisterWindow window;
  window.size = *node.size.as_constant();
  window.step = *node.step.as_constant();
  const std::string base = fresh("win");
  auto names = std::make_shared<std::vector<std::pair<std::string, ir::ScalarKind>>>();
  window.slots.resize(static_cast<size_t>(window.size));
  int64_t window_bytes = 0;
  for (int64_t k = 0; k < window.size; ++k) {
    // One declaration per slot and run of equal kinds: `float win_3_1_0, win_3_1_1, ...;`.
    std::string line;
    for (size_t j = 0; j < kinds.size(); ++j) {
      std::string name = fmt::format("{}_{}_{}", base, k, j);
      if (j == 0 || kinds[j] != kinds[j - 1]) {
        if (!line.empty())
          emit(line + ";");
        line = fmt::format("{} {}", ir::scalar_name(kinds[j]), name);
      } else {
        line += ", " + name;
      }
      window.slots[size_t(k)].push_back(name);
      names->emplace_back(name, kinds[j]);
      window_bytes += static_cast<int64_t>(scalar_bytes(kinds[j]));
    }
    if (!line.empty())
      emit(line + ";");
  }
  kernel_.private_bytes += window_bytes;
  kernel_.window_bytes += window_bytes;
  window.value = register_value(ir::Type::array(element, node.size), names, 0);
  return window;
}

void Generator::load_slot(const RegisterWindow& window, int64_t slot, const Value& v) {
  std::vector<ScalarValue> parts;
  flatten(v, parts);
  load_registers(parts, window.slots[size_t(slot)]);
}

void Generator::rotate(const RegisterWindow& window) {
  const int64_t keep = window.size - window.step;
  for (int64_t k = 0; k < keep; ++k)
    for (size_t j = 0; j < window.slots[size_t(k)].size(); ++j)
      emit(fmt::format("{} = {};", window.slots[size_t(k)][j],
                       window.slots[size_t(k + window.step)][j]));
}

Value Generator::hold(const Value& v, const ir::Type& type) {
  std::vector<ScalarValue> parts;
  flatten(v, parts);
  auto names = std::make_shared<std::vector<std::pair<std::string, ir::ScalarKind>>>();
  for (const ScalarValue& part : parts) {
    std::string name = fresh("held");
    emit(fmt::format("const {} {} = {};", ir::scalar_name(part.kind), name, part.text));
    record_loads(part);
    names->emplace_back(name, part.kind);
  }
  return register_value(type, names, 0);
}

Value Generator::window_stream(const ir::MapSeqSlide& node, const Value& x,
                               const ir::Type& result) {
  auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
  const ir::Type element = input->type.as<ir::ArrayType>()->element;
  if (shares_windows(element))
    return shared_window_stream(node, x, result);
  auto window = std::make_shared<const RegisterWindow>(declare_window(node, element));
  const int64_t keep = window->size - window->step;
  for (int64_t k = 0; k < keep; ++k)
    load_slot(*window, k, input->at(arith::Expr(k)));
  const ir::Type result_element = result.as<ir::ArrayType>()->element;
  // The private arrays an element is computed in are dead once it is held: the kernel's private
  // memory counts the largest element's once, not every element's (its prologue's included).
  auto largest_element_bytes = std::make_shared<int64_t>(0);
  // Element i is produced where it is read: its consumer reads each element once, in order (a
  // window of its own), so each read is the next step of this window.
  return make_array(
      result,
      [this, f = node.f, window, input, keep, result_element,
       largest_element_bytes](const arith::Expr& i) {
        for (int64_t k = 0; k < window->step; ++k)
          load_slot(*window, keep + k, input->at(i * window->step + keep + k));
        const int64_t before = kernel_.private_bytes;
        // Held in registers of its own before the window rotates under the value's text.
        Value produced = hold(apply(f, {window->value}, nullptr, result_element), result_element);
        const int64_t used = kernel_.private_bytes - before;
        kernel_.private_bytes = before + std::max<int64_t>(0, used - *largest_element_bytes);
        *largest_element_bytes = std::max(*largest_element_bytes, used);
        rotate(*window);
        return produced;
      },
      true);
}

Value Generator::emit_slide_window(const ir::MapSeqSlide& node, const Value& x, TargetPtr dest,
                                   const ir::Type& result) {
  auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
  const ir::Type element = input->type.as<ir::ArrayType>()->element;
  if (shares_windows(element))
    return shared_slide_window(node, x, std::move(dest), result);
  window_kinds(node, element); // its errors before anything is emitted
  if (!dest)
    dest = allocate(result, write_space_.value_or(default_space()), "mapSeqSlide");
  const RegisterWindow window = declare_window(node, element);
  const int64_t keep = window.size - window.step;
  for (int64_t k = 0; k < keep; ++k)
    load_slot(window, k, input->at(arith::Expr(k)));
  arith::Expr trip = result.as<ir::ArrayType>()->length;
  ir::Type result_element = result.as<ir::ArrayType>()->element;
  // The steps stay a loop, rolled unless the program unrolls it: fully unrolled, all steps'
  // loads are issued at once, which on an H200 cost a hand-written float4 window 15-30% of its
  // bandwidth; unrolled by the window's size, a pipeline of windows (a temporal stream) renames
  // its registers instead of rotating them (bench/RESULTS.md, "Streamed pipelines").
  const cl::LoopKind kind =
      emit_loop(Level::Seq, 0, trip, false, "s", "mapSeqSlide", [&](const arith::Expr& index) {
        for (int64_t k = 0; k < window.step; ++k)
          load_slot(window, keep + k, input->at(index * window.step + keep + k));
        apply(node.f, {window.value}, dest->at(index), result_element);
        rotate(window);
      });
  if (kind == cl::LoopKind::For)
    current().stmts.insert(current().stmts.end() - 1,
                           {cl::Line{fmt::format("#pragma unroll {}", node.unroll)}});
  return target_value(dest);
}

} // namespace liftx::codegen
