#include "explore/winner.hpp"

#include "codegen/kernel.hpp"
#include "features/derived.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <system_error>

namespace liftx::explore {

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const std::string& text, const fs::path& input) {
  write_output_file(path, text, {input}, "--out");
}

} // namespace

void refuse_winner_over_input(const fs::path& dir, const fs::path& input) {
  for (const char* name : kWinnerFiles)
    refuse_overwriting_input(dir / name, {input}, "--out");
}

void write_winner(const fs::path& dir, const std::string& lowered, const std::string& kernel,
                  const std::string& sidecar, const fs::path& input) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  LIFTX_USER_CHECK(!ec, "cannot create {}: {}", dir.string(), ec.message());
  write_file(dir / kWinnerFiles[0], lowered, input);
  write_file(dir / kWinnerFiles[1], kernel, input);
  write_file(dir / kWinnerFiles[2], sidecar, input);
}

std::string winner_kernel(const RankedVariant& r, const Attempt& best) {
  return best.report.kernel_source.empty()
             ? codegen::generate(*r.program, codegen::Options{r.variant.launch.tied}).source
             : best.report.kernel_source;
}

std::vector<model::Explanation> reasons_of(const RankedVariant& r, const Session& session,
                                           RecordingWorkerMeasure& measure,
                                           const ir::Program& program) {
  if (!r.reasons.empty())
    return r.reasons;
  const model::Model& ranking_model = model_for(*session.model(), program);
  const std::vector<double> all =
      features::all_values(measure.features().compute(*r.program, r.variant, session.sizes()),
                           training_throughput(ranking_model, measure.features().profile()));
  const std::vector<int> columns = ranking_model.feature_indices(features::all_names());
  Eigen::RowVectorXd row(static_cast<Eigen::Index>(columns.size()));
  for (size_t c = 0; c < columns.size(); ++c)
    row[static_cast<Eigen::Index>(c)] = all[size_t(columns[c])];
  return ranking_model.explain(row);
}

} // namespace liftx::explore
