// KwokProvider: the simulated cloud of tide's Kubernetes test bed, as
// Karpenter tests itself with kwok (docs/providers.md, "kwok provider").
// Buying a node POSTs a Kubernetes Node object; kwok (a real component of
// the test bed, started with --manage-nodes-with-annotation-selector
// kwok.x-k8s.io/node=fake) then plays its kubelet and turns it Ready.
//
// The Node object IS the instance record: nothing is kept in memory between
// calls, so a restarted tide finds what it bought by listing the nodes
// (crash safety without a state file). Under the label prefix P
// (live.kubernetes.label_prefix, default "tide.dev") a node it made carries:
//
//   labels       P/provider: kwok        what List selects on (kKwokProviderValue)
//                P/pool: <pool>          karpenter.sh/capacity-type: reserved|on-demand|spot
//                type: kwok              node.kubernetes.io/instance-type (when a valid label value)
//                + the pool's extra labels
//   annotations  P/idempotency-key       the CreateRequest's key
//                P/created, P/ready-at   RFC 3339; ready-at = created + the request's boot delay
//                kwok.x-k8s.io/node: fake  from the start: kwok manages the node
//                P/interruption-at       RFC 3339, with the taint P/interruption:NoSchedule: a spot notice
//   spec         providerID kwok://<name>, the pool's taints
//   status       capacity = allocatable: nvidia.com/gpu, MIG slices, cpu, memory, pods
//
// The boot delay is kwok's to play: the test bed's kwok Stage
// "tide-node-ready-at" (scripts/k8s-testbed) makes a node annotated
// tide.dev/ready-at Ready at that time, not before. The node carries the kwok
// annotation from its creation because kwok v0.8.0 manages only nodes that
// match its selector when they are ADDED: one annotated later by a PATCH
// never gets its Lease and stays NotReady (node_controller.go calls
// onNodeManagedFunc for Added and Sync events only). A kwok without that
// Stage (or a label prefix other than tide.dev) makes the node Ready at once;
// the provider still reports it "pending" until ready-at.
//
// Instance.state is "pending" before ready-at, "running" from then,
// "terminating" while the Node has a deletionTimestamp. Every List,
// Interruptions and Create call first sweeps tide's kwok nodes: a node whose
// interruption-at has passed is deleted ("notice, then deletion"); the
// controller calls List every loop, so the deletion comes within a loop of
// its time.
//
// Instance.id is the providerID, "kwok://<node name>"; Delete also accepts a
// bare node name.
//
// Errors: the API server not answering, a 5xx, or a reply that cannot be
// read (not JSON, a Node of the wrong shape, a bad time in one of the
// annotations above) is Unavailable, so the caller takes no destructive
// action on it. 400/422 (the request is wrong) stay InvalidArgument, 401/403
// stay Unauthenticated/PermissionDenied (fix the credentials or RBAC). Every
// message names the node (or the list) and the HTTP status.
//
// Not thread-safe (the CloudProvider contract). The client must outlive the
// provider.
#ifndef TIDE_PROVIDERS_KWOK_KWOK_PROVIDER_H_
#define TIDE_PROVIDERS_KWOK_KWOK_PROVIDER_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "backends/kubernetes/kube_client.h"
#include "backends/kubernetes/kube_objects.h"
#include "providers/provider.h"

namespace tide::providers {

// The annotation kwok's node selector matches in the test bed.
inline constexpr std::string_view kKwokNodeAnnotation = "kwok.x-k8s.io/node";
inline constexpr std::string_view kKwokNodeValue = "fake";
inline constexpr std::string_view kKwokIdPrefix = "kwok://";

class KwokProvider final : public CloudProvider {
 public:
  // What one pool's nodes look like.
  struct PoolOptions {
    int gpus = 8;  // nvidia.com/gpu
    // MIG slices by profile ("1g.10gb" -> 7 gives nvidia.com/mig-1g.10gb: 7);
    // empty: whole GPUs only.
    std::map<std::string, int> mig;
    int cpus = 96;
    int memory_gib = 1152;
    int max_pods = 110;
    std::string capacity_type = "on-demand";  // reserved | on-demand | spot (model::TierName)
    std::map<std::string, std::string> labels;  // extra labels; may be empty
    std::vector<backends::kube::Taint> taints;  // may be empty
  };

  struct Options {
    std::string label_prefix = "tide.dev";
    // By tide pool name. Create in a pool not named here is InvalidArgument.
    std::map<std::string, PoolOptions> pools;
  };

  // `client` is not owned.
  KwokProvider(Options options, backends::kube::Client* client);

  std::string Name() const override { return "kwok"; }

  // POSTs the Node request.node, ready at now + request.boot_delay; if it
  // exists already carrying request.idempotency_key (a create whose reply
  // was lost), returns it, buying nothing. AlreadyExists when a
  // node of that name exists with another key (or was not made by tide).
  Result<Instance> Create(const CreateRequest& request, Timestamp now) override;
  // DELETEs the Node; one already gone is OK.
  Status Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) override;
  // Sweeps, then every Node labelled P/provider=kwok.
  Result<std::vector<Instance>> List(Timestamp now) override;
  // Sweeps, then the notices still in force (at > now); the nodes whose
  // notice has passed were deleted by the sweep.
  Result<std::vector<Interruption>> Interruptions(Timestamp now) override;

  // Announces that `node` is taken away at `at`: adds the taint
  // P/interruption (NoSchedule) and the annotation P/interruption-at (one
  // PATCH with a resourceVersion precondition, retried on a conflict).
  // NotFound when there is no such node. A test can do the same with curl:
  //   curl -X PATCH -H 'Content-Type: application/merge-patch+json' -d "$PATCH" "$K8S_API/api/v1/nodes/NAME"
  // with PATCH = {"metadata":{"annotations":{"tide.dev/interruption-at":"2026-01-05T09:00:00Z"}},
  //               "spec":{"taints":[{"key":"tide.dev/interruption","effect":"NoSchedule"}]}}
  // (and the token and CA of the test bed's DIR/env). The taint list
  // replaces the node's own: include its other taints.
  Status InjectInterruption(const std::string& node, Timestamp at);

  // The label selector of tide's kwok nodes ("tide.dev/provider=kwok").
  std::string Selector() const;

 private:
  // Lists tide's kwok nodes and deletes those whose interruption notice has
  // run out. Returns the nodes still there.
  Result<std::vector<backends::kube::Node>> Sweep(Timestamp now);

  // Idempotency key -> node name: of the last List, and of creates since.
  std::map<std::string, std::string> key_nodes_;
  Result<Instance> ToInstance(const backends::kube::Node& node, Timestamp now) const;

  Options options_;
  backends::kube::Client* client_;
  std::string provider_label_, pool_label_, key_annotation_, created_annotation_, ready_at_annotation_,
      interruption_taint_, interruption_at_annotation_;
};

// The value of P/provider on the nodes the kwok provider made.
inline constexpr std::string_view kKwokProviderValue = "kwok";

}  // namespace tide::providers

#endif  // TIDE_PROVIDERS_KWOK_KWOK_PROVIDER_H_
