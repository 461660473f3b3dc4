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
#include "explore/session.hpp"
#include "ir/parse/parser.hpp"
#include "liftx/version.hpp"
#include "model/model.hpp"
#include "perfdb/db.hpp"
#include "perfdb/record.hpp"
#include "runtime/cache_dir.hpp"
#include "runtime/launch.hpp"

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

/// The stored winner of `key` as a kernel, unless it cannot stand for `program` any more (then
/// a note says why and tuning starts over).
std::optional<TuneResult> reuse_winner(const std::shared_ptr<Context::Impl>& ctx,
                                       perfdb::PerfDb& db, const Program& program,
                                       const Sizes& sizes, TuneResult& result) {
  std::optional<perfdb::TunedWinner> w = db.winner(result.key);
  if (!w)
    return std::nullopt;
  try {
    const ir::Module module = parse::parse_module(w->lowered, "<tuning database>");
    const Program& lowered = module.main();
    if (same_signature(lowered, program)) {
      std::lock_guard lock(ctx->mutex);
      result.kernel = KernelFactory::make(ctx, lowered, sizes, perfdb::run_options_for(w->launch),
                                          program.name, "");
      KernelFactory::impl_of(result.kernel).variant = w->variant;
      result.reused = true;
      result.variant = w->variant;
      result.median_ms = w->median_ms;
      result.timed_on = w->timed_on;
      return std::move(result);
    }
    result.notes.push_back("the stored winner does not have the program's types: tuned again");
  } catch (const std::exception& e) {
    result.notes.push_back(
        fmt::format("the stored winner cannot be used ({}): tuned again", e.what()));
  }
  return std::nullopt;
}

/// "default global2d_10 | global 512x512 local -" or "window tile_x=16 ... | global ...".
std::string describe_candidate(const explore::RankedVariant& c) {
  return c.rank == 0 ? fmt::format("default {} | {}", c.variant.strategy,
                                   codegen::describe(c.variant.launch))
                     : fmt::format("{} | {}", explore::describe_parameters(c.variant),
                                   codegen::describe(c.variant.launch));
}

/// Checks every candidate against the interpreter (random inputs), times it on the
/// application's inputs when given, else on the random ones, and records each in the tuning
/// database: one Trial per candidate tried, in order, with its kernel when one was made.
class TrialRunner {
public:
  TrialRunner(const std::shared_ptr<Context::Impl>& ctx, perfdb::PerfDb& db,
              const explore::Session& session, const Program& program, const TuneOptions& options,
              const std::vector<Input>& inputs)
      : ctx_(ctx), db_(db), session_(session), program_(program), options_(options),
        inputs_(inputs), device_id_(db.device(session.device())),
        program_id_(db.program(program.name, print_program(program))), features_(session.device()) {
  }

  exec::RunReport operator()(const explore::RankedVariant& c) {
    Trial trial;
    trial.rank = c.rank;
    trial.predicted = c.predicted;
    trial.variant = describe_candidate(c);
    const nlohmann::json launch = explore::launch_json(c.variant.launch);
    exec::RunOptions run = run_options(launch);
    exec::RunReport report;
    Kernel kernel;
    try {
      report = exec::run_program(ctx_->device, *c.program, session_.sizes(), run);
      ++ctx_->stats.verifications;
      if (report.status == runtime::Status::ok && !inputs_.empty())
        report.timing = time_on_application_inputs(c, run, trial.variant, kernel);
      if (report.status == runtime::Status::ok)
        ++ctx_->stats.timed_variants;
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
      add(std::move(trial), Kernel(), 0);
      report.status = runtime::Status::out_of_resources;
      report.message = e.message();
      return report;
    }
    if (report.status == runtime::Status::ok && report.timing)
      trial.median_ms = report.timing->median_ms;
    add(std::move(trial), kernel, record(c, launch, report));
    return report;
  }

  std::vector<Trial>& trials() { return trials_; }
  Kernel& kernel(size_t trial) { return kernels_[trial]; }
  int64_t configuration(size_t trial) const { return configurations_[trial]; }

private:
  exec::RunOptions run_options(const nlohmann::json& launch) const {
    exec::RunOptions run = perfdb::run_options_for(launch);
    run.warmup = options_.warmup;
    run.repeat = options_.repeat;
    run.check = true;
    run.time = inputs_.empty();
    run.roofline = false;
    run.seed = options_.seed;
    run.tolerance = options_.tolerance;
    run.reference = &program_;
    return run;
  }

