// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/DeviceAllocator.h"

#include <c10/core/impl/COW.h>
#include <c10/util/Logging.h>
#include <c10/util/ScopeExit.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/Device.h"
#include "runtime/Event.h"
#include "runtime/Graph.h"
#include "runtime/Ipc.h"
#include "runtime/StorageMeta.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

using c10::CachingAllocator::StatArray;
using c10::CachingAllocator::StatType;
using c10::CachingDeviceAllocator::DeviceStats;

// CUDACachingAllocator's sizes.
constexpr size_t kMinBlockSize = 512;                // every block is a multiple of this
constexpr size_t kSmallSize = size_t{1} << 20;       // largest request the small pool serves
constexpr size_t kSmallBuffer = size_t{2} << 20;     // the small pool's segments
constexpr size_t kLargeBuffer = size_t{20} << 20;    // large segments for requests below...
constexpr size_t kMinLargeAlloc = size_t{10} << 20;  // ...this; from here on, the request...
constexpr size_t kRoundLarge = size_t{2} << 20;      // ...rounded up to a multiple of this
constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();
constexpr auto kAll = static_cast<size_t>(StatType::AGGREGATE);

size_t round_up(size_t bytes, size_t step) { return (bytes + step - 1) / step * step; }

// The block size for a request of `bytes`.
size_t round_size(size_t bytes) {
  return bytes < kMinBlockSize ? kMinBlockSize : round_up(bytes, kMinBlockSize);
}

// The segment the vendor is asked for when no cached block fits a block of `size` bytes.
size_t segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return round_up(size, kRoundLarge);
}

