#pragma once
/// `liftx explore` as data: a run's time as the table says it, the runs as JSON rows, CSV and one
/// JSON document, the untuned kernel measured for comparison and the summary lines that compare
/// with it. The CLI parses the options, calls the session and prints.
#include "exec/run.hpp"
#include "explore/explore.hpp"
#include "explore/rank.hpp"
#include "explore/session.hpp"
#include "ir/expr.hpp"
#include "target/profile.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace liftx::explore {

/// A run whose interquartile range exceeds this share of its median is flagged as noisy.
inline constexpr double kNoisySpread = 0.10;

bool noisy(const runtime::Timing& timing);

/// "0.0217 ms ±4%": the median and the interquartile range relative to it.
std::string describe_time(const exec::RunReport& report);

/// One attempt as data (the JSON rows and the CSV columns); `stored` is the database's
/// measurement that stood for the run, if one did.
nlohmann::json attempt_json(const Attempt& attempt, const RankedVariant& ranked, size_t run,
                            const perfdb::Measurement* stored);

/// Every attempt of `result` as attempt_json's rows, numbered from 1 in the order they ran.
nlohmann::json attempt_rows(const ExploreResult& result, const std::vector<RankedVariant>& ranked,
                            const RecordingWorkerMeasure& measure);

/// `--format csv`: the header and one line per row of attempt_rows, each ending in a newline;
/// the column "best" marks the row `best` (an index into the rows).
std::string explore_csv(const nlohmann::json& rows, std::optional<size_t> best);

/// The untuned kernel (space::default_lowering: what compile() gives, and what tune() measures
/// first), run once beside the variants so that the summary says what tuning gained. Not
/// recorded: it is the comparison, not a variant of the ranking.
struct Baseline {
  std::string strategy;
  std::optional<exec::RunReport> report;
  std::string why_not; ///< when there is no default lowering, or it does not fit the device
};

Baseline measure_baseline(const Session& session, RecordingWorkerMeasure& measure);

/// "untuned   0.5201 ms, the default lowering (global2d_10): the best is 3.72x faster" with its
/// newline, or "" when there is nothing to compare with.
std::string baseline_line(const Baseline& baseline, const exec::RunReport& best);

/// "stopped after 8 runs: expected gain left 0.40% < 1%", or the runs and the gain left.
std::string describe_online_stop(const ExploreResult& result, const ExploreOptions& options);

/// `--format json`: the whole exploration of `program` (from `file`, at `sizes`, on `device`,
/// recorded in `db_path`) as one document; `rows` are attempt_rows'.
nlohmann::json explore_document(const std::string& file, const ir::Program& program,
                                const Sizes& sizes, const target::DeviceProfile& device,
                                const std::string& strategy, const std::filesystem::path& db_path,
                                const Session& session, const ExploreResult& result,
                                const nlohmann::json& rows, const Baseline& baseline);

} // namespace liftx::explore