  /// Makes the candidate's kernel (kept: it may win) and times it on the application's inputs,
  /// uploaded to the device once.
  runtime::Timing time_on_application_inputs(const explore::RankedVariant& c,
                                             const exec::RunOptions& run,
                                             const std::string& variant, Kernel& kernel) {
    kernel = KernelFactory::make(ctx_, *c.program, session_.sizes(), run, program_.name, "");
    KernelFactory::impl_of(kernel).variant = variant;
    if (device_inputs_.empty())
      for (const Input& in : inputs_)
        device_inputs_.emplace_back(KernelFactory::to_device(ctx_, in));
    std::vector<Buffer> scratch; // one per output (tuple component)
    for (size_t o = 0; o < kernel.outputs(); ++o)
      scratch.push_back(
          KernelFactory::new_buffer(ctx_, kernel.output_kind(o), kernel.output_size(o)));
    const std::vector<Output> outputs(scratch.begin(), scratch.end());
    std::vector<double> samples;
    runtime::warm_up(options_.warmup,
                     [&] { KernelFactory::run_locked(kernel, device_inputs_, outputs); });
    for (int t = 0; t < options_.repeat; ++t)
      samples.push_back(KernelFactory::run_locked(kernel, device_inputs_, outputs).kernel_ms);
    return runtime::summarize_samples(samples);
  }

  /// The candidate's configuration (with its features, for `liftx train`) and measurement.
  int64_t record(const explore::RankedVariant& c, const nlohmann::json& launch,
                 const exec::RunReport& report) {
    std::optional<nlohmann::json> feature_values;
    if (c.rank != 0)
      try {
        feature_values =
            features::to_stored_json(features_.compute(*c.program, c.variant, session_.sizes()));
      } catch (const UserError&) {
        // Features that cannot be computed do not stop tuning; training skips the row.
      }
    const int64_t configuration_id =
        perfdb::record_configuration(db_, program_id_, nlohmann::json(session_.sizes()),
                                     {print_program(*c.program), c.variant.strategy,
                                      nlohmann::json(c.variant.parameters), launch},
                                     session_.profile_name(), feature_values);
    db_.put_measurement(configuration_id, device_id_, perfdb::measurement_of(report));
    return configuration_id;
  }

  void add(Trial trial, Kernel kernel, int64_t configuration_id) {
    trials_.push_back(std::move(trial));
    kernels_.push_back(std::move(kernel));
    configurations_.push_back(configuration_id);
  }

  const std::shared_ptr<Context::Impl>& ctx_;
  perfdb::PerfDb& db_;
  const explore::Session& session_;
  const Program& program_;
  const TuneOptions& options_;
  const std::vector<Input>& inputs_;
  const int64_t device_id_;
  const int64_t program_id_;
  explore::FeatureCache features_;
  std::vector<Input> device_inputs_; ///< the application's inputs, uploaded once
  std::vector<Trial> trials_;
  std::vector<Kernel> kernels_; ///< per trial, when it succeeded on application inputs
  std::vector<int64_t> configurations_;
};

void check_tune_options(const TuneOptions& options) {
  LIFTX_USER_CHECK(options.budget >= 1, "tune: the budget must be at least 1 variant, got {}",
                   options.budget);
  LIFTX_USER_CHECK(options.repeat >= 1 && options.warmup >= 0,
                   "tune: repeat must be at least 1 and warmup at least 0 (got {} and {})",
                   options.repeat, options.warmup);
  LIFTX_USER_CHECK(options.max_variants >= 0, "tune: max_variants must be at least 0, got {}",
                   options.max_variants);
}

/// The session tune() runs: the default lowering first, then the model's order (the static
/// order: the default lowering has no feature row for the online ranker, and the replay in
/// docs/results.md found online no better on the stencils), past the budget while none works.
explore::SessionOptions session_options(const Context::Impl& ctx, const Sizes& sizes,
                                        const TuneOptions& options) {
  explore::SessionOptions session;
  session.sizes = sizes;
  session.model = options.model;
  if (!ctx.options.data_dir.empty())
    session.model_folders.push_back(fs::path(ctx.options.data_dir) / "model");
  session.max_variants = options.max_variants;
  session.layouts = options.layouts;
  session.default_first = options.include_default;
  session.until_success = true;
  session.explore.strategy = explore::Strategy::model;
  session.explore.budget = options.budget;
  return session;
}

