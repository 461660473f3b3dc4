#include "model/evaluation_run.hpp"

#include "model/evaluation_report.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace liftx::model {

namespace {

bool asks_for_protocol(const EvaluationRequest& r) {
  return !r.protocol.empty() || r.nested || !r.test_db.empty() || !r.add_db.empty();
}

/// `file`'s model judged on `data`; a judging error names the file (and the hint, if any).
JudgedModel judge_model_file(const std::string& file, const Dataset& data, int random_orders,
                             const std::string& stale_features_hint) {
  JudgedModel judged{file, Model::load(file), {}, {}};
  try {
    judged.groups = judge_all(judged.model, data, random_orders);
  } catch (const UserError& e) {
    if (stale_features_hint.empty())
      throw UserError(fmt::format("{}: {}", file, e.message()));
    throw UserError(fmt::format("{}: {} ({})", file, e.message(), stale_features_hint));
  }
  judged.kinds = summarize_by_kind(judged.groups, data);
  return judged;
}

} // namespace

EvaluationMode choose_evaluation(const EvaluationRequest& request) {
  if (!request.models.empty()) {
    LIFTX_USER_CHECK(!asks_for_protocol(request),
                     "--model judges trained models; it does not go with --protocol, --nested, "
                     "--test-db or --add-db");
    return EvaluationMode::judge_models;
  }
  LIFTX_USER_CHECK(request.baseline.empty(), "--baseline goes with --model (the candidate)");
  return asks_for_protocol(request) ? EvaluationMode::protocol
                                    : EvaluationMode::leave_one_benchmark_out;
}

Judgement judge_models(const EvaluationRequest& request, const Dataset& data,
                       const std::string& stale_features_hint,
                       const std::function<void(const JudgedModel&)>& judged) {
  std::vector<std::string> files = request.models;
  if (!request.baseline.empty())
    files.push_back(request.baseline);
  Judgement judgement;
  for (const std::string& file : files) {
    judgement.models.push_back(
        judge_model_file(file, data, request.random_orders, stale_features_hint));
    if (judged)
      judged(judgement.models.back());
  }
  if (!request.baseline.empty())
    judgement.refusals = ship_refusals(judgement.models.front().kinds,
                                       judgement.models.back().kinds, request.ship_rule);
  return judgement;
}

std::string protocol_of(const EvaluationRequest& request) {
  return request.protocol.empty() ? "program" : request.protocol;
}

void check_protocol_request(const EvaluationRequest& request) {
  const std::string protocol = protocol_of(request);
  LIFTX_USER_CHECK(protocol != "transfer" || !request.test_db.empty(),
                   "--protocol transfer needs --test-db (the database of the test device)");
  // In the other protocols a held-out stencil's rows of the added device would stay in training.
  LIFTX_USER_CHECK(request.add_db.empty() || !request.test_db.empty(),
                   "--add-db goes with --protocol transfer and --test-db");
  LIFTX_USER_CHECK(request.test_db.empty() || protocol == "transfer" || request.protocol.empty(),
                   "--test-db goes with --protocol transfer, not {}", protocol);
}

void refuse_test_inputs_in_training(const std::vector<std::string>& added_device_keys,
                                    const Dataset& train, const Dataset& test,
                                    const std::string& test_device_key) {
  if (std::find(added_device_keys.begin(), added_device_keys.end(), test_device_key) ==
      added_device_keys.end())
    return;
  std::set<std::pair<std::string, std::string>> test_inputs;
  for (const Sample& s : test.samples)
    test_inputs.emplace(s.program, s.input);
  const std::string tag = "@" + test_device_key;
  for (const Sample& s : train.samples) {
    const bool test_device = s.program.size() > tag.size() && s.program.ends_with(tag);
    const std::string stencil(stencil_of(s.program));
    LIFTX_USER_CHECK(!test_device || !test_inputs.contains({stencil, s.input}),
                     "--add-db: the training data holds the test device's measurements of {} at "
                     "{}, an input of the test data",
                     stencil, short_input(s.input));
  }
}

ProtocolRun run_protocol(const EvaluationRequest& request, const Dataset& train,
                         const std::string& train_device_key, const Dataset* test,
                         const std::string& test_device_key, const ProtocolOptions& options) {
  LIFTX_USER_CHECK(!options.candidates.empty(), "no candidate setting for --kinds {}",
                   request.kinds);
  ProtocolRun run;
  run.candidates = options.candidates.size();
  if (run.candidates == 1)
    run.setting = options.candidates[0].name;
  const std::string protocol = protocol_of(request);
  if (test) {
    run.described = fmt::format("train on device {}, test on device {} ({} samples)",
                                train_device_key, test_device_key, test->samples.size());
    run.result = evaluate_transfer(train, *test, options);
  } else if (protocol == "program") {
    run.described = request.hold_out.empty()
                        ? "leave one program out"
                        : "leave out each program named " + request.hold_out + "*";
    run.result = evaluate_folds(train, leave_one_program_out(train, request.hold_out), options);
  } else if (protocol == "size") {
    run.described = "train without the largest input size, test on it";
    run.result = evaluate_folds(train, leave_largest_size_out(train), options);
  } else {
    throw UserError(fmt::format(
        "unknown protocol '{}' (known: program, size, transfer with --test-db)", protocol));
  }
  sort_groups(run.result.evaluation.groups);
  run.kinds = summarize_by_kind(run.result.evaluation.groups, test ? *test : train);
  return run;
}

} // namespace liftx::model
