// The named policies a simulation can compare, built from configuration.
//
//   tide             the elastic policy, with the defaults that measured best
//                    on ITP 2021 clusters 01-05, Philly and the bundled week
//                    (docs/design/defaults.md): buy as soon as a job waits,
//                    three spare nodes against slow boots, release after 2
//                    minutes idle, consolidation (gangs too) on every pass.
//   tide-seed        the seed rollout's rule, as MISSION sections 2-3 state it:
//                    scale up when more than 3 jobs wait (or one has waited
//                    30 s), release after 10 minutes idle, no spares, no
//                    consolidation.
//   reactive         in the manner of Kubernetes cluster-autoscaler: a 10 s
//                    scan, scale up on any unschedulable job, pod-by-pod
//                    packing, one pool per scan, release after 10 min unneeded.
//   slurm-powersave  Slurm's power saving: jobs are allocated at once to
//                    powered-down nodes, which power up for them; a job starts
//                    once all its nodes have joined, on the next 30 s tick;
//                    nodes idle for SuspendTime are powered down.
//   fixed:N[:pool]   N nodes of one pool for the whole run ("betting on the
//                    peak"); N may be `peak` or `mean` (sized from the workload).
//
// Every policy runs the same Scheduler and Autoscaler code with different
// options. See docs/design/baselines.md.
#ifndef TIDE_AUTOSCALE_POLICY_H_
#define TIDE_AUTOSCALE_POLICY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autoscale/autoscaler.h"
#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"
#include "sched/scheduler.h"

namespace tide::autoscale {

// Per-policy options as configured (config/ fills these; tide's defaults are
// TideDefaults, tide-seed's the mission's: docs/design/defaults.md).
struct PolicyDefaults {
  sched::SchedulerOptions scheduler;
  AutoscalerOptions tide = TideDefaults();
  AutoscalerOptions seed = SeedDefaults();  // `tide-seed`
  AutoscalerOptions reactive = ReactiveDefaults();
  AutoscalerOptions powersave = PowersaveDefaults();
  Duration powersave_start_tick = Seconds(30);
  std::string fixed_pool;  // empty: the non-reserved pool with the most GPUs per node
  std::vector<std::string> compare = {"fixed:peak", "reactive", "slurm-powersave", "tide"};
  // Named variants of tide's options (policies.variants), for comparing one
  // mechanism off and on: `--compare tide-no-spot,tide`.
  std::vector<std::pair<std::string, AutoscalerOptions>> variants;

  static AutoscalerOptions TideDefaults();
  static AutoscalerOptions SeedDefaults();
  static AutoscalerOptions ReactiveDefaults();
  static AutoscalerOptions PowersaveDefaults();
};

// GPU demand of a workload if every job ran from submission, unqueued: used
// to size `fixed:peak` and `fixed:mean`.
struct DemandStats {
  int64_t peak_gpus = 0;
  double mean_gpus = 0;
};

struct PolicyProfile {
  std::string name;  // as the user wrote it, e.g. "fixed:20"
  std::string kind;  // tide | reactive | slurm-powersave | fixed (tide-seed's and a variant's kind is tide)
  std::string description;  // fixed: "34 x a100x8-ondemand (peak demand 300 GPUs)"
  sched::SchedulerOptions scheduler;
  AutoscalerOptions autoscaler;
  // A job placed on nodes that were booting starts at the next multiple of
  // this after the last of them joins (Slurm's 30 s tick); 0 = at once.
  Duration start_tick{0};
  // fixed only: the pool held at `fixed_nodes`.
  int fixed_pool = -1;
  int fixed_nodes = 0;

  // The cluster this policy runs on: for `fixed`, the chosen pool is held at
  // fixed_nodes and every other non-reserved pool at its min.
  model::ClusterSpec ApplyTo(const model::ClusterSpec& spec) const;
};

// The policy names MakePolicy knows, for help text.
std::vector<std::string> PolicyNames();

// Parses one entry of --compare. `demand` is needed only for fixed:peak and
// fixed:mean. InvalidArgument names what is wrong.
Result<PolicyProfile> MakePolicy(std::string_view text, const PolicyDefaults& defaults, const model::ClusterSpec& spec,
                                 const std::optional<DemandStats>& demand);

// Splits "a,b,c" and parses each.
Result<std::vector<PolicyProfile>> MakePolicies(std::string_view list, const PolicyDefaults& defaults,
                                                const model::ClusterSpec& spec,
                                                const std::optional<DemandStats>& demand);

// True when some entry of the list needs DemandStats.
bool NeedsDemandStats(std::string_view list);

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_POLICY_H_
