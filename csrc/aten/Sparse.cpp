// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Sparse tensors on the device, as CUDA has them: COO (SparsePrivateUse1, a SparseTensorImpl
// whose indices, int64 [sparse_dim, nnz], and values, [nnz, dense dims...], are dense device
// tensors) and the compressed layouts CSR, CSC, BSR and BSC (SparseCsrPrivateUse1, a
// SparseCsrTensorImpl whose compressed indices, plain indices and values are dense device
// tensors).
//
// - Construction, metadata and resizing are ATen's own device-generic implementations,
//   registered for the device's sparse key.  A sparse tensor's parts live on its device:
//   torch.sparse_coo_tensor(..., device=...) and .to(device) build one through
//   _sparse_coo_tensor_with_dims_and_tensors.
// - Copies between sparse tensors (copy_, and so .to() across devices) move the indices and
//   values through the device's dense copies.
// - Every other operator on sparse device tensors (coalesce, to_dense, add, mul, mm with a
//   dense operand, sum, the backward of torch.sparse.mm...) runs on the CPU's sparse kernels
//   through the boxed fallback below: sparse and dense device arguments to the CPU, the
//   operator there, results back to the device of the first device argument, written
//   arguments copied back.  It is counted and governed like every other CPU fallback
//   (TORCH_BACKEND_FALLBACK), and a vendor needs no kernel for it.
// - The compressed layouts are built by ATen's own constructor (torch.sparse_csr_tensor(...,
//   device=...), .to(device)); their metadata is ATen's device-generic implementation, and
//   the rest (to_dense, to_sparse_csr, mm, add...) runs through the same boxed fallback,
//   registered for their key too.
#include <ATen/SparseCsrTensorImpl.h>
#include <ATen/SparseCsrTensorUtils.h>
#include <ATen/SparseTensorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/SparseTensorUtils.h>
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/ccol_indices_native.h>
#include <ATen/ops/col_indices_native.h>
#include <ATen/ops/crow_indices_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/row_indices_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/values_native.h>
#include <torch/library.h>

#include "aten/Fallback.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

using at::Tensor;

// copy_ into a sparse device tensor, from a sparse tensor anywhere: ATen's copy_sparse_ rules
// (same sizes after the copy, the source's sparse and dense dims, its coalesced flag), the
// indices and values through the dense copies to the destination's device.
Tensor& copy_sparse(Tensor& self, const Tensor& src, bool non_blocking) {
  TORCH_CHECK(src.is_sparse(), Vendor::Get().device_type(),
              ": copy_ into a sparse tensor takes a sparse source, got a ", src.layout(), " one");
  if (self.is_same(src)) return self;
  Tensor indices = src._indices().to(self.device(), at::kLong, non_blocking, /*copy=*/true);
  Tensor values = src._values().to(self.device(), self.scalar_type(), non_blocking, /*copy=*/true);
  at::SparseTensorImpl* impl = at::sparse::get_sparse_impl(self);
  impl->resize_(src.sparse_dim(), src.dense_dim(), src.sizes());
  impl->set_indices_and_values_unsafe(indices, values);
  impl->set_coalesced(src.is_coalesced());
  return self;
}

// A sparse device tensor's CPU twin (its own copies of the indices and values).
Tensor sparse_to_cpu(const Tensor& t) {
  Tensor host = at::native::new_with_dims_and_tensor_sparse_symint(
      t.sparse_dim(), t.dense_dim(), t.sym_sizes(), t._indices().cpu(), t._values().cpu(),
      t.scalar_type(), at::kSparse, at::kCPU, std::nullopt, t.is_coalesced());
  return host;
}

bool is_compressed(const Tensor& t) {
  const c10::Layout layout = t.layout();
  return layout == c10::kSparseCsr || layout == c10::kSparseCsc || layout == c10::kSparseBsr ||
         layout == c10::kSparseBsc;
}

// A compressed device tensor takes the compressed indices, plain indices and values of `src`
// (a CPU result of the same layout), copied to its device.
void set_compressed(const Tensor& self, const Tensor& src) {
  TORCH_CHECK(src.layout() == self.layout(), Vendor::Get().device_type(), ": a ", self.layout(),
              " tensor cannot take the result of layout ", src.layout());
  auto [compressed, plain] = at::sparse_csr::getCompressedPlainIndices(src);
  at::sparse_csr::get_sparse_csr_impl(self)->set_member_tensors(
      compressed.to(self.device()), plain.to(self.device()), src.values().to(self.device()),
      src.sym_sizes());
}

