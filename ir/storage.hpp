#pragma once
/// Storage layouts of input grids (Program::storage): where element (row r, column c) of field
/// k of a group of F grids with rows of length N lies in the group's one buffer, for the code
/// generator (symbolic indices) and the host (packing the grids a user hands over). Rows are the
/// innermost dimension; a grid of several dimensions has one row per index of the outer ones.
///
/// | layout | element (r, c) of field k at |
/// |---|---|
/// | AoS | (r * N + c) * F + k |
/// | AoSoA(B) | r * P * F + (c / B) * F * B + k * B + c % B, P = N rounded up to a multiple of B |
///
/// AoSoA blocks rows rather than the flat index so that a block never straddles two rows (the
/// two agree when B divides N); a row whose length B does not divide ends in unused slots.
#include "ir/arith/expr.hpp"
#include "ir/expr.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace liftx::ir {

/// Nested arrays of scalars: what a group may store.
bool is_scalar_grid(const Type& t);

/// "aos", "aosoa(32)": the layout as the .lift `layout` clause writes it (without its fields).
std::string layout_text(const StorageGroup& group);

/// UserError (at `loc`) unless every group has at least two distinct array parameters of one
/// type of scalars, no parameter is in two groups, and an AoSoA block is 2 to 1024 elements.
void check_storage(const Program& program, const SourceLoc& loc);

/// The group holding parameter `param` (an index into Program::params) and its field position.
struct StoredField {
  const StorageGroup* group;
  size_t field;
};
std::optional<StoredField> stored_field(const Program& program, size_t param);

/// Where element (`row`, `column`) of field `field` lies in its group's buffer, rows of
/// `row_length`.
arith::Expr stored_index(const StorageGroup& group, const arith::Expr& row,
                         const arith::Expr& column, const arith::Expr& row_length, size_t field);
size_t stored_position(const StorageGroup& group, size_t row, size_t column, size_t row_length,
                       size_t field);
/// Elements of a group's buffer when each grid has `rows` rows of `row_length`.
arith::Expr stored_elements(const StorageGroup& group, const arith::Expr& rows,
                            const arith::Expr& row_length);
size_t stored_elements(const StorageGroup& group, size_t rows, size_t row_length);

/// The group's buffer holding `fields` (one per group field, each `rows` x `row_length` values
/// of `value_bytes` bytes, row-major, in order); unused AoSoA slots are zero.
std::vector<unsigned char> pack_fields(const StorageGroup& group,
                                       const std::vector<const unsigned char*>& fields, size_t rows,
                                       size_t row_length, size_t value_bytes);
/// The same for grids of `shape` (outermost first; rows are its last dimension, a scalar's
/// shape {} one element).
std::vector<unsigned char> pack_grids(const StorageGroup& group,
                                      const std::vector<const unsigned char*>& fields,
                                      const std::vector<int64_t>& shape, size_t value_bytes);

} // namespace liftx::ir
