// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/Ipc.h"

#include <c10/util/Exception.h>
#include <c10/util/Logging.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/DeviceAllocator.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend::ipc {
namespace {

// One message's slot in shared memory: how many consumers still hold the storage (1 when
// sent), and whether the producer's work queued before sending has completed.
struct Slot {
  std::atomic<int64_t> refs;
  std::atomic<int64_t> ready;
};
static_assert(std::atomic<int64_t>::is_always_lock_free,
              "the reference counts live in memory shared between processes");

constexpr size_t kSlotsPerBlock = 1024;

// A page run of slots in a memfd the producer creates; consumers map it from the descriptor.
struct CounterBlock {
  int fd = -1;
  Slot* slots = nullptr;
  std::vector<size_t> free;
};

// A storage held for consumers until its slot drops to zero.
struct Sent {
  c10::Storage storage;
  CounterBlock* block;
  size_t slot;
};

// The producer's state.  Shares happen on multiprocessing's feeder threads, so it is locked.
struct Producer {
  std::mutex mutex;
  std::vector<std::unique_ptr<CounterBlock>> blocks;  // mapped until exit
  std::vector<Sent> sent;
};

Producer& producer() {
  static auto* state = new Producer();  // leaked: deleters may run during exit
  return *state;
}

// An import this process holds, shared by the storages it received from one allocation.
struct Import {
  void* ptr = nullptr;
  int64_t users = 0;
};

// The consumer's state: imports by handle, and the counter blocks it mapped (by file).
struct Consumer {
  std::mutex mutex;
  std::map<std::string, Import> imports;
  std::map<std::pair<dev_t, ino_t>, Slot*> blocks;  // mapped until exit
};

Consumer& consumer() {
  static auto* state = new Consumer();
  return *state;
}

const tb_ipc_extension* extension() {
  static const std::pair<const tb_ipc_extension*, std::string> found = [] {
    char error[512] = "";
    const tb_ipc_extension* ext = tb_loader_ipc(&Vendor::Get().table(), error, sizeof error);
    return std::make_pair(ext, std::string(error));
  }();
  TORCH_CHECK(found.second.empty(), found.second);
  return found.first;
}

const tb_ipc_extension& require_extension(const Vendor& vendor) {
  const tb_ipc_extension* ext = extension();
  TORCH_CHECK_NOT_IMPLEMENTED(
      ext != nullptr, vendor.device_type(), ": vendor '", vendor.table().vendor_name,
      "' cannot share device memory with other processes (it has no TB_EXTENSION_IPC, vendor.h "
      "ABI 2.5), so a ",
      vendor.device_type(),
      " tensor cannot be sent through torch.multiprocessing; send tensor.cpu() instead");
  return *ext;
}

std::string to_hex(const unsigned char* bytes, size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string text(2 * size, '0');
  for (size_t i = 0; i < size; i++) {
    text[2 * i] = digits[bytes[i] >> 4];
    text[2 * i + 1] = digits[bytes[i] & 15];
  }
  return text;
}

void from_hex(const std::string& text, unsigned char* bytes, size_t size) {
  TORCH_CHECK(text.size() == 2 * size, "torch_backend: an IPC handle of ", text.size() / 2,
              " bytes, expected ", size, " (sent by another torch_backend release?)");
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    TORCH_CHECK(false, "torch_backend: an IPC handle that is not hexadecimal");
  };
  for (size_t i = 0; i < size; i++) {
    bytes[i] = static_cast<unsigned char>(digit(text[2 * i]) << 4 | digit(text[2 * i + 1]));
  }
}

