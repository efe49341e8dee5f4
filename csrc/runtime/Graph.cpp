// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/Graph.h"

#include <ATen/EmptyTensor.h>
#include <ATen/core/GraphImplInterface.h>
#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/StreamGuard.h>
#include <c10/util/Logging.h>
#include <c10/util/ScopeExit.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "profiler/Profiler.h"
#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Event.h"
#include "runtime/Generator.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace graph {

std::atomic<int> g_active_captures{0};

namespace {

// The payload of a host function recorded into a graph, freed with the graph (keep_payload).
class Payload {
 public:
  Payload(void* data, void (*release)(void*)) noexcept : data_(data), release_(release) {}
  Payload(Payload&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), release_(other.release_) {}
  Payload& operator=(Payload&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(release_, other.release_);
    return *this;
  }
  ~Payload() {
    if (data_ != nullptr) release_(data_);
  }
  C10_DISABLE_COPY_AND_ASSIGN(Payload);

 private:
  void* data_;
  void (*release_)(void*);
};

// A generator a capture's random kernels drew from: its state on the device, which each replay
// rewrites, and the counter values one replay uses.
struct CapturedGenerator {
  c10::intrusive_ptr<PhiloxGenerator> generator;
  at::Tensor state;  // int64[2] on the device: key, base counter (tb_rng_key::device_state)
  uint64_t increment = 0;
};

// A capture under way: what the checks and the allocator consult.
struct Capture {
  c10::DeviceIndex device = 0;
  c10::StreamId stream = 0;
  at::GraphCaptureMode mode = at::GraphCaptureMode::Global;
  std::thread::id thread;
  c10::MempoolId_t pool{0, 0};
  std::string invalid;  // the first refused operation's message
  std::vector<CapturedGenerator> generators;
  std::vector<std::string> ops;  // operators enqueued, in order (debug_dump)
  // The streams that joined it (multi-stream capture): each waited for an event recorded in it.
  std::vector<c10::StreamId> joined;
  // Host functions' payloads recorded into it (keep_payload): every replay calls them again.
  std::vector<Payload> payloads;

  bool has(c10::StreamId id) const {
    return id == stream || std::find(joined.begin(), joined.end(), id) != joined.end();
  }
};

std::mutex g_mutex;                // guards g_captures, every Capture in it, g_event_capture
std::vector<Capture*> g_captures;  // the captures under way
// The capture in which each event was last recorded, while that capture is under way (events
// live as long as the process, Event.h).
std::unordered_map<const Event*, Capture*> g_event_capture;
std::atomic<uint64_t> g_pool_ids{1};  // graph pool ids this process made: {id, 0}
// Set while this thread allocates a generator's graph state: from the general pools, never
// from the graph's (see capture_philox).
thread_local bool t_outside_pool = false;

const char* mode_name(at::GraphCaptureMode mode) {
  switch (mode) {
    case at::GraphCaptureMode::Default:
    case at::GraphCaptureMode::Global:
      return "global";
    case at::GraphCaptureMode::ThreadLocal:
      return "thread_local";
    case at::GraphCaptureMode::Relaxed:
      return "relaxed";
  }
  return "unknown";
}

// Invalidates `capture` (first message wins) and throws.  Called with g_mutex held; the lock
// guard releases it as the exception leaves.
[[noreturn]] void refuse(Capture& capture, const std::string& what, const char* why) {
  std::string message =
      c10::str(Vendor::Get().device_type(), ": ", what, " is not permitted while stream ",
               capture.stream, " of device ", static_cast<int>(capture.device),
               " captures a graph (capture_error_mode '", mode_name(capture.mode), "'): ", why,
               ". The capture is invalidated: end it and capture again without this operation");
  if (capture.invalid.empty()) capture.invalid = message;
  TORCH_CHECK(false, message);
}

Capture* find_capture(c10::DeviceIndex device, c10::StreamId stream) {
  for (Capture* capture : g_captures) {
    if (capture->device == device && capture->has(stream)) return capture;
  }
  return nullptr;
}

// Whether `capture` forbids unsafe operations on its device to the calling thread.
bool forbids(const Capture& capture) {
  return capture.mode == at::GraphCaptureMode::Global ||
         (capture.mode == at::GraphCaptureMode::ThreadLocal &&
          capture.thread == std::this_thread::get_id());
}

const tb_graphs_extension* extension() {
  static const std::pair<const tb_graphs_extension*, std::string> found = [] {
    char error[512] = "";
    const tb_graphs_extension* ext = tb_loader_graphs(&Vendor::Get().table(), error, sizeof error);
    return std::make_pair(ext, std::string(error));
  }();
  TORCH_CHECK(found.second.empty(), found.second);
  return found.first;
}

tb_capture_mode vendor_mode(at::GraphCaptureMode mode) {
  switch (mode) {
    case at::GraphCaptureMode::ThreadLocal:
      return TB_CAPTURE_THREAD_LOCAL;
    case at::GraphCaptureMode::Relaxed:
      return TB_CAPTURE_RELAXED;
    default:
      return TB_CAPTURE_GLOBAL;
  }
}

// torch.accelerator.Graph for the device (CUDAGraph's shape).
class DeviceGraph final : public at::GraphImplInterface {
 public:
  explicit DeviceGraph(const at::GraphImplArgs& /*args*/) {
    const Vendor& vendor = Vendor::Use("graphs");
    extension_ = extension();
    TORCH_CHECK_NOT_IMPLEMENTED(
        extension_ != nullptr, vendor.device_type(), ": graph capture is not supported: vendor '",
        vendor.table().vendor_name,
        "' has no graphs extension (TB_EXTENSION_GRAPHS, vendor.h ABI 2.3)");
  }

