// ScheduledCapacity: cron-like rules that narrow pools' limits by the time of
// day in a named time zone (MISSION 6: at 18:00 scale non-core pools down;
// before 09:00 scale them back up).
//
// A rule applies to some pools on some days between `from` and `to` (local
// time; a window may cross midnight, and belongs to the day it starts):
//   max_nodes  caps the pools: idle nodes above the cap are released at once,
//              busy ones drained (they take no new work and go when empty;
//              running jobs are never interrupted);
//   min_nodes  floors them: nodes are bought `lead` ahead of `from` (default:
//              the pool's expected boot delay) so they are up at `from`, and
//              idle release keeps them until `to`.
// Rules compose with the other policies rather than fight them: they only
// move the min and max every other component already respects. Where a
// floor and a cap meet, the cap wins. See docs/design/scheduled-capacity.md.
#ifndef TIDE_AUTOSCALE_SCHEDULE_CRON_H_
#define TIDE_AUTOSCALE_SCHEDULE_CRON_H_

#include <optional>
#include <string>
#include <vector>

#include "autoscale/context.h"
#include "date/tz.h"

namespace tide::autoscale {

struct CronRule {
  std::string name;
  std::vector<int> pools;  // pool indexes
  uint8_t days = 0x7f;     // bit i: weekday i (0 = Monday) on which a window starts
  int from = 0;            // minutes after local midnight
  int to = 0;              // to <= from: the window ends the next day
  std::optional<int> min_nodes;
  std::optional<int> max_nodes;
  std::optional<Duration> lead;  // pre-warm ahead of `from` (min_nodes rules)
  bool drain = true;
};

struct ScheduleOptions {
  std::vector<CronRule> rules;
  const date::time_zone* time_zone = nullptr;  // nullptr: UTC
  std::string time_zone_name = "UTC";
};

class ScheduledCapacity {
 public:
  explicit ScheduledCapacity(const ScheduleOptions& o) : o_(o) {}

  // Narrows ctx->min_nodes and ctx->max_nodes to the rules in force, and
  // lowers plan->next_wakeup to the next time any rule starts or ends.
  void ApplyLimits(PassContext* ctx, ScalingPlan* plan) const;
  // Buys up to the floors and releases or drains down to the caps.
  void Enforce(PassContext* ctx, ScalingPlan* plan) const;

  // Whether `rule` holds at `t`; with a pre-warm `lead`, from `lead` before
  // its start until its end. Exposed for tests.
  bool Active(const CronRule& rule, Timestamp t, Duration lead) const;

 private:
  Duration LeadFor(const CronRule& rule, const model::NodePool& pool) const;
  // Local minute of day and weekday (0 = Monday) of `t`.
  void Local(Timestamp t, int* minute, int* weekday) const;
  Timestamp NextBoundary(Timestamp now, const model::ClusterSpec& spec) const;
  std::string Explain(const CronRule& rule) const;

  const ScheduleOptions& o_;
};

// "18:00" -> 1080. InvalidArgument otherwise.
Result<int> ParseClock(std::string_view text);
// "mon-fri", "sat,sun", "daily" -> a weekday bit mask. InvalidArgument otherwise.
Result<uint8_t> ParseDays(std::string_view text);

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCHEDULE_CRON_H_
