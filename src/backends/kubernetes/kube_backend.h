// The Kubernetes backend: the WorkloadManager seam over a Kubernetes API
// server (docs/kubernetes.md; the design is docs/design/backends.md,
// "Worked example: Kubernetes").
//
// - Observe: the watch caches' objects (ObjectSource), translated by
//   kube_translate.h. Unavailable while the pods' or nodes' cache is not
//   synced (never listed, or its last contact too old): tide then acts on
//   nothing.
// - tide places the pods that name its scheduler (schedules_itself = false):
//   Bind posts each pod's binding, every pod of the gang or none (a gang left
//   half bound by a failed binding has its bound pods evicted again). In
//   autoscale-only mode another scheduler places every pod
//   (schedules_itself = true): Bind refuses, and Explain only posts Events,
//   leaving the PodScheduled condition to that scheduler.
// - Stops go through the Eviction API (policy/v1), so the API server
//   enforces every PodDisruptionBudget; its 429 is Refused, and tide never
//   deletes a pod to get around it. SIGTERM is the checkpoint signal: no
//   separate Checkpoint, and a Job's controller recreates the evicted pods,
//   which is the requeue.
// - Cordon sets spec.unschedulable and records tide's cause in the node
//   annotation <prefix>/cordon, which Observe reports back.
// - Node names are free: RegisterNode picks "<pool>-<n>", unused.
// - Every verb posts an Event on the objects it touches, with the plan's
//   reason, so `kubectl describe` shows why.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_BACKEND_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_BACKEND_H_

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/kubernetes/kube_client.h"
#include "backends/kubernetes/kube_http.h"
#include "backends/kubernetes/kube_notes.h"
#include "backends/kubernetes/kube_translate.h"
#include "backends/kubernetes/kube_watch.h"
#include "backends/workload.h"
#include "core/time.h"

namespace tide::backends::kube {

// Where Observe's objects come from: the watch caches, or a test's.
class ObjectSource {
 public:
  virtual ~ObjectSource() = default;
  // Unavailable, saying which cache and why, when the view may be stale.
  virtual Result<ClusterObjects> Objects() = 0;
  // A number that moves whenever the objects may have changed (0 when the
  // source cannot tell): the loop wakes on it rather than waiting out its
  // interval. Thread-safe.
  virtual uint64_t Generation() const { return 0; }
};

// The watch caches of pods, nodes and PodGroups (scheduler-plugins' and
// Volcano's), each kept by a background thread (started on the first call,
// stopped with the object). A missing PodGroup resource (the scheduler that
// defines it is not installed: 404) is no PodGroups.
class InformerSource final : public ObjectSource {
 public:
  InformerSource(Transport* transport, const Clock* clock, InformerOptions options);
  ~InformerSource() override;
  Result<ClusterObjects> Objects() override;
  uint64_t Generation() const override;

 private:
  RealSleeper sleeper_;
  PodInformer pods_;
  NodeInformer nodes_;
  PodGroupInformer groups_;
  VolcanoPodGroupInformer volcano_;
  std::vector<std::jthread> threads_;
};

struct KubernetesBackendOptions {
  TranslateOptions translate;
  // Threads that send Events and PodScheduled messages beside the loop
  // (kube_notes.h); 0: each is sent at once, in the calling thread (tests).
  int note_workers = 0;
  // Bindings of one gang sent at once; 1: one after another (tests).
  int bind_parallelism = 1;
};

class KubernetesBackend final : public WorkloadManager {
 public:
  // `transport` and `source` must outlive the backend.
  KubernetesBackend(KubernetesBackendOptions options, Transport* transport, ObjectSource* source,
                    const Clock* clock);

  const Capabilities& capabilities() const override { return caps_; }
  Result<Observation> Observe() override;
  Status Cordon(const std::string& node, const Reason& why) override;
  Status Uncordon(const std::string& node) override;
  Status Evict(const std::string& job, Duration grace, const Reason& why) override;
  Status Checkpoint(const std::string& job) override;
  Status Requeue(const std::string& job) override;
  Status Cancel(const std::string& job, Duration grace, const Reason& why) override;
  Status Bind(const std::string& job, const std::vector<NodeWorkers>& where, const Reason& why) override;
  Status Resize(const std::string& job, const ResizeOrder& order, const Reason& why) override;
  // Sets PodScheduled=False, reason Unschedulable, on the gang's waiting
  // pods, with `why` as the message (what cluster-autoscaler and people
  // read), and posts it as a "Waiting" Event on each; both are notes
  // (kube_notes.h), sent beside the loop.
  Status Explain(const std::string& job, const std::string& why) override;
  Result<std::string> RegisterNode(int pool, const std::vector<std::string>& taken) override;
  Status RemoveNode(const std::string& node) override;
  uint64_t ChangeGeneration() const override { return source_->Generation(); }

 private:
  // The live pods of a gang of the last observation, sorted by name.
  Result<std::vector<const Pod*>> PodsOf(const std::string& job) const;
  bool NodeKnown(const std::string& node) const;
  void Tell(const Pod& pod, std::string_view reason, std::string_view message, bool warning);
  void TellNode(const std::string& node, std::string_view reason, std::string_view message);

  KubernetesBackendOptions options_;
  TideNames names_;
  Client client_;
  ObjectSource* source_;
  const Clock* clock_;
  Capabilities caps_;
  ClusterObjects last_;  // what the last Observe saw
  NoteWriter notes_;      // declared after client_: its workers stop before the client goes
  std::map<int, int> next_index_;  // by pool: the last index RegisterNode handed out
  bool observed_ = false;
};

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_BACKEND_H_
