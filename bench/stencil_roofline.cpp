// stencil_roofline_bench: liftx's stencil variants against hand-written OpenCL kernels and a
// float4 copy, all in one process on one OpenCL device (issue 7).
//
// A size of two numbers (--size 8192, --size 4096x8192) runs the 2D stencils (stencils/*.lift), one
// of three (--size 512x512x512, --size 256x512x768: M planes z, N rows y, O columns x) the 3D suite
// (stencils/3d/*.lift). For each size, the float4 copy of as many floats as the grid holds is timed
// first; it is the roofline every other row is a fraction of. Then, for each stencil of the size's
// rank: the hand-written kernels of bench/handwritten/ (a naive one-work-item-per-point kernel, a
// 2D or 3D NDRange; for jacobi2d5pt also the float4 sliding-window kernel, one row per
// --window-rows value) and the liftx variants given, each verified element by element against the
// reference interpreter's result for the stencil's .lift program on random inputs (seed --seed,
// drawn as `liftx run` draws them; the reference is cached on disk, LIFTX_CACHE_DIR/references),
// then timed by profiling events: --warmup runs, then the median of --repeat runs. Bandwidth
// counts each input read once and the output written once. A kernel that fails to build, run or
// verify is a row with its status; the run goes on.
//
// Usage:
//   stencil_roofline_bench [--device SPEC] [--size N|MxN|MxNxO]... [--stencil NAME]...
//                          [--variants-dir DIR]... [VARIANT...] [--window-rows R]...
//                          [--local X,Y|auto] [--local3d X,Y,Z|auto] [--repeat R] [--warmup W]
//                          [--seed S] [--json FILE] [--source-dir DIR]
//   VARIANT = [STENCIL=]FILE.lift[@LAUNCH.json]   (the stencil defaults to FILE's folder name, or
//   to the part of its name before "--" when the folder is not named after a stencil:
//   heat3d--wA--46583-window3d.lift, as `bench/gpu-multi-output-3d.sh files` takes them)
//   --variants-dir DIR runs DIR/<stencil>/*.lift and DIR/<stencil>--*.lift; a variant's launch
//   comes from the sidecar beside it, <stem>.json (as `liftx variants --out` writes it) or
//   <stem>.launch.json, else from the variant's launch rule. A sidecar written for other sizes
//   gives only its local size (a tied one nothing): the global size follows the launch rule at the
//   size run.
//
// Examples:
//   # PoCL, every stencil, the hand-lowered variants of stencils/variants/:
//   build/stencil_roofline_bench --device cpu --size 1024 --variants-dir stencils/variants
//   # NVIDIA (register the driver as ../shared/guides/gpu.md says), the best variants of an
//   # exploration copied to best/<stencil>/ with their sidecars:
//   build/stencil_roofline_bench --device nvidia --size 8192 --variants-dir best --json h200.json
//   # (the float4-window kernel runs with 2, 4, 8 and 16 rows unless --window-rows says)
//   # The 3D suite at 512^3 and at 256x512x768 (z, y, x), with the liftx 3D variants measured on
//   # the H200 (files <stencil>--*.lift with .json sidecars in one folder; first
//   # `tar xJf data/h200-multi-output-3d-suite.tar.xz`):
//   build/stencil_roofline_bench --device nvidia --size 512x512x512 --size 256x512x768
//       --variants-dir h200-multi-output-3d-suite/512-variants
#include "bench/handwritten.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/roofline.hpp"
#include "support/error.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
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
  std::string local3d;
  int repeat = 20;
  int warmup = 3;
  uint64_t seed = 1;
  double tolerance = 1e-4;
  std::string json;
  std::string source_dir;
  bool references_only = false;
};

