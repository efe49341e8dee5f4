// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/HostAllocator.h"

#include <c10/util/Logging.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "runtime/Device.h"
#include "runtime/Event.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

// Base address -> size of every live host allocation, for is_pinned_pointer().
std::mutex g_ranges_mutex;
std::map<uintptr_t, size_t>* g_ranges = new std::map<uintptr_t, size_t>();

struct HostAllocatorImpl final : at::CachingHostAllocatorImpl<c10::Stream, PooledEvent> {
 private:
  void allocate_host_memory(size_t size, void** ptr) override {
    const Vendor& vendor = Vendor::Get();
    if (vendor.table().memory.host_malloc != nullptr) {
      TB_VENDOR_CALL(memory, host_malloc, size, ptr);
    } else {
      *ptr = std::aligned_alloc(TB_MEMORY_ALIGNMENT, (size + TB_MEMORY_ALIGNMENT - 1) /
                                                         TB_MEMORY_ALIGNMENT * TB_MEMORY_ALIGNMENT);
      TORCH_CHECK_WITH(OutOfMemoryError, *ptr != nullptr, vendor.device_type(),
                       ": out of host memory allocating ", size, " bytes of pinned memory");
    }
    std::lock_guard<std::mutex> lock(g_ranges_mutex);
    g_ranges->emplace(reinterpret_cast<uintptr_t>(*ptr), size);
  }

  void free_block(at::HostBlock<c10::Stream>* block) override {
    {
      std::lock_guard<std::mutex> lock(g_ranges_mutex);
      g_ranges->erase(reinterpret_cast<uintptr_t>(block->ptr_));
    }
    if (Vendor::Get().table().memory.host_free != nullptr) {
      TB_VENDOR_CALL(memory, host_free, block->ptr_);
    } else {
      std::free(block->ptr_);
    }
  }

  // Called from the deleter of a pinned tensor, which must not throw.  When the vendor cannot
  // record the event, waiting for the stream keeps the block safe to reuse (an event never
  // recorded counts as complete); when it cannot do that either, the block is never reused
  // (PyTorch counted an event for it that never arrives): a leak, not a race.
  void record_stream(std::optional<std::vector<PooledEvent>>& events, c10::Stream stream) override {
    try {
      PooledEvent event(stream.device_index(), /*timing=*/false);
      try {
        torch_backend::record_event(event.get(), stream);
      } catch (const c10::Error&) {
        synchronize_stream(stream);
      }
      events->push_back(std::move(event));
    } catch (const c10::Error& e) {
      LOG(WARNING) << "torch_backend: a pinned host block used on " << stream
                   << " cannot be made safe to reuse and is kept out of the cache: "
                   << e.what_without_backtrace();
    }
  }

  // Called while any device's thread allocates pinned memory.  A block whose event cannot be
  // queried because its device is faulted stays out of the cache -- until a reset makes the
  // query answer, or for good -- instead of failing an allocation for another device's work
  // (the fault itself is sticky: that device's next synchronize reports it).  Any other
  // failure of the query reaches the caller.
  bool query_event(PooledEvent& event) override {
    try {
      return torch_backend::query_event(event.get());
    } catch (const c10::AcceleratorError& e) {
      if (e.get_error_code() == TB_ERROR_DEVICE_FAULT) return false;
      throw;
    }
  }

  c10::Stream get_current_stream() const override { return current_stream(current_device()); }

  bool stream_is_capturing(c10::Stream /*stream*/) const override { return false; }
};

void host_deleter(void* ctx);
struct HostAllocator final : at::CachingHostAllocatorInterface<HostAllocatorImpl, host_deleter> {};
HostAllocator g_host_allocator;
void host_deleter(void* ctx) { g_host_allocator.free(ctx); }

}  // namespace

REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, &g_host_allocator);

at::HostAllocator* host_allocator() { return &g_host_allocator; }

bool is_pinned_pointer(const void* ptr) {
  auto address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(g_ranges_mutex);
  auto it = g_ranges->upper_bound(address);
  if (it == g_ranges->begin()) return false;
  --it;
  return address < it->first + it->second;
}

}  // namespace torch_backend
