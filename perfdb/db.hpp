#pragma once
/// The performance database (embedded SQLite): devices, programs, variants, configurations,
/// features and measurements. Every write is committed when it is made, so an interrupted
/// collection loses nothing, and `has_measurement` lets a resumed run skip what is done.
///
/// Schema (version 1), one row per:
///   devices(id, key UNIQUE, name, profile_json)
///   programs(id, name, source_hash UNIQUE, source)                -- the high-level stencil
///   variants(id, program_id, hash UNIQUE, printed, strategy, parameters_json)
///   configurations(id, variant_id, sizes_json, dims, global_json, local_json, tied,
///                  UNIQUE(variant_id, sizes_json, global_json, local_json, tied))
///   features(configuration_id, profile, json, PRIMARY KEY(configuration_id, profile))
///   measurements(id, configuration_id, device_id, status, median_ms, min_ms, max_ms, q1_ms, q3_ms,
///                repetitions, compile_ms, message, timestamp)
///   plans(id, program_id, sizes_json, profile, selection, UNIQUE(...))   -- added within version 1
///   plan_configurations(plan_id, position, configuration_id, variant_index)
///   tuned_winners(key PRIMARY KEY, program_identity, program_name, sizes_json, device_key,
///                 liftx_version, lowered, launch_json, variant, median_ms, timed_on, model,
///                 configuration_id, timestamp)                    -- added within version 1
/// A plan is the list of configurations one collection target measures (a program at one size
/// set, the features' profile, "all" or a fixed-seed sample): stored once complete, so a resumed or
/// repeated collection need not enumerate the variant space again.
#include "runtime/device.hpp"
#include "runtime/status.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace liftx::perfdb {

struct Measurement {
  runtime::Status status = runtime::Status::ok;
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double q1_ms = 0;
  double q3_ms = 0;
  int repetitions = 0;
  double compile_ms = 0; ///< build time of the kernel (0 when it came from the build cache)
  std::string message;   ///< why it failed, if it did
  /// Each timed run in launch order (the T4 export's runtimes); empty when not kept (databases
  /// written before liftx kept them, and stored measurements read back for reuse).
  std::vector<double> samples_ms;
  /// Bytes the run moved (exec::RunReport::bytes_moved), passed from a worker to the report's
  /// bandwidth; not stored in the database (0 when read back).
  double bytes_moved = 0;
};

/// The current UTC time as ISO 8601 ("2026-11-25T03:09:17Z"), as every timestamp liftx writes.
std::string utc_timestamp();
/// Kernel Tuner's T4 "invalidity" of a run with this status ("correct", "compile", "runtime",
/// "timeout" or "correctness").
std::string t4_invalidity(runtime::Status status);

/// The winner liftx::tune() stored for a program at some sizes on a device: the lowered program
/// as a .lift module, so a later run rebuilds it without the variant space.
struct TunedWinner {
  std::string key; ///< hash of program identity, sizes, device and liftx version
  std::string program_identity;
  std::string program_name;
  nlohmann::json sizes;
  std::string device_key;
  std::string liftx_version;
  std::string lowered;
  nlohmann::json launch;
  std::string variant; ///< for people: "window tile_x=4 ... | global ... local ..."
  double median_ms = 0;
  std::string timed_on; ///< "application inputs" or "random inputs"
  std::string model;
  int64_t configuration_id = 0;
};

/// One configuration of a collection plan, in the order it was enumerated.
struct PlannedConfiguration {
  int64_t configuration_id = 0;
  int64_t variant_index = 0; ///< the variant's position in the space's stream
  std::string strategy;
  std::string printed;   ///< the variant's .lift text
  nlohmann::json launch; ///< {"dims":2,"global":[..],"local":[..],"tied":true}
};

/// One configuration of a variant with its features and (for training) its measurement.
struct Row {
  int64_t configuration_id = 0;
  std::string program; ///< the program's name (benchmark), e.g. "jacobi2d5pt"
  std::string sizes;   ///< the sizes as JSON, e.g. {"M":1024,"N":1024}
  std::string strategy;
  std::string printed;       ///< the variant's .lift text
  nlohmann::json parameters; ///< the variant's tuning parameters, e.g. {"tile_x":16}
  nlohmann::json launch;     ///< {"dims":2,"global":[..],"local":[..],"tied":true}
  nlohmann::json features;   ///< column name -> value (features::columns())
  std::optional<Measurement> measurement;
};

