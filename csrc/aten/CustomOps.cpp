// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "aten/CustomOps.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>
#include <torch_backend/vendor.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>

#include "aten/BoxedKernels.h"
#include "aten/KernelCall.h"
#include "aten/Schemas.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

std::vector<CustomOpInfo>* g_ops = new std::vector<CustomOpInfo>();

// One validated custom operator.  Lives for the rest of the process: kernels refer to it.
struct Declared {
  const tb_custom_op* op;
  c10::FunctionSchema schema;
  std::string name;      // "emu::mymuladd"
  std::string backward;  // resolved name of the backward operator, or ""
  tb_kernel kernel;      // what KernelCall launches: the op's fn, dtypes, name and data
};

std::string vendor_description() {
  const tb_vendor_handle& t = Vendor::Get().table();
  return c10::str("vendor '", t.device_type, "' (", t.vendor_name, ", ", t.library_path, ")");
}

[[noreturn]] void invalid(const std::string& op, const std::string& problem) {
  TORCH_CHECK(false, "torch_backend: ", vendor_description(), ": custom operator '", op, "' ",
              problem);
}

// The TB_EXTENSION_CUSTOM_OPS extension of the vendor's chain, if any.
const tb_custom_ops_extension* find_extension() {
  const tb_vendor* vendor = Vendor::Get().table().table;
  if (!TB_STRUCT_HAS_FIELD(vendor, tb_vendor, extensions)) return nullptr;
  const tb_custom_ops_extension* found = nullptr;
  int length = 0;
  for (const tb_extension_base* e = vendor->extensions; e != nullptr; e = e->next) {
    TORCH_CHECK(++length <= 64, "torch_backend: ", vendor_description(),
                ": its extension chain has more than 64 entries (a cycle?)");
    TORCH_CHECK(e->struct_size >= sizeof(tb_extension_base),
                "torch_backend: ", vendor_description(), ": extension ", length,
                " has struct_size ", e->struct_size, ", smaller than tb_extension_base");
    // The type as its integer: a type this torch_backend does not know is a value outside the
    // enum's range, which C++ may not load through the enum type.
    std::underlying_type_t<tb_extension_type> type = 0;
    std::memcpy(&type, &e->type, sizeof type);
    if (type != TB_EXTENSION_CUSTOM_OPS) continue;  // unknown types are skipped
    TORCH_CHECK(found == nullptr, "torch_backend: ", vendor_description(),
                ": its extension chain holds TB_EXTENSION_CUSTOM_OPS twice");
    TORCH_CHECK(e->struct_size >= TB_STRUCT_SIZE(tb_custom_ops_extension, ops),
                "torch_backend: ", vendor_description(),
                ": its tb_custom_ops_extension has struct_size ", e->struct_size,
                ", smaller than ABI 2.0's");
    found = reinterpret_cast<const tb_custom_ops_extension*>(e);
    TORCH_CHECK(found->count >= 0 && (found->count == 0 || found->ops != nullptr),
                "torch_backend: ", vendor_description(), ": its custom operator table has count ",
                found->count, " and ops ", static_cast<const void*>(found->ops));
  }
  return found;
}

std::string name_of(const c10::FunctionSchema& schema) {
  return schema.overload_name().empty() ? schema.name()
                                        : schema.name() + "." + schema.overload_name();
}

