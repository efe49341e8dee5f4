// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Calling vendor kernels (vendor.h, "Kernels"): the kernel table resolved once at load, the
// argument packing from ATen values to tb_value descriptors and one tb_kernel_call (with the
// workspace allocator), and the helpers the generated operator wrappers (codegen/) share:
// output allocation for structured kernels' meta classes, elementwise operand preparation,
// and the route to the CPU fallback.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/SmallVector.h>
#include <torch/library.h>
#include <torch_backend/vendor.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace torch_backend {

class Vendor;

// ---------------------------------------------------------------------------------------------
// The kernel table.

// Index of `name` in the vendor's kernel table, or -1.  Valid after register_vendor_kernels().
const tb_kernel* find_kernel(std::string_view name);

// Resolves the vendor's kernels and registers a PrivateUse1 implementation for every operator
// (generated or built in) whose kernel the vendor provides.  Called once, when the vendor is
// loaded; later calls do nothing.
void register_vendor_kernels();

// Per operator: "native" (a PrivateUse1 kernel: vendor kernel or built in), "refused" (the
// vendor's kernel for it was refused at load; it runs through the CPU fallback), "fallback"
// (runs through the CPU fallback) or "unsupported" (no kernel and no CPU implementation).  With
// no names, every operator torch_backend knows (codegen/ops.yaml, the built-in ones, those
// registered through the boxed wrapper, refused kernels and custom operators).
std::vector<std::pair<std::string, std::string>> op_coverage(const std::vector<std::string>& ops);

// Successful launches per vendor kernel since the last reset, for kernels launched at least once.
std::vector<std::pair<std::string, int64_t>> kernel_counts();
void reset_kernel_counts();

// Per generated operator wrapper: the operator ("add.Tensor") and the vendor kernel it calls
// ("add.out"), whether or not the vendor provides it.
std::vector<std::pair<std::string, std::string>> op_kernels();

// Kernels refused at load (ABI 2.0: a schema that differs from this torch's, an operator this
// torch lacks, arguments no tb_value carries), with the reason; the operators they would serve
// run on the CPU fallback.
std::vector<std::pair<std::string, std::string>> refused_kernels();
// Kernels published without a schema (tb_kernel::schema NULL): used unchecked.
std::vector<std::string> unchecked_kernels();

// The launch counter of a kernel without a compiled wrapper (boxed and custom operators),
// created on first request; kernel_counts() reports it under `name`.
std::atomic<uint64_t>* kernel_counter(const std::string& name);

// The boxed CPU fallback (aten/Fallback.cpp), for wrappers whose kernel declined a call.
void cpu_fallback_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// ---------------------------------------------------------------------------------------------
// Packing and launching.

class KernelCall {
 public:
  // `calls`, when given, counts the call's successful launches.
  explicit KernelCall(const tb_kernel* kernel, std::atomic<uint64_t>* calls = nullptr)
      : kernel_(kernel), calls_(calls) {}

