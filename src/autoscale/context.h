// PassContext: what one pass of RunOnce has worked out, shared by its
// components so each computes a fact once. Built from the snapshot at the
// start of the pass; components read it and append actions to the plan.
#ifndef TIDE_AUTOSCALE_CONTEXT_H_
#define TIDE_AUTOSCALE_CONTEXT_H_

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "autoscale/plan.h"
#include "autoscale/scaleup/estimator.h"
#include "core/spare.h"
#include "core/time.h"
#include "model/cluster.h"
#include "model/state_index.h"
#include "sched/slices.h"
#include "sched/snapshot.h"

namespace tide::autoscale {

// A set of node or job ids that a pass asks about once per node or job but
// that is usually empty: asking an empty one costs no hash.
class IdSet : public absl::flat_hash_set<int64_t> {
 public:
  using absl::flat_hash_set<int64_t>::flat_hash_set;
  // Implicit, so that a plain set can be assigned to one.
  IdSet(absl::flat_hash_set<int64_t> s) : absl::flat_hash_set<int64_t>(std::move(s)) {}  // NOLINT(runtime/explicit)
  bool contains(int64_t id) const { return !empty() && absl::flat_hash_set<int64_t>::contains(id); }
};

// The lists a pass fills, kept from one pass for the next so that their
// memory is not allocated again (PassContext::Reuse).
struct PassScratch {
  std::vector<int> live, min_nodes, max_nodes, extra_nodes;
  std::vector<const model::Job*> pending, elastic, elastic_async, elastic_below_max, active;
  std::vector<Demand> queued, demands;
  // Where the forecast found each day's window in the submission log last
  // time: hints to start its searches from, so never cleared.
  std::vector<size_t> forecast_starts;
  void Clear() {
    for (auto* v : {&live, &min_nodes, &max_nodes, &extra_nodes}) v->clear();
    for (auto* v : {&pending, &elastic, &elastic_async, &elastic_below_max, &active}) v->clear();
    for (auto* v : {&queued, &demands}) v->clear();
  }
};

struct PassContext {
  PassContext(const model::ClusterState& s, Timestamp t) : state(s), spec(*s.spec), now(t) {}
  // A sparse what-if's memory, and the lists', go back to the spares they
  // came from.
  ~PassContext() {
    if (spare != nullptr && sparse_ && snap_ != nullptr) spare->Give(std::move(snap_));
    if (scratch_spare_ != nullptr) {
      if (scratch_box_ == nullptr) scratch_box_ = std::make_unique<PassScratch>();
      SwapLists(scratch_box_.get());
      scratch_spare_->Give(std::move(scratch_box_));
    }
  }
  PassContext(const PassContext&) = delete;
  PassContext& operator=(const PassContext&) = delete;
  // Fills the lists in the memory of an earlier pass's (emptied), if `from`
  // holds it, and gives them back to it at the end of the pass.
  void Reuse(Spare<PassScratch>* from) {
    scratch_spare_ = from;
    scratch_box_ = from->Take();
    if (scratch_box_ == nullptr) return;
    scratch_box_->Clear();
    SwapLists(scratch_box_.get());
  }

  const model::ClusterState& state;
  const model::ClusterSpec& spec;
  Timestamp now;

  // Nodes per pool that count against max_nodes (booting, ready, draining).
  std::vector<int> live;
  // Per pool, the limits in force now: the configured ones narrowed by
  // scheduled capacity rules.
  std::vector<int> min_nodes, max_nodes;
  // Pool `p`'s minimum in force (the configured one if no rule narrowed it).
  int MinNodes(int p) const { return min_nodes.empty() ? spec.pools[p].min_nodes : min_nodes[p]; }
  // Per pool, nodes this pass buys before the what-if is built (pre-warm):
  // the what-if counts them as booting.
  std::vector<int> extra_nodes;
  // The pending jobs in queue order, and the jobs that hold GPUs (starting,
  // running, stopping) in snapshot order: components that look only at the
  // latter walk them, not a queue of 100,000.
  std::vector<const model::Job*> pending;
  const std::vector<const model::Job*>& active() const {
    if (!active_known_ && index != nullptr) {
      active_.reserve(index->active().size());
      index->active().ForEach([&](size_t pos) { active_.push_back(&state.jobs[pos]); });
      active_known_ = true;
    }
    return active_;
  }
  // The elastic ones of `active`, in the same order; of those, the ones that
  // run asynchronously, and the ones with fewer workers than their most.
  std::vector<const model::Job*> elastic, elastic_async, elastic_below_max;
  // The driver's state index, if it has one synced with the state
  // (model/state_index.h): components read it rather than scan.
  const model::StateIndex* index = nullptr;
  // Where a sparse what-if's memory is taken from and given back to, kept
  // by the autoscaler between passes (nullptr: a new one each pass).
  sched::SnapshotSpare* spare = nullptr;
  // The pending jobs' demands, in queue order beside `pending`: made in the
  // same scan, in memory order, so that coverage walks this compact array
  // rather than 100,000 jobs in queue order. Coverage consumes it.
  std::vector<Demand> queued;