  ~DeviceGraph() override {
    try {
      reset();
    } catch (const std::exception& e) {
      LOG(WARNING) << "torch_backend: releasing a graph failed: " << e.what();
    }
  }

  C10_DISABLE_COPY_AND_ASSIGN(DeviceGraph);

  void capture_begin(c10::MempoolId_t pool, at::GraphCaptureMode mode) override {
    const Vendor& vendor = Vendor::Use("graphs.capture_begin");
    TORCH_CHECK(capture_ == nullptr && graph_ == nullptr, vendor.device_type(),
                ": this graph holds a capture already; reset() it before capturing again");
    device_ = current_device();
    stream_ = current_stream(device_);
    pool_ = pool.first == 0 && pool.second == 0 ? c10::MempoolId_t{g_pool_ids++, 0} : pool;
    auto capture = std::make_unique<Capture>();
    capture->device = device_;
    capture->stream = stream_.id();
    capture->mode = mode == at::GraphCaptureMode::Default ? at::GraphCaptureMode::Global : mode;
    capture->thread = std::this_thread::get_id();
    capture->pool = pool_;
    tb_stream stream = vendor_stream(stream_);
    retain_graph_pool(device_, pool_);
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (find_capture(device_, stream_.id()) != nullptr) {
        release_graph_pool(device_, pool_);
        TORCH_CHECK(false, vendor.device_type(), ": ", stream_, " is capturing already");
      }
      g_captures.push_back(capture.get());
      g_active_captures++;
    }
    capture_ = std::move(capture);
    tb_status status =
        extension_->capture_begin(vendor.context(), stream, vendor_mode(capture_->mode));
    if (status != TB_OK) {
      Unregister();
      capture_.reset();
      release_graph_pool(device_, pool_);
      vendor.Fail("graphs.capture_begin", status,
                  detail::FormatArguments(static_cast<const void*>(stream),
                                          static_cast<int>(vendor_mode(mode))));
    }
  }

  void capture_end() override {
    const Vendor& vendor = Vendor::Use("graphs.capture_end");
    TORCH_CHECK(capture_ != nullptr, vendor.device_type(),
                ": capture_end() without a capture under way");
    Unregister();
    std::unique_ptr<Capture> capture = std::move(capture_);
    tb_graph graph = nullptr;
    tb_status status = extension_->capture_end(vendor.context(), vendor_stream(stream_), &graph);
    std::string failure = capture->invalid;
    if (failure.empty() && status != TB_OK) {
      failure = c10::str(vendor.device_type(), ": graphs.capture_end failed with ",
                         tb_status_name(status), ": ", vendor.last_error());
    }
    if (!failure.empty()) {
      if (graph != nullptr) (void)extension_->graph_destroy(vendor.context(), graph);
      capture->generators.clear();
      release_graph_pool(device_, pool_);
      TORCH_CHECK(false, vendor.device_type(), ": the graph capture on ", stream_,
                  " failed: ", failure);
    }
    graph_ = graph;
    generators_ = std::move(capture->generators);
    ops_ = std::move(capture->ops);
    payloads_ = std::move(capture->payloads);
  }

