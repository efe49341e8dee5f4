// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// KernelCall against kernels defined here (the linked-in fake has none): the call a kernel
// receives (its context, the kernel itself, tensor lists of pointers with NULL for an absent
// element) and the workspace (memory from the caching allocator on the call's device, held
// during the call and back in the cache after it; zero bytes; a NULL output; a request the
// allocator cannot serve, raised as torch's OutOfMemoryError with the allocator's message).
#include <ATen/ATen.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "aten/KernelCall.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Vendor.h"

namespace {

using torch_backend::KernelCall;
using torch_backend::Vendor;

// What the probe kernel saw, and what it asks of the workspace.
struct Probe {
  tb_context context = nullptr;
  const tb_kernel* kernel = nullptr;
  std::vector<int32_t> list_ranks;  // ndim of each list element, -1 for NULL
  size_t request = 0;               // workspace bytes to ask for
  tb_status zero_status = TB_ERROR_INTERNAL, null_status = TB_ERROR_INTERNAL;
  tb_status status = TB_ERROR_INTERNAL;
  void* zero_ptr = reinterpret_cast<void*>(1);
  int64_t allocated_during = -1;  // bytes the allocator had handed out inside the call
};
Probe g_probe;

int64_t Allocated() {
  return static_cast<int64_t>(
      torch_backend::device_allocator()
          ->getDeviceStats(0)
          .allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
          .current);
}

tb_status ProbeKernel(tb_context ctx, const tb_kernel_call* call) {
  Probe& p = *static_cast<Probe*>(call->kernel->data);
  p.context = ctx;
  p.kernel = call->kernel;
  p.list_ranks.clear();
  for (int32_t i = 0; i < call->num_args; i++) {
    if (call->args[i].kind != TB_VALUE_TENSOR_LIST) continue;
    for (int64_t k = 0; k < call->args[i].as.tensors.count; k++) {
      const tb_tensor* t = call->args[i].as.tensors.items[k];
      p.list_ranks.push_back(t == nullptr ? -1 : t->ndim);
    }
  }
  p.zero_status = call->workspace(call, 0, &p.zero_ptr);
  p.null_status = call->workspace(call, 64, nullptr);
  void* scratch = nullptr;
  p.status = call->workspace(call, p.request, &scratch);
  if (p.status != TB_OK) return p.status;
  p.allocated_during = Allocated();
  return TB_OK;
}

const tb_kernel kProbe = {sizeof(tb_kernel), "tb_test.probe", ProbeKernel, 0, 0, nullptr, &g_probe};

class KernelCallTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Vendor::UseLinkedIn(&tb_vendor_get);
    Vendor::Get();
  }
  at::Tensor Device(std::vector<int64_t> sizes) {
    return at::empty(sizes, at::TensorOptions().device(c10::DeviceType::PrivateUse1, 0));
  }
};

TEST_F(KernelCallTest, TheCallCarriesContextKernelAndListsOfPointers) {
  at::Tensor a = Device({2, 3}), b = Device({4});
  c10::List<std::optional<at::Tensor>> list;
  list.push_back(a);
  list.push_back(std::nullopt);
  list.push_back(b);
  g_probe = Probe{};
  g_probe.request = 16;
  ASSERT_TRUE(KernelCall(&kProbe).tensor(a).tensors(list).launch());
  EXPECT_EQ(g_probe.context, Vendor::Get().context());
  EXPECT_EQ(g_probe.kernel, &kProbe);
  EXPECT_EQ(g_probe.list_ranks, (std::vector<int32_t>{2, -1, 1}));
}

TEST_F(KernelCallTest, WorkspaceIsHeldDuringTheCallAndReturnedAfter) {
  at::Tensor a = Device({8});
  const int64_t before = Allocated();
  g_probe = Probe{};
  g_probe.request = 1 << 20;
  ASSERT_TRUE(KernelCall(&kProbe).tensor(a).launch());
  EXPECT_EQ(g_probe.status, TB_OK);
  EXPECT_GE(g_probe.allocated_during, before + (1 << 20));
  EXPECT_EQ(Allocated(), before);
  EXPECT_EQ(g_probe.zero_status, TB_OK);
  EXPECT_EQ(g_probe.zero_ptr, nullptr);
  EXPECT_EQ(g_probe.null_status, TB_ERROR_INVALID_ARGUMENT);
}

TEST_F(KernelCallTest, AWorkspaceTheAllocatorCannotServeIsTorchsOutOfMemory) {
  at::Tensor a = Device({8});
  const int64_t before = Allocated();
  g_probe = Probe{};
  g_probe.request = size_t{1} << 50;  // beyond fake's device
  try {
    KernelCall(&kProbe).tensor(a).launch();
    FAIL() << "no error";
  } catch (const c10::OutOfMemoryError& e) {
    std::string what = e.what_without_backtrace();
    EXPECT_NE(what.find("fake: kernel tb_test.probe: its workspace of 1125899906842624 bytes "
                        "could not be allocated: fake: out of memory on device 0"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(g_probe.status, TB_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(Allocated(), before);
}

}  // namespace
