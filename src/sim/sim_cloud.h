// SimCloud: the simulated cloud, and the simulator's CloudProvider. It
// creates nodes that boot after a delay drawn from the pool's distribution
// (SimProvider, seeded), then load from shared storage if configured
// (StorageModel); bills each from request to release (cost::Ledger); and
// interrupts spot nodes with notice, on a hazard or an availability trace,
// refusing spot creates beyond the trace's supply. An instance's id is its
// node's name.
#ifndef TIDE_SIM_SIM_CLOUD_H_
#define TIDE_SIM_SIM_CLOUD_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/rng.h"
#include "cost/ledger.h"
#include "providers/provider.h"
#include "sim/recorder.h"
#include "sim/sim_provider.h"
#include "sim/sim_state.h"
#include "sim/storage_model.h"

namespace tide::sim {

class SimCluster;

class SimCloud final : public providers::CloudProvider {
 public:
  // Borrowed, outliving the cloud: `sim`, `recorder`; `cluster` is set with
  // set_cluster before the first event.
  SimCloud(SimState* sim, Recorder* recorder, const StorageOptions& storage, uint64_t seed);
  void set_cluster(SimCluster* cluster) { cluster_ = cluster; }

  // Every pool at its minimum, already running and loaded, at t0; the spot
  // supply series' events.
  void Start(Timestamp t0);

  // CloudProvider. Create refuses (Unavailable) a spot node beyond the
  // supply trace's; Delete of an instance that is gone is OK. A Create with
  // a non-empty idempotency key that a live instance already has returns
  // that instance and buys nothing (whatever node it names); the simulator
  // itself passes no key, and an empty key is never remembered.
  std::string Name() const override { return "simulated"; }
  Result<providers::Instance> Create(const providers::CreateRequest& request, Timestamp now) override;
  Status Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) override;
  Result<std::vector<providers::Instance>> List(Timestamp now) override;
  Result<std::vector<providers::Interruption>> Interruptions(Timestamp now) override;

  // The name the next node of `pool` gets.
  std::string NextName(int pool) const;

  // The cloud's events: a node joined, a storage load finished, a spot
  // notice, a spot node taken, the supply moved. Sets *changed when the
  // decision core should look again.
  void NodeReady(model::NodeId id, Timestamp now, bool* changed);
  void StorageLoaded(uint64_t epoch, Timestamp now, bool* changed);
  void SpotNoticeDue(model::NodeId id, Timestamp kill, Timestamp now, bool* changed);
  void SpotKillDue(model::NodeId id, Timestamp now, bool* changed);
  void SupplyChanged(Timestamp now);

  // A job was placed on the node: a node bought ahead of demand is used.
  void NodeUsed(model::NodeId id) { forecast_nodes_.erase(id); }
  // The cordon a node was given, for how its release is counted (a node
  // given back after a drain while under notice is an interruption).
  void Cordoned(model::NodeId id, backends::Cause cause) { cordons_[id] = cause; }
  void Uncordoned(model::NodeId id) { cordons_.erase(id); }
  // The cause the node was cordoned for (kDrain for a cordon without one).
  backends::Cause CordonOf(model::NodeId id) const {
    auto it = cordons_.find(id);
    return it == cordons_.end() || it->second == backends::Cause::kNone ? backends::Cause::kDrain : it->second;
  }
  // The node of a name, or 0.
  model::NodeId NodeNamed(const std::string& name) const;

  cost::Ledger& ledger() { return ledger_; }
  const cost::Ledger& ledger() const { return ledger_; }
  // Nodes bought ahead of demand that never ran anything.
  int64_t forecast_nodes_unused() const { return static_cast<int64_t>(forecast_nodes_.size()); }

 private:
  void CreateNode(int pool, Timestamp now, bool forecast);
  providers::Instance InstanceOf(const model::Node& n) const;
  // The node has booted and joined. It is usable once its storage load is done.
  void NodeJoined(model::Node& n, Timestamp now);
  void NodeUsable(model::Node& n, Timestamp now);
  void ScheduleStorage();
  void TerminateNode(model::NodeId id, Timestamp now, bool interrupted);
  // The provider will take the node back at `kill`. What to do about it is
  // the policy's call (autoscale/spot/notice.h); the cloud only says so.
  void SpotNotice(model::NodeId id, Timestamp now, Timestamp kill, std::string_view why);
  int SpotSupply(Timestamp now) const;

  SimState* sim_;
  Recorder* recorder_;
  SimCluster* cluster_ = nullptr;
  SimProvider boots_;
  Rng spot_rng_;
  StorageModel storage_;
  cost::Ledger ledger_;
  absl::flat_hash_map<model::NodeId, size_t> bill_;  // node -> ledger handle
  absl::flat_hash_set<model::NodeId> loading_;       // joined, loading from storage
  absl::flat_hash_map<model::NodeId, Timestamp> joined_at_;
  absl::flat_hash_set<model::NodeId> forecast_nodes_;  // bought ahead of demand, unused so far
  absl::flat_hash_map<model::NodeId, backends::Cause> cordons_;
  absl::flat_hash_map<std::string, model::NodeId> by_name_;
  // Non-empty idempotency keys of live instances, both ways (empty in
  // simulations: only callers such as the contract tests pass keys).
  absl::flat_hash_map<std::string, model::NodeId> by_key_;
  absl::flat_hash_map<model::NodeId, std::string> key_of_;
  std::vector<int> pool_seq_;
  // Per pool, the nodes without notice: what a spot supply trace caps.
  std::vector<int> unnoticed_;
  Duration supply_period_{0};
  bool initializing_ = false;  // creating the initial fleet
  int live_nodes_ = 0;
  model::NodeId next_node_id_ = 1;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIM_CLOUD_H_
