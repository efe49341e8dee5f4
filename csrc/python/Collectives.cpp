// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The vendor's collectives library (vendor.h, ABI 2.2, TB_EXTENSION_COLLECTIVES) for the
// `tbccl` process group (torch_backend/distributed.py): communicators behind integer handles,
// and one operator that enqueues a collective on the current stream of the communicator's
// device.  The group's Python code owns the rendezvous (the unique id goes through the c10d
// store), the streams and the work objects; everything here checks its arguments and names the
// vendor, the call and the vendor's message when something fails.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>
#include <torch_backend/loader.h>

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "aten/KernelCall.h"
#include "profiler/Profiler.h"
#include "runtime/Device.h"
#include "runtime/Graph.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

// The vendor's validated extension, or nullptr when it has none; throws when it has one that
// cannot be used (the loader's message names what is wrong).  The process has one vendor and
// its table is immutable: validated once, not on every collective.
const tb_collectives_extension* extension() {
  struct Found {
    const tb_collectives_extension* extension = nullptr;
    std::string error;
  };
  static const Found found = [] {
    char error[512] = "";
    Found result;
    result.extension = tb_loader_collectives(&Vendor::Get().table(), error, sizeof error);
    result.error = error;
    return result;
  }();
  TORCH_CHECK(found.error.empty(), found.error);
  return found.extension;
}

const tb_collectives_extension& require(const char* call) {
  const tb_collectives_extension* found = extension();
  TORCH_CHECK_NOT_IMPLEMENTED(found != nullptr, Vendor::Get().device_type(), ": ", call,
                              ": the vendor has no collectives library "
                              "(TB_EXTENSION_COLLECTIVES)");
  return *found;
}

[[noreturn]] void fail(const char* call, tb_status status, const std::string& detail) {
  const Vendor& vendor = Vendor::Get();
  const char* message = vendor.last_error();
  TORCH_CHECK(false, vendor.device_type(), ": collectives.", call, "(", detail, ") failed with ",
              tb_status_name(status), ": ", message != nullptr && message[0] ? message : "");
}

struct Comm {
  tb_comm comm;
  c10::DeviceIndex device;
  int64_t nranks;
  int64_t rank;
};

// Live communicators by handle.  Handles are never reused, so a stale one is an error and
// never someone else's communicator.
std::mutex g_mutex;
std::unordered_map<int64_t, Comm> g_comms;
int64_t g_next = 1;

Comm find(int64_t handle, const char* call) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_comms.find(handle);
  TORCH_CHECK(it != g_comms.end(), Vendor::Get().device_type(), ": collectives.", call, ": ",
              handle, " is not a live communicator");
  return it->second;
}

// Bit set (TB_DTYPE_BIT) of the dtypes the vendor's collectives take; 0 when it has none.
int64_t coll_dtypes() {
  const tb_collectives_extension* found = extension();
  return found == nullptr ? 0 : static_cast<int64_t>(found->dtypes & 0x7fffffffffffffffULL);
}

at::Tensor coll_unique_id() {
  const tb_collectives_extension& c = require("get_unique_id");
  const Vendor& vendor = Vendor::Use("collectives.get_unique_id");
  tb_comm_id id{};
  tb_status status = c.get_unique_id(vendor.context(), &id);
  if (status != TB_OK) fail("get_unique_id", status, "");
  at::Tensor out = at::empty({TB_COMM_ID_BYTES}, at::TensorOptions().dtype(at::kByte));
  std::memcpy(out.data_ptr(), id.bytes, TB_COMM_ID_BYTES);
  return out;
}

int64_t coll_init(int64_t device, int64_t nranks, int64_t rank, const at::Tensor& id,
                  int64_t timeout_ms) {
  const tb_collectives_extension& c = require("comm_init");
  c10::DeviceIndex index = resolve_device(static_cast<c10::DeviceIndex>(device));
  TORCH_CHECK(id.device().is_cpu() && id.scalar_type() == at::kByte &&
                  id.numel() == TB_COMM_ID_BYTES && id.is_contiguous(),
              "collectives.comm_init: the id must be ", TB_COMM_ID_BYTES,
              " contiguous uint8 CPU bytes, got ", id.sizes(), " ", id.scalar_type(), " on ",
              id.device());
  tb_comm_id raw{};
  std::memcpy(raw.bytes, id.data_ptr(), TB_COMM_ID_BYTES);
  tb_comm_config config{};
  config.struct_size = sizeof config;
  config.timeout_ms = timeout_ms;
  const Vendor& vendor = Vendor::Use("collectives.comm_init");
  tb_comm comm = nullptr;
  tb_status status = c.comm_init(vendor.context(), index, static_cast<int32_t>(nranks),
                                 static_cast<int32_t>(rank), &raw, &config, &comm);
  if (status != TB_OK) {
    fail("comm_init", status,
         c10::str("device ", static_cast<int>(index), ", rank ", rank, " of ", nranks));
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  int64_t handle = g_next++;
  g_comms.emplace(handle, Comm{comm, index, nranks, rank});
  return handle;
}

void coll_destroy(int64_t handle) {
  Comm comm = find(handle, "comm_destroy");
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_comms.erase(handle);
  }
  const tb_collectives_extension& c = require("comm_destroy");
  const Vendor& vendor = Vendor::Use("collectives.comm_destroy");
  tb_status status = c.comm_destroy(vendor.context(), comm.comm);
  if (status != TB_OK) fail("comm_destroy", status, c10::str("rank ", comm.rank));
}

