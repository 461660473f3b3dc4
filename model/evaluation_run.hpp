#pragma once
/// Which evaluation of cost models to run, and running it, from plain values: what `liftx
/// evaluate` asks for, and what a batch script embedding the library asks for the same way.
/// Three evaluations:
///   - judging trained model files per kind of program, with the ship rule against a baseline
///     (ship_rule.hpp);
///   - leave one benchmark out with one setting (evaluate.hpp; the caller calls evaluate());
///   - the protocols of docs/results.md with the setting chosen inside each training fold
///     (protocol.hpp).
/// model/ reads no database: the caller loads the datasets the request names and passes them in.
/// The user errors name the request's fields by the `liftx evaluate` options that set them.
#include "model/protocol.hpp"
#include "model/ship_rule.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace liftx::model {

struct EvaluationRequest {
  /// Trained model files to judge (no training); the first is the candidate of the ship rule.
  std::vector<std::string> models;
  std::string baseline; ///< the model the first one must be no worse than, per kind
  ShipRule ship_rule;
  /// Empty: leave one benchmark out, unless one of the protocol fields below asks for a protocol
  /// ("program" then). Otherwise program, size or transfer.
  std::string protocol;
  std::string hold_out;            ///< program-name prefix of the held-out programs
  bool nested = false;             ///< choose among candidate settings inside each training fold
  std::string kinds;               ///< for `nested`: comma-separated kinds, as given (for messages)
  std::string test_db;             ///< transfer: the test device's database (read by the caller)
  std::string test_device;         ///< its device key
  std::vector<std::string> add_db; ///< transfer: more training databases (DB or DB@DEVICE_KEY)
  int inner_folds = 4;
  int random_orders = 100;
  double fraction = 0.9; ///< runs to this fraction of each input's best are counted
};

enum class EvaluationMode { judge_models, leave_one_benchmark_out, protocol };

/// The evaluation `request` asks for. UserError for fields that do not go together: protocol
/// fields with model files, a baseline without them.
EvaluationMode choose_evaluation(const EvaluationRequest& request);

// Judging trained models.

/// One model file judged on every input of a dataset.
struct JudgedModel {
  std::string file;
  Model model;
  std::vector<GroupResult> groups; ///< judge_all's, sorted
  std::vector<KindSummary> kinds;  ///< summarize_by_kind of the groups
};

struct Judgement {
  std::vector<JudgedModel> models; ///< the request's models, then its baseline
  /// Why the first model may not replace the baseline (empty when it may); nullopt without one.
  std::optional<std::vector<std::string>> refusals;
};

/// Loads and judges the request's models and its baseline on every input of `data`, telling
/// `judged` about each as soon as it is judged (a report then shows each model before the next
/// one loads). A judging error is re-thrown as a UserError prefixed by the model file, with
/// `stale_features_hint` after it in parentheses when not empty (what to do about features the
/// data lacks). UserError when a file cannot be loaded.
Judgement judge_models(const EvaluationRequest& request, const Dataset& data,
                       const std::string& stale_features_hint,
                       const std::function<void(const JudgedModel&)>& judged);

// The protocols.

/// The protocol the request runs: its `protocol`, "program" when empty.
std::string protocol_of(const EvaluationRequest& request);

/// UserError for protocol fields that do not go together (transfer without a test database,
/// added databases without one, a test database with another protocol). Needs no data.
void check_protocol_request(const EvaluationRequest& request);

/// UserError when the training data holds rows of the test device (their programs carry
/// "@TEST_DEVICE_KEY", see Sample::program) at an input the test data holds: the transfer would
/// then be judged on what it learnt from. Checked only when one of `added_device_keys` (the
/// devices whose rows the added databases gave) is the test device.
void refuse_test_inputs_in_training(const std::vector<std::string>& added_device_keys,
                                    const Dataset& train, const Dataset& test,
                                    const std::string& test_device_key);

/// A protocol run and what its reports name.
struct ProtocolRun {
  std::string described;          ///< what was held out, e.g. "leave one program out"
  size_t candidates = 0;          ///< the candidate settings: 1 means no selection
  std::string setting;            ///< the only candidate's name when there is one
  ProtocolResult result;          ///< its groups sorted (sort_groups)
  std::vector<KindSummary> kinds; ///< per kind of program of the held-out inputs
};

/// Runs the request's protocol with `options` (its candidates set by the caller): on `train`
/// alone, or trained on `train` and tested on `*test` (transfer) when `test` is not null. The
/// device keys name the data in `described`. UserError without a candidate or for an unknown
/// protocol.
ProtocolRun run_protocol(const EvaluationRequest& request, const Dataset& train,
                         const std::string& train_device_key, const Dataset* test,
                         const std::string& test_device_key, const ProtocolOptions& options);

} // namespace liftx::model
