#pragma once
/// The OpenCL C++ bindings as liftx uses them: OpenCL 1.2 API level (so NVIDIA's OpenCL C 1.2
/// devices work), no binding exceptions (every call's status is checked by liftx itself).
#include <CL/opencl.hpp>

#include <string_view>

namespace liftx::runtime {

/// The symbolic name of an OpenCL status code ("CL_OUT_OF_RESOURCES"); "CL_ERROR(<n>)" otherwise.
std::string cl_error_name(cl_int code);

} // namespace liftx::runtime
