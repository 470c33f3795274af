// The simulator's side of the applier (apply/applier.h): how the applier
// finds the plan's jobs and nodes (SimView: the simulated state is always
// current, so an empty node is known empty at once), and what the simulator
// records of what it did (SimListener: the decision log, the figures, and
// what the next pass must see). A refusal is a decision-core bug here (the
// plan asked for what the state forbids): the simulator stops on it.
#ifndef TIDE_SIM_SIM_APPLY_H_
#define TIDE_SIM_SIM_APPLY_H_

#include <string>
#include <vector>

#include "apply/applier.h"
#include "sim/recorder.h"
#include "sim/sim_state.h"

namespace tide::sim {

class SimView final : public apply::View {
 public:
  explicit SimView(const SimState* sim) : sim_(sim) {}
  const model::Job* FindJob(model::JobId id) const override { return sim_->PeekJob(id); }
  const model::Node* FindNode(model::NodeId id) const override { return sim_->PeekNode(id); }
  std::string JobKey(const model::Job& job) const override;
  std::string InstanceOf(const model::Node& node) const override { return node.name; }
  bool Releasing(const model::Node& node) const override { return node.state == model::NodeState::kDraining; }
  std::optional<bool> EmptyNow(const model::Node& node) const override { return node.idle(); }
  std::vector<std::string> TakenNames() const override { return {}; }

 private:
  const SimState* sim_;
};

class SimListener final : public apply::Listener {
 public:
  // `policy_options`: the autoscaler's (the disruption budget's window).
  SimListener(SimState* sim, Recorder* recorder, Duration budget_window)
      : sim_(sim), recorder_(recorder), budget_window_(budget_window) {}

  // Before each plan.
  void Reset() {
    changed_ = bought_ = freed_ = false;
    refusal_.clear();
  }
  bool changed() const { return changed_; }  // the next pass sees something new
  bool bought() const { return bought_; }    // the last scale-up created a node
  bool freed() const { return freed_; }      // a shrink gave GPUs back
  // The first refusal of the plan, "" if none.
  const std::string& refusal() const { return refusal_; }

  void Before(const autoscale::Action& a, Timestamp now) override;
  void After(const autoscale::Action& a, const apply::Outcome& o, Timestamp now) override;
  void Log(std::string_view line) override;
  void Disrupted(int nodes, Timestamp now) override;
  void Bottleneck(model::JobId job, const std::string& key) override;

 private:
  SimState* sim_;
  Recorder* recorder_;
  Duration budget_window_;
  bool changed_ = false, bought_ = false, freed_ = false;
  std::string refusal_;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIM_APPLY_H_
