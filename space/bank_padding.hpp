#pragma once
/// Padding of local arrays against bank conflicts (seed 004, section 5 and its Algorithm 2).
///
/// Local memory is split into banks of 4-byte words (word w in bank w mod banks); lanes of a warp
/// reading distinct words of one bank wait for each other. Padding every row of a local array by p
/// unused elements (rule pad-local-rows, toLocalPadded) changes which banks a warp reading down a
/// column, or across the rows a warp spans, meets. For each local array the seed enumerates
/// p = 0 .. banks - 1 and keeps the p of least total cost over the array's references, a reference
/// costing C(n) = t_start + t_request * n for its degree n of bank conflicts. The seed takes the
/// degree of a reference as gcd(stride across the threads, banks); here it is the degree of the
/// representative warp's lanes (features::bank_conflict_degree), which equals that gcd when the
/// warp lies in one row of the work-group and also counts warps that span several rows.
#include "codegen/launch.hpp"
#include "ir/expr.hpp"
#include "rewrite/walk.hpp"
#include "target/profile.hpp"

#include <cstdint>
#include <vector>

namespace liftx::space {

/// The seed's linear cost of one bank access with `degree` simultaneous requests (its Eq. 3).
/// The start cost adds the same to every padding's total (the references are the same), so the
/// choice minimises the sum of the degrees; it shows only in the reported costs.
struct BankCost {
  double start = 1.0;
  double per_request = 1.0;
  double operator()(double degree) const { return start + per_request * degree; }
};

struct LocalArrayPadding {
  rewrite::Path path;  ///< the toLocal call in the program it was chosen for
  int64_t padding = 0; ///< the chosen p (0: the array stays unpadded)
  // Over all the kernel's local references, the earlier arrays' paddings in place:
  double cost_unpadded = 0;   ///< the total cost with this array at p = 0
  double cost_padded = 0;     ///< the same at the chosen p
  double degree_unpadded = 1; ///< the worst reference's degree with this array at p = 0
  double degree_padded = 1;   ///< the same at the chosen p (the last array's: the final kernel's)
};

struct BankPadding {
  ir::Program program; ///< the input with every chosen padding applied
  /// One per toLocal call whose array has two or more dimensions of scalars, in site order.
  std::vector<LocalArrayPadding> arrays;
  int64_t banks = 0;
  bool changed() const;
};

/// Chooses the padding of every local array of `program` (a lowered program; `request` and
/// `device` as for features::analyze, whose representative warp gives each reference's degree).
/// Arrays are chosen one after another, each with the earlier ones' choices in place; a padding is
/// kept only when it lowers the cost (ties keep the smaller p). A CPU device has no banks: its
/// program comes back unchanged, with no arrays listed.
BankPadding choose_bank_padding(const ir::Program& program, const Sizes& sizes,
                                const codegen::LaunchRequest& request,
                                const target::DeviceProfile& device, BankCost cost = {});

} // namespace liftx::space
