#pragma once
/// The winner of an exploration as `liftx explore` hands it over: why the model liked it, its
/// kernel, and the files `--out DIR` writes.
#include "explore/explore.hpp"
#include "explore/rank.hpp"
#include "explore/session.hpp"
#include "model/model.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace liftx::explore {

/// The files `explore --out DIR` writes: the lowered program, its kernel and its launch sidecar
/// (for `liftx run --launch`).
inline constexpr const char* kWinnerFiles[] = {"best.lift", "best.cl", "best.json"};

/// UserError when one of the winner's files in `dir` would be `input`; checked before the
/// exploration, which may take long: never written over its input.
void refuse_winner_over_input(const std::filesystem::path& dir, const std::filesystem::path& input);

/// Writes the winner's files (kWinnerFiles) into `dir`, which it creates; never over `input`.
void write_winner(const std::filesystem::path& dir, const std::string& lowered,
                  const std::string& kernel, const std::string& sidecar,
                  const std::filesystem::path& input);

/// The winner's kernel: the one its run reported, else generated again.
std::string winner_kernel(const RankedVariant& r, const Attempt& best);

/// The winner's reasons: those ranking gave it, or (ranked beyond the explained top rows)
/// computed now.
std::vector<model::Explanation> reasons_of(const RankedVariant& r, const Session& session,
                                           RecordingWorkerMeasure& measure,
                                           const ir::Program& program);

} // namespace liftx::explore
