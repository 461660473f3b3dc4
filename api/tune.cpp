// In-application tuning: rank with the shipped model, check and time the best-predicted variants,
// keep the winner in the tuning database, reuse it later.
//
// The tuning database is a liftx performance database (perfdb::PerfDb): every measurement is
// recorded there, so `liftx train` can learn from applications' tuning, and the winners are its
// tuned_winners table. The variants are tried by explore::explore, as `liftx explore` tries them.
#include "liftx/tune.hpp"

#include "api/internal.hpp"
#include "exec/run.hpp"
#include "explore/collect.hpp"
#include "explore/explore.hpp"
#include "explore/models.hpp"
#include "explore/rank.hpp"
#include "ir/parse/parser.hpp"
#include "liftx/version.hpp"
#include "model/model.hpp"
#include "perfdb/db.hpp"
#include "perfdb/record.hpp"
#include "runtime/cache_dir.hpp"
#include "runtime/launch.hpp"
#include "space/default_lowering.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>

namespace liftx {

// The library measures as the command line does.
static_assert(kDefaultTuneWarmup == exec::kDefaultWarmup &&
              kDefaultTuneRepeat == exec::kDefaultRepeat);

namespace {

namespace fs = std::filesystem;

fs::path tuning_db_path(const ContextOptions& options) {
  if (!options.tuning_db.empty())
    return options.tuning_db;
  if (const char* env = std::getenv("LIFTX_TUNING_DB"); env && *env)
    return env;
  return runtime::default_cache_dir() / "tuning.db";
}

void check_inputs(const std::shared_ptr<Context::Impl>& context, const Program& program,
                  const Sizes& sizes, const std::vector<Input>& inputs) {
  if (inputs.empty())
    return;
  LIFTX_USER_CHECK(inputs.size() == program.params.size(),
                   "tune: {} takes {} input{}, got {} (give all of them, or none to tune on "
                   "random data)",
                   program.name, program.params.size(), program.params.size() == 1 ? "" : "s",
                   inputs.size());
  const std::vector<ArrayInfo> params = parameter_arrays(program, sizes);
  for (size_t i = 0; i < params.size(); ++i)
    KernelFactory::check_input(
        context, params[i], inputs[i],
        fmt::format("tune: input {} ({}) of {}", i, params[i].name, program.name));
}

} // namespace

std::string TuneResult::report() const {
  std::string out;
  if (reused)
    out += fmt::format("reused    the stored winner ({}; tuned at {:.4f} ms on {})\n", database,
                       median_ms, timed_on);
  else
    out += fmt::format("tuned     {} variants ranked ({}), {} run, in {:.2f} s; recorded in {}\n",
                       ranked, model, trials.size(), seconds, database);
  out += fmt::format("winner    {}\n", variant);
  if (!reused) {
    out += fmt::format("time      {:.4f} ms median on {}\n", median_ms, timed_on);
    for (const Trial& t : trials)
      out += fmt::format("  {:<28}  {:<60} {}\n",
                         t.rank == 0 ? std::string("(not ranked)")
                                     : fmt::format("rank {} predicted {:.3f}", t.rank, t.predicted),
                         t.variant,
                         t.median_ms ? fmt::format("{:.4f} ms", *t.median_ms)
                                     : t.status + (t.message.empty() ? "" : ": " + t.message));
  }
  for (const std::string& note : notes)
    out += fmt::format("note      {}\n", note);
  return out;
}

namespace {

TuneResult tune_checked(Context& context, const Program& program, const Sizes& sizes,
                        const TuneOptions& options, const std::vector<Input>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  const std::shared_ptr<Context::Impl>& ctx = KernelFactory::context_of(context);
  LIFTX_USER_CHECK(ctx, "tune: the Context was moved from");
  LIFTX_USER_CHECK(options.budget >= 1, "tune: the budget must be at least 1 variant, got {}",
                   options.budget);
  LIFTX_USER_CHECK(options.repeat >= 1 && options.warmup >= 0,
                   "tune: repeat must be at least 1 and warmup at least 0 (got {} and {})",
                   options.repeat, options.warmup);
  LIFTX_USER_CHECK(options.max_variants >= 0, "tune: max_variants must be at least 0, got {}",
                   options.max_variants);
  interp::check_sizes(program, sizes);
  check_inputs(ctx, program, sizes, inputs);
  const target::DeviceProfile& profile = ctx->device.profile;

  TuneResult result;
  const std::string identity = program_identity(program);
  result.key = runtime::content_hash(nlohmann::json{
      {"program", identity},
      {"sizes", sizes},
      {"device", profile.key},
      {"liftx", LIFTX_VERSION}}.dump());
  const fs::path db_path = tuning_db_path(ctx->options);
  result.database = db_path.string();
  perfdb::PerfDb db(db_path);
  auto seconds_so_far = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  if (!options.retune)
    if (std::optional<perfdb::TunedWinner> w = db.winner(result.key)) {
      try {
        const ir::Module module = parse::parse_module(w->lowered, "<tuning database>");
        const Program& lowered = module.main();
        if (same_signature(lowered, program)) {
          std::lock_guard lock(ctx->mutex);
          result.kernel = KernelFactory::make(ctx, lowered, sizes,
                                              perfdb::run_options_for(w->launch), program.name, "");
          KernelFactory::impl_of(result.kernel).variant = w->variant;
          result.reused = true;
          result.variant = w->variant;
          result.median_ms = w->median_ms;
          result.timed_on = w->timed_on;
          result.seconds = seconds_so_far();
          return result;
        }
        result.notes.push_back("the stored winner does not have the program's types: tuned "
                               "again");
      } catch (const std::exception& e) {
        result.notes.push_back(
            fmt::format("the stored winner cannot be used ({}): tuned again", e.what()));
      }
    }

  // The default lowering (what compile() gives), then the ranked variants. A program already
  // lowered has no variant space: it is measured as written.
  std::optional<std::pair<Program, std::string>> default_variant;
  try {
    default_variant = space::default_lowering(program, sizes);
  } catch (const UserError& e) {
    if (options.include_default)
      result.notes.push_back(
          fmt::format("the default lowering does not apply ({}): only ranked variants were tried",
                      e.message()));
  }
  const bool as_written = default_variant && default_variant->second == "as written";
  const std::string kind = explore::profile_name_for(profile);
  explore::RankOptions rank_options;
  rank_options.sizes = sizes;
  rank_options.profile = kind;
  rank_options.device = profile;
  rank_options.max_variants = options.max_variants;
  rank_options.sample = explore::defaults_for(profile).sample; // as `liftx explore`
  rank_options.explain_top = 0;
  rank_options.layouts = options.layouts;
  std::vector<explore::RankedVariant> ranked;
  int64_t variants_ranked = 0;
  if (as_written) {
    result.notes.push_back("the program is already lowered: measured as written");
  } else {
    std::vector<fs::path> folders;
    if (!ctx->options.data_dir.empty())
      folders.push_back(fs::path(ctx->options.data_dir) / "model");
    const explore::FoundModel found = explore::find_model(options.model, profile, folders);
    result.notes.insert(result.notes.end(), found.notes.begin(), found.notes.end());
    result.model = found.path.string();
    const model::Model model = model::Model::load(found.path);
    if (options.on_progress)
      rank_options.on_progress = [&](std::string_view phase, int64_t done) {
        options.on_progress({std::string(phase), done, 0, nullptr, seconds_so_far()});
      };
    try {
      explore::RankResult ranking = explore::rank(program, model, rank_options);
      ranked = std::move(ranking.ranked);
      variants_ranked = ranking.variants;
    } catch (const UserError& e) {
      if (!default_variant)
        throw;
      result.notes.push_back(
          fmt::format("no variant ranked ({}): the default lowering only", e.message()));
    }
  }
  result.ranked = variants_ranked;

  // The candidates in the order they are tried: the default lowering (rank 0), then the ranked
  // variants; past the budget only while none has succeeded (up to 4x the budget).
  std::vector<explore::RankedVariant> candidates;
  if (default_variant && (options.include_default || as_written)) {
    const auto& [lowered, strategy] = *default_variant;
    try {
      const codegen::PreparedLaunch launch =
          codegen::prepare_launch(lowered, sizes, {}, profile.limits());
      explore::RankedVariant c;
      c.variant.strategy = strategy;
      c.variant.launch = launch.launch;
      c.program = std::make_shared<const ir::Program>(lowered);
      candidates.push_back(std::move(c));
    } catch (const UserError& e) {
      if (ranked.empty())
        throw;
      result.notes.push_back(
          fmt::format("the default lowering does not fit the device ({})", e.message()));
    }
  }
  const size_t first_ranked = candidates.size(); // 1 with the default
  const size_t ranked_limit = std::min(ranked.size(), size_t(options.budget) * 4);
  candidates.insert(candidates.end(), ranked.begin(), ranked.begin() + ptrdiff_t(ranked_limit));
  auto describe = [](const explore::RankedVariant& c) {
    return c.rank == 0 ? fmt::format("default {} | {}", c.variant.strategy,
                                     codegen::describe(c.variant.launch))
                       : fmt::format("{} | {}", explore::describe_parameters(c.variant),
                                     codegen::describe(c.variant.launch));
  };

  // Measure: check every candidate against the interpreter (random inputs), time it on the
  // application's inputs when given, else on the random ones; record each in the database.
  const int64_t device_id = db.device(profile);
  const int64_t program_id = db.program(program.name, print_program(program));
  explore::FeatureCache features(profile);
  const nlohmann::json sizes_json(sizes);
  const bool on_application_data = !inputs.empty();
  result.timed_on = on_application_data ? "application inputs" : "random inputs";

  std::vector<Kernel> kernels; // per trial, when it succeeded on application inputs
  std::vector<int64_t> configurations;
  std::unique_lock lock(ctx->mutex);
  std::vector<Input> device_inputs; // the application's inputs, uploaded once
  auto measure = [&](const explore::RankedVariant& c) {
    Trial trial;
    trial.rank = c.rank;
    trial.predicted = c.predicted;
    trial.variant = describe(c);
    const nlohmann::json launch = explore::launch_json(c.variant.launch);
    exec::RunOptions run = perfdb::run_options_for(launch);
    run.warmup = options.warmup;
    run.repeat = options.repeat;
    run.check = true;
    run.time = !on_application_data;
    run.roofline = false;
    run.seed = options.seed;
    run.tolerance = options.tolerance;
    run.reference = &program;
    exec::RunReport report;
    Kernel kernel;
    try {
      report = exec::run_program(ctx->device, *c.program, sizes, run);
      ++ctx->stats.verifications;
      if (report.status == runtime::Status::ok && on_application_data) {
        kernel = KernelFactory::make(ctx, *c.program, sizes, run, program.name, "");
        KernelFactory::impl_of(kernel).variant = trial.variant;
        if (device_inputs.empty()) // host inputs go to the device once
          for (const Input& in : inputs)
            device_inputs.emplace_back(KernelFactory::to_device(ctx, in));
        std::vector<Buffer> scratch; // one per output (tuple component)
        for (size_t o = 0; o < kernel.outputs(); ++o)
          scratch.push_back(
              KernelFactory::new_buffer(ctx, kernel.output_kind(o), kernel.output_size(o)));
        const std::vector<Output> outputs(scratch.begin(), scratch.end());
        std::vector<double> samples;
        runtime::warm_up(options.warmup,
                         [&] { KernelFactory::run_locked(kernel, device_inputs, outputs); });
        for (int t = 0; t < options.repeat; ++t)
          samples.push_back(KernelFactory::run_locked(kernel, device_inputs, outputs).kernel_ms);
        report.timing = runtime::summarize_samples(samples);
      }
      if (report.status == runtime::Status::ok)
        ++ctx->stats.timed_variants;
      trial.status = std::string(runtime::to_string(report.status));
      trial.message = report.message.substr(0, 500);
    } catch (const KernelError& e) {
      report.status = runtime::parse_status(e.status()).value_or(runtime::Status::run_error);
      report.message = e.what();
      trial.status = e.status();
      trial.message = std::string(e.what()).substr(0, 500);
    } catch (const UserError& e) {
      // Does not fit the device (work-group size, local memory): not a measurement.
      trial.status = "rejected";
      trial.message = e.message().substr(0, 500);
      result.trials.push_back(trial);
      kernels.emplace_back();
      configurations.push_back(0);
      report.status = runtime::Status::out_of_resources;
      report.message = e.message();
      return report;
    }
    if (report.status == runtime::Status::ok && report.timing)
      trial.median_ms = report.timing->median_ms;

    std::optional<nlohmann::json> feature_values;
    if (c.rank != 0)
      try {
        feature_values =
            features::to_stored_json(features.compute(*c.program, c.variant, rank_options.sizes));
      } catch (const UserError&) {
        // Features that cannot be computed do not stop tuning; training skips the row.
      }
    const int64_t configuration_id =
        perfdb::record_configuration(db, program_id, sizes_json,
                                     {print_program(*c.program), c.variant.strategy,
                                      nlohmann::json(c.variant.parameters), launch},
                                     kind, feature_values);
    db.put_measurement(configuration_id, device_id, perfdb::measurement_of(report));
    result.trials.push_back(trial);
    kernels.push_back(kernel);
    configurations.push_back(configuration_id);
    return report;
  };
  const int64_t planned =
      static_cast<int64_t>(std::min(candidates.size(), first_ranked + size_t(options.budget)));
  auto progress = [&](const explore::Attempt&, int64_t done, int64_t) {
    if (options.on_progress)
      options.on_progress(
          {"measuring", done, std::max(planned, done), &result.trials.back(), seconds_so_far()});
  };
  explore::ExploreOptions explore_options;
  // The static order: the default lowering goes first and has no feature row for the online
  // ranker, and the replay (docs/results.md, issue 19) found online no better on the stencils.
  explore_options.strategy = explore::Strategy::model;
  explore_options.budget = static_cast<int64_t>(first_ranked) + options.budget;
  explore_options.until_success_limit = static_cast<int64_t>(candidates.size());
  const explore::ExploreResult explored =
      explore::explore(candidates, explore_options, measure, progress);
  if (!explored.best) {
    std::string tried;
    for (const Trial& t : result.trials)
      tried += fmt::format("\n  rank {} {}: {} {}", t.rank, t.variant, t.status, t.message);
    throw KernelError("run_error",
                      fmt::format("tune: none of the {} variants of {} tried on {} succeeded:{}",
                                  result.trials.size(), program.name, ctx->info.name, tried));
  }
  const size_t best = *explored.best; // one trial per attempt, in order
  const explore::RankedVariant& c = candidates[explored.attempts[best].ranked_index];
  const Trial& winner = result.trials[best];
  result.variant = winner.variant;
  result.median_ms = *winner.median_ms;
  if (kernels[best].empty()) {
    kernels[best] = KernelFactory::make(
        ctx, *c.program, sizes, perfdb::run_options_for(explore::launch_json(c.variant.launch)),
        program.name, "");
    KernelFactory::impl_of(kernels[best]).variant = winner.variant;
  }
  result.kernel = kernels[best];
  lock.unlock();

  perfdb::TunedWinner w;
  w.key = result.key;
  w.program_identity = identity;
  w.program_name = program.name;
  w.sizes = nlohmann::json(sizes);
  w.device_key = profile.key;
  w.liftx_version = LIFTX_VERSION;
  w.lowered = print_program(*c.program);
  w.launch = explore::launch_json(c.variant.launch);
  w.variant = winner.variant;
  w.median_ms = result.median_ms;
  w.timed_on = result.timed_on;
  w.model = result.model;
  w.configuration_id = configurations[best];
  db.put_winner(w);
  result.seconds = seconds_so_far();
  if (options.on_progress)
    options.on_progress({"done", static_cast<int64_t>(result.trials.size()),
                         static_cast<int64_t>(result.trials.size()), nullptr, result.seconds});
  return result;
}

} // namespace

TuneResult tune(Context& context, const Program& program, const Sizes& sizes,
                const TuneOptions& options, const std::vector<Input>& inputs) {
  return translating_opencl_errors(
      [&] { return tune_checked(context, program, sizes, options, inputs); });
}

} // namespace liftx
