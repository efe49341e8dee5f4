// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The contract suite: one googletest test per conformance check, against the vendor given by
// `--vendor NAME_OR_PATH` (or, built with TB_CONTRACT_LINKED, the fake vendor linked into this
// program).  `--setenv NAME=VALUE` sets the vendor's environment before it loads.  The checks
// themselves live in conformance/, written once in C.
#include <gtest/gtest.h>
#include <torch_backend/conformance.h>

#include <cstdlib>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

// Test parameters print as "group.name" rather than as a pointer.
void PrintTo(const tb_check* check, std::ostream* os) { *os << check->group << "." << check->name; }

namespace {

class VendorEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    char error[4096] = "";
#ifdef TB_CONTRACT_LINKED
    tb_status status = tb_loader_open_entry(&tb_vendor_get, &vendor_, error, sizeof error);
#else
    if (name_.empty()) {
      error_ = "pass --vendor NAME_OR_PATH (a bundled vendor name or a vendor library path)";
      return;
    }
    tb_status status = tb_loader_open(name_.c_str(), &vendor_, error, sizeof error);
#endif
    if (status != TB_OK) error_ = error;
  }
  void TearDown() override {
    tb_loader_close(vendor_);
    vendor_ = nullptr;
  }
  static tb_vendor_handle* vendor() { return vendor_; }
  static std::string name_;
  static const std::string& error() { return error_; }

 private:
  static tb_vendor_handle* vendor_;
  static std::string error_;
};

tb_vendor_handle* VendorEnvironment::vendor_ = nullptr;
std::string VendorEnvironment::error_;
std::string VendorEnvironment::name_;

std::vector<const tb_check*> AllChecks() {
  size_t count = 0;
  const tb_check* checks = tb_conformance_checks(&count);
  std::vector<const tb_check*> all;
  for (size_t i = 0; i < count; i++) all.push_back(&checks[i]);
  return all;
}

class Contract : public ::testing::TestWithParam<const tb_check*> {};

TEST_P(Contract, Holds) {
  tb_vendor_handle* vendor = VendorEnvironment::vendor();
  ASSERT_NE(vendor, nullptr) << "the vendor did not load: " << VendorEnvironment::error();
  const tb_check* check = GetParam();
  char message[2048] = "";
  tb_check_outcome outcome = tb_conformance_run(check, vendor, message, sizeof message, nullptr);
  if (outcome == TB_CHECK_SKIP) GTEST_SKIP() << message;
  EXPECT_EQ(outcome, TB_CHECK_PASS)
      << check->group << "." << check->name << ": " << check->summary << "\n  " << message;
}

INSTANTIATE_TEST_SUITE_P(Vendor, Contract, ::testing::ValuesIn(AllChecks()),
                         [](const ::testing::TestParamInfo<const tb_check*>& info) {
                           return std::string(info.param->group) + "_" + info.param->name;
                         });

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // removes the gtest flags it knows
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--vendor" && i + 1 < argc) {
      VendorEnvironment::name_ = argv[++i];
    } else if (arg == "--setenv" && i + 1 < argc) {
      std::string assignment = argv[++i];
      size_t eq = assignment.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "--setenv needs NAME=VALUE, got '" << assignment << "'\n";
        return 64;
      }
      setenv(assignment.substr(0, eq).c_str(), assignment.substr(eq + 1).c_str(), 1);
    } else {
      std::cerr << "unknown argument '" << arg << "'\n";
      return 64;
    }
  }
  ::testing::AddGlobalTestEnvironment(new VendorEnvironment);
  return RUN_ALL_TESTS();
}
