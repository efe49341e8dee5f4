// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Built only under AddressSanitizer.  emu validates that a copy stays inside its device's
// memory, not inside one allocation; ASan is what catches a copy that runs past an allocation
// or reads freed device memory, because emu's arena poisons the redzone after each allocation
// and every freed range (backends/emu/arena.c).  These tests prove ASan sees them.
#include <gtest/gtest.h>
#include <torch_backend/loader.h>

#include <vector>

namespace {

class EmuUnderAsan : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // emu has worker threads
    char error[4096] = "";
    ASSERT_EQ(tb_loader_open("emu", &vendor_, error, sizeof error), TB_OK) << error;
    ASSERT_EQ(tb_loader_init(vendor_, nullptr, error, sizeof error), TB_OK) << error;
    ASSERT_EQ(vendor_->memory.device_malloc(vendor_->context, 0, kSize, &device_), TB_OK);
  }
  void TearDown() override {
    if (device_ != nullptr) vendor_->memory.device_free(vendor_->context, 0, device_);
    tb_loader_close(vendor_);
  }

  static constexpr size_t kSize = 100;  // not a multiple of emu's 256-byte alignment
  tb_vendor_handle* vendor_ = nullptr;
  void* device_ = nullptr;
  std::vector<unsigned char> host_ = std::vector<unsigned char>(4096, 0);
};

TEST_F(EmuUnderAsan, CopiesWithinAnAllocationAreClean) {
  EXPECT_EQ(vendor_->memory.copy_h2d(vendor_->context, 0, device_, host_.data(), kSize), TB_OK);
  EXPECT_EQ(vendor_->memory.copy_d2h(vendor_->context, 0, host_.data(), device_, kSize), TB_OK);
}

TEST_F(EmuUnderAsan, ReadingPastAnAllocationIsReported) {
  EXPECT_DEATH(vendor_->memory.copy_d2h(vendor_->context, 0, host_.data(), device_, kSize + 1),
               "AddressSanitizer: use-after-poison");
}

TEST_F(EmuUnderAsan, WritingPastAnAllocationIsReported) {
  EXPECT_DEATH(vendor_->memory.copy_h2d(vendor_->context, 0, device_, host_.data(), kSize + 8),
               "AddressSanitizer: use-after-poison");
}

TEST_F(EmuUnderAsan, ReadingFreedDeviceMemoryIsReported) {
  void* freed = device_;
  ASSERT_EQ(vendor_->memory.device_free(vendor_->context, 0, device_), TB_OK);
  device_ = nullptr;
  EXPECT_DEATH(vendor_->memory.copy_d2h(vendor_->context, 0, host_.data(), freed, kSize),
               "AddressSanitizer: use-after-poison");
}

}  // namespace
