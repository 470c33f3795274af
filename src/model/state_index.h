// StateIndex: what decision passes would otherwise find by scanning every
// node and job of a ClusterState, kept up to date by a driver that changes
// the state a little between passes.
//
// A pass of the scheduler or the autoscaler asks the same questions of the
// snapshot every time: which jobs are pending, in queue order; which hold
// GPUs, and when each is expected to end; which nodes have a GPU free, are
// booting, are under notice or idle. Asked by scanning, each question costs
// time in proportion to the whole cluster, and the simulator asks them a
// few million times a run while only a few jobs and nodes change between
// passes. The index answers them in proportion to the answer.
//
// The driver tells the index what it changed (Touch*, Remove*), then calls
// Sync before a pass; ClusterState::index points at it. A driver that
// rebuilds its state from scratch every pass (the live controller) leaves
// the pointer null, and the decision core scans as before. Both ways give the
// same decisions (sched/scheduler_test.cc and autoscale/autoscaler_test.cc
// check it on random states; the simulator checks the index against a fresh
// Build after every Sync when SimOptions::check_index is set).
//
// Positions are indexes into ClusterState::jobs and ::nodes. The index
// describes the state it was synced with, and only while nothing changed
// since: IndexFor() returns it only then.
#ifndef TIDE_MODEL_STATE_INDEX_H_
#define TIDE_MODEL_STATE_INDEX_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::model {

// A set of positions as a bit set, walked in increasing order.
class PosSet {
 public:
  void insert(size_t pos) {
    const size_t w = pos >> 6;
    if (w >= words_.size()) words_.resize(w + 1, 0);
    const uint64_t bit = uint64_t{1} << (pos & 63);
    size_ += (words_[w] & bit) == 0;
    words_[w] |= bit;
  }
  void erase(size_t pos) {
    const size_t w = pos >> 6;
    if (w >= words_.size()) return;
    const uint64_t bit = uint64_t{1} << (pos & 63);
    size_ -= (words_[w] & bit) != 0;
    words_[w] &= ~bit;
  }
  bool contains(size_t pos) const {
    const size_t w = pos >> 6;
    return w < words_.size() && (words_[w] >> (pos & 63) & 1) != 0;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    words_.clear();
    size_ = 0;
  }
  // Removes `pos` and moves every later position down by one (an element
  // erased from the middle of the vector the positions index).
  void EraseShift(size_t pos);
  // Calls f(pos) for each position, in increasing order.
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      for (uint64_t bits = words_[w]; bits != 0; bits &= bits - 1) {
        f(w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
      }
    }
  }
  bool operator==(const PosSet& o) const;

 private:
  std::vector<uint64_t> words_;
  size_t size_ = 0;
};

class StateIndex {
 public:
  // A pending job in queue order: higher priority, then earlier submission,
  // then lower id (sched/queue.h).
  struct Queued {
    int priority;
    Timestamp submit;
    JobId id;
    uint32_t pos;
    bool operator<(const Queued& o) const {
      if (priority != o.priority) return priority > o.priority;
      if (submit != o.submit) return submit < o.submit;
      return id < o.id;
    }
    bool operator==(const Queued& o) const = default;
  };
  // What a pass reads of a node, kept compact: a node's own struct spans
  // several cache lines.
  struct NodeFacts {
    NodeId id = 0;
    int pool = 0;
    int gpus = 0;
    int free = 0;
    NodeState state = NodeState::kTerminated;
    bool noticed = false;  // interrupt_at is set
    bool sliced = false;   // a MIG node (slice_free is set)
    Timestamp created{};
    bool operator==(const NodeFacts&) const = default;
  };
  // The facts of node `n` as the index keeps them.
  static NodeFacts FactsOf(const Node& n) {
    return NodeFacts{n.id, n.pool, n.gpus, n.free_gpus, n.state, n.interrupt_at != kInfiniteFuture,
                     !n.slice_free.empty(), n.created};
  }
  // What a pass reads of a pending job to make its demand, kept compact: a
  // job's own struct spans six cache lines, and a queue of thousands is
  // read in queue order, which is not memory order.
  struct PendingFacts {
    int workers = 0;
    int min_workers = 0;  // JobSpec::MinWorkers()
    int gpus_per_worker = 0;
    int slice_units = 0;
    int priority_class = 0;
    bool preemptible = false;
    bool is_protected = false;
    bool restricted = false;        // JobSpec::restricted()
    bool moves_data = false;        // a data region, and data or output to move
    bool operator==(const PendingFacts&) const = default;
  };
  // A job that holds GPUs, ordered by when it is expected to give them back.
  struct End {
    Timestamp at;
    JobId id;
    uint32_t pos;
    bool running;  // kRunning (not starting or stopping)
    bool operator<(const End& o) const { return at != o.at ? at < o.at : id < o.id; }
    bool operator==(const End& o) const = default;
  };

