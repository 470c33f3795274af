#include "autoscale/scaleup/trigger.h"
#include "core/strings.h"


namespace tide::autoscale {

TriggerDecision PendingTrigger::Evaluate(const std::vector<const model::Job*>& pending,
                                         const std::vector<const model::Job*>& waiting, Timestamp now) const {
  TriggerDecision d;
  if (pending.empty()) return d;
  const int n = static_cast<int>(pending.size());
  const std::string count = StrCat(n, " GPU job", n == 1 ? "" : "s", " pending");
  if (n > options_.pending_threshold) {
    d.fire = true;
    d.reason = options_.pending_threshold > 0 ? StrCat(count, " (more than ", options_.pending_threshold, ")") : count;
    return d;
  }
  if (waiting.empty()) return d;
  if (options_.replace_interrupted_at_once) {
    for (const model::Job* j : waiting) {
      if (j->restarts > 0) {
        d.fire = true;
        d.reason = StrCat(count, "; ", j->spec.name, " was interrupted and is replaced at once");
        return d;
      }
    }
  }
  const model::Job* oldest = waiting.front();
  for (const model::Job* j : waiting) {
    if (j->spec.submit < oldest->spec.submit || (j->spec.submit == oldest->spec.submit && j->id < oldest->id)) {
      oldest = j;
    }
  }
  const Duration age = now - oldest->spec.submit;
  if (age >= options_.pending_grace) {
    d.fire = true;
    d.reason = StrCat(count, "; ", oldest->spec.name, " has waited ", FormatDuration(age), " (grace ",
                      FormatDuration(options_.pending_grace), ")");
    return d;
  }
  d.next_check = oldest->spec.submit + options_.pending_grace;
  return d;
}

}  // namespace tide::autoscale
