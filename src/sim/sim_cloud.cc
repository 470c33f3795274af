#include "sim/sim_cloud.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "sim/sim_cluster.h"

namespace tide::sim {

using model::Node;
using model::NodeState;

SimCloud::SimCloud(SimState* sim, Recorder* recorder, const StorageOptions& storage, uint64_t seed)
    : sim_(sim),
      recorder_(recorder),
      boots_(seed),
      spot_rng_(Rng(seed).Fork("spot")),
      storage_(storage),
      ledger_(sim->spec) {
  pool_seq_.assign(sim->spec->pools.size(), 0);
  unnoticed_.assign(sim->spec->pools.size(), 0);
}

void SimCloud::Start(Timestamp t0) {
  const model::ClusterSpec& spec = *sim_->spec;
  // Every pool starts at its minimum, already running and loaded.
  initializing_ = true;
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    for (int i = 0; i < spec.pools[p].min_nodes; ++i) {
      CreateNode(static_cast<int>(p), t0, false);
      Node& n = sim_->state.nodes.back();  // CreateNode told the index
      n.state = NodeState::kReady;
      n.ready_at = t0;
      n.idle_since = t0;
      NodeJoined(n, t0);  // spot hazards start now; no storage load for the initial fleet
    }
  }
  initializing_ = false;
  // The spot supply series, repeated over the run.
  const auto& supply = sim_->world->spot.supply;
  if (!supply.empty()) {
    supply_period_ = supply.back().offset + Seconds(1);
    for (const auto& pt : supply) sim_->queue.Push(t0 + pt.offset, EventKind::kSpotSupply);
  }
}

std::string SimCloud::NextName(int pool) const {
  return StrCat(sim_->spec->pools[static_cast<size_t>(pool)].name, "-", pool_seq_[static_cast<size_t>(pool)] + 1);
}

model::NodeId SimCloud::NodeNamed(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? 0 : it->second;
}

providers::Instance SimCloud::InstanceOf(const Node& n) const {
  auto key = key_of_.find(n.id);
  return {n.name,
          n.name,
          sim_->spec->pools[static_cast<size_t>(n.pool)].name,
          key == key_of_.end() ? std::string() : key->second,
          n.state == NodeState::kProvisioning ? "pending" : "running",
          n.created};
}

Result<providers::Instance> SimCloud::Create(const providers::CreateRequest& request, Timestamp now) {
  if (!request.idempotency_key.empty()) {
    auto it = by_key_.find(request.idempotency_key);
    const Node* n = it == by_key_.end() ? nullptr : sim_->PeekNode(it->second);
    if (n != nullptr) return InstanceOf(*n);
  }
  const int pool = sim_->spec->PoolIndex(request.pool);
  if (pool < 0) return absl::InvalidArgumentError(StrCat("create: no pool '", request.pool, "'"));
  const model::NodePool& p = sim_->spec->pools[static_cast<size_t>(pool)];
  if (request.node != NextName(pool)) {
    return absl::InvalidArgumentError(
        StrCat("create: node '", request.node, "' is not the next name of pool ", p.name, " (", NextName(pool), ")"));
  }
  // A spot supply trace caps the pool's nodes without notice.
  if (p.tier == model::Tier::kSpot && !sim_->world->spot.supply.empty() &&
      unnoticed_[static_cast<size_t>(pool)] >= SpotSupply(now)) {
    auto& st = sim_->state.pools[static_cast<size_t>(pool)];
    if (st.unavailable_since == kInfiniteFuture) st.unavailable_since = now;
    st.last_failure = now;
    return absl::UnavailableError(StrCat("no spot capacity in pool ", p.name, " (the supply trace allows ",
                                         SpotSupply(now), " nodes)"));
  }
  CreateNode(pool, now, request.why.cause == backends::Cause::kForecast);
  const Node& n = sim_->state.nodes.back();
  if (!request.idempotency_key.empty()) {
    by_key_[request.idempotency_key] = n.id;
    key_of_[n.id] = request.idempotency_key;
  }
  return providers::Instance{n.name, n.name, p.name, request.idempotency_key, "pending", now};
}

Status SimCloud::Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) {
  const model::NodeId id = NodeNamed(instance_id);
  const Node* n = id == 0 ? nullptr : sim_->PeekNode(id);
  if (n == nullptr) return OkStatus();  // gone already
  // A spot node drained on the provider's notice is an interruption, however
  // early it empties.
  auto c = cordons_.find(id);
  const bool drained = c != cordons_.end() && c->second == backends::Cause::kDrain;
  TerminateNode(id, now, drained && n->interrupt_at != kInfiniteFuture);
  return OkStatus();
}