void store_winner(perfdb::PerfDb& db, const TuneResult& result, const Program& program,
                  const Sizes& sizes, const std::string& identity,
                  const target::DeviceProfile& profile, const explore::RankedVariant& c,
                  int64_t configuration_id) {
  perfdb::TunedWinner w;
  w.key = result.key;
  w.program_identity = identity;
  w.program_name = program.name;
  w.sizes = nlohmann::json(sizes);
  w.device_key = profile.key;
  w.liftx_version = LIFTX_VERSION;
  w.lowered = print_program(*c.program);
  w.launch = explore::launch_json(c.variant.launch);
  w.variant = result.variant;
  w.median_ms = result.median_ms;
  w.timed_on = result.timed_on;
  w.model = result.model;
  w.configuration_id = configuration_id;
  db.put_winner(w);
}

TuneResult tune_checked(Context& context, const Program& program, const Sizes& sizes,
                        const TuneOptions& options, const std::vector<Input>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  const std::shared_ptr<Context::Impl>& ctx = KernelFactory::context_of(context);
  LIFTX_USER_CHECK(ctx, "tune: the Context was moved from");
  check_tune_options(options);
  interp::check_sizes(program, sizes);
  check_inputs(ctx, program, sizes, inputs);
  const target::DeviceProfile& profile = ctx->device.profile;
  auto seconds_so_far = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

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
  if (!options.retune)
    if (std::optional<TuneResult> reused = reuse_winner(ctx, db, program, sizes, result)) {
      reused->seconds = seconds_so_far();
      return std::move(*reused);
    }

  explore::SessionOptions session_settings = session_options(*ctx, sizes, options);
  if (options.on_progress)
    session_settings.on_rank_progress = [&](std::string_view phase, int64_t done) {
      options.on_progress({std::string(phase), done, 0, nullptr, seconds_so_far()});
    };
  explore::Session session(program, profile, std::move(session_settings));
  session.rank();
  result.notes.insert(result.notes.end(), session.notes().begin(), session.notes().end());
  result.model = session.found_model().path.string();
  result.ranked = session.ranking().variants;
  result.timed_on = inputs.empty() ? "random inputs" : "application inputs";

  std::unique_lock lock(ctx->mutex);
  TrialRunner runner(ctx, db, session, program, options, inputs);
  const size_t first_ranked = session.candidates().size() - session.ranking().ranked.size();
  const int64_t planned = static_cast<int64_t>(
      std::min(session.candidates().size(), first_ranked + size_t(options.budget)));
  auto progress = [&](const explore::Attempt&, int64_t done, int64_t) {
    if (options.on_progress)
      options.on_progress(
          {"measuring", done, std::max(planned, done), &runner.trials().back(), seconds_so_far()});
  };
  const explore::ExploreResult explored = session.measure(
      [&](const std::vector<const explore::RankedVariant*>& variants) {
        std::vector<exec::RunReport> reports;
        for (const explore::RankedVariant* variant : variants)
          reports.push_back(runner(*variant));
        return reports;
      },
      progress);
  result.trials = runner.trials();
  if (!explored.best) {
    std::string tried;
    for (const Trial& t : result.trials)
      tried += fmt::format("\n  rank {} {}: {} {}", t.rank, t.variant, t.status, t.message);
    throw KernelError("run_error",
                      fmt::format("tune: none of the {} variants of {} tried on {} succeeded:{}",
                                  result.trials.size(), program.name, ctx->info.name, tried));
  }
  const size_t best = *explored.best; // one trial per attempt, in order
  const explore::RankedVariant& c = session.candidates()[explored.attempts[best].ranked_index];
  const Trial& winner = result.trials[best];
  result.variant = winner.variant;
  result.median_ms = *winner.median_ms;
  Kernel& kernel = runner.kernel(best);
  if (kernel.empty()) {
    kernel = KernelFactory::make(ctx, *c.program, sizes,
                                 perfdb::run_options_for(explore::launch_json(c.variant.launch)),
                                 program.name, "");
    KernelFactory::impl_of(kernel).variant = winner.variant;
  }
  result.kernel = kernel;
  lock.unlock();

  store_winner(db, result, program, sizes, identity, profile, c, runner.configuration(best));
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
