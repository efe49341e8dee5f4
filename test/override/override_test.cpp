// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Replacing a subset of fake's weak slots with strong symbols: the replaced slots are the
// vendor's own functions and are called; every other slot is still fake's and still works.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch_backend/loader.h>

#include <cstring>
#include <vector>

namespace {

class Override : public ::testing::Test {
 protected:
  void SetUp() override {
    char error[4096] = "";
    ASSERT_EQ(tb_loader_open(TB_TEST_COUNTING_VENDOR, &vendor_, error, sizeof error), TB_OK)
        << error;
    ASSERT_EQ(tb_loader_init(vendor_, nullptr, error, sizeof error), TB_OK) << error;
    mallocs_ = reinterpret_cast<long (*)()>(dlsym(vendor_->dl_handle, "tb_test_counting_mallocs"));
    frees_ = reinterpret_cast<long (*)()>(dlsym(vendor_->dl_handle, "tb_test_counting_frees"));
    ASSERT_NE(mallocs_, nullptr);
    ASSERT_NE(frees_, nullptr);
  }
  void TearDown() override { tb_loader_close(vendor_); }

  tb_vendor_handle* vendor_ = nullptr;
  long (*mallocs_)() = nullptr;
  long (*frees_)() = nullptr;
};

TEST_F(Override, ReplacedSlotsPointAtTheStrongDefinitions) {
  void* own_malloc = dlsym(vendor_->dl_handle, "tbv_memory_device_malloc");
  void* own_free = dlsym(vendor_->dl_handle, "tbv_memory_device_free");
  EXPECT_EQ(reinterpret_cast<void*>(vendor_->memory.device_malloc), own_malloc);
  EXPECT_EQ(reinterpret_cast<void*>(vendor_->memory.device_free), own_free);

  // The bundled fake's own slot is a different function: the override did not leak into it.
  tb_vendor_handle* fake = nullptr;
  char error[4096] = "";
  ASSERT_EQ(tb_loader_open("fake", &fake, error, sizeof error), TB_OK) << error;
  EXPECT_NE(reinterpret_cast<void*>(fake->memory.device_malloc),
            reinterpret_cast<void*>(vendor_->memory.device_malloc));
  EXPECT_STREQ(vendor_->device_type, "fake");  // identity slots were not replaced
  tb_loader_close(fake);
}

TEST_F(Override, CallsAreCountedAndOtherSlotsStillWork) {
  const long mallocs_before = mallocs_(), frees_before = frees_();
  const int kBlocks = 10;
  std::vector<void*> blocks(kBlocks, nullptr);
  for (int i = 0; i < kBlocks; i++) {
    ASSERT_EQ(vendor_->memory.device_malloc(vendor_->context, 0, 1000 + i, &blocks[i]), TB_OK);
  }
  EXPECT_EQ(mallocs_() - mallocs_before, kBlocks);
  EXPECT_EQ(frees_() - frees_before, 0);

  // fake's copies and streams operate on the replacement's memory.
  std::vector<unsigned char> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<unsigned char>(i * 7);
  tb_stream stream = nullptr;
  ASSERT_EQ(vendor_->stream.create(vendor_->context, 0, 0, &stream), TB_OK);
  ASSERT_EQ(
      vendor_->memory.copy_h2d_async(vendor_->context, stream, blocks[3], in.data(), in.size()),
      TB_OK);
  ASSERT_EQ(
      vendor_->memory.copy_d2h_async(vendor_->context, stream, out.data(), blocks[3], out.size()),
      TB_OK);
  ASSERT_EQ(vendor_->stream.synchronize(vendor_->context, stream), TB_OK);
  ASSERT_EQ(vendor_->stream.destroy(vendor_->context, stream), TB_OK);
  EXPECT_EQ(in, out);

  for (void* block : blocks)
    ASSERT_EQ(vendor_->memory.device_free(vendor_->context, 0, block), TB_OK);
  EXPECT_EQ(mallocs_() - mallocs_before, kBlocks);
  EXPECT_EQ(frees_() - frees_before, kBlocks);
}

TEST_F(Override, ReplacementReportsErrorsThroughFakesLastError) {
  void* ptr = nullptr;
  EXPECT_EQ(vendor_->memory.device_malloc(vendor_->context, 0, SIZE_MAX, &ptr),
            TB_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::strstr(vendor_->last_error(vendor_->context), "counting: cannot allocate"),
            nullptr)
      << vendor_->last_error(vendor_->context);
  EXPECT_EQ(vendor_->memory.device_malloc(vendor_->context, 5, 16, &ptr), TB_ERROR_INVALID_DEVICE);
  EXPECT_NE(std::strstr(vendor_->last_error(vendor_->context), "device index 5"), nullptr)
      << vendor_->last_error(vendor_->context);
}

}  // namespace