class PerfDb {
public:
  /// $LIFTX_DB, else $XDG_DATA_HOME/liftx/perf.db, else ~/.local/share/liftx/perf.db.
  static std::filesystem::path default_path();
  /// read_write opens or creates the database (creating parent folders and any table a newer
  /// liftx added), after checking the file (`PRAGMA quick_check`) so that a corrupted database
  /// is refused before anything is written into it; read_only opens an existing file without
  /// changing a byte of it (no journal mode switch, no new tables), for commands that only read.
  /// UserError if it cannot, if the file is corrupted, or if it is not a liftx database of a
  /// known schema version (an empty file is one only for read_write, which creates the schema).
  /// A write that finds the file locked by another process waits for it (kBusyTimeout), then
  /// fails with a UserError naming the file.
  enum class Access { read_write, read_only };
  explicit PerfDb(const std::filesystem::path& path, Access access = Access::read_write);
  ~PerfDb();
  PerfDb(const PerfDb&) = delete;
  PerfDb& operator=(const PerfDb&) = delete;

  const std::filesystem::path& path() const;

  int64_t device(const target::DeviceProfile& profile);
  /// The profile stored for the device with key `device_key` (as detected when it measured);
  /// nullopt when the database has no such device.
  std::optional<target::DeviceProfile> device_profile(const std::string& device_key) const;
  int64_t program(const std::string& name, const std::string& source);
  int64_t variant(int64_t program_id, const std::string& printed, const std::string& strategy,
                  const nlohmann::json& parameters);
  int64_t configuration(int64_t variant_id, const nlohmann::json& sizes,
                        const nlohmann::json& launch);
  void put_features(int64_t configuration_id, const std::string& profile,
                    const nlohmann::json& features);
  /// Whether any configuration has features stored for `profile`.
  bool has_features(const std::string& profile) const;
  /// Every configuration with features stored for `profile`, measured or not (Row::measurement
  /// is left empty).
  std::vector<Row> feature_rows(const std::string& profile) const;
  /// put_features for many configurations in one transaction (all or none are written); those
  /// in `removed` lose their features of `profile` (training and ranking then skip them).
  void replace_features(const std::string& profile,
                        const std::vector<std::pair<int64_t, nlohmann::json>>& features,
                        const std::vector<int64_t>& removed = {});
  void put_measurement(int64_t configuration_id, int64_t device_id, const Measurement& m);
  bool has_measurement(int64_t configuration_id, int64_t device_id) const;
  /// The latest measurement of the configuration on the device, or nullopt (UserError for a
  /// status this liftx does not know, as every reader of the file).
  std::optional<Measurement> latest_measurement(int64_t configuration_id, int64_t device_id) const;

  /// The stored plan of a collection target, or nullopt if none was completed. `selection` names
  /// how the variants were chosen, e.g. "all" or "sample 1000 seed 1".
  std::optional<std::vector<PlannedConfiguration>> plan(int64_t program_id,
                                                        const nlohmann::json& sizes,
                                                        const std::string& profile,
                                                        const std::string& selection) const;
  /// Stores a complete plan (configurations with their variant indices, in order) in one
  /// transaction; replaces an earlier plan of the same key.
  void put_plan(int64_t program_id, const nlohmann::json& sizes, const std::string& profile,
                const std::string& selection,
                const std::vector<std::pair<int64_t, int64_t>>& configurations_and_indices);

  /// The stored winner of `key`, or nullopt (also when its launch is unreadable: tune again).
  std::optional<TunedWinner> winner(const std::string& key) const;
  /// Stores (or replaces) a winner, stamped with the current time.
  void put_winner(const TunedWinner& winner);

  /// Every configuration measured on the device with key `device_key` (latest measurement each),
  /// with the features computed for `profile`; rows without features are skipped.
  std::vector<Row> rows(const std::string& device_key, const std::string& profile) const;
  /// Device keys present, for messages ("no data for device X; the database has ...").
  std::vector<std::string> device_keys() const;
  /// Every stored high-level program as (name, source), in the order they were stored; several
  /// sources may share a name (the layouts of one stencil).
  std::vector<std::pair<std::string, std::string>> program_sources() const;

  /// One row per measurement: program, sizes, strategy, launch, status, times, features. Only
  /// measurements after `after_measurement_id` (0: all), e.g. those of one collection. Returns the
  /// rows written.
  int64_t export_csv(std::ostream& out, const std::string& device_key,
                     int64_t after_measurement_id = 0) const;
  /// The same measurements as JSON objects (program, sizes, strategy, parameters, the flat
  /// configuration of the T4 export, status, times, message).
  nlohmann::json measurements_json(const std::string& device_key,
                                   int64_t after_measurement_id = 0) const;
  /// The id of the newest measurement (0 in an empty database).
  int64_t last_measurement_id() const;
  /// The T4 results format (Kernel Tuner / KTT): {"schema_version": "1.0.0", "results": [...]}
  /// with each result's configuration, times and status.
  void export_t4(std::ostream& out, const std::string& device_key) const;

  /// How long a write waits for another process's write transaction before giving up.
  static constexpr int kBusyTimeoutMs = 60000;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace liftx::perfdb
