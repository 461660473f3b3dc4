// stencil_roofline_bench: liftx's stencil variants against hand-written OpenCL kernels and a
// float4 copy, all in one process on one OpenCL device (issue 7).
//
// For each size, the float4 copy of M*N floats is timed first; it is the roofline every other row
// is a fraction of. Then, for each stencil: the hand-written kernels of bench/handwritten/ (a naive
// one-work-item-per-point kernel; for jacobi2d5pt also the float4 sliding-window kernel, one row
// per --window-rows value) and the liftx variants given, each verified element by element against
// the reference interpreter's result for stencils/<stencil>.lift on random inputs (seed --seed,
// drawn as `liftx run` draws them; the reference is cached on disk, LIFTX_CACHE_DIR/references),
// then timed by profiling events: --warmup runs, then the median of --repeat runs. Bandwidth
// counts each input read once and the output written once. A kernel that fails to build, run or
// verify is a row with its status; the run goes on.
//
// Usage:
//   stencil_roofline_bench [--device SPEC] [--size N|MxN]... [--stencil NAME]...
//                          [--variants-dir DIR]... [VARIANT...] [--window-rows R]...
//                          [--local X,Y|auto] [--repeat R] [--warmup W] [--seed S]
//                          [--json FILE] [--source-dir DIR]
//   VARIANT = [STENCIL=]FILE.lift[@LAUNCH.json]   (the stencil defaults to FILE's folder name)
//   --variants-dir DIR runs DIR/<stencil>/*.lift; a variant's launch comes from the sidecar
//   beside it, <stem>.json (as `liftx variants --out` writes it) or <stem>.launch.json, else from
//   the variant's launch rule. A sidecar written for other sizes gives only its local size (a tied
//   one nothing): the global size follows the launch rule at the size run.
//
// Examples:
//   # PoCL, every stencil, the hand-lowered variants of stencils/variants/:
//   build/stencil_roofline_bench --device cpu --size 1024 --variants-dir stencils/variants
//   # NVIDIA (register the driver as ../shared/guides/gpu.md says), the best variants of an
//   # exploration copied to best/<stencil>/ with their sidecars:
//   build/stencil_roofline_bench --device nvidia --size 8192 --variants-dir best --json h200.json
//   # (the float4-window kernel runs with 2, 4, 8 and 16 rows unless --window-rows says)
#include "bench/handwritten.hpp"
#include "codegen/runtime/roofline.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "support/error.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace liftx;
namespace fs = std::filesystem;

