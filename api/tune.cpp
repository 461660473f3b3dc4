// In-application tuning: rank with the shipped model, check and time the best-predicted variants,
// keep the winner in the tuning database, reuse it later.
//
// The database is a liftx performance database (explore::PerfDb: every measurement is recorded
// there, so `liftx train` can learn from applications' tuning) with one more table, owned here:
//   tuned_winners(key PRIMARY KEY, program_identity, program_name, sizes_json, device_key,
//                 liftx_version, lowered, launch_json, variant, median_ms, timed_on, model,
//                 configuration_id, timestamp)
// `lowered` is the winning lowered program as a .lift module, so a later run rebuilds the winner
// without the variant space.
#include "liftx/tune.hpp"

#include "api/internal.hpp"
#include "codegen/runtime/cache_dir.hpp"
#include "codegen/runtime/launch.hpp"
#include "explore/collect.hpp"
#include "explore/db.hpp"
#include "explore/rank.hpp"
#include "ir/parse/parser.hpp"
#include "liftx/version.hpp"
#include "model/model.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>

namespace liftx {

namespace {

namespace fs = std::filesystem;

const char* const kWinnersSchema = R"sql(
CREATE TABLE IF NOT EXISTS tuned_winners(
  key TEXT PRIMARY KEY, program_identity TEXT NOT NULL, program_name TEXT NOT NULL,
  sizes_json TEXT NOT NULL, device_key TEXT NOT NULL, liftx_version TEXT NOT NULL,
  lowered TEXT NOT NULL, launch_json TEXT NOT NULL, variant TEXT NOT NULL, median_ms REAL,
  timed_on TEXT NOT NULL, model TEXT NOT NULL, configuration_id INTEGER, timestamp TEXT NOT NULL);
)sql";

struct Winner {
  std::string lowered;
  nlohmann::json launch;
  std::string variant;
  double median_ms = 0;
  std::string timed_on;
};

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

/// The tuning database: the performance database plus the winners table.
class TuningDb {
public:
  explicit TuningDb(const fs::path& path) : perf_(path), path_(path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
      std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw UserError(
          fmt::format("cannot open the tuning database {}: {}", path.string(), message));
    }
    sqlite3_busy_timeout(db_, 10000);
    char* error = nullptr;
    if (sqlite3_exec(db_, kWinnersSchema, nullptr, nullptr, &error) != SQLITE_OK) {
      std::string message = error ? error : "unknown error";
      sqlite3_free(error);
      sqlite3_close(db_);
      throw UserError(fmt::format("{}: not a usable tuning database: {}", path.string(), message));
    }
  }
  ~TuningDb() { sqlite3_close(db_); }
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  explore::PerfDb& perf() { return perf_; }

  std::optional<Winner> find(const std::string& key) {
    Statement s(db_, "SELECT lowered, launch_json, variant, median_ms, timed_on FROM "
                     "tuned_winners WHERE key = ?1");
    s.bind(1, key);
    if (!s.step())
      return std::nullopt;
    Winner w;
    w.lowered = s.text(0);
    try {
      w.launch = nlohmann::json::parse(s.text(1));
    } catch (const nlohmann::json::exception&) {
      return std::nullopt; // unreadable: tune again and overwrite it
    }
    w.variant = s.text(2);
    w.median_ms = sqlite3_column_double(s.get(), 3);
    w.timed_on = s.text(4);
    return w;
  }

