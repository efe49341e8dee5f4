// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "aten/Schemas.h"

#include <c10/util/StringUtil.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>
#include <torch/version.h>

#include <sstream>

namespace torch_backend {

const char* torch_version() { return TORCH_VERSION; }

c10::FunctionSchema parse_vendor_schema(const std::string& text) {
  std::string qualified = text;
  size_t paren = text.find('(');
  if (text.substr(0, paren).find("::") == std::string::npos) qualified = "aten::" + text;
  return torch::jit::parseSchema(qualified, /*allow_typevars=*/false);
}

std::string first_line(const char* message) {
  std::string text = message;
  size_t newline = text.find('\n');
  return newline == std::string::npos ? text : text.substr(0, newline);
}

std::string describe_argument(const c10::Argument& argument) {
  std::ostringstream out;
  out << argument;
  std::string text = out.str();
  // Types and names never contain '=': what follows it is the default value.
  size_t equals = text.find('=');
  return equals == std::string::npos ? text : text.substr(0, equals);
}

namespace {

std::string quoted(const c10::Argument& argument) {
  std::string text = describe_argument(argument);
  return text.empty() ? "(nothing)" : "`" + text + "`";
}

std::optional<std::string> list_difference(const char* what,
                                           const std::vector<c10::Argument>& stated,
                                           const std::vector<c10::Argument>& actual) {
  size_t common = std::min(stated.size(), actual.size());
  for (size_t i = 0; i < common; i++) {
    const c10::Argument &s = stated[i], &a = actual[i];
    if (describe_argument(s) != describe_argument(a)) {
      return c10::str(what, " ", i, " is ", quoted(s), " in the kernel's schema and ", quoted(a),
                      " in torch's");
    }
    if (s.kwarg_only() != a.kwarg_only()) {
      return c10::str(what, " ", i, " (", quoted(a), ") is ",
                      a.kwarg_only() ? "keyword-only" : "positional", " in torch's schema and ",
                      s.kwarg_only() ? "keyword-only" : "positional", " in the kernel's");
    }
  }
  if (stated.size() != actual.size()) {
    const std::vector<c10::Argument>& longer = stated.size() > actual.size() ? stated : actual;
    return c10::str("the kernel's schema has ", stated.size(), " ", what, "s and torch's ",
                    actual.size(), " (", what, " ", common, ", ", quoted(longer[common]),
                    ", is only in ", stated.size() > actual.size() ? "the kernel's" : "torch's",
                    ")");
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> schema_difference(const c10::FunctionSchema& stated,
                                             const c10::FunctionSchema& actual) {
  if (stated.operator_name() != actual.operator_name()) {
    return c10::str("the kernel's schema is for operator ", short_name(stated.operator_name()));
  }
  if (auto difference = list_difference("argument", stated.arguments(), actual.arguments())) {
    return difference;
  }
  if (auto difference = list_difference("return", stated.returns(), actual.returns())) {
    return difference;
  }
  if (stated.is_vararg() != actual.is_vararg() || stated.is_varret() != actual.is_varret()) {
    return std::string("one schema takes or returns a variable number of values, the other not");
  }
  return std::nullopt;
}

std::optional<c10::OperatorHandle> find_operator(const std::string& name) {
  std::string qualified = name.find("::") == std::string::npos ? "aten::" + name : name;
  size_t dot = qualified.find('.', qualified.find("::"));
  std::string base = qualified.substr(0, dot);
  std::string overload = dot == std::string::npos ? "" : qualified.substr(dot + 1);
  return c10::Dispatcher::singleton().findOp(c10::OperatorName(base, overload));
}

std::string short_name(const c10::OperatorName& name) {
  std::string base = name.name.rfind("aten::", 0) == 0 ? name.name.substr(6) : name.name;
  return name.overload_name.empty() ? base : base + "." + name.overload_name;
}

}  // namespace torch_backend
