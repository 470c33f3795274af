// The live loop's side of the applier (apply/applier.h): how it finds the
// plan's jobs and nodes in the snapshot and the store (LiveView), what it
// remembers of what the applier did (LiveListener), and the life cycles
// that move on with each fresh observation (Advance):
//
//   a node tide bought that joined while cordoned as not bought is opened
//   a node cordoned for release that runs nothing is given back
//   a node of a fixed name list with no machine that is not cordoned is
//     cordoned as not bought, so that the manager never starts work on it
//   a stop begun with a checkpoint signal is finished once its grace is over
#ifndef TIDE_CONTROLLER_LIVE_CLUSTER_H_
#define TIDE_CONTROLLER_LIVE_CLUSTER_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "apply/applier.h"
#include "backends/workload.h"
#include "config/config.h"
#include "controller/snapshot.h"
#include "controller/store.h"

namespace tide::controller {

using LogFn = std::function<void(const std::string&)>;

class LiveView final : public apply::View {
 public:
  // Borrowed; both outlive the view.
  LiveView(const Built* built, Store* store);
  const model::Job* FindJob(model::JobId id) const override;
  const model::Node* FindNode(model::NodeId id) const override;
  std::string JobKey(const model::Job& job) const override;
  std::vector<std::string> NodesOf(const model::Job& job) const override;
  // The live instance on record for the node (the store's, not the
  // provider's list: a node tide did not record buying is not tide's).
  std::string InstanceOf(const model::Node& node) const override;
  // Cordoned by tide to give it back: the manager's cordon says so, or the
  // store's record does.
  bool Releasing(const model::Node& node) const override;
  // Only a node that does not answer is known empty: nothing can start on
  // it once cordoned. Anything else needs a fresh observation.
  std::optional<bool> EmptyNow(const model::Node& node) const override;
  std::vector<std::string> TakenNames() const override;

 private:
  const Built* built_;
  Store* store_;
  std::map<model::JobId, size_t> jobs_;
  std::map<model::NodeId, size_t> nodes_;
};

class LiveListener final : public apply::Listener {
 public:
  // `fault`: "kill-after-create" makes the process SIGKILL itself after a
  // provider create returned and before the journal recorded it (the
  // crash-recovery test's worst moment).
  LiveListener(Memory* memory, Store* store, LogFn log, std::string fault)
      : memory_(memory), store_(store), log_(std::move(log)), fault_(std::move(fault)) {}
  // The nodes under an interruption notice this loop: one given back while
  // under notice counts as a spot interruption, as in the simulator.
  void set_noticed(std::set<std::string> nodes) { noticed_ = std::move(nodes); }
  void Log(std::string_view line) override { log_(std::string(line)); }
  void CreateFailed(int pool, const Status& s, Timestamp now) override;
  void Created(int pool, const std::string& node, const std::string& key, Timestamp now) override;
  void Disrupted(int nodes, Timestamp now) override;
  void Stopped(const model::Job& job, const std::string& key, backends::Cause cause, bool cancel,
               Timestamp now) override;
  void StopFinished(const apply::PendingStop& stop, std::string_view outcome, Timestamp now) override;
  void GaveBack(const std::string& node, Timestamp now) override;
  void Bottleneck(model::JobId job, const std::string& key) override;

 private:
  Memory* memory_;
  Store* store_;
  LogFn log_;
  std::string fault_;
  std::set<std::string> noticed_;
};

// The life cycles above, on the fresh observation `obs` the snapshot
// `built` was made from.
void Advance(const config::Config& config, const backends::Observation& obs, const Built& built,
             backends::WorkloadManager* manager, apply::Applier* applier, Store* store,
             const std::vector<apply::PendingStop>& pending, Timestamp now, apply::ApplyStats* stats,
             const LogFn& log);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_LIVE_CLUSTER_H_