  // A node that runs something and may give or take a moved job
  // (consolidation, autoscale/scaledown/consolidation.h): ready, with no
  // notice, whole GPUs (not a MIG node) and a GPU in use.
  static bool InUse(const NodeFacts& n) {
    return n.state == NodeState::kReady && !n.noticed && !n.sliced && n.free != n.gpus;
  }
  // An InUse node every job of which could move, as far as the jobs
  // themselves say, ordered by the latest start among them. A job could move
  // when it runs (not starting or stopping), is not protected, checkpoints,
  // uses whole GPUs and holds one share, on one node. The entry also gives,
  // of the node's job that would move first (the most GPUs, then the lowest
  // id), its GPUs per worker and whether it has a worker: enough to tell
  // that no other node has room for it without reading the job.
  struct Settled {
    Timestamp latest;
    NodeId id;
    int lead_gpus_per_worker = 0;
    bool lead_has_workers = false;
    bool operator<(const Settled& o) const { return latest != o.latest ? latest < o.latest : id < o.id; }
    bool operator==(const Settled& o) const = default;
  };
  // Whether job `j` could move, as far as it says itself (the rule above).
  static bool CouldMove(const Job& j) {
    return j.state == JobState::kRunning && !j.spec.is_protected && j.spec.checkpoint.interval.count() > 0 &&
           j.spec.slice_units == 0 && j.alloc.size() == 1;
  }
  // A job that could move, by when its run started.
  struct Start {
    Timestamp at;
    JobId id;
    uint32_t pos;
    bool operator<(const Start& o) const { return at != o.at ? at < o.at : id < o.id; }
    bool operator==(const Start& o) const = default;
  };
  using JobList = absl::InlinedVector<uint32_t, 4>;

  // An index of `state` as it is now; with `placement`, it also keeps what
  // consolidation asks (JobsOn and below), which costs every change a little.
  static StateIndex Build(const ClusterState& state, bool placement = false);
  // The same for an index that has been told of nothing yet.
  void KeepPlacement(bool on) { placement_ = on; }
  bool placement() const { return placement_; }

  // The driver's side. Touch: the job or node at `pos` was appended or may
  // have changed; it is read again at the next Sync. Remove: the job at
  // `pos` is about to be replaced by the last one (swap and pop), or the node
  // at `pos` erased (later ones move down). Call Remove before changing the
  // vector.
  void TouchJob(size_t pos);
  void TouchNode(size_t pos);
  void RemoveJob(size_t pos);
  void RemoveNode(size_t pos);
  // Reads every touched job and node of `state`, which is then the state
  // IndexFor() answers for until the next Touch or Remove.
  void Sync(const ClusterState& state);
  // Where this index differs from a fresh Build of `state` (empty: nowhere).
  std::string Diff(const ClusterState& state) const;

  // For a reader that keeps its own copy of node facts by position
  // (sched::KeptCapacity) and catches up with what changed since it last
  // looked. An event is a position read anew by Sync (a node appended, or
  // one whose record changed), or a node erased by RemoveNode (later ones
  // move down). Only the latest events are kept: a reader further behind
  // than that reads every node again.
  struct NodeEvent {
    uint32_t pos;
    bool erased;
  };
  // The sequence number the next event will have.
  uint64_t node_events_end() const { return events_base_ + events_.size(); }
  // The events from sequence number `seq` on, or false if they are not all
  // kept (`seq` is too old, or newer than any event).
  bool NodeEventsSince(uint64_t seq, std::span<const NodeEvent>* out) const {
    if (seq < events_base_ || seq > node_events_end()) return false;
    *out = std::span<const NodeEvent>(events_).subspan(static_cast<size_t>(seq - events_base_));
    return true;
  }

