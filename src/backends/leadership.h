// Leader election between replicas of `tide run`: only the holder acts; the
// others watch and serve read-only status. The backend provides it
// (Kubernetes: a coordination.k8s.io/v1 Lease, kubernetes/kube_lease.h);
// without one, the single replica always acts.
#ifndef TIDE_BACKENDS_LEADERSHIP_H_
#define TIDE_BACKENDS_LEADERSHIP_H_

#include <stop_token>
#include <string>

#include "core/time.h"

namespace tide::backends {

// What a replica knows of the election, for the log and /status.
struct LeadershipView {
  std::string lock;       // what is held ("Lease tide-system/tide")
  std::string identity;   // this replica
  std::string holder;     // who holds it now ("" when nobody)
  bool leading = false;   // this replica may act
  Timestamp since{};      // when this replica last became leader, or saw the holder change
  std::string last_error;  // the last failed attempt ("" when the last one succeeded)
};

class Leadership {
 public:
  virtual ~Leadership() = default;
  // Campaigns and renews until `stop`: called on a thread of its own.
  virtual void Run(std::stop_token stop) = 0;
  // True while this replica holds the lock and renewed it within its renew
  // deadline: the controller checks it before every loop. Thread-safe.
  virtual bool Leading() const = 0;
  virtual LeadershipView View() const = 0;
  // Gives the lock up at once when held (on SIGTERM), so another replica
  // need not wait out its length. Call after Run has stopped.
  virtual void Release() = 0;
};

}  // namespace tide::backends

#endif  // TIDE_BACKENDS_LEADERSHIP_H_
