// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/DeviceAllocator.h"

#include <c10/util/Logging.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/Device.h"
#include "runtime/Event.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

using c10::CachingAllocator::StatType;
using c10::CachingDeviceAllocator::DeviceStats;

constexpr size_t kMinBlock = 512;
constexpr size_t kSmallLimit = size_t{1} << 20;

// Size class of a request: 512-byte steps up to 1 MiB, then four classes per power of two.
size_t size_class(size_t bytes) {
  if (bytes <= kSmallLimit) return std::max(kMinBlock, (bytes + kMinBlock - 1) & ~(kMinBlock - 1));
  size_t power = size_t{1} << (63 - __builtin_clzll(bytes));
  size_t step = power / 4;
  return (bytes + step - 1) / step * step;
}

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    unit++;
  }
  char text[64];
  snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.2f %s", value, units[unit]);
  return text;
}

struct Block {
  void* ptr = nullptr;
  size_t size = 0;       // size class: bytes obtained from the vendor
  size_t requested = 0;  // bytes the caller asked for
  c10::DeviceIndex device = 0;
  c10::StreamId stream = 0;       // stream it was allocated on
  std::vector<c10::Stream> uses;  // other streams it was used on (record_stream)
  int pending_events = 0;         // events to complete before reuse
  bool allocated = false;
};

// One device's cache.  Everything is guarded by `mutex`.
struct DeviceCache {
  std::mutex mutex;
  std::unordered_map<void*, Block*> blocks;                              // every block held
  std::map<std::pair<c10::StreamId, size_t>, std::vector<Block*>> free;  // cached, reusable
  std::vector<std::pair<PooledEvent, Block*>> pending;                   // freed, awaiting streams
  DeviceStats stats;
};

void update(c10::CachingAllocator::StatArray& stat, size_t size, int64_t amount) {
  StatType pool = size <= kSmallLimit ? StatType::SMALL_POOL : StatType::LARGE_POOL;
  for (StatType type : {StatType::AGGREGATE, pool}) {
    auto& s = stat[static_cast<size_t>(type)];
    if (amount >= 0) {
      s.increase(static_cast<size_t>(amount));
    } else {
      s.decrease(static_cast<size_t>(-amount));
    }
  }
}

class CachingAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t bytes) override {
    c10::DeviceIndex device = current_device();
    if (bytes == 0) return c10::DataPtr(nullptr, nullptr, &Deleter, make_device(device));
    Block* block = Allocate(device, bytes);
    return c10::DataPtr(block->ptr, block, &Deleter, make_device(device));
  }

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (count == 0) return;
    c10::DeviceIndex device = current_device();
    c10::Stream stream = current_stream(device);
    TB_VENDOR_CALL(memory, copy_d2d_async, vendor_stream(stream), device, dest, device, src, count);
  }

  bool initialized() override { return Vendor::IsLoaded(); }

  void emptyCache(c10::MempoolId_t /*mempool_id*/) override {
    for (c10::DeviceIndex d = 0; d < device_count(); d++) {
      DeviceCache& cache = Cache(d);
      std::lock_guard<std::mutex> lock(cache.mutex);
      ReleaseCached(cache, /*wait=*/true);
    }
  }

  void recordStream(const c10::DataPtr& data_ptr, c10::Stream stream) override {
    if (data_ptr.get_deleter() != &Deleter || data_ptr.get_context() == nullptr) return;
    auto* block = static_cast<Block*>(data_ptr.get_context());
    TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
                "torch_backend: record_stream needs a stream of the tensor's device type, got ",
                stream);
    DeviceCache& cache = Cache(block->device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (stream.device_index() == block->device && stream.id() == block->stream) return;
    if (std::find(block->uses.begin(), block->uses.end(), stream) == block->uses.end()) {
      block->uses.push_back(stream);
    }
  }

  DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    check_device_index(device);
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    return cache.stats;
  }

  void resetAccumulatedStats(c10::DeviceIndex device) override {
    check_device_index(device);
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    DeviceStats& s = cache.stats;
    for (auto* array :
         {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
          &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes}) {
      for (auto& stat : *array) stat.reset_accumulated();
    }
    s.num_alloc_retries = s.num_ooms = s.num_device_alloc = s.num_device_free = 0;
    s.num_sync_all_streams = 0;
  }

  void resetPeakStats(c10::DeviceIndex device) override {
    check_device_index(device);
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    DeviceStats& s = cache.stats;
    for (auto* array :
         {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
          &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes}) {
      for (auto& stat : *array) stat.reset_peak();
    }
  }

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    check_device_index(device);
    const Vendor& vendor = Vendor::Get();
    if (vendor.table().memory.get_info != nullptr) {
      size_t free_bytes = 0, total_bytes = 0;
      TB_VENDOR_CALL(memory, get_info, device, &free_bytes, &total_bytes);
      return {free_bytes, total_bytes};
    }
    tb_device_properties props{};
    props.struct_size = sizeof props;
    TB_VENDOR_CALL(device, get_properties, device, &props);
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    int64_t reserved = cache.stats.reserved_bytes[static_cast<size_t>(StatType::AGGREGATE)].current;
    size_t total = static_cast<size_t>(props.total_memory);
    return {total - std::min(total, static_cast<size_t>(reserved)), total};
  }

  std::optional<c10::DeviceIndex> DeviceOf(const void* ptr) {
    for (c10::DeviceIndex d = 0; d < device_count(); d++) {
      DeviceCache& cache = Cache(d);
      std::lock_guard<std::mutex> lock(cache.mutex);
      for (const auto& [base, block] : cache.blocks) {
        auto* start = static_cast<const char*>(base);
        if (ptr >= start && ptr < start + block->size) return d;
      }
    }
    return std::nullopt;
  }

 private:
  DeviceCache& Cache(c10::DeviceIndex device) {
    static std::vector<DeviceCache>* caches = new std::vector<DeviceCache>(device_count());
    return (*caches)[device];
  }

  Block* Allocate(c10::DeviceIndex device, size_t bytes) {
    size_t size = size_class(bytes);
    c10::StreamId stream = current_stream(device).id();
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    ProcessPending(cache);

    Block* block = nullptr;
    auto it = cache.free.find({stream, size});
    if (it != cache.free.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
    } else {
      block = NewBlock(cache, device, size, bytes);
      block->stream = stream;
    }
    block->allocated = true;
    block->requested = bytes;
    DeviceStats& s = cache.stats;
    update(s.allocation, size, 1);
    update(s.allocated_bytes, size, static_cast<int64_t>(size));
    update(s.requested_bytes, size, static_cast<int64_t>(bytes));
    update(s.active, size, 1);
    update(s.active_bytes, size, static_cast<int64_t>(size));
    return block;
  }

  // Obtains a new block from the vendor; on out-of-memory releases the cache and retries once.
  Block* NewBlock(DeviceCache& cache, c10::DeviceIndex device, size_t size, size_t requested) {
    const Vendor& vendor = Vendor::Use("memory.device_malloc");
    void* ptr = nullptr;
    tb_status status = vendor.table().memory.device_malloc(device, size, &ptr);
    if (status == TB_ERROR_OUT_OF_MEMORY) {
      cache.stats.num_alloc_retries++;
      ReleaseCached(cache, /*wait=*/true);
      status = vendor.table().memory.device_malloc(device, size, &ptr);
    }
    if (status == TB_ERROR_OUT_OF_MEMORY) {
      cache.stats.num_ooms++;
      const char* message = vendor.table().last_error();
      const DeviceStats& s = cache.stats;
      constexpr auto kAll = static_cast<size_t>(StatType::AGGREGATE);
      C10_THROW_ERROR(
          OutOfMemoryError,
          c10::str(vendor.device_type(), ": out of memory on device ", static_cast<int>(device),
                   ": tried to allocate ", format_bytes(static_cast<int64_t>(requested)),
                   " (a block of ", format_bytes(static_cast<int64_t>(size)),
                   "). The vendor reports: ", message != nullptr ? message : "(no message)",
                   ". This process holds ", format_bytes(s.allocated_bytes[kAll].current),
                   " allocated by tensors and ", format_bytes(s.reserved_bytes[kAll].current),
                   " reserved by the caching allocator (cached blocks were released and the "
                   "allocation retried; allocation retries so far: ",
                   s.num_alloc_retries, ")."));
    }
    if (status != TB_OK) {
      vendor.Fail("memory.device_malloc", status,
                  detail::FormatArguments(static_cast<int>(device), size, "&ptr"));
    }
    auto* block = new Block();
    block->ptr = ptr;
    block->size = size;
    block->device = device;
    cache.blocks.emplace(ptr, block);
    DeviceStats& s = cache.stats;
    update(s.segment, size, 1);
    update(s.reserved_bytes, size, static_cast<int64_t>(size));
    s.num_device_alloc++;
    (void)requested;
    return block;
  }

  // Moves blocks whose pending events have completed into the free lists.
  void ProcessPending(DeviceCache& cache) {
    if (cache.pending.empty()) return;
    std::vector<std::pair<PooledEvent, Block*>> still;
    for (auto& [event, block] : cache.pending) {
      if (query_event(event.get())) {
        if (--block->pending_events == 0) ReturnToFreeList(cache, block);
      } else {
        still.emplace_back(std::move(event), block);
      }
    }
    cache.pending = std::move(still);
  }

  // Puts an idle block in its free list.
  static void ReturnToFreeList(DeviceCache& cache, Block* block) {
    update(cache.stats.active, block->size, -1);
    update(cache.stats.active_bytes, block->size, -static_cast<int64_t>(block->size));
    cache.free[{block->stream, block->size}].push_back(block);
  }

  // Returns every cached block to the vendor; with `wait`, first waits for pending ones.
  void ReleaseCached(DeviceCache& cache, bool wait) {
    if (wait && !cache.pending.empty()) {
      for (auto& [event, block] : cache.pending) {
        synchronize_event(event.get());
      }
      cache.stats.num_sync_all_streams++;
    }
    ProcessPending(cache);
    // Erase as we go, so that a vendor failure part-way leaves the cache consistent.
    while (!cache.free.empty()) {
      std::vector<Block*>& blocks = cache.free.begin()->second;
      while (!blocks.empty()) {
        Block* block = blocks.back();
        TB_VENDOR_CALL(memory, device_free, block->device, block->ptr);
        blocks.pop_back();
        update(cache.stats.segment, block->size, -1);
        update(cache.stats.reserved_bytes, block->size, -static_cast<int64_t>(block->size));
        cache.stats.num_device_free++;
        cache.blocks.erase(block->ptr);
        delete block;
      }
      cache.free.erase(cache.free.begin());
    }
  }

  void Free(Block* block) {
    DeviceCache& cache = Cache(block->device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    DeviceStats& s = cache.stats;
    update(s.allocation, block->size, -1);
    update(s.allocated_bytes, block->size, -static_cast<int64_t>(block->size));
    update(s.requested_bytes, block->size, -static_cast<int64_t>(block->requested));
    block->allocated = false;
    if (block->uses.empty()) {
      ReturnToFreeList(cache, block);
      return;
    }
    // Used on other streams: reusable once each of them has reached this point.
    std::vector<c10::Stream> uses = std::move(block->uses);
    block->uses.clear();
    for (const c10::Stream& use : uses) {
      PooledEvent event(use.device_index(), /*timing=*/false);
      record_event(event.get(), use);
      block->pending_events++;
      cache.pending.emplace_back(std::move(event), block);
    }
  }

  static void Deleter(void* context);
};

