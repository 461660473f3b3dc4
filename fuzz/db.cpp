// Fuzz target: performance database files (what `liftx db`, `train`, `evaluate` and `replay`
// read).
//
// The input is written to a file and opened read-only; then every read path of `liftx db` runs:
// device keys, the device's rows for each features profile, the CSV and T4 exports, and a tuned
// winner. Asserts: each either works or ends in a UserError.
#include "perfdb/db.hpp"
#include "fuzz/fuzz_common.hpp"
#include "perfdb/dataset.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace liftx;

namespace {

/// This process's scratch file (one per process: libFuzzer's -fork/-jobs run several).
const std::filesystem::path& scratch_file() {
  static const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                            ("liftx-fuzz-db-" + std::to_string(::getpid()) + ".db");
  return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path& path = scratch_file();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  fuzz::expect_user_errors([&] {
    perfdb::PerfDb db(path, perfdb::PerfDb::Access::read_only);
    std::vector<std::string> keys = db.device_keys();
    if (keys.size() > 4)
      keys.resize(4);
    for (const std::string& key : keys) {
      fuzz::expect_user_errors([&] { (void)perfdb::resolve_device(db, key); });
      for (const char* profile : {"cpu", "nvidia", "amd", "gpu"})
        fuzz::expect_user_errors([&] { (void)db.rows(key, profile); });
      std::ostringstream csv, t4;
      fuzz::expect_user_errors([&] { db.export_csv(csv, key); });
      fuzz::expect_user_errors([&] { db.export_t4(t4, key); });
    }
    fuzz::expect_user_errors([&] { (void)perfdb::resolve_device(db, ""); });
    (void)db.winner("0123456789abcdef");
  });
  return 0;
}