namespace {

struct Options {
  std::string device = "cpu";
  std::vector<std::string> sizes;
  std::vector<std::string> stencils;
  std::vector<std::string> variants_dirs;
  std::vector<std::string> variants;
  std::vector<int> window_rows;
  std::string local;
  int repeat = 20;
  int warmup = 3;
  uint64_t seed = 1;
  double tolerance = 1e-4;
  std::string json;
  std::string source_dir;
  bool references_only = false;
};

struct Size {
  int64_t rows = 0;
  int64_t columns = 0;
  std::string text() const { return fmt::format("{}x{}", rows, columns); }
};

struct VariantFile {
  std::string stencil;
  fs::path lift;
  std::optional<fs::path> launch;
};

/// One line of the table (and of the JSON output).
struct Row {
  std::string size;
  std::string stencil;
  std::string kernel;
  std::string launch;
  std::string status = "ok";
  std::string message;
  std::string verified = "-"; ///< "yes", "no" or "-" (not checked)
  double bytes_moved = 0;
  double build_ms = 0;
  std::optional<runtime::Timing> timing;
  std::optional<double> gb_per_s;
  std::optional<double> fraction; ///< of the float4 copy of the same size
};

Size parse_size(const std::string& text) {
  auto number = [&](const std::string& part) {
    try {
      size_t used = 0;
      long long v = std::stoll(part, &used);
      if (used == part.size() && v >= 1 && v <= 46340)
        return static_cast<int64_t>(v);
    } catch (const std::exception&) {
    }
    throw UserError(
        fmt::format("--size: expected N or MxN with values from 1 to 46340, got '{}'", text));
  };
  size_t x = text.find('x');
  if (x == std::string::npos)
    return {number(text), number(text)};
  return {number(text.substr(0, x)), number(text.substr(x + 1))};
}

std::vector<int64_t> parse_local(const std::string& text) {
  if (text.empty() || text == "auto")
    return {};
  size_t comma = text.find(',');
  try {
    if (comma != std::string::npos) {
      std::vector<int64_t> local{std::stoll(text.substr(0, comma)),
                                 std::stoll(text.substr(comma + 1))};
      if (local[0] >= 1 && local[1] >= 1)
        return local;
    }
  } catch (const std::exception&) {
  }
  throw UserError(fmt::format("--local: expected X,Y (positive) or auto, got '{}'", text));
}

/// The sidecar beside `lift`: <stem>.json as `liftx variants --out` writes it, or
/// <stem>.launch.json.
std::optional<fs::path> sidecar_of(const fs::path& lift) {
  for (const char* suffix : {".json", ".launch.json"}) {
    fs::path candidate = lift.parent_path() / (lift.stem().string() + suffix);
    if (fs::is_regular_file(candidate))
      return candidate;
  }
  return std::nullopt;
}

VariantFile parse_variant_argument(const std::string& text) {
  VariantFile v;
  std::string rest = text;
  if (size_t eq = rest.find('='); eq != std::string::npos) {
    v.stencil = rest.substr(0, eq);
    rest = rest.substr(eq + 1);
  }
  if (size_t at = rest.rfind('@'); at != std::string::npos) {
    v.launch = fs::path(rest.substr(at + 1));
    rest = rest.substr(0, at);
  }
  v.lift = rest;
  if (v.stencil.empty())
    v.stencil = v.lift.parent_path().filename().string();
  if (!v.launch)
    v.launch = sidecar_of(v.lift);
  return v;
}

std::vector<VariantFile> variants_in(const fs::path& dir, const std::string& stencil) {
  std::vector<VariantFile> found;
  const fs::path folder = dir / stencil;
  if (!fs::is_directory(folder))
    return found;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.is_regular_file() && entry.path().extension() == ".lift")
      found.push_back(VariantFile{stencil, entry.path(), sidecar_of(entry.path())});
  std::sort(found.begin(), found.end(),
            [](const VariantFile& a, const VariantFile& b) { return a.lift < b.lift; });
  return found;
}

std::string dims_text(const std::vector<int64_t>& values) {
  if (std::none_of(values.begin(), values.end(), [](int64_t v) { return v > 0; }))
    return "auto"; // chosen by the OpenCL runtime
  std::vector<std::string> parts;
  for (int64_t v : values)
    parts.push_back(v > 0 ? std::to_string(v) : "auto");
  return fmt::format("{}", fmt::join(parts, "x"));
}

/// Applies a launch sidecar to `options`; returns a note for the launch column when the sidecar
/// was written for other sizes.
std::string apply_sidecar(const fs::path& file, const interp::Sizes& sizes,
                          exec::RunOptions& options) {
  std::ifstream in(file);
  if (!in)
    throw UserError(fmt::format("cannot read {}", file.string()));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: not a launch sidecar: {}", file.string(), e.what()));
  }
  auto values = [&](const char* key) {
    std::vector<int64_t> v;
    if (j.contains(key) && j[key].is_array())
      for (const auto& x : j[key])
        v.push_back(x.get<int64_t>());
    return v;
  };
  bool same_sizes = true;
  if (j.contains("sizes") && j["sizes"].is_object())
    for (const auto& [name, value] : sizes)
      if (!j["sizes"].contains(name) || j["sizes"][name].get<int64_t>() != value)
        same_sizes = false;
  if (same_sizes) {
    options.global = values("global");
    options.local = values("local");
    return "";
  }
  if (j.value("tied", true))
    return " (sidecar for other sizes: tied launch)";
  options.local = values("local");
  return " (sidecar for other sizes: its local only)";
}

std::string launch_text(const exec::RunReport& r) {
  const codegen::Launch& l = r.launch;
  std::vector<int64_t> global(l.global.begin(), l.global.begin() + l.dims);
  std::vector<int64_t> local(l.local.begin(), l.local.begin() + l.dims);
  return fmt::format("global {} local {}{}", dims_text(global), dims_text(local),
                     l.tied ? " tied" : "");
}

/// An exception's text for a row's message, without the "error: " that UserError puts first.
std::string error_text(const std::exception& e) {
  std::string text = e.what();
  const std::string prefix = "error: ";
  return text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
}

std::string one_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 160 ? line.substr(0, 157) + "..." : line;
}

