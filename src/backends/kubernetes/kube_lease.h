// Leader election through a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection package does it (docs/kubernetes.md, "Two replicas"):
//   - no Lease: create it, holding it;
//   - held by this replica: renew (spec.renewTime) every `retry`; a replica
//     that has not renewed for `renew_deadline` stops acting, before anyone
//     may take its Lease;
//   - held by another: take it (holderIdentity, acquireTime, renewTime,
//     leaseTransitions + 1) once the record has not changed for the Lease's
//     leaseDurationSeconds, counted on this replica's clock from when it
//     last saw the record change (the holder's clock is never trusted);
//   - every write carries the resourceVersion read: two replicas that race
//     for one Lease get one 409, and only one wins.
// Released on a clean stop (holderIdentity ""), so the other replica takes
// over at its next try rather than after the Lease's length.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_LEASE_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_LEASE_H_

#include <mutex>
#include <string>

#include "backends/kubernetes/kube_http.h"
#include "backends/kubernetes/kube_watch.h"
#include "backends/leadership.h"
#include "core/status.h"
#include "core/time.h"

namespace tide::backends::kube {

struct LeaseOptions {
  std::string namespace_name = "tide-system";
  std::string name = "tide";
  std::string identity;  // must not be empty
  Duration duration = Seconds(15);
  Duration renew_deadline = Seconds(10);
  Duration retry = Seconds(2);
};

// The identity a replica uses when none is configured: $POD_NAME (the
// Deployment sets it from the downward API), else "<host name>-<pid>".
std::string DefaultIdentity();

class LeaseElector final : public Leadership {
 public:
  // `transport`, `clock` and `sleeper` must outlive it.
  LeaseElector(LeaseOptions options, Transport* transport, const Clock* clock, Sleeper* sleeper);

  // One attempt at `clock->Now()`: read the Lease, then create, renew or
  // take it, or note who holds it. The error of a failed read or write
  // (a 409 lost race is not an error: someone else won).
  Status TryOnce();
  void Run(std::stop_token stop) override;
  bool Leading() const override;
  LeadershipView View() const override;
  void Release() override;

 private:
  std::string Path() const;
  // Writes the Lease (POST when `resource_version` is empty, else PUT).
  Result<Reply> Write(const std::string& resource_version, const std::string& holder, Timestamp acquire,
                      Timestamp renew, int64_t transitions, Duration duration);
  void Hold(Timestamp now);  // mu_ held

  LeaseOptions options_;
  Transport* transport_;
  const Clock* clock_;
  Sleeper* sleeper_;

  mutable std::mutex mu_;
  std::string holder_;            // as last read or written
  std::string resource_version_;  // of the Lease as last read or written
  std::string observed_;          // the record last seen (holder, renewTime, version), to see it change
  Timestamp observed_at_ = kInfinitePast;  // when this replica saw it change, by its own clock
  Timestamp renewed_ = kInfinitePast;      // this replica's last successful acquire or renew
  Timestamp acquired_ = kInfinitePast;     // this replica's acquireTime, kept on renewals
  int64_t transitions_ = 0;
  Timestamp since_{};
  std::string last_error_;
};

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_LEASE_H_
