#include "model/state_index.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "core/strings.h"

namespace tide::model {

void PosSet::EraseShift(size_t pos) {
  const size_t w = pos >> 6;
  if (w >= words_.size()) return;
  erase(pos);
  // Within the word: bits below `pos` stay, bits above move down one.
  const uint64_t low = (pos & 63) == 0 ? 0 : words_[w] & ((uint64_t{1} << (pos & 63)) - 1);
  uint64_t high = (pos & 63) == 63 ? 0 : words_[w] >> ((pos & 63) + 1) << (pos & 63);
  words_[w] = low | high;
  // Every later word moves down one bit, its lowest into the word before.
  for (size_t k = w + 1; k < words_.size(); ++k) {
    words_[k - 1] |= (words_[k] & 1) << 63;
    words_[k] >>= 1;
  }
}

bool PosSet::operator==(const PosSet& o) const {
  if (size_ != o.size_) return false;
  const size_t n = std::max(words_.size(), o.words_.size());
  for (size_t w = 0; w < n; ++w) {
    const uint64_t a = w < words_.size() ? words_[w] : 0, b = w < o.words_.size() ? o.words_[w] : 0;
    if (a != b) return false;
  }
  return true;
}

StateIndex::JobRec StateIndex::Read(const Job& j) const {
  JobRec r;
  r.id = j.id;
  if (j.state == JobState::kPending) {
    r.kind = 1;
    r.priority = j.priority;
    r.submit = j.spec.submit;
    const JobSpec& js = j.spec;
    r.facts = {js.workers,
               js.MinWorkers(),
               js.gpus_per_worker,
               js.slice_units,
               js.priority_class,
               js.preemptible,
               js.is_protected,
               js.restricted(),
               !js.data_region.empty() && (js.data_gb > 0 || js.output_gb > 0)};
  } else if (j.state != JobState::kCompleted) {
    r.kind = 2;
    r.end = j.expected_end;
    r.stopping = j.state == JobState::kStopping;
    r.running = j.state == JobState::kRunning;
    r.elastic = j.spec.elastic();
    r.async = r.elastic && j.spec.async;
    r.below_max = r.elastic && j.BelowMaxWorkers();
    if (!placement_) return r;
    r.started = j.started;
    r.movable = CouldMove(j);
    for (const auto& sh : j.alloc) {
      if (std::find(r.on.begin(), r.on.end(), sh.node) == r.on.end()) r.on.push_back(sh.node);
    }
    r.gpus = j.spec.gpus();
    r.gpus_per_worker = j.spec.gpus_per_worker;
    r.has_workers = j.Workers() > 0;
  }
  return r;
}

void StateIndex::Enter(const JobRec& r, size_t pos) {
  const auto p = static_cast<uint32_t>(pos);
  if (r.kind == 1) {
    const Queued q{r.priority, r.submit, r.id, p};
    pending_.insert(q);
  } else if (r.kind == 2) {
    active_.insert(pos);
    if (r.stopping) stopping_.insert(pos);
    if (r.elastic) elastic_.insert(pos);
    if (r.async) elastic_async_.insert(pos);
    if (r.below_max) elastic_below_max_.insert(pos);
    ends_.insert(End{r.end, r.id, p, r.running});
  }
}

void StateIndex::Leave(const JobRec& r, size_t pos) {
  if (r.kind == 1) {
    const Queued q{r.priority, r.submit, r.id, static_cast<uint32_t>(pos)};
    pending_.erase(q);  // the order ignores the position
  } else if (r.kind == 2) {
    active_.erase(pos);
    stopping_.erase(pos);
    elastic_.erase(pos);
    elastic_async_.erase(pos);
    elastic_below_max_.erase(pos);
    ends_.erase(End{r.end, r.id, static_cast<uint32_t>(pos), r.running});
  }
}

void StateIndex::Place(const JobRec& r, size_t pos, int sign) {
  if (!placement_ || r.kind != 2) return;
  const auto p = static_cast<uint32_t>(pos);
  for (const NodeId id : r.on) {
    recheck_.push_back(id);
    if (sign > 0) {
      Placed& placed = placed_[id];
      placed.jobs.push_back(p);
      placed.fixed += !r.movable;
      continue;
    }
    auto it = placed_.find(id);
    if (it == placed_.end()) continue;
    JobList& jobs = it->second.jobs;
    if (auto at = std::find(jobs.begin(), jobs.end(), p); at != jobs.end()) {
      *at = jobs.back();
      jobs.pop_back();
      it->second.fixed -= !r.movable;
    }
    if (jobs.empty()) {
      Unsettle(&it->second);
      placed_.erase(it);
    }
  }
  if (!r.movable) return;
  if (sign > 0) {
    starts_.insert(Start{r.started, r.id, p});
  } else {
    starts_.erase(Start{r.started, r.id, p});
  }
}

void StateIndex::Place(const NodeRec* was, const NodeRec* now) {
  if (!placement_) return;
  auto live = [](const NodeRec* r) { return r != nullptr && r->state != NodeState::kTerminated; };
  auto in_use = [](const NodeRec* r) { return r != nullptr && InUse(*r) && r->free >= 0; };
  if (in_use(was)) --in_use_[was->pool][was->free];
  if (in_use(now)) {
    if (now->pool >= static_cast<int>(in_use_.size())) in_use_.resize(now->pool + 1);
    auto& c = in_use_[now->pool];
    if (now->free >= static_cast<int>(c.size())) c.resize(now->free + 1, 0);
    ++c[now->free];
  }
  // Most changes are of GPUs free: neither the node's place in created_ nor
  // whether it may be Settled changes with them.
  const bool same_node = live(was) && live(now) && was->id == now->id && was->pool == now->pool;
  if (!same_node || was->created != now->created) {
    if (live(was)) created_[was->pool].erase({was->created, was->id});
    if (live(now)) {
      if (now->pool >= static_cast<int>(created_.size())) created_.resize(now->pool + 1);
      created_[now->pool].insert({now->created, now->id});
    }
  }
  if (!same_node || InUse(*was) != InUse(*now)) {
    if (was != nullptr) recheck_.push_back(was->id);
    if (now != nullptr) recheck_.push_back(now->id);
  }
}

void StateIndex::Unsettle(Placed* placed) {
  if (placed->pool < 0) return;
  settled_[placed->pool][SettledBucket(placed->settled)].erase(placed->settled);
  placed->pool = -1;
}

void StateIndex::Recheck(NodeId id) {
  // A node no job holds GPUs on has no entry, and is in no Settled set.
  auto it = placed_.find(id);
  if (it == placed_.end()) return;
  Placed& placed = it->second;
  const int pos = NodePos(id);
  if (pos < 0 || !InUse(nodes_[pos]) || placed.jobs.empty() || placed.fixed > 0) {
    Unsettle(&placed);
    return;
  }
  Timestamp latest = kInfinitePast;
  const JobRec* lead = nullptr;
  for (const uint32_t j : placed.jobs) {
    const JobRec& r = jobs_[j];
    latest = std::max(latest, r.started);
    if (lead == nullptr || r.gpus > lead->gpus || (r.gpus == lead->gpus && r.id < lead->id)) lead = &r;
  }
  const Settled want{latest, id, lead->gpus_per_worker, lead->has_workers};
  const int pool = nodes_[pos].pool;
  if (placed.pool == pool && placed.settled == want) return;
  Unsettle(&placed);
  if (pool >= static_cast<int>(settled_.size())) settled_.resize(pool + 1);
  auto& buckets = settled_[pool];
  const int b = SettledBucket(want);
  if (b >= static_cast<int>(buckets.size())) buckets.resize(b + 1);
  buckets[b].insert(want);
  placed.pool = pool;
  placed.settled = want;
}

void StateIndex::RecheckNodes() {
  for (const NodeId id : recheck_) Recheck(id);
  recheck_.clear();
}

int StateIndex::KindOf(const NodeRec& r) {
  if (r.state == NodeState::kProvisioning) return static_cast<int>(FreeKind::kBooting);
  if (r.state != NodeState::kReady) return -1;
  if (r.noticed) return static_cast<int>(FreeKind::kNoticed);
  return static_cast<int>(r.free == r.gpus ? FreeKind::kIdle : FreeKind::kPartlyUsed);
}

void StateIndex::CountFree(const NodeRec& r, int sign) {
  const int kind = KindOf(r);
  if (kind < 0 || r.free < 0) return;
  auto& c = by_free_[r.pool][static_cast<size_t>(kind)];
  if (r.free >= static_cast<int>(c.size())) c.resize(r.free + 1, 0);
  c[r.free] += sign;
}

void StateIndex::Enter(const NodeRec& r, size_t pos) {
  pool_bound_ = std::max(pool_bound_, r.pool + 1);
  pool_negative_ |= r.pool < 0;
  if (r.state == NodeState::kTerminated) return;
  if (r.pool >= static_cast<int>(live_.size())) {
    live_.resize(r.pool + 1, 0);
    staying_count_.resize(r.pool + 1, 0);
    staying_free_.resize(r.pool + 1, 0);
    usable_.resize(r.pool + 1);
    by_free_.resize(r.pool + 1);
    in_use_.resize(r.pool + 1);
    created_.resize(r.pool + 1);
  }
  ++live_[r.pool];
  CountFree(r, +1);

  const bool ready = r.state == NodeState::kReady, booting = r.state == NodeState::kProvisioning;
  if (ready || booting) {
    auto& u = usable_[r.pool];
    if (r.gpus >= static_cast<int>(u.size())) u.resize(r.gpus + 1, 0);
    ++u[r.gpus];
  }
  if (ready && r.free > 0) ready_free_.insert(pos);
  if (ready && r.free == r.gpus) idle_.insert(pos);
  if (booting) booting_.insert(pos);
  if (booting && r.free > 0) booting_free_.insert(pos);
  if (r.noticed) noticed_.insert(pos);
  if ((ready || booting) && !r.noticed) {
    staying_.insert(pos);
    ++staying_count_[r.pool];
    staying_free_[r.pool] += std::max(0, r.free);
  }
}

void StateIndex::Leave(const NodeRec& r, size_t pos) {
  if (r.state == NodeState::kTerminated) return;
  --live_[r.pool];
  CountFree(r, -1);

  if (r.state == NodeState::kReady || r.state == NodeState::kProvisioning) --usable_[r.pool][r.gpus];
  if ((r.state == NodeState::kReady || r.state == NodeState::kProvisioning) && !r.noticed) {
    staying_.erase(pos);
    --staying_count_[r.pool];
    staying_free_[r.pool] -= std::max(0, r.free);
  }
  ready_free_.erase(pos);
  idle_.erase(pos);
  booting_.erase(pos);
  booting_free_.erase(pos);
  noticed_.erase(pos);
}

void StateIndex::Move(const JobRec& r, size_t from, size_t to) {
  const auto p = static_cast<uint32_t>(to);
  // The orders ignore positions: the entry is found and its position set in
  // place, not taken out and put back.
  if (r.kind == 1) {
    const auto it = pending_.find(Queued{r.priority, r.submit, r.id, 0});
    if (it != pending_.end()) const_cast<Queued&>(*it).pos = p;
  } else if (r.kind == 2) {
    for (PosSet* s : {&active_, &stopping_, &elastic_, &elastic_async_, &elastic_below_max_}) {
      if (s->contains(from)) {
        s->erase(from);
        s->insert(to);
      }
    }
    const auto it = ends_.find(End{r.end, r.id, 0, r.running});
    if (it != ends_.end()) const_cast<End&>(*it).pos = p;
    for (const NodeId id : r.on) {
      auto pl = placed_.find(id);
      if (pl == placed_.end()) continue;
      for (uint32_t& j : pl->second.jobs) {
        if (j == from) j = p;
      }
    }
    if (r.movable) {
      const auto st = starts_.find(Start{r.started, r.id, 0});
      if (st != starts_.end()) const_cast<Start&>(*st).pos = p;
    }
  }
}

void StateIndex::CountOutOfOrder() {
  // Called once every node was read (Build, the end of Sync): no placeholder is left.
  // Small ids (the simulator numbers its nodes from 1) index a table. Its
  // entries for ids gone are left as they were: NodePos checks each answer.
  // When the ids were in order in a table and only those from a position
  // on changed (nodes erased, appended or read anew there), the ones before
  // are as they were, in order and in the table's range: only the rest is
  // counted and entered.
  const size_t from = dense_ && out_of_order_ == 0 ? std::min(ids_from_, nodes_.size()) : 0;
  ids_from_ = SIZE_MAX;
  out_of_order_ = 0;
  NodeId top = -1;
  for (size_t i = from; i < nodes_.size(); ++i) {
    const NodeId id = nodes_[i].id;
    if (i > 0) out_of_order_ += id <= nodes_[i - 1].id;
    top = id < 0 ? kDenseNodeIds : std::max(top, id);
  }
  node_pos_.clear();
  dense_ = top < kDenseNodeIds;
  if (dense_) {
    if (top >= 0 && static_cast<size_t>(top) >= pos_by_id_.size()) pos_by_id_.resize(static_cast<size_t>(top) + 1, -1);
    for (size_t i = from; i < nodes_.size(); ++i) pos_by_id_[static_cast<size_t>(nodes_[i].id)] = static_cast<int>(i);
  } else if (out_of_order_ > 0) {
    for (size_t i = 0; i < nodes_.size(); ++i) node_pos_[nodes_[i].id] = static_cast<int>(i);
  }
  ids_changed_ = false;
}

int StateIndex::NodePos(NodeId id) const {
  if (dense_) {
    if (id < 0 || static_cast<size_t>(id) >= pos_by_id_.size()) return -1;
    const int p = pos_by_id_[static_cast<size_t>(id)];
    return p >= 0 && static_cast<size_t>(p) < nodes_.size() && nodes_[p].id == id ? p : -1;
  }
  if (out_of_order_ > 0) {
    auto it = node_pos_.find(id);
    return it == node_pos_.end() ? -1 : it->second;
  }
  auto it = std::lower_bound(nodes_.begin(), nodes_.end(), id, [](const NodeRec& n, NodeId v) { return n.id < v; });
  return it != nodes_.end() && it->id == id ? static_cast<int>(it - nodes_.begin()) : -1;
}

StateIndex StateIndex::Build(const ClusterState& state, bool placement) {
  StateIndex x;
  x.placement_ = placement;
  std::vector<Queued> pending;
  std::vector<End> ends;
  x.jobs_.reserve(state.jobs.size());
  x.job_pos_.reserve(state.jobs.size());
  for (size_t i = 0; i < state.jobs.size(); ++i) {
    x.jobs_.push_back(x.Read(state.jobs[i]));
    const JobRec& r = x.jobs_.back();
    x.job_pos_[r.id] = static_cast<uint32_t>(i);
    // Entered in bulk below: sorted once rather than inserted one by one.
    if (r.kind == 1) pending.push_back({r.priority, r.submit, r.id, static_cast<uint32_t>(i)});
    if (r.kind == 2) {
      x.active_.insert(i);
      if (r.stopping) x.stopping_.insert(i);
      if (r.elastic) x.elastic_.insert(i);
      if (r.async) x.elastic_async_.insert(i);
      if (r.below_max) x.elastic_below_max_.insert(i);
      ends.push_back({r.end, r.id, static_cast<uint32_t>(i), r.running});
      x.Place(r, i, +1);
    }
  }
  std::sort(pending.begin(), pending.end());
  std::sort(ends.begin(), ends.end());
  x.pending_.insert(pending.begin(), pending.end());
  x.ends_.insert(ends.begin(), ends.end());
  x.nodes_.reserve(state.nodes.size());
  for (size_t i = 0; i < state.nodes.size(); ++i) {
    x.nodes_.push_back(FactsOf(state.nodes[i]));
    x.Enter(x.nodes_.back(), i);
    x.Place(nullptr, &x.nodes_.back());
  }
  x.CountOutOfOrder();
  x.RecheckNodes();
  x.job_touched_.assign(x.jobs_.size(), 0);
  x.node_touched_.assign(x.nodes_.size(), 0);
  x.synced_ = &state;
  x.dirty_ = false;
  return x;
}

void StateIndex::TouchJob(size_t pos) {
  dirty_ = true;
  if (pos >= jobs_.size()) {
    jobs_.resize(pos + 1);  // kind 0: in no set until read
    job_touched_.resize(pos + 1, 0);
  }
  if (!job_touched_[pos]) {
    job_touched_[pos] = 1;
    touched_jobs_.push_back(static_cast<uint32_t>(pos));
  }
}

void StateIndex::TouchNode(size_t pos) {
  dirty_ = true;
  if (pos >= nodes_.size()) {
    ids_from_ = std::min(ids_from_, nodes_.size());
    nodes_.resize(pos + 1);  // kTerminated: in no set until read
    node_touched_.resize(pos + 1, 0);
    ids_changed_ = true;
  }
  if (!node_touched_[pos]) {
    node_touched_[pos] = 1;
    touched_nodes_.push_back(static_cast<uint32_t>(pos));
  }
}

void StateIndex::RemoveJob(size_t pos) {
  dirty_ = true;
  const size_t last = jobs_.size() - 1;
  Leave(jobs_[pos], pos);
  Place(jobs_[pos], pos, -1);
  if (auto it = job_pos_.find(jobs_[pos].id); it != job_pos_.end() && it->second == pos) job_pos_.erase(it);
  if (pos != last) {
    // The last job takes this position, with what the index knew of it.
    Move(jobs_[last], last, pos);
    jobs_[pos] = jobs_[last];
    if (auto it = job_pos_.find(jobs_[pos].id); it != job_pos_.end() && it->second == last) it->second = pos;
    const bool was_touched = job_touched_[last] != 0;
    job_touched_[pos] = 0;
    if (was_touched) TouchJob(pos);
  }
  jobs_.pop_back();
  job_touched_.pop_back();  // a stale entry for `last` in touched_jobs_ is skipped by Sync
}

void StateIndex::RemoveNode(size_t pos) {
  dirty_ = true;
  Leave(nodes_[pos], pos);
  Place(&nodes_[pos], nullptr);
  Log({static_cast<uint32_t>(pos), true});
  ids_changed_ = true;
  ids_from_ = std::min(ids_from_, pos);
  for (PosSet* s : {&ready_free_, &booting_, &booting_free_, &noticed_, &idle_, &staying_}) s->EraseShift(pos);
  nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(pos));
  node_touched_.erase(node_touched_.begin() + static_cast<std::ptrdiff_t>(pos));
  // Touched positions after it moved down one.
  std::vector<uint32_t> moved;
  for (uint32_t p : touched_nodes_) {
    if (p < pos) moved.push_back(p);
    if (p > pos) moved.push_back(p - 1);
  }
  touched_nodes_ = std::move(moved);
}

