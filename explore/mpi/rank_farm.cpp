// The MPI side of `liftx collect --mpi` and `liftx explore --mpi` (see rank_farm.hpp). Only the
// main thread of a rank
// calls MPI (MPI_THREAD_FUNNELED); each rank's measuring runs in a BatchRunner thread that hands
// its results to the main thread. Every send is non-blocking (Outbox), so that two ranks sending
// to each other at once never wait for each other.
#include "explore/mpi/rank_farm.hpp"

#include "perfdb/record.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <list>
#include <mutex>
#include <thread>
#include <utility>

namespace liftx::explore::mpi {

namespace {

using Clock = std::chrono::steady_clock;

enum Tag : int {
  kHello = 1, ///< rank -> 0: its device (or why it has none)
  kBatch,     ///< 0 -> rank: jobs to measure
  kStop,      ///< 0 -> rank: no more batches
  kResult,    ///< rank -> 0: one job's measurement
  kDone,      ///< rank -> 0: a batch is finished
  kFailed,    ///< rank -> 0: the rank cannot measure any more
  kAlive,     ///< either way: nothing to say, but alive
};

/// How often a rank's main thread looks for messages and results when it has nothing to do.
constexpr auto kPollInterval = std::chrono::milliseconds(2);
constexpr auto kAliveInterval = std::chrono::seconds(1);
/// How long rank 0 waits for the ranks to open their devices (as a worker child may).
constexpr auto kHelloLimit = std::chrono::seconds(120);

void check(int rc, const char* call) {
  LIFTX_INTERNAL_CHECK(rc == MPI_SUCCESS, "{} failed with MPI error {}", call, rc);
}

/// MPI for the life of a collection: initialised once per process, finalised on scope exit.
class Session {
public:
  Session() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    LIFTX_USER_CHECK(!initialised, "--mpi: MPI is already initialised in this process");
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    LIFTX_USER_CHECK(provided >= MPI_THREAD_FUNNELED,
                     "--mpi: this MPI library does not allow threads (MPI_THREAD_FUNNELED)");
    // An error talking to a dead rank is ours to handle, not a reason to abort the job.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    MPI_Get_processor_name(name, &length);
    host.assign(name, static_cast<size_t>(length));
  }
  /// Without `finalize` (a rank was lost) the process ends without MPI_Finalize: Open MPI 4's
  /// finalize waits for every rank of the job, the dead one too, and under --enable-recovery
  /// sometimes never returns.
  ~Session() {
    if (finalize)
      MPI_Finalize();
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank = 0;
  int size = 1;
  int local_rank = 0; ///< among the ranks of this node
  std::string host;
  bool finalize = true;
};

/// Non-blocking sends whose buffers live until MPI has sent them.
class Outbox {
public:
  void send(int destination, Tag tag, std::string text = {}) {
    Pending& p = pending_.emplace_back();
    p.text = std::move(text);
    check(MPI_Isend(p.text.data(), static_cast<int>(p.text.size()), MPI_CHAR, destination, tag,
                    MPI_COMM_WORLD, &p.request),
          "MPI_Isend");
  }
  /// Forgets the sends that are complete.
  void progress() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? pending_.erase(it) : std::next(it);
    }
  }
  /// Lets the sends complete for at most `limit`; those to a dead rank never will and are
  /// abandoned.
  void drain(Clock::duration limit) {
    const auto deadline = Clock::now() + limit;
    for (progress(); !pending_.empty() && Clock::now() < deadline; progress())
      std::this_thread::sleep_for(kPollInterval);
    for (Pending& p : pending_) {
      MPI_Cancel(&p.request);
      MPI_Request_free(&p.request);
    }
    pending_.clear();
  }

private:
  struct Pending {
    std::string text;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<Pending> pending_; ///< a list: the buffers must not move
};

struct Message {
  int source = 0;
  int tag = 0;
  std::string text;
};

std::optional<Message> poll_message() {
  int flag = 0;
  MPI_Status status;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
  if (!flag)
    return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  Message m{status.MPI_SOURCE, status.MPI_TAG, std::string(static_cast<size_t>(count), '\0')};
  check(
      MPI_Recv(m.text.data(), count, MPI_CHAR, m.source, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
      "MPI_Recv");
  return m;
}

// ---- batches and what measuring them gives back ----------------------------------------------

struct Batch {
  int64_t id = 0;
  /// The jobs' numbers on rank 0: over every measure() call, so that a late answer to an earlier
  /// call is told apart.
  std::vector<size_t> job_indices;
  std::vector<CollectJob> jobs;
  double seconds_left = 0; ///< of the time limit; 0 = none
};

nlohmann::json batch_json(const Batch& batch) {
  nlohmann::json jobs = nlohmann::json::array();
  for (size_t i = 0; i < batch.jobs.size(); ++i)
    jobs.push_back({{"index", batch.job_indices[i]},
                    {"configuration_id", batch.jobs[i].configuration_id},
                    {"label", batch.jobs[i].label},
                    {"job", batch.jobs[i].json}});
  return {{"id", batch.id}, {"seconds_left", batch.seconds_left}, {"jobs", std::move(jobs)}};
}

Batch batch_from(const nlohmann::json& json) {
  Batch batch;
  batch.id = json.at("id").get<int64_t>();
  batch.seconds_left = json.at("seconds_left").get<double>();
  for (const nlohmann::json& job : json.at("jobs")) {
    batch.job_indices.push_back(job.at("index").get<size_t>());
    batch.jobs.push_back(CollectJob{job.at("configuration_id").get<int64_t>(), job.at("job"),
                                    job.at("label").get<std::string>()});
  }
  return batch;
}

struct Event {
  enum class Kind { result, done, failed } kind = Kind::result;
  size_t job = 0; ///< result: the job's number on rank 0 (Batch::job_indices)
  perfdb::Measurement measurement;
  int64_t batch = 0;    ///< done
  int64_t restarts = 0; ///< done: the rank's worker restarts so far
  std::string message;  ///< failed
};

Tag tag_of(const Event& event) {
  switch (event.kind) {
  case Event::Kind::result:
    return kResult;
  case Event::Kind::done:
    return kDone;
  case Event::Kind::failed:
    return kFailed;
  }
  LIFTX_UNREACHABLE("unknown event kind");
}

std::string event_text(const Event& event) {
  switch (event.kind) {
  case Event::Kind::result:
    return nlohmann::json{{"job", event.job}, {"measurement", to_json(event.measurement)}}.dump();
  case Event::Kind::done:
    return nlohmann::json{{"batch", event.batch}, {"restarts", event.restarts}}.dump();
  case Event::Kind::failed:
    return nlohmann::json{{"message", event.message}}.dump();
  }
  LIFTX_UNREACHABLE("unknown event kind");
}

Event event_from(int tag, const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text);
  Event event;
  if (tag == kResult) {
    event.job = json.at("job").get<size_t>();
    event.measurement = perfdb::measurement_from(json.at("measurement"));
  } else if (tag == kDone) {
    event.kind = Event::Kind::done;
    event.batch = json.at("batch").get<int64_t>();
    event.restarts = json.at("restarts").get<int64_t>();
  } else {
    event.kind = Event::Kind::failed;
    event.message = json.at("message").get<std::string>();
  }
  return event;
}

/// Measures the batches it is given, one at a time, in a thread of its own (LocalMeasurer: worker
/// children on the rank's device), and queues what they give for the rank's main thread.
class BatchRunner {
public:
  explicit BatchRunner(const CollectOptions& options)
      : measurer_(options), thread_([this] { run(); }) {}
  ~BatchRunner() { finish(); }
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  void give(Batch batch) {
    {
      std::lock_guard lock(mutex_);
      queued_.push_back(std::move(batch));
    }
    wake_.notify_all();
  }
  /// Stops after the job being measured and waits for the thread.
  void finish() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }
  std::vector<Event> take_events() {
    std::lock_guard lock(mutex_);
    return std::exchange(events_, {});
  }

private:
  void push(Event event) {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  bool stopping() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }
  void run() {
    while (true) {
      Batch batch;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
        if (stopping_)
          return;
        batch = std::move(queued_.front());
        queued_.pop_front();
      }
      const auto deadline =
          batch.seconds_left > 0
              ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(batch.seconds_left))
              : Clock::time_point::max();
      try {
        measurer_.measure(
            batch.jobs,
            [&](size_t job, size_t, const perfdb::Measurement& m) {
              push(Event{Event::Kind::result, batch.job_indices[job], m});
            },
            [&] { return Clock::now() >= deadline || stopping(); });
        Event done{Event::Kind::done};
        done.batch = batch.id;
        done.restarts = measurer_.worker_restarts();
        push(std::move(done));
      } catch (const std::exception& e) {
        Event failed{Event::Kind::failed};
        failed.message = e.what();
        push(std::move(failed));
        return;
      }
    }
  }

  LocalMeasurer measurer_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Batch> queued_;
  std::vector<Event> events_;
  bool stopping_ = false;
  std::thread thread_; ///< last: starts once the members above exist
};

