#include "ir/interp/interp.hpp"

#include "ir/interp/evaluator.hpp"
#include "ir/interp/value.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <thread>
#include <tuple>

namespace liftx::interp {

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t k = 0; k < names.size(); ++k)
    out += (k ? ", " : "") + names[k];
  return out;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t k = 0; k < shape.size(); ++k)
    out += (k ? ", " : "") + std::to_string(shape[k]);
  return out + "]";
}

/// "(M=48, N=64)" for the size variables of t, or "" when it has none.
std::string bindings_text(const ir::Type& t, const Sizes& sizes) {
  std::vector<std::string> parts;
  for (const arith::Expr& v : ir::size_vars(t)) {
    const std::string& name = v.node().name;
    auto it = sizes.find(name);
    parts.push_back(it == sizes.end() ? name + "=?" : fmt::format("{}={}", name, it->second));
  }
  return parts.empty() ? "" : " (" + join_names(parts) + ")";
}

/// The divisor of the first exact division (a negative power or a fractional constant) in e.
std::optional<arith::Expr> exact_divisor(const arith::Expr& e) {
  const arith::Node& n = e.node();
  if (n.kind == arith::Kind::Pow && n.exponent < 0)
    return arith::pow(n.operands[0], -n.exponent);
  if (n.kind == arith::Kind::Cst && n.value.den != 1)
    return arith::cst(n.value.den);
  for (const arith::Expr& op : n.operands)
    if (auto d = exact_divisor(op))
      return d;
  return std::nullopt;
}

int64_t evaluate_length(const arith::Expr& length, const ir::Type& t, const Sizes& sizes) {
  int64_t value = 0;
  try {
    value = arith::evaluate(length, sizes);
  } catch (const UserError& error) {
    // Name the division that is not exact, when that is the cause.
    if (auto divisor = exact_divisor(length)) {
      try {
        const int64_t den = arith::evaluate(*divisor, sizes);
        const int64_t num = arith::evaluate(length * *divisor, sizes);
        LIFTX_USER_CHECK(!(den != 0 && num % den != 0),
                         "length {} of type {}: {} is not a multiple of {}{}", length.to_string(),
                         t.to_string(), num, den, bindings_text(t, sizes));
      } catch (const UserError& inner) {
        if (inner.message().rfind("length ", 0) == 0)
          throw;
      }
    }
    throw UserError(fmt::format("length {} of type {}: {}", length.to_string(), t.to_string(),
                                error.message()));
  }
  LIFTX_USER_CHECK(value >= 0, "length {} of type {} is negative ({}){}", length.to_string(),
                   t.to_string(), value, bindings_text(t, sizes));
  return value;
}

/// The scalar kind of a HostArray holding values of type t, and the tuple width (0: no tuple).
std::pair<ir::ScalarKind, int> host_layout(const ir::Type& t) {
  const ir::Type base = ir::array_base(t);
  if (const auto* s = base.as<ir::ScalarType>())
    return {s->kind, 0};
  const auto* tuple = base.as<ir::TupleType>();
  LIFTX_INTERNAL_CHECK(tuple, "unknown base type {}", base.to_string());
  std::optional<ir::ScalarKind> kind;
  for (const ir::Type& c : tuple->elements) {
    const auto* s = c.as<ir::ScalarType>();
    if (!s || (kind && *kind != s->kind))
      throw NotImplemented(fmt::format(
          "host arrays of {}: tuple components must be scalars of one kind", t.to_string()));
    kind = s->kind;
  }
  return {*kind, static_cast<int>(tuple->elements.size())};
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t p = 1;
  for (int64_t n : shape) {
    LIFTX_USER_CHECK(n == 0 || p <= std::numeric_limits<int64_t>::max() / n,
                     "array of shape {} is too large", shape_text(shape));
    p *= n;
  }
  return p;
}