// A free slot of the producer's counter blocks (a new block when all are in use).  Caller
// holds the producer's mutex.
std::pair<CounterBlock*, size_t> acquire_slot(Producer& state) {
  for (auto& block : state.blocks) {
    if (!block->free.empty()) {
      size_t slot = block->free.back();
      block->free.pop_back();
      return {block.get(), slot};
    }
  }
  const size_t bytes = kSlotsPerBlock * sizeof(Slot);
  int fd = memfd_create("torch_backend-ipc-refs", MFD_CLOEXEC);
  TORCH_CHECK(fd >= 0, "torch_backend: cannot create shared memory for IPC reference counts: ",
              std::strerror(errno));
  void* mapped = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(bytes)) == 0) {
    mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (mapped == MAP_FAILED) {
    int error = errno;
    close(fd);
    TORCH_CHECK(false, "torch_backend: cannot map shared memory for IPC reference counts: ",
                std::strerror(error));
  }
  auto block = std::make_unique<CounterBlock>();
  block->fd = fd;
  block->slots = static_cast<Slot*>(mapped);
  for (size_t i = kSlotsPerBlock; i > 0; i--) block->free.push_back(i - 1);
  state.blocks.push_back(std::move(block));
  CounterBlock* fresh = state.blocks.back().get();
  size_t slot = fresh->free.back();
  fresh->free.pop_back();
  return {fresh, slot};
}

// Drops the storages whose consumers all let go.  Caller holds the producer's mutex.
int64_t collect_locked(Producer& state) {
  size_t kept = 0;
  for (auto& sent : state.sent) {
    Slot& slot = sent.block->slots[sent.slot];
    // (ready too: the host function marking it may still be queued)
    if (slot.refs.load(std::memory_order_acquire) <= 0 &&
        slot.ready.load(std::memory_order_acquire) != 0) {
      sent.block->free.push_back(sent.slot);
      continue;  // the storage goes back to the allocator with this entry
    }
    if (&state.sent[kept] != &sent) state.sent[kept] = std::move(sent);
    kept++;
  }
  state.sent.resize(kept);
  return static_cast<int64_t>(kept);
}

tb_status mark_ready(void* user_data, char*, size_t) {
  static_cast<Slot*>(user_data)->ready.store(1, std::memory_order_release);
  return TB_OK;
}

// What a received storage's DataPtr owns.
struct Received {
  int32_t device;
  std::string key;
  Slot* slot;
};

// The deleter of received storages: waits for the device (work queued on the memory must be
// done before the producer may reuse it), closes the import when its last storage goes, and
// gives the producer's slot back.
void release_received(void* context) {
  std::unique_ptr<Received> received(static_cast<Received*>(context));
  if (Vendor::IsLoaded() && !Vendor::IsFinalized()) {
    const Vendor& vendor = Vendor::Get();
    tb_status status = vendor.table().device.synchronize(vendor.context(), received->device);
    if (status != TB_OK) {
      LOG(WARNING) << vendor.device_type() << ": synchronizing device " << received->device
                   << " before releasing a storage received from another process failed: "
                   << vendor.last_error();
    }
    Consumer& state = consumer();
    std::lock_guard<std::mutex> lock(state.mutex);
    auto it = state.imports.find(received->key);
    if (it != state.imports.end() && --it->second.users == 0) {
      status = extension()->close_memory(vendor.context(), received->device, it->second.ptr);
      if (status != TB_OK) {
        LOG(WARNING) << vendor.device_type() << ": ipc.close_memory(device=" << received->device
                     << ") failed: " << vendor.last_error();
      }
      state.imports.erase(it);
    }
  }
  received->slot->refs.fetch_sub(1, std::memory_order_acq_rel);
}

// The slot `slot` of the counter block behind `counter_fd`, mapped once per block.
Slot* consumer_slot(int64_t counter_fd, int64_t slot) {
  TORCH_CHECK(slot >= 0 && static_cast<size_t>(slot) < kSlotsPerBlock,
              "torch_backend: IPC reference count slot ", slot, " out of range");
  struct stat st {};
  TORCH_CHECK(fstat(static_cast<int>(counter_fd), &st) == 0 &&
                  static_cast<size_t>(st.st_size) >= kSlotsPerBlock * sizeof(Slot),
              "torch_backend: the IPC reference counts sent with a tensor cannot be read "
              "(descriptor ",
              counter_fd, ")");
  Consumer& state = consumer();
  std::lock_guard<std::mutex> lock(state.mutex);
  auto key = std::make_pair(st.st_dev, st.st_ino);
  auto it = state.blocks.find(key);
  if (it == state.blocks.end()) {
    void* mapped = mmap(nullptr, kSlotsPerBlock * sizeof(Slot), PROT_READ | PROT_WRITE, MAP_SHARED,
                        static_cast<int>(counter_fd), 0);
    TORCH_CHECK(mapped != MAP_FAILED,
                "torch_backend: cannot map the IPC reference counts: ", std::strerror(errno));
    it = state.blocks.emplace(key, static_cast<Slot*>(mapped)).first;
  }
  return it->second + slot;
}