  // Tensor arguments take the argument's name, for the error that a tensor on another device
  // raises at launch: every device tensor of a call must be on the device of its first one, as
  // CUDA's generated wrappers check (a CPU 0-dim tensor is a number, not a tensor, here).
  KernelCall& tensor(const at::Tensor& tensor, const char* name = nullptr);
  KernelCall& tensor(const std::optional<at::Tensor>& tensor, const char* name = nullptr);
  KernelCall& tensors(at::ITensorListRef tensors, const char* name = nullptr);
  // A Tensor?[] argument (index tensors): host tensors in it are copied to the device of the
  // call's first device tensor at launch, as ATen moves indices to self's device.
  KernelCall& tensors(const c10::List<std::optional<at::Tensor>>& tensors,
                      const char* name = nullptr);
  // An elementwise operand: a CPU scalar becomes a scalar value in `common`'s kind (the call
  // declines a complex one); a device tensor is cast to `common` and broadcast to `shape`.
  KernelCall& operand(const at::Tensor& tensor, at::ScalarType common, at::IntArrayRef shape,
                      const char* name = nullptr);
  KernelCall& scalar(const at::Scalar& value);
  KernelCall& scalar(const std::optional<at::Scalar>& value);
  KernelCall& integer(int64_t value);
  KernelCall& integer(const std::optional<int64_t>& value);
  KernelCall& integer(const c10::SymInt& value);
  KernelCall& real(double value);
  KernelCall& real(const std::optional<double>& value);
  KernelCall& boolean(bool value);
  KernelCall& boolean(const std::optional<bool>& value);
  KernelCall& ints(at::IntArrayRef values);
  KernelCall& ints(c10::SymIntArrayRef values);
  KernelCall& ints(at::OptionalIntArrayRef values);
  KernelCall& ints(at::OptionalSymIntArrayRef values);
  template <size_t N>
  KernelCall& bools(std::array<bool, N> values) {
    return bool_list(values.data(), N);
  }
  KernelCall& string(std::string_view value);
  KernelCall& string(const std::optional<std::string_view>& value);
  KernelCall& dtype(at::ScalarType value);
  KernelCall& dtype(const std::optional<at::ScalarType>& value);
  // A Generator? argument: reserves 4 * numel(first tensor argument) counter values.
  KernelCall& generator(const std::optional<at::Generator>& generator);
  // A random key the caller reserved itself (a kernel whose counters are not 4 * numel of its
  // first tensor, or an operator without a Generator argument).
  KernelCall& rng_key(uint64_t seed, uint64_t offset);
  KernelCall& none();
  // Tensors on more than one device make the call decline (launch returns false) instead of
  // raising: for operators whose declined calls run another path that takes them (a
  // _foreach_ operator's per-tensor path, as on CUDA; codegen/ops.yaml, declined:).
  KernelCall& declines_other_devices();
  // Lists the call keeps (the other list methods point at the caller's memory): the boxed
  // wrappers' arguments, unpacked from IValues.
  KernelCall& owned_ints(std::vector<int64_t> values);
  KernelCall& owned_bools(const std::vector<bool>& values);

  // The arguments as a shape function (ABI 2.0, tb_shape_fn) receives them: tensor descriptors
  // with data NULL, for tensors of any device (meta and fake tensors included), symbolic sizes
  // and strides specialised to their values.  Valid while this KernelCall lives; *count
  // receives the number of values.  Returns nullptr when an argument has no descriptor.
  const tb_value* shape_values(int32_t* count);

  // Enqueues the kernel on the current stream of the first device tensor argument's device.
  // Returns false when the kernel declines (dtype outside its mask, or TB_ERROR_NOT_SUPPORTED),
  // in which case nothing was enqueued; throws for any other failure (torch.OutOfMemoryError
  // with the allocator's message when a workspace request failed) and, before enqueueing
  // anything, for a tensor on another device (CUDA's "Expected all tensors to be on the same
  // device" message, naming the argument; a decline after declines_other_devices()).
  bool launch();

 private:
  // tb_kernel_call::workspace: blocks of the caching allocator on the call's device and
  // stream, held until the launch returns.
  struct Workspace {
    c10::DeviceIndex device;
    c10::SmallVector<c10::DataPtr, 2> blocks;
    std::exception_ptr failure;  // a request that failed, for the error the launch raises
    size_t failure_bytes = 0;
    static tb_status Allocate(const tb_kernel_call* call, size_t bytes, void** ptr) noexcept;
    void Rethrow(const Vendor& vendor, const char* kernel) const;
  };

  KernelCall& bool_list(const bool* values, size_t count);
  // An argument no tb_value describes (a complex number, a dtype outside tb_dtype): the call
  // declines at launch (and has no shape values).
  KernelCall& undescribable();
  const at::Tensor* first_tensor() const;
  void add_tensor(at::Tensor tensor, const char* name);
  // The device every tensor must be on: the first device tensor's; raises for one elsewhere,
  // or returns nullopt where declines_other_devices() was called.
  std::optional<c10::Device> check_devices() const;