void StateIndex::Sync(const ClusterState& state) {
  for (uint32_t pos : touched_jobs_) {
    if (pos >= jobs_.size() || !job_touched_[pos]) continue;
    job_touched_[pos] = 0;
    const JobRec now = Read(state.jobs[pos]);
    if (now == jobs_[pos]) continue;
    Leave(jobs_[pos], pos);
    // Most changes are of when a job is expected to end: where it runs, and
    // whether it could move, stay as they were.
    const JobRec& was = jobs_[pos];
    const bool placed_same = was.kind == now.kind && was.id == now.id && was.started == now.started &&
                             was.movable == now.movable && was.on == now.on && was.gpus == now.gpus &&
                             was.gpus_per_worker == now.gpus_per_worker && was.has_workers == now.has_workers;
    if (!placed_same) Place(was, pos, -1);
    if (now.id != jobs_[pos].id) {
      if (auto it = job_pos_.find(jobs_[pos].id); it != job_pos_.end() && it->second == pos) job_pos_.erase(it);
      job_pos_[now.id] = pos;
    }
    jobs_[pos] = now;
    Enter(now, pos);
    if (!placed_same) Place(now, pos, +1);
  }
  touched_jobs_.clear();
  for (uint32_t pos : touched_nodes_) {
    if (pos >= nodes_.size() || !node_touched_[pos]) continue;
    node_touched_[pos] = 0;
    const NodeRec now = FactsOf(state.nodes[pos]);
    if (now == nodes_[pos]) continue;
    Leave(nodes_[pos], pos);
    Place(&nodes_[pos], &now);
    if (now.id != nodes_[pos].id) {
      ids_changed_ = true;
      ids_from_ = std::min<size_t>(ids_from_, pos);
    }
    nodes_[pos] = now;
    Enter(now, pos);
    Log({pos, false});
  }
  touched_nodes_.clear();
  if (ids_changed_) CountOutOfOrder();
  RecheckNodes();
  synced_ = &state;
  dirty_ = false;
}

