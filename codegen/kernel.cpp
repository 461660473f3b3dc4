// The small helpers kernel.hpp declares next to the Kernel type.
#include "codegen/kernel.hpp"

namespace liftx::codegen {

const char* address_space_name(AddressSpace s) {
  switch (s) {
  case AddressSpace::Global:
    return "global";
  case AddressSpace::Local:
    return "local";
  case AddressSpace::Private:
    return "private";
  }
  return "?";
}

size_t scalar_bytes(ir::ScalarKind k) {
  switch (k) {
  case ir::ScalarKind::Bool:
    return 1;
  case ir::ScalarKind::Int:
    return 4;
  case ir::ScalarKind::Float:
    return 4;
  case ir::ScalarKind::Double:
    return 8;
  }
  return 4;
}

arith::Expr Kernel::local_bytes() const {
  arith::Expr bytes(0);
  for (const KernelArg& a : args)
    if (a.role == KernelArg::Role::Local)
      bytes = bytes + a.elements * static_cast<int64_t>(scalar_bytes(a.kind));
  for (const LocalArray& a : local_arrays)
    bytes = bytes + a.buffer.elements * static_cast<int64_t>(scalar_bytes(a.buffer.kind));
  return bytes;
}

} // namespace liftx::codegen
