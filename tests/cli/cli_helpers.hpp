#pragma once
// Helpers of the end-to-end tests of the `liftx` executable: run it from the source directory and
// capture its exit code, standard output and standard error.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cli_test {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// This test process's scratch directory under the system's temporary directory.
inline fs::path scratch_dir() {
  fs::path dir = fs::temp_directory_path() / ("liftx_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

/// Runs `liftx ARGS` (ARGS already shell-quoted) from the source directory.
inline RunResult liftx(const std::string& args) {
  fs::path dir = scratch_dir();
  std::string command = std::string("cd '") + LIFTX_SOURCE_DIR + "' && '" + LIFTX_BINARY + "' " +
                        args + " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() +
                        "'";
  int status = std::system(command.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(dir / "out");
  r.err = read_text(dir / "err");
  return r;
}

/// Writes `text` to a file of the scratch directory and returns its path.
inline fs::path write_file(const std::string& name, const std::string& text) {
  fs::path path = scratch_dir() / name;
  std::ofstream(path) << text;
  return path;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace cli_test