// Parses and checks one declaration (everything but its backward).
Declared* declare(const tb_custom_op* op, int64_t index) {
  std::string label = c10::str("#", index);
  if (op == nullptr) invalid(label, "is NULL");
  if (op->struct_size < TB_STRUCT_SIZE(tb_custom_op, shape)) {
    invalid(label,
            c10::str("has struct_size ", op->struct_size, ", smaller than ABI 2.0's tb_custom_op"));
  }
  if (op->schema == nullptr) invalid(label, "has no schema (tb_custom_op::schema is NULL)");
  const std::string text = op->schema;
  label = text.substr(0, text.find('('));
  std::optional<c10::FunctionSchema> parsed;
  try {
    parsed = parse_vendor_schema(text);
  } catch (const std::exception& e) {  // the parser throws torch::jit::ErrorReport
    invalid(label, c10::str("has a schema that does not parse: ", first_line(e.what()),
                            "\n  schema: ", text));
  }
  const c10::FunctionSchema& schema = *parsed;
  if (label.find("::") == std::string::npos) {
    invalid(label, "has no namespace: write its schema as 'namespace::" + label + "(...)'");
  }
  const std::string ns = schema.name().substr(0, schema.name().find("::"));
  if (ns == "aten" || ns == "prim" || ns == "torch_backend") {
    invalid(label, "is in namespace '" + ns + "', which is not the vendor's");
  }
  for (const c10::Argument& argument : schema.arguments()) {
    if (argument.alias_info() != nullptr) {
      invalid(label, c10::str("writes or aliases argument `", describe_argument(argument),
                              "`: custom operators are functional"));
    }
    if (std::optional<std::string> problem = unsupported_argument(argument)) {
      invalid(label, "has an " + *problem);
    }
  }
  if (schema.returns().empty()) invalid(label, "returns nothing: it must return tensors");
  for (const c10::Argument& ret : schema.returns()) {
    if (ret.real_type()->kind() != c10::TypeKind::TensorType || ret.alias_info() != nullptr) {
      invalid(label, c10::str("returns `", describe_argument(ret),
                              "`: custom operators return new tensors only"));
    }
  }
  if (op->fn == nullptr) invalid(label, "has no kernel (tb_custom_op::fn is NULL)");
  if (op->shape == nullptr) {
    invalid(label,
            "has no shape function (tb_custom_op::shape is NULL), which its Meta "
            "and fake-tensor implementations need");
  }
  if (c10::Dispatcher::singleton().findSchema(schema.operator_name()).has_value()) {
    invalid(label, "is already defined in this process");
  }
  auto* declared = new Declared{op, schema, name_of(schema), "", tb_kernel{}};
  declared->kernel.struct_size = sizeof(tb_kernel);
  declared->kernel.name = declared->name.c_str();
  declared->kernel.fn = op->fn;
  declared->kernel.dtypes = op->dtypes;
  declared->kernel.schema = op->schema;
  declared->kernel.data = op->data;
  return declared;
}

// Checks that `backward` can compute `forward`'s gradients: it takes one gradient per returned
// tensor followed by forward's arguments, and returns one tensor per Tensor argument.
void check_backward(const Declared& forward, const Declared& backward) {
  const auto& f = forward.schema;
  const auto& b = backward.schema;
  size_t grads = f.returns().size(), tensors = 0;
  for (const c10::Argument& a : f.arguments()) {
    tensors += a.real_type()->kind() == c10::TypeKind::TensorType ? 1 : 0;
  }
  bool fits = b.arguments().size() == grads + f.arguments().size() && b.returns().size() == tensors;
  for (size_t i = 0; fits && i < grads; i++) {
    fits = b.arguments()[i].real_type()->kind() == c10::TypeKind::TensorType;
  }
  for (size_t i = 0; fits && i < f.arguments().size(); i++) {
    const c10::Argument &fa = f.arguments()[i], &ba = b.arguments()[grads + i];
    fits = fa.real_type()->str() == ba.real_type()->str() && fa.N() == ba.N();
  }
  if (!fits) {
    invalid(forward.name, c10::str("has backward '", backward.name,
                                   "', whose schema does not take (one gradient "
                                   "per returned tensor, then ",
                                   forward.name,
                                   "'s arguments) and return one "
                                   "tensor per Tensor argument\n  forward:  ",
                                   f, "\n  backward: ", b));
  }
}

// The PrivateUse1 kernel (outputs allocated, then the vendor's kernel) or, with `meta`, the
// Meta kernel (outputs on the meta device) of one custom operator.
class CustomKernel final : public c10::OperatorKernel {
 public:
  CustomKernel(const Declared* declared, bool meta, std::atomic<uint64_t>* calls)
      : declared_(declared), meta_(meta), calls_(calls) {}

  void operator()(const c10::OperatorHandle& /*op*/, c10::DispatchKeySet /*keys*/,
                  torch::jit::Stack* stack) {
    const auto& arguments = declared_->schema.arguments();
    const size_t count = arguments.size();
    const c10::IValue* values = stack->data() + (stack->size() - count);
    std::vector<tb_shape> shapes = shapes_of(values);
    const c10::Device device =
        meta_ ? c10::Device(c10::DeviceType::Meta) : device_of_values(values, count);
    std::vector<at::Tensor> outputs;
    for (const tb_shape& shape : shapes) {
      if (shape.ndim < 0) {
        outputs.emplace_back();
        continue;
      }
      std::vector<int64_t> sizes(shape.sizes, shape.sizes + shape.ndim);
      at::TensorOptions options = at::TensorOptions().dtype(from_tb_dtype(shape.dtype));
      outputs.push_back(meta_ ? at::empty(sizes, options.device(device))
                              : create_out(sizes, {}, options.device(device)));
    }
    if (!meta_) launch(values, outputs);
    torch::jit::drop(*stack, count);
    for (at::Tensor& output : outputs) stack->emplace_back(std::move(output));
  }