/// The rank's device: its spec ("P:D") and profile (opened and closed again, as collect does).
struct RankDevice {
  std::string spec;
  target::DeviceProfile profile;
};

RankDevice open_rank_device(const std::string& spec, int local_rank) {
  RankDevice device;
  device.spec = device_for_local_rank(spec, local_rank);
  device.profile = runtime::select_device(device.spec).profile;
  return device;
}

// ---- a rank other than 0 ----------------------------------------------------------------------

/// Says hello with its device, then measures the batches rank 0 sends until told to stop.
RankReport serve(const CollectOptions& options, const MpiOptions& mpi, Session& session) {
  RankReport report{session.rank, session.host};
  Outbox outbox;
  std::optional<RankDevice> device;
  try {
    device = open_rank_device(options.device, session.local_rank);
    report.device_key = device->profile.key;
    outbox.send(0, kHello,
                nlohmann::json{{"host", session.host}, {"device", device->profile}}.dump());
  } catch (const UserError& e) {
    report.problem = e.what();
    outbox.send(0, kHello, nlohmann::json{{"host", session.host}, {"error", e.what()}}.dump());
  }
  std::optional<BatchRunner> runner;
  if (device) {
    CollectOptions rank_options = options;
    rank_options.device = device->spec;
    runner.emplace(rank_options);
  }
  std::optional<Clock::time_point> heard_from_0; // once the first batch came
  auto last_alive = Clock::now();
  int64_t results_sent = 0;
  while (true) {
    bool busy = false;
    if (runner)
      for (Event& event : runner->take_events()) {
        busy = true;
        outbox.send(0, tag_of(event), event_text(event));
        if (event.kind == Event::Kind::result && ++results_sent == mpi.die_after &&
            session.rank == mpi.die_rank) {
          outbox.progress();
          std::raise(SIGKILL); // testing: a rank that dies as a failed node would
        }
        if (event.kind == Event::Kind::failed)
          report.problem = event.message;
        report.measured += event.kind == Event::Kind::result;
      }
    outbox.progress();
    std::optional<Message> message = poll_message();
    if (message && message->source == 0) {
      busy = true;
      heard_from_0 = Clock::now();
      if (message->tag == kStop) {
        session.finalize = nlohmann::json::parse(message->text).value("finalize", true);
        break;
      }
      if (message->tag == kBatch && runner)
        runner->give(batch_from(nlohmann::json::parse(message->text)));
    }
    if (heard_from_0 && Clock::now() - *heard_from_0 > mpi.silence_limit) {
      std::fprintf(stderr, "liftx %s: rank %d: rank 0 silent for %lld s; ending the job\n",
                   mpi.command.c_str(), session.rank,
                   static_cast<long long>(mpi.silence_limit.count()));
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (Clock::now() - last_alive >= kAliveInterval) {
      outbox.send(0, kAlive);
      last_alive = Clock::now();
    }
    if (!busy)
      std::this_thread::sleep_for(kPollInterval);
  }
  if (runner)
    runner->finish();
  outbox.drain(std::chrono::seconds(5));
  return report;
}

// ---- rank 0 -----------------------------------------------------------------------------------

/// Rank 0's Measurer: every rank (itself included, in a BatchRunner) is a slot that measures
/// batches; results are handed to the caller's recording as they arrive. Jobs are numbered over
/// every measure() call (`base_`): a result of an earlier call's job, from a rank given up for
/// lost, is not taken for one of this call's.
class Coordinator : public Measurer {
public:
  Coordinator(const CollectOptions& options, const MpiOptions& mpi, const Session& session)
      : options_(options), mpi_(mpi), session_(session), start_(Clock::now()) {
    reports_.resize(static_cast<size_t>(session.size));
    for (int r = 0; r < session.size; ++r)
      reports_[static_cast<size_t>(r)].rank = r;
    reports_[0].host = session.host;
  }

  std::vector<target::DeviceProfile> devices() override {
    std::vector<target::DeviceProfile> profiles;
    const RankDevice own = open_rank_device(options_.device, session_.local_rank);
    add_slot(0, own.profile, profiles);
    CollectOptions rank0_options = options_;
    rank0_options.device = own.spec;
    local_.emplace(rank0_options);
    receive_hellos(profiles);
    return profiles;
  }

  void measure(const std::vector<CollectJob>& jobs, const Record& record,
               const std::function<bool()>& out_of_time) override {
    base_ += recorded_.size();
    recorded_.assign(jobs.size(), false);
    pending_.clear();
    for (size_t j = 0; j < jobs.size(); ++j)
      pending_.push_back(j);
    auto last_alive = Clock::now();
    while (true) {
      bool busy = take_local_events(record);
      busy = take_messages(record) || busy;
      give_up_silent_slots();
      if (!out_of_time())
        hand_out_batches(jobs);
      if (Clock::now() - last_alive >= kAliveInterval) {
        for (const Slot& slot : slots_)
          if (slot.rank != 0 && slot.state != Slot::State::lost)
            outbox_.send(slot.rank, kAlive);
        last_alive = Clock::now();
      }
      outbox_.progress();
      if (finished(out_of_time()))
        break;
      if (!busy)
        std::this_thread::sleep_for(kPollInterval);
    }
    LIFTX_USER_CHECK(!(!pending_.empty() && !out_of_time() && live_slots() == 0),
                     "{} --mpi: every rank failed; what was measured is stored "
                     "({}).{}",
                     mpi_.command,
                     mpi_.command == "collect" ? "--resume continues"
                                               : "the same command again does not measure it again",
                     problems());
  }

  int64_t worker_restarts() const override {
    int64_t restarts = 0;
    for (const Slot& slot : slots_)
      restarts += slot.restarts;
    return restarts;
  }

  /// Tells every rank that is not lost to stop, and lets the messages go. Whether the job may
  /// end with MPI_Finalize: not once a rank is lost (see Session).
  bool finish() {
    if (local_)
      local_->finish();
    bool any_lost = false;
    for (const RankReport& report : reports_)
      any_lost = any_lost || report.lost;
    const std::string stop = nlohmann::json{{"finalize", !any_lost}}.dump();
    for (int r = 1; r < session_.size; ++r)
      if (!reports_[static_cast<size_t>(r)].lost)
        outbox_.send(r, kStop, stop);
    outbox_.drain(std::chrono::seconds(10));
    return !any_lost;
  }

  const std::vector<RankReport>& reports() const { return reports_; }

private:
  struct Slot {
    int rank = 0;
    size_t device = 0; ///< index in devices()
    enum class State { idle, busy, lost } state = State::idle;
    std::vector<size_t> in_flight; ///< the jobs of its batch (indices of this measure() call)
    Clock::time_point heard;
    int64_t restarts = 0;
  };

  void add_slot(int rank, const target::DeviceProfile& profile,
                std::vector<target::DeviceProfile>& profiles) {
    Slot slot;
    slot.rank = rank;
    slot.device = profiles.size();
    slot.heard = Clock::now();
    profiles.push_back(profile);
    slots_.push_back(std::move(slot));
    reports_[static_cast<size_t>(rank)].device_key = profile.key;
  }

  /// Every other rank's device, or why it has none; ranks not heard from in time are lost.
  void receive_hellos(std::vector<target::DeviceProfile>& profiles) {
    std::vector<bool> heard(static_cast<size_t>(session_.size), false);
    heard[0] = true;
    int waiting = session_.size - 1;
    const auto deadline = Clock::now() + kHelloLimit;
    while (waiting > 0 && Clock::now() < deadline) {
      std::optional<Message> message = poll_message();
      if (!message) {
        std::this_thread::sleep_for(kPollInterval);
        continue;
      }
      const auto r = static_cast<size_t>(message->source);
      if (message->tag != kHello || heard[r])
        continue; // an "alive" before the hello was read
      heard[r] = true;
      --waiting;
      const nlohmann::json hello = nlohmann::json::parse(message->text);
      reports_[r].host = hello.value("host", "");
      if (hello.contains("error")) {
        reports_[r].problem = hello["error"].get<std::string>();
        warn(message->source, reports_[r].problem);
      } else {
        add_slot(message->source, hello.at("device").get<target::DeviceProfile>(), profiles);
      }
    }
    for (size_t r = 1; r < heard.size(); ++r)
      if (!heard[r]) {
        reports_[r].lost = true;
        reports_[r].problem = fmt::format("no word within {} s", kHelloLimit.count());
        warn(static_cast<int>(r), reports_[r].problem);
      }
  }

  Slot* slot_of(int rank) {
    for (Slot& slot : slots_)
      if (slot.rank == rank)
        return &slot;
    return nullptr;
  }

  bool take_local_events(const Record& record) {
    std::vector<Event> events = local_->take_events();
    for (Event& event : events)
      handle(*slot_of(0), event, record);
    return !events.empty();
  }

  bool take_messages(const Record& record) {
    bool any = false;
    while (std::optional<Message> message = poll_message()) {
      any = true;
      Slot* slot = slot_of(message->source);
      if (!slot)
        continue; // a rank without a device: only says it is alive
      slot->heard = Clock::now();
      if (message->tag == kResult || message->tag == kDone || message->tag == kFailed)
        handle(*slot, event_from(message->tag, message->text), record);
    }
    return any;
  }

  void handle(Slot& slot, const Event& event, const Record& record) {
    switch (event.kind) {
    case Event::Kind::result:
      if (event.job >= base_ && event.job - base_ < recorded_.size() &&
          !recorded_[event.job - base_]) {
        recorded_[event.job - base_] = true;
        ++reports_[static_cast<size_t>(slot.rank)].measured;
        record(event.job - base_, slot.device, event.measurement);
      }
      break;
    case Event::Kind::done:
      slot.restarts = event.restarts;
      requeue_unrecorded(slot); // jobs a time limit left
      if (slot.state == Slot::State::busy)
        slot.state = Slot::State::idle;
      break;
    case Event::Kind::failed:
      lose(slot, event.message);
      break;
    }
  }

  void requeue_unrecorded(Slot& slot) {
    for (auto it = slot.in_flight.rbegin(); it != slot.in_flight.rend(); ++it)
      if (!recorded_[*it])
        pending_.push_front(*it); // first again: the plan's order, target by target
    slot.in_flight.clear();
  }

  void lose(Slot& slot, const std::string& why) {
    if (slot.state == Slot::State::lost)
      return;
    slot.state = Slot::State::lost;
    requeue_unrecorded(slot);
    RankReport& report = reports_[static_cast<size_t>(slot.rank)];
    report.lost = true;
    report.problem = why;
    warn(slot.rank, why + "; its unmeasured jobs go to the other ranks");
  }

  void give_up_silent_slots() {
    for (Slot& slot : slots_)
      if (slot.rank != 0 && slot.state == Slot::State::busy &&
          Clock::now() - slot.heard > mpi_.silence_limit)
        lose(slot, fmt::format("not heard from for {} s", mpi_.silence_limit.count()));
  }

  void hand_out_batches(const std::vector<CollectJob>& jobs) {
    for (Slot& slot : slots_) {
      if (slot.state != Slot::State::idle || pending_.empty())
        continue;
      Batch batch;
      batch.id = next_batch_++;
      batch.seconds_left = seconds_left();
      while (!pending_.empty() && batch.jobs.size() < static_cast<size_t>(mpi_.batch)) {
        slot.in_flight.push_back(pending_.front());
        batch.job_indices.push_back(base_ + pending_.front());
        batch.jobs.push_back(jobs[pending_.front()]);
        pending_.pop_front();
      }
      slot.state = Slot::State::busy;
      slot.heard = Clock::now(); // its silence counts from now
      if (slot.rank == 0)
        local_->give(std::move(batch));
      else
        outbox_.send(slot.rank, kBatch, batch_json(batch).dump());
    }
  }

  double seconds_left() const {
    if (options_.time_limit.count() == 0)
      return 0;
    const double left =
        std::chrono::duration<double>(options_.time_limit - (Clock::now() - start_)).count();
    return std::max(left, 0.001);
  }

  int live_slots() const {
    int live = 0;
    for (const Slot& slot : slots_)
      live += slot.state != Slot::State::lost;
    return live;
  }

  bool finished(bool out_of_time) const {
    for (const Slot& slot : slots_)
      if (slot.state == Slot::State::busy)
        return false;
    return pending_.empty() || out_of_time || live_slots() == 0;
  }

  std::string problems() const {
    std::string text;
    for (const RankReport& report : reports_)
      if (!report.problem.empty())
        text += fmt::format("\n  rank {} ({}): {}", report.rank, report.host, report.problem);
    return text;
  }

  void warn(int rank, const std::string& what) const {
    std::fprintf(stderr, "liftx %s: rank %d: %s\n", mpi_.command.c_str(), rank, what.c_str());
  }

  const CollectOptions& options_;
  MpiOptions mpi_;
  const Session& session_;
  Clock::time_point start_;
  std::optional<BatchRunner> local_; ///< rank 0's own measuring
  std::vector<Slot> slots_;
  std::vector<RankReport> reports_;
  std::deque<size_t> pending_; ///< indices of this measure() call
  std::vector<bool> recorded_; ///< of this measure() call's jobs
  size_t base_ = 0;            ///< the number of this measure() call's first job
  int64_t next_batch_ = 0;
  Outbox outbox_;
};

} // namespace