  // A job of the snapshot by id: from the driver's state index if it has
  // one; else from a map built on first use (a pass over 100,000 pending
  // jobs that names none need not build it at all).
  const model::Job& JobById(model::JobId id) const {
    if (const model::StateIndex* x = model::IndexFor(state)) {
      if (const int pos = x->JobPos(id); pos >= 0) return state.jobs[pos];
    }
    if (jobs_.empty()) {
      jobs_.reserve(state.jobs.size());
      for (const auto& j : state.jobs) jobs_[j.id] = &j;
    }
    return *jobs_.at(id);
  }

  // The what-if (BuildCoverage): free GPUs of ready and booting nodes, plus
  // GPUs that running and stopping jobs give back within the release
  // lookahead. Without an index, coverage builds it whole. With one it is
  // sparse: a node's slot is its position, a busy node no step has touched
  // is filled in when first asked for (SlotOf), and the whole of it is built
  // only when a step first needs it, as coverage would have built it (most
  // passes, with no job waiting, never do). Hence a const context may build
  // or change it.
  sched::CapacitySnapshot& Snap() const;
  bool HasSnap() const { return snap_ != nullptr; }
  sched::SliceSnapshot slices;  // partly used MIG GPUs, beside the what-if

  // The slot of node `id` in the what-if, or -1 if it does not hold it. The
  // what-if is built (if sparse and not yet) and holds the node.
  int SlotOf(model::NodeId id) const;
  // The same for the node at position `pos` of the state.
  int SlotAt(size_t pos) const;
  // Gives `gpus` to node `id` in the what-if, if it holds the node. Outside
  // a fork, a busy node a sparse what-if has not filled in yet is filled in
  // with them in one step, rather than as it is and then given to; the
  // snapshot ends the same.
  void GiveTo(model::NodeId id, int gpus) const;
  // The slot of the node at `pos`, which has a GPU free now, without
  // building a sparse what-if: once built, it holds every such node.
  int SlotOfFreeNode(size_t pos) const {
    if (!sparse_) return slot_of_.Find(state.nodes[pos].id);
    return InSparseWhatIf(pos) ? static_cast<int>(pos) : -1;
  }
  // The node in a slot of the what-if (nullptr: a node not bought yet).
  const model::Node* NodeAt(int slot) const {
    if (sparse_) return static_cast<size_t>(slot) < state.nodes.size() ? &state.nodes[slot] : nullptr;
    return node_at_[slot];
  }
  // GPUs free now on the node of a slot, and whether it runs nothing, from
  // the index's compact records when it has them.
  int NodeFree(int slot) const {
    return sparse_ ? index->node(static_cast<size_t>(slot)).free : node_at_[slot]->free_gpus;
  }
  bool NodeIdle(int slot) const {
    if (!sparse_) return node_at_[slot]->idle();
    const auto& n = index->node(static_cast<size_t>(slot));
    return n.free == n.gpus;
  }
  // The pool of a slot, read without building a sparse what-if.
  int PoolOfSlot(int slot) const {
    if (sparse_ && static_cast<size_t>(slot) < state.nodes.size()) return index->node(static_cast<size_t>(slot)).pool;
    return snap_->pool(slot);
  }
  // Whether the what-if counts job `j`'s GPUs as free: it is stopping, was
  // stopped by this pass before coverage, or ends within the release
  // lookahead. Nothing else may count them again.
  bool Freeing(const model::Job& j) const;

