// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Two ways torch.profiler reaches the device:
//   - Kineto (torch.profiler.profile(activities=[..., ProfilerActivity.PrivateUse1]), and
//     torch.autograd.profiler.profile(use_device=<device>)): a child activity profiler,
//     registered with REGISTER_PRIVATEUSE1_PROFILER, turns the runtime's timed launches into
//     device activities (Profiler.h);
//   - the legacy marker path (use_kineto=False, KINETO_PRIVATEUSE1_FALLBACK): ProfilerStubs
//     that time each operator with a pair of timing events.
#include "profiler/Profiler.h"

#include <c10/core/DeviceGuard.h>
#include <c10/util/ApproximateClock.h>
#include <c10/util/Logging.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>
#include <torch/csrc/profiler/stubs/base.h>

#include <IActivityProfiler.h>
#include <ThreadUtil.h>
#include <libkineto.h>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/Device.h"
#include "runtime/Event.h"
#include "runtime/Graph.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace profiler {

std::atomic<bool> g_active{false};

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int32_t thread_id() { return libkineto::systemThreadId(); }

// The Kineto correlation id of the CPU operator running on this thread (the innermost).
thread_local std::vector<uint64_t> t_correlation;

struct Record {
  Kind kind;
  const char* name;
  c10::DeviceIndex device;
  c10::StreamId stream;
  uint64_t correlation;
  int32_t thread;
  int64_t launch_begin_ns, launch_end_ns;
  Event* start;
  Event* end;
};

// A device's reference point: a timing event known to have completed at `cpu_ns`.
struct Base {
  Event* event = nullptr;
  int64_t cpu_ns = 0;
};

std::mutex g_mutex;  // guards g_records and g_bases
std::vector<Record> g_records;
std::map<c10::DeviceIndex, Base> g_bases;

void release_records(std::vector<Record>& records) {
  for (Record& r : records) {
    release_event(r.start);
    release_event(r.end);
  }
  records.clear();
}

void release_bases() {
  for (auto& [device, base] : g_bases) release_event(base.event);
  g_bases.clear();
}

libkineto::ActivityType activity_type(Kind kind) {
  switch (kind) {
    case Kind::kMemcpy:
      return libkineto::ActivityType::GPU_MEMCPY;
    case Kind::kMemset:
      return libkineto::ActivityType::GPU_MEMSET;
    default:
      return libkineto::ActivityType::CONCURRENT_KERNEL;
  }
}

const char* launch_name(Kind kind) {
  switch (kind) {
    case Kind::kMemcpy:
      return "tb_memory_api::copy";
    case Kind::kMemset:
      return "tb_memory_api::memset_async";
    case Kind::kCollective:
      return "tb_collectives_extension";
    case Kind::kGraph:
      return "tb_graphs_extension::graph_launch";
    case Kind::kKernel:
      break;
  }
  return "tb_kernel_fn";
}