CachingAllocator g_allocator;

void CachingAllocator::Deleter(void* context) {
  auto* block = static_cast<Block*>(context);
  try {
    g_allocator.Free(block);
  } catch (const std::exception& e) {
    // A deleter must not throw.  The block is not reused (it may still be in use on a stream
    // we could not record an event on); report and move on.
    LOG(WARNING) << "torch_backend: could not return a device block to the cache: " << e.what();
  }
}

}  // namespace

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

c10::DeviceAllocator* device_allocator() { return &g_allocator; }

void record_stream(const c10::DataPtr& data_ptr, c10::Stream stream) {
  g_allocator.recordStream(data_ptr, stream);
}

std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr) {
  return g_allocator.DeviceOf(ptr);
}

void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes) {
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  TORCH_CHECK(impl->resizable(), "torch_backend: trying to resize a storage that is not resizable");
  c10::DeviceIndex device = impl->device().index();
  c10::DeviceIndex previous = exchange_device(device);
  try {
    c10::DataPtr data = new_bytes == 0 ? c10::DataPtr(nullptr, impl->device())
                                       : impl->allocator()->allocate(new_bytes);
    size_t keep = std::min(new_bytes, impl->nbytes());
    if (keep > 0 && impl->data() != nullptr) {
      c10::Stream stream = current_stream(device);
      TB_VENDOR_CALL(memory, copy_d2d_async, vendor_stream(stream), device, data.get(), device,
                     impl->data(), keep);
      // The old block must not be reused before this copy has read it.
      record_stream(impl->data_ptr(), stream);
    }
    impl->set_data_ptr_noswap(std::move(data));
    impl->set_nbytes(new_bytes);
  } catch (...) {
    exchange_device(previous);
    throw;
  }
  exchange_device(previous);
}

}  // namespace torch_backend