/// A grid size, outermost first: {M, N} runs the 2D stencils, {M, N, O} the 3D ones.
struct Size {
  std::vector<int64_t> extents;
  int rank() const { return static_cast<int>(extents.size()); }
  int64_t points() const {
    int64_t n = 1;
    for (int64_t e : extents)
      n *= e;
    return n;
  }
  std::string text() const { return fmt::format("{}", fmt::join(extents, "x")); }
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

/// The positive integers of `text` separated by `separator` ("4096x8192", "32,4,2"); nothing when
/// a part is not one.
std::optional<std::vector<int64_t>> positive_numbers(const std::string& text, char separator) {
  std::vector<int64_t> numbers;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    const std::string part = text.substr(start, end == std::string::npos ? end : end - start);
    try {
      size_t used = 0;
      const long long v = std::stoll(part, &used);
      if (used != part.size() || v < 1)
        return std::nullopt;
      numbers.push_back(v);
    } catch (const std::logic_error&) { // std::stoll's invalid_argument and out_of_range
      return std::nullopt;
    }
    if (end == std::string::npos)
      return numbers;
    start = end + 1;
  }
}

/// "N" (N x N), "MxN" or "MxNxO"; every kernel indexes the grid with int, so the points must fit
/// in one.
Size parse_size(const std::string& text) {
  std::optional<std::vector<int64_t>> extents = positive_numbers(text, 'x');
  if (extents && extents->size() == 1)
    extents->push_back(extents->front());
  Size size{extents.value_or(std::vector<int64_t>{})};
  double points = 1; // in double: the product of int64 extents may overflow
  for (int64_t e : size.extents)
    points *= static_cast<double>(e);
  LIFTX_USER_CHECK(size.rank() >= 2 && size.rank() <= 3 &&
                       points <= std::numeric_limits<int32_t>::max(),
                   "--size: expected N, MxN or MxNxO with values of at least 1 and "
                   "at most 2^31 - 1 points in all, got '{}'",
                   text);
  return size;
}

