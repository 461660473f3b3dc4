#include "adapt/plot.hpp"

#include "adapt/adapt.hpp"
#include "model/plot.hpp"
#include "support/error.hpp"

#include <fstream>
#include <vector>

namespace liftx::adapt {

void write_held_out_plot(const std::string& path, const std::string& title,
                         const std::string& typical, const HeldOutSummary& summary) {
  std::vector<std::string> shapes;
  std::vector<model::Series> plotted{{"adaptive pick", {}, model::palette(0), false},
                                     {"best single member", {}, model::palette(1), false},
                                     {"tuned at " + typical, {}, model::palette(2), false}};
  for (const HeldOutRow& row : summary.rows) {
    shapes.push_back(shape_text(row.shape));
    plotted[0].y.push_back(100 * row.adaptive);
    plotted[1].y.push_back(100 * row.single);
    plotted[2].y.push_back(100 * row.typical);
  }
  std::ofstream out(path);
  out << model::grouped_bar_chart_svg(title, "% of the shape's best known", shapes, plotted);
  LIFTX_USER_CHECK(out.good(), "cannot write {}", path);
}

} // namespace liftx::adapt
