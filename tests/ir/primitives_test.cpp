// The primitive registry (ir/primitives.hpp) and the folds over node fields (ir/fields.hpp).
#include "helpers.hpp"

#include "ir/fields.hpp"
#include "ir/primitives.hpp"

#include <set>

using namespace liftx;
using namespace liftx::ir;
using namespace liftx::ir::test;

namespace {

/// A node of each entry that is not a derived form.
Fun example(const Primitive& p) {
  Expr i = param(i32(), "i");
  Expr n = param(i32(), "n");
  Expr window = param(arr(f32(), 3), "w");
  switch (p.kind) {
  case node_kind<Map>:
    return map(neg());
  case node_kind<MapSeq>:
    return map_seq(neg());
  case node_kind<MapGlb>:
    return map_glb(p.dim, neg());
  case node_kind<MapWrg>:
    return map_wrg(p.dim, neg());
  case node_kind<MapLcl>:
    return map_lcl(p.dim, neg());
  case node_kind<Reduce>:
    return reduce(add_f(), literal(0.0f));
  case node_kind<ReduceSeq>:
    return reduce_seq(add_f(), literal(0.0f));
  case node_kind<Iterate>:
    return iterate(2, map(neg()));
  case node_kind<Zip>:
    return zip();
  case node_kind<Tuple>:
    return tuple();
  case node_kind<Split>:
    return split(4);
  case node_kind<Join>:
    return join();
  case node_kind<Slide>:
    return slide(3, 1);
  case node_kind<Pad>:
    return pad(1, 2, Boundary{Boundary::Kind::Constant, 0.5f});
  case node_kind<At>:
    return at(1);
  case node_kind<Get>:
    return get(1);
  case node_kind<Transpose>:
    return transpose();
  case node_kind<Id>:
    return id();
  case node_kind<Generate>:
    return generate(4, lambda({i, n}, literal(1.0f)));
  case node_kind<ToGlobal>:
    return to_global(neg());
  case node_kind<ToLocal>:
    return to_local(neg());
  case node_kind<ToLocalPadded>:
    return to_local_padded(1, neg());
  case node_kind<ToPrivate>:
    return to_private(neg());
  case node_kind<AsVector>:
    return as_vector(4);
  case node_kind<AsScalar>:
    return as_scalar();
  case node_kind<Vectorize>:
    return vectorize(4, neg());
  case node_kind<MapSeqSlide>:
    return map_seq_slide(lambda({window}, call(neg(), {window[1]})), 3, 1);
  case node_kind<SlideShifted>:
    return slide_shifted(4, 3);
  case node_kind<JoinShifted>:
    return join_shifted(arith::var("N"), 2);
  default:
    INFO(p.name);
    FAIL("no example of this primitive");
    return id();
  }
}

std::vector<Fun> examples() {
  std::vector<Fun> out;
  for (const Primitive& p : primitives())
    if (!p.derived())
      out.push_back(example(p));
  return out;
}

} // namespace

TEST_CASE("registry: every primitive round-trips name -> entry -> node -> printed name") {
  std::set<std::string_view> names;
  for (const Primitive& p : primitives()) {
    INFO(p.name);
    CHECK(names.insert(p.name).second);
    CHECK(find_primitive(p.name) == &p);
    if (p.derived()) {
      // map2D names the node it nests, and the entry without the suffix builds that node.
      CHECK((p.rank == 2 || p.rank == 3));
      std::string suffix = std::to_string(p.rank) + "D";
      REQUIRE(p.name.ends_with(suffix));
      const Primitive* base = find_primitive(p.name.substr(0, p.name.size() - suffix.size()));
      REQUIRE(base != nullptr);
      CHECK(base->kind == p.kind);
      CHECK(base->params == p.params);
      continue;
    }
    CHECK(p.rank == 1);
    Fun f = example(p);
    CHECK(f.data().node.index() == p.kind);
    CHECK(primitive_of(f) == &p);
    CHECK(fun_name(f) == p.name);
    std::string printed = print(f);
    if (p.params.empty())
      CHECK(printed == p.name);
    else
      CHECK(printed.starts_with(std::string(p.name) + "("));
  }
  CHECK(find_primitive("mapGlb") == nullptr);
  CHECK(find_primitive("neg") == nullptr);
  CHECK(primitive_of(neg()) == nullptr);
  Expr x = param(f32(), "x");
  CHECK(primitive_of(lambda({x}, x)) == nullptr);
}

