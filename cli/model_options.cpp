#include "cli/model_options.hpp"

#include "cli/options.hpp"
#include "model/online.hpp"
#include "model/protocol.hpp"
#include "perfdb/dataset.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>

namespace liftx::cli {

namespace fs = std::filesystem;

model::TrainOptions DataOptions::train_options() const {
  model::TrainOptions t = boosting;
  t.transform = model::parse_transform(transform);
  t.k = neighbours;
  t.distance_weighted = distance_weighted;
  t.objective = model::parse_objective(objective);
  return t;
}

std::vector<std::string> DataOptions::columns(const std::vector<std::string>& available) const {
  const std::string set =
      !features.empty() ? features
      : model::parse_kind(kind) == model::Kind::knn || model::parse_kind(kind) == model::Kind::tree
          ? "table1"
          : "all";
  return perfdb::feature_set(set, available);
}

void add_data_options(CLI::App* cmd, DataOptions& o, std::vector<std::string>* model_files,
                      const std::string& model_help) {
  add_db_option(cmd, o.db, "to read");
  add_device_key_option(cmd, o.device,
                        "device key in the database (default: the only device it holds)");
  cmd->add_option("--profile", o.profile, "feature profile the features were stored for (cpu)");
  cmd->add_option("--kind", o.kind,
                  "model kind: knn (PCA + k nearest neighbours), tree (CART) or boosted "
                  "(XGBoost); default knn");
  // `--model` names a model file everywhere else; the older `--model KIND` of these commands
  // still works (documented command lines stay runnable), anything else is pointed to --kind,
  // or, where the command judges model files, is one.
  const auto is_kind = [](const std::string& value) {
    return value == "knn" || value == "tree" || value == "boosted";
  };
  if (model_files) {
    cmd->add_option_function<std::vector<std::string>>(
        "--model",
        [&o, model_files, is_kind](const std::vector<std::string>& values) {
          for (const std::string& value : values) {
            if (is_kind(value))
              o.kind = value;
            else
              model_files->push_back(value);
          }
        },
        model_help.empty()
            ? "judge these trained model files on every input of the database instead of "
              "training (repeatable): per kind of program, runs to 90% and 95% and first picks "
              "within 95%"
            : model_help);
  } else {
    cmd->add_option_function<std::string>(
           "--model",
           [&o, is_kind](const std::string& value) {
             LIFTX_USER_CHECK(is_kind(value),
                              "--model {}: this command takes the model kind as "
                              "--kind knn|tree|boosted (--model is a model file in "
                              "explore, rank and evaluate)",
                              value);
             o.kind = value;
           })
        ->group(""); // hidden from --help
  }
  cmd->add_option("--transform", o.transform,
                  "features as computed (raw), log2(1 + x) (log), or log with launch sizes "
                  "relative to the bytes moved (log_relative); default raw");
  cmd->add_option("--neighbours", o.neighbours, "k of the kNN model (default 5)")
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--distance-weighted", o.distance_weighted,
                "weight the k neighbours by 1 / distance instead of equally");
  model::TrainOptions& b = o.boosting;
  cmd->add_option("--trees", b.trees, "boosted: boosting rounds (default 400)");
  cmd->add_option("--parallel-trees", b.parallel_trees,
                  "boosted: trees grown side by side per round on their own samples, their step "
                  "averaged (XGBoost's num_parallel_tree; default 1)");
  cmd->add_option("--learning-rate", b.learning_rate, "boosted: XGBoost's eta (default 0.05)");
  cmd->add_option("--boost-depth", b.boost_depth, "boosted: depth of each tree (default 6)");
  cmd->add_option("--min-child-weight", b.min_child_weight,
                  "boosted: least hessian sum in a leaf (default 1)");
  cmd->add_option("--subsample", b.subsample, "boosted: rows sampled per tree (default 0.8)");
  cmd->add_option("--colsample", b.colsample, "boosted: columns sampled per tree (default 0.8)");
  cmd->add_option("--objective", o.objective,
                  "boosted: regression (on log2 of the normalised throughput) or pairwise "
                  "(ranking within each program and input; uncalibrated predictions)");
  cmd->add_option("--boost-seed", b.seed, "boosted: XGBoost's random seed (default 1)");
  cmd->add_option("--boost-seeds", b.seeds,
                  "boosted: boosters trained with the seeds --boost-seed, --boost-seed + 1, ..., "
                  "their predictions averaged (in log space; default 1)");
  cmd->add_option("--boost-threads", b.threads, "boosted: training threads (default 0: all cores)");
  cmd->add_option("--features", o.features,
                  "feature columns: table1 (as computed), derived (size-free ratios and analytic "
                  "roofline terms), size_free (derived + the size-independent table1 columns) or "
                  "all; default table1 for knn and tree, all for boosted");
}

void write_text(const fs::path& path, const std::string& text) {
  write_output_file(path, text, {}, "the output");
}

void add_launch_spread_option(CLI::App* cmd, double& spread) {
  cmd->add_option("--launch-spread", spread,
                  fmt::format("online: a batch runs another launch shape (the dimensions a "
                              "work-group spans) before a second of one shape when its "
                              "prediction is within this fraction (default {:g}; 0: off)",
                              model::OnlineOptions{}.launch_spread))
      ->check(CLI::Range(0.0, 1.0));
}

} // namespace liftx::cli
