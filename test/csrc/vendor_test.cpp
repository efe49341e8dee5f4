// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// csrc's view of the vendor: loading (linked in or by name), and how a failed vendor call
// becomes a c10 error naming the vendor, the call, its arguments and the vendor's message.
// Each suite runs in its own process (see CMakeLists.txt): the vendor is loaded once per
// process.
#include <gtest/gtest.h>

#include <string>

#include "runtime/Vendor.h"

namespace {

using torch_backend::Vendor;

::testing::AssertionResult Contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << haystack << "\" lacks \"" << needle << "\"";
}

TEST(VendorLinkedIn, LoadsAndCalls) {
  Vendor::UseLinkedIn(&tb_vendor_get);
  EXPECT_FALSE(Vendor::IsLoaded());
  const Vendor& vendor = Vendor::Get();
  EXPECT_TRUE(Vendor::IsLoaded());
  EXPECT_STREQ(vendor.device_type(), "fake");
  EXPECT_EQ(vendor.device_count(), 1);
  EXPECT_TRUE(Contains(vendor.library_path(), "tb_csrc_tests"));

  void* ptr = nullptr;
  TB_VENDOR_CALL(memory, device_malloc, 0, size_t{256}, &ptr);
  ASSERT_NE(ptr, nullptr);
  TB_VENDOR_CALL(memory, device_free, 0, ptr);

  // Too late to switch vendors once one is loaded.
  EXPECT_THROW(Vendor::UseLinkedIn(&tb_vendor_get), c10::Error);
}

TEST(VendorLinkedIn, FailuresNameVendorCallArgumentsAndMessage) {
  Vendor::Get();
  void* ptr = nullptr;
  try {
    TB_VENDOR_CALL(memory, device_malloc, 7, size_t{16}, &ptr);
    FAIL() << "an invalid device index did not throw";
  } catch (const c10::AcceleratorError& e) {  // a RuntimeError subclass in Python
    EXPECT_EQ(e.get_error_code(), TB_ERROR_INVALID_DEVICE);
    std::string what = e.what_without_backtrace();
    EXPECT_TRUE(Contains(what, "fake: memory.device_malloc(7, 16, "));
    EXPECT_TRUE(Contains(what, "failed with TB_ERROR_INVALID_DEVICE"));
    EXPECT_TRUE(Contains(what, "device index 7 is out of range"));
  }
  EXPECT_EQ(ptr, nullptr);

  try {
    TB_VENDOR_CALL(memory, device_malloc, 0, SIZE_MAX, &ptr);
    FAIL() << "an impossible allocation did not throw";
  } catch (const c10::OutOfMemoryError& e) {
    EXPECT_TRUE(Contains(e.what_without_backtrace(), "TB_ERROR_OUT_OF_MEMORY"));
  }

  tb_event start = nullptr, end = nullptr;
  TB_VENDOR_CALL(event, create, 0, 0u, &start);
  TB_VENDOR_CALL(event, create, 0, 0u, &end);
  float ms = 0;
  EXPECT_THROW(TB_VENDOR_CALL(event, elapsed_time, start, end, &ms), c10::NotImplementedError);
  TB_VENDOR_CALL(event, destroy, start);
  TB_VENDOR_CALL(event, destroy, end);
}

TEST(VendorLoadFailure, ErrorNamesTheVendorAndIsSticky) {
  for (int attempt = 0; attempt < 2; attempt++) {
    try {
      Vendor::Get();
      FAIL() << "TORCH_BACKEND_VENDOR=nosuchvendor loaded";
    } catch (const c10::Error& e) {
      std::string what = e.what_without_backtrace();
      EXPECT_TRUE(Contains(what, "cannot load the vendor 'nosuchvendor' (TORCH_BACKEND_VENDOR)"));
      EXPECT_TRUE(Contains(what, "no bundled vendor named 'nosuchvendor'"));
    }
  }
  EXPECT_FALSE(Vendor::IsLoaded());
}

}  // namespace