Value to_value(const HostArray& a, const ir::Type& t) {
  const auto [kind, tuple_width] = host_layout(t);
  const int levels = ir::array_rank(t);
  if (levels == 0) {
    if (tuple_width == 0)
      return make_scalar(kind, a.data[0]);
    Tuple tuple;
    for (int c = 0; c < tuple_width; ++c)
      tuple.items.emplace_back(make_scalar(kind, a.data[static_cast<size_t>(c)]));
    return tuple;
  }
  if (levels > kMaxNodeRank)
    throw NotImplemented(fmt::format("inputs of more than {} dimensions", kMaxNodeRank));
  std::vector<int64_t> shape(a.shape.begin(), a.shape.begin() + levels);
  if (product(shape) == 0) {
    // Storage needs no data; an empty array has no leaves to read.
    return make_array(
        make_node<ScalarStorage>(kind, std::move(shape), std::vector<double>{}, tuple_width));
  }
  return make_array(make_node<ScalarStorage>(kind, std::move(shape), a.data, tuple_width));
}

void append_leaves(const Value& v, ir::ScalarKind kind, std::vector<double>& out) {
  if (v.is_scalar()) {
    LIFTX_INTERNAL_CHECK(ir::kind_of(v.scalar()) == kind, "result scalar of kind {}, expected {}",
                         ir::scalar_name(ir::kind_of(v.scalar())), ir::scalar_name(kind));
    out.push_back(ir::to_double(v.scalar()));
  } else if (v.is_tuple()) {
    for (const Value& item : v.tuple().items)
      append_leaves(item, kind, out);
  } else {
    const ArrayRef& a = v.array();
    const auto* storage = dynamic_cast<const ScalarStorage*>(a.node.get());
    if (storage && a.prefix_length == 0 && storage->kind == kind) {
      out.insert(out.end(), storage->data.begin(), storage->data.end());
      return;
    }
    const int64_t n = length(a);
    for (int64_t i = 0; i < n; ++i)
      append_leaves(element(a, i), kind, out);
  }
}

HostArray to_host(const Value& v, const ir::Type& t, const Sizes& sizes) {
  HostArray out;
  int tuple_width = 0;
  std::tie(out.kind, tuple_width) = host_layout(t);
  out.shape = concrete_shape(t, sizes);
  // The value's own lengths must agree with its type: a mismatch is an interpreter bug.
  Value probe = v;
  for (size_t level = 0; probe.is_array(); ++level) {
    const int64_t n = length(probe.array());
    LIFTX_INTERNAL_CHECK(level < out.shape.size() && out.shape[level] == n,
                         "result of type {} has length {} at level {}", t.to_string(), n, level);
    if (n == 0)
      break;
    probe = element(probe.array(), 0);
  }
  out.data.reserve(static_cast<size_t>(out.size()));
  append_leaves(v, out.kind, out.data);
  LIFTX_INTERNAL_CHECK(static_cast<int64_t>(out.data.size()) == out.size(),
                       "result has {} values for shape {}", out.data.size(), shape_text(out.shape));
  return out;
}

} // namespace

int64_t HostArray::size() const {
  uint64_t p = 1; // unsigned: a nonsensical shape must not be undefined behaviour
  for (int64_t n : shape)
    p *= static_cast<uint64_t>(n);
  return static_cast<int64_t>(p);
}

void check_sizes(const ir::Program& p, const Sizes& sizes) {
  std::vector<std::string> names;
  for (const arith::Expr& v : p.size_vars())
    names.push_back(v.node().name);
  const std::string has =
      names.empty() ? "the program has no sizes" : "the program has sizes " + join_names(names);
  std::vector<std::string> missing;
  for (const std::string& name : names)
    if (!sizes.contains(name))
      missing.push_back(name);
  LIFTX_USER_CHECK(missing.empty(), "missing size{} {} ({})", missing.size() > 1 ? "s" : "",
                   join_names(missing), has);
  std::vector<std::string> extra;
  for (const auto& [name, value] : sizes)
    if (std::find(names.begin(), names.end(), name) == names.end())
      extra.push_back(name);
  LIFTX_USER_CHECK(extra.empty(), "unknown size{} {} ({})", extra.size() > 1 ? "s" : "",
                   join_names(extra), has);
  for (const auto& [name, value] : sizes)
    LIFTX_USER_CHECK(value >= 1, "size {} must be at least 1, got {}", name, value);
}