  const tb_kernel* kernel_;
  std::atomic<uint64_t>* calls_;
  bool undescribable_ = false;
  bool declines_other_devices_ = false;
  c10::SmallVector<tb_value, 12> values_;
  c10::SmallVector<tb_tensor, 8> tensors_;  // values of kind TENSOR(_LIST) index into this
  c10::SmallVector<const tb_tensor*, 8> item_pointers_;  // &tensors_[i], or NULL if absent
  c10::SmallVector<at::Tensor, 8> sources_;  // the tensor behind each tensors_ entry (held)
  c10::SmallVector<const char*, 8> names_;   // each sources_ entry's argument name, or NULL
  c10::SmallVector<size_t, 4> movable_;      // sources_ entries from Tensor?[] lists
  std::list<std::vector<int>> bool_storage_;
  std::list<std::vector<int64_t>> int_storage_;  // owned_ints and shape_values' sizes
  std::list<std::string> string_storage_;
  c10::SmallVector<int64_t, 8> philox_slots_;  // values_ indices of RNG arguments to resolve
  std::vector<std::optional<at::Generator>> generators_;
};

// ---------------------------------------------------------------------------------------------
// Writes a kernel may make (vendor.h, "Aliasing and contiguity"): no output overlaps itself or
// another output, and none shares memory with an input, except as the very same elements of an
// elementwise operation (`a.add_(a)`, `torch.add(a, b, out=a)`).  An in-place operand is the
// output and is not listed as an input.  A call whose writes are not safe goes to the CPU
// fallback, whose host copies keep the aliasing: the CPU raises where it raises for CPU tensors
// ("unsupported operation: some elements of the input tensor and the written-to tensor refer to
// a single memory location") and computes what it computes where it allows the overlap.
class WriteCheck {
 public:
  explicit WriteCheck(bool elementwise) : elementwise_(elementwise) {}
  WriteCheck& output(const at::Tensor& tensor);
  WriteCheck& output(const std::optional<at::Tensor>& tensor);
  WriteCheck& output(at::ITensorListRef tensors);
  WriteCheck& input(const at::Tensor& tensor);
  WriteCheck& input(const std::optional<at::Tensor>& tensor);
  WriteCheck& input(at::ITensorListRef tensors);
  WriteCheck& input(const c10::List<std::optional<at::Tensor>>& tensors);
  // Whether the writes are safe; when not, notes for the fallback's warning that `op`'s call
  // was kept from the vendor's kernel, and why.
  bool safe(std::string_view op) const;

 private:
  void add(c10::SmallVectorImpl<c10::TensorImpl*>& to, const at::Tensor& tensor);
  bool overlap_free() const;
  bool elementwise_;
  c10::SmallVector<c10::TensorImpl*, 4> outputs_;
  c10::SmallVector<c10::TensorImpl*, 8> inputs_;
};

// ---------------------------------------------------------------------------------------------
// Helpers for generated structured-kernel wrappers (the set_output functions of meta classes,
// as ATen's own generated code has them).

// A new device tensor for a functional variant's output (the guard follows `options`).
at::Tensor create_out(at::IntArrayRef sizes, at::IntArrayRef strides,
                      const at::TensorOptions& options);
// Checks and resizes an out= argument.
void resize_out(const at::Tensor& out, at::IntArrayRef sizes, at::IntArrayRef strides,
                const at::TensorOptions& options);
// Checks that an in-place variant's self can hold the result.
void check_inplace(const at::Tensor& self, at::IntArrayRef sizes, const at::TensorOptions& options);
// Meta copies of arguments, to run ATen's meta functions for shapes.
at::Tensor to_meta(const at::Tensor& tensor);
std::optional<at::Tensor> to_meta(const std::optional<at::Tensor>& tensor);
std::vector<at::Tensor> to_meta(at::ITensorListRef tensors);
c10::List<std::optional<at::Tensor>> to_meta(const c10::List<std::optional<at::Tensor>>& tensors);
template <typename T>
const T& to_meta(const T& value) {
  return value;
}
// A device tensor shaped like meta tensor `meta` (undefined stays undefined).
at::Tensor empty_like_meta(const at::Tensor& meta, c10::Device device);

