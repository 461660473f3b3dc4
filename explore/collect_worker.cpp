// The child processes of `liftx collect`: the worker that measures the jobs one after another
// (`liftx collect-worker`) and the builders that compile kernels and compute references ahead of
// it (`liftx collect-builder`).
#include "explore/collect.hpp"
#include "explore/collect_internal.hpp"
#include "perfdb/record.hpp"

#include "codegen/kernel.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/cache_dir.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

namespace liftx::explore {

namespace detail {

/// What identifies a job's inputs and expected result: the stencil, the sizes, the sizes it is
/// checked at and the seed.
std::string target_key(const nlohmann::json& job) {
  return fmt::format(
      "{}\n{}\n{}\n{}\n{}",
      job.contains("reference_module") ? job.at("reference_module").get<std::string>()
                                       : job.at("reference_file").get<std::string>(),
      job.at("reference_program").get<std::string>(), job.at("sizes").dump(),
      job.value("check_sizes", nlohmann::json::object()).dump(), job.value("seed", uint64_t{1}));
}

} // namespace detail

using namespace detail;

namespace {

/// The high-level stencils jobs are checked against, parsed once per file (`reference_file`) or
/// text (`reference_module`: explore's jobs carry the program itself, e.g. iterated by --steps).
class References {
public:
  const ir::Program& of(const nlohmann::json& job) {
    const bool inline_text = job.contains("reference_module");
    const std::string key = inline_text ? "\n" + job.at("reference_module").get<std::string>()
                                        : job.at("reference_file").get<std::string>();
    auto it = modules_.find(key);
    if (it == modules_.end())
      it = modules_
               .emplace(key, inline_text ? parse::parse_module(key.substr(1), "<reference>")
                                         : parse::parse_file(key))
               .first;
    const ir::Program* reference = it->second.find(job.at("reference_program").get<std::string>());
    LIFTX_USER_CHECK(reference, "the reference program is missing");
    return *reference;
  }

private:
  std::map<std::string, ir::Module> modules_;
};

/// The inputs and the interpreter's result of the current target, kept while consecutive jobs
/// share it (a collection's jobs come target by target): drawing and checking against them once
/// per target, not per variant, is what makes large inputs affordable. A target checked at other
/// sizes keeps only its inputs, for the timed runs: its check draws its own, and the reference
/// at those sizes comes from the disk cache.
struct TargetData {
  std::string key;
  std::vector<interp::HostArray> inputs;
  std::optional<interp::HostArray> expected;
  exec::UploadedInputs uploaded;
};

/// CollectTarget::check_sizes of a job; empty when it is checked at its own sizes.
Sizes check_sizes_of(const nlohmann::json& job) {
  return job.contains("check_sizes") ? job.at("check_sizes").get<Sizes>() : Sizes{};
}

} // namespace

void run_worker(std::istream& jobs, int64_t from, const std::string& device_spec,
                std::ostream& out) {
  // Testing hooks: the job numbers (comma-separated) at which the worker crashes, hangs (as a
  // kernel that never ends) or whose kernel fails, as a broken driver would; a slow device; a
  // slow reference (milliseconds added to each target's preparation).
  auto job_numbers = [](const char* variable) {
    std::set<int64_t> numbers;
    const char* value = std::getenv(variable);
    for (const char* p = value; p && *p;) {
      char* end = nullptr;
      numbers.insert(std::strtoll(p, &end, 10));
      p = *end == ',' ? end + 1 : "";
    }
    return numbers;
  };
  const std::set<int64_t> crash_at = job_numbers("LIFTX_TEST_WORKER_CRASH_AT");
  const std::set<int64_t> hang_at = job_numbers("LIFTX_TEST_WORKER_HANG_AT");
  const std::set<int64_t> kernel_fails_at = job_numbers("LIFTX_TEST_WORKER_KERNEL_FAILS_AT");
  const std::set<int64_t> open_delay_ms = job_numbers("LIFTX_TEST_WORKER_OPEN_DELAY_MS");
  const std::set<int64_t> slow_reference_ms = job_numbers("LIFTX_TEST_WORKER_SLOW_REFERENCE_MS");

  runtime::Device device = runtime::select_device(device_spec);
  if (!open_delay_ms.empty())
    std::this_thread::sleep_for(std::chrono::milliseconds(*open_delay_ms.begin()));
  out << kWorkerReady << '\n';
  out.flush();
  References references;
  TargetData target;
  std::string line;
  for (int64_t index = 0; std::getline(jobs, line); ++index) {
    if (index < from || line.empty())
      continue;
    if (crash_at.count(index)) {
      std::signal(SIGSEGV, SIG_DFL); // the OpenCL runtime may have its own handler
      std::raise(SIGSEGV);
    }
    while (hang_at.count(index))
      ::pause();
    nlohmann::json job = nlohmann::json::parse(line);
    nlohmann::json result = {{"id", job.at("id")}};
    if (kernel_fails_at.count(index)) {
      result["status"] = "run_error";
      result["message"] = "the kernel failed (test hook)";
      out << result.dump() << '\n';
      out.flush();
      continue;
    }
    try {
      const ir::Program& reference = references.of(job);
      ir::Module module = parse::parse_module(job.at("module").get<std::string>(), "<variant>");
      Sizes sizes = job.at("sizes").get<Sizes>();
      exec::RunOptions options = perfdb::run_options_for(job.at("launch"));
      options.repeat = job.value("repeat", 10);
      options.warmup = job.value("warmup", 3);
      options.seed = job.value("seed", uint64_t{1});
      options.roofline = false;
      options.reference = &reference;
      options.check_sizes = check_sizes_of(job);
      const bool checked_here = options.check_sizes.empty();
      if (const std::string key = target_key(job); key != target.key) {
        out << nlohmann::json{{"preparing", job.at("id")}}.dump() << '\n';
        out.flush();
        if (!slow_reference_ms.empty())
          std::this_thread::sleep_for(std::chrono::milliseconds(*slow_reference_ms.begin()));
        interp::check_sizes(reference, sizes);
        target = TargetData{};
        target.inputs = exec::draw_inputs(reference, sizes, options.seed, checked_here);
        if (checked_here)
          target.expected = exec::reference_result(reference, options, target.inputs, sizes);
        else // interpreted now, outside the first variant's timeout; read from the disk cache later
          exec::reference_result(reference, options,
                                 exec::draw_inputs(reference, options.check_sizes, options.seed),
                                 options.check_sizes);
        target.key = key;
        out << nlohmann::json{{"prepared", job.at("id")}}.dump() << '\n';
        out.flush();
      }
      options.inputs = &target.inputs;
      options.expected = target.expected ? &*target.expected : nullptr;
      options.uploaded = &target.uploaded;
      exec::RunReport report = exec::run_program(device, module.main(), sizes, options);
      result.update(to_json(perfdb::measurement_of(report)));
    } catch (const UserError& e) {
      // A launch the device cannot take, or a program the generator refuses.
      result["status"] = "out_of_resources";
      result["message"] = perfdb::clip_message(e.what());
    } catch (const std::exception& e) {
      result["status"] = "run_error";
      result["message"] = perfdb::clip_message(e.what());
    }
    out << result.dump() << '\n';
    out.flush();
  }
}

void run_builder(std::istream& jobs, int shard, int shards, const std::string& device_spec) {
  LIFTX_USER_CHECK(shards >= 1 && shard >= 0 && shard < shards,
                   "collect-builder: shard {} of {} does not exist", shard, shards);
  std::vector<nlohmann::json> all;
  for (std::string line; std::getline(jobs, line);)
    if (!line.empty())
      all.push_back(nlohmann::json::parse(line));
  runtime::Device device = runtime::select_device(device_spec);
  References references;

  // References first (the worker needs them before any kernel of their target), one target per
  // builder in turn; then the kernels, job by job in the worker's order. Not the first target's:
  // the worker interprets it at once itself, and a builder doing the same would only halve the
  // cores both have.
  std::vector<size_t> first_of_target;
  std::string last_key;
  for (size_t i = 0; i < all.size(); ++i)
    if (std::string key = target_key(all[i]); key != last_key) {
      first_of_target.push_back(i);
      last_key = key;
    }
  for (size_t t = 1 + static_cast<size_t>(shard); t < first_of_target.size();
       t += static_cast<size_t>(shards)) {
    const nlohmann::json& job = all[first_of_target[t]];
    try {
      const ir::Program& reference = references.of(job);
      const Sizes check_sizes = check_sizes_of(job);
      const Sizes sizes = check_sizes.empty() ? job.at("sizes").get<Sizes>() : check_sizes;
      exec::RunOptions options;
      options.seed = job.value("seed", uint64_t{1});
      options.reference = &reference;
      exec::reference_result(reference, options, exec::draw_inputs(reference, sizes, options.seed),
                             sizes);
    } catch (const std::exception&) {
      // The worker meets the same problem and reports it.
    }
  }
  for (size_t i = static_cast<size_t>(shard); i < all.size(); i += static_cast<size_t>(shards)) {
    try {
      ir::Module module = parse::parse_module(all[i].at("module").get<std::string>(), "<variant>");
      Sizes sizes = all[i].at("sizes").get<Sizes>();
      codegen::PreparedLaunch launch = codegen::prepare_launch(
          module.main(), sizes, perfdb::run_options_for(all[i].at("launch")).request(),
          device.profile.limits());
      // A cache of its own per kernel: the builder needs the binary on disk, not thousands of
      // programs held in memory.
      runtime::BuildCache(runtime::default_cache_dir()).build(device, launch.kernel.source);
    } catch (const std::exception&) {
      // Likewise: refused programs and build errors are the worker's to report.
    }
  }
}

} // namespace liftx::explore