bool available() {
  return true;
}

struct RankFarm::State {
  State(const CollectOptions& measuring, const MpiOptions& mpi) : options(measuring), mpi(mpi) {}
  Session session; ///< first: finalised last
  CollectOptions options;
  MpiOptions mpi;
  std::optional<Coordinator> coordinator; ///< rank 0
  bool finished = false;
};

RankFarm::RankFarm(const CollectOptions& measuring, const MpiOptions& mpi)
    : state_(std::make_unique<State>(measuring, mpi)) {
  if (state_->session.rank == 0)
    state_->coordinator.emplace(state_->options, state_->mpi, state_->session);
}

RankFarm::~RankFarm() {
  if (state_->coordinator && !state_->finished) {
    try {
      finish(); // an error on rank 0: the other ranks stop before it reports
    } catch (const std::exception&) {
      // Ending anyway; the other ranks see rank 0 fall silent.
    }
  }
}

int RankFarm::rank() const {
  return state_->session.rank;
}

int RankFarm::ranks() const {
  return state_->session.size;
}

RankReport RankFarm::serve() {
  LIFTX_INTERNAL_CHECK(!state_->coordinator, "RankFarm::serve on rank 0");
  return mpi::serve(state_->options, state_->mpi, state_->session);
}

Measurer& RankFarm::measurer() {
  LIFTX_INTERNAL_CHECK(state_->coordinator, "RankFarm::measurer on a rank other than 0");
  return *state_->coordinator;
}

std::vector<RankReport> RankFarm::finish() {
  LIFTX_INTERNAL_CHECK(state_->coordinator, "RankFarm::finish on a rank other than 0");
  state_->finished = true;
  state_->session.finalize = state_->coordinator->finish();
  return state_->coordinator->reports();
}

} // namespace liftx::explore::mpi