c10::Storage open_slot(const SharedStorage& shared, int64_t producer_pid, Slot* slot) {
  const Vendor& vendor = Vendor::Use("ipc.import_memory");
  const tb_ipc_extension& ext = require_extension(vendor);
  TORCH_CHECK(shared.device >= 0 && shared.device < vendor.device_count(), vendor.device_type(),
              ": a tensor of device ", shared.device, " was sent to a process that has ",
              vendor.device_count(), " devices");
  TORCH_CHECK(shared.offset >= 0 && shared.bytes > 0 &&
                  shared.offset + shared.bytes <= shared.allocation_bytes,
              "torch_backend: ipc: a storage of ", shared.bytes, " bytes at offset ", shared.offset,
              " does not fit the ", shared.allocation_bytes, " bytes sent");

  // The producer's work on the memory first.
  for (int spins = 0; slot->ready.load(std::memory_order_acquire) == 0; spins++) {
    if (spins % 1000 == 999 && kill(static_cast<pid_t>(producer_pid), 0) != 0 && errno == ESRCH) {
      TORCH_CHECK(false, vendor.device_type(), ": process ", producer_pid,
                  " exited before its work on the tensor it sent was complete");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(spins < 100 ? 10 : 200));
  }

  const auto device = static_cast<int32_t>(shared.device);
  std::string key = c10::str(device, ":", shared.allocation_bytes, ":", shared.handle);
  void* base = nullptr;
  {
    Consumer& state = consumer();
    std::lock_guard<std::mutex> lock(state.mutex);
    auto it = state.imports.find(key);
    if (it == state.imports.end()) {
      tb_ipc_handle handle{};
      handle.fd = static_cast<int32_t>(shared.handle_fd);
      handle.size = static_cast<uint64_t>(shared.allocation_bytes);
      from_hex(shared.handle, handle.bytes, sizeof handle.bytes);
      tb_status status = ext.import_memory(vendor.context(), device, &handle, &base);
      if (status != TB_OK) {
        vendor.Fail("ipc.import_memory", status,
                    c10::str("device=", device, ", bytes=", shared.allocation_bytes,
                             ", from process ", producer_pid));
      }
      it = state.imports.emplace(key, Import{base, 0}).first;
    }
    it->second.users++;
    base = it->second.ptr;
  }
  auto* received = new Received{device, key, slot};
  c10::DataPtr data(
      static_cast<char*>(base) + shared.offset, received, &release_received,
      c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device)));
  return c10::Storage(c10::Storage::use_byte_size_t(), shared.bytes, std::move(data),
                      /*allocator=*/nullptr, /*resizable=*/false);
}

}  // namespace

bool supported() { return extension() != nullptr; }