void print_header(const Size& size, const std::string& device, double copy_gb_per_s) {
  fmt::print("\n## {} ({}), float4 copy {:.1f} GB/s\n\n", size.text(), device, copy_gb_per_s);
  fmt::print("| stencil | kernel | launch | time ms | IQR ms | GB/s | % of copy | verified | "
             "status |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
}

void print_row(const Row& r) {
  auto opt = [](const std::optional<double>& v, const char* format) {
    return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
  };
  std::optional<double> median, iqr;
  if (r.timing) {
    median = r.timing->median_ms;
    iqr = r.timing->iqr_ms();
  }
  std::optional<double> percent;
  if (r.fraction)
    percent = *r.fraction * 100;
  fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.stencil, r.kernel, r.launch,
             opt(median, "{:.4f}"), opt(iqr, "{:.4f}"), opt(r.gb_per_s, "{:.1f}"),
             opt(percent, "{:.1f}%"), r.verified, r.status);
  std::fflush(stdout);
}

nlohmann::json row_json(const Row& r) {
  nlohmann::json j{
      {"size", r.size},         {"stencil", r.stencil},         {"kernel", r.kernel},
      {"launch", r.launch},     {"status", r.status},           {"message", r.message},
      {"verified", r.verified}, {"bytes_moved", r.bytes_moved}, {"build_ms", r.build_ms}};
  if (r.timing)
    j["time_ms"] = {{"median", r.timing->median_ms}, {"min", r.timing->min_ms},
                    {"max", r.timing->max_ms},       {"q1", r.timing->q1_ms},
                    {"q3", r.timing->q3_ms},         {"samples", r.timing->samples_ms}};
  if (r.gb_per_s)
    j["gb_per_s"] = *r.gb_per_s;
  if (r.fraction)
    j["fraction_of_copy"] = *r.fraction;
  return j;
}

void progress(const std::string& text) {
  fmt::print(stderr, "[stencil_roofline] {}\n", text);
}

fs::path default_source_dir() {
  fs::path built_in = LIFTX_BENCH_SOURCE_DIR;
  if (fs::is_directory(built_in / "bench" / "handwritten"))
    return built_in;
  return fs::current_path(); // a build copied to another machine, run from the checkout
}

class Bench {
public:
  Bench(const Options& o, runtime::Device& device)
      : o_(o), device_(device),
        source_dir_(o.source_dir.empty() ? default_source_dir() : fs::path(o.source_dir)),
        local_(o.local.empty()
                   ? (device.profile.type == runtime::DeviceType::gpu ? std::vector<int64_t>{32, 8}
                                                                      : std::vector<int64_t>{})
                   : parse_local(o.local)),
        window_rows_(o.window_rows.empty() ? std::vector<int>{2, 4, 8, 16} : o.window_rows) {}

  void run_size(const Size& size, const std::vector<std::string>& stencils,
                const std::vector<VariantFile>& variants) {
    copy_ = std::nullopt;
    Row copy{size.text(), "-", "copy float4", "", "ok"};
    const size_t floats = static_cast<size_t>((size.rows * size.columns + 3) / 4 * 4);
    copy.launch = fmt::format("global {} local auto", floats / 4);
    copy.bytes_moved = 2.0 * static_cast<double>(floats) * sizeof(float);
    try {
      runtime::CopyBandwidth c =
          runtime::measure_copy_bandwidth(device_, floats, o_.warmup, o_.repeat);
      copy.timing = c.timing;
      copy.gb_per_s = c.gb_per_s;
      copy.fraction = 1.0;
      copy.verified = "yes";
      copy_ = c.gb_per_s;
    } catch (const runtime::LaunchError& e) {
      copy.status = std::string(runtime::to_string(e.status()));
      copy.message = e.what();
    }
    print_header(size, device_.profile.device_name, copy_.value_or(0));
    add(copy);
    for (const std::string& stencil : stencils)
      run_stencil(size, stencil, variants);
  }

  const std::vector<Row>& rows() const { return rows_; }

private:
  void add(Row row) {
    if (row.gb_per_s && copy_)
      row.fraction = *row.gb_per_s / *copy_;
    print_row(row);
    rows_.push_back(std::move(row));
  }