  void put(const std::string& key, const std::string& identity, const Program& program,
           const Sizes& sizes, const std::string& device_key, const Winner& w,
           const std::string& model, int64_t configuration_id) {
    Statement s(db_, "INSERT OR REPLACE INTO tuned_winners(key, program_identity, program_name, "
                     "sizes_json, device_key, liftx_version, lowered, launch_json, variant, "
                     "median_ms, timed_on, model, configuration_id, timestamp) VALUES(?1, ?2, ?3, "
                     "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
    s.bind(1, key).bind(2, identity).bind(3, program.name).bind(4, nlohmann::json(sizes).dump());
    s.bind(5, device_key).bind(6, std::string(LIFTX_VERSION)).bind(7, w.lowered);
    s.bind(8, w.launch.dump()).bind(9, w.variant);
    sqlite3_bind_double(s.get(), 10, w.median_ms);
    s.bind(11, w.timed_on).bind(12, model);
    sqlite3_bind_int64(s.get(), 13, configuration_id);
    s.bind(14, utc_now());
    s.step();
  }

private:
  class Statement {
  public:
    Statement(sqlite3* db, const char* sql) : db_(db) {
      if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
        throw InternalError(fmt::format("sqlite: cannot prepare '{}': {}", sql, sqlite3_errmsg(db)),
                            __FILE__, __LINE__);
    }
    ~Statement() { sqlite3_finalize(stmt_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement& bind(int i, const std::string& text) {
      sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
      return *this;
    }
    bool step() {
      const int rc = sqlite3_step(stmt_);
      if (rc == SQLITE_ROW)
        return true;
      if (rc == SQLITE_DONE)
        return false;
      throw UserError(fmt::format("tuning database: {}", sqlite3_errmsg(db_)));
    }
    std::string text(int column) const {
      const unsigned char* t = sqlite3_column_text(stmt_, column);
      return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
    }
    sqlite3_stmt* get() { return stmt_; }

  private:
    sqlite3* db_;
    sqlite3_stmt* stmt_ = nullptr;
  };

  explore::PerfDb perf_; // first: it creates the performance schema in a new file
  fs::path path_;
  sqlite3* db_ = nullptr;
};

fs::path tuning_db_path(const ContextOptions& options) {
  if (!options.tuning_db.empty())
    return options.tuning_db;
  if (const char* env = std::getenv("LIFTX_TUNING_DB"); env && *env)
    return env;
  return runtime::default_cache_dir() / "tuning.db";
}

struct FoundModel {
  fs::path path;
  std::vector<std::string> notes;
};

/// The model file for the device kind: the explicit one, else the shipped one (or the CPU
/// model, with a note, when the kind has none).
FoundModel find_model(const std::string& explicit_path, const std::string& kind,
                      const ContextOptions& options) {
  if (!explicit_path.empty()) {
    LIFTX_USER_CHECK(fs::exists(explicit_path), "model file {} does not exist", explicit_path);
    return {explicit_path, {}};
  }
  std::vector<fs::path> folders;
  if (const char* dir = std::getenv("LIFTX_MODEL_DIR"); dir && *dir)
    folders.emplace_back(dir);
  if (!options.data_dir.empty())
    folders.push_back(fs::path(options.data_dir) / "model");
  folders.push_back(fs::path(LIFTX_API_SOURCE_DIR) / "model" / "data");
  std::error_code ec;
  if (const fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)
    folders.push_back(exe.parent_path().parent_path() / "share" / "liftx" / "model");
  auto look = [&](const std::string& k) -> std::optional<fs::path> {
    for (const fs::path& folder : folders)
      if (fs::exists(folder / (k + "-model.json"), ec))
        return folder / (k + "-model.json");
    return std::nullopt;
  };
  if (auto p = look(kind))
    return {*p, {}};
  if (auto p = look("cpu"))
    return {*p,
            {fmt::format("no shipped model for {} devices: ranked with the cpu model (its order "
                         "may be poor here; train one with `liftx train` and pass it as "
                         "TuneOptions::model)",
                         kind)}};
  std::string looked;
  for (const fs::path& folder : folders)
    looked += "\n  " + folder.string();
  throw UserError(fmt::format("no cost model found for {} devices (nor the cpu model {}); looked "
                              "in:{}\nSet LIFTX_MODEL_DIR, ContextOptions::data_dir or "
                              "TuneOptions::model",
                              kind, "cpu-model.json", looked));
}

/// The launch of a variant as stored: {"dims", "global", "local", "tied"}; an empty "local" lets
/// the OpenCL driver choose the work-group size.
exec::RunOptions launch_options(const nlohmann::json& launch) {
  exec::RunOptions o;
  const int dims = launch.at("dims").get<int>();
  const nlohmann::json& local = launch.at("local");
  for (int d = 0; d < dims; ++d) {
    o.global.push_back(launch.at("global").at(size_t(d)).get<int64_t>());
    if (!local.empty())
      o.local.push_back(local.at(size_t(d)).get<int64_t>());
  }
  return o;
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

bool same_signature(const Program& a, const Program& b) {
  if (a.params.size() != b.params.size() || a.result_type() != b.result_type())
    return false;
  for (size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].type() != b.params[i].type())
      return false;
  return true;
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
  const runtime::DeviceProfile& profile = ctx->device.profile;

  TuneResult result;
  const std::string identity = program_identity(program);
  result.key = runtime::content_hash(nlohmann::json{
      {"program", identity},
      {"sizes", sizes},
      {"device", profile.key},
      {"liftx", LIFTX_VERSION}}.dump());
  const fs::path db_path = tuning_db_path(ctx->options);
  result.database = db_path.string();
  TuningDb db(db_path);
  auto seconds_so_far = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  if (!options.retune)
    if (std::optional<Winner> w = db.find(result.key)) {
      try {
        const ir::Module module = parse::parse_module(w->lowered, "<tuning database>");
        const Program& lowered = module.main();
        if (same_signature(lowered, program)) {
          std::lock_guard lock(ctx->mutex);
          result.kernel =
              KernelFactory::make(ctx, lowered, sizes, launch_options(w->launch), program.name, "");
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
    default_variant = default_lowering(program, sizes);
  } catch (const UserError& e) {
    if (options.include_default)
      result.notes.push_back(
          fmt::format("the default lowering does not apply ({}): only ranked variants were tried",
                      e.message()));
  }
  const bool as_written = default_variant && default_variant->second == "as written";
  const std::string kind = explore::profile_name_for(profile);
  explore::RankOptions rank_options;
  rank_options.sizes = rewrite::Sizes(sizes.begin(), sizes.end());
  rank_options.profile = kind;
  rank_options.device = profile;
  rank_options.max_variants = options.max_variants;
  rank_options.explain_top = 0;
  std::vector<explore::RankedVariant> ranked;
  if (as_written) {
    result.notes.push_back("the program is already lowered: measured as written");
  } else {
    FoundModel found = find_model(options.model, kind, ctx->options);
    result.notes.insert(result.notes.end(), found.notes.begin(), found.notes.end());
    result.model = found.path.string();
    const model::Model model = model::Model::load(found.path);
    try {
      ranked = explore::rank(program, model, rank_options);
    } catch (const UserError& e) {
      if (!default_variant)
        throw;
      result.notes.push_back(
          fmt::format("no variant ranked ({}): the default lowering only", e.message()));
    }
  }
  result.ranked = static_cast<int64_t>(ranked.size());

  struct Candidate {
    std::shared_ptr<const ir::Program> lowered;
    std::string strategy;
    nlohmann::json parameters;
    nlohmann::json launch;
    int rank = 0;
    double predicted = 0;
    std::string description;
    const rewrite::Variant* variant = nullptr; ///< for the features; null for the default
  };
  std::vector<Candidate> candidates;
  if (default_variant && (options.include_default || as_written)) {
    const auto& [lowered, strategy] = *default_variant;
    Candidate c;
    c.lowered = std::make_shared<const ir::Program>(lowered);
    c.strategy = strategy;
    c.parameters = nlohmann::json::object();
    try {
      const codegen::PreparedLaunch launch =
          codegen::prepare_launch(lowered, sizes, {}, profile.limits());
      c.launch = explore::launch_json(launch.launch);
      c.description = fmt::format("default {} | {}", strategy, codegen::describe(launch.launch));
      candidates.push_back(std::move(c));
    } catch (const UserError& e) {
      if (ranked.empty())
        throw;
      result.notes.push_back(
          fmt::format("the default lowering does not fit the device ({})", e.message()));
    }
  }
  const size_t first_ranked = candidates.size(); // 1 with the default
  // The budget's best-predicted variants; further ones only while none has succeeded (up to 4x
  // the budget).
  const size_t budget = first_ranked + static_cast<size_t>(options.budget);
  const size_t limit = first_ranked + std::min(ranked.size(), size_t(options.budget) * 4);
  for (size_t i = 0; i + first_ranked < limit; ++i) {
    const explore::RankedVariant& r = ranked[i];
    Candidate c;
    c.lowered = r.program;
    c.strategy = r.variant.strategy;
    c.parameters = nlohmann::json(r.variant.parameters);
    c.launch = explore::launch_json(r.variant.launch);
    c.rank = r.rank;
    c.predicted = r.predicted;
    c.description = fmt::format("{} | {}", explore::describe_parameters(r.variant),
                                codegen::describe(r.variant.launch));
    c.variant = &r.variant;
    candidates.push_back(std::move(c));
  }

  // Measure: check every candidate against the interpreter (random inputs), time it on the
  // application's inputs when given, else on the random ones; record each in the database.
  explore::PerfDb& perf = db.perf();
  const int64_t device_id = perf.device(profile);
  const int64_t program_id = perf.program(program.name, print_program(program));
  explore::FeatureCache features(profile);
  const nlohmann::json sizes_json(sizes);
  const bool on_application_data = !inputs.empty();
  result.timed_on = on_application_data ? "application inputs" : "random inputs";

  std::optional<size_t> best;
  std::vector<Kernel> kernels; // per trial, when it succeeded on application inputs
  std::vector<int64_t> configurations;
  std::unique_lock lock(ctx->mutex);
  std::vector<Input> device_inputs; // the application's inputs, uploaded once
  for (size_t i = 0; i < limit && (i < budget || !best); ++i) {
    const Candidate& c = candidates[i];
    Trial trial;
    trial.rank = c.rank;
    trial.predicted = c.predicted;
    trial.variant = c.description;
    exec::RunOptions run = launch_options(c.launch);
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
      report = exec::run_program(ctx->device, *c.lowered, sizes, run);
      ++ctx->stats.verifications;
      if (report.status == runtime::Status::ok && on_application_data) {
        kernel = KernelFactory::make(ctx, *c.lowered, sizes, run, program.name, "");
        KernelFactory::impl_of(kernel).variant = c.description;
        if (device_inputs.empty()) // host inputs go to the device once
          for (const Input& in : inputs)
            device_inputs.emplace_back(KernelFactory::to_device(ctx, in));
        Buffer scratch = KernelFactory::new_buffer(ctx, kernel.output_kind(), kernel.output_size());
        std::vector<double> samples;
        for (int w = 0; w < options.warmup; ++w)
          KernelFactory::run_locked(kernel, device_inputs, scratch);
        for (int t = 0; t < options.repeat; ++t)
          samples.push_back(KernelFactory::run_locked(kernel, device_inputs, scratch).kernel_ms);
        report.timing = runtime::summarize_samples(samples);
      }
      if (report.status == runtime::Status::ok)
        ++ctx->stats.timed_variants;
      trial.status = std::string(runtime::to_string(report.status));
      trial.message = report.message.substr(0, 500);
    } catch (const KernelError& e) {
      report.status = runtime::parse_status(e.status()).value_or(runtime::Status::run_error);
      trial.status = e.status();
      trial.message = std::string(e.what()).substr(0, 500);
    } catch (const UserError& e) {
      // Does not fit the device (work-group size, local memory): not a measurement.
      trial.status = "rejected";
      trial.message = e.message().substr(0, 500);
      result.trials.push_back(trial);
      kernels.emplace_back();
      configurations.push_back(0);
      continue;
    }
    if (report.status == runtime::Status::ok && report.timing)
      trial.median_ms = report.timing->median_ms;

    const int64_t variant_id =
        perf.variant(program_id, print_program(*c.lowered), c.strategy, c.parameters);
    const int64_t configuration_id = perf.configuration(variant_id, sizes_json, c.launch);
    if (c.variant)
      try {
        perf.put_features(
            configuration_id, kind,
            explore::feature_json(features.compute(*c.lowered, *c.variant, rank_options.sizes)));
      } catch (const UserError&) {
        // Features that cannot be computed do not stop tuning; training skips the row.
      }
    explore::Measurement m;
    m.status = report.status;
    m.compile_ms = report.build_ms;
    m.message = trial.message;
    if (report.timing) {
      m.median_ms = report.timing->median_ms;
      m.min_ms = report.timing->min_ms;
      m.max_ms = report.timing->max_ms;
      m.q1_ms = report.timing->q1_ms;
      m.q3_ms = report.timing->q3_ms;
      m.repetitions = static_cast<int>(report.timing->samples_ms.size());
    }
    perf.put_measurement(configuration_id, device_id, m);

    result.trials.push_back(trial);
    kernels.push_back(kernel);
    configurations.push_back(configuration_id);
    if (trial.median_ms && (!best || *trial.median_ms < *result.trials[*best].median_ms))
      best = result.trials.size() - 1;
  }
  if (!best) {
    std::string tried;
    for (const Trial& t : result.trials)
      tried += fmt::format("\n  rank {} {}: {} {}", t.rank, t.variant, t.status, t.message);
    throw KernelError("run_error",
                      fmt::format("tune: none of the {} variants of {} tried on {} succeeded:{}",
                                  result.trials.size(), program.name, ctx->info.name, tried));
  }

  const Trial& winner = result.trials[*best];
  const Candidate& c = candidates[*best]; // one trial per candidate, in order
  result.variant = winner.variant;
  result.median_ms = *winner.median_ms;
  if (kernels[*best].empty()) {
    kernels[*best] =
        KernelFactory::make(ctx, *c.lowered, sizes, launch_options(c.launch), program.name, "");
    KernelFactory::impl_of(kernels[*best]).variant = c.description;
  }
  result.kernel = kernels[*best];
  lock.unlock();

  Winner w;
  w.lowered = print_program(*c.lowered);
  w.launch = c.launch;
  w.variant = winner.variant;
  w.median_ms = result.median_ms;
  w.timed_on = result.timed_on;
  db.put(result.key, identity, program, sizes, profile.key, w, result.model, configurations[*best]);
  result.seconds = seconds_so_far();
  return result;
}

} // namespace

TuneResult tune(Context& context, const Program& program, const Sizes& sizes,
                const TuneOptions& options, const std::vector<Input>& inputs) {
  return translating_opencl_errors(
      [&] { return tune_checked(context, program, sizes, options, inputs); });
}

} // namespace liftx