SharedStorage share(const c10::Storage& storage) {
  const Vendor& vendor = Vendor::Use("ipc.export_memory");
  const tb_ipc_extension& ext = require_extension(vendor);
  TORCH_CHECK(storage.device_type() == c10::DeviceType::PrivateUse1,
              "torch_backend: ipc: expected a storage of device type '", vendor.device_type(),
              "', got one on ", storage.device());
  TORCH_CHECK(storage.data_ptr().get_deleter() != &release_received, vendor.device_type(),
              ": a tensor received from another process cannot be sent on again: only the "
              "process that made it knows when its memory may be freed (CUDA's rule too); send "
              "a clone() instead");
  TORCH_CHECK(storage.nbytes() > 0, "torch_backend: ipc: an empty storage has no memory to share");
  const c10::DeviceIndex device = storage.device().index();
  void* data = storage.mutable_data();
  auto segment = segment_of(device, data);
  TORCH_CHECK(segment.has_value(), vendor.device_type(),
              ": only storages of the device's caching allocator can be sent to another process; "
              "this one's memory came from elsewhere (from_blob, DLPack)");
  auto [base, segment_bytes] = *segment;

  tb_ipc_handle handle{};
  handle.fd = -1;
  tb_status status = ext.export_memory(vendor.context(), device, base, &handle);
  if (status != TB_OK) {
    vendor.Fail("ipc.export_memory", status,
                c10::str("device=", static_cast<int>(device), ", ptr=", base));
  }
  const int64_t offset = static_cast<char*>(data) - static_cast<char*>(base);
  if (handle.size < static_cast<uint64_t>(offset) + storage.nbytes()) {
    if (handle.fd >= 0) close(handle.fd);
    TORCH_CHECK(false, vendor.device_type(),
                ": ipc.export_memory(device=", static_cast<int>(device), ") exported ", handle.size,
                " bytes of a segment of ", segment_bytes, ": too few for the storage at offset ",
                offset, " (", storage.nbytes(), " bytes)");
  }

  SharedStorage shared;
  shared.device = device;
  shared.handle_fd = handle.fd;
  shared.handle = to_hex(handle.bytes, sizeof handle.bytes);
  shared.allocation_bytes = static_cast<int64_t>(handle.size);
  shared.offset = offset;
  shared.bytes = static_cast<int64_t>(storage.nbytes());

  Producer& state = producer();
  std::lock_guard<std::mutex> lock(state.mutex);
  collect_locked(state);
  std::pair<CounterBlock*, size_t> acquired;
  try {
    acquired = acquire_slot(state);
  } catch (...) {
    if (handle.fd >= 0) close(handle.fd);
    throw;
  }
  auto [block, slot] = acquired;
  Slot& counts = block->slots[slot];
  counts.refs.store(1, std::memory_order_relaxed);
  counts.ready.store(0, std::memory_order_release);
  try {
    // Ready once the work queued so far on the sending thread's current stream is done (the
    // stream CUDA records its IPC event on).
    if (has_host_funcs()) {
      launch_host_func(device, &mark_ready, &counts);
    } else {
      synchronize_stream(current_stream(device));
      counts.ready.store(1, std::memory_order_release);
    }
  } catch (...) {
    block->free.push_back(slot);
    if (handle.fd >= 0) close(handle.fd);
    throw;
  }
  shared.counter_fd = fcntl(block->fd, F_DUPFD_CLOEXEC, 0);
  if (shared.counter_fd < 0) {
    int error = errno;
    counts.refs.store(0, std::memory_order_release);  // collected once the host function ran
    state.sent.push_back({storage, block, slot});
    if (handle.fd >= 0) close(handle.fd);
    TORCH_CHECK(false, "torch_backend: ipc: cannot duplicate a descriptor: ", std::strerror(error));
  }
  shared.slot = static_cast<int64_t>(slot);
  state.sent.push_back({storage, block, slot});
  return shared;
}

c10::Storage open(const SharedStorage& shared, int64_t producer_pid) {
  Slot* slot = consumer_slot(shared.counter_fd, shared.slot);
  try {
    return open_slot(shared, producer_pid, slot);
  } catch (...) {
    // Nothing here holds the memory: the producer may let go of it.
    slot->refs.fetch_sub(1, std::memory_order_acq_rel);
    throw;
  }
}

void release(int64_t counter_fd, int64_t slot) {
  consumer_slot(counter_fd, slot)->refs.fetch_sub(1, std::memory_order_acq_rel);
}

int64_t collect() {
  Producer& state = producer();
  std::lock_guard<std::mutex> lock(state.mutex);
  return collect_locked(state);
}

}  // namespace torch_backend::ipc
