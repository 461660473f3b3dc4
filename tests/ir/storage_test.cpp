// Storage layouts (ir/storage.hpp): the symbolic index the code generator emits and the position
// the host packs agree, every element of every field has a slot of its own inside the buffer,
// and packing puts each value there.
#include "helpers.hpp"

#include "ir/storage.hpp"

#include <cstring>
#include <random>
#include <set>

using namespace liftx;
using namespace liftx::ir;

namespace {

std::vector<StorageGroup> layouts(size_t fields) {
  std::vector<size_t> f(fields);
  for (size_t i = 0; i < fields; ++i)
    f[i] = i;
  return {{StorageGroup::Layout::AoS, 1, f},
          {StorageGroup::Layout::AoSoA, 4, f},
          {StorageGroup::Layout::AoSoA, 32, f}};
}

} // namespace

TEST_CASE("storage: the table's positions, symbolic and numeric") {
  const StorageGroup aos{StorageGroup::Layout::AoS, 1, {0, 1, 2}};
  const StorageGroup aosoa{StorageGroup::Layout::AoSoA, 4, {0, 1, 2}};
  struct Row {
    const StorageGroup* group;
    size_t row, column, row_length, field, expected;
  };
  // (r, c) of field k, rows of N, F = 3: AoS (r N + c) F + k; AoSoA(4) r P F + (c / 4) 12 +
  // 4 k + c % 4 with P = N rounded up to 4.
  const Row rows[] = {{&aos, 0, 0, 10, 0, 0},
                      {&aos, 0, 0, 10, 2, 2},
                      {&aos, 1, 3, 10, 1, 40},
                      {&aosoa, 0, 0, 10, 0, 0},
                      {&aosoa, 0, 3, 10, 0, 3},
                      {&aosoa, 0, 3, 10, 2, 11},
                      {&aosoa, 0, 5, 10, 1, 17},
                      {&aosoa, 1, 0, 10, 0, 36},
                      {&aosoa, 2, 5, 8, 2, 2 * 24 + 12 + 8 + 1}};
  for (const Row& r : rows) {
    CAPTURE(layout_text(*r.group));
    CAPTURE(r.row);
    CAPTURE(r.column);
    CAPTURE(r.field);
    CHECK(stored_position(*r.group, r.row, r.column, r.row_length, r.field) == r.expected);
  }
  CHECK(stored_elements(aosoa, 3, 10) == 3 * 12 * 3);
  CHECK(stored_elements(aos, 3, 10) == 90);
  CHECK(layout_text(aosoa) == "aosoa(4)");
}

TEST_CASE("storage: every element has its own slot in the buffer; the symbolic index agrees") {
  std::mt19937_64 rng(7);
  const arith::Expr r = arith::var("r"), c = arith::var("c"), n = arith::var("n");
  for (size_t fields : {2, 3, 9})
    for (const StorageGroup& g : layouts(fields))
      for (size_t row_length : {1, 5, 32, 37, 64}) {
        CAPTURE(layout_text(g));
        CAPTURE(fields);
        CAPTURE(row_length);
        const size_t rows = 3;
        const size_t size = stored_elements(g, rows, row_length);
        const arith::Expr symbolic = stored_elements(g, arith::Expr(int64_t(rows)), n);
        CHECK(arith::evaluate(symbolic, {{"n", int64_t(row_length)}}) == int64_t(size));
        std::set<size_t> used;
        for (size_t k = 0; k < fields; ++k) {
          const arith::Expr index = stored_index(g, r, c, n, k);
          for (size_t row = 0; row < rows; ++row)
            for (size_t col = 0; col < row_length; ++col) {
              const size_t at = stored_position(g, row, col, row_length, k);
              CHECK(at < size);
              CHECK(used.insert(at).second);
              if (std::uniform_int_distribution<int>(0, 7)(rng) == 0)
                CHECK(arith::evaluate(index, {{"r", int64_t(row)},
                                              {"c", int64_t(col)},
                                              {"n", int64_t(row_length)}}) == int64_t(at));
            }
        }
        // Packing: field k's value at (row, col) lands at its position; unused slots are 0.
        std::vector<std::vector<float>> values(fields, std::vector<float>(rows * row_length));
        std::vector<const unsigned char*> pointers;
        for (size_t k = 0; k < fields; ++k) {
          for (size_t i = 0; i < values[k].size(); ++i)
            values[k][i] = static_cast<float>(1 + k * 1000 + i);
          pointers.push_back(reinterpret_cast<const unsigned char*>(values[k].data()));
        }
        std::vector<unsigned char> bytes = pack_fields(g, pointers, rows, row_length, 4);
        REQUIRE(bytes.size() == size * 4);
        std::vector<float> packed(size);
        std::memcpy(packed.data(), bytes.data(), bytes.size());
        for (size_t k = 0; k < fields; ++k)
          for (size_t i = 0; i < rows * row_length; ++i)
            CHECK(packed[stored_position(g, i / row_length, i % row_length, row_length, k)] ==
                  values[k][i]);
        size_t zeros = 0;
        for (float v : packed)
          zeros += v == 0.0f;
        CHECK(zeros == size - used.size());
      }
}