class Session final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    std::lock_guard<std::mutex> lock(g_mutex);
    release_records(g_records);
    release_bases();
    errors_.clear();
    start_ns_ = now_ns();
    if (Vendor::IsLoaded() && !Vendor::IsFinalized()) {
      // Each device's clock is tied to the host's by a timing event recorded on an idle
      // device: it completes within microseconds of the synchronize that waits for it.
      for (c10::DeviceIndex d = 0; d < device_count(); d++) {
        try {
          c10::Stream stream = default_stream(d);
          synchronize_stream(stream);
          Base base;
          base.event = acquire_event(d, /*timing=*/true);
          record_event(base.event, stream);
          synchronize_event(base.event);
          base.cpu_ns = now_ns();
          g_bases[d] = base;
        } catch (const std::exception& e) {
          errors_.push_back(c10::str("device ", static_cast<int>(d), ": ", e.what()));
        }
      }
    }
    g_active.store(true);
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    g_active.store(false);
    end_ns_ = now_ns();
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const Record& r : g_records) streams_.insert({r.device, r.stream});
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(
        logger, [](int32_t) { return nullptr; }, start_ns_, end_ns_);
  }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked,
                    int64_t /*start*/, int64_t /*end*/) override {
    std::vector<Record> records;
    std::map<c10::DeviceIndex, Base> bases;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      records.swap(g_records);
      bases.swap(g_bases);
    }
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(start_ns_, end_ns_, "torch_backend");
    buffer_->gpuOpCount = 0;
    // Each launch gets its own runtime correlation id, as CUPTI gives each CUDA launch: the
    // flow arrow joins the launch to its work, and `linked` names the operator that launched
    // it.  (An operator that launches several kernels -- a compiled graph's call, whose
    // generated kernels all run inside it -- would otherwise start several flows under one
    // id, which PyTorch's profiler reports as a collision and resolves by guessing: stop 56
    // saw a whole step's device time land on the optimizer's first operator.)
    int32_t runtime_id = 0;
    for (const Record& r : records) {
      auto found = bases.find(r.device);
      if (found == bases.end()) continue;
      double begin_ms = 0, end_ms = 0;
      try {
        synchronize_event(r.end);
        begin_ms = elapsed_ms(found->second.event, r.start);
        end_ms = elapsed_ms(found->second.event, r.end);
      } catch (const std::exception& e) {
        errors_.push_back(c10::str(r.name, ": ", e.what()));
        continue;
      }
      const int64_t base = found->second.cpu_ns;
      const auto correlation = static_cast<int32_t>(r.correlation);
      const libkineto::ITraceActivity* op = r.correlation != 0 ? linked(correlation) : nullptr;
      const int32_t id = ++runtime_id;

      // The launch, on the thread that enqueued it: the start of the flow arrow.
      buffer_->emplace_activity(buffer_->span, libkineto::ActivityType::PRIVATEUSE1_RUNTIME,
                                std::string(launch_name(r.kind)));
      libkineto::GenericTraceActivity& launch = *buffer_->activities.back();
      launch.startTime = r.launch_begin_ns;
      launch.endTime = std::max(r.launch_end_ns, r.launch_begin_ns + 1);
      launch.id = id;
      launch.device = libkineto::processId();
      launch.resource = r.thread;
      launch.threadId = r.thread;
      launch.flow.id = static_cast<uint32_t>(id);
      launch.flow.type = libkineto::kLinkAsyncCpuGpu;
      launch.flow.start = true;
      launch.linked = op;
      launch.addMetadataQuoted("kernel", r.name);
      launch.addMetadata("correlation", static_cast<int64_t>(id));

      // The work, on its stream's row of the device.
      buffer_->emplace_activity(buffer_->span, activity_type(r.kind), std::string(r.name));
      libkineto::GenericTraceActivity& work = *buffer_->activities.back();
      work.startTime = base + static_cast<int64_t>(begin_ms * 1e6);
      work.endTime = std::max(base + static_cast<int64_t>(end_ms * 1e6), work.startTime + 1);
      work.id = id;
      work.device = r.device;
      work.resource = static_cast<int32_t>(r.stream);
      work.threadId = static_cast<int32_t>(r.stream);
      work.flow.id = static_cast<uint32_t>(id);
      work.flow.type = libkineto::kLinkAsyncCpuGpu;
      work.flow.start = false;
      work.linked = op;
      work.addMetadata("device", static_cast<int>(r.device));
      work.addMetadata("stream", static_cast<int64_t>(r.stream));
      work.addMetadata("correlation", static_cast<int64_t>(id));
      buffer_->gpuOpCount++;
      launch.log(logger);
      work.log(logger);
    }
    release_records(records);
    for (auto& [device, base] : bases) release_event(base.event);
    status_ = errors_.empty() ? libkineto::TraceStatus::READY : libkineto::TraceStatus::WARNING;
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    const char* type = Vendor::IsLoaded() ? Vendor::Get().device_type() : "device";
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{0, 0, c10::str(type, " 0"), c10::str(type, " 0")});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    const char* type = Vendor::IsLoaded() ? Vendor::Get().device_type() : "device";
    std::vector<libkineto::ResourceInfo> infos;
    for (const auto& [device, stream] : streams_) {
      infos.push_back(libkineto::ResourceInfo{
          static_cast<int64_t>(stream), static_cast<int64_t>(stream), device,
          c10::str(type, " ", static_cast<int>(device), " stream ", stream)});
    }
    return infos;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::move(buffer_);
  }

  void pushCorrelationId(uint64_t id) override { t_correlation.push_back(id); }

  void popCorrelationId() override {
    if (!t_correlation.empty()) t_correlation.pop_back();
  }

 private:
  int64_t start_ns_ = 0, end_ns_ = 0;
  std::vector<std::string> errors_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
  std::set<std::pair<c10::DeviceIndex, c10::StreamId>> streams_;
};

class DeviceActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }

  const std::set<libkineto::ActivityType>& availableActivities() const override {
    return activities_;
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>& types,
      const libkineto::Config& /*config*/) override {
    // A profile of the CPU alone asks for the runtime types too (PRIVATEUSE1_RUNTIME is a host
    // activity): only the device's own types start the device timeline.
    for (libkineto::ActivityType type : types) {
      if (type == libkineto::ActivityType::CONCURRENT_KERNEL ||
          type == libkineto::ActivityType::GPU_MEMCPY ||
          type == libkineto::ActivityType::GPU_MEMSET) {
        return std::make_unique<Session>();
      }
    }
    return nullptr;
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t /*ts_ms*/, int64_t /*duration_ms*/, const std::set<libkineto::ActivityType>& types,
      const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_ = "torch_backend";
  std::set<libkineto::ActivityType> activities_{
      libkineto::ActivityType::CONCURRENT_KERNEL, libkineto::ActivityType::GPU_MEMCPY,
      libkineto::ActivityType::GPU_MEMSET, libkineto::ActivityType::PRIVATEUSE1_RUNTIME};
};

REGISTER_PRIVATEUSE1_PROFILER(DeviceActivityProfiler);

// The legacy path: each operator timed by a pair of events on the current stream.
struct Stubs final : torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, torch::profiler::impl::ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    c10::DeviceIndex index = current_device();
    if (device != nullptr) *device = index;
    Event* timed = acquire_event(index, /*timing=*/true);
    *event = std::shared_ptr<void>(timed, [](void* e) { release_event(static_cast<Event*>(e)); });
    if (cpu_ns != nullptr) *cpu_ns = c10::getTime();
    record_event(timed, current_stream(index));
  }

  float elapsed(const torch::profiler::impl::ProfilerVoidEventStub* first,
                const torch::profiler::impl::ProfilerVoidEventStub* second) const override {
    const auto* a = static_cast<const Event*>(first->get());
    const auto* b = static_cast<const Event*>(second->get());
    synchronize_event(a);
    synchronize_event(b);
    return static_cast<float>(elapsed_ms(a, b) * 1000.0);  // microseconds, as CUDA's stubs
  }

  void mark(const char* /*name*/) const override {}
  void rangePush(const char* /*name*/) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }

  void onEachDevice(std::function<void(int)> op) const override {
    for (c10::DeviceIndex d = 0; d < device_count(); d++) {
      c10::DeviceGuard guard(make_device(d));
      op(d);
    }
  }

  void synchronize() const override {
    for (c10::DeviceIndex d = 0; d < device_count(); d++) {
      synchronize_stream(current_stream(d));
    }
  }
};

struct RegisterStubs {
  RegisterStubs() {
    static Stubs stubs;
    torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  }
} g_register_stubs;

}  // namespace

Activity::Activity(Kind kind, const char* name, c10::Stream stream)
    : kind_(kind), name_(name), stream_(stream) {
  if (!active()) return;
  if (graph::capturing_any() && graph::is_capturing(stream)) return;  // no events in a capture
  launch_ns_ = now_ns();
  try {
    start_ = acquire_event(stream.device_index(), /*timing=*/true);
    record_event(start_, stream);
  } catch (const std::exception& e) {
    if (start_ != nullptr) release_event(start_);
    start_ = nullptr;
    LOG(WARNING) << "torch_backend: the profiler could not time " << name << ": " << e.what();
  }
}

Activity::~Activity() {
  if (start_ != nullptr) release_event(start_);
}

void Activity::finish() {
  if (start_ == nullptr) return;
  Event* end = nullptr;
  try {
    end = acquire_event(stream_.device_index(), /*timing=*/true);
    record_event(end, stream_);
  } catch (const std::exception& e) {
    if (end != nullptr) release_event(end);
    LOG(WARNING) << "torch_backend: the profiler could not time " << name_ << ": " << e.what();
    return;
  }
  Record record{kind_,
                name_,
                stream_.device_index(),
                stream_.id(),
                t_correlation.empty() ? 0 : t_correlation.back(),
                thread_id(),
                launch_ns_,
                now_ns(),
                std::exchange(start_, nullptr),
                end};
  std::lock_guard<std::mutex> lock(g_mutex);
  g_records.push_back(record);
}

}  // namespace profiler
}  // namespace torch_backend