Result<std::vector<providers::Instance>> SimCloud::List(Timestamp now) {
  std::vector<providers::Instance> out;
  for (const Node& n : sim_->state.nodes) out.push_back(InstanceOf(n));
  return out;
}

Result<std::vector<providers::Interruption>> SimCloud::Interruptions(Timestamp now) {
  std::vector<providers::Interruption> out;
  for (const Node& n : sim_->state.nodes) {
    if (n.interrupt_at != kInfiniteFuture && n.interrupt_at > now) out.push_back({n.name, n.name, n.interrupt_at});
  }
  return out;
}

void SimCloud::CreateNode(int pool, Timestamp now, bool forecast) {
  const model::NodePool& p = sim_->spec->pools[static_cast<size_t>(pool)];
  Node n;
  n.id = next_node_id_++;
  n.name = StrCat(p.name, "-", ++pool_seq_[static_cast<size_t>(pool)]);
  n.pool = pool;
  n.state = NodeState::kProvisioning;
  n.created = now;
  n.ready_at = now + boots_.BootDelay(p);
  n.gpus = n.free_gpus = p.type.gpus;
  if (p.mig.enabled()) {
    n.slice_free.assign(static_cast<size_t>(p.type.gpus), static_cast<uint8_t>(p.mig.units_per_gpu));
    n.sliced.assign(static_cast<size_t>(p.type.gpus), 1);  // a MIG pool's node comes up laid out for slices
  }
  sim_->queue.Push(n.ready_at, EventKind::kNodeReady, n.id);
  bill_[n.id] = ledger_.Open(pool, now);
  if (forecast) {
    forecast_nodes_.insert(n.id);
    ++sim_->result.forecast_nodes;
  }
  if (storage_.enabled() && sim_->world->storage.prefetch && !initializing_) {
    loading_.insert(n.id);
    storage_.Start(n.id, now);
    ScheduleStorage();
  }
  by_name_[n.name] = n.id;
  ++unnoticed_[static_cast<size_t>(pool)];
  sim_->node_pos.Set(n.id, sim_->state.nodes.size());
  sim_->index.TouchNode(sim_->state.nodes.size());
  sim_->state.nodes.push_back(std::move(n));
  ++sim_->result.nodes_bought;
  ++live_nodes_;
  sim_->result.peak_nodes = std::max(sim_->result.peak_nodes, live_nodes_);
}

void SimCloud::NodeReady(model::NodeId id, Timestamp now, bool* changed) {
  Node* n = sim_->FindNode(id);
  if (n == nullptr || n->state != NodeState::kProvisioning || joined_at_.contains(n->id)) return;
  NodeJoined(*n, now);
  *changed = true;
}

void SimCloud::StorageLoaded(uint64_t epoch, Timestamp now, bool* changed) {
  if (epoch != storage_.epoch()) return;
  for (model::NodeId id : storage_.Complete(now)) {
    loading_.erase(id);
    Node* n = sim_->FindNode(id);
    if (n != nullptr && joined_at_.contains(id)) {
      NodeUsable(*n, now);
      *changed = true;
    }
  }
  ScheduleStorage();
}

void SimCloud::NodeJoined(Node& n, Timestamp now) {
  joined_at_[n.id] = now;
  const model::NodePool& pool = sim_->spec->pools[static_cast<size_t>(n.pool)];
  const SpotOptions& spot = sim_->world->spot;
  if (pool.tier == model::Tier::kSpot && spot.mean_time_to_interrupt.count() > 0) {
    const double mean = static_cast<double>(spot.mean_time_to_interrupt.count());
    const Timestamp kill = now + Seconds(std::max<int64_t>(1, std::llround(spot_rng_.Exponential(mean))));
    sim_->queue.Push(std::max(now, kill - spot.notice), EventKind::kSpotNotice, n.id, ToUnixSeconds(kill));
    sim_->queue.Push(kill, EventKind::kSpotKill, n.id);
  }
  if (!storage_.enabled() || initializing_) {
    NodeUsable(n, now);
    return;
  }
  if (!sim_->world->storage.prefetch) {
    loading_.insert(n.id);
    storage_.Start(n.id, now);
    ScheduleStorage();
  } else if (!loading_.contains(n.id)) {
    NodeUsable(n, now);  // prefetched during boot
    return;
  }
  n.ready_at = std::max(now, storage_.NextCompletion());  // a rough expectation for planning
}

void SimCloud::NodeUsable(Node& n, Timestamp now) {
  if (n.state != NodeState::kProvisioning) return;
  n.state = NodeState::kReady;
  if (joined_at_.contains(n.id) && now > joined_at_[n.id]) {
    sim_->result.storage_wait_node_hours += static_cast<double>((now - joined_at_[n.id]).count()) / 3600.0;
  }
  n.ready_at = now;
  if (n.idle()) n.idle_since = now;
  cluster_->MaybeStartAfterBoot(now);
}