// Enqueues `collective` ("all_reduce", "broadcast", "all_gather", "reduce_scatter",
// "all_to_all") of `send` into `recv` on the current stream of the communicator's device;
// `op_or_root` is the tb_reduce_op of a reduction or the root rank of a broadcast.
void coll_run(int64_t handle, const std::string& collective, const at::Tensor& send,
              const at::Tensor& recv, int64_t op_or_root) {
  const char* call = collective.c_str();
  Comm comm = find(handle, call);
  const tb_collectives_extension& c = require(call);
  const c10::Device device = make_device(comm.device);
  for (const at::Tensor* t : {&send, &recv}) {
    TORCH_CHECK(t->device() == device && t->is_contiguous(), "collectives.", call,
                ": tensors must be contiguous and on ", device,
                " (the communicator's device), got ",
                t->is_contiguous() ? "" : "a non-contiguous tensor ", "on ", t->device());
  }
  TORCH_CHECK(send.scalar_type() == recv.scalar_type(), "collectives.", call, ": send is ",
              send.scalar_type(), ", recv ", recv.scalar_type());
  std::optional<tb_dtype> dtype = tb_dtype_of(send.scalar_type());
  TORCH_CHECK(dtype.has_value() && (c.dtypes & TB_DTYPE_BIT(*dtype)) != 0, "collectives.", call,
              ": the vendor's collectives do not take ", send.scalar_type());
  const int64_t n = comm.nranks;
  const Vendor& vendor = Vendor::Use(call);
  tb_stream stream = current_vendor_stream(comm.device);
  tb_status status = TB_OK;
  size_t count = 0;
  const void* in = send.data_ptr();
  void* out = recv.data_ptr();
  auto sizes = [&](int64_t send_elems, int64_t recv_elems) {
    TORCH_CHECK(send.numel() == send_elems && recv.numel() == recv_elems, "collectives.", call,
                " on ", n, " ranks: send has ", send.numel(), " elements and recv ", recv.numel(),
                "; expected ", send_elems, " and ", recv_elems);
  };
  static const char* const kNames[] = {"all_reduce", "broadcast", "all_gather", "reduce_scatter",
                                       "all_to_all"};
  const char* name = "collective";
  for (const char* known : kNames) {
    if (collective == known) name = known;
  }
  if (C10_UNLIKELY(graph::capturing_any())) {
    // A collective waits for the other ranks when it runs: a graph cannot replay it alone.
    graph::check_capturable(comm.device, c10::str("collective ", name));
  }
  profiler::Activity activity(profiler::Kind::kCollective, name, current_stream(comm.device));
  if (collective == "all_reduce") {
    sizes(recv.numel(), recv.numel());
    count = recv.numel();
    status = c.all_reduce(vendor.context(), comm.comm, in, out, count, *dtype,
                          static_cast<tb_reduce_op>(op_or_root), stream);
  } else if (collective == "broadcast") {
    sizes(recv.numel(), recv.numel());
    count = recv.numel();
    status = c.broadcast(vendor.context(), comm.comm, in, out, count, *dtype,
                         static_cast<int32_t>(op_or_root), stream);
  } else if (collective == "all_gather") {
    sizes(send.numel(), send.numel() * n);
    count = send.numel();
    status = c.all_gather(vendor.context(), comm.comm, in, out, count, *dtype, stream);
  } else if (collective == "reduce_scatter") {
    sizes(recv.numel() * n, recv.numel());
    count = recv.numel();
    status = c.reduce_scatter(vendor.context(), comm.comm, in, out, count, *dtype,
                              static_cast<tb_reduce_op>(op_or_root), stream);
  } else if (collective == "all_to_all") {
    TORCH_CHECK_NOT_IMPLEMENTED(
        TB_STRUCT_HAS_FIELD(&c.base, tb_collectives_extension, all_to_all) &&
            c.all_to_all != nullptr,
        vendor.device_type(), ": the vendor's collectives have no all_to_all");
    TORCH_CHECK(send.numel() % n == 0, "collectives.all_to_all: ", send.numel(),
                " elements do not split into ", n, " equal blocks");
    sizes(send.numel(), send.numel());
    count = send.numel() / n;
    status = c.all_to_all(vendor.context(), comm.comm, in, out, count, *dtype, stream);
  } else {
    TORCH_CHECK(false, "collectives: unknown collective '", collective, "'");
  }
  if (status != TB_OK) {
    fail(call, status, c10::str(count, " ", send.scalar_type(), ", rank ", comm.rank, " of ", n));
  }
  activity.finish();
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_backend, m) {
  m.def("_coll_dtypes() -> int", &coll_dtypes);
  m.def("_coll_unique_id() -> Tensor", &coll_unique_id);
  m.def("_coll_init(int device, int nranks, int rank, Tensor id, int timeout_ms) -> int",
        &coll_init);
  m.def("_coll_destroy(int comm) -> ()", &coll_destroy);
  m.def("_coll_run(int comm, str collective, Tensor send, Tensor(a!) recv, int op_or_root) -> ()",
        &coll_run);
}

}  // namespace torch_backend