  // The vendor's graph is ready to launch once captured: nothing to instantiate.
  void instantiate() override {
    TORCH_CHECK(graph_ != nullptr, Vendor::Get().device_type(),
                ": instantiate() needs a graph whose capture has ended");
  }

  void replay() override {
    const Vendor& vendor = Vendor::Use("graphs.graph_launch");
    TORCH_CHECK(graph_ != nullptr, vendor.device_type(),
                ": replay() needs a graph whose capture has ended");
    c10::DeviceGuard guard(make_device(device_));
    c10::Stream stream = current_stream(device_);
    // Each generator's key and next counter go to the graph, in stream order, and the
    // generator advances by what one replay draws: replays draw new numbers, and a replay after
    // manual_seed(s) draws what an eager run after manual_seed(s) would.
    for (CapturedGenerator& captured : generators_) {
      uint64_t seed = 0, base = 0;
      {
        std::lock_guard<std::mutex> lock(captured.generator->mutex_);
        seed = captured.generator->current_seed();
        base = captured.generator->get_offset();
        captured.generator->set_offset(base + captured.increment);
      }
      captured.state.select(0, 0).fill_(static_cast<int64_t>(seed));
      captured.state.select(0, 1).fill_(static_cast<int64_t>(base));
    }
    tb_stream launch_stream = vendor_stream(stream);
    profiler::Activity activity(profiler::Kind::kGraph, "graph replay", stream);
    tb_status status = extension_->graph_launch(vendor.context(), graph_, launch_stream);
    if (status == TB_OK) {
      activity.finish();
      last_replay_ = stream;
    }
    if (status != TB_OK) {
      vendor.Fail("graphs.graph_launch", status,
                  detail::FormatArguments(static_cast<const void*>(graph_),
                                          static_cast<const void*>(launch_stream)));
    }
  }

  void reset() override {
    if (!Vendor::IsLoaded() || Vendor::IsFinalized()) return;  // at exit: the vendor is gone
    const Vendor& vendor = Vendor::Get();
    if (capture_ != nullptr) {  // a capture abandoned midway: end it, keep nothing
      Unregister();
      tb_graph graph = nullptr;
      if (extension_->capture_end(vendor.context(), vendor_stream(stream_), &graph) == TB_OK &&
          graph != nullptr) {
        (void)extension_->graph_destroy(vendor.context(), graph);
      }
      capture_.reset();
      release_graph_pool(device_, pool_);
    }
    if (graph_ != nullptr) {
      tb_graph graph = std::exchange(graph_, nullptr);
      generators_.clear();
      ops_.clear();
      ReleasePayloads();
      release_graph_pool(device_, pool_);
      tb_status status = extension_->graph_destroy(vendor.context(), graph);
      if (status != TB_OK) {
        vendor.Fail("graphs.graph_destroy", status,
                    detail::FormatArguments(static_cast<const void*>(graph)));
      }
    }
  }

  c10::MempoolId_t pool() const override { return pool_; }

  void enable_debug_mode() override { debug_ = true; }

  // A text listing: the graph's device, stream, pool and the operators it holds, in order.
  void debug_dump(const std::string& path) override {
    const char* device_type = Vendor::Get().device_type();
    TORCH_CHECK(debug_, device_type, ": debug_dump() needs enable_debug_mode() before the capture");
    TORCH_CHECK(graph_ != nullptr, device_type, ": debug_dump() needs a captured graph");
    std::ofstream out(path);
    TORCH_CHECK(out.good(), device_type, ": debug_dump: cannot write ", path);
    out << device_type << " graph captured on " << stream_ << ", pool (" << pool_.first << ", "
        << pool_.second << "), " << ops_.size() << " operators, " << generators_.size()
        << " generators\n";
    for (size_t i = 0; i < ops_.size(); i++) out << i << '\t' << ops_[i] << '\n';
  }

