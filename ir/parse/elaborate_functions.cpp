/// The elaborator's function-valued syntax (lambdas, user function names, primitives given their
/// parameters, memory primitives), each built knowing the types of the arguments it receives,
/// and the composite derived forms applied to their data.
#include "ir/parse/elaborate_internal.hpp"

namespace liftx::parse::elaborate_detail {

// ---- functions --------------------------------------------------------------------------------

/// Elaborates function-valued syntax that will be applied to arguments of `types`.
ir::Fun Elaborator::function(const Syntax& s, const std::vector<ir::Type>& types) {
  if (s.kind == Kind::Lambda)
    return lambda(s, types);
  if (s.kind == Kind::Name || s.kind == Kind::Apply) {
    Spine spine = spine_of(s);
    if (spine.head->kind == Kind::Name)
      return named_function(spine, types);
  }
  throw UserError("expected a function here, got a value", s.loc);
}

ir::Fun Elaborator::lambda(const Syntax& s, const std::vector<ir::Type>& types) {
  size_t k = s.params.size();
  std::vector<ir::Type> param_types;
  const auto* tuple = types.size() == 1 ? types[0].as<ir::TupleType>() : nullptr;
  if (types.size() == k) {
    param_types = types;
  } else if (k >= 2 && tuple && tuple->elements.size() == k) {
    param_types = tuple->elements; // one tuple of k components is spread over k parameters
  } else {
    throw UserError(fmt::format("this lambda takes {} but receives {}", plural(k, "parameter"),
                                describe_types(types)),
                    s.loc);
  }
  std::vector<const NameLoc*> names;
  for (const NameLoc& n : s.params)
    names.push_back(&n);
  check_param_names(names);
  std::vector<ir::Expr> params;
  size_t scope_size = scope_.size();
  for (size_t i = 0; i < k; ++i) {
    params.push_back(ir::param(param_types[i], s.params[i].name));
    scope_.emplace_back(s.params[i].name, params.back());
  }
  ir::Expr body = value(*s.operands[0]);
  scope_.erase(scope_.begin() + static_cast<std::ptrdiff_t>(scope_size), scope_.end());
  return located(s.loc, [&] { return ir::lambda(std::move(params), body); });
}

/// A name, possibly applied to the parameters of a primitive (`split(4)`, `reduce(add, 0.0f)`),
/// used as a function.
ir::Fun Elaborator::named_function(const Spine& spine, const std::vector<ir::Type>& types) {
  const std::string& name = spine.head->text;
  if (lookup(name))
    throw UserError(fmt::format("'{}' is a value, not a function", name), spine.loc);
  if (is_userfun_name(name)) {
    if (!spine.args.empty())
      throw UserError(fmt::format("user function '{}' cannot be partially applied; pass it by "
                                  "name or apply it to all its arguments",
                                  name),
                      spine.loc);
    return ir::user_fun(resolve_userfun(name, types, spine.loc));
  }
  const Primitive* p = find_primitive(name);
  if (!p)
    unknown_name(*spine.head);
  size_t n_params = params_given(*p, spine.args.size(), 0);
  if (spine.args.size() != n_params) {
    if (spine.args.size() > n_params && data_count_fits(*p, spine.args.size() - n_params))
      throw UserError(fmt::format("expected a function here, but {} is applied to its data; "
                                  "leave the data argument out",
                                  name),
                      spine.loc);
    arity_error(*p, spine);
  }
  return located(spine.loc, [&]() -> ir::Fun {
    if (!is_composite(*p))
      return primitive(*p, spine.args, types);
    // Eta-expand a composite derived form: x => slide2D(3, 1, x).
    std::vector<ir::Type> param_types = types;
    const auto* tuple = types.size() == 1 ? types[0].as<ir::TupleType>() : nullptr;
    if (p->data == kAtLeastTwo && tuple)
      param_types = tuple->elements;
    std::vector<ir::Expr> params;
    for (const ir::Type& t : param_types)
      params.push_back(ir::param(t, "x"));
    ir::Expr body = composite_value(*p, spine.args, params, spine.loc);
    return ir::lambda(std::move(params), body);
  });
}

/// A vector width argument: a constant.
int Elaborator::vector_width(const Primitive& p, const Syntax& s) {
  std::optional<int64_t> width = size(s).as_constant();
  if (!width)
    throw UserError(fmt::format("{}: the vector width must be a constant (2, 4, 8 or 16)", p.name),
                    s.loc);
  return static_cast<int>(*width);
}
ir::Type Elaborator::component_type(const ir::Type& t) {
  if (const auto* v = t.as<ir::VectorType>())
    return ir::Type::scalar(v->kind);
  return t; // not a vector: vectorize's type check reports it
}

/// The element type `levels` array levels below the single argument type.
ir::Type Elaborator::element_type(const Primitive& p, const std::vector<ir::Type>& types,
                                  int levels) {
  LIFTX_USER_CHECK(types.size() == 1, "{} expects 1 {}, got {}", p.name, p.data_noun,
                   describe_types(types));
  ir::Type t = types[0];
  for (int i = 0; i < levels; ++i) {
    const auto* array = t.as<ir::ArrayType>();
    LIFTX_USER_CHECK(array, "{} expects {}, got {}", p.name,
                     levels == 1   ? "an array"
                     : levels == 2 ? "a 2-dimensional array"
                                   : "a 3-dimensional array",
                     types[0].to_string());
    t = array->element;
  }
  return t;
}

/// A non-composite primitive given its parameter arguments, to be applied to `types`.
ir::Fun Elaborator::primitive(const Primitive& p, std::span<const Syntax* const> args,
                              const std::vector<ir::Type>& types) {
  LIFTX_INTERNAL_CHECK(!is_composite(p), "{} is composite", p.name);
  switch (p.kind) {
  case node_kind<ir::Map>: {
    ir::Fun f = function(*args[0], {element_type(p, types, p.rank)});
    return p.rank == 1 ? ir::map(f) : p.rank == 2 ? ir::map_2d(f) : ir::map_3d(f);
  }
  case node_kind<ir::MapSeq>:
    return ir::map_seq(function(*args[0], {element_type(p, types, 1)}));
  case node_kind<ir::MapGlb>:
    return ir::map_glb(p.dim, function(*args[0], {element_type(p, types, 1)}));
  case node_kind<ir::MapWrg>:
    return ir::map_wrg(p.dim, function(*args[0], {element_type(p, types, 1)}));
  case node_kind<ir::MapLcl>:
    return ir::map_lcl(p.dim, function(*args[0], {element_type(p, types, 1)}));
  case node_kind<ir::Reduce>:
  case node_kind<ir::ReduceSeq>: {
    ir::Expr init = value(*args[1]);
    ir::Fun f = function(*args[0], {init.type(), element_type(p, types, 1)});
    return p.kind == node_kind<ir::Reduce> ? ir::reduce(f, init) : ir::reduce_seq(f, init);
  }
  case node_kind<ir::Iterate>: {
    arith::Expr count = size(*args[0]);
    LIFTX_USER_CHECK(types.size() == 1, "iterate expects 1 argument, got {}",
                     describe_types(types));
    return ir::iterate(count, function(*args[1], types));
  }
  case node_kind<ir::Zip>:
    return ir::zip();
  case node_kind<ir::Tuple>:
    return ir::tuple();
  case node_kind<ir::Split>:
    return ir::split(size(*args[0]));
  case node_kind<ir::Join>:
    return ir::join();
  case node_kind<ir::Slide>: {
    arith::Expr window = size(*args[0]);
    return ir::slide(window, size(*args[1]));
  }
  case node_kind<ir::SlideShifted>: {
    arith::Expr window = size(*args[0]);
    return ir::slide_shifted(window, size(*args[1]));
  }
  case node_kind<ir::JoinShifted>: {
    arith::Expr length = size(*args[0]);
    return ir::join_shifted(length, size(*args[1]));
  }
  case node_kind<ir::Pad>: {
    arith::Expr left = size(*args[0]);
    arith::Expr right = size(*args[1]);
    return ir::pad(left, right, boundary(*args[2]));
  }
  case node_kind<ir::At>:
    return ir::at(size(*args[0]));
  case node_kind<ir::Get>:
    return ir::get(tuple_index(*args[0]));
  case node_kind<ir::Transpose>:
    return ir::transpose();
  case node_kind<ir::Id>:
    return ir::id();
  case node_kind<ir::Generate>: {
    arith::Expr length = size(*args[0]);
    return ir::generate(length, function(*args[1], {ir::Type::int_(), ir::Type::int_()}));
  }
  case node_kind<ir::ToGlobal>:
  case node_kind<ir::ToLocal>:
  case node_kind<ir::ToPrivate>:
    return memory(p, function(*args[0], types));
  case node_kind<ir::ToLocalPadded>:
    return ir::to_local_padded(size(*args[0]), function(*args[1], types));
  case node_kind<ir::AsVector>:
    return ir::as_vector(vector_width(p, *args[0]));
  case node_kind<ir::AsScalar>:
    return ir::as_scalar();
  case node_kind<ir::Vectorize>: {
    int width = vector_width(p, *args[0]);
    // The user function is resolved at the component types of its vector arguments.
    std::vector<ir::Type> components;
    for (const ir::Type& t : types) {
      if (const auto* tuple = t.as<ir::TupleType>()) {
        for (const ir::Type& e : tuple->elements)
          components.push_back(component_type(e));
      } else {
        components.push_back(component_type(t));
      }
    }
    return ir::vectorize(width, function(*args[1], components));
  }
  case node_kind<ir::MapSeqSlide>: {
    arith::Expr window = size(*args[1]);
    arith::Expr step = size(*args[2]);
    ir::Type window_type = ir::Type::array(element_type(p, types, 1), window);
    int unroll = 1;
    if (args.size() == 4) {
      std::optional<int64_t> given = size(*args[3]).as_constant();
      if (!given || *given < 1 || *given > ir::kMaxSlideUnroll)
        throw UserError(
            fmt::format("{}: the unroll must be a constant in 1..{}", p.name, ir::kMaxSlideUnroll),
            args[3]->loc);
      unroll = static_cast<int>(*given);
    }
    return ir::map_seq_slide(function(*args[0], {window_type}), window, step, unroll);
  }
  default:
    LIFTX_UNREACHABLE("the parser does not build {}", p.name);
  }
}

/// A composite derived form applied to its data. Type errors of the composition are reported
/// as the derived form's (`slide2D: map: expected an array, got float`).
ir::Expr Elaborator::composite_value(const Primitive& p, std::span<const Syntax* const> args,
                                     const std::vector<ir::Expr>& data, const SourceLoc& loc) {
  // One pair for every dimension, or one pair each (outermost first); pad's boundary last.
  const bool per_dimension = args.size() == per_dimension_params(p);
  const size_t pairs = p.params.size() >= 2 ? (per_dimension ? size_t(p.rank) : 1) : 0;
  std::vector<ir::DimPair> dims;
  for (size_t k = 0; k < pairs; ++k)
    dims.push_back({size(*args[2 * k]), size(*args[2 * k + 1])});
  while (pairs > 0 && dims.size() < size_t(p.rank))
    dims.push_back(dims.front());
  ir::Boundary b = p.kind == node_kind<ir::Pad> ? boundary(*args[2 * pairs]) : ir::Boundary{};
  try {
    switch (p.kind) {
    case node_kind<ir::Slide>:
      return p.rank == 2 ? ir::slide_2d(dims[0], dims[1], data.at(0), loc)
                         : ir::slide_3d(dims[0], dims[1], dims[2], data.at(0), loc);
    case node_kind<ir::Pad>:
      return p.rank == 2 ? ir::pad_2d(dims[0], dims[1], b, data.at(0), loc)
                         : ir::pad_3d(dims[0], dims[1], dims[2], b, data.at(0), loc);
    case node_kind<ir::Zip>:
      return p.rank == 2 ? ir::zip_2d(data, loc) : ir::zip_3d(data, loc);
    default:
      break;
    }
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", p.name, e.message()), loc);
  }
  LIFTX_UNREACHABLE("{} is not composite", p.name);
}

} // namespace liftx::parse::elaborate_detail