std::vector<int64_t> concrete_shape(const ir::Type& t, const Sizes& sizes) {
  std::vector<int64_t> shape;
  for (const arith::Expr& length : ir::array_shape(t))
    shape.push_back(evaluate_length(length, t, sizes));
  if (const auto* tuple = ir::array_base(t).as<ir::TupleType>())
    shape.push_back(static_cast<int64_t>(tuple->elements.size()));
  product(shape); // rejects shapes whose element count overflows
  return shape;
}

HostArray random_input(const ir::Type& t, const Sizes& sizes, std::mt19937_64& rng) {
  HostArray out;
  out.kind = host_layout(t).first;
  out.shape = concrete_shape(t, sizes);
  const int64_t n = out.size();
  out.data.reserve(static_cast<size_t>(n));
  // Integer draws scaled by powers of two: exact in the kind and independent of the library's
  // distribution algorithms.
  for (int64_t k = 0; k < n; ++k) {
    switch (out.kind) {
    case ir::ScalarKind::Float: {
      int64_t m = 0;
      while (m == 0)
        m = static_cast<int64_t>(rng() >> 39) - (int64_t{1} << 24); // [-2^24, 2^24)
      out.data.push_back(std::ldexp(static_cast<double>(m), -24));
      break;
    }
    case ir::ScalarKind::Double: {
      int64_t m = 0;
      while (m == 0)
        m = static_cast<int64_t>(rng() >> 10) - (int64_t{1} << 53); // [-2^53, 2^53)
      out.data.push_back(std::ldexp(static_cast<double>(m), -53));
      break;
    }
    case ir::ScalarKind::Int:
      out.data.push_back(static_cast<double>(static_cast<int64_t>(rng() % 201) - 100));
      break;
    case ir::ScalarKind::Bool:
      out.data.push_back(static_cast<double>(rng() >> 63));
      break;
    }
  }
  return out;
}

HostArray read_input(const std::string& path, const ir::Type& t, const Sizes& sizes) {
  return read_input(path, t, sizes, {});
}

HostArray read_input(const std::string& path, const ir::Type& t, const Sizes& sizes,
                     std::string_view param_name) {
  HostArray out;
  out.kind = host_layout(t).first;
  out.shape = concrete_shape(t, sizes);
  const std::string what = param_name.empty()
                               ? fmt::format("type {}", t.to_string())
                               : fmt::format("parameter {}: {}", param_name, t.to_string());
  std::error_code ec;
  LIFTX_USER_CHECK(!std::filesystem::is_directory(path, ec), "cannot read {}: it is a directory",
                   path);
  std::ifstream in(path, std::ios::binary);
  LIFTX_USER_CHECK(in, "cannot read {}: {}", path, std::strerror(errno));
  // Read at most one float more than the shape needs: a larger file (or /dev/zero) is refused
  // without reading it all.
  const size_t expected = static_cast<size_t>(out.size()) * sizeof(float);
  std::vector<char> bytes(expected + sizeof(float));
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  LIFTX_USER_CHECK(!in.bad(), "cannot read {}: read error", path);
  bytes.resize(static_cast<size_t>(in.gcount()));
  LIFTX_USER_CHECK(bytes.size() <= expected, "{} has more than the {} floats {} needs{}", path,
                   out.size(), what, bindings_text(t, sizes));
  LIFTX_USER_CHECK(bytes.size() % sizeof(float) == 0,
                   "{} has {} bytes, not a whole number of float32 values ({} needs {} floats{})",
                   path, bytes.size(), what, out.size(), bindings_text(t, sizes));
  const int64_t count = static_cast<int64_t>(bytes.size() / sizeof(float));
  LIFTX_USER_CHECK(count == out.size(), "{} has {} floats, {} needs {}{}", path, count, what,
                   out.size(), bindings_text(t, sizes));
  out.data.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    float f;
    std::memcpy(&f, bytes.data() + k * static_cast<int64_t>(sizeof(float)), sizeof(float));
    out.data.push_back(ir::to_double(make_scalar(out.kind, f)));
  }
  return out;
}

