// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "aten/BoxedKernels.h"

#include <ATen/native/Resize.h>

#include <map>
#include <memory>
#include <set>

#include "aten/Schemas.h"
#include "runtime/Device.h"

namespace torch_backend {
namespace {

// What a schema argument's type becomes in a tb_value.
enum class Carried {
  kTensor,
  kTensorList,
  kOptionalTensorList,
  kInt,
  kFloat,
  kBool,
  kScalar,
  kString,
  kDtype,
  kIntList,
  kBoolList,
  kGenerator
};

std::optional<Carried> carried(const c10::Argument& argument) {
  c10::TypePtr type = argument.real_type();
  if (type->kind() == c10::TypeKind::OptionalType) {
    type = type->castRaw<c10::OptionalType>()->getElementType();
  }
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
      return Carried::kTensor;
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      return Carried::kInt;
    case c10::TypeKind::FloatType:
      return Carried::kFloat;
    case c10::TypeKind::BoolType:
      return Carried::kBool;
    case c10::TypeKind::NumberType:
      return Carried::kScalar;
    case c10::TypeKind::StringType:
      return Carried::kString;
    case c10::TypeKind::ScalarTypeType:
      return Carried::kDtype;
    case c10::TypeKind::GeneratorType:
      return Carried::kGenerator;
    case c10::TypeKind::ListType: {
      c10::TypePtr element = type->castRaw<c10::ListType>()->getElementType();
      switch (element->kind()) {
        case c10::TypeKind::TensorType:
          return Carried::kTensorList;
        case c10::TypeKind::OptionalType:
          if (element->castRaw<c10::OptionalType>()->getElementType()->kind() ==
              c10::TypeKind::TensorType) {
            return Carried::kOptionalTensorList;
          }
          return std::nullopt;
        case c10::TypeKind::IntType:
        case c10::TypeKind::SymIntType:
          return Carried::kIntList;
        case c10::TypeKind::BoolType:
          return Carried::kBoolList;
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

int64_t concrete(const c10::IValue& value) {
  return value.isSymInt() ? value.toSymInt().guard_int(__FILE__, __LINE__) : value.toInt();
}

void pack_value(KernelCall& call, Carried kind, const c10::IValue& value, const char* name) {
  if (kind == Carried::kGenerator) {  // None: the device's default generator
    call.generator(value.isNone() ? std::nullopt
                                  : std::optional<at::Generator>(value.toGenerator()));
    return;
  }
  if (value.isNone()) {
    call.none();
    return;
  }
  switch (kind) {
    case Carried::kTensor:
      call.tensor(value.toTensor(), name);
      return;
    case Carried::kTensorList: {
      std::vector<at::Tensor> tensors = value.toTensorVector();
      call.tensors(at::ITensorListRef(tensors), name);
      return;
    }
    case Carried::kOptionalTensorList:
      call.tensors(value.to<c10::List<std::optional<at::Tensor>>>(), name);
      return;
    case Carried::kInt:
      call.integer(concrete(value));
      return;
    case Carried::kFloat:
      call.real(value.toDouble());
      return;
    case Carried::kBool:
      call.boolean(value.toBool());
      return;
    case Carried::kScalar:
      call.scalar(value.toScalar());
      return;
    case Carried::kString:
      call.string(std::string_view(value.toStringRef()));
      return;
    case Carried::kDtype:
      call.dtype(value.toScalarType());
      return;
    case Carried::kIntList: {
      std::vector<int64_t> numbers;
      for (const c10::IValue& element : value.toListRef()) numbers.push_back(concrete(element));
      call.owned_ints(std::move(numbers));
      return;
    }
    case Carried::kBoolList:
      call.owned_bools(value.toBoolList().vec());
      return;
    case Carried::kGenerator:
      return;  // handled above
  }
}

// A tensor's meta copy, keeping the wrapped-number mark type promotion reads.
at::Tensor meta_tensor(const at::Tensor& tensor) {
  at::Tensor meta = to_meta(tensor);
  if (tensor.defined() && tensor.unsafeGetTensorImpl()->is_wrapped_number()) {
    meta.unsafeGetTensorImpl()->set_wrapped_number(true);
  }
  return meta;
}

bool writes(const c10::Argument& argument) {
  return argument.alias_info() != nullptr && argument.alias_info()->isWrite();
}

// How the wrapper provides a registered operator's outputs.
enum class Mode {
  kOut,         // the kernel's own out variant: the user's out= tensors, resized
  kFunctional,  // new outputs from the caching allocator
  kInplace,     // the in-place variant of an out kernel: self is the output
  kMutating,    // the kernel's own in-place or mutating operator: no outputs
};

class BoxedKernel final : public c10::OperatorKernel {
 public:
  BoxedKernel(const tb_kernel* kernel, std::atomic<uint64_t>* calls, Mode mode,
              std::vector<c10::Argument> inputs, std::optional<c10::OperatorHandle> meta_op,
              std::vector<size_t> returns_from)
      : kernel_(kernel),
        calls_(calls),
        mode_(mode),
        inputs_(std::move(inputs)),
        meta_op_(std::move(meta_op)),
        returns_from_(std::move(returns_from)) {}

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet /*keys*/,
                  torch::jit::Stack* stack) {
    const size_t count = op.schema().arguments().size();
    c10::IValue* values = stack->data() + (stack->size() - count);
    std::vector<at::Tensor> outputs;
    if (!run(op, values, count, &outputs)) {
      cpu_fallback_boxed(op, stack);
      return;
    }
    std::vector<c10::IValue> results;
    if (mode_ == Mode::kFunctional) {
      for (at::Tensor& output : outputs) results.emplace_back(std::move(output));
    } else {
      for (size_t index : returns_from_) results.push_back(values[index]);
    }
    torch::jit::drop(*stack, count);
    for (c10::IValue& result : results) stack->push_back(std::move(result));
  }

 private:
  // The outputs' metadata from ATen's meta function: meta_op_ on the inputs when it is the
  // functional variant, else the registered operator itself on all its arguments.
  MetaCache::Outputs metas(const c10::OperatorHandle& op, const c10::IValue* values, size_t count) {
    const bool functional = meta_op_.has_value();
    const size_t used = functional ? inputs_.size() : count;
    MetaKey key;
    for (size_t i = 0; i < used; i++) key.add_ivalue(values[i]);
    return cache_.get(key, [&] {
      torch::jit::Stack meta_stack;
      meta_stack.reserve(used);
      for (size_t i = 0; i < used; i++) meta_stack.push_back(to_meta(values[i]));
      (functional ? *meta_op_ : op)
          .redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &meta_stack);
      std::vector<at::Tensor> outputs;
      for (const c10::IValue& v : meta_stack) {
        outputs.push_back(v.isTensor() ? v.toTensor() : at::Tensor());
      }
      return outputs;
    });
  }

  // Prepares the outputs and launches the kernel; false sends the call to the CPU fallback.
  bool run(const c10::OperatorHandle& op, const c10::IValue* values, size_t count,
           std::vector<at::Tensor>* result) {
    std::vector<at::Tensor>& outputs = *result;
    if (mode_ != Mode::kMutating) {
      MetaCache::Outputs meta;
      try {
        meta = metas(op, values, count);
      } catch (const c10::NotImplementedError&) {
        return false;  // no meta function: ATen's CPU kernel decides everything
      }
      const c10::Device device = device_of_values(values, count);
      switch (mode_) {
        case Mode::kFunctional:
          for (const OutputMeta& m : *meta) outputs.push_back(m.allocate(device));
          break;
        case Mode::kInplace: {
          const at::Tensor& self = values[0].toTensor();
          const OutputMeta& m = meta->front();
          // A result self cannot hold (broadcast beyond it, another dtype): ATen's error.
          if (!m.defined || self.sizes() != at::IntArrayRef(m.sizes) ||
              self.scalar_type() != m.dtype) {
            return false;
          }
          outputs.push_back(self);
          break;
        }
        case Mode::kOut:
          for (size_t i = 0; i < meta->size(); i++) {
            const at::Tensor& out = values[inputs_.size() + i].toTensor();
            const OutputMeta& m = (*meta)[i];
            if (!m.defined || out.scalar_type() != m.dtype) return false;  // ATen casts
            at::native::resize_output(out, m.sizes);
            outputs.push_back(out);
          }
          break;
        case Mode::kMutating:
          break;
      }
    }
    if (!writes_are_safe(op, outputs, values)) return false;
    KernelCall call(kernel_, calls_);
    pack_arguments(call, inputs_, values);
    const auto& arguments = op.schema().arguments();
    for (size_t i = 0; i < outputs.size(); i++) {
      const size_t index = inputs_.size() + i;
      call.tensor(outputs[i], mode_ == Mode::kOut && index < arguments.size()
                                  ? arguments[index].name().c_str()
                                  : "result");
    }
    return call.launch();
  }

  // Whether the kernel may write its outputs (KernelCall.h, WriteCheck): an out variant's
  // outputs and a mutating operator's written arguments share no memory with its inputs; an
  // in-place variant's self is its output and may be one of its elementwise operands too.
  bool writes_are_safe(const c10::OperatorHandle& op, const std::vector<at::Tensor>& outputs,
                       const c10::IValue* values) const {
    if (mode_ == Mode::kFunctional) return true;
    WriteCheck check(/*elementwise=*/false);
    for (const at::Tensor& out : outputs) check.output(out);
    const auto& arguments = op.schema().arguments();
    const size_t inputs = mode_ == Mode::kMutating ? arguments.size() : inputs_.size();
    for (size_t i = mode_ == Mode::kInplace ? 1 : 0; i < inputs; i++) {
      const bool written = mode_ == Mode::kMutating && writes(arguments[i]);
      if (values[i].isTensor()) {
        if (written) {
          check.output(values[i].toTensor());
        } else {
          check.input(values[i].toTensor());
        }
      } else if (values[i].isTensorList()) {
        std::vector<at::Tensor> tensors = values[i].toTensorVector();  // the list keeps them
        if (written) {
          check.output(at::ITensorListRef(tensors));
        } else {
          check.input(at::ITensorListRef(tensors));
        }
      } else if (values[i].isOptionalTensorList()) {
        check.input(values[i].to<c10::List<std::optional<at::Tensor>>>());
      }
    }
    return check.safe(short_name(op.operator_name()));
  }

  const tb_kernel* kernel_;
  std::atomic<uint64_t>* calls_;
  Mode mode_;
  std::vector<c10::Argument> inputs_;  // the kernel's arguments before its outputs
  std::optional<c10::OperatorHandle> meta_op_;
  std::vector<size_t> returns_from_;  // argument index of each return (all but functional)
  MetaCache cache_;
};

bool tensor_type(const c10::Argument& argument) {
  return argument.real_type()->kind() == c10::TypeKind::TensorType;
}

bool plain_tensor(const c10::Argument& argument) {
  return tensor_type(argument) && argument.alias_info() == nullptr;
}

// The name, type and keyword-only-ness of an argument, without alias annotation or default.
std::string signature(const c10::Argument& argument) {
  std::string text = c10::str(argument.real_type()->str(), " ", argument.name(),
                              argument.N() ? c10::str("[", *argument.N(), "]") : std::string(),
                              argument.kwarg_only() ? " kwarg" : "");
  return text;
}

// The argument index each return aliases (its alias set), or nullopt for a return that
// aliases no argument.
std::optional<std::vector<size_t>> aliased_returns(const c10::FunctionSchema& schema) {
  std::vector<size_t> indices;
  for (const c10::Argument& ret : schema.returns()) {
    if (ret.alias_info() == nullptr) return std::nullopt;
    std::optional<size_t> found;
    for (size_t i = 0; i < schema.arguments().size(); i++) {
      const c10::AliasInfo* alias = schema.arguments()[i].alias_info();
      if (alias != nullptr && alias->beforeSets() == ret.alias_info()->beforeSets()) found = i;
    }
    if (!found.has_value()) return std::nullopt;
    indices.push_back(*found);
  }
  return indices;
}

// Operators of the dispatcher by qualified base name ("aten::hardtanh"), built on first use.
const std::map<std::string, std::vector<c10::OperatorName>>& operators_by_base() {
  static const auto* index = [] {
    auto* map = new std::map<std::string, std::vector<c10::OperatorName>>();
    for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
      (*map)[name.name].push_back(name);
    }
    return map;
  }();
  return *index;
}

struct Variants {
  std::optional<c10::OperatorHandle> functional;
  std::optional<c10::OperatorHandle> inplace;
};

// The functional ("X") and in-place ("X_") variants of out variant `out` ("X.out"): the
// operators of those names whose arguments are the out variant's inputs (the in-place one's
// first argument being written) and whose returns fit.  Composite-implicit operators never
// reach a device kernel and are skipped.
Variants variants_of(const c10::OperatorHandle& out, size_t num_inputs) {
  const c10::FunctionSchema& schema = out.schema();
  std::vector<std::string> inputs;
  for (size_t i = 0; i < num_inputs; i++) inputs.push_back(signature(schema.arguments()[i]));
  const size_t num_outputs = schema.arguments().size() - num_inputs;
  Variants found;
  for (const char* suffix : {"", "_"}) {
    auto it = operators_by_base().find(schema.name() + suffix);
    if (it == operators_by_base().end()) continue;
    for (const c10::OperatorName& name : it->second) {
      std::optional<c10::OperatorHandle> op = c10::Dispatcher::singleton().findOp(name);
      if (!op.has_value() || name == out.operator_name() ||
          op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) {
        continue;
      }
      const c10::FunctionSchema& candidate = op->schema();
      const auto& arguments = candidate.arguments();
      if (arguments.size() != num_inputs) continue;
      bool same = true;
      for (size_t i = 0; i < num_inputs && same; i++) same = signature(arguments[i]) == inputs[i];
      if (!same) continue;
      const bool inplace = *suffix == '_';
      if (inplace) {
        bool fits = num_outputs == 1 && num_inputs > 0 && writes(arguments[0]) &&
                    candidate.returns().size() == 1 && candidate.returns()[0].alias_info() &&
                    candidate.returns()[0].alias_info()->isWrite();
        for (size_t i = 1; i < num_inputs; i++) fits &= arguments[i].alias_info() == nullptr;
        if (fits) found.inplace = op;
      } else {
        bool fits = candidate.returns().size() == num_outputs;
        for (const c10::Argument& a : arguments) fits &= a.alias_info() == nullptr;
        for (const c10::Argument& r : candidate.returns()) fits &= plain_tensor(r);
        if (fits) found.functional = op;
      }
    }
  }
  return found;
}

void register_kernel(torch::Library& library, const c10::OperatorHandle& op,
                     std::unique_ptr<BoxedKernel> functor) {
  library.impl(short_name(op.operator_name()).c_str(),
               torch::CppFunction::makeFromBoxedFunctor(std::move(functor)));
}

}  // namespace

std::optional<std::string> unsupported_argument(const c10::Argument& argument) {
  if (carried(argument).has_value()) return std::nullopt;
  return c10::str("argument '", argument.name(), "' has type ", argument.real_type()->str(),
                  ", which no tb_value kind carries");
}

void pack_arguments(KernelCall& call, c10::ArrayRef<c10::Argument> arguments,
                    const c10::IValue* values) {
  for (size_t i = 0; i < arguments.size(); i++) {
    std::optional<Carried> kind = carried(arguments[i]);
    TORCH_INTERNAL_ASSERT(kind.has_value(), "torch_backend: unchecked argument type");
    pack_value(call, *kind, values[i], arguments[i].name().c_str());
  }
}

c10::IValue to_meta(const c10::IValue& value) {
  if (value.isTensor()) return meta_tensor(value.toTensor());
  if (value.isTensorList()) {
    c10::List<at::Tensor> metas;
    for (const at::Tensor& t : value.toTensorVector()) metas.push_back(meta_tensor(t));
    return metas;
  }
  if (value.isList() && value.toList().elementType()->kind() == c10::TypeKind::OptionalType) {
    c10::List<std::optional<at::Tensor>> metas;
    for (const c10::IValue& element : value.toListRef()) {
      metas.push_back(element.isNone()
                          ? std::nullopt
                          : std::optional<at::Tensor>(meta_tensor(element.toTensor())));
    }
    return metas;
  }
  return value;
}

c10::Device device_of_values(const c10::IValue* values, size_t count) {
  for (size_t i = 0; i < count; i++) {
    const c10::IValue& v = values[i];
    if (v.isTensor() && v.toTensor().defined() &&
        v.toTensor().device().type() == c10::DeviceType::PrivateUse1) {
      return v.toTensor().device();
    }
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) {
        if (t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) return t.device();
      }
    }
  }
  return make_device(current_device());
}

