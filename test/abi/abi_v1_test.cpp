// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Vendors built against the ABI 1.1 and 1.2 headers, loaded through the loader's 1.x adapter:
// the handle reports the vendor's own version, every slot the vendor has works through the
// adapter (its absent optional ones stay NULL), errors carry the vendor's messages, and a 2.0
// kernel call reaches the 1.x kernel with tensor lists converted back to arrays of structs
// (an absent element as the 1.x header specified it: ndim -1).
#include <gtest/gtest.h>
#include <torch_backend/loader.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

class Legacy : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    const char* path = GetParam() == 1 ? TB_TEST_LEGACY_V1_1 : TB_TEST_LEGACY_V1_2;
    char error[4096] = "";
    ASSERT_EQ(tb_loader_open(path, &vendor_, error, sizeof error), TB_OK) << error;
    ASSERT_EQ(tb_loader_init(vendor_, nullptr, error, sizeof error), TB_OK) << error;
  }
  void TearDown() override { tb_loader_close(vendor_); }

  const tb_kernel* Kernel(const char* name) const {
    for (int64_t i = 0; i < vendor_->kernels.count; i++) {
      if (std::strcmp(vendor_->kernels.kernels[i]->name, name) == 0) {
        return vendor_->kernels.kernels[i];
      }
    }
    return nullptr;
  }

  // A float32 device tensor of `values` (fake's device memory is host memory).
  struct Tensor {
    std::vector<int64_t> sizes, strides;
    tb_tensor desc{};
  };
  void* Upload(const void* data, size_t bytes) {
    void* ptr = nullptr;
    EXPECT_EQ(vendor_->memory.device_malloc(vendor_->context, 0, bytes, &ptr), TB_OK);
    EXPECT_EQ(vendor_->memory.copy_h2d(vendor_->context, 0, ptr, data, bytes), TB_OK);
    allocations_.push_back(ptr);
    return ptr;
  }
  void Describe(Tensor& t, void* data, tb_dtype dtype, std::vector<int64_t> sizes) {
    t.sizes = std::move(sizes);
    t.strides.assign(t.sizes.size(), 1);
    for (int d = static_cast<int>(t.sizes.size()) - 2; d >= 0; d--) {
      t.strides[d] = t.strides[d + 1] * t.sizes[d + 1];
    }
    t.desc.struct_size = sizeof(tb_tensor);
    t.desc.data = data;
    t.desc.dtype = dtype;
    t.desc.device = 0;
    t.desc.ndim = static_cast<int32_t>(t.sizes.size());
    t.desc.sizes = t.sizes.data();
    t.desc.strides = t.strides.data();
  }
  tb_status Call(const tb_kernel* kernel, std::vector<tb_value>& args) {
    tb_kernel_call call{};
    call.struct_size = sizeof call;
    call.stream = stream_;
    call.args = args.data();
    call.num_args = static_cast<int32_t>(args.size());
    call.kernel = kernel;
    return kernel->fn(vendor_->context, &call);
  }
  void Free() {
    for (void* ptr : allocations_) vendor_->memory.device_free(vendor_->context, 0, ptr);
    allocations_.clear();
  }

  tb_vendor_handle* vendor_ = nullptr;
  tb_stream stream_ = nullptr;
  std::vector<void*> allocations_;
};

TEST_P(Legacy, ReportsItsVersionAndAdaptsEverySlotItHas) {
  EXPECT_EQ(vendor_->abi_major, 1u);
  EXPECT_EQ(vendor_->abi_minor, static_cast<uint32_t>(GetParam()));
  EXPECT_STREQ(vendor_->device_type, "legacy");
  EXPECT_EQ(vendor_->table->abi_major, 2u);  // callers see a 2.0 table
  EXPECT_EQ(vendor_->init, nullptr);
  EXPECT_EQ(vendor_->finalize, nullptr);
  EXPECT_NE(vendor_->context, nullptr);  // the adapter's
  // ABI 1.2 added reset and inject_fault: a 1.1 vendor has neither.
  EXPECT_EQ(vendor_->device.reset != nullptr, GetParam() >= 2);
  EXPECT_EQ(vendor_->stream.inject_fault != nullptr, GetParam() >= 2);
  EXPECT_NE(vendor_->event.elapsed_time, nullptr);

  int32_t count = 0;
  ASSERT_EQ(vendor_->device.count(vendor_->context, &count), TB_OK);
  EXPECT_GE(count, 1);
  tb_device_properties props{};
  props.struct_size = sizeof props;
  ASSERT_EQ(vendor_->device.get_properties(vendor_->context, 0, &props), TB_OK);
  EXPECT_STREQ(props.name, "Fake Device 0");
}

TEST_P(Legacy, ErrorsCarryTheVendorsMessage) {
  void* ptr = nullptr;
  EXPECT_EQ(vendor_->memory.device_malloc(vendor_->context, 7, 16, &ptr), TB_ERROR_INVALID_DEVICE);
  EXPECT_NE(std::strstr(vendor_->last_error(vendor_->context), "device index 7 is out of range"),
            nullptr)
      << vendor_->last_error(vendor_->context);
  EXPECT_EQ(ptr, nullptr);
}

