// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Device memory shared between processes (vendor.h, "Device memory shared between processes",
// ABI 2.5, TB_EXTENSION_IPC): what torch_backend/multiprocessing.py's reducers call when a
// device tensor crosses a torch.multiprocessing Queue or Pool.  CUDA's rules (c10/cuda's
// CUDAIPCTypes and torch/multiprocessing/reductions.py):
//   - the producer exports the whole allocator segment behind a storage and sends it with the
//     storage's place in it and a slot of a reference count in shared memory; it keeps the
//     storage alive until the slot drops to zero (collect() lets go of those that did);
//   - work the producer queued before sending completes before the consumer gets the tensor
//     (a host function on the producer's current stream marks the slot ready);
//   - the consumer imports a segment once and shares the import between the storages it
//     receives from it; freeing the last one waits for the device, closes the import and
//     releases the producer's slot;
//   - a received storage cannot be shared again.
#pragma once

#include <c10/core/Storage.h>

#include <cstdint>
#include <string>

namespace torch_backend::ipc {

// What a producer sends for one storage.  The two descriptors are new ones the caller owns
// (it sends and closes them).
struct SharedStorage {
  int64_t device = 0;
  int64_t handle_fd = -1;        // the descriptor tb_ipc_handle::fd carries, or -1
  std::string handle;            // tb_ipc_handle::bytes, in hexadecimal
  int64_t allocation_bytes = 0;  // tb_ipc_handle::size
  int64_t offset = 0;            // of the storage in the exported allocation
  int64_t bytes = 0;             // of the storage
  int64_t counter_fd = -1;       // the shared memory holding the reference count
  int64_t slot = 0;              // the count's slot in it
};

// Whether the vendor has a usable TB_EXTENSION_IPC (throws for a broken one).
bool supported();

// The producer's side: exports `storage` (of the device, from the caching allocator, not
// received from another process, not empty) for one consumer.
SharedStorage share(const c10::Storage& storage);

// The consumer's side: a storage over the shared memory, once the producer's work on it is
// complete (throws if process `producer_pid` exits first).  Not resizable.
c10::Storage open(const SharedStorage& shared, int64_t producer_pid);

// The consumer already holds a storage for this message's memory: gives the slot back.
void release(int64_t counter_fd, int64_t slot);

// The producer lets go of the storages every consumer has released; returns how many it
// still holds for consumers.
int64_t collect();

}  // namespace torch_backend::ipc