BoxedOutcome register_boxed_kernels(torch::Library& library,
                                    const std::vector<BoxedKernelSpec>& kernels) {
  BoxedOutcome outcome;
  struct OutKernel {
    const BoxedKernelSpec* spec;
    size_t num_inputs;
    Variants variants;
  };
  std::vector<OutKernel> out_kernels;
  for (const BoxedKernelSpec& spec : kernels) {
    const c10::FunctionSchema& schema = spec.op.schema();
    const std::string name = spec.kernel->name;
    std::optional<std::string> problem;
    for (const c10::Argument& argument : schema.arguments()) {
      if (!problem) problem = unsupported_argument(argument);
    }
    size_t num_outs = 0, num_written = 0;
    for (const c10::Argument& argument : schema.arguments()) {
      num_outs += argument.is_out() ? 1 : 0;
      num_written += writes(argument) ? 1 : 0;
    }
    const size_t num_inputs = schema.arguments().size() - num_outs;
    for (size_t i = num_inputs; i < schema.arguments().size() && !problem; i++) {
      if (!schema.arguments()[i].is_out() || !tensor_type(schema.arguments()[i])) {
        problem = "its out arguments are not tensors at the end of the schema";
      }
    }
    std::optional<std::vector<size_t>> aliased = aliased_returns(schema);
    Mode mode = num_outs > 0 ? Mode::kOut : num_written > 0 ? Mode::kMutating : Mode::kFunctional;
    if (!problem && mode != Mode::kFunctional && !aliased.has_value()) {
      problem = "it writes arguments and returns new tensors";
    }
    if (!problem && mode == Mode::kFunctional) {
      for (const c10::Argument& ret : schema.returns()) {
        if (!plain_tensor(ret)) {
          problem = c10::str("it returns `", describe_argument(ret),
                             "` (only tensors can be allocated for a kernel)");
          break;
        }
      }
    }
    if (problem) {
      outcome.refused.emplace_back(name, *problem);
      continue;
    }
    std::vector<c10::Argument> inputs(schema.arguments().begin(),
                                      schema.arguments().begin() + num_inputs);
    std::optional<c10::OperatorHandle> meta_op;
    Variants variants;
    if (mode == Mode::kOut) {
      variants = variants_of(spec.op, num_inputs);
      meta_op = variants.functional;
      out_kernels.push_back({&spec, num_inputs, variants});
    }
    register_kernel(library, spec.op,
                    std::make_unique<BoxedKernel>(
                        spec.kernel, spec.calls, mode, inputs, meta_op,
                        mode == Mode::kFunctional ? std::vector<size_t>() : *aliased));
    outcome.registered.emplace_back(short_name(spec.op.operator_name()), name);
  }
  // Variants come second, so that a kernel the vendor publishes for a variant itself wins.
  for (const OutKernel& out : out_kernels) {
    const BoxedKernelSpec& spec = *out.spec;
    std::vector<c10::Argument> inputs(spec.op.schema().arguments().begin(),
                                      spec.op.schema().arguments().begin() + out.num_inputs);
    const std::optional<c10::OperatorHandle>& functional = out.variants.functional;
    if (functional && !functional->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) {
      register_kernel(library, *functional,
                      std::make_unique<BoxedKernel>(spec.kernel, spec.calls, Mode::kFunctional,
                                                    inputs, functional, std::vector<size_t>()));
      outcome.registered.emplace_back(short_name(functional->operator_name()), spec.kernel->name);
    }
    const std::optional<c10::OperatorHandle>& inplace = out.variants.inplace;
    if (inplace && !inplace->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) {
      register_kernel(library, *inplace,
                      std::make_unique<BoxedKernel>(spec.kernel, spec.calls, Mode::kInplace, inputs,
                                                    functional, std::vector<size_t>{0}));
      outcome.registered.emplace_back(short_name(inplace->operator_name()), spec.kernel->name);
    }
  }
  return outcome;
}

}  // namespace torch_backend