/// "X,Y" (dims 2) or "X,Y,Z" (dims 3); "auto" or nothing is empty (the OpenCL runtime chooses).
std::vector<int64_t> parse_local(const std::string& text, size_t dims, const char* option) {
  if (text.empty() || text == "auto")
    return {};
  std::optional<std::vector<int64_t>> local = positive_numbers(text, ',');
  LIFTX_USER_CHECK(local && local->size() == dims, "{}: expected {} (positive) or auto, got '{}'",
                   option, dims == 3 ? "X,Y,Z" : "X,Y", text);
  return *local;
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

bool is_handwritten_stencil(const std::string& name) {
  const auto& known = bench::handwritten_stencils();
  return std::find(known.begin(), known.end(), name) != known.end();
}

/// The stencil a variant file is of when the command line does not say: its folder's name
/// (DIR/<stencil>/FILE.lift), else the part of its name before "--" (<stencil>--WHAT--ID.lift, as
/// `liftx variants --out` names files in one folder), else the folder's name all the same.
std::string stencil_of(const fs::path& lift) {
  const std::string folder = lift.parent_path().filename().string();
  if (is_handwritten_stencil(folder))
    return folder;
  const std::string stem = lift.stem().string();
  const size_t dashes = stem.find("--");
  if (dashes != std::string::npos && is_handwritten_stencil(stem.substr(0, dashes)))
    return stem.substr(0, dashes);
  return folder;
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
    v.stencil = stencil_of(v.lift);
  if (!v.launch)
    v.launch = sidecar_of(v.lift);
  return v;
}

/// DIR/<stencil>/*.lift and DIR/<stencil>--*.lift, sorted.
std::vector<VariantFile> variants_in(const fs::path& dir, const std::string& stencil) {
  std::vector<VariantFile> found;
  auto add_lift_files = [&](const fs::path& folder, const std::string& prefix) {
    if (!fs::is_directory(folder))
      return;
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.is_regular_file() && entry.path().extension() == ".lift" &&
          entry.path().filename().string().rfind(prefix, 0) == 0)
        found.push_back(VariantFile{stencil, entry.path(), sidecar_of(entry.path())});
  };
  add_lift_files(dir / stencil, "");
  add_lift_files(dir, stencil + "--");
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
std::string apply_sidecar(const fs::path& file, const Sizes& sizes, exec::RunOptions& options) {
  std::ifstream in(file);
  LIFTX_USER_CHECK(in, "cannot read {}", file.string());
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
        local_(local_or_default(o.local, 2, "--local", {32, 8})),
        local3d_(local_or_default(o.local3d, 3, "--local3d", {32, 4, 2})),
        window_rows_(o.window_rows.empty() ? std::vector<int>{2, 4, 8, 16} : o.window_rows) {}

  /// The copy, then every stencil of `stencils` of the size's rank.
  void run_size(const Size& size, const std::vector<std::string>& stencils,
                const std::vector<VariantFile>& variants) {
    copy_ = std::nullopt;
    Row copy{size.text(), "-", "copy float4", "", "ok"};
    const size_t floats = static_cast<size_t>((size.points() + 3) / 4 * 4);
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
      if (bench::stencil_rank(stencil) == size.rank())
        run_stencil(size, stencil, variants);
  }

  const std::vector<Row>& rows() const { return rows_; }

private:
  /// The work-group size of the hand-written kernels of `dims` dimensions: `text`, else
  /// `gpu_default` on GPUs (32 work-items along x: whole warps read whole rows) and the OpenCL
  /// runtime's choice elsewhere.
  std::vector<int64_t> local_or_default(const std::string& text, size_t dims, const char* option,
                                        std::vector<int64_t> gpu_default) const {
    if (!text.empty())
      return parse_local(text, dims, option);
    if (device_.profile.type == target::DeviceType::gpu)
      return gpu_default;
    return {};
  }

  void add(Row row) {
    if (row.gb_per_s && copy_)
      row.fraction = *row.gb_per_s / *copy_;
    print_row(row);
    rows_.push_back(std::move(row));
  }

  void run_stencil(const Size& size, const std::string& stencil,
                   const std::vector<VariantFile>& variants) {
    const fs::path lift = bench::stencil_file(source_dir_, stencil);
    progress(
        fmt::format("{} {}: inputs and the reference interpreter's result", stencil, size.text()));
    std::optional<bench::StencilCase> c;
    try {
      c = bench::load_stencil_case(lift, size.extents, o_.seed);
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
    options.local = c.rank() == 3 ? local3d_ : local_;
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
        row.launch = fmt::format("global {} local {}",
                                 dims_text({r.global.begin(), r.global.begin() + r.dims}),
                                 dims_text({r.local.begin(), r.local.begin() + r.dims}));
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
  std::vector<int64_t> local_;   ///< of the 2D hand-written kernels
  std::vector<int64_t> local3d_; ///< of the 3D ones
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
  LIFTX_USER_CHECK(runtime::write_file_atomically(path, j.dump(2) + "\n"), "cannot write {}", path);
}

bool has_size_of_rank(const std::vector<Size>& sizes, int rank) {
  return std::any_of(sizes.begin(), sizes.end(), [&](const Size& s) { return s.rank() == rank; });
}

/// --size, else 8192^2 (the 2D suite), or, when --stencil names stencils, the default size of each
/// of their ranks (8192^2 in 2D, 512^3 in 3D).
std::vector<Size> sizes_to_run(const Options& o) {
  std::vector<Size> sizes;
  for (const std::string& s : o.sizes)
    sizes.push_back(parse_size(s));
  if (!sizes.empty())
    return sizes;
  if (o.stencils.empty())
    return {parse_size("8192")};
  // Not a structured binding: clang 14 (the fuzz build's) cannot capture one in a lambda.
  for (const std::pair<int, const char*>& rank_size :
       {std::pair{2, "8192"}, std::pair{3, "512x512x512"}}) {
    const int rank = rank_size.first;
    if (std::any_of(o.stencils.begin(), o.stencils.end(),
                    [&](const std::string& s) { return bench::stencil_rank(s) == rank; }))
      sizes.push_back(parse_size(rank_size.second));
  }
  return sizes;
}

void check_stencil_names(const std::vector<std::string>& stencils) {
  for (const std::string& s : stencils)
    LIFTX_USER_CHECK(is_handwritten_stencil(s), "--stencil: unknown stencil '{}' (known: {})", s,
                     fmt::join(bench::handwritten_stencils(), ", "));
}

/// --stencil, else every hand-written stencil of a rank some size has. A stencil named whose rank
/// no size has would silently not run: refused.
std::vector<std::string> stencils_to_run(const Options& o, const std::vector<Size>& sizes) {
  if (o.stencils.empty()) {
    std::vector<std::string> stencils;
    for (const std::string& s : bench::handwritten_stencils())
      if (has_size_of_rank(sizes, bench::stencil_rank(s)))
        stencils.push_back(s);
    return stencils;
  }
  for (const std::string& s : o.stencils) {
    const int rank = bench::stencil_rank(s);
    LIFTX_USER_CHECK(has_size_of_rank(sizes, rank),
                     "--stencil {} is {}D but no --size is (e.g. --size {})", s, rank,
                     rank == 3 ? "512x512x512" : "8192");
  }
  return o.stencils;
}

std::vector<VariantFile> variants_to_run(const Options& o,
                                         const std::vector<std::string>& stencils) {
  std::vector<VariantFile> variants;
  for (const std::string& dir : o.variants_dirs) {
    LIFTX_USER_CHECK(fs::is_directory(dir), "--variants-dir: {} is not a directory", dir);
    for (const std::string& s : stencils)
      for (VariantFile& v : variants_in(dir, s))
        variants.push_back(std::move(v));
  }
  for (const std::string& text : o.variants) {
    VariantFile v = parse_variant_argument(text);
    LIFTX_USER_CHECK(std::find(stencils.begin(), stencils.end(), v.stencil) != stencils.end(),
                     "variant {}: stencil '{}' is not among those run (write "
                     "STENCIL=FILE.lift, or add --stencil {})",
                     text, v.stencil, v.stencil);
    variants.push_back(std::move(v));
  }
  return variants;
}

/// Interpreting 8192^2 or 512^3 takes minutes per stencil: one process per stencil fills the disk
/// cache in parallel before the (sequential) timing run.
void cache_references(const Options& o, const std::vector<Size>& sizes,
                      const std::vector<std::string>& stencils) {
  const fs::path source_dir = o.source_dir.empty() ? default_source_dir() : fs::path(o.source_dir);
  for (const Size& size : sizes)
    for (const std::string& s : stencils)
      if (bench::stencil_rank(s) == size.rank()) {
        bench::load_stencil_case(bench::stencil_file(source_dir, s), size.extents, o.seed);
        fmt::print("{} {}: reference cached\n", s, size.text());
      }
}

int run(const Options& o) {
  check_stencil_names(o.stencils);
  const std::vector<Size> sizes = sizes_to_run(o);
  const std::vector<std::string> stencils = stencils_to_run(o, sizes);
  for (int rows : o.window_rows)
    LIFTX_USER_CHECK(rows >= 1 && rows <= 64, "--window-rows: expected 1 to 64, got {}", rows);
  parse_local(o.local, 2, "--local"); // refused before the device is opened
  parse_local(o.local3d, 3, "--local3d");
  const std::vector<VariantFile> variants = variants_to_run(o, stencils);

  if (o.references_only) {
    cache_references(o, sizes, stencils);
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
  app.add_option("--size", o.sizes,
                 "N (N x N) or MxN for the 2D stencils, MxNxO (z, y, x) for the 3D ones, "
                 "repeatable (default 8192, or 512x512x512 for a 3D --stencil)")
      ->allow_extra_args(false);
  app.add_option("--stencil", o.stencils,
                 "stencil name, repeatable (default: every one of the sizes' dimensions)")
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
                 "work-group X,Y of the 2D hand-written kernels, or auto (default 32,8 on GPUs, "
                 "auto elsewhere)");
  app.add_option("--local3d", o.local3d,
                 "work-group X,Y,Z of the 3D hand-written kernels, or auto (default 32,4,2 on "
                 "GPUs, auto elsewhere)");
  app.add_option("--repeat", o.repeat, "timed runs (default 20)")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", o.warmup, "untimed runs first (default 3)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--seed", o.seed, "seed of the random inputs (default 1)");
  app.add_option("--tolerance", o.tolerance, "relative tolerance of the verification (1e-4)");
  app.add_flag("--references-only", o.references_only,
               "only compute and cache the reference results (no device)");
  app.add_option("--json", o.json, "also write every row to this JSON file");
  app.add_option("--source-dir", o.source_dir,
                 "the liftx checkout holding stencils/, stencils/3d/ and bench/handwritten/");
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
