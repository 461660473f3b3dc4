#include "perfdb/launch_file.hpp"

#include "perfdb/record.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

namespace liftx::perfdb {

namespace fs = std::filesystem;

LaunchFile read_launch_file(const std::string& path) {
  std::ifstream in(path);
  LIFTX_USER_CHECK(in, "cannot read {}", path);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  LaunchFile file;
  file.launch = read_launch_sidecar(text, path);
  const nlohmann::json sidecar = nlohmann::json::parse(text, nullptr, false);
  file.tied = sidecar.is_object() && sidecar.contains("tied") && sidecar.at("tied").is_boolean() &&
              sidecar.at("tied").get<bool>();
  if (sidecar.is_object() && sidecar.contains("sizes") && sidecar.at("sizes").is_object())
    for (const auto& [name, value] : sidecar.at("sizes").items())
      if (value.is_number_integer())
        file.sizes.push_back(fmt::format("{}={}", name, value.get<int64_t>()));
  return file;
}

exec::RunOptions launch_for(const fs::path& file, exec::RunOptions options) {
  for (fs::path sidecar :
       {fs::path(file).replace_extension(".json"), fs::path(file.string() + ".json")}) {
    if (!fs::is_regular_file(sidecar))
      continue;
    std::ifstream in(sidecar);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    LIFTX_USER_CHECK(j.is_object(), "{}: expected {{\"global\": [...], \"local\": [...]}}",
                     sidecar.string());
    // The command line's sizes win where given, the sidecar fills the rest; the launch is then
    // checked like every other launch liftx reads (1 to 3 sizes in range), naming the sidecar.
    nlohmann::json launch = nlohmann::json::object();
    launch["global"] = options.global.empty() && j.contains("global")
                           ? j["global"]
                           : nlohmann::json(options.global);
    if (!options.local.empty())
      launch["local"] = options.local;
    else if (j.contains("local"))
      launch["local"] = j["local"];
    // A mismatch names both sources when the command line gave some of the sizes.
    const std::string source = options.global.empty() && options.local.empty()
                                   ? sidecar.string()
                                   : sidecar.string() + " with --global/--local";
    if (!launch["global"].empty())
      return run_options_for(launch, source);
    if (options.local.empty()) {
      try {
        options.local = j.value("local", std::vector<int64_t>{});
      } catch (const nlohmann::json::exception& e) {
        throw UserError(fmt::format("{}: expected {{\"global\": [...], \"local\": [...]}}: {}",
                                    sidecar.string(), e.what()));
      }
    }
    break;
  }
  return options;
}

} // namespace liftx::perfdb
