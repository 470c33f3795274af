// The state store's records (controller/store.h): actions, instances, job
// events, decisions and values with arbitrary text (names and replies that
// came from elsewhere: NUL bytes, quotes, invalid UTF-8) and numbers, in an
// in-memory store that lives for 256 inputs (opening one costs milliseconds;
// records from earlier inputs also meet later ones).
//
// Properties: what the store accepts it gives back unchanged (written, then
// read, is equal); what it refuses is InvalidArgument with a printable
// message naming the record; nothing it is given can break a later read.
#include <fuzzer/FuzzedDataProvider.h>

#include "controller/store.h"
#include "fuzz/fuzz_check.h"

namespace tide::fuzz {
namespace {

using controller::ActionRecord;
using controller::InstanceRecord;
using controller::Store;

void Refused(const Status& s) {
  if (s.code() != absl::StatusCode::kInvalidArgument && s.code() != absl::StatusCode::kFailedPrecondition &&
      s.code() != absl::StatusCode::kAlreadyExists) {
    Fail("the store refuses a record as invalid, not as a failure", Message(s));
  }
  CheckMessage(s);
}

template <typename T>
T Get(Result<T> r, std::string_view what) {
  if (!r.ok()) Fail(StrCat("the store reads back ", what), Message(r.status()));
  return *std::move(r);
}

void Same(bool equal, std::string_view what) {
  if (!equal) Fail("written, then read, is equal", what);
}

Timestamp Time(FuzzedDataProvider& in) {
  return FromUnixSeconds(in.ConsumeIntegralInRange<int64_t>(-(int64_t{1} << 40), int64_t{1} << 40));
}

}  // namespace
}  // namespace tide::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tide;
  using namespace tide::fuzz;
  FuzzedDataProvider in(data, size);
  static std::unique_ptr<Store> kept;
  static int uses = 0;
  if (kept == nullptr || ++uses % 256 == 0) {
    auto opened = Store::Open(":memory:");
    if (!opened.ok()) Fail("an in-memory store opens", Message(opened.status()));
    kept = std::move(*opened);
  }
  Store& store = *kept;
  while (in.remaining_bytes() > 0) {
    switch (in.ConsumeIntegralInRange(0, 4)) {
      case 0: {
        ActionRecord a;
        a.key = in.ConsumeRandomLengthString(40);
        a.kind = in.PickValueInArray({"create", "delete", "drain", "signal", "requeue"});
        a.node = in.ConsumeRandomLengthString(40);
        a.job = in.ConsumeRandomLengthString(40);
        a.pool = in.ConsumeRandomLengthString(20);
        a.detail = in.ConsumeRandomLengthString(100);
        a.created = Time(in);
        if (Status s = store.BeginAction(a); !s.ok()) {
          Refused(s);
          break;
        }
        auto back = Get(store.GetAction(a.key), "an action");
        if (!back) Fail("an action begun is found by its key", a.key);
        Same(back->node == a.node && back->job == a.job && back->pool == a.pool && back->detail == a.detail &&
                 back->kind == a.kind && back->created == a.created && back->state == "pending",
             StrCat("action ", a.key));
        break;
      }
      case 1: {
        InstanceRecord r;
        r.id = in.ConsumeRandomLengthString(40);
        r.node = in.ConsumeRandomLengthString(40);
        r.pool = in.ConsumeRandomLengthString(20);
        r.tier = in.PickValueInArray({model::Tier::kReserved, model::Tier::kOnDemand, model::Tier::kSpot});
        r.price_per_hour = in.ConsumeFloatingPoint<double>();
        r.created = Time(in);
        r.state = in.PickValueInArray({"booting", "ready", "releasing", "gone"});
        if (Status s = store.PutInstance(r); !s.ok()) {
          Refused(s);
          break;
        }
        bool found = false;
        for (const auto& i : Get(store.Instances(true), "the instances")) {
          if (i.id != r.id) continue;
          found = true;
          Same(i.node == r.node && i.pool == r.pool && i.tier == r.tier && i.price_per_hour == r.price_per_hour &&
                   i.created == r.created && i.state == r.state,
               StrCat("instance ", r.id));
        }
        if (!found) Fail("an instance put is listed", r.id);
        break;
      }
      case 2: {
        controller::JobEvent e;
        e.job = in.ConsumeRandomLengthString(40);
        e.kind = in.PickValueInArray({"signalled", "requeued", "cancelled", "interrupted"});
        e.at = Time(in);
        e.lost_gpu_seconds = in.ConsumeFloatingPoint<double>();
        e.detail = in.ConsumeRandomLengthString(100);
        if (Status s = store.AddJobEvent(e); !s.ok()) {
          Refused(s);
          break;
        }
        const auto events = Get(store.JobEvents(e.job), "a job's events");
        bool found = false;
        for (const auto& x : events) {
          found = found || (x.kind == e.kind && x.at == e.at && x.lost_gpu_seconds == e.lost_gpu_seconds &&
                            x.detail == e.detail);
        }
        Same(found, StrCat("event of job ", e.job));
        break;
      }
      case 3: {
        const std::string key = in.ConsumeRandomLengthString(40);
        const std::string value = in.ConsumeRandomLengthString(200);
        if (Status s = store.SetValue(key, value); !s.ok()) {
          Refused(s);
          break;
        }
        const auto back = Get(store.GetValue(key), "a value");
        Same(back && *back == value, StrCat("value ", key));
        break;
      }
      default: {
        controller::DecisionRecord d;
        d.at = Time(in);
        d.kind = in.ConsumeRandomLengthString(20);
        d.reason = in.ConsumeRandomLengthString(100);
        d.detail = in.ConsumeRandomLengthString(100);
        d.dry_run = in.ConsumeBool();
        if (Status s = store.AppendDecisions({d}); !s.ok()) {
          Refused(s);
          break;
        }
        const auto last = Get(store.RecentDecisions(1), "the decisions");
        Same(last.size() == 1 && last[0].kind == d.kind && last[0].reason == d.reason && last[0].detail == d.detail &&
                 last[0].at == d.at && last[0].dry_run == d.dry_run,
             "the last decision");
      }
    }
  }
  // Every table still reads.
  Get(store.PendingActions(), "the pending actions");
  Get(store.RecentActions(100), "the recent actions");
  Get(store.BilledIntervals(), "the billed intervals");
  Get(store.LostGpuSeconds(), "the lost work");
  return 0;
}
