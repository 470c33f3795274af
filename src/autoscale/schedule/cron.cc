#include "autoscale/schedule/cron.h"

#include <algorithm>
#include <chrono>

#include "core/strings.h"

namespace tide::autoscale {
namespace {

constexpr const char* kDayNames[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};

std::string ClockText(int minutes) { return fmt::format("{:02d}:{:02d}", minutes / 60, minutes % 60); }

}  // namespace

Result<int> ParseClock(std::string_view text) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(StrCat("'", text, "' is not a time of day; write HH:MM, like 18:00"));
  };
  const auto parts = Split(text, ':');
  int h, m;
  if (parts.size() != 2 || !ParseInt(parts[0], &h) || !ParseInt(parts[1], &m)) return bad();
  if (h < 0 || h > 24 || m < 0 || m > 59 || (h == 24 && m != 0)) return bad();
  return h * 60 + m;
}

Result<uint8_t> ParseDays(std::string_view text) {
  const std::string t = ToLower(StripWhitespace(text));
  if (t == "daily" || t == "all" || t == "*") return uint8_t{0x7f};
  if (t == "weekdays") return uint8_t{0x1f};
  if (t == "weekends") return uint8_t{0x60};
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        StrCat("'", text, "' is not a set of days; write mon-fri, sat,sun, weekdays, weekends or daily"));
  };
  auto day = [](std::string_view d) -> int {
    for (int i = 0; i < 7; ++i) {
      if (StripWhitespace(d) == kDayNames[i]) return i;
    }
    return -1;
  };
  uint8_t mask = 0;
  for (auto item : Split(t, ',', true)) {
    const auto range = Split(item, '-');
    const int a = day(range[0]), b = range.size() == 2 ? day(range[1]) : a;
    if (a < 0 || b < 0 || range.size() > 2) return bad();
    for (int i = a;; i = (i + 1) % 7) {
      mask |= uint8_t(1u << i);
      if (i == b) break;
    }
  }
  // Nothing named (an empty or blank string): a rule that would never apply.
  if (mask == 0) return bad();
  return mask;
}

void ScheduledCapacity::Local(Timestamp t, int* minute, int* weekday) const {
  using namespace std::chrono;
  date::local_seconds local;
  if (o_.time_zone != nullptr) {
    local = o_.time_zone->to_local(t);
  } else {
    local = date::local_seconds{t.time_since_epoch()};
  }
  const auto day = date::floor<date::days>(local);
  *minute = static_cast<int>(duration_cast<minutes>(local - day).count());
  *weekday = static_cast<int>((date::weekday{day}.iso_encoding() + 6) % 7);  // Monday = 0
}

bool ScheduledCapacity::Active(const CronRule& r, Timestamp t, Duration lead) const {
  const auto in_window = [&](Timestamp at) {
    int m, wd;
    Local(at, &m, &wd);
    const auto on = [&](int d) { return (r.days >> ((d + 7) % 7)) & 1; };
    if (r.from < r.to) return on(wd) && m >= r.from && m < r.to;
    // Crosses midnight: the evening belongs to today, the morning to yesterday's window.
    return (on(wd) && m >= r.from) || (on(wd - 1) && m < r.to);
  };
  // The lead moves the start earlier, not the end: [from - lead, to).
  return in_window(t) || (lead > Duration{0} && in_window(t + lead));
}

Duration ScheduledCapacity::LeadFor(const CronRule& r, const model::NodePool& pool) const {
  if (!r.min_nodes) return Duration{0};
  return r.lead ? *r.lead : pool.boot_delay.Expected();
}

std::string ScheduledCapacity::Explain(const CronRule& r) const {
  std::string days;
  if (r.days == 0x7f) {
    days = "daily";
  } else {
    std::vector<std::string> names;
    for (int i = 0; i < 7; ++i) {
      if ((r.days >> i) & 1) names.push_back(kDayNames[i]);
    }
    days = StrJoin(names, ",");
  }
  return StrCat("scheduled capacity '", r.name, "' (", days, " ", ClockText(r.from), "-", ClockText(r.to), " ",
                o_.time_zone_name, ")");
}

Timestamp ScheduledCapacity::NextBoundary(Timestamp now, const model::ClusterSpec& spec) const {
  // Walk forward a minute-aligned day at a time is too slow; instead look at
  // each rule's boundaries on the coming eight local days.
  Timestamp best = kInfiniteFuture;
  int m, wd;
  Local(now, &m, &wd);
  date::local_seconds local_now =
      o_.time_zone != nullptr ? o_.time_zone->to_local(now) : date::local_seconds{now.time_since_epoch()};
  const auto today = date::floor<date::days>(local_now);
  for (const auto& r : o_.rules) {
    Duration lead{0};
    for (int p : r.pools) lead = std::max(lead, LeadFor(r, spec.pools[p]));
    for (int d = -1; d <= 8; ++d) {
      for (int minute : {r.from, r.to}) {
        const date::local_seconds local = today + date::days{d} + std::chrono::minutes{minute};
        Timestamp at;
        if (o_.time_zone != nullptr) {
          at = o_.time_zone->to_sys(local, date::choose::earliest);
        } else {
          at = Timestamp{local.time_since_epoch()};
        }
        for (Timestamp cand : {at, at - lead}) {
          if (cand > now) best = std::min(best, cand);
        }
      }
    }
  }
  return best;
}