  // The reader's side, valid while synced.
  const absl::btree_set<Queued>& pending() const { return pending_; }
  // Starting, running and stopping jobs: by position, and by expected end.
  const PosSet& active() const { return active_; }
  const absl::btree_set<End>& ends() const { return ends_; }
  const PosSet& stopping() const { return stopping_; }
  const PosSet& elastic() const { return elastic_; }  // holding GPUs, and elastic
  // The elastic ones that run asynchronously (the only ones utilization
  // scaling resizes), and those with fewer workers than their most (the only
  // ones that may grow): few of them, where a pass would read every elastic job.
  const PosSet& elastic_async() const { return elastic_async_; }
  const PosSet& elastic_below_max() const { return elastic_below_max_; }
  // Nodes by what a pass looks for. A node may be in several.
  const PosSet& ready_free() const { return ready_free_; }      // ready, a GPU free
  const PosSet& booting() const { return booting_; }            // provisioning
  const PosSet& booting_free() const { return booting_free_; }  // provisioning, a GPU free
  const PosSet& noticed() const { return noticed_; }            // interrupt_at set
  const PosSet& idle() const { return idle_; }                  // ready and running nothing
  const PosSet& staying() const { return staying_; }            // ready or provisioning, no notice
  const NodeFacts& node(size_t pos) const { return nodes_[pos]; }
  size_t node_count() const { return nodes_.size(); }
  // The facts of the pending job at `pos` (a position from pending()).
  const PendingFacts& pending_facts(size_t pos) const { return jobs_[pos].facts; }
  // Nodes per pool (ClusterState::nodes holds no terminated node).
  int live(int pool) const { return pool < static_cast<int>(live_.size()) ? live_[pool] : 0; }
  // Whether every node the index has read had a pool in [0, num_pools). It
  // remembers the nodes that left, so it may say no when every node now is
  // fine (a caller then checks the nodes itself), never yes when one is not.
  bool pools_within(int num_pools) const { return !pool_negative_ && pool_bound_ <= num_pools; }
  int staying(int pool) const { return pool < static_cast<int>(staying_count_.size()) ? staying_count_[pool] : 0; }
  // The GPUs free on the ready and provisioning nodes of `pool` with no
  // notice (those in staying()), kept as nodes change.
  int64_t staying_free(int pool) const {
    return pool < static_cast<int>(staying_free_.size()) ? staying_free_[pool] : 0;
  }
  // How many workers of `gpus_per_worker` GPUs the ready and provisioning
  // nodes of the pools in `pool_mask` hold with all their GPUs free.
  int64_t EverSlots(uint64_t pool_mask, int gpus_per_worker) const;
  // The next two come from counts of the ready and provisioning nodes by GPUs
  // free, per pool, kept as nodes change: they look at no node.
  //
  // How many workers of `gpus_per_worker` GPUs the GPUs free now on the ready
  // nodes (and, if `with_booting`, the provisioning ones) of the pools in
  // `pool_mask` hold: what a capacity snapshot of those nodes would say.
  int64_t FreeSlots(uint64_t pool_mask, int gpus_per_worker, bool with_booting) const;
  // The most GPUs free on one ready node of `pool` with no notice: on a
  // partly used one, or also on an idle one if `idle_too`. 0 if none.
  int MostFree(int pool, bool idle_too) const;
  // What consolidation asks, kept as jobs and nodes change, only with
  // placement() (empty otherwise).
  //
  // The positions of the jobs holding GPUs with a share on node `id`, in no
  // order (nullptr: none).
  const JobList* JobsOn(NodeId id) const {
    auto it = placed_.find(id);
    return it == placed_.end() ? nullptr : &it->second.jobs;
  }
  // The InUse nodes of `pool` that hold only jobs that could move, by the
  // GPUs per worker of their lead job (SettledBucket) (nullptr: none yet).
  const std::vector<absl::btree_set<Settled>>* settled(int pool) const {
    return pool >= 0 && static_cast<size_t>(pool) < settled_.size() ? &settled_[pool] : nullptr;
  }
  // 0 if its lead job has no worker (no count of GPUs free rules it out).
  static int SettledBucket(const Settled& s) { return s.lead_has_workers ? std::max(s.lead_gpus_per_worker, 0) : 0; }
  // The jobs holding GPUs that could move.
  const absl::btree_set<Start>& starts() const { return starts_; }
  // How many InUse nodes of `pool` have exactly `free` GPUs free; and a
  // bound above every such `free` of the pool (0: the pool has none).
  int InUseCount(int pool, int free) const {
    if (pool < 0 || static_cast<size_t>(pool) >= in_use_.size()) return 0;
    const auto& c = in_use_[pool];
    return free >= 0 && static_cast<size_t>(free) < c.size() ? c[free] : 0;
  }
  int InUseSpan(int pool) const {
    return pool >= 0 && static_cast<size_t>(pool) < in_use_.size() ? static_cast<int>(in_use_[pool].size()) : 0;
  }
  // The nodes of `pool` by when they were created, in any state (nullptr: none yet).
  const absl::btree_set<std::pair<Timestamp, NodeId>>* created(int pool) const {
    return pool >= 0 && static_cast<size_t>(pool) < created_.size() ? &created_[pool] : nullptr;
  }
  // The GPUs free on the ready nodes of `pool` with no notice (idle ones too).
  int64_t ReadyFree(int pool) const;

