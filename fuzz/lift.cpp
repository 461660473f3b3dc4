// Fuzz target: the .lift parser and type checker (what `liftx check` runs).
//
// Asserts: a module either parses and type-checks or is rejected with a UserError; every
// definition's type prints; the module printed back (`liftx check --print`) parses again to
// alpha-equal programs and the same user functions, and printing that is a fixed point.
#include "fuzz/fuzz_common.hpp"
#include "ir/parse/parser.hpp"

#include <string>

using namespace liftx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ir::Module module;
  if (!fuzz::expect_user_errors([&] { module = parse::parse_module(fuzz::as_text(data, size)); }))
    return 0;
  for (const ir::Program& p : module.programs) {
    std::string types;
    for (const ir::Expr& param : p.params)
      types += param.type().to_string();
    types += p.result_type().to_string();
  }
  const std::string printed = ir::print(module);
  ir::Module reparsed;
  try {
    reparsed = parse::parse_module(printed, "<printed>");
  } catch (const UserError& e) {
    fuzz::fail("the printed module does not parse back", std::string(e.what()) + "\n" + printed);
  } catch (const NotImplemented& e) {
    fuzz::fail("the printed module does not parse back", std::string(e.what()) + "\n" + printed);
  }
  if (reparsed.programs.size() != module.programs.size() ||
      reparsed.userfuns.size() != module.userfuns.size())
    fuzz::fail("the printed module has other definitions", printed);
  for (size_t i = 0; i < module.programs.size(); ++i)
    if (reparsed.programs[i].name != module.programs[i].name ||
        !ir::alpha_equal(reparsed.programs[i], module.programs[i]))
      fuzz::fail("a printed program parses back to another program", printed);
  for (size_t i = 0; i < module.userfuns.size(); ++i)
    if (!ir::same_userfun(*reparsed.userfuns[i], *module.userfuns[i]))
      fuzz::fail("a printed user function parses back to another", printed);
  if (ir::print(reparsed) != printed)
    fuzz::fail("printing is not a fixed point", printed);
  return 0;
}
