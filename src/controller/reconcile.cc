#include "controller/reconcile.h"

#include <algorithm>
#include <map>

#include "core/strings.h"

namespace tide::controller {
namespace {

// The pool of an instance: the one it names, else the pool of its node.
int PoolOf(const config::Config& config, const backends::Observation& obs, const providers::Instance& i) {
  int pool = config.cluster.PoolIndex(i.pool);
  if (pool >= 0) return pool;
  for (const auto& n : obs.nodes) {
    if (n.name == i.node) return n.pool;
  }
  return -1;
}

void Priced(const config::Config& config, int pool, InstanceRecord* r) {
  if (pool < 0) return;
  const auto& p = config.cluster.pools[static_cast<size_t>(pool)];
  r->pool = p.name;
  r->tier = p.tier;
  r->price_per_hour = p.price_per_hour;
}

}  // namespace

std::set<std::string> HeldNodes(const backends::Observation& obs, const std::vector<InstanceRecord>& records) {
  std::set<std::string> answering;
  for (const auto& n : obs.nodes) {
    if (n.Answering()) answering.insert(n.name);
  }
  std::set<std::string> held;
  for (const auto& r : records) {
    if (r.idempotency_key.empty() && !answering.count(r.node)) held.insert(r.node);
  }
  return held;
}

Status Reconcile(const config::Config& config, const backends::Observation& obs,
                 const std::vector<providers::Instance>& instances, Store* store, providers::CloudProvider* provider,
                 Timestamp now, apply::ApplyStats* stats, const LogFn& log) {
  std::map<std::string, const providers::Instance*> by_key, by_id;
  for (const auto& i : instances) {
    if (!i.idempotency_key.empty()) by_key[i.idempotency_key] = &i;
    by_id[i.id] = &i;
  }
  TIDE_ASSIGN_OR_RETURN(auto pending, store->PendingActions());
  for (const auto& a : pending) {
    if (a.kind == "create") {
      auto it = by_key.find(a.key);
      if (it == by_key.end()) {
        TIDE_RETURN_IF_ERROR(store->FinishAction(a.key, "abandoned", "the provider has no instance with this key", now));
        log(StrCat("recovered: the create of node ", a.node, " (key ", a.key,
                   ") never reached the provider; abandoned, nothing was bought"));
        continue;
      }
      const auto& inst = *it->second;
      InstanceRecord r;
      r.id = inst.id;
      r.node = inst.node;
      r.pool = a.pool;
      Priced(config, config.cluster.PoolIndex(a.pool), &r);
      r.idempotency_key = a.key;
      r.created = inst.created.time_since_epoch().count() > 0 ? inst.created : a.created;
      r.state = "booting";
      TIDE_RETURN_IF_ERROR(store->CommitCreate(a.key, r, now));
      log(StrCat("recovered: the create of node ", a.node, " (key ", a.key, ") reached the provider as instance ",
                 inst.id, "; recorded"));
    } else if (a.kind == "delete") {
      const std::string id = a.detail;
      Status s = provider->Delete(id, a.key, now);
      if (!s.ok()) {
        ++stats->errors;
        const std::string line = StrCat("delete of instance ", id, " (node ", a.node, "): ", Message(s));
        stats->problems.push_back(line);
        log(StrCat("error: ", line));
        continue;
      }
      TIDE_RETURN_IF_ERROR(store->MarkInstanceDeleted(id, now, "deleted"));
      TIDE_RETURN_IF_ERROR(store->FinishAction(a.key, "done", id, now));
      log(StrCat("recovered: finished the delete of instance ", id, " (node ", a.node, ")"));
    }
  }
  TIDE_ASSIGN_OR_RETURN(auto records, store->Instances(/*include_deleted=*/false));
  std::map<std::string, const InstanceRecord*> known;
  for (const auto& r : records) known[r.id] = &r;
  // Instances the store has as gone, read only when the provider lists one
  // the store does not hold live (rare: the whole history is long).
  std::vector<InstanceRecord> history;
  std::map<std::string, const InstanceRecord*> gone;
  if (std::any_of(instances.begin(), instances.end(), [&](const auto& i) { return !known.count(i.id); })) {
    TIDE_ASSIGN_OR_RETURN(history, store->Instances(/*include_deleted=*/true));
    for (const auto& r : history) {
      if (r.deleted != kInfiniteFuture) gone[r.id] = &r;
    }
  }
  for (const auto& i : instances) {
    if (auto g = gone.find(i.id); g != gone.end()) {
      // Deleted or lost, and listed still: a delete the provider is still
      // carrying out ("terminating") is expected. Anything else is not taken
      // back (its cost is closed, and a gone record is never revived), nor
      // deleted on this alone: the log says so for an operator to look.
      if (i.state != "terminating") {
        log(StrCat("warning: instance ", i.id, " (node ", i.node, ") is listed by the provider as ", i.state,
                   " although tide recorded it ", g->second->state, " at ", FormatTimestamp(g->second->deleted),
                   "; tide leaves it alone: delete it at the provider if nobody uses it"));
      }
      continue;
    }
    if (auto k = known.find(i.id); k != known.end()) {
      // Its machine joined under a name of its own (MatchJoinedNodes): the
      // record follows, so that the node is known as tide's.
      if (!i.node.empty() && k->second->node != i.node) {
        InstanceRecord r = *k->second;
        log(StrCat("instance ", i.id, " (bought as node ", r.node, ") joined as node ", i.node));
        r.node = i.node;
        TIDE_RETURN_IF_ERROR(store->PutInstance(r));
      }
      continue;
    }
    InstanceRecord r;
    r.id = i.id;
    r.node = i.node;
    r.pool = i.pool;
    const int pool = PoolOf(config, obs, i);
    Priced(config, pool, &r);
    r.idempotency_key = "";  // the store's mark of an adopted instance (HeldNodes)
    r.created = i.created.time_since_epoch().count() > 0 ? i.created : now;
    r.state = "booting";
    TIDE_RETURN_IF_ERROR(store->PutInstance(r));
    // Adopted, not deleted: an instance tide has no record of buying is
    // most often one whose record was lost (an older or a replaced state
    // file), and the provider lists only instances it holds for tide. Until
    // its node joins, tide leaves it be (HeldNodes); then it is tide's as
    // any other: given back only by the same rules (idle long enough, not
    // needed), never because it was unknown.
    log(StrCat("adopted instance ", i.id, " (node ", i.node, pool < 0 ? "" : StrCat(", pool ", r.pool),
               i.idempotency_key.empty() ? "" : StrCat(", key ", i.idempotency_key),
               "): the provider lists it and the store has no record of buying it",
               pool < 0 ? "; it is on none of tide's pools, so tide never gives it back"
                        : "; tide leaves it be until its node joins, then manages it as a node it bought"));
  }
  for (const auto& r : records) {
    if (by_id.count(r.id)) continue;
    TIDE_RETURN_IF_ERROR(store->MarkInstanceDeleted(r.id, now, "lost"));
    const bool spot = r.tier == model::Tier::kSpot;
    if (spot) TIDE_RETURN_IF_ERROR(store->AddCounter("spot_interruptions", 1));
    log(StrCat("instance ", r.id, " (node ", r.node, ", pool ", r.pool, ") is gone at the provider",
               spot ? " (spot interrupted)" : "", "; its cost is closed at now"));
  }
  return OkStatus();
}

}  // namespace tide::controller