TEST_CASE("registry: levels and dimensions of the maps") {
  struct Family {
    ParallelLevel level;
    const char* name;
  };
  for (Family family :
       {Family{ParallelLevel::Global, "mapGlb"}, Family{ParallelLevel::Workgroup, "mapWrg"},
        Family{ParallelLevel::Local, "mapLcl"}}) {
    CHECK(map_family(family.level) == family.name);
    for (int d = 0; d < 3; ++d) {
      std::string name = family.name + std::to_string(d);
      INFO(name);
      const Primitive* p = find_primitive(name);
      REQUIRE(p != nullptr);
      CHECK(p->level == family.level);
      CHECK(p->dim == d);
      CHECK(p->parallel());
      CHECK(p->pattern == Pattern::Map);
      CHECK(p->computes);
    }
    CHECK(find_primitive(family.name + std::string("3")) == nullptr);
  }
  const Primitive* seq = find_primitive("mapSeq");
  CHECK(seq->level == ParallelLevel::Seq);
  CHECK(seq->dim == 0);
  CHECK_FALSE(seq->parallel());
  const Primitive* plain = find_primitive("map");
  CHECK(plain->level == ParallelLevel::None);
  CHECK_FALSE(plain->computes); // a map of layout functions rearranges only
  CHECK(find_primitive("reduceSeq")->level == ParallelLevel::Seq);
  CHECK(find_primitive("mapSeqSlide")->level == ParallelLevel::Seq);
  CHECK(map_family(ParallelLevel::Seq).empty());
  // Exactly the nine parallel maps run on threads; loops are what rule contexts record.
  std::vector<std::string_view> parallel, loops;
  for (const Primitive& p : primitives()) {
    if (p.parallel())
      parallel.push_back(p.name);
    if (p.loop() && !p.derived())
      loops.push_back(p.name);
  }
  CHECK(parallel.size() == 9);
  CHECK(loops == std::vector<std::string_view>{"map", "mapSeq", "mapGlb0", "mapGlb1", "mapGlb2",
                                               "mapWrg0", "mapWrg1", "mapWrg2", "mapLcl0",
                                               "mapLcl1", "mapLcl2", "reduce", "reduceSeq",
                                               "iterate", "mapSeqSlide"});
  CHECK(find_primitive("slide")->size_params() == 2);
  CHECK(find_primitive("pad")->size_params() == 2);
  CHECK(find_primitive("zip")->data == kAtLeastTwo);
}