 private:
  // The payloads of captured host functions go once the replays queued so far have run: in
  // stream order after the last replay (launches of one graph run in order), else now.
  void ReleasePayloads() {
    std::optional<c10::Stream> last = std::exchange(last_replay_, std::nullopt);
    if (payloads_.empty()) return;
    auto* held = new std::vector<Payload>(std::move(payloads_));
    payloads_.clear();
    if (last.has_value()) {
      try {
        c10::StreamGuard guard(*last);
        launch_host_func(last->device_index(), &FreePayloads, held);
        return;
      } catch (const std::exception& e) {
        // The stream cannot take it (it captures another graph): wait for it instead.
        LOG(WARNING) << "torch_backend: freeing a graph's host-function payloads after " << *last
                     << " ran its replays: " << e.what() << "; waiting for it";
        try {
          synchronize_stream(*last);
        } catch (const std::exception& e2) {
          LOG(WARNING) << "torch_backend: " << e2.what() << "; the payloads are kept";
          return;  // leaked rather than freed under a replay that may still call them
        }
      }
    }
    delete held;
  }

  static tb_status FreePayloads(void* data, char* /*message*/, size_t /*size*/) {
    delete static_cast<std::vector<Payload>*>(data);
    return TB_OK;
  }

  void Unregister() {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto it = g_captures.begin(); it != g_captures.end(); ++it) {
      if (*it == capture_.get()) {
        g_captures.erase(it);
        g_active_captures--;
        for (auto e = g_event_capture.begin(); e != g_event_capture.end();) {
          e = e->second == capture_.get() ? g_event_capture.erase(e) : std::next(e);
        }
        return;
      }
    }
  }

  const tb_graphs_extension* extension_ = nullptr;
  c10::DeviceIndex device_ = 0;
  c10::Stream stream_{c10::Stream::DEFAULT, c10::Device(c10::DeviceType::PrivateUse1, 0)};
  c10::MempoolId_t pool_{0, 0};
  std::unique_ptr<Capture> capture_;  // while capturing
  tb_graph graph_ = nullptr;          // once captured
  std::vector<CapturedGenerator> generators_;
  std::vector<std::string> ops_;
  std::vector<Payload> payloads_;           // of captured host functions
  std::optional<c10::Stream> last_replay_;  // the stream of the latest replay
  bool debug_ = false;
};

}  // namespace

std::optional<c10::MempoolId_t> allocation_pool(c10::DeviceIndex device, c10::StreamId stream,
                                                size_t bytes) {
  if (t_outside_pool) return std::nullopt;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (Capture* capture = find_capture(device, stream)) return capture->pool;
  for (Capture* capture : g_captures) {
    if (capture->device == device && forbids(*capture)) {
      refuse(*capture, c10::str("an allocation of ", bytes, " bytes on stream ", stream),
             "its memory would come from outside the graph's private pool (allocate on the "
             "capturing stream, or capture with capture_error_mode='relaxed')");
    }
  }
  return std::nullopt;
}

void check_capturable(c10::DeviceIndex device, const std::string& what) {
  if (!capturing_any()) return;
  device = resolve_device(device);
  const c10::StreamId current = current_stream_id(device);
  std::lock_guard<std::mutex> lock(g_mutex);
  for (Capture* capture : g_captures) {
    if (capture->device != device) continue;
    if (capture->has(current) || forbids(*capture)) {
      refuse(*capture, what, "it cannot be captured into a graph");
    }
  }
}

void check_not_capturing(c10::Stream stream, const std::string& what) {
  if (!capturing_any()) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (Capture* capture = find_capture(stream.device_index(), stream.id())) {
    refuse(*capture, what, "it would wait for work that is being captured, which never runs");
  }
}

void check_device_not_capturing(c10::DeviceIndex device, const std::string& what) {
  if (!capturing_any()) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (Capture* capture : g_captures) {
    if (capture->device == device) {
      refuse(*capture, what, "it would wait for work that is being captured, which never runs");
    }
  }
}