  // How coverage builds the what-if. Dense: it is given the snapshot and
  // adds nodes and templates; FreeingJob records the freeing jobs. Sparse:
  // the view it was built from (the nodes already taken out, the jobs already
  // stopped, the lookahead) is kept so that it can be built later.
  void SetDense(std::unique_ptr<sched::CapacitySnapshot> snap) { snap_ = std::move(snap); }
  void AddToWhatIf(const model::Node* n, int slot) {
    slot_of_.Add(n->id, slot);
    node_at_.push_back(n);
  }
  void AddTemplateToWhatIf() { node_at_.push_back(nullptr); }
  void FreeingJob(model::JobId id) { freeing_.insert(id); }
  void MakeSparse(Duration lookahead) {
    sparse_ = true;
    excluded_ = leaving;
    stopped_before_ = touched;
    lookahead_ = lookahead;
  }
  bool sparse() const { return sparse_; }
  Duration lookahead() const { return lookahead_; }
  const IdSet& stopped_before() const { return stopped_before_; }
  // Whether a node of the index at `pos` is in the sparse what-if.
  bool InSparseWhatIf(size_t pos) const {
    return index->staying().contains(pos) && !excluded_.contains(index->node(pos).id);
  }
  // The GPUs free now on the nodes InSparseWhatIf, from the index's sums
  // rather than a walk of the nodes with a GPU free.
  int64_t SparseFreeNow() const {
    int64_t free = 0;
    for (int p = 0; p < static_cast<int>(spec.pools.size()); ++p) free += index->staying_free(p);
    for (const int64_t id : excluded_) {
      const int pos = index->NodePos(id);
      if (pos >= 0 && index->staying().contains(static_cast<size_t>(pos))) free -= std::max(0, index->node(pos).free);
    }
    return free;
  }
  const sched::SlotIndex& slot_index() const { return slot_of_; }
  // Sets the sparse what-if (by its builder, BuildSparseWhatIf).
  void SetSparse(std::unique_ptr<sched::CapacitySnapshot> snap) const { snap_ = std::move(snap); }

  // Pending jobs that still need capacity after the what-if (in queue order).
  std::vector<Demand> demands;
  // The forecast's search hints, from the last pass if kept (PassScratch).
  std::vector<size_t> forecast_starts;
  // Nodes pending work is planned onto: idle release keeps them, and boot
  // spares do not count them. Only those two ask, and only about idle ready
  // nodes and booting ones, so a step may leave out a ready node busy now
  // (NeedSlot does): a busy cluster has hundreds.
  IdSet needed;
  // Whether `needed` could be asked about the node in what-if slot `slot`:
  // it is booting, or ready and idle now.
  bool NeededAsked(int slot) const;
  // Enters the node in what-if slot `slot` in `needed` if it could be asked about.
  void NeedSlot(int slot) {
    if (NeededAsked(slot)) needed.insert(Snap().id(slot));
  }
  // Nodes this pass drains or evacuates: nothing else may count on them.
  IdSet leaving;
  // Jobs this pass stops (preempt, reclaim, evacuate) or resizes.
  IdSet touched;
  // GPUs per slot that resizes in this pass took from what is free now.
  absl::flat_hash_map<int, int> taken_now;
  // Nodes the disruption budget still allows this pass to disrupt, and
  // whether it refused something this pass.
  int disruption_allowance = 0;
  int disruption_max = 0;  // the budget's max_nodes (a huge number if unlimited)
  bool budget_blocked = false;  // refused something the budget will allow later
  // The forecast expects work within its horizon this pass (BootHedge then
  // keeps booting nodes for it).
  bool forecast_expects = false;

  // Pool `p`'s spot capacity is known to be out (a create failed) since.
  bool SpotOut(int p) const {
    return !state.pools.empty() && state.pools[p].unavailable_since != kInfiniteFuture;
  }