TEST_CASE("fields: hashing and equality see every field") {
  for (const Fun& f : examples()) {
    INFO(print(f));
    // Rebuilt from fresh children: equal, same hash, a different node.
    Fun copy = map_children(
        f, [](const Fun& g) { return make(g.data().node); }, [](const Expr& e) { return e; });
    CHECK(alpha_equal(copy, f));
    CHECK(copy.hash() == f.hash());
  }
  // A parameter or dimension that differs makes nodes differ.
  std::pair<Fun, Fun> different[] = {
      {split(4), split(8)},
      {map_glb(0, neg()), map_glb(1, neg())},
      {map_glb(0, neg()), map_wrg(0, neg())},
      {pad(1, 1, Boundary{}), pad(1, 1, Boundary{Boundary::Kind::Wrap})},
      {pad(1, 1, Boundary{}), pad(1, 2, Boundary{})},
      {map_seq_slide(neg(), 3, 1), map_seq_slide(neg(), 3, 2)},
      {map_seq_slide(neg(), 3, 1), map_seq_slide(neg(), 3, 1, 3)},
      {reduce(add_f(), literal(0.0f)), reduce(add_f(), literal(1.0f))},
      {get(0), get(1)},
      {as_vector(4), as_vector(8)},
      {to_local_padded(1, neg()), to_local_padded(2, neg())},
      {to_local(neg()), to_local_padded(1, neg())},
      {slide(4, 3), slide_shifted(4, 3)},
      {slide_shifted(4, 3), slide_shifted(4, 2)},
      {join_shifted(arith::var("N"), 2), join_shifted(arith::var("N"), 1)},
      {join_shifted(arith::var("N"), 2), join_shifted(arith::var("M"), 2)},
  };
  CHECK_THROWS_AS(to_local_padded(0, neg()), UserError);
  CHECK_THROWS_AS(map_seq_slide(neg(), 3, 1, 0), UserError);
  CHECK_THROWS_AS(map_seq_slide(neg(), 3, 1, kMaxSlideUnroll + 1), UserError);
  CHECK_THROWS_AS(to_local_padded(4097, neg()), UserError);
  CHECK_THROWS_AS(to_local_padded(arith::var("N"), neg()), UserError);
  for (const auto& pair : different) {
    const auto& a = pair.first; // not a structured binding: INFO captures it in a lambda
    const auto& b = pair.second;
    INFO(print(a), " vs ", print(b));
    CHECK_FALSE(alpha_equal(a, b));
    CHECK(a.hash() != b.hash());
  }
}

TEST_CASE("fields: map_children rebuilds through the constructors' checks") {
  Fun f = map_glb(1, neg());
  // Unchanged children: the same node.
  CHECK(map_children(
            f, [](const Fun& g) { return g; }, [](const Expr& e) { return e; })
            .same_as(f));
  Fun g = map_children(
      f, [](const Fun&) { return to_int(); }, [](const Expr& e) { return e; });
  CHECK(print(g) == "mapGlb1(to_int)");
  Fun r = reduce(add_f(), literal(0.0f));
  Fun r2 = map_children(
      r, [](const Fun& h) { return h; }, [](const Expr&) { return literal(2.0f); });
  CHECK(print(r2) == "reduce(add, 2.0f)");
  // vectorize takes only user functions, whichever way it is built.
  Fun v = vectorize(4, neg());
  CHECK(user_error_of([&] {
          map_children(
              v, [](const Fun&) { return map(neg()); }, [](const Expr& e) { return e; });
        }).starts_with("vectorize: expected a user function"));
  CHECK(user_error_of([] { make(Split{0}); }).starts_with("split: chunk size must be >= 1"));
  CHECK(user_error_of([] {
          make(MapGlb{3, neg()});
        }) == "mapGlb: dimension must be 0, 1 or 2, got 3");
  // make() eta-reduces lambdas as lambda() does.
  Expr x = param(f32(), "x");
  CHECK(make(Lambda{{x}, call(neg(), {x})}).as<UserFun>() != nullptr);
}

TEST_CASE("fields: error labels name a primitive with its parameters") {
  Expr xs = param(arr(f32(), 4), "xs");
  CHECK(user_error_of([&] { call(split(3), {xs}); }).starts_with("split(3): "));
  CHECK(user_error_of([&] {
          call(pad(1, 1, Boundary{}), {param(f32(), "s")});
        }).starts_with("pad(1, 1, clamp): "));
  CHECK(user_error_of([&] {
          call(map_glb(2, to_int()), {param(arr(i32(), 4), "is")});
        }).starts_with("mapGlb2: "));
  CHECK(user_error_of([&] { call(vectorize(4, neg()), {xs}); }).starts_with("vectorize(4, neg): "));
}