int64_t StateIndex::EverSlots(uint64_t pool_mask, int gpus_per_worker) const {
  if (gpus_per_worker <= 0) return 0;
  int64_t slots = 0;
  for (size_t p = 0; p < usable_.size() && p < 64; ++p) {
    if (!(pool_mask >> p & 1)) continue;
    const auto& u = usable_[p];
    for (size_t g = static_cast<size_t>(gpus_per_worker); g < u.size(); ++g) {
      if (u[g] != 0) slots += int64_t{u[g]} * (static_cast<int64_t>(g) / gpus_per_worker);
    }
  }
  return slots;
}

int64_t StateIndex::FreeSlots(uint64_t pool_mask, int gpus_per_worker, bool with_booting) const {
  if (gpus_per_worker <= 0) return 0;
  int64_t slots = 0;
  for (size_t p = 0; p < by_free_.size() && p < 64; ++p) {
    if (!(pool_mask >> p & 1)) continue;
    for (int k = 0; k < kFreeKinds; ++k) {
      if (k == static_cast<int>(FreeKind::kBooting) && !with_booting) continue;
      const auto& c = by_free_[p][static_cast<size_t>(k)];
      // Most levels hold no node: those are passed over without a division.
      for (size_t f = static_cast<size_t>(gpus_per_worker); f < c.size(); ++f) {
        if (c[f] != 0) slots += int64_t{c[f]} * (static_cast<int64_t>(f) / gpus_per_worker);
      }
    }
  }
  return slots;
}

int64_t StateIndex::ReadyFree(int pool) const {
  if (pool < 0 || static_cast<size_t>(pool) >= by_free_.size()) return 0;
  int64_t free = 0;
  for (FreeKind k : {FreeKind::kPartlyUsed, FreeKind::kIdle}) {
    const auto& c = by_free_[pool][static_cast<size_t>(k)];
    for (size_t f = 0; f < c.size(); ++f) free += int64_t{c[f]} * static_cast<int64_t>(f);
  }
  return free;
}

int StateIndex::MostFree(int pool, bool idle_too) const {
  if (pool < 0 || static_cast<size_t>(pool) >= by_free_.size()) return 0;
  int most = 0;
  auto top = [&](FreeKind k) {
    const auto& c = by_free_[pool][static_cast<size_t>(k)];
    for (int f = static_cast<int>(c.size()) - 1; f > most; --f) {
      if (c[f] > 0) {
        most = f;
        return;
      }
    }
  };
  top(FreeKind::kPartlyUsed);
  if (idle_too) top(FreeKind::kIdle);
  return most;
}

}  // namespace tide::model