 private:
  // Exchanges the lists this pass fills with `s`'s.
  void SwapLists(PassScratch* s) {
    live.swap(s->live);
    min_nodes.swap(s->min_nodes);
    max_nodes.swap(s->max_nodes);
    extra_nodes.swap(s->extra_nodes);
    pending.swap(s->pending);
    elastic.swap(s->elastic);
    elastic_async.swap(s->elastic_async);
    elastic_below_max.swap(s->elastic_below_max);
    active_.swap(s->active);
    queued.swap(s->queued);
    demands.swap(s->demands);
    forecast_starts.swap(s->forecast_starts);
  }
  Spare<PassScratch>* scratch_spare_ = nullptr;
  std::unique_ptr<PassScratch> scratch_box_;
  mutable absl::flat_hash_map<model::JobId, const model::Job*> jobs_;
  // The jobs that hold GPUs: listed by IndexState's scan, or from the index
  // when first asked (most passes never ask).
  mutable std::vector<const model::Job*> active_;
  mutable bool active_known_ = false;
  friend void IndexState(PassContext* ctx);
  mutable std::unique_ptr<sched::CapacitySnapshot> snap_;
  // The dense what-if's node index (without a state index) and freeing jobs.
  sched::SlotIndex slot_of_;
  std::vector<const model::Node*> node_at_;
  IdSet freeing_;
  // The sparse what-if's view, as coverage saw it.
  bool sparse_ = false;
  IdSet excluded_;
  IdSet stopped_before_;
  Duration lookahead_{0};
};

// Builds the sparse what-if of `ctx` (coverage.cc).
void BuildSparseWhatIf(const PassContext& ctx);
// The GPUs free in the sparse what-if of `ctx` as BuildSparseWhatIf makes it
// (its total_free() before any step takes from it), added up without
// building it; and of those, the ones free now and on the templates, without
// the freeing jobs' (a bound below, with no job read).
int64_t SparseWhatIfFree(const PassContext& ctx);
int64_t SparseWhatIfFreeNow(const PassContext& ctx);

inline sched::CapacitySnapshot& PassContext::Snap() const {
  if (snap_ == nullptr) BuildSparseWhatIf(*this);
  return *snap_;
}

inline bool PassContext::Freeing(const model::Job& j) const {
  if (!sparse_) return freeing_.contains(j.id);
  if (j.state == model::JobState::kPending || j.state == model::JobState::kCompleted) return false;
  if (j.state == model::JobState::kStopping || stopped_before_.contains(j.id)) return true;
  return j.state == model::JobState::kRunning && lookahead_.count() > 0 && j.expected_end <= now + lookahead_;
}

inline bool PassContext::NeededAsked(int slot) const {
  auto asked = [](model::NodeState st, bool idle) {
    return st == model::NodeState::kProvisioning || (st == model::NodeState::kReady && idle);
  };
  if (sparse_) {  // a slot is a position: the index's record tells
    if (slot < 0 || static_cast<size_t>(slot) >= state.nodes.size()) return false;
    const auto& n = index->node(static_cast<size_t>(slot));
    return asked(n.state, n.free == n.gpus);
  }
  // A slot past the listed nodes is a template a step added (a node not
  // bought yet), which no step asks about.
  if (slot < 0 || static_cast<size_t>(slot) >= node_at_.size()) return false;
  const model::Node* n = node_at_[slot];
  return n != nullptr && asked(n->state, n->idle());
}

inline int PassContext::SlotAt(size_t pos) const {
  if (!sparse_) return slot_of_.Find(state.nodes[pos].id);
  if (!InSparseWhatIf(pos)) return -1;
  const int slot = static_cast<int>(pos);
  sched::CapacitySnapshot& snap = Snap();
  if (snap.absent(slot)) {
    const auto& n = index->node(pos);
    snap.Materialize(slot, n.id, n.pool, n.gpus, n.free);
  }
  return slot;
}

inline int PassContext::SlotOf(model::NodeId id) const {
  if (!sparse_) return slot_of_.Find(id);
  const int pos = index->NodePos(id);
  return pos < 0 ? -1 : SlotAt(static_cast<size_t>(pos));
}

inline void PassContext::GiveTo(model::NodeId id, int gpus) const {
  if (!sparse_) {
    if (const int slot = slot_of_.Find(id); slot >= 0) Snap().Give(slot, gpus);
    return;
  }
  const int pos = index->NodePos(id);
  if (pos < 0 || !InSparseWhatIf(static_cast<size_t>(pos))) return;
  sched::CapacitySnapshot& snap = Snap();
  if (snap.absent(pos) && !snap.in_fork()) {
    const auto& n = index->node(static_cast<size_t>(pos));
    snap.Materialize(pos, n.id, n.pool, n.gpus, n.free + gpus);
  } else {
    snap.Give(SlotAt(static_cast<size_t>(pos)), gpus);
  }
}

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_CONTEXT_H_