TEST_P(Legacy, KernelsKeepTheirNamesAndMasks) {
  ASSERT_EQ(vendor_->kernels.count, 3);
  const tb_kernel* add = Kernel("add.out");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->dtypes, TB_DTYPE_BIT(TB_DTYPE_FLOAT32));
  EXPECT_EQ(add->schema, nullptr);  // 1.x kernels name no schema
  EXPECT_NE(add->data, nullptr);    // the adapter's pointer to the 1.x kernel
  EXPECT_NE(Kernel("cat.out"), nullptr);
  EXPECT_NE(Kernel("tb_test.list_probe"), nullptr);
}

TEST_P(Legacy, TensorListsOfPointersBecomeArraysOfStructs) {
  const float a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8};
  Tensor ta, tb, tout;
  Describe(ta, Upload(a, sizeof a), TB_DTYPE_FLOAT32, {3, 2});
  Describe(tb, Upload(b, sizeof b), TB_DTYPE_FLOAT32, {1, 2});
  float zeros[8] = {};
  Describe(tout, Upload(zeros, sizeof zeros), TB_DTYPE_FLOAT32, {4, 2});
  const tb_tensor* items[] = {&ta.desc, &tb.desc};
  std::vector<tb_value> args(3);
  args[0].kind = TB_VALUE_TENSOR_LIST;
  args[0].as.tensors.items = items;
  args[0].as.tensors.count = 2;
  args[1].kind = TB_VALUE_INT;
  args[1].as.i = 0;
  args[2].kind = TB_VALUE_TENSOR;
  args[2].as.tensor = &tout.desc;
  ASSERT_EQ(Call(Kernel("cat.out"), args), TB_OK) << vendor_->last_error(vendor_->context);
  float result[8] = {};
  ASSERT_EQ(vendor_->memory.copy_d2h(vendor_->context, 0, result, tout.desc.data, sizeof result),
            TB_OK);
  const float expected[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(std::memcmp(result, expected, sizeof result), 0);

  // Absent optional elements (NULL) reach a 1.x kernel as ndim -1; the original args are
  // untouched (the adapter converts a copy).
  Tensor probe;
  int64_t marks[3] = {9, 9, 9};
  Describe(probe, Upload(marks, sizeof marks), TB_DTYPE_INT64, {3});
  const tb_tensor* optional[] = {&ta.desc, nullptr, &tout.desc};
  std::vector<tb_value> probe_args(2);
  probe_args[0].kind = TB_VALUE_TENSOR_LIST;
  probe_args[0].as.tensors.items = optional;
  probe_args[0].as.tensors.count = 3;
  probe_args[1].kind = TB_VALUE_TENSOR;
  probe_args[1].as.tensor = &probe.desc;
  ASSERT_EQ(Call(Kernel("tb_test.list_probe"), probe_args), TB_OK)
      << vendor_->last_error(vendor_->context);
  ASSERT_EQ(vendor_->memory.copy_d2h(vendor_->context, 0, marks, probe.desc.data, sizeof marks),
            TB_OK);
  EXPECT_EQ(marks[0], 2);
  EXPECT_EQ(marks[1], -1);
  EXPECT_EQ(marks[2], 2);
  EXPECT_EQ(probe_args[0].as.tensors.items, optional);

  // A list long enough to leave the adapter's stack buffers.
  std::vector<Tensor> many(100);
  std::vector<const tb_tensor*> pointers;
  for (Tensor& t : many) {
    Describe(t, ta.desc.data, TB_DTYPE_FLOAT32, {3, 2});
    pointers.push_back(&t.desc);
  }
  pointers[50] = nullptr;
  std::vector<int64_t> ranks(pointers.size(), 9);
  Tensor rank_tensor;
  Describe(rank_tensor, Upload(ranks.data(), ranks.size() * sizeof(int64_t)), TB_DTYPE_INT64,
           {static_cast<int64_t>(ranks.size())});
  probe_args[0].as.tensors.items = pointers.data();
  probe_args[0].as.tensors.count = static_cast<int64_t>(pointers.size());
  probe_args[1].as.tensor = &rank_tensor.desc;
  ASSERT_EQ(Call(Kernel("tb_test.list_probe"), probe_args), TB_OK);
  ASSERT_EQ(vendor_->memory.copy_d2h(vendor_->context, 0, ranks.data(), rank_tensor.desc.data,
                                     ranks.size() * sizeof(int64_t)),
            TB_OK);
  for (size_t k = 0; k < ranks.size(); k++) EXPECT_EQ(ranks[k], k == 50 ? -1 : 2) << k;

  // A list too long to convert: the adapter's own out-of-memory, with its own message (the
  // elements are never read).
  probe_args[0].as.tensors.count = int64_t{1} << 40;
  EXPECT_EQ(Call(Kernel("tb_test.list_probe"), probe_args), TB_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::strstr(vendor_->last_error(vendor_->context),
                        "ABI 1.x adapter: out of host memory converting the 1099511627776 tensor "
                        "list elements of a call to kernel 'tb_test.list_probe'"),
            nullptr)
      << vendor_->last_error(vendor_->context);
  probe_args[0].as.tensors.count = static_cast<int64_t>(pointers.size());

  // A 1.x kernel's failure comes with its own message.
  probe_args[1].as.tensor = &ta.desc;  // float32, wrong length: refused
  EXPECT_EQ(Call(Kernel("tb_test.list_probe"), probe_args), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(vendor_->last_error(vendor_->context), "legacy: list_probe"), nullptr);
  Free();
}

INSTANTIATE_TEST_SUITE_P(Abi1, Legacy, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "v1_" + std::to_string(info.param);
                         });

}  // namespace
