#include "ir/storage.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <cstring>
#include <set>

namespace liftx::ir {

bool is_scalar_grid(const Type& t) {
  const auto* a = t.as<ArrayType>();
  if (!a)
    return false;
  const Type* element = &a->element;
  while (const auto* inner = element->as<ArrayType>())
    element = &inner->element;
  return element->is_scalar();
}

std::string layout_text(const StorageGroup& group) {
  switch (group.layout) {
  case StorageGroup::Layout::AoS:
    return "aos";
  case StorageGroup::Layout::AoSoA:
    return fmt::format("aosoa({})", group.block);
  }
  LIFTX_UNREACHABLE("storage layout");
}

void check_storage(const Program& program, const SourceLoc& loc) {
  std::set<size_t> grouped;
  for (const StorageGroup& g : program.storage) {
    if (g.fields.size() < 2)
      throw UserError(fmt::format("an {} layout groups two or more grids", layout_text(g)), loc);
    if (g.layout == StorageGroup::Layout::AoSoA && (g.block < 2 || g.block > 1024))
      throw UserError(fmt::format("an aosoa block holds 2 to 1024 elements, not {}", g.block), loc);
    if (g.layout == StorageGroup::Layout::AoS && g.block != 1)
      throw UserError("an aos layout has no block size", loc);
    for (size_t f : g.fields) {
      if (f >= program.params.size())
        throw UserError(fmt::format("layout: no parameter {} in {}", f, program.name), loc);
      const Param& p = *program.params[f].as<Param>();
      if (!grouped.insert(f).second)
        throw UserError(fmt::format("layout: '{}' is stored in two places", p.name), loc);
      const Type& t = program.params[f].type();
      if (!is_scalar_grid(t))
        throw UserError(
            fmt::format("layout: '{}' is not an array of scalars ({})", p.name, t.to_string()),
            loc);
      const Type& first = program.params[g.fields[0]].type();
      if (t != first)
        throw UserError(fmt::format("layout: the grids of one {} group have one type: '{}' is {}, "
                                    "'{}' is {}",
                                    layout_text(g), program.params[g.fields[0]].as<Param>()->name,
                                    first.to_string(), p.name, t.to_string()),
                        loc);
    }
  }
}

std::optional<StoredField> stored_field(const Program& program, size_t param) {
  for (const StorageGroup& g : program.storage)
    for (size_t k = 0; k < g.fields.size(); ++k)
      if (g.fields[k] == param)
        return StoredField{&g, k};
  return std::nullopt;
}

arith::Expr stored_index(const StorageGroup& group, const arith::Expr& row,
                         const arith::Expr& column, const arith::Expr& row_length, size_t field) {
  const auto fields = static_cast<int64_t>(group.fields.size());
  const auto k = static_cast<int64_t>(field);
  switch (group.layout) {
  case StorageGroup::Layout::AoS:
    return (row * row_length + column) * fields + k;
  case StorageGroup::Layout::AoSoA: {
    const arith::Expr block(group.block);
    const arith::Expr padded_row = (row_length + (group.block - 1)) / block * block;
    return row * padded_row * fields + column / block * (fields * group.block) + k * group.block +
           column % block;
  }
  }
  LIFTX_UNREACHABLE("storage layout");
}

size_t stored_position(const StorageGroup& group, size_t row, size_t column, size_t row_length,
                       size_t field) {
  const size_t fields = group.fields.size();
  switch (group.layout) {
  case StorageGroup::Layout::AoS:
    return (row * row_length + column) * fields + field;
  case StorageGroup::Layout::AoSoA: {
    const auto block = static_cast<size_t>(group.block);
    const size_t padded_row = (row_length + block - 1) / block * block;
    return row * padded_row * fields + column / block * fields * block + field * block +
           column % block;
  }
  }
  LIFTX_UNREACHABLE("storage layout");
}

arith::Expr stored_elements(const StorageGroup& group, const arith::Expr& rows,
                            const arith::Expr& row_length) {
  const auto fields = static_cast<int64_t>(group.fields.size());
  if (group.layout == StorageGroup::Layout::AoS)
    return rows * row_length * fields;
  const arith::Expr block(group.block);
  return rows * ((row_length + (group.block - 1)) / block * block) * fields;
}

size_t stored_elements(const StorageGroup& group, size_t rows, size_t row_length) {
  const size_t fields = group.fields.size();
  if (group.layout == StorageGroup::Layout::AoS)
    return rows * row_length * fields;
  const auto block = static_cast<size_t>(group.block);
  return rows * ((row_length + block - 1) / block * block) * fields;
}

std::vector<unsigned char> pack_fields(const StorageGroup& group,
                                       const std::vector<const unsigned char*>& fields, size_t rows,
                                       size_t row_length, size_t value_bytes) {
  LIFTX_INTERNAL_CHECK(fields.size() == group.fields.size(), "{} grids for a group of {}",
                       fields.size(), group.fields.size());
  std::vector<unsigned char> out(stored_elements(group, rows, row_length) * value_bytes, 0);
  for (size_t k = 0; k < fields.size(); ++k)
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < row_length; ++c)
        std::memcpy(out.data() + stored_position(group, r, c, row_length, k) * value_bytes,
                    fields[k] + (r * row_length + c) * value_bytes, value_bytes);
  return out;
}

std::vector<unsigned char> pack_grids(const StorageGroup& group,
                                      const std::vector<const unsigned char*>& fields,
                                      const std::vector<int64_t>& shape, size_t value_bytes) {
  size_t elements = 1;
  for (int64_t n : shape)
    elements *= static_cast<size_t>(n);
  const size_t row_length = shape.empty() ? 1 : static_cast<size_t>(shape.back());
  return pack_fields(group, fields, row_length == 0 ? 0 : elements / row_length, row_length,
                     value_bytes);
}

} // namespace liftx::ir