void ScheduledCapacity::ApplyLimits(PassContext* ctx, ScalingPlan* plan) const {
  const auto& pools = ctx->spec.pools;
  ctx->min_nodes.resize(pools.size());
  ctx->max_nodes.resize(pools.size());
  for (size_t p = 0; p < pools.size(); ++p) {
    ctx->min_nodes[p] = pools[p].min_nodes;
    ctx->max_nodes[p] = pools[p].max_nodes;
  }
  if (o_.rules.empty()) return;
  for (const auto& r : o_.rules) {
    for (int p : r.pools) {
      if (r.max_nodes && Active(r, ctx->now, Duration{0})) ctx->max_nodes[p] = std::min(ctx->max_nodes[p], *r.max_nodes);
      if (r.min_nodes && Active(r, ctx->now, LeadFor(r, pools[p]))) {
        ctx->min_nodes[p] = std::max(ctx->min_nodes[p], *r.min_nodes);
      }
    }
  }
  for (size_t p = 0; p < pools.size(); ++p) ctx->min_nodes[p] = std::min(ctx->min_nodes[p], ctx->max_nodes[p]);
  plan->next_wakeup = std::min(plan->next_wakeup, NextBoundary(ctx->now, ctx->spec));
}

void ScheduledCapacity::Enforce(PassContext* ctx, ScalingPlan* plan) const {
  if (o_.rules.empty()) return;
  const auto& pools = ctx->spec.pools;
  for (size_t p = 0; p < pools.size(); ++p) {
    const CronRule* floor_rule = nullptr;
    const CronRule* cap_rule = nullptr;
    for (const auto& r : o_.rules) {
      if (std::find(r.pools.begin(), r.pools.end(), static_cast<int>(p)) == r.pools.end()) continue;
      if (r.max_nodes && Active(r, ctx->now, Duration{0}) && *r.max_nodes == ctx->max_nodes[p]) cap_rule = &r;
      if (r.min_nodes && Active(r, ctx->now, LeadFor(r, pools[p])) && *r.min_nodes == ctx->min_nodes[p]) {
        floor_rule = &r;
      }
    }
    if (floor_rule == nullptr && cap_rule == nullptr) continue;
    // Count the nodes that stay (not draining, not under notice). With an
    // index, they are listed only if some must go.
    std::vector<const model::Node*> staying;
    auto list_staying = [&] {
      for (const auto& n : ctx->state.nodes) {
        if (n.pool != static_cast<int>(p) || n.state == model::NodeState::kDraining ||
            n.state == model::NodeState::kTerminated || n.interrupt_at != kInfiniteFuture || ctx->leaving.contains(n.id)) {
          continue;
        }
        staying.push_back(&n);
      }
    };
    int have = 0;
    if (const model::StateIndex* x = ctx->index) {
      have = x->staying(static_cast<int>(p));
      for (model::NodeId id : ctx->leaving) {
        const int pos = x->NodePos(id);
        if (pos >= 0 && x->staying().contains(pos) && x->node(pos).pool == static_cast<int>(p)) --have;
      }
      if (cap_rule != nullptr && have > ctx->max_nodes[p]) list_staying();
    } else {
      list_staying();
      have = static_cast<int>(staying.size());
    }
    if (floor_rule != nullptr && have < ctx->min_nodes[p] && pools[p].tier != model::Tier::kReserved) {
      Action a;
      a.kind = ActionKind::kScaleUp;
      a.pool = static_cast<int>(p);
      a.count = ctx->min_nodes[p] - have;
      a.reason = StrCat(Explain(*floor_rule), ": at least ", ctx->min_nodes[p], " nodes of ", pools[p].name, " from ",
                        ClockText(floor_rule->from), ", bought ", FormatDuration(LeadFor(*floor_rule, pools[p])),
                        " ahead; has ", have);
      ctx->live[p] += a.count;
      ctx->extra_nodes[p] += a.count;
      plan->actions.push_back(std::move(a));
    }
    if (cap_rule != nullptr && have > ctx->max_nodes[p]) {
      int excess = have - ctx->max_nodes[p];
      // Idle nodes go at once, longest idle first; then busy ones drain.
      std::sort(staying.begin(), staying.end(), [](const model::Node* a, const model::Node* b) {
        if (a->idle() != b->idle()) return a->idle();
        if (a->free_gpus != b->free_gpus) return a->free_gpus > b->free_gpus;
        return a->id > b->id;
      });
      Action release, drain;
      release.kind = ActionKind::kRelease;
      drain.kind = ActionKind::kDrain;
      release.pool = drain.pool = static_cast<int>(p);
      for (const model::Node* n : staying) {
        if (excess == 0) break;
        if (n->idle() && n->state == model::NodeState::kReady) {
          release.nodes.push_back(n->id);
        } else if (n->state == model::NodeState::kReady && cap_rule->drain) {
          drain.nodes.push_back(n->id);
        } else {
          continue;
        }
        ctx->leaving.insert(n->id);
        --excess;
      }
      const std::string why = StrCat(Explain(*cap_rule), ": at most ", ctx->max_nodes[p], " nodes of ", pools[p].name,
                                     " until ", ClockText(cap_rule->to), "; has ", have);
      if (!release.nodes.empty()) {
        release.count = static_cast<int>(release.nodes.size());
        release.reason = StrCat(why, "; releases ", release.count, " idle");
        plan->actions.push_back(std::move(release));
      }
      if (!drain.nodes.empty()) {
        drain.count = static_cast<int>(drain.nodes.size());
        drain.reason = StrCat(why, "; drains ", drain.count, " busy (their jobs finish first)");
        plan->actions.push_back(std::move(drain));
      }
    }
  }
}

}  // namespace tide::autoscale