// Memoized meta functions.  Operators without a structured meta class get their output
// shapes from their Meta kernel, often a Python decomposition costing tens of microseconds;
// training repeats the same shapes, so each wrapper caches the outputs' metadata by the
// arguments' metadata (tensor sizes, strides, dtypes; every other argument's value).
class MetaKey {
 public:
  void add(const at::Tensor& tensor);
  void add(const std::optional<at::Tensor>& tensor);
  void add(at::ITensorListRef tensors);
  void add(const c10::List<std::optional<at::Tensor>>& tensors);
  void add(const at::Scalar& value);
  void add(const std::optional<at::Scalar>& value);
  void add(c10::SymIntArrayRef values);
  void add(at::IntArrayRef values);
  void add(at::OptionalIntArrayRef values);
  void add(at::OptionalSymIntArrayRef values);
  void add(std::string_view value);
  void add(const std::optional<std::string_view>& value);
  void add(const std::optional<at::Generator>& generator);
  void add(const c10::SymInt& value);
  // Any argument of a boxed call: tensors by metadata, lists element by element, other
  // values by value.
  void add_ivalue(const c10::IValue& value);
  template <size_t N>
  void add(std::array<bool, N> values) {
    for (bool v : values) word(v ? 1 : 0);
  }
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>>>
  void add(T value) {
    if constexpr (std::is_floating_point_v<T>) {
      double real = static_cast<double>(value);
      int64_t bits = 0;
      std::memcpy(&bits, &real, sizeof bits);
      word(bits);
    } else {
      word(static_cast<int64_t>(value));
    }
  }
  template <typename T>
  void add(const std::optional<T>& value) {
    word(value.has_value() ? 1 : 0);
    if (value.has_value()) add(*value);
  }
  const int64_t* words() const { return words_.data(); }
  size_t size() const { return words_.size(); }
  uint64_t hash() const;

 private:
  void word(int64_t value) { words_.push_back(value); }
  // Inline room for the keys of ordinary calls (a few tensors of up to 4 dimensions and their
  // scalars): building a key allocates nothing.
  c10::SmallVector<int64_t, 48> words_;
};

// The metadata of one output of a meta function.
struct OutputMeta {
  bool defined = false;
  std::vector<int64_t> sizes, strides;
  at::ScalarType dtype = at::ScalarType::Undefined;
  at::Tensor allocate(c10::Device device) const;  // undefined when !defined
};

class MetaCache {
 public:
  using Outputs = std::shared_ptr<const std::vector<OutputMeta>>;

  // The outputs recorded for `key`, computing them with `compute` (which returns the meta
  // outputs) on a miss.
  template <typename Compute>
  Outputs get(const MetaKey& key, Compute&& compute) {
    if (Outputs hit = find(key)) return hit;
    return insert(key, record(compute()));
  }

 private:
  static std::vector<OutputMeta> record(const at::Tensor& output);
  static std::vector<OutputMeta> record(const std::vector<at::Tensor>& outputs);
  template <typename... Ts>
  static std::vector<OutputMeta> record(const std::tuple<Ts...>& outputs) {
    std::vector<OutputMeta> metas;
    std::apply([&](const auto&... o) { (metas.push_back(record(o).front()), ...); }, outputs);
    return metas;
  }
  Outputs find(const MetaKey& key);
  Outputs insert(const MetaKey& key, std::vector<OutputMeta> outputs);

  struct Entry {
    std::vector<int64_t> words;
    Outputs outputs;
  };
  std::mutex mutex_;
  // By the key's hash, so that a lookup builds no key object; entries with the same hash are
  // told apart by their words.
  std::unordered_multimap<uint64_t, Entry> entries_;
};
// The device of the first device tensor among the arguments.
c10::Device device_of_arguments(std::initializer_list<const at::Tensor*> tensors);

// CUDA's error for a tensor on another device than the call's (`expected`), word for word
// with the device's name, so that what users search for finds it: "Expected all tensors to be
// on the same device, but found at least two devices, emu:0 and emu:1! (when checking
// argument for argument mat2 in method mm.out)".
[[noreturn]] void fail_device_mismatch(c10::Device expected, c10::Device found,
                                       const char* argument, std::string_view method);

// The ATen dtype of a tb_dtype (ABI values are checked by the caller to be below
// TB_DTYPE_COUNT).
at::ScalarType from_tb_dtype(tb_dtype dtype);

// The tb_dtype of an ATen dtype; nullopt for one the ABI has no value for.
std::optional<tb_dtype> tb_dtype_of(at::ScalarType type);

}  // namespace torch_backend