void SimCloud::ScheduleStorage() {
  const Timestamp next = storage_.NextCompletion();
  if (next != kInfiniteFuture) sim_->queue.Push(next, EventKind::kNodeLoaded, 0, static_cast<int64_t>(storage_.epoch()));
}

void SimCloud::TerminateNode(model::NodeId id, Timestamp now, bool interrupted) {
  ledger_.Close(bill_.at(id), now);
  bill_.erase(id);
  if (loading_.erase(id) > 0) {
    storage_.Cancel(id, now);
    ScheduleStorage();
  }
  if (joined_at_.erase(id) == 0 && !interrupted) ++sim_->result.released_booting;
  if (forecast_nodes_.erase(id) > 0) ++sim_->result.forecast_nodes_unused;
  const Node& n = sim_->state.nodes[sim_->node_pos.At(id)];
  if (n.interrupt_at == kInfiniteFuture) --unnoticed_[static_cast<size_t>(n.pool)];
  by_name_.erase(n.name);
  if (auto key = key_of_.find(id); key != key_of_.end()) {
    by_key_.erase(key->second);
    key_of_.erase(key);
  }
  cordons_.erase(id);
  sim_->RemoveNode(id);
  if (interrupted) {
    ++sim_->result.spot_nodes_interrupted;
  } else {
    ++sim_->result.nodes_released;
  }
  --live_nodes_;
}

void SimCloud::SpotNotice(model::NodeId id, Timestamp now, Timestamp kill, std::string_view why) {
  Node* n = sim_->FindNode(id);
  if (n == nullptr || n->interrupt_at != kInfiniteFuture) return;
  n->interrupt_at = kill;
  --unnoticed_[static_cast<size_t>(n->pool)];
  recorder_->Log(now, "spot-notice", StrCat(n->name, ": ", why, "; interrupted at ", FormatTimestamp(kill)));
}

void SimCloud::SpotNoticeDue(model::NodeId id, Timestamp kill, Timestamp now, bool* changed) {
  if (sim_->FindNode(id) == nullptr) return;
  SpotNotice(id, now, kill, "interruption notice");
  *changed = true;
}

void SimCloud::SpotKillDue(model::NodeId id, Timestamp now, bool* changed) {
  const Node* n = sim_->FindNode(id);
  if (n == nullptr) return;
  *changed = true;
  // Freeing the victims may remove other nodes (drained ones left empty),
  // which moves this one in memory: keep what is needed of it.
  const std::string name = n->name;
  cluster_->NodeLost(id, now);
  recorder_->Log(now, "spot-interruption", StrCat(name, ": interrupted by the provider"));
  if (sim_->FindNode(id) != nullptr) TerminateNode(id, now, true);
}

int SimCloud::SpotSupply(Timestamp now) const {
  const auto& spot = sim_->world->spot;
  const auto& supply = spot.supply;
  if (supply.empty()) return INT32_MAX;
  const Duration into = Seconds((now - sim_->t0).count() % supply_period_.count());
  int available = supply.front().available;
  for (const auto& pt : supply) {
    if (pt.offset <= into) available = pt.available;
  }
  return static_cast<int>(std::floor(available * spot.supply_scale));
}

// The supply moved: spot nodes beyond it get notice; a pool that could not
// create nodes may again.
void SimCloud::SupplyChanged(Timestamp now) {
  const model::ClusterSpec& spec = *sim_->spec;
  const int supply = SpotSupply(now);
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (spec.pools[p].tier != model::Tier::kSpot) continue;
    std::vector<const Node*> nodes;
    for (const auto& n : sim_->state.nodes) {
      if (n.pool == static_cast<int>(p) && n.interrupt_at == kInfiniteFuture) nodes.push_back(&n);
    }
    if (static_cast<int>(nodes.size()) < supply) sim_->state.pools[p].unavailable_since = kInfiniteFuture;
    if (static_cast<int>(nodes.size()) <= supply) continue;
    // The provider takes back the newest nodes first.
    std::sort(nodes.begin(), nodes.end(), [](const Node* a, const Node* b) { return a->id > b->id; });
    std::vector<model::NodeId> doomed;
    for (size_t i = 0; i < nodes.size() - static_cast<size_t>(std::max(0, supply)); ++i) doomed.push_back(nodes[i]->id);
    for (auto id : doomed) {
      sim_->queue.Push(now + sim_->world->spot.notice, EventKind::kSpotKill, id);
      SpotNotice(id, now, now + sim_->world->spot.notice, "spot supply fell");
    }
  }
  sim_->queue.Push(now + supply_period_, EventKind::kSpotSupply);
}

}  // namespace tide::sim
