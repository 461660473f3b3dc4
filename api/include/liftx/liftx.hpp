#pragma once
/// liftx as a library: write a stencil with the C++ DSL (liftx::dsl), compile it for an OpenCL
/// device and run it (liftx::Context, liftx::Kernel), or tune it in the application
/// (liftx::tune), or run one tuned for many input shapes (liftx::AdaptiveProgram).
/// docs/library.md describes the whole API.
#include "ir/dsl.hpp"
#include "liftx/adaptive.hpp"
#include "liftx/errors.hpp"
#include "liftx/program.hpp"
#include "liftx/runtime.hpp"
#include "liftx/tune.hpp"
#include "liftx/version.hpp"