Tensor to_device(const Tensor& t, c10::Device device) {
  if (!t.is_sparse()) return t.to(device);  // dense, or compressed (ATen's constructor)
  return at::native::new_with_dims_and_tensor_sparse_symint(
      t.sparse_dim(), t.dense_dim(), t.sym_sizes(), t._indices().to(device), t._values().to(device),
      t.scalar_type(), at::kSparse, device, std::nullopt, t.is_coalesced());
}

// A written sparse device argument takes the CPU kernel's result.
void write_back(const Tensor& target, const Tensor& host) {
  if (target.is_sparse()) {
    Tensor t = target;
    copy_sparse(t, host, /*non_blocking=*/false);
  } else if (is_compressed(target)) {
    set_compressed(target, host);
  } else {
    if (!target.sizes().equals(host.sizes())) target.resize_(host.sizes());
    target.copy_(host);
  }
}

// The boxed fallback for the sparse keys: sparse (and dense) device arguments to the CPU, the
// operator there, results back to the device.
void sparse_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  static constexpr CpuRoute route{
      [](const Tensor& t) { return t.is_sparse() ? sparse_to_cpu(t) : t.cpu(); },
      write_back,
      to_device,
  };
  run_through_cpu(op, stack, route);
}

// ATen gives structured operators' functional variants one default kernel for every key
// without its own (CompositeExplicitAutogradNonFunctional): it allocates the output like the
// first input -- a sparse one here -- and calls the out variant, where the CPU's functional
// kernel returns another layout (mm of a CSR and a dense matrix is dense).  Those operators
// run the CPU's own kernel through the fallback instead: every operator with such a default
// and a kernel of the CPU's sparse key, registered when torch_backend loads.
void register_cpu_functional(c10::DispatchKey device_key, c10::DispatchKey cpu_key,
                             const char* file) {
  static std::vector<std::unique_ptr<torch::Library>> libraries;
  auto library =
      std::make_unique<torch::Library>(torch::Library::IMPL, "aten", device_key, file, __LINE__);
  c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    std::optional<c10::OperatorHandle> op = dispatcher.findOp(name);
    if (!op.has_value() || !op->hasKernelForDispatchKey(cpu_key) ||
        op->hasKernelForDispatchKey(device_key) ||
        !op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional)) {
      continue;
    }
    const std::string qualified =
        name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
    library->impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&sparse_fallback>());
  }
  libraries.push_back(std::move(library));
}

[[maybe_unused]] const bool registered = [] {
  register_cpu_functional(c10::DispatchKey::SparsePrivateUse1, c10::DispatchKey::SparseCPU,
                          __FILE__);
  register_cpu_functional(c10::DispatchKey::SparseCsrPrivateUse1, c10::DispatchKey::SparseCsrCPU,
                          __FILE__);
  return true;
}();

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_sparse_coo_tensor_with_dims_and_tensors",
         TORCH_FN(at::native::new_with_dims_and_tensor_sparse_symint));
  m.impl("_sparse_coo_tensor_with_dims", TORCH_FN(at::native::new_with_dims_sparse));
  m.impl("empty.memory_format", TORCH_FN(at::native::empty_sparse_symint));
  m.impl("_indices", TORCH_FN(at::native::_indices_sparse));
  m.impl("_values", TORCH_FN(at::native::_values_sparse));
  m.impl("indices", TORCH_FN(at::native::indices_sparse));
  m.impl("values", TORCH_FN(at::native::values_sparse));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("_dimI", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("_dimV", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("is_coalesced", TORCH_FN(at::native::is_coalesced_sparse));
  m.impl("_coalesced_", TORCH_FN(at::native::_coalesced_sparse_));
  m.impl("sparse_resize_", TORCH_FN(at::native::sparse_resize_));
  m.impl("sparse_resize_and_clear_", TORCH_FN(at::native::sparse_resize_and_clear_));
  m.impl("copy_", TORCH_FN(copy_sparse));
}

TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(at::native::empty_sparse_compressed_symint));
  m.impl("crow_indices", TORCH_FN(at::native::crow_indices_sparse_csr));
  m.impl("col_indices", TORCH_FN(at::native::col_indices_sparse_csr));
  m.impl("ccol_indices", TORCH_FN(at::native::ccol_indices_sparse_csr));
  m.impl("row_indices", TORCH_FN(at::native::row_indices_sparse_csr));
  m.impl("values", TORCH_FN(at::native::values_sparse_csr));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse_csr));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse_csr));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse_csr));
  m.impl("resize_", TORCH_FN(at::native::resize_sparse_csr_));
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_fallback>());
}

TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_fallback>());
}

}  // namespace
}  // namespace torch_backend
