// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "aten/KernelCall.h"

#include "aten/Fallback.h"

#include <ATen/EmptyTensor.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/impl/COW.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "profiler/Profiler.h"
#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Generator.h"
#include "runtime/Graph.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {

// ---------------------------------------------------------------------------------------------
// dtype mapping

static tb_dtype to_tb_dtype(at::ScalarType type, bool* ok) {
  *ok = true;
  switch (type) {
    case at::kBool:
      return TB_DTYPE_BOOL;
    case at::kByte:
      return TB_DTYPE_UINT8;
    case at::kChar:
      return TB_DTYPE_INT8;
    case at::kShort:
      return TB_DTYPE_INT16;
    case at::kInt:
      return TB_DTYPE_INT32;
    case at::kLong:
      return TB_DTYPE_INT64;
    case at::kHalf:
      return TB_DTYPE_FLOAT16;
    case at::kBFloat16:
      return TB_DTYPE_BFLOAT16;
    case at::kFloat:
      return TB_DTYPE_FLOAT32;
    case at::kDouble:
      return TB_DTYPE_FLOAT64;
    default:
      *ok = false;
      return TB_DTYPE_COUNT;
  }
}

std::optional<tb_dtype> tb_dtype_of(at::ScalarType type) {
  bool ok = false;
  tb_dtype dtype = to_tb_dtype(type, &ok);
  if (!ok) return std::nullopt;
  return dtype;
}

// ---------------------------------------------------------------------------------------------
// KernelCall

namespace {
constexpr int64_t kPendingList = -1;  // tensors.count placeholder resolved in launch()
}

void KernelCall::add_tensor(at::Tensor tensor, const char* name) {
  tb_tensor t{};
  t.struct_size = sizeof(tb_tensor);
  tensors_.push_back(t);
  sources_.push_back(std::move(tensor));
  names_.push_back(name);
}