void write_output(const std::string& path, const HostArray& a) {
  std::vector<float> values(a.data.begin(), a.data.end());
  write_output_file(
      path,
      std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)),
      {}, "the output");
}

std::vector<std::string> component_paths(const std::string& path, size_t components) {
  if (components <= 1)
    return {path};
  const std::filesystem::path p(path);
  std::vector<std::string> paths;
  for (size_t k = 0; k < components; ++k) {
    std::filesystem::path named = p;
    named.replace_filename(fmt::format("{}.{}{}", p.stem().string(), k, p.extension().string()));
    paths.push_back(named.string());
  }
  return paths;
}

size_t result_components(const ir::Type& t) {
  return static_cast<size_t>(std::max(1, host_layout(t).second));
}

std::vector<std::string> write_result(const std::string& path, const HostArray& a,
                                      const ir::Type& t) {
  const size_t components = result_components(t);
  std::vector<std::string> paths = component_paths(path, components);
  if (components == 1) {
    write_output(path, a);
    return paths;
  }
  for (size_t k = 0; k < components; ++k) {
    HostArray part;
    part.kind = a.kind;
    part.shape.assign(a.shape.begin(), a.shape.end() - 1);
    for (size_t i = k; i < a.data.size(); i += components)
      part.data.push_back(a.data[i]);
    write_output(paths[k], part);
  }
  return paths;
}

int default_threads() {
  if (const char* text = std::getenv("LIFTX_THREADS"); text && *text) {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    LIFTX_USER_CHECK(errno == 0 && *end == '\0' && value >= 1 && value <= 4096,
                     "LIFTX_THREADS={}: expected a thread count between 1 and 4096", text);
    return static_cast<int>(value);
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

HostArray evaluate(const ir::Program& p, std::span<const HostArray> inputs, const Sizes& sizes) {
  return evaluate(p, inputs, sizes, EvalOptions{});
}

HostArray evaluate(const ir::Program& p, std::span<const HostArray> inputs, const Sizes& sizes,
                   const EvalOptions& options) {
  LIFTX_USER_CHECK(options.threads >= 0, "thread count {} is negative", options.threads);
  const int threads = options.threads == 0 ? default_threads() : options.threads;
  check_sizes(p, sizes);
  check_host_memory(p, sizes); // every caller, before the intermediates are allocated
  LIFTX_USER_CHECK(inputs.size() == p.params.size(), "program {} takes {} input{}, got {}", p.name,
                   p.params.size(), p.params.size() == 1 ? "" : "s", inputs.size());
  Evaluator evaluator(sizes, threads);
  evaluator.prepare(p.body);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const ir::Expr& param = p.params[k];
    const HostArray& input = inputs[k];
    const auto [kind, tuple_width] = host_layout(param.type());
    const std::vector<int64_t> shape = concrete_shape(param.type(), sizes);
    const std::string name = param.as<ir::Param>() ? param.as<ir::Param>()->name : "?";
    LIFTX_USER_CHECK(input.shape == shape, "input {} has shape {}, parameter {}: {} needs {}{}",
                     k + 1, shape_text(input.shape), name, param.type().to_string(),
                     shape_text(shape), bindings_text(param.type(), sizes));
    LIFTX_USER_CHECK(input.kind == kind, "input {} holds {} values, parameter {}: {} needs {}",
                     k + 1, ir::scalar_name(input.kind), name, param.type().to_string(),
                     ir::scalar_name(kind));
    LIFTX_USER_CHECK(static_cast<int64_t>(input.data.size()) == input.size(),
                     "input {} has {} values for shape {}", k + 1, input.data.size(),
                     shape_text(input.shape));
    evaluator.bind(param, to_value(input, param.type()));
  }
  const Value result = evaluator.eval(p.body);
  return to_host(result, p.result_type(), sizes);
}

Summary summarize(const HostArray& a) {
  Summary s{a.shape, 0.0, 0.0, 0.0, 0.0};
  if (a.data.empty())
    return s;
  s.min = a.data[0];
  s.max = a.data[0];
  for (double x : a.data) {
    s.checksum += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean = s.checksum / static_cast<double>(a.data.size());
  return s;
}

} // namespace liftx::interp