  // Whether node ids increase with position (the simulator keeps them so).
  bool nodes_in_id_order() const { return out_of_order_ == 0; }
  // The position of node `id`, or -1: from a table while ids are small, else
  // a binary search while ids increase with position, else a hash map.
  int NodePos(NodeId id) const;
  // The position of job `id`, or -1.
  int JobPos(JobId id) const {
    auto it = job_pos_.find(id);
    return it == job_pos_.end() ? -1 : static_cast<int>(it->second);
  }

 private:
  // What the index last read of a job or node: what its entries were made from.
  struct JobRec {
    uint8_t kind = 0;  // 0: neither, 1: pending, 2: holds GPUs
    bool stopping = false;
    bool running = false;
    bool elastic = false;
    bool async = false;      // elastic, and JobSpec::async
    bool below_max = false;  // elastic, and Workers() < MaxWorkers()
    int priority = 0;
    Timestamp submit{};
    Timestamp end{};
    JobId id = 0;
    PendingFacts facts;  // pending jobs only
    // Jobs holding GPUs: when this run started, whether it could move
    // (Settled), and the nodes it has a share on.
    Timestamp started{};
    bool movable = false;
    absl::InlinedVector<NodeId, 1> on;
    int gpus = 0;             // JobSpec::gpus()
    int gpus_per_worker = 0;
    bool has_workers = false;  // Job::Workers() > 0
    bool operator==(const JobRec&) const = default;
  };
  using NodeRec = NodeFacts;
  JobRec Read(const Job& j) const;
  void Enter(const JobRec& r, size_t pos);
  void Leave(const JobRec& r, size_t pos);
  // The job of record `r` moves from position `from` to `to`, which no job holds.
  void Move(const JobRec& r, size_t from, size_t to);
  void Enter(const NodeRec& r, size_t pos);
  void Leave(const NodeRec& r, size_t pos);
  void CountOutOfOrder();
  // Consolidation's view of the job of record `r` at `pos`, and whether node
  // `id` is Settled; RecheckNodes does the latter for every node marked since.
  void Place(const JobRec& r, size_t pos, int sign);
  // The same for a node, as its record changes from `was` to `now` (either
  // may be nullptr: none).
  void Place(const NodeRec* was, const NodeRec* now);
  void Recheck(NodeId id);
  void RecheckNodes();

