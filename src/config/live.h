// The `live:` section of a configuration: how `tide run` reaches the
// workload manager, the cloud, Prometheus and its own state. The simulator
// ignores it. docs/live.md is the reference.
#ifndef TIDE_CONFIG_LIVE_H_
#define TIDE_CONFIG_LIVE_H_

#include <string>
#include <utility>
#include <vector>

#include "core/time.h"

namespace tide::config {

// A rule giving live jobs a tide priority class: every (attribute, value)
// pair must match one of the job's attributes as the workload-manager
// backend reports them (Slurm reports partition, qos, account, user; other
// backends their own names). The first matching rule wins.
struct ClassRule {
  std::vector<std::pair<std::string, std::string>> match;  // at least one pair
  std::string priority_class;  // a class of the configuration
  // "cluster.yaml:12:7: live.jobs.classes[0]", for later errors (the live
  // controller checks the attribute names against its backend's at start).
  std::string where;
};

// What tide does with live jobs, whatever the workload manager.
struct JobSettings {
  std::vector<ClassRule> classes;
  // A job carrying this marker is never interrupted (Slurm: in its comment).
  std::string protect_marker = "tide:protected";
  // Sent before tide interrupts a job, where the manager has such a signal;
  // the job then has `checkpoint_grace` to save and exit before it is
  // requeued.
  std::string checkpoint_signal = "USR1";
  Duration checkpoint_grace = Seconds(60);
};

struct SlurmSettings {
  // SLURM_CONF for every Slurm command (empty: Slurm's own default).
  std::string conf;
  // Directory holding squeue, sinfo, scontrol and scancel (empty: PATH).
  std::string bin_dir;
  Duration timeout = Seconds(30);
  // Each pool's Slurm nodes, as a host list ("gpu[1-8]"), by pool name.
  std::vector<std::pair<std::string, std::string>> pool_nodes;
};

// live.kubernetes.leader_election: two or more replicas of `tide run`, one
// of which acts (docs/kubernetes.md, "Two replicas").
struct LeaderElectionSettings {
  std::string lease;  // the Lease's name; empty: no election, this replica always acts
  std::string namespace_name = "tide-system";
  // This replica's name in the Lease (empty: $POD_NAME, else host name and PID).
  std::string identity;
  // The Lease's length: a holder that has not renewed for this long is
  // replaced. A holder that cannot renew within renew_deadline stops acting
  // first, so two never act at once. Tried every retry.
  Duration duration = Seconds(15);
  Duration renew_deadline = Seconds(10);
  Duration retry = Seconds(2);
};

// live.kubernetes (docs/kubernetes.md).
struct KubernetesSettings {
  // How to reach the API server: a kubeconfig file (relative to the
  // configuration file); empty: from inside the cluster, with the pod's
  // service account.
  std::string kubeconfig;
  std::string context;  // the kubeconfig's context; empty: its current one
  // The namespaces whose pods tide reads and places; empty: every namespace.
  std::vector<std::string> namespaces;
  // Pods that name this scheduler (spec.schedulerName) are tide's to place.
  std::string scheduler_name = "tide";
  // The prefix of tide's own labels, annotations and taints: a node's pool
  // is the label <prefix>/pool, a protected pod carries <prefix>/protected.
  std::string label_prefix = "tide.dev";
  // Node taints that announce a spot interruption, besides tide's own
  // (<prefix>/interruption, which the kwok provider sets).
  std::vector<std::string> notice_taints = {"aws-node-termination-handler/spot-itn",
                                            "cloud.google.com/impending-node-termination"};
  Duration timeout = Seconds(10);  // for each request to the API server
  // "schedule": tide places the pods that name scheduler_name. "autoscale":
  // another scheduler (kube-scheduler, Volcano) places every pod; tide binds
  // nothing and buys for the pods it marked PodScheduled=False, Unschedulable.
  std::string mode = "schedule";
  LeaderElectionSettings leader_election;
};

struct ProviderSettings {
  std::string kind = "local";  // local | exec | kwok
  // local: where instance records live, which slurmd to start.
  std::string state_dir;  // empty: <state file's directory>/local-provider
  std::string slurmd = "/usr/sbin/slurmd";
  // The slurm.conf the local provider's slurmd processes read (empty:
  // Slurm's default); `live.provider.slurm_conf`, else `live.slurm.conf`.
  std::string slurm_conf;
  // exec: argv arrays.
  std::vector<std::string> create, destroy, list, interruptions;
  Duration timeout = Seconds(60);
};

struct MetricsSettings {
  std::string prometheus;  // base URL; empty: no utilization data
  std::string metric = "DCGM_FI_DEV_GPU_UTIL";
  std::string node_label = "Hostname";
  std::string job_label = "hpc_job";
  std::string pod_label = "pod";              // with namespace_label: the pod (Kubernetes)
  std::string namespace_label = "namespace";
  double scale = 100;
};

struct HttpSettings {
  std::string address = "127.0.0.1";
  int port = 9464;  // 0: pick a free port (printed at start)
  // A file holding the bearer token for state-changing requests (empty:
  // they are refused).
  std::string token_file;
};

struct LiveSettings {
  bool present = false;  // the file has a `live:` section
  std::string state = "tide-state.db";  // the SQLite store, relative to the config file
  // How often the loop observes and decides (default: the tide policy's
  // scan_interval).
  Duration loop_interval{0};
  // The workload manager tide watches and acts on: "slurm" or "kubernetes"
  // (default: the one whose section the file gives).
  std::string backend = "slurm";
  JobSettings jobs;
  SlurmSettings slurm;
  KubernetesSettings kubernetes;
  ProviderSettings provider;
  MetricsSettings metrics;
  HttpSettings http;
};

}  // namespace tide::config

#endif  // TIDE_CONFIG_LIVE_H_
