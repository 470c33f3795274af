// BuildSnapshot: the live controller's snapshot. It turns what the workload
// manager (in tide's terms, backends/workload.h), the provider and tide's own
// records say into the model::ClusterState the decision core reads, the same
// type the simulator keeps. Pure: every input is passed in, so a test can
// give it any observation it likes. It knows no workload manager's words.
//
// A node of a tide pool with no machine behind it is capacity tide may buy;
// it is not in the snapshot. A node with a machine (a provider instance on
// its name) is in it:
//   provisioning  the machine exists and the node does not answer yet, or
//                 answers but is still cordoned as not bought (tide opens it
//                 next: lifecycle.h)
//   ready         it answers and takes work
//   draining      it answers and is cordoned (by tide to give it back, or by
//                 anyone else, which tide leaves alone)
// A node that answers without a machine tide bought (a static node) counts as
// capacity that tide never gives back. docs/live.md has the whole life cycle.
#ifndef TIDE_CONTROLLER_SNAPSHOT_H_
#define TIDE_CONTROLLER_SNAPSHOT_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/workload.h"
#include "config/config.h"
#include "model/cluster.h"
#include "providers/provider.h"

namespace tide::controller {

// What the controller remembers between loops (and rebuilds after a
// restart; everything here may start empty).
struct Memory {
  std::map<std::string, Timestamp> idle_since;     // by node name
  std::map<std::string, model::NodeId> node_ids;   // stable ids, by node name
  std::map<std::string, model::JobId> job_ids;     // stable ids, by job key
  model::JobId next_job_id = model::JobId{1} << 40;  // for keys that are not numbers
  std::map<std::string, Timestamp> stopping;       // jobs told to checkpoint (by key), when
  std::vector<Timestamp> disruptions;              // nodes disrupted recently
  std::map<int, Timestamp> pool_unavailable;       // pools whose creates failed, since
  std::map<std::string, int> reclaims;             // idle reclaims so far, by job key
  std::set<std::string> bottlenecks;               // jobs a report marked input-bound, by key
  // The last run of each job seen running, to count work lost when a job
  // is interrupted by something other than tide (a node failure).
  struct RunSeen {
    int restarts = 0;
    Timestamp start{};
    Timestamp last_seen{};
    int gpus = 0;
  };
  std::map<std::string, RunSeen> runs;             // by job key
  std::set<std::string> requeued_by_tide;          // until their restart count moves
  // Nodes of instances tide adopted without a record of buying them whose
  // node has not joined (HeldNodes): their names are taken, but they are
  // neither capacity nor tide's to give back (docs/live.md, "Faults").
  std::set<std::string> held;

  // The model id of a job key: the key itself when it is a number (a Slurm
  // job id), else one assigned on first sight.
  model::JobId JobIdOf(const std::string& key);
  model::NodeId NodeIdOf(const std::string& name);
};

struct Built {
  model::ClusterState state;
  // Model id -> what the manager reported, for the jobs and nodes in the
  // snapshot.
  std::map<model::JobId, const backends::ObservedJob*> jobs;
  std::map<model::NodeId, const backends::ObservedNode*> nodes;
  // Job key -> model id, for every job in the snapshot.
  std::map<std::string, model::JobId> job_of_key;
  // Node name -> the instance tide holds for it.
  std::map<std::string, const providers::Instance*> instance_of;
  // Nodes of each pool tide may still buy under a fixed name (a manager with
  // fixed node names), by pool.
  std::vector<int> free_names;
  // Jobs left out, and why (a job that asks for no GPU, one that may use no
  // pool node, a held job): for the log, once per job.
  std::vector<std::string> skipped;
};

// A machine that joins a cluster by itself (a real cloud's node joining
// Kubernetes) may take a name other than the one tide asked for (EC2's
// "ip-10-0-1-23.ec2.internal"). Each instance whose node the manager does
// not list under its name is matched to the listed node whose provider id
// is the instance's id or ends in "/<id>" (AWS's "aws:///us-east-1a/i-0abc",
// GCE's "gce://project/zone/name"), and takes that node's name; so do the
// interruptions of its id. A node claimed by name, or by another instance,
// is never matched twice. Pure.
void MatchJoinedNodes(const std::vector<backends::ObservedNode>& nodes, std::vector<providers::Instance>* instances,
                      std::vector<providers::Interruption>* interruptions);

// `idle_since` in `memory` is updated (nodes that became idle get `now`),
// and ids are assigned. The returned state points at config.cluster and
// `metrics`.
Built BuildSnapshot(const config::Config& config, const backends::Observation& obs,
                    const std::vector<providers::Instance>& instances,
                    const std::vector<providers::Interruption>& interruptions, Memory* memory,
                    const model::MetricsView* metrics, Timestamp now);

// The priority class index of a job: the first live.jobs.classes rule whose
// every attribute matches, else the class the backend gave, else the
// default class.
int ClassOf(const config::Config& config, const backends::ObservedJob& job);
// True if tide must never interrupt `job`: its class protects it or its
// manager's marker does.
bool IsProtected(const config::Config& config, const backends::ObservedJob& job);

// InvalidArgument, naming the rule's place in the file, if a class rule
// matches an attribute the backend does not report ("did you mean").
Status CheckClassRules(const config::Config& config, const backends::Capabilities& caps);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_SNAPSHOT_H_