const uint64_t* capture_philox(c10::DeviceIndex device, PhiloxGenerator* generator,
                               uint64_t increment, uint64_t& seed, uint64_t& offset,
                               at::Tensor* state) {
  if (!capturing_any()) return nullptr;
  const c10::StreamId stream = current_stream_id(device);
  auto registered = [&](Capture& capture) -> CapturedGenerator* {
    for (CapturedGenerator& captured : capture.generators) {
      if (captured.generator.get() == generator) return &captured;
    }
    return nullptr;
  };
  std::unique_lock<std::mutex> lock(g_mutex);
  Capture* capture = find_capture(device, stream);
  if (capture == nullptr) return nullptr;
  if (registered(*capture) == nullptr) {
    // The state tensor is allocated outside the lock (the allocator consults the captures),
    // then registered unless another thread did it meanwhile.  Not from the graph's pool: each
    // replay writes it before the graph runs, so it must not share memory with what the
    // graph's own work wrote and freed earlier in the capture (stream-ordered reuse within the
    // pool would let that work overwrite it).  The graph holds it, so nothing else reuses it.
    lock.unlock();
    at::Tensor fresh;
    {
      c10::DeviceGuard guard(make_device(device));
      t_outside_pool = true;
      auto restore = c10::make_scope_exit([] { t_outside_pool = false; });
      fresh = at::detail::empty_generic({2}, device_allocator(),
                                        c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                        at::kLong, std::nullopt);
    }
    lock.lock();
    capture = find_capture(device, stream);
    if (capture == nullptr) return nullptr;
    if (registered(*capture) == nullptr) {
      capture->generators.push_back(CapturedGenerator{
          c10::intrusive_ptr<PhiloxGenerator>::unsafe_reclaim_from_nonowning(generator),
          std::move(fresh), 0});
    }
  }
  CapturedGenerator* captured = registered(*capture);
  seed = generator->current_seed();
  offset = captured->increment;
  captured->increment += (increment + 3) / 4 * 4;
  if (state != nullptr) *state = captured->state;
  return static_cast<const uint64_t*>(captured->state.const_data_ptr());
}

void note_captured_op(c10::DeviceIndex device, const char* name) {
  if (!capturing_any()) return;
  const c10::StreamId stream = current_stream_id(device);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (Capture* capture = find_capture(device, stream)) capture->ops.emplace_back(name);
}

bool keep_payload(c10::DeviceIndex device, void* payload, void (*release)(void*)) {
  if (!capturing_any()) return false;
  const c10::StreamId stream = current_stream_id(device);
  std::lock_guard<std::mutex> lock(g_mutex);
  Capture* capture = find_capture(device, stream);
  if (capture == nullptr) return false;
  capture->payloads.reserve(capture->payloads.size() + 1);  // may throw: nothing taken yet
  capture->payloads.emplace_back(payload, release);         // no allocation: cannot throw
  return true;
}

bool is_capturing(c10::Stream stream) {
  if (!capturing_any()) return false;
  std::lock_guard<std::mutex> lock(g_mutex);
  return find_capture(stream.device_index(), stream.id()) != nullptr;
}

bool is_current_stream_capturing() {
  if (!capturing_any()) return false;
  const c10::DeviceIndex device = current_device();
  const c10::StreamId stream = current_stream_id(device);
  std::lock_guard<std::mutex> lock(g_mutex);
  return find_capture(device, stream) != nullptr;
}

void note_event_record(const Event* event, c10::Stream stream) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (Capture* capture = find_capture(stream.device_index(), stream.id())) {
    g_event_capture[event] = capture;
  } else {
    g_event_capture.erase(event);
  }
}

void note_stream_wait(c10::Stream stream, const Event* event) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto found = g_event_capture.find(event);
  if (found == g_event_capture.end()) return;
  Capture* capture = found->second;
  if (capture->device == stream.device_index() &&
      find_capture(capture->device, stream.id()) == nullptr) {
    capture->joined.push_back(stream.id());
  }
}

c10::MempoolId_t new_pool_handle() { return {0, g_pool_ids++}; }

void register_graph_impl() {
  std::string key = c10::DeviceTypeName(c10::DeviceType::PrivateUse1, /*lower_case=*/false);
  if (at::GraphImplRegistry()->Has(key)) return;
  at::GraphImplRegistry()->Register(key, [](at::GraphImplArgs args) {
    return std::unique_ptr<at::GraphImplInterface>(std::make_unique<DeviceGraph>(args));
  });
}

}  // namespace graph
}  // namespace torch_backend
