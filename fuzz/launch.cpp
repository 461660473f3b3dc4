// Fuzz target: launch sidecars (`liftx run --launch FILE`; the launches stored in the database
// read back by collect, explore and tune()).
//
// Asserts: any text is read as run options or rejected with a UserError; accepted options have 1
// to 3 global sizes in [1, 2^31] and a local size that is empty or one positive size per global
// one.
#include "fuzz/fuzz_common.hpp"
#include "perfdb/record.hpp"

using namespace liftx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  exec::RunOptions options;
  if (!fuzz::expect_user_errors(
          [&] { options = perfdb::read_launch_sidecar(fuzz::as_text(data, size), "fuzz.json"); }))
    return 0;
  const size_t dims = options.global.size();
  if (dims < 1 || dims > 3)
    fuzz::fail("accepted a launch of 0 or more than 3 dimensions", "");
  for (int64_t g : options.global)
    if (g < 1 || g > (int64_t{1} << 31))
      fuzz::fail("accepted a global size out of range", std::to_string(g));
  if (!options.local.empty() && options.local.size() != dims)
    fuzz::fail("accepted a local size of another dimension", "");
  for (int64_t l : options.local)
    if (l < 1 || l > (int64_t{1} << 31))
      fuzz::fail("accepted a local size out of range", std::to_string(l));
  return 0;
}