std::string format_bytes(size_t bytes) {
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

struct Block;
struct BlockPool;
struct DeviceCache;
struct PrivatePool;

// One vendor allocation, cut into blocks linked in address order from `head`.  The head block
// keeps its identity for the segment's life: a split keeps the front piece, and merges keep
// the block in front.
struct Segment {
  size_t size;
  Block* head;
};

// What a request looks for: a block of `stream` with at least `size` bytes.
struct BlockKey {
  int32_t stream;
  size_t size;
};

// Free blocks by (stream, size, address): lower_bound of a BlockKey is the best fit.
struct BlockOrder {
  using is_transparent = void;
  bool operator()(const Block* a, const Block* b) const;
  bool operator()(const Block* a, const BlockKey& b) const;
  bool operator()(const BlockKey& a, const Block* b) const;
};
using BlockSet = std::set<Block*, BlockOrder>;

// A range of a segment (one vendor allocation): allocated to a tensor, awaiting events of
// other streams (pending), or free in its pool.  The blocks of a segment are linked in
// address order by prev/next and share the segment's stream.  What every allocation and free
// reads and writes fills the first cache line; the rest is for pending frees and pool moves.
struct alignas(64) Block {
  enum class State : uint8_t { kFree, kAllocated, kPending };

  char* ptr = nullptr;
  size_t size = 0;       // bytes, a multiple of kMinBlockSize
  size_t requested = 0;  // bytes the caller asked for (allocated blocks)
  Block* prev = nullptr;
  Block* next = nullptr;
  BlockPool* pool = nullptr;
  BlockSet::iterator where;  // its node in the pool, while free
  int32_t stream = 0;        // c10::StreamId of a torch_backend stream: small
  State state = State::kFree;
  c10::DeviceIndex device = 0;
  bool has_meta = false;  // the vendor was given per-storage values for it (StorageMeta.h)

  int pending_events = 0;         // events to complete before a pending block is free
  std::vector<c10::Stream> uses;  // other streams it was used on (record_stream)

  bool is_split() const { return prev != nullptr || next != nullptr; }
};
static_assert(offsetof(Block, pending_events) <= 64, "the hot fields fit one cache line");
static_assert(1 + kMaxPriorityClasses * kStreamsPerPool <= INT32_MAX, "stream ids fit int32_t");

inline bool BlockOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

// A key orders before every block of its stream and size (as if its address were 0).
inline bool BlockOrder::operator()(const Block* a, const BlockKey& b) const {
  return a->stream != b.stream ? a->stream < b.stream : a->size < b.size;
}

inline bool BlockOrder::operator()(const BlockKey& a, const Block* b) const {
  return a.stream != b->stream ? a.stream < b->stream : a.size <= b->size;
}

struct BlockPool {
  BlockSet blocks;
  StatType type;                 // SMALL_POOL or LARGE_POOL
  DeviceCache* cache;            // the device state it belongs to
  PrivatePool* owner = nullptr;  // the graph pool it is half of; nullptr: the general pools
};

// A graph's private memory pool (CUDA's PrivatePool): what a capture allocates on its stream
// comes from here, and what it frees returns here, so the addresses a graph was captured with
// stay reserved for its replays.  Graphs sharing a pool id share it; once no graph uses it
// (use_count 0) its free segments go back to the vendor, and the rest as the tensors holding
// them are freed.
struct PrivatePool {
  explicit PrivatePool(DeviceCache* cache)
      : small{{}, StatType::SMALL_POOL, cache, this},
        large{{}, StatType::LARGE_POOL, cache, this} {}
  BlockPool small;
  BlockPool large;
  int use_count = 0;
  size_t segments = 0;  // segments held by its two halves
};

// A free awaiting an event recorded on a stream the block was used on.
struct PendingFree {
  PooledEvent event;
  Block* block;
};

// One device's allocator state, guarded by its own mutex: devices never contend.
struct alignas(64) DeviceCache {
  std::mutex mutex;
  c10::DeviceIndex device = 0;
  BlockPool small{{}, StatType::SMALL_POOL, this};
  BlockPool large{{}, StatType::LARGE_POOL, this};
  // Pending frees by the stream their event was recorded on: a stream's events complete in
  // order, so each queue is checked from the front and only up to the first incomplete one.
  std::unordered_map<c10::Stream, std::deque<PendingFree>> pending;
  size_t pending_count = 0;
  // Blocks freed during a capture that other streams used: an event recorded on such a stream
  // then would be captured, never completing outside a replay, so the events are recorded
  // once no capture is under way (CUDA's needs_events_deferred_until_no_capture).
  std::vector<Block*> deferred;
  std::atomic<bool> has_deferred{false};
  std::map<uintptr_t, Segment> segments;  // every segment held, by base address
  std::map<c10::MempoolId_t, std::unique_ptr<PrivatePool>> private_pools;
  // Recycled Block objects and set nodes: the steady state allocates no host memory.
  std::vector<Block*> spare_blocks;
  std::vector<BlockSet::node_type> spare_nodes;
  double fraction = 1.0;    // set_per_process_memory_fraction
  size_t limit = kNoLimit;  // bytes the allocator may reserve on this device
  DeviceStats stats;
};

// A statistic of every pool and of `pool` (SMALL_POOL or LARGE_POOL) gains or loses `amount`.
void add(StatArray& stat, StatType pool, size_t amount) {
  stat[kAll].increase(amount);
  stat[static_cast<size_t>(pool)].increase(amount);
}

void sub(StatArray& stat, StatType pool, size_t amount) {
  stat[kAll].decrease(amount);
  stat[static_cast<size_t>(pool)].decrease(amount);
}

void update(StatArray& stat, StatType pool, int64_t amount) {
  if (amount >= 0) {
    add(stat, pool, static_cast<size_t>(amount));
  } else {
    sub(stat, pool, static_cast<size_t>(-amount));
  }
}

int64_t signed_size(size_t bytes) { return static_cast<int64_t>(bytes); }

// The allocated blocks by address.  A storage's DataPtr has its data as its context, as
// CUDA's caching allocator gives it: ATen's copy-on-write (`_lazy_clone`) shares only storages
// whose context is their data.  Frees and record_stream find their block here.  Addresses are
// unique across the devices (DeviceOf relies on it too).
class LiveBlocks {
 public:
  void Add(Block* block);
  Block* Find(const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(ptr);
    return it == blocks_.end() ? nullptr : it->second;
  }
  Block* Take(const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end()) return nullptr;
    Block* block = it->second;
    blocks_.erase(it);
    return block;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const void*, Block*> blocks_;
};

class CachingAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t bytes) override {
    c10::DeviceIndex device = current_device();
    if (bytes == 0) return c10::DataPtr(nullptr, nullptr, &Deleter, make_device(device));
    Block* block = Allocate(device, bytes);
    if (C10_UNLIKELY(c10::memoryProfilingEnabled())) {
      ReportUsage(*block->pool->cache, block->ptr, signed_size(block->size));
    }
    live_.Add(block);
    return c10::DataPtr(block->ptr, block->ptr, &Deleter, make_device(device));
  }

  // The block behind a DataPtr of this allocator's, also once ATen's copy-on-write has wrapped
  // it (its data is still the block's); null for other storages and empty ones.
  Block* BlockOf(const c10::DataPtr& data_ptr) {
    if (data_ptr.get() == nullptr) return nullptr;
    if (data_ptr.get_deleter() != &Deleter && !c10::impl::cow::is_cow_data_ptr(data_ptr)) {
      return nullptr;
    }
    return live_.Find(data_ptr.get());
  }

  // torch.profiler(profile_memory=True): an allocation (positive) or free (negative) of
  // `delta` bytes at `ptr`, with the device's totals after it.  Called without the lock.
  static void ReportUsage(DeviceCache& cache, void* ptr, int64_t delta) {
    size_t allocated = 0, reserved = 0;
    {
      std::lock_guard<std::mutex> lock(cache.mutex);
      allocated = static_cast<size_t>(cache.stats.allocated_bytes[kAll].current);
      reserved = Reserved(cache);
    }
    c10::reportMemoryUsageToProfiler(ptr, delta, allocated, reserved, make_device(cache.device));
  }

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  // Allocator::clone's copy (ATen's copy-on-write materialising a shared storage): on the
  // destination's current stream, from wherever the source lives.
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (count == 0) return;
    auto* self = const_cast<CachingAllocator*>(this);
    const c10::DeviceIndex device = self->DeviceOf(dest).value_or(current_device());
    const c10::DeviceIndex source = self->DeviceOf(src).value_or(device);
    c10::Stream stream = current_stream(device);
    TB_VENDOR_CALL(memory, copy_d2d_async, vendor_stream(stream), device, dest, source, src, count);
  }

  bool initialized() override { return Vendor::IsLoaded(); }

  void emptyCache(c10::MempoolId_t /*mempool_id*/) override {
    // Storages kept for other processes that have released them go first (Ipc.h), as
    // torch.cuda.empty_cache collects CUDA's IPC limbo.
    ipc::collect();
    for (c10::DeviceIndex d = 0; d < device_count(); d++) {
      DeviceCache& cache = Cache(d);
      std::lock_guard<std::mutex> lock(cache.mutex);
      ReleaseCachedBlocks(cache);
    }
  }

  void recordStream(const c10::DataPtr& data_ptr, c10::Stream stream) override {
    Block* block = BlockOf(data_ptr);
    if (block == nullptr) return;
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

  // Whether `data_ptr` is the start of one of this allocator's blocks; if so, its free will
  // call the vendor's release of per-storage values.
  bool MarkMeta(const c10::DataPtr& data_ptr) {
    Block* block = BlockOf(data_ptr);
    if (block == nullptr) return false;
    std::lock_guard<std::mutex> lock(Cache(block->device).mutex);
    block->has_meta = true;
    return true;
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
    if (Vendor::Get().table().memory.get_info != nullptr) return VendorMemoryInfo(device, 0);
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    return VendorMemoryInfo(device, Reserved(cache));
  }

  std::optional<c10::DeviceIndex> DeviceOf(const void* ptr) {
    auto address = reinterpret_cast<uintptr_t>(ptr);
    for (c10::DeviceIndex d = 0; d < device_count(); d++) {
      DeviceCache& cache = Cache(d);
      std::lock_guard<std::mutex> lock(cache.mutex);
      auto it = cache.segments.upper_bound(address);
      if (it == cache.segments.begin()) continue;
      --it;
      if (address < it->first + it->second.size) return d;
    }
    return std::nullopt;
  }

  std::optional<std::pair<void*, size_t>> SegmentOf(c10::DeviceIndex device, const void* ptr) {
    auto address = reinterpret_cast<uintptr_t>(ptr);
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.segments.upper_bound(address);
    if (it == cache.segments.begin()) return std::nullopt;
    --it;
    if (address >= it->first + it->second.size) return std::nullopt;
    return std::make_pair(reinterpret_cast<void*>(it->first), it->second.size);
  }

  std::vector<int64_t> Snapshot(c10::DeviceIndex device) {
    check_device_index(device);
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    std::vector<int64_t> rows;
    for (const auto& [base, segment] : cache.segments) {
      for (const Block* block = segment.head; block != nullptr; block = block->next) {
        rows.insert(rows.end(), {static_cast<int64_t>(base), signed_size(segment.size),
                                 block->stream, block->pool->type == StatType::LARGE_POOL,
                                 static_cast<int64_t>(reinterpret_cast<uintptr_t>(block->ptr)),
                                 signed_size(block->size), signed_size(block->requested),
                                 static_cast<int64_t>(block->state)});
      }
    }
    return rows;
  }

  void SetMemoryFraction(c10::DeviceIndex device, double fraction) {
    TORCH_CHECK(fraction >= 0 && fraction <= 1, Vendor::Get().device_type(),
                ": the memory fraction must be within [0, 1], got ", fraction);
    size_t total = getMemoryInfo(device).second;
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.fraction = fraction;
    cache.limit =
        fraction >= 1 ? kNoLimit : static_cast<size_t>(fraction * static_cast<double>(total));
  }

  double MemoryFraction(c10::DeviceIndex device) {
    check_device_index(device);
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    return cache.fraction;
  }

 private:
  static DeviceCache& Cache(c10::DeviceIndex device) {
    DeviceCache* all = g_caches.load(std::memory_order_acquire);
    if (C10_UNLIKELY(all == nullptr)) all = CreateCaches();
    return all[device];
  }

  C10_NOINLINE static DeviceCache* CreateCaches() {
    static DeviceCache* caches = [] {
      c10::DeviceIndex count = device_count();
      auto* all = new DeviceCache[count > 0 ? count : 1];
      for (c10::DeviceIndex d = 0; d < count; d++) {
        all[d].device = d;
        all[d].stats.max_split_size = -1;  // blocks of any size are split (CUDA's default)
      }
      return all;
    }();
    g_caches.store(caches, std::memory_order_release);
    return caches;
  }

  // Every device's state, created on first use for the devices the vendor reports.
  static inline std::atomic<DeviceCache*> g_caches{nullptr};

  static size_t Reserved(const DeviceCache& cache) {
    return static_cast<size_t>(cache.stats.reserved_bytes[kAll].current);
  }

  // (free, total) as the vendor reports them; without get_info, the device's total memory
  // and what this process has not reserved of it.
  static std::pair<size_t, size_t> VendorMemoryInfo(c10::DeviceIndex device, size_t reserved) {
    const Vendor& vendor = Vendor::Get();
    if (vendor.table().memory.get_info != nullptr) {
      size_t free_bytes = 0, total_bytes = 0;
      TB_VENDOR_CALL(memory, get_info, device, &free_bytes, &total_bytes);
      return {free_bytes, total_bytes};
    }
    tb_device_properties props{};
    props.struct_size = sizeof props;
    TB_VENDOR_CALL(device, get_properties, device, &props);
    auto total = static_cast<size_t>(props.total_memory);
    return {total - std::min(total, reserved), total};
  }

  Block* Allocate(c10::DeviceIndex device, size_t requested) {
    const size_t size = round_size(requested);
    if (C10_UNLIKELY(Cache(device).has_deferred.load(std::memory_order_relaxed))) {
      FlushDeferred(Cache(device));
    }
    // Current stream ids are validated when set (check_stream): small.
    const auto stream = static_cast<int32_t>(current_stream_id(device));
    // During a capture, the capturing stream allocates from the graph's pool (and another
    // stream may be refused: graph::allocation_pool throws).
    std::optional<c10::MempoolId_t> capture;
    if (C10_UNLIKELY(graph::capturing_any()))
      capture = graph::allocation_pool(device, stream, requested);
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (cache.pending_count != 0) ProcessEvents(cache);
    BlockPool* chosen = size <= kSmallSize ? &cache.small : &cache.large;
    if (C10_UNLIKELY(capture.has_value())) {
      auto found_pool = cache.private_pools.find(*capture);
      TORCH_INTERNAL_ASSERT(found_pool != cache.private_pools.end(),
                            "torch_backend: a capture allocates from a pool the allocator lacks");
      PrivatePool& graph_pool = *found_pool->second;
      chosen = size <= kSmallSize ? &graph_pool.small : &graph_pool.large;
    }
    BlockPool& pool = *chosen;
    BlockSet::iterator it = FindFree(pool, stream, size);
    if (it == pool.blocks.end()) it = NewSegment(cache, pool, stream, size, requested);
    Block* found = *it;

    DeviceStats& s = cache.stats;
    const bool already_split = found->is_split();
    Block* block = nullptr;
    if (ShouldSplit(pool, found->size, size)) {
      // `found` keeps the front `size` bytes; a new block takes the rest, and its place in the
      // pool.
      Block* rest = NewBlock(cache);
      rest->ptr = found->ptr + size;
      rest->size = found->size - size;
      rest->stream = found->stream;
      rest->device = found->device;
      rest->pool = &pool;
      rest->prev = found;
      rest->next = found->next;
      if (rest->next != nullptr) rest->next->prev = rest;
      found->next = rest;
      found->size = size;
      TakeNode(rest, found);
      // `rest` is smaller than `found` was: it may now belong before its predecessor.
      if (pool.blocks.size() > 1 && it != pool.blocks.begin() &&
          !BlockOrder()(*std::prev(it), rest)) {
        Reinsert(pool, it);
      }
      block = found;
      if (already_split) {
        // An inactive split block shrinks by `size`.
        sub(s.inactive_split_bytes, pool.type, size);
      } else {
        // A whole segment becomes split: its rest is a new inactive split block.
        add(s.inactive_split_bytes, pool.type, block->next->size);
        add(s.inactive_split, pool.type, 1);
      }
    } else {
      block = found;
      Remove(cache, pool, found);
      if (already_split) {
        // An inactive split block becomes active as a whole.
        sub(s.inactive_split_bytes, pool.type, block->size);
        sub(s.inactive_split, pool.type, 1);
      }
    }
    block->state = Block::State::kAllocated;
    block->requested = requested;
    add(s.allocation, pool.type, 1);
    add(s.allocated_bytes, pool.type, block->size);
    add(s.requested_bytes, pool.type, requested);
    add(s.active, pool.type, 1);
    add(s.active_bytes, pool.type, block->size);
    return block;
  }

  static bool ShouldSplit(const BlockPool& pool, size_t block_size, size_t size) {
    size_t remaining = block_size - size;
    return pool.type == StatType::SMALL_POOL ? remaining >= kMinBlockSize : remaining > kSmallSize;
  }

  // The best-fitting free block of `stream` for `size` bytes, or end().
  static BlockSet::iterator FindFree(BlockPool& pool, int32_t stream, size_t size) {
    auto it = pool.blocks.lower_bound(BlockKey{stream, size});
    if (it != pool.blocks.end() && (*it)->stream != stream) return pool.blocks.end();
    return it;
  }

  // Adds a free block to its pool, in a recycled node when there is one.
  static void Insert(DeviceCache& cache, BlockPool& pool, Block* block) {
    if (cache.spare_nodes.empty()) {
      block->where = pool.blocks.insert(block).first;
      return;
    }
    BlockSet::node_type node = std::move(cache.spare_nodes.back());
    cache.spare_nodes.pop_back();
    node.value() = block;
    block->where = pool.blocks.insert(std::move(node)).position;
  }

  // Puts `block` in the pool node of `old`, which leaves the pool, without unlinking the node.
  // A node holds a plain Block*, which may change in place; the caller restores the order
  // (Reinsert) if the new key does not sort where the old one did.
  static void TakeNode(Block* block, Block* old) {
    const_cast<Block*&>(*old->where) = block;
    block->where = old->where;
  }

  static void Remove(DeviceCache& cache, BlockPool& pool, Block* block) {
    cache.spare_nodes.push_back(pool.blocks.extract(block->where));
  }

  // Puts back in order a free block whose size or address changed in place (extract by
  // iterator does not compare, so the pool may be out of order at `it` until then).
  static void Reinsert(BlockPool& pool, BlockSet::iterator it) {
    BlockSet::node_type node = pool.blocks.extract(it);
    Block* block = node.value();
    block->where = pool.blocks.insert(std::move(node)).position;
  }

  static Block* NewBlock(DeviceCache& cache) {
    if (cache.spare_blocks.empty()) return new Block();
    Block* block = cache.spare_blocks.back();
    cache.spare_blocks.pop_back();
    return block;
  }

  // Keeps a block object for reuse.  Its `uses` is empty and `pending_events` 0 already (a
  // free block has none), so only the first cache line is written.
  static void Recycle(DeviceCache& cache, Block* block) {
    block->prev = block->next = nullptr;
    block->requested = 0;
    block->state = Block::State::kFree;
    cache.spare_blocks.push_back(block);
  }

  // Asks the vendor for `bytes`, within the process's limit; on out-of-memory returns false
  // and says why in `why`.  Other vendor failures throw.
  static bool TryMalloc(DeviceCache& cache, size_t bytes, void** ptr, std::string& why) {
    if (cache.limit != kNoLimit && Reserved(cache) + bytes > cache.limit) {
      why = c10::str("The limit set by set_per_process_memory_fraction(", cache.fraction, ") is ",
                     format_bytes(cache.limit), " on this device, of which ",
                     format_bytes(Reserved(cache)), " is reserved");
      return false;
    }
    tb_status status = slot::memory_device_malloc(cache.device, bytes, ptr);
    if (status == TB_OK) return true;
    const Vendor& vendor = Vendor::Get();
    if (status == TB_ERROR_OUT_OF_MEMORY) {
      const char* message = vendor.last_error();
      why = c10::str("The vendor reports: ", message != nullptr ? message : "(no message)");
      return false;
    }
    vendor.Fail("memory.device_malloc", status,
                detail::FormatArguments(static_cast<int>(cache.device), bytes, "&ptr"));
  }

  // A new segment for a block of `size` bytes, as one free block in `pool`.  On
  // out-of-memory, whole free segments go back to the vendor and the allocation is retried;
  // then it raises torch.OutOfMemoryError.
  BlockSet::iterator NewSegment(DeviceCache& cache, BlockPool& pool, int32_t stream, size_t size,
                                size_t requested) {
    const size_t preferred = segment_size(size);
    // A large request below kMinLargeAlloc asks for kLargeBuffer (room for more blocks); when
    // that does not fit, a segment of its own size is tried before giving the cache up.
    const size_t fitted =
        pool.type == StatType::LARGE_POOL ? round_up(size, kRoundLarge) : preferred;
    void* ptr = nullptr;
    size_t bytes = preferred;
    std::string why;
    auto attempt = [&] {
      bytes = preferred;
      if (TryMalloc(cache, bytes, &ptr, why)) return true;
      if (fitted >= preferred) return false;
      bytes = fitted;
      return TryMalloc(cache, bytes, &ptr, why);
    };
    if (!attempt()) {
      cache.stats.num_alloc_retries++;
      ReleaseCachedBlocks(cache);
      if (!attempt()) {
        cache.stats.num_ooms++;
        std::string segments = format_bytes(preferred);
        if (fitted < preferred) segments += ", then of " + format_bytes(fitted);
        ThrowOutOfMemory(cache, requested, segments, why);
      }
    }
    Block* block = nullptr;
    try {
      block = NewBlock(cache);
      cache.segments.emplace(reinterpret_cast<uintptr_t>(ptr), Segment{bytes, block});
    } catch (...) {
      // Out of host memory for the bookkeeping: the segment goes back rather than leaking.
      (void)slot::memory_device_free(cache.device, ptr);
      throw;
    }
    block->ptr = static_cast<char*>(ptr);
    block->size = bytes;
    block->stream = stream;
    block->device = cache.device;
    block->pool = &pool;
    if (pool.owner != nullptr) pool.owner->segments++;
    add(cache.stats.segment, pool.type, 1);
    add(cache.stats.reserved_bytes, pool.type, bytes);
    cache.stats.num_device_alloc++;
    Insert(cache, pool, block);
    return block->where;
  }

  [[noreturn]] static void ThrowOutOfMemory(const DeviceCache& cache, size_t requested,
                                            const std::string& segments, const std::string& why) {
    const Vendor& vendor = Vendor::Get();
    const DeviceStats& s = cache.stats;
    const size_t reserved = Reserved(cache);
    const auto allocated = static_cast<size_t>(s.allocated_bytes[kAll].current);
    const int device = cache.device;
    std::string capacity;
    try {
      auto [free_bytes, total_bytes] = VendorMemoryInfo(cache.device, reserved);
      capacity =
          c10::str(" Device ", device, " has a total capacity of ", format_bytes(total_bytes),
                   " of which ", format_bytes(free_bytes), " is free.");
    } catch (const std::exception&) {
      // The figures are a courtesy: a failing query must not hide the out-of-memory error.
    }
    C10_THROW_ERROR(
        OutOfMemoryError,
        c10::str(vendor.device_type(), ": out of memory on device ", device, ": tried to allocate ",
                 format_bytes(requested), " (a segment of ", segments, "). ", why, ".", capacity,
                 " This process has ", format_bytes(reserved),
                 " reserved by the caching allocator: ", format_bytes(allocated),
                 " allocated by tensors and ", format_bytes(reserved - allocated),
                 " reserved but unallocated. Cached free segments were released and the "
                 "allocation retried (allocation retries so far: ",
                 s.num_alloc_retries,
                 "). If reserved but unallocated memory is large, it is fragmented: "
                 "torch.",
                 vendor.device_type(), ".memory_summary() shows the pools."));
  }

  // Frees blocks whose events have all completed.
  void ProcessEvents(DeviceCache& cache) {
    for (auto& [stream, queue] : cache.pending) {
      while (!queue.empty() && query_event(queue.front().event.get())) {
        Block* block = queue.front().block;
        queue.pop_front();
        cache.pending_count--;
        if (--block->pending_events == 0) FreeAndRetire(cache, block);
      }
    }
  }

  // Waits for every pending free's events, then frees those blocks.
  void SynchronizeAndFreeEvents(DeviceCache& cache) {
    if (cache.pending_count == 0) return;
    for (auto& [stream, queue] : cache.pending) {
      if (!queue.empty()) synchronize_event(queue.back().event.get());
    }
    cache.stats.num_sync_all_streams++;
    ProcessEvents(cache);
  }

  // Returns every whole free segment of the general pools, and of the graph pools no graph
  // uses any more, to the vendor (split segments stay).
  void ReleaseCachedBlocks(DeviceCache& cache) {
    SynchronizeAndFreeEvents(cache);
    bool drained = false;
    for (BlockPool* pool : {&cache.small, &cache.large}) ReleaseSegments(cache, *pool, drained);
    for (auto it = cache.private_pools.begin(); it != cache.private_pools.end();) {
      PrivatePool& graph_pool = *(it++)->second;
      if (graph_pool.use_count == 0) ReleaseRetired(cache, graph_pool, drained);
    }
  }

  // vendor.h's device_free needs no queued work to use the memory, and a block freed on its own
  // stream is reusable there at once, so work queued before the free may still use it (a graph's
  // replays do, for its pool).  Before the first segment goes back, the device is drained,
  // as cudaFree does.  Not while a capture is under way: that synchronize would invalidate it,
  // so nothing is released then (a later empty_cache releases it).
  static bool Drain(DeviceCache& cache, bool& drained) {
    if (drained) return true;
    if (graph::capturing_any()) return false;
    tb_status status = slot::device_synchronize(cache.device);
    // A faulted device has stopped running work: nothing queued touches the memory any more.
    if (status != TB_OK && status != TB_ERROR_DEVICE_FAULT) {
      Vendor::Get().Fail("device.synchronize", status,
                         detail::FormatArguments(static_cast<int>(cache.device)));
    }
    drained = true;
    return true;
  }

  static void ReleaseSegments(DeviceCache& cache, BlockPool& pool, bool& drained) {
    for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
      Block* block = *it;
      if (block->is_split()) {
        ++it;
        continue;
      }
      if (!Drain(cache, drained)) return;
      // Freed before it is forgotten, so that a vendor failure leaves the cache consistent.
      TB_VENDOR_CALL(memory, device_free, cache.device, block->ptr);
      it = pool.blocks.erase(it);
      cache.segments.erase(reinterpret_cast<uintptr_t>(block->ptr));
      if (pool.owner != nullptr) pool.owner->segments--;
      sub(cache.stats.segment, pool.type, 1);
      sub(cache.stats.reserved_bytes, pool.type, block->size);
      cache.stats.num_device_free++;
      Recycle(cache, block);
    }
  }

  // A graph pool no graph uses: its free segments go back to the vendor, and the pool itself
  // once it holds none.
  static void ReleaseRetired(DeviceCache& cache, PrivatePool& graph_pool, bool& drained) {
    ReleaseSegments(cache, graph_pool.small, drained);
    ReleaseSegments(cache, graph_pool.large, drained);
    if (graph_pool.segments != 0) return;
    for (auto it = cache.private_pools.begin(); it != cache.private_pools.end(); ++it) {
      if (it->second.get() == &graph_pool) {
        cache.private_pools.erase(it);
        return;
      }
    }
  }

  // FreeBlock, then the release of a retired graph pool the block belonged to.
  static void FreeAndRetire(DeviceCache& cache, Block* block) {
    PrivatePool* owner = block->pool->owner;
    FreeBlock(cache, block);
    if (C10_UNLIKELY(owner != nullptr && owner->use_count == 0)) {
      bool drained = false;
      ReleaseRetired(cache, *owner, drained);
    }
  }

 public:
  // A graph starts (or, sharing the pool, joins) using graph pool `id` of `device`.
  void RetainPool(c10::DeviceIndex device, c10::MempoolId_t id) {
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    std::unique_ptr<PrivatePool>& graph_pool = cache.private_pools[id];
    if (graph_pool == nullptr) graph_pool = std::make_unique<PrivatePool>(&cache);
    graph_pool->use_count++;
  }

  // A graph stops using graph pool `id`; the last one retires it.
  void ReleasePool(c10::DeviceIndex device, c10::MempoolId_t id) {
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.private_pools.find(id);
    if (it == cache.private_pools.end() || it->second->use_count == 0) return;
    if (--it->second->use_count == 0) {
      bool drained = false;
      ReleaseRetired(cache, *it->second, drained);
    }
  }

  // Bytes reserved by graph pool `id` of `device` (0 when it does not exist).
  size_t PoolReserved(c10::DeviceIndex device, c10::MempoolId_t id) {
    DeviceCache& cache = Cache(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.private_pools.find(id);
    if (it == cache.private_pools.end()) return 0;
    size_t bytes = 0;
    for (const auto& [base, segment] : cache.segments) {
      const BlockPool* pool = segment.head->pool;
      if (pool == &it->second->small || pool == &it->second->large) bytes += segment.size;
    }
    return bytes;
  }

 private:
  // Returns a block that no stream uses any more to its pool, merged with free neighbours.
  // The block in front absorbs the others and keeps a pool node in place when the order
  // allows.
  static void FreeBlock(DeviceCache& cache, Block* block) {
    BlockPool& pool = *block->pool;
    DeviceStats& s = cache.stats;
    const size_t original_size = block->size;
    Block* prev =
        block->prev != nullptr && block->prev->state == Block::State::kFree ? block->prev : nullptr;
    Block* next =
        block->next != nullptr && block->next->state == Block::State::kFree ? block->next : nullptr;
    // Net change of the inactive split blocks: merged neighbours stop being counted...
    int64_t split_blocks = 0, split_bytes = 0;
    for (Block* neighbour : {prev, next}) {
      if (neighbour == nullptr) continue;
      split_blocks -= 1;
      split_bytes -= signed_size(neighbour->size);
    }
    block->state = Block::State::kFree;
    block->requested = 0;
    Block* result = block;
    if (prev == nullptr && next == nullptr) {
      Insert(cache, pool, block);
    } else {
      if (next != nullptr) {
        // `block` absorbs `next`, in its node when `block` stays, else `prev` takes it over.
        block->size += next->size;
        block->next = next->next;
        if (block->next != nullptr) block->next->prev = block;
        if (prev == nullptr) {
          TakeNode(block, next);
        } else {
          Remove(cache, pool, next);
        }
        Recycle(cache, next);
      }
      if (prev != nullptr) {
        prev->size += block->size;
        prev->next = block->next;
        if (prev->next != nullptr) prev->next->prev = prev;
        Recycle(cache, block);
        result = prev;
      }
      // `result` grew in place: it may now belong after its successor in the pool.
      if (pool.blocks.size() > 1) {
        auto after = std::next(result->where);
        if (after != pool.blocks.end() && !BlockOrder()(result, *after)) {
          Reinsert(pool, result->where);
        }
      }
    }
    // ...and the block that results counts as one if its segment is still split.
    if (result->is_split()) {
      split_blocks += 1;
      split_bytes += signed_size(result->size);
    }
    if (split_blocks != 0) update(s.inactive_split, pool.type, split_blocks);
    if (split_bytes != 0) update(s.inactive_split_bytes, pool.type, split_bytes);
    sub(s.active, pool.type, 1);
    sub(s.active_bytes, pool.type, original_size);
  }

  void Free(Block* block) {
    DeviceCache& cache = *block->pool->cache;
    if (C10_UNLIKELY(cache.has_deferred.load(std::memory_order_relaxed))) FlushDeferred(cache);
    // No one else holds the storage any more, so no one can give it values now.
    if (C10_UNLIKELY(block->has_meta)) {
      block->has_meta = false;
      release_storage_meta(block->device, block->ptr);
    }
    // Reported once the lock below is released, whichever way the free ends.
    auto report = c10::make_scope_exit([&cache, ptr = static_cast<void*>(block->ptr),
                                        size = signed_size(block->size),
                                        enabled = c10::memoryProfilingEnabled()] {
      if (C10_UNLIKELY(enabled)) ReportUsage(cache, ptr, -size);
    });
    std::vector<c10::Stream> uses;
    {
      std::lock_guard<std::mutex> lock(cache.mutex);
      DeviceStats& s = cache.stats;
      StatType type = block->pool->type;
      sub(s.allocation, type, 1);
      sub(s.allocated_bytes, type, block->size);
      sub(s.requested_bytes, type, block->requested);
      if (block->uses.empty()) {
        FreeAndRetire(cache, block);
        return;
      }
      block->state = Block::State::kPending;
      if (C10_UNLIKELY(graph::capturing_any())) {
        cache.deferred.push_back(block);  // keeps its uses
        cache.has_deferred.store(true, std::memory_order_relaxed);
        return;
      }
      uses = std::move(block->uses);
      block->uses.clear();
    }
    InsertEvents(cache, block, uses);
  }

  // Records the events of the deferred frees, once no capture is under way.
  void FlushDeferred(DeviceCache& cache) {
    if (graph::capturing_any()) return;
    std::vector<Block*> blocks;
    {
      std::lock_guard<std::mutex> lock(cache.mutex);
      blocks.swap(cache.deferred);
      cache.has_deferred.store(false, std::memory_order_relaxed);
    }
    for (Block* block : blocks) {
      std::vector<c10::Stream> uses = std::move(block->uses);
      block->uses.clear();
      InsertEvents(cache, block, uses);
    }
  }

  // Frees pending `block` once every stream of `uses` has reached this point.
  void InsertEvents(DeviceCache& cache, Block* block, const std::vector<c10::Stream>& uses) {
    // Used on other streams: free once each of them has reached this point, known by an event
    // recorded on it now.  Outside the lock, since a stream may have to be waited for: where
    // the event cannot be created or recorded, the free waits for that stream instead; where
    // that fails too, the block stays out of the pool for good (a leak, not a race: the stream
    // may still be reading it).
    std::vector<std::pair<c10::Stream, PooledEvent>> events;
    bool kept_out = false;
    for (const c10::Stream& use : uses) {
      try {
        PooledEvent event(use.device_index(), /*timing=*/false);
        record_event(event.get(), use);
        events.emplace_back(use, std::move(event));
      } catch (const c10::Error&) {
        try {
          synchronize_stream(use);
        } catch (const c10::Error& e) {
          kept_out = true;
          LOG(WARNING) << "torch_backend: a device block of " << block->size << " bytes used on "
                       << use << " cannot be made safe to reuse and is kept out of the cache: "
                       << e.what_without_backtrace();
        }
      }
    }
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (kept_out) return;  // pending with no event to wait for: never reused
    if (events.empty()) {
      FreeAndRetire(cache, block);
      return;
    }
    for (auto& [use, event] : events) {
      block->pending_events++;
      cache.pending[use].push_back(PendingFree{std::move(event), block});
      cache.pending_count++;
    }
  }

  static void Deleter(void* context);

  LiveBlocks live_;
};

