#include "perfdb/record.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace liftx::perfdb {

int64_t record_configuration(PerfDb& db, int64_t program_id, const nlohmann::json& sizes,
                             const RecordedVariant& variant, const std::string& profile,
                             const std::optional<nlohmann::json>& features) {
  const int64_t variant_id =
      db.variant(program_id, variant.printed, variant.strategy, variant.parameters);
  const int64_t configuration_id = db.configuration(variant_id, sizes, variant.launch);
  if (features)
    db.put_features(configuration_id, profile, *features);
  return configuration_id;
}

ScratchDir::ScratchDir(const std::string& prefix) {
  const std::filesystem::path temp = std::filesystem::temp_directory_path();
  sweep(temp, prefix);
  std::string pattern = (temp / fmt::format("{}{}-XXXXXX", prefix, ::getpid())).string();
  LIFTX_USER_CHECK(::mkdtemp(pattern.data()), "cannot create a temporary folder in {}: {}",
                   temp.string(), std::strerror(errno));
  path_ = pattern;
  // The lock is taken under another name and then renamed to "lock": a sweep by another process
  // (which removes folders whose "lock" it can take) must never find the file unlocked between
  // its creation and our flock, or it removes a folder that is in use.
  const std::filesystem::path unpublished = path_ / "lock.new";
  lock_fd_ = ::open(unpublished.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0 ||
      ::rename(unpublished.c_str(), (path_ / "lock").c_str()) != 0) {
    const int error = errno;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    throw UserError(
        fmt::format("cannot lock {}: {}", (path_ / "lock").string(), std::strerror(error)));
  }
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  ::close(lock_fd_);
}

void ScratchDir::sweep(const std::filesystem::path& parent, const std::string& prefix) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    std::error_code entry_ec;
    if (entry.path().filename().string().rfind(prefix, 0) != 0 || !entry.is_directory(entry_ec))
      continue;
    const int fd = ::open((entry.path() / "lock").c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
      continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
      std::filesystem::remove_all(entry.path(), entry_ec);
    ::close(fd);
  }
}

std::string clip_message(std::string text) {
  if (text.size() > kMaxMessageBytes)
    text = text.substr(0, kMaxMessageBytes) + " [...]";
  return text;
}

Measurement measurement_of(const exec::RunReport& report) {
  Measurement m;
  m.status = report.status;
  if (report.timing) {
    m.median_ms = report.timing->median_ms;
    m.min_ms = report.timing->min_ms;
    m.max_ms = report.timing->max_ms;
    m.q1_ms = report.timing->q1_ms;
    m.q3_ms = report.timing->q3_ms;
    m.repetitions = static_cast<int>(report.timing->samples_ms.size());
    m.samples_ms = report.timing->samples_ms;
  }
  m.compile_ms = report.compile_ms;
  m.bytes_moved = report.bytes_moved;
  if (report.status != runtime::Status::ok)
    m.message = clip_message(report.message);
  else // a check made shorter or smaller than the run ("checked at M=512 N=512") is on record
    m.message = exec::describe_check(report.verification);
  return m;
}

nlohmann::json to_json(const Measurement& m) {
  nlohmann::json j = {{"status", std::string(runtime::to_string(m.status))},
                      {"median_ms", m.median_ms},
                      {"min_ms", m.min_ms},
                      {"max_ms", m.max_ms},
                      {"q1_ms", m.q1_ms},
                      {"q3_ms", m.q3_ms},
                      {"repetitions", m.repetitions},
                      {"compile_ms", m.compile_ms}};
  if (!m.message.empty())
    j["message"] = m.message;
  if (!m.samples_ms.empty())
    j["samples_ms"] = m.samples_ms;
  if (m.bytes_moved > 0)
    j["bytes_moved"] = m.bytes_moved;
  return j;
}

Measurement measurement_from(const nlohmann::json& j) {
  Measurement m;
  std::optional<runtime::Status> status = runtime::parse_status(j.value("status", ""));
  LIFTX_INTERNAL_CHECK(status, "worker sent an unknown status in {}", j.dump());
  m.status = *status;
  m.median_ms = j.value("median_ms", 0.0);
  m.min_ms = j.value("min_ms", 0.0);
  m.max_ms = j.value("max_ms", 0.0);
  m.q1_ms = j.value("q1_ms", 0.0);
  m.q3_ms = j.value("q3_ms", 0.0);
  m.repetitions = j.value("repetitions", 0);
  m.compile_ms = j.value("compile_ms", 0.0);
  m.message = j.value("message", "");
  m.bytes_moved = j.value("bytes_moved", 0.0);
  if (const auto samples = j.find("samples_ms"); samples != j.end() && samples->is_array())
    for (const nlohmann::json& sample : *samples)
      if (sample.is_number())
        m.samples_ms.push_back(sample.get<double>());
  return m;
}

namespace {

/// launch[key] as launch sizes: integers in [min, 2^31], at most 3 (empty if absent and optional).
std::vector<int64_t> launch_sizes(const nlohmann::json& launch, const char* key, int64_t min,
                                  const std::string& origin) {
  const bool required = min > 0;
  if (!launch.contains(key)) {
    LIFTX_USER_CHECK(!required, "{}: the launch has no \"{}\" sizes", origin, key);
    return {};
  }
  const nlohmann::json& sizes = launch[key];
  constexpr int64_t kMax = int64_t{1} << 31;
  std::vector<int64_t> out;
  auto fits = [&](const nlohmann::json& v) {
    return v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(kMax)
                                  : v.is_number_integer() && v.get<int64_t>() <= kMax;
  };
  if (sizes.is_array() && sizes.size() <= 3)
    for (const nlohmann::json& v : sizes) {
      if (!fits(v) || v.get<int64_t>() < min)
        break;
      out.push_back(v.get<int64_t>());
    }
  LIFTX_USER_CHECK(sizes.is_array() && out.size() == sizes.size() && !(required && out.empty()),
                   "{}: the launch's \"{}\" must be 1 to 3 integers from {} to {}, "
                   "not {}",
                   origin, key, min, kMax, sizes.dump());
  return out;
}

} // namespace

exec::RunOptions run_options_for(const nlohmann::json& launch, const std::string& origin) {
  LIFTX_USER_CHECK(launch.is_object(), "{}: a launch is a JSON object, not {}", origin,
                   launch.dump());
  exec::RunOptions options;
  options.global = launch_sizes(launch, "global", 1, origin);
  std::vector<int64_t> local = launch_sizes(launch, "local", 0, origin);
  LIFTX_USER_CHECK(!(!local.empty() && local.size() != options.global.size()),
                   "{}: the launch has {} global sizes and {} local ones", origin,
                   options.global.size(), local.size());
  bool all_set = !local.empty();
  for (int64_t l : local)
    all_set = all_set && l > 0;
  if (all_set)
    options.local = local;
  return options;
}

exec::RunOptions read_launch_sidecar(std::string_view text, const std::string& origin) {
  nlohmann::json launch;
  try {
    launch = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: not a launch sidecar: {}", origin, e.what()));
  }
  return run_options_for(launch, origin);
}

} // namespace liftx::perfdb