  void run_stencil(const Size& size, const std::string& stencil,
                   const std::vector<VariantFile>& variants) {
    const fs::path lift = source_dir_ / "stencils" / (stencil + ".lift");
    progress(
        fmt::format("{} {}: inputs and the reference interpreter's result", stencil, size.text()));
    std::optional<bench::StencilCase> c;
    try {
      c = bench::load_stencil_case(lift, size.rows, size.columns, o_.seed);
    } catch (const std::exception& e) {
      Row row{size.text(), stencil, "reference", "", "error", error_text(e)};
      add(row);
      return;
    }
    run_handwritten(size, *c);
    for (const VariantFile& v : variants)
      if (v.stencil == stencil)
        run_variant(size, *c, v);
  }

  void run_handwritten(const Size& size, const bench::StencilCase& c) {
    bench::HandwrittenOptions options;
    options.local = local_;
    options.warmup = o_.warmup;
    options.repeat = o_.repeat;
    options.tolerance = o_.tolerance;
    for (const bench::HandwrittenKernel& k :
         bench::handwritten_kernels(source_dir_, c.stencil, window_rows_)) {
      progress(fmt::format("{} {}: {}", c.stencil, size.text(), k.label));
      Row row{size.text(), c.stencil, k.label};
      row.bytes_moved = c.bytes_moved();
      try {
        bench::HandwrittenReport r = bench::run_handwritten(device_, k, c, options);
        row.launch = fmt::format("global {} local {}", dims_text({r.global[0], r.global[1]}),
                                 dims_text({r.local[0], r.local[1]}));
        row.status = std::string(runtime::to_string(r.status));
        row.message = r.message;
        row.verified = r.verification.checked ? (r.verification.passed ? "yes" : "no") : "-";
        row.build_ms = r.build_ms;
        row.timing = r.timing;
        row.gb_per_s = r.gb_per_s;
      } catch (const std::exception& e) {
        row.status = "error";
        row.message = error_text(e);
      }
      add(row);
    }
  }

  void run_variant(const Size& size, const bench::StencilCase& c, const VariantFile& v) {
    progress(fmt::format("{} {}: liftx {}", c.stencil, size.text(), v.lift.string()));
    Row row{size.text(), c.stencil, "liftx " + v.lift.stem().string()};
    row.bytes_moved = c.bytes_moved();
    try {
      ir::Module module = parse::parse_file(v.lift.string());
      exec::RunOptions options;
      options.warmup = o_.warmup;
      options.repeat = o_.repeat;
      options.seed = o_.seed;
      options.tolerance = o_.tolerance;
      options.roofline = false; // the copy of this size, measured above, is the roofline
      options.reference = &c.program();
      std::string note = v.launch ? apply_sidecar(*v.launch, c.sizes, options) : "";
      exec::RunReport r = exec::run_program(device_, module.main(), c.sizes, options);
      row.launch = launch_text(r) + note;
      row.status = std::string(runtime::to_string(r.status));
      row.message = r.message;
      row.verified = r.verification.checked ? (r.verification.passed ? "yes" : "no") : "-";
      row.build_ms = r.build_ms;
      row.bytes_moved = r.bytes_moved;
      row.timing = r.timing;
      row.gb_per_s = r.gb_per_s;
    } catch (const std::exception& e) {
      row.status = "error";
      row.message = error_text(e);
    }
    add(row);
  }

  const Options& o_;
  runtime::Device& device_;
  fs::path source_dir_;
  std::vector<int64_t> local_;
  std::vector<int> window_rows_;
  std::optional<double> copy_;
  std::vector<Row> rows_;
};

void write_json(const std::string& path, const runtime::Device& device, const Options& o,
                const std::vector<Row>& rows) {
  nlohmann::json j{{"device", device.profile.device_name},
                   {"platform", device.profile.platform_name},
                   {"driver", device.profile.driver_version},
                   {"repeat", o.repeat},
                   {"warmup", o.warmup},
                   {"seed", o.seed},
                   {"tolerance", o.tolerance},
                   {"rows", nlohmann::json::array()}};
  for (const Row& r : rows)
    j["rows"].push_back(row_json(r));
  if (!runtime::write_file_atomically(path, j.dump(2) + "\n"))
    throw UserError(fmt::format("cannot write {}", path));
}