void LiveBlocks::Add(Block* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  blocks_.emplace(block->ptr, block);
}

CachingAllocator g_allocator;

void CachingAllocator::Deleter(void* context) {
  if (context == nullptr) return;  // an empty storage
  Block* block = g_allocator.live_.Take(context);
  if (block == nullptr) {
    LOG(WARNING) << "torch_backend: freeing " << context << ", which is no allocated block";
    return;
  }
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

bool mark_storage_meta(const c10::DataPtr& data_ptr) { return g_allocator.MarkMeta(data_ptr); }

std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr) {
  return g_allocator.DeviceOf(ptr);
}

std::optional<std::pair<void*, size_t>> segment_of(c10::DeviceIndex device, const void* ptr) {
  return g_allocator.SegmentOf(device, ptr);
}

std::vector<int64_t> memory_snapshot(c10::DeviceIndex device) {
  return g_allocator.Snapshot(device);
}

void set_memory_fraction(c10::DeviceIndex device, double fraction) {
  g_allocator.SetMemoryFraction(device, fraction);
}

double memory_fraction(c10::DeviceIndex device) { return g_allocator.MemoryFraction(device); }

void retain_graph_pool(c10::DeviceIndex device, c10::MempoolId_t id) {
  g_allocator.RetainPool(device, id);
}

void release_graph_pool(c10::DeviceIndex device, c10::MempoolId_t id) {
  g_allocator.ReleasePool(device, id);
}

size_t graph_pool_reserved(c10::DeviceIndex device, c10::MempoolId_t id) {
  return g_allocator.PoolReserved(device, id);
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