  std::vector<JobRec> jobs_;
  absl::flat_hash_map<JobId, uint32_t> job_pos_;  // of the jobs read
  std::vector<NodeRec> nodes_;
  // Of the nodes read, made again when ids move, and only while they are
  // out of order: in order, a binary search finds them.
  absl::flat_hash_map<NodeId, int> node_pos_;
  // Node positions by id while every id is below kDenseNodeIds (dense_); an
  // entry may be stale, so each answer is checked against nodes_.
  static constexpr NodeId kDenseNodeIds = NodeId{1} << 20;
  std::vector<int> pos_by_id_;
  bool dense_ = false;
  std::vector<uint8_t> job_touched_, node_touched_;
  std::vector<uint32_t> touched_jobs_, touched_nodes_;
  const ClusterState* synced_ = nullptr;

  absl::btree_set<Queued> pending_;
  PosSet active_;
  absl::btree_set<End> ends_;
  PosSet stopping_, elastic_, elastic_async_, elastic_below_max_;
  PosSet ready_free_, booting_, booting_free_, noticed_, idle_, staying_;
  std::vector<int> live_, staying_count_;
  std::vector<int64_t> staying_free_;  // [pool]: staying_free()
  std::vector<std::vector<int>> usable_;  // [pool][gpus]: ready or provisioning nodes
  // Consolidation's: jobs per node, Settled nodes, movable jobs by start,
  // InUse nodes by GPUs free, nodes by creation.
  struct Placed {
    JobList jobs;
    int fixed = 0;  // how many of them could not move
    // Where the node is entered among the Settled ones (pool -1: it is not).
    int pool = -1;
    Settled settled{};
  };
  // Takes node `placed` (of id `id`) out of settled_, if it is in.
  void Unsettle(Placed* placed);
  bool placement_ = false;
  absl::flat_hash_map<NodeId, Placed> placed_;
  std::vector<std::vector<absl::btree_set<Settled>>> settled_;  // [pool][SettledBucket]
  std::vector<NodeId> recheck_;  // nodes whose Settled entry may have changed
  absl::btree_set<Start> starts_;
  std::vector<std::vector<int>> in_use_;  // [pool][free]
  std::vector<absl::btree_set<std::pair<Timestamp, NodeId>>> created_;  // [pool]

  // The kinds of node the free-GPU counts keep apart.
  enum class FreeKind : uint8_t {
    kPartlyUsed,  // ready, no notice, not idle (full ones too: 0 free)
    kIdle,        // ready, no notice, every GPU free
    kNoticed,     // ready, under notice
    kBooting,     // provisioning
  };
  static constexpr int kFreeKinds = 4;
  // How many nodes of `pool` and `kind` have exactly `free` GPUs free.
  int FreeCount(int pool, FreeKind kind, int free) const {
    if (pool < 0 || static_cast<size_t>(pool) >= by_free_.size()) return 0;
    const auto& c = by_free_[pool][static_cast<size_t>(kind)];
    return free >= 0 && static_cast<size_t>(free) < c.size() ? c[free] : 0;
  }
  std::vector<std::array<std::vector<int>, kFreeKinds>> by_free_;  // [pool][kind][free]: FreeCount
  // The kind a node counts as in by_free_, or -1: none.
  static int KindOf(const NodeRec& r);
  void CountFree(const NodeRec& r, int sign);
  // NodeEvents: events_[i] has sequence number events_base_ + i.
  static constexpr size_t kKeptNodeEvents = size_t{1} << 16;
  std::vector<NodeEvent> events_;
  uint64_t events_base_ = 0;
  void Log(NodeEvent e) {
    if (events_.size() == kKeptNodeEvents) {
      events_base_ += events_.size();
      events_.clear();
    }
    events_.push_back(e);
  }
  int pool_bound_ = 0;  // above the pool of every node read
  bool pool_negative_ = false;  // a node read had a negative pool
  int out_of_order_ = 0;  // positions whose node id is not above the one before
  bool ids_changed_ = false;  // since out_of_order_ was counted
  size_t ids_from_ = SIZE_MAX;  // no position before it changed its id since
  bool dirty_ = true;  // touched since the last Sync

  friend const StateIndex* IndexFor(const ClusterState& state);
};

// The state's index if it has one synced with it as it is, else nullptr.
const StateIndex* IndexFor(const ClusterState& state);

}  // namespace tide::model

#endif  // TIDE_MODEL_STATE_INDEX_H_
