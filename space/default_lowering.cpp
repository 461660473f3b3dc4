// The default lowering: what compile() builds and tune() and explore measure first, the untuned
// kernel a tuned variant is compared with.
#include "space/default_lowering.hpp"

#include "codegen/kernel.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/walk.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

namespace liftx::space {

std::pair<ir::Program, std::string> default_lowering(const ir::Program& program,
                                                     const Sizes& sizes) {
  try {
    codegen::generate(program);
    return {program, "as written"};
  } catch (const UserError& as_written) {
    std::string tried;
    // Several results per point written as zipND(mapND(f1, x), mapND(f2, x), ...) are fused into
    // one map nest first, as the variant space does: otherwise the nests' maps add up and a 2D
    // zip of two 2D nests is lowered by the 3D strategy (the first nest on two thread
    // dimensions, the second on the third, each of its rows recomputed by every work-item).
    const ir::Program fused = rewrite::apply_until_fixpoint(program, rewrite::zip_of_maps());
    // A work-item per point with x on dimension 0 (coalesced), for 3D, 2D, then 1D grids (a
    // strategy refuses a program without that many maps).
    for (const char* strategy :
         {"global3d_210", "global2d_10", "global1d", "workgroup2d", "workgroup1d"}) {
      auto lowered = rewrite::lower(fused, strategy, 0, sizes);
      if (const auto* reason = std::get_if<std::string>(&lowered)) {
        tried += fmt::format("\n  {}: {}", strategy, *reason);
        continue;
      }
      const ir::Program& p = std::get<ir::Program>(lowered);
      try {
        codegen::generate(p);
        return {p, strategy};
      } catch (const UserError& e) {
        tried += fmt::format("\n  {}: {}", strategy, e.message());
      }
    }
    throw UserError(fmt::format("cannot compile {}: as written, {}; and no lowering strategy "
                                "gives a kernel:{}",
                                program.name, as_written.message(), tried));
  }
}

} // namespace liftx::space
