// Fuzz target: model files (what `liftx rank --model FILE` and `liftx explore` load).
//
// Asserts: text that is not JSON is rejected (Model::load turns that into a UserError); JSON that
// is not a valid model is rejected by Model::from_json with a UserError; a model it accepts
// predicts one number per row of features without crashing, explains a row, gives the same
// predictions when asked only for rows reaching them (predict_reaching), and finds its own
// features among its feature names.
//
// A boosted model's payload (base64 UBJ) is XGBoost's to read, and XGBoost trusts the lengths in
// it: a mutated length makes it allocate up to 2^64 bytes, std::bad_alloc in a normal build (which
// its C API returns as an error) but an abort under AddressSanitizer. So every payload is replaced
// by the seed's (fuzz/corpus/model/boosted.json), and the rest of the file is fuzzed.
#include "model/model.hpp"
#include "fuzz/fuzz_common.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <string>

using namespace liftx;

namespace {

std::string trusted_payload;

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::ifstream in(LIFTX_FUZZ_SOURCE_DIR "/fuzz/corpus/model/boosted.json");
  trusted_payload = nlohmann::json::parse(in).at("boosted").at("model").get<std::string>();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(fuzz::as_text(data, size));
  } catch (const nlohmann::json::exception&) {
    return 0; // Model::load: "FILE: not JSON"
  }
  if (json.is_object() && json.contains("boosted") && json["boosted"].is_object() &&
      json["boosted"].contains("model") && json["boosted"]["model"].is_string())
    json["boosted"]["model"] = trusted_payload;
  model::Model m;
  if (!fuzz::expect_user_errors([&] { m = model::Model::from_json(json, "fuzz-model.json"); }))
    return 0;
  const auto columns = static_cast<Eigen::Index>(m.feature_names().size());
  model::Matrix rows(4, columns);
  rows.row(0).setZero();
  rows.row(1).setOnes();
  rows.row(2).setConstant(-3.5);
  rows.row(3).setLinSpaced(columns, 0.0, 1e6);
  fuzz::expect_user_errors([&] {
    const model::Vector predicted = m.predict(rows);
    if (predicted.size() != rows.rows())
      fuzz::fail("one prediction per row", std::to_string(predicted.size()));
    for (Eigen::Index r = 0; r < rows.rows(); ++r)
      (void)m.explain(rows.row(r), 3);
    // Every row reaches its own prediction: predict_reaching must finish it, bit for bit.
    const std::vector<double> floors(predicted.data(), predicted.data() + predicted.size());
    const model::Vector reaching = m.predict_reaching(rows, floors);
    for (Eigen::Index r = 0; r < rows.rows(); ++r)
      if (std::memcmp(&reaching[r], &predicted[r], sizeof(double)) != 0)
        fuzz::fail("predict_reaching finishes a row at its own prediction",
                   std::to_string(reaching[r]) + " != " + std::to_string(predicted[r]));
  });
  if (m.feature_indices(m.feature_names()).size() != m.feature_names().size())
    fuzz::fail("a model does not find its own features", "");
  return 0;
}