 private:
  std::vector<tb_shape> shapes_of(const c10::IValue* values) const {
    const std::string& name = declared_->name;
    KernelCall call(&declared_->kernel);
    pack_arguments(call, declared_->schema.arguments(), values);
    int32_t count = 0;
    const tb_value* arguments = call.shape_values(&count);
    TORCH_CHECK_NOT_IMPLEMENTED(arguments != nullptr, Vendor::Get().device_type(), ": ", name,
                                ": an argument has a dtype or value no tb_value describes");
    const size_t num_outputs = declared_->schema.returns().size();
    std::vector<tb_shape> shapes(num_outputs);
    for (tb_shape& shape : shapes) shape.struct_size = sizeof(tb_shape);
    tb_status status = declared_->op->shape(Vendor::Get().context(), arguments, count,
                                            shapes.data(), static_cast<int32_t>(num_outputs));
    if (status != TB_OK) {
      Vendor::Get().Fail("custom_op.shape", status, name);  // "<dev>: custom_op.shape(ns::op)..."
    }
    for (size_t i = 0; i < num_outputs; i++) {
      const tb_shape& shape = shapes[i];
      bool valid = shape.ndim >= -1 && shape.ndim <= TB_SHAPE_MAX_DIMS &&
                   (shape.ndim < 0 || (shape.dtype >= 0 && shape.dtype < TB_DTYPE_COUNT));
      for (int32_t d = 0; valid && d < shape.ndim; d++) valid = shape.sizes[d] >= 0;
      TORCH_CHECK(valid, Vendor::Get().device_type(), ": the shape function of ", name,
                  " gave output ", i, " dtype ", static_cast<int>(shape.dtype), " and ndim ",
                  shape.ndim, " (ndim must lie in -1..", TB_SHAPE_MAX_DIMS,
                  ", sizes be >= 0, the dtype a tb_dtype)");
    }
    return shapes;
  }

  void launch(const c10::IValue* values, const std::vector<at::Tensor>& outputs) const {
    KernelCall call(&declared_->kernel, calls_);
    pack_arguments(call, declared_->schema.arguments(), values);
    for (const at::Tensor& output : outputs) call.tensor(output, "result");
    if (call.launch()) return;
    const char* message = Vendor::Get().last_error();
    TORCH_CHECK_NOT_IMPLEMENTED(false, Vendor::Get().device_type(), ": custom operator ",
                                declared_->name,
                                " declined the call (its dtypes or TB_ERROR_NOT_SUPPORTED: ",
                                message != nullptr && *message ? message : "no message",
                                "); custom operators have no CPU fallback");
  }

  const Declared* declared_;
  bool meta_;
  std::atomic<uint64_t>* calls_;
};

}  // namespace

void register_custom_ops() {
  const tb_custom_ops_extension* extension = find_extension();
  if (extension == nullptr) return;
  std::vector<Declared*> declared;
  std::map<std::string, Declared*> by_name;
  for (int64_t i = 0; i < extension->count; i++) {
    Declared* d = declare(extension->ops[i], i);
    if (!by_name.emplace(d->name, d).second) invalid(d->name, "is declared twice");
    declared.push_back(d);
  }
  for (Declared* d : declared) {
    const tb_custom_op* op = d->op;
    const char* backward = TB_STRUCT_HAS_FIELD(op, tb_custom_op, backward) ? op->backward : nullptr;
    if (backward == nullptr) continue;
    std::string name = backward;
    if (name.find("::") == std::string::npos) {
      name = d->schema.name().substr(0, d->schema.name().find("::")) + "::" + name;
    }
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      invalid(d->name, c10::str("names backward '", backward,
                                "', which is not a custom operator of the vendor's table"));
    }
    check_backward(*d, *it->second);
    d->backward = name;
  }
  std::map<std::string, torch::Library*> libraries;  // by namespace, live for the process
  for (Declared* d : declared) {
    const std::string ns = d->schema.name().substr(0, d->schema.name().find("::"));
    torch::Library*& library = libraries[ns];
    if (library == nullptr) {
      library = new torch::Library(torch::Library::FRAGMENT, ns, std::nullopt, __FILE__, __LINE__);
    }
    library->def(d->op->schema);
    std::string qualified = d->name.substr(ns.size() + 2);
    std::atomic<uint64_t>* calls = kernel_counter(d->name);
    library->impl(qualified.c_str(),
                  torch::dispatch(c10::DispatchKey::PrivateUse1,
                                  torch::CppFunction::makeFromBoxedFunctor(
                                      std::make_unique<CustomKernel>(d, false, calls))));
    library->impl(qualified.c_str(),
                  torch::dispatch(c10::DispatchKey::Meta,
                                  torch::CppFunction::makeFromBoxedFunctor(
                                      std::make_unique<CustomKernel>(d, true, nullptr))));
    g_ops->push_back({d->name, d->op->schema, d->backward});
  }
}

const std::vector<CustomOpInfo>& custom_ops() { return *g_ops; }

}  // namespace torch_backend