int run(const Options& o) {
  std::vector<Size> sizes;
  for (const std::string& s : o.sizes.empty() ? std::vector<std::string>{"8192"} : o.sizes)
    sizes.push_back(parse_size(s));
  std::vector<std::string> stencils =
      o.stencils.empty() ? bench::handwritten_stencils() : o.stencils;
  for (const std::string& s : stencils) {
    const auto& known = bench::handwritten_stencils();
    if (std::find(known.begin(), known.end(), s) == known.end())
      throw UserError(
          fmt::format("--stencil: unknown stencil '{}' (known: {})", s, fmt::join(known, ", ")));
  }
  for (int rows : o.window_rows)
    if (rows < 1 || rows > 64)
      throw UserError(fmt::format("--window-rows: expected 1 to 64, got {}", rows));
  if (!o.local.empty())
    parse_local(o.local);

  std::vector<VariantFile> variants;
  for (const std::string& dir : o.variants_dirs) {
    if (!fs::is_directory(dir))
      throw UserError(fmt::format("--variants-dir: {} is not a directory", dir));
    for (const std::string& s : stencils)
      for (VariantFile& v : variants_in(dir, s))
        variants.push_back(std::move(v));
  }
  for (const std::string& text : o.variants) {
    VariantFile v = parse_variant_argument(text);
    if (std::find(stencils.begin(), stencils.end(), v.stencil) == stencils.end())
      throw UserError(fmt::format("variant {}: stencil '{}' is not among those run (write "
                                  "STENCIL=FILE.lift, or add --stencil {})",
                                  text, v.stencil, v.stencil));
    variants.push_back(std::move(v));
  }

  if (o.references_only) {
    // Interpreting 8192^2 takes minutes per stencil: one process per stencil fills the disk cache
    // in parallel before the (sequential) timing run.
    for (const Size& size : sizes)
      for (const std::string& s : stencils) {
        bench::load_stencil_case(
            (o.source_dir.empty() ? default_source_dir() : fs::path(o.source_dir)) / "stencils" /
                (s + ".lift"),
            size.rows, size.columns, o.seed);
        fmt::print("{} {}: reference cached\n", s, size.text());
      }
    return 0;
  }
  runtime::Device device = runtime::select_device(o.device);
  fmt::print("# stencil_roofline_bench: {} ({}, {}), median of {} runs after {} warm-ups, seed "
             "{}\n",
             device.profile.device_name, device.profile.platform_name,
             device.profile.driver_version, o.repeat, o.warmup, o.seed);
  Bench bench(o, device);
  for (const Size& size : sizes) {
    bench.run_size(size, stencils, variants);
    if (!o.json.empty())
      write_json(o.json, device, o, bench.rows()); // after every size: a long run keeps its rows
  }
  int failed = 0;
  for (const Row& r : bench.rows())
    if (r.status != "ok") {
      if (failed++ == 0)
        fmt::print("\nNot ok:\n");
      fmt::print("- {} {} {}: {}: {}\n", r.size, r.stencil, r.kernel, r.status,
                 one_line(r.message));
    }
  if (!o.json.empty())
    fmt::print("\nwritten {}\n", o.json);
  return failed == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"liftx stencil variants vs hand-written OpenCL kernels vs a float4 copy"};
  app.add_option("--device", o.device, "cpu, gpu, pocl, nvidia, amd, intel, P:D or a name");
  app.add_option("--size", o.sizes, "N (N x N) or MxN, repeatable (default 8192)")
      ->allow_extra_args(false);
  app.add_option("--stencil", o.stencils, "stencil name, repeatable (default: all eight)")
      ->allow_extra_args(false);
  app.add_option("--variants-dir", o.variants_dirs,
                 "run DIR/<stencil>/*.lift (sidecars <stem>.json or <stem>.launch.json)")
      ->allow_extra_args(false);
  app.add_option("variants", o.variants, "[STENCIL=]FILE.lift[@LAUNCH.json]");
  app.add_option(
         "--window-rows", o.window_rows,
         "rows per work-item of the float4-window Jacobi kernel, repeatable (default 2, 4, 8, "
         "16)")
      ->allow_extra_args(false);
  app.add_option("--local", o.local,
                 "work-group X,Y of the hand-written kernels, or auto (default 32,8 on GPUs, "
                 "auto elsewhere)");
  app.add_option("--repeat", o.repeat, "timed runs (default 20)")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", o.warmup, "untimed runs first (default 3)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--seed", o.seed, "seed of the random inputs (default 1)");
  app.add_option("--tolerance", o.tolerance, "relative tolerance of the verification (1e-4)");
  app.add_flag("--references-only", o.references_only,
               "only compute and cache the reference results (no device)");
  app.add_option("--json", o.json, "also write every row to this JSON file");
  app.add_option("--source-dir", o.source_dir,
                 "the liftx checkout holding stencils/ and bench/handwritten/");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const UserError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 3;
  }
}
