#pragma once
/// The default lowering of a high-level program: the untuned kernel that `compile()` builds and
/// that `tune()` and `liftx explore` measure beside the variants they rank.
#include "space/space.hpp"

#include <string>
#include <utility>

namespace liftx::space {

/// The program itself ("as written") when it already generates a kernel; else lowered by the
/// first strategy that gives one (a work-item per point with x on dimension 0, for 3D, 2D and 1D
/// grids, then work-groups), with the strategy's name. UserError naming every strategy's reason
/// otherwise.
std::pair<ir::Program, std::string> default_lowering(const ir::Program& program,
                                                     const Sizes& sizes);

} // namespace liftx::space
