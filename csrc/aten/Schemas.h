// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Operator schemas as vendors state them (ABI 2.0, tb_kernel::schema and tb_custom_op::schema):
// parsing, and the comparison with the running torch's schema that decides whether a kernel
// written for one torch release may be called by another.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>

#include <optional>
#include <string>

namespace torch_backend {

// The torch release the runtime was built against, for messages ("2.13.0").
const char* torch_version();

// Parses a schema a vendor states.  An operator name without a namespace is in `aten`.  Throws
// c10::Error with the parser's message when it does not parse.
c10::FunctionSchema parse_vendor_schema(const std::string& text);

// "argument 2 ('other')" style description of the first difference between a kernel's stated
// schema and the dispatcher's, or nullopt when they agree on everything a kernel depends on:
// operator name and overload, each argument's name, type, size, alias annotation and whether it
// is keyword-only, and the returns.  Default values are ignored.
std::optional<std::string> schema_difference(const c10::FunctionSchema& stated,
                                             const c10::FunctionSchema& actual);

// The first line of an exception's message: the schema parser's reason, without the copy of
// the schema it appends.
std::string first_line(const char* message);

// An argument as the schema prints it, without its default value ("Tensor(a!) out").
std::string describe_argument(const c10::Argument& argument);

// The operator named "add.out", "aten::add.out" or "add" (default overload), if it exists.
std::optional<c10::OperatorHandle> find_operator(const std::string& name);

// "add.out" for aten::add.out, "emu::mymuladd" for a custom operator (overloads after a dot).
std::string short_name(const c10::OperatorName& name);

}  // namespace torch_backend