KernelCall& KernelCall::tensor(const at::Tensor& tensor, const char* name) {
  if (!tensor.defined()) return none();
  if (tensor.device().is_cpu() && tensor.dim() == 0) {
    // A CPU scalar tensor (a "wrapped number"): its value.
    at::Scalar value = tensor.item();
    return scalar(value);
  }
  tb_value value{};
  value.kind = TB_VALUE_TENSOR;
  value.as.i = static_cast<int64_t>(tensors_.size());
  add_tensor(tensor, name);
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::tensor(const std::optional<at::Tensor>& tensor, const char* name) {
  return tensor.has_value() ? this->tensor(*tensor, name) : none();
}

KernelCall& KernelCall::tensors(at::ITensorListRef list, const char* name) {
  tb_value value{};
  value.kind = TB_VALUE_TENSOR_LIST;
  value.as.tensors.items = reinterpret_cast<const tb_tensor* const*>(tensors_.size());
  int64_t count = 0;
  for (const at::Tensor& t : list) {
    add_tensor(t, name);
    count++;
  }
  value.as.tensors.count = count;
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::tensors(const c10::List<std::optional<at::Tensor>>& list,
                                const char* name) {
  tb_value value{};
  value.kind = TB_VALUE_TENSOR_LIST;
  value.as.tensors.items = reinterpret_cast<const tb_tensor* const*>(tensors_.size());
  int64_t count = 0;
  for (size_t i = 0; i < list.size(); i++) {
    std::optional<at::Tensor> element = list.get(i);
    movable_.push_back(sources_.size());
    add_tensor(element.has_value() ? *element : at::Tensor(), name);
    count++;
  }
  value.as.tensors.count = count;
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::operand(const at::Tensor& tensor, at::ScalarType common,
                                at::IntArrayRef shape, const char* name) {
  if (at::isComplexType(common)) {
    // No tb_value carries a complex number, and no tb_dtype a complex tensor: decline.
    return undescribable();
  }
  if (tensor.device().is_cpu() && tensor.dim() == 0) {
    at::Scalar value = tensor.item();
    if (value.isComplex()) return scalar(value);  // declines (see scalar())
    if (at::isFloatingType(common)) return real(value.toDouble());
    if (common == at::kBool) return boolean(value.toBool());
    return integer(value.toLong());
  }
  at::Tensor prepared = tensor;
  if (prepared.device().type() == c10::DeviceType::PrivateUse1) {
    // Cast and broadcast only a tensor the launch accepts (check_devices() says why not).
    if (prepared.scalar_type() != common) prepared = prepared.to(common);
    if (prepared.sizes() != shape) prepared = prepared.expand(shape);
  }
  return this->tensor(prepared, name);
}

KernelCall& KernelCall::scalar(const at::Scalar& value) {
  if (value.isBoolean()) return boolean(value.toBool());
  if (value.isIntegral(false)) return integer(value.toLong());
  if (value.isFloatingPoint()) return real(value.toDouble());
  return undescribable();  // complex or symbolic: no descriptor for it
}

KernelCall& KernelCall::undescribable() {
  undescribable_ = true;
  return none();  // keeps the argument positions; the call declines at launch
}

KernelCall& KernelCall::scalar(const std::optional<at::Scalar>& value) {
  return value.has_value() ? scalar(*value) : none();
}

KernelCall& KernelCall::integer(int64_t number) {
  tb_value value{};
  value.kind = TB_VALUE_INT;
  value.as.i = number;
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::integer(const std::optional<int64_t>& number) {
  return number.has_value() ? integer(*number) : none();
}

KernelCall& KernelCall::integer(const c10::SymInt& number) {
  return integer(number.guard_int(__FILE__, __LINE__));
}

KernelCall& KernelCall::real(double number) {
  tb_value value{};
  value.kind = TB_VALUE_DOUBLE;
  value.as.f = number;
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::real(const std::optional<double>& number) {
  return number.has_value() ? real(*number) : none();
}

KernelCall& KernelCall::boolean(bool flag) {
  tb_value value{};
  value.kind = TB_VALUE_BOOL;
  value.as.b = flag ? 1 : 0;
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::boolean(const std::optional<bool>& flag) {
  return flag.has_value() ? boolean(*flag) : none();
}

KernelCall& KernelCall::ints(at::IntArrayRef numbers) {
  tb_value value{};
  value.kind = TB_VALUE_INT_LIST;
  value.as.ints.items = numbers.data();
  value.as.ints.count = static_cast<int64_t>(numbers.size());
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::ints(c10::SymIntArrayRef numbers) {
  return ints(C10_AS_INTARRAYREF_SLOW(numbers));
}

KernelCall& KernelCall::ints(at::OptionalIntArrayRef numbers) {
  return numbers.has_value() ? ints(*numbers) : none();
}

KernelCall& KernelCall::ints(at::OptionalSymIntArrayRef numbers) {
  return numbers.has_value() ? ints(*numbers) : none();
}

KernelCall& KernelCall::bool_list(const bool* flags, size_t count) {
  bool_storage_.emplace_back(flags, flags + count);
  tb_value value{};
  value.kind = TB_VALUE_BOOL_LIST;
  value.as.bools.items = bool_storage_.back().data();
  value.as.bools.count = static_cast<int64_t>(count);
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::string(std::string_view text) {
  string_storage_.emplace_back(text);
  tb_value value{};
  value.kind = TB_VALUE_STRING;
  value.as.string = string_storage_.back().c_str();
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::string(const std::optional<std::string_view>& text) {
  return text.has_value() ? string(*text) : none();
}

KernelCall& KernelCall::dtype(at::ScalarType type) {
  bool ok = false;
  tb_value value{};
  value.kind = TB_VALUE_DTYPE;
  value.as.dtype = to_tb_dtype(type, &ok);
  if (!ok) return undescribable();
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::dtype(const std::optional<at::ScalarType>& type) {
  return type.has_value() ? dtype(*type) : none();
}

KernelCall& KernelCall::generator(const std::optional<at::Generator>& generator) {
  tb_value value{};
  value.kind = TB_VALUE_RNG;
  philox_slots_.push_back(static_cast<int64_t>(values_.size()));
  generators_.push_back(generator);
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::rng_key(uint64_t seed, uint64_t offset) {
  tb_value value{};
  value.kind = TB_VALUE_RNG;
  value.as.rng.seed = seed;
  value.as.rng.offset = offset;
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::none() {
  tb_value value{};
  value.kind = TB_VALUE_NONE;
  values_.push_back(value);
  return *this;
}

KernelCall& KernelCall::owned_ints(std::vector<int64_t> numbers) {
  int_storage_.push_back(std::move(numbers));
  return ints(at::IntArrayRef(int_storage_.back()));
}

KernelCall& KernelCall::owned_bools(const std::vector<bool>& flags) {
  bool_storage_.emplace_back(flags.begin(), flags.end());
  tb_value value{};
  value.kind = TB_VALUE_BOOL_LIST;
  value.as.bools.items = bool_storage_.back().data();
  value.as.bools.count = static_cast<int64_t>(flags.size());
  values_.push_back(value);
  return *this;
}

const tb_value* KernelCall::shape_values(int32_t* count) {
  if (undescribable_) return nullptr;
  item_pointers_.resize(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); i++) {
    const at::Tensor& t = sources_[i];
    tb_tensor& d = tensors_[i];
    d.data = nullptr;
    if (!t.defined()) {
      d.ndim = -1;
      item_pointers_[i] = nullptr;
      continue;
    }
    item_pointers_[i] = &d;
    bool ok = false;
    d.dtype = to_tb_dtype(t.scalar_type(), &ok);
    if (!ok) return nullptr;
    d.device = t.device().has_index() ? t.device().index() : -1;
    d.ndim = static_cast<int32_t>(t.dim());
    std::vector<int64_t> sizes, strides;
    for (const c10::SymInt& size : t.sym_sizes())
      sizes.push_back(size.guard_int(__FILE__, __LINE__));
    for (const c10::SymInt& stride : t.sym_strides()) {
      strides.push_back(stride.guard_int(__FILE__, __LINE__));
    }
    int_storage_.push_back(std::move(sizes));
    d.sizes = int_storage_.back().data();
    int_storage_.push_back(std::move(strides));
    d.strides = int_storage_.back().data();
  }
  for (tb_value& v : values_) {
    if (v.kind == TB_VALUE_TENSOR) {
      v.as.tensor = &tensors_[static_cast<size_t>(v.as.i)];
    } else if (v.kind == TB_VALUE_TENSOR_LIST) {
      v.as.tensors.items = item_pointers_.data() + reinterpret_cast<uintptr_t>(v.as.tensors.items);
    }
  }
  *count = static_cast<int32_t>(values_.size());
  return values_.data();
}

const at::Tensor* KernelCall::first_tensor() const {
  for (const at::Tensor& t : sources_) {
    if (t.defined()) return &t;
  }
  return nullptr;
}

KernelCall& KernelCall::declines_other_devices() {
  declines_other_devices_ = true;
  return *this;
}

std::optional<c10::Device> KernelCall::check_devices() const {
  std::optional<c10::Device> target;
  for (const at::Tensor& t : sources_) {
    if (t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) {
      target = t.device();
      break;
    }
  }
  TORCH_CHECK(target.has_value(), Vendor::Get().device_type(), ": kernel ", kernel_->name,
              " was called without a tensor of the device");
  size_t next_movable = 0;
  for (size_t i = 0; i < sources_.size(); i++) {
    const bool movable = next_movable < movable_.size() && movable_[next_movable] == i;
    if (movable) next_movable++;
    const at::Tensor& t = sources_[i];
    if (!t.defined() || t.device() == *target) continue;
    if (movable && t.device().is_cpu()) continue;  // host indices move to the device
    if (declines_other_devices_) return std::nullopt;
    fail_device_mismatch(*target, t.device(), names_[i], kernel_->name);
  }
  return target;
}

bool KernelCall::launch() {
  if (undescribable_) {
    note_declined(kernel_->name, "an argument no tb_value carries (a complex number?)");
    return false;
  }
  const at::Tensor* first = first_tensor();
  TORCH_INTERNAL_ASSERT(first != nullptr, "torch_backend: a kernel call without tensors");
  const std::optional<c10::Device> devices = check_devices();
  if (!devices.has_value()) {  // declines_other_devices()
    note_declined(kernel_->name, "tensors on more than one device");
    return false;
  }
  const c10::Device target = *devices;
  bool ok = false;
  tb_dtype first_dtype = to_tb_dtype(first->scalar_type(), &ok);
  if (!ok || (kernel_->dtypes != 0 && !(kernel_->dtypes & TB_DTYPE_BIT(first_dtype)))) {
    note_declined(kernel_->name, c10::str("its first tensor's dtype ", first->scalar_type(),
                                          " is not among the kernel's dtypes"));
    return false;
  }
  for (size_t i : movable_) {
    at::Tensor& t = sources_[i];
    if (t.defined() && t.device().is_cpu()) t = t.to(target);
  }
  // Fill the tensor descriptors (addresses are stable now that all arguments are in), and the
  // pointers tensor lists are made of: NULL for an absent element of a Tensor?[].
  item_pointers_.resize(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); i++) {
    const at::Tensor& t = sources_[i];
    tb_tensor& d = tensors_[i];
    if (!t.defined()) {
      d.data = nullptr;
      d.ndim = -1;
      item_pointers_[i] = nullptr;
      continue;
    }
    d.dtype = to_tb_dtype(t.scalar_type(), &ok);
    if (!ok) {
      note_declined(kernel_->name,
                    c10::str("a tensor of dtype ", t.scalar_type(), ", which no tb_dtype names"));
      return false;
    }
    // A storage shared copy-on-write (torch._lazy_clone) gets its own copy before any kernel
    // sees it: the call does not say which tensors a kernel writes.
    if (t.numel() == 0) {
      d.data = nullptr;
    } else if (C10_UNLIKELY(c10::impl::cow::is_cow_data_ptr(t.storage().data_ptr()))) {
      c10::DeviceGuard guard(t.device());  // the copy is allocated on the current device
      d.data = t.mutable_data_ptr();
    } else {
      d.data = const_cast<void*>(t.const_data_ptr());
    }
    d.device = t.device().index();
    d.ndim = static_cast<int32_t>(t.dim());
    d.sizes = t.sizes().data();
    d.strides = t.strides().data();
    item_pointers_[i] = &d;
  }
  for (tb_value& v : values_) {
    if (v.kind == TB_VALUE_TENSOR) {
      v.as.tensor = &tensors_[static_cast<size_t>(v.as.i)];
    } else if (v.kind == TB_VALUE_TENSOR_LIST) {
      v.as.tensors.items = item_pointers_.data() + reinterpret_cast<uintptr_t>(v.as.tensors.items);
    }
  }
  c10::DeviceIndex device = target.index();
  for (size_t i = 0; i < philox_slots_.size(); i++) {
    const std::optional<at::Generator>& requested = generators_[i];
    at::Generator generator =
        requested.has_value() && requested->defined() ? *requested : default_generator(device);
    TORCH_CHECK(generator.device().type() == c10::DeviceType::PrivateUse1,
                Vendor::Get().device_type(), ": expected a generator of the device, got one of ",
                generator.device());
    std::lock_guard<std::mutex> lock(generator.mutex());
    const uint64_t increment = 4 * static_cast<uint64_t>(std::max<int64_t>(first->numel(), 1));
    auto* philox = generator.get<PhiloxGenerator>();
    tb_value& v = values_[static_cast<size_t>(philox_slots_[i])];
    // Captured into a graph, the kernel reads the generator's state at each replay.
    v.as.rng.device_state =
        graph::capture_philox(device, philox, increment, v.as.rng.seed, v.as.rng.offset);
    if (v.as.rng.device_state == nullptr) {
      std::tie(v.as.rng.seed, v.as.rng.offset) = philox->philox_inputs(increment);
    }
  }
  const Vendor& vendor = Vendor::Use(kernel_->name);
  Workspace workspace;
  workspace.device = device;
  tb_kernel_call call{};
  call.struct_size = sizeof call;
  call.stream = current_vendor_stream(device);
  call.args = values_.data();
  call.num_args = static_cast<int32_t>(values_.size());
  call.kernel = kernel_;
  call.workspace = &Workspace::Allocate;
  call.host_private = &workspace;
  std::optional<profiler::Activity> activity;
  if (C10_UNLIKELY(profiler::active())) {
    activity.emplace(profiler::Kind::kKernel, kernel_->name, current_stream(device));
  }
  tb_status status = kernel_->fn(vendor.context(), &call);
  if (activity.has_value() && status == TB_OK) activity->finish();
  // The workspace's blocks go back to the cache when `workspace` goes out of scope, on the
  // call's stream: reused only by work ordered after this kernel's.
  if (status == TB_OK) {
    if (calls_ != nullptr) calls_->fetch_add(1, std::memory_order_relaxed);
    if (C10_UNLIKELY(graph::capturing_any())) graph::note_captured_op(device, kernel_->name);
    return true;
  }
  if (status == TB_ERROR_NOT_SUPPORTED) {
    const char* why = vendor.last_error();
    note_declined(kernel_->name, why != nullptr && *why != '\0' ? why : "TB_ERROR_NOT_SUPPORTED");
    return false;
  }
  // A workspace request that failed explains the kernel's failure best: the allocator's own
  // error (torch.OutOfMemoryError with the device's figures), naming the kernel.
  workspace.Rethrow(vendor, kernel_->name);
  vendor.Fail(kernel_->name, status, c10::str(values_.size(), " arguments"));
}

// ---------------------------------------------------------------------------------------------
// Workspace (vendor.h, tb_kernel_call::workspace)

tb_status KernelCall::Workspace::Allocate(const tb_kernel_call* call, size_t bytes,
                                          void** ptr) noexcept {
  if (call == nullptr || call->host_private == nullptr || ptr == nullptr) {
    return TB_ERROR_INVALID_ARGUMENT;
  }
  auto* self = static_cast<Workspace*>(call->host_private);
  if (bytes == 0) {
    *ptr = nullptr;
    return TB_OK;
  }
  try {
    // The allocator allocates on the current device, on its current stream: the call's.
    c10::OptionalDeviceGuard guard;
    if (self->device != current_device()) guard.reset_device(make_device(self->device));
    c10::DataPtr block = device_allocator()->allocate(bytes);
    *ptr = block.get();
    self->blocks.push_back(std::move(block));
    return TB_OK;
  } catch (const c10::OutOfMemoryError& e) {
    self->failure = std::current_exception();
    self->failure_bytes = bytes;
    return TB_ERROR_OUT_OF_MEMORY;
  } catch (const c10::AcceleratorError& e) {
    self->failure = std::current_exception();
    self->failure_bytes = bytes;
    return static_cast<tb_status>(e.get_error_code());
  } catch (...) {
    self->failure = std::current_exception();
    self->failure_bytes = bytes;
    return TB_ERROR_INTERNAL;
  }
}

void KernelCall::Workspace::Rethrow(const Vendor& vendor, const char* kernel) const {
  if (failure == nullptr) return;
  try {
    std::rethrow_exception(failure);
  } catch (const c10::OutOfMemoryError& e) {
    C10_THROW_ERROR(
        OutOfMemoryError,
        c10::str(vendor.device_type(), ": kernel ", kernel, ": its workspace of ", failure_bytes,
                 " bytes could not be allocated: ", e.what_without_backtrace()));
  }
}

// ---------------------------------------------------------------------------------------------
// WriteCheck

void WriteCheck::add(c10::SmallVectorImpl<c10::TensorImpl*>& to, const at::Tensor& tensor) {
  if (tensor.defined() && tensor.has_storage() && tensor.numel() > 0) {
    to.push_back(tensor.unsafeGetTensorImpl());
  }
}

WriteCheck& WriteCheck::output(const at::Tensor& tensor) {
  add(outputs_, tensor);
  return *this;
}

WriteCheck& WriteCheck::output(const std::optional<at::Tensor>& tensor) {
  if (tensor.has_value()) add(outputs_, *tensor);
  return *this;
}

WriteCheck& WriteCheck::output(at::ITensorListRef tensors) {
  for (const at::Tensor& t : tensors) add(outputs_, t);
  return *this;
}

WriteCheck& WriteCheck::input(const at::Tensor& tensor) {
  add(inputs_, tensor);
  return *this;
}

WriteCheck& WriteCheck::input(const std::optional<at::Tensor>& tensor) {
  if (tensor.has_value()) add(inputs_, *tensor);
  return *this;
}

WriteCheck& WriteCheck::input(at::ITensorListRef tensors) {
  for (const at::Tensor& t : tensors) add(inputs_, t);
  return *this;
}

WriteCheck& WriteCheck::input(const c10::List<std::optional<at::Tensor>>& tensors) {
  for (size_t i = 0; i < tensors.size(); i++) {
    const std::optional<at::Tensor> element = tensors.get(i);  // the list keeps the tensor
    if (element.has_value()) add(inputs_, *element);
  }
  return *this;
}

bool WriteCheck::safe(std::string_view op) const {
  if (overlap_free()) return true;
  note_kept_back(op, "an output shares memory with an input or another output");
  return false;
}

bool WriteCheck::overlap_free() const {
  // Tensors by storage, so that only tensors of one storage are compared (a fused optimizer
  // step writes hundreds of tensors): (storage, is an output, tensor).
  c10::SmallVector<std::tuple<const c10::StorageImpl*, bool, c10::TensorImpl*>, 16> all;
  for (c10::TensorImpl* out : outputs_) {
    if (at::has_internal_overlap(out) == at::MemOverlap::Yes) return false;
    all.emplace_back(out->storage().unsafeGetStorageImpl(), true, out);
  }
  if (all.empty()) return true;
  for (c10::TensorImpl* in : inputs_) {
    all.emplace_back(in->storage().unsafeGetStorageImpl(), false, in);
  }
  std::sort(all.begin(), all.end());
  for (size_t begin = 0; begin < all.size();) {
    size_t end = begin + 1;
    while (end < all.size() && std::get<0>(all[end]) == std::get<0>(all[begin])) end++;
    for (size_t a = begin; a < end; a++) {
      auto [storage, a_out, out] = all[a];
      if (!a_out) continue;
      for (size_t b = begin; b < end; b++) {
        auto [other_storage, b_out, other] = all[b];
        if (b == a || (b_out && b < a)) continue;  // each pair of outputs once
        const at::MemOverlapStatus status = at::get_overlap_status(out, other);
        if (status == at::MemOverlapStatus::No) continue;
        // The very same elements as an input: an elementwise kernel reads each element before
        // it writes it.
        if (!b_out && elementwise_ && status == at::MemOverlapStatus::Full &&
            out->sizes() == other->sizes() && out->strides() == other->strides()) {
          continue;
        }
        return false;
      }
    }
    begin = end;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Structured-kernel helpers

at::Tensor create_out(at::IntArrayRef sizes, at::IntArrayRef strides,
                      const at::TensorOptions& options) {
  // The allocator allocates on the current device: switch only when it differs.
  c10::OptionalDeviceGuard guard;
  if (options.device().index() != current_device()) guard.reset_device(options.device());
  if (strides.empty()) {
    return at::detail::empty_generic(sizes, device_allocator(),
                                     c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                     options.dtype().toScalarType(), options.memory_format_opt());
  }
  return at::detail::empty_strided_generic(sizes, strides, device_allocator(),
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           options.dtype().toScalarType());
}

void resize_out(const at::Tensor& out, at::IntArrayRef sizes, at::IntArrayRef strides,
                const at::TensorOptions& options) {
  TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(),
              ", but got ", out.dtype(), " instead");
  TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ",
              options.device(), ", but got ", out.device(), " instead");
  const bool resized = at::native::resize_output(out, sizes);
  if (resized) {
    if (!strides.empty()) {
      TORCH_INTERNAL_ASSERT(!options.memory_format_opt().has_value());
      at::native::as_strided__symint(out, c10::fromIntArrayRefSlow(sizes),
                                     c10::fromIntArrayRefSlow(strides));
    } else if (options.memory_format_opt().has_value()) {
      out.unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
    }
  }
}

void check_inplace(const at::Tensor& self, at::IntArrayRef sizes,
                   const at::TensorOptions& options) {
  TORCH_CHECK(options.dtype() == self.dtype(), "Bad in-place call: input tensor dtype ",
              self.dtype(), " and output tensor dtype ", options.dtype(), " should match");
  TORCH_CHECK(options.device() == self.device(), "Bad in-place call: input tensor device ",
              self.device(), " and output tensor device ", options.device(), " should match");
  TORCH_CHECK(sizes == self.sizes(), "Bad in-place call: input tensor size ", self.sizes(),
              " and output tensor size ", sizes, " should match");
}

at::Tensor to_meta(const at::Tensor& tensor) {
  if (!tensor.defined()) return tensor;
  return at::empty_strided(tensor.sizes(), tensor.strides(),
                           tensor.options().device(c10::DeviceType::Meta));
}

std::optional<at::Tensor> to_meta(const std::optional<at::Tensor>& tensor) {
  if (!tensor.has_value()) return std::nullopt;
  return to_meta(*tensor);
}

std::vector<at::Tensor> to_meta(at::ITensorListRef tensors) {
  std::vector<at::Tensor> metas;
  for (const at::Tensor& t : tensors) metas.push_back(to_meta(t));
  return metas;
}

c10::List<std::optional<at::Tensor>> to_meta(const c10::List<std::optional<at::Tensor>>& tensors) {
  c10::List<std::optional<at::Tensor>> metas;
  for (size_t i = 0; i < tensors.size(); i++) metas.push_back(to_meta(tensors.get(i)));
  return metas;
}

at::Tensor empty_like_meta(const at::Tensor& meta, c10::Device device) {
  if (!meta.defined()) return meta;
  return create_out(meta.sizes(), meta.strides(), meta.options().device(device));
}

// ---------------------------------------------------------------------------------------------
// Meta cache

void MetaKey::add(const at::Tensor& tensor) {
  if (!tensor.defined()) {
    word(-1);
    return;
  }
  word(tensor.dim());
  word(static_cast<int64_t>(tensor.scalar_type()));
  word(static_cast<int64_t>(tensor.device().type()));
  for (int64_t size : tensor.sizes()) word(size);
  for (int64_t stride : tensor.strides()) word(stride);
}

void MetaKey::add(const std::optional<at::Tensor>& tensor) {
  if (tensor.has_value()) {
    add(*tensor);
  } else {
    word(-2);
  }
}

void MetaKey::add(at::ITensorListRef tensors) {
  word(static_cast<int64_t>(tensors.size()));
  for (const at::Tensor& t : tensors) add(t);
}

void MetaKey::add(const c10::List<std::optional<at::Tensor>>& tensors) {
  word(static_cast<int64_t>(tensors.size()));
  for (size_t i = 0; i < tensors.size(); i++) add(tensors.get(i));
}

void MetaKey::add(const at::Scalar& value) {
  word(static_cast<int64_t>(value.type()));
  if (value.isFloatingPoint()) {
    add(value.toDouble());
  } else if (value.isIntegral(true)) {
    word(value.toLong());
  }
}

void MetaKey::add(const std::optional<at::Scalar>& value) {
  word(value.has_value() ? 1 : 0);
  if (value.has_value()) add(*value);
}

void MetaKey::add(c10::SymIntArrayRef values) { add(C10_AS_INTARRAYREF_SLOW(values)); }

void MetaKey::add(at::IntArrayRef values) {
  word(static_cast<int64_t>(values.size()));
  for (int64_t v : values) word(v);
}

void MetaKey::add(at::OptionalIntArrayRef values) {
  word(values.has_value() ? 1 : 0);
  if (values.has_value()) add(*values);
}

void MetaKey::add(at::OptionalSymIntArrayRef values) {
  word(values.has_value() ? 1 : 0);
  if (values.has_value()) add(*values);
}

void MetaKey::add(std::string_view value) {
  word(static_cast<int64_t>(value.size()));
  for (size_t i = 0; i < value.size(); i += sizeof(int64_t)) {
    int64_t packed = 0;
    std::memcpy(&packed, value.data() + i, std::min(sizeof packed, value.size() - i));
    word(packed);
  }
}

uint64_t MetaKey::hash() const {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ words_.size();
  for (int64_t w : words_) {
    h = (h ^ static_cast<uint64_t>(w)) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  return h;
}

void MetaKey::add(const std::optional<std::string_view>& value) {
  word(value.has_value() ? 1 : 0);
  if (value.has_value()) add(*value);
}

void MetaKey::add(const std::optional<at::Generator>& /*generator*/) {}  // never shapes outputs

void MetaKey::add(const c10::SymInt& value) { word(value.guard_int(__FILE__, __LINE__)); }

void MetaKey::add_ivalue(const c10::IValue& value) {
  // A kind code first, so that payloads of different kinds never collide.
  if (value.isTensor()) {
    const at::Tensor& tensor = value.toTensor();
    // A wrapped number (a Python scalar) promotes differently from a 0-dim tensor.
    word(tensor.defined() && tensor.unsafeGetTensorImpl()->is_wrapped_number() ? 9 : 1);
    add(tensor);
  } else if (value.isInt()) {
    word(2);
    word(value.toInt());
  } else if (value.isSymInt()) {
    word(2);
    add(value.toSymInt());
  } else if (value.isDouble()) {
    word(3);
    add(value.toDouble());
  } else if (value.isBool()) {
    word(4);
    word(value.toBool() ? 1 : 0);
  } else if (value.isString()) {
    word(5);
    add(std::string_view(value.toStringRef()));
  } else if (value.isList()) {
    word(6);
    c10::ArrayRef<c10::IValue> elements = value.toListRef();
    word(static_cast<int64_t>(elements.size()));
    for (const c10::IValue& element : elements) add_ivalue(element);
  } else if (value.isDevice()) {
    word(7);
    word(static_cast<int64_t>(value.toDevice().type()));
    word(value.toDevice().index());
  } else {
    word(value.isNone() ? 0 : 8);  // None; generators (they never shape outputs)
  }
}

at::Tensor OutputMeta::allocate(c10::Device device) const {
  if (!defined) return at::Tensor();
  return create_out(sizes, strides, at::TensorOptions().dtype(dtype).device(device));
}

std::vector<OutputMeta> MetaCache::record(const std::vector<at::Tensor>& outputs) {
  std::vector<OutputMeta> metas;
  for (const at::Tensor& output : outputs) metas.push_back(record(output).front());
  return metas;
}

std::vector<OutputMeta> MetaCache::record(const at::Tensor& output) {
  OutputMeta meta;
  if (output.defined()) {
    meta.defined = true;
    meta.sizes = output.sizes().vec();
    meta.strides = output.strides().vec();
    meta.dtype = output.scalar_type();
  }
  return {std::move(meta)};
}

MetaCache::Outputs MetaCache::find(const MetaKey& key) {
  const uint64_t hash = key.hash();
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, end] = entries_.equal_range(hash);
  for (; it != end; ++it) {
    const std::vector<int64_t>& words = it->second.words;
    if (words.size() == key.size() &&
        std::memcmp(words.data(), key.words(), key.size() * sizeof(int64_t)) == 0) {
      return it->second.outputs;
    }
  }
  return nullptr;
}

MetaCache::Outputs MetaCache::insert(const MetaKey& key, std::vector<OutputMeta> outputs) {
  constexpr size_t kCapacity = 512;  // shapes a program cycles through; beyond it, start over
  auto entry = std::make_shared<const std::vector<OutputMeta>>(std::move(outputs));
  std::vector<int64_t> words(key.words(), key.words() + key.size());
  const uint64_t hash = key.hash();
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.size() >= kCapacity) entries_.clear();  // callers hold their own references
  entries_.emplace(hash, Entry{std::move(words), entry});
  return entry;
}

at::ScalarType from_tb_dtype(tb_dtype dtype) {
  static constexpr at::ScalarType kTypes[TB_DTYPE_COUNT] = {
      at::kBool, at::kByte, at::kChar,     at::kShort, at::kInt,
      at::kLong, at::kHalf, at::kBFloat16, at::kFloat, at::kDouble};
  TORCH_INTERNAL_ASSERT(dtype >= 0 && dtype < TB_DTYPE_COUNT, "torch_backend: dtype ",
                        static_cast<int>(dtype));
  return kTypes[dtype];
}

void fail_device_mismatch(c10::Device expected, c10::Device found, const char* argument,
                          std::string_view method) {
  TORCH_CHECK(false,
              "Expected all tensors to be on the same device, but found at least two devices, ",
              expected, " and ", found, "! (when checking argument for argument ",
              argument != nullptr ? argument : "(unnamed)", " in method ", method, ")");
}

c10::Device device_of_arguments(std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* t : tensors) {
    if (t->defined() && t->device().type() == c10::DeviceType::PrivateUse1) return t->device();
  }
  return make_device(current_device());
}

}  // namespace torch_backend
