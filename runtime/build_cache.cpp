#include "runtime/build_cache.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

namespace liftx::runtime {

namespace {

constexpr std::string_view kMagic = "LIFTXBIN1\n";

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string build_log(const cl::Program& program, const cl::Device& device) {
  cl_int err = CL_SUCCESS;
  std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device, &err);
  if (err != CL_SUCCESS)
    return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' '))
    log.pop_back();
  return log;
}

/// File layout: magic, the cache key and a checksum of the binary (one line each), the binary.
std::string encode_binary(const std::string& hash, const std::vector<unsigned char>& binary) {
  std::string payload(binary.begin(), binary.end());
  return fmt::format("{}{}\n{}\n", kMagic, hash, content_hash(payload)) + payload;
}

std::optional<std::vector<unsigned char>> decode_binary(const std::string& hash,
                                                        const std::string& file) {
  if (file.compare(0, kMagic.size(), kMagic) != 0)
    return std::nullopt;
  size_t pos = kMagic.size();
  size_t hash_end = file.find('\n', pos);
  if (hash_end == std::string::npos || file.compare(pos, hash_end - pos, hash) != 0)
    return std::nullopt;
  size_t sum_end = file.find('\n', hash_end + 1);
  if (sum_end == std::string::npos)
    return std::nullopt;
  std::string checksum = file.substr(hash_end + 1, sum_end - hash_end - 1);
  std::string_view payload = std::string_view(file).substr(sum_end + 1);
  if (payload.empty() || content_hash(payload) != checksum)
    return std::nullopt;
  return std::vector<unsigned char>(payload.begin(), payload.end());
}

/// A program from a cached binary, or nullopt if the driver refuses it.
std::optional<cl::Program> load_binary(Device& device, const std::vector<unsigned char>& binary,
                                       const std::string& options) {
  cl_int err = CL_SUCCESS;
  std::vector<cl_int> binary_status;
  cl::Program program(device.context, std::vector<cl::Device>{device.device},
                      cl::Program::Binaries{binary}, &binary_status, &err);
  if (err != CL_SUCCESS)
    return std::nullopt;
  if (program.build(std::vector<cl::Device>{device.device}, options.c_str()) != CL_SUCCESS)
    return std::nullopt;
  return program;
}

} // namespace

BuildCache::BuildCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::string BuildCache::key(const Device& device, const std::string& source,
                            const std::string& options) {
  // Lengths first, so that moving text between fields changes the key.
  return content_hash(fmt::format("{}:{}:{}:{}\n", source.size(), options.size(),
                                  device.profile.key.size(), device.profile.key) +
                      source + options);
}

std::filesystem::path BuildCache::binary_path(const std::string& hash) const {
  if (dir_.empty())
    return {};
  return dir_ / "kernels" / (hash + ".bin");
}

BuildResult BuildCache::build(Device& device, const std::string& source,
                              const std::string& options) {
  auto start = std::chrono::steady_clock::now();
  BuildResult result;
  result.hash = key(device, source, options);
  auto memory_key = std::pair{result.hash, device.context()};
  {
    std::lock_guard lock(mutex_);
    if (auto it = programs_.find(memory_key); it != programs_.end()) {
      result.program = it->second;
      result.cache_hit = true;
      result.build_ms = elapsed_ms(start);
      return result;
    }
  }

  std::filesystem::path path = binary_path(result.hash);
  if (!path.empty()) {
    if (auto file = read_file_bytes(path)) {
      if (auto binary = decode_binary(result.hash, *file)) {
        if (auto program = load_binary(device, *binary, options)) {
          result.program = *program;
          result.cache_hit = true;
          result.from_disk = true;
          std::filesystem::path ms_path = path;
          if (auto text = read_file_bytes(ms_path.replace_extension(".ms")))
            result.compile_ms = std::atof(text->c_str());
        }
      }
    }
  }

  if (!result.cache_hit) {
    cl_int err = CL_SUCCESS;
    cl::Program program(device.context, source, false, &err);
    if (err != CL_SUCCESS)
      throw BuildError(fmt::format("cannot create an OpenCL program on {}: {}",
                                   device.profile.device_name, cl_error_name(err)),
                       "");
    err = program.build(std::vector<cl::Device>{device.device}, options.c_str());
    if (err != CL_SUCCESS)
      throw BuildError(fmt::format("the OpenCL C compiler rejected the kernel ({}, device {}{})",
                                   cl_error_name(err), device.profile.device_name,
                                   options.empty() ? "" : fmt::format(", options '{}'", options)),
                       build_log(program, device.device));
    result.program = program;
    result.compile_ms = elapsed_ms(start);
    result.log = build_log(program, device.device);
    if (!path.empty()) {
      auto binaries = program.getInfo<CL_PROGRAM_BINARIES>(&err);
      if (err == CL_SUCCESS && binaries.size() == 1 && !binaries[0].empty()) {
        // Best effort, the time first: a reader that finds the binary finds its time too.
        std::filesystem::path ms_path = path;
        write_file_atomically(ms_path.replace_extension(".ms"),
                              fmt::format("{:.3f}\n", result.compile_ms));
        write_file_atomically(path, encode_binary(result.hash, binaries[0]));
      }
    }
  }

  std::lock_guard lock(mutex_);
  programs_.emplace(memory_key, result.program);
  result.build_ms = elapsed_ms(start);
  return result;
}

BuildCache& default_build_cache() {
  static BuildCache cache;
  return cache;
}

cl::Program build(Device& device, const std::string& source, const std::string& options,
                  BuildResult* info) {
  BuildResult result = default_build_cache().build(device, source, options);
  cl::Program program = result.program;
  if (info)
    *info = std::move(result);
  return program;
}

} // namespace liftx::runtime
