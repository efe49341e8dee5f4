// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// emu's worker pool under the sanitizers.  The conformance suite's thread checks drive emu's
// streams from many threads, but their copies stay under emu's 4 MiB grain, so they never reach
// the pool (backends/emu/pool.c) that splits large copies, memsets and kernels.  Here several
// threads, each on its own stream, move blocks over that grain at once: pool regions, the path
// that runs a loop inline when the pool is busy, and the streams' queues all run concurrently.
// Under ThreadSanitizer (make test-tsan) this is the check that they are race-free; under
// AddressSanitizer, that they stay in bounds.
#include <gtest/gtest.h>
#include <torch_backend/loader.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kSize = (5u << 20) + 3;  // over emu's 4 MiB grain, not a multiple of a chunk
constexpr int kThreads = 4;
constexpr int kRounds = 3;

// What failed, or "" when every round came back intact.
std::string Drive(const tb_vendor_handle* v, int index, int32_t device) {
  std::vector<unsigned char> in(kSize), out(kSize);
  tb_stream stream = nullptr;
  void* a = nullptr;
  void* b = nullptr;
  std::string error;
  auto check = [&](tb_status status, const char* call) {
    if (status != TB_OK && error.empty()) {
      error =
          "thread " + std::to_string(index) + ": " + call + " failed: " + v->last_error(v->context);
    }
    return error.empty();
  };
  if (check(v->stream.create(v->context, device, 0, &stream), "stream.create") &&
      check(v->memory.device_malloc(v->context, device, kSize, &a), "device_malloc") &&
      check(v->memory.device_malloc(v->context, device, kSize, &b), "device_malloc")) {
    for (int round = 0; round < kRounds && error.empty(); round++) {
      for (size_t i = 0; i < kSize; i++) in[i] = static_cast<unsigned char>(i * 31 + index + round);
      // a <- in; b <- a; a <- 0x5a (after b has its copy); out <- b: all on one stream.
      if (!check(v->memory.copy_h2d_async(v->context, stream, a, in.data(), kSize),
                 "copy_h2d_async") ||
          !check(v->memory.copy_d2d_async(v->context, stream, device, b, device, a, kSize),
                 "copy_d2d_async") ||
          !check(v->memory.memset_async(v->context, stream, a, 0x5a, kSize), "memset_async") ||
          !check(v->memory.copy_d2h_async(v->context, stream, out.data(), b, kSize),
                 "copy_d2h_async") ||
          !check(v->stream.synchronize(v->context, stream), "stream.synchronize")) {
        break;
      }
      if (out != in) error = "thread " + std::to_string(index) + ": the round trip differs";
      if (!check(v->memory.copy_d2h(v->context, device, out.data(), a, kSize), "copy_d2h")) break;
      if (out != std::vector<unsigned char>(kSize, 0x5a) && error.empty()) {
        error = "thread " + std::to_string(index) + ": memset_async did not set every byte";
      }
    }
  }
  if (a != nullptr) v->memory.device_free(v->context, device, a);
  if (b != nullptr) v->memory.device_free(v->context, device, b);
  if (stream != nullptr) v->stream.destroy(v->context, stream);
  return error;
}

TEST(EmuThreads, LargeCopiesOnManyStreamsAtOnce) {
  setenv("TORCH_BACKEND_EMU_THREADS", "4", 0);  // a pool with helpers, however many cores
  tb_vendor_handle* vendor = nullptr;
  char message[4096] = "";
  ASSERT_EQ(tb_loader_open("emu", &vendor, message, sizeof message), TB_OK) << message;
  ASSERT_EQ(tb_loader_init(vendor, nullptr, message, sizeof message), TB_OK) << message;
  int32_t devices = 0;
  ASSERT_EQ(vendor->device.count(vendor->context, &devices), TB_OK);
  ASSERT_GT(devices, 0);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] { errors[t] = Drive(vendor, t, t % devices); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  tb_loader_close(vendor);
}

}  // namespace
