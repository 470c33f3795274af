// The journal: actions (what tide set out to do, by idempotency key) and
// instances (what it bought), with the transactions that keep the two
// consistent across a crash, and the billed intervals the cost is summed
// from.
#include <array>
#include <cmath>
#include <string_view>

#include "controller/sqlite.h"
#include "controller/store.h"
#include "controller/store_internal.h"
#include "core/strings.h"

namespace tide::controller {
namespace {

using store_internal::NotOneOf;
using store_internal::OneOf;
using store_internal::ReadAll;

constexpr std::array<std::string_view, 8> kActionKinds = {"create",     "delete", "drain",   "undrain",
                                                          "power_down", "signal", "requeue", "cancel"};
constexpr std::array<std::string_view, 3> kFinalActionStates = {"done", "failed", "abandoned"};
constexpr std::array<std::string_view, 3> kLiveInstanceStates = {"booting", "ready", "releasing"};
constexpr std::array<std::string_view, 2> kGoneInstanceStates = {"deleted", "lost"};

bool ValidTier(model::Tier tier) { return static_cast<int>(tier) < model::kNumTiers; }  // the enum is unsigned

// The tier a row holds, spelled exactly as TierName writes it (the schema's
// CHECK allows nothing else).
Result<model::Tier> StoredTier(const SqliteConnection& db, std::string_view text) {
  for (int t = 0; t < model::kNumTiers; ++t) {
    if (model::TierName(static_cast<model::Tier>(t)) == text) return static_cast<model::Tier>(t);
  }
  return absl::InternalError(StrCat(db.path(), ": holds unknown tier '", text, "'"));
}

Status ValidateLiveInstance(const InstanceRecord& r) {
  if (r.id.empty()) return absl::InvalidArgumentError("instance with an empty id");
  const std::string thing = StrCat("instance ", Shown(r.id));
  if (!ValidTier(r.tier)) {
    return absl::InvalidArgumentError(
        StrCat(thing, ": tier ", static_cast<int>(r.tier), " is not one of reserved, on-demand, spot"));
  }
  if (!OneOf(r.state, kLiveInstanceStates)) {
    return absl::InvalidArgumentError(StrCat(thing, ": state '", r.state, "' is not one of ",
                                             StrJoin(kLiveInstanceStates, ", "),
                                             " (an instance leaves the live set through MarkInstanceDeleted)"));
  }
  if (r.deleted != kInfiniteFuture) {
    return absl::InvalidArgumentError(
        StrCat(thing, ": a live instance has no deletion time (use MarkInstanceDeleted)"));
  }
  if (!std::isfinite(r.price_per_hour) || r.price_per_hour < 0) {
    return absl::InvalidArgumentError(StrCat(thing, ": price_per_hour ", r.price_per_hour, " is not >= 0"));
  }
  return OkStatus();
}

// The ledger record's cost of `seconds` of an instance at `price_per_hour`.
double RecordedCost(double price_per_hour, int64_t seconds) {
  return seconds <= 0 ? 0.0 : price_per_hour * static_cast<double>(seconds) / 3600.0;
}

// Reads a row of "SELECT key, kind, node, job, pool, state, created, updated,
// detail".
ActionRecord ReadAction(const SqliteStatement& s) {
  ActionRecord a;
  a.key = s.Text(0);
  a.kind = s.Text(1);
  a.node = s.Text(2);
  a.job = s.Text(3);
  a.pool = s.Text(4);
  a.state = s.Text(5);
  a.created = s.Time(6);
  a.updated = s.Time(7);
  a.detail = s.Text(8);
  return a;
}

// Reads a row of "SELECT id, node, pool, tier, price_per_hour,
// idempotency_key, created, deleted, state".
Result<InstanceRecord> ReadInstance(const SqliteConnection& db, const SqliteStatement& s) {
  InstanceRecord r;
  r.id = s.Text(0);
  r.node = s.Text(1);
  r.pool = s.Text(2);
  TIDE_ASSIGN_OR_RETURN(r.tier, StoredTier(db, s.Text(3)));
  r.price_per_hour = s.Real(4);
  r.idempotency_key = s.Text(5);
  r.created = s.Time(6);
  r.deleted = s.IsNull(7) ? kInfiniteFuture : s.Time(7);
  r.state = s.Text(8);
  return r;
}

}  // namespace

// --- Actions -----------------------------------------------------------------

Status Store::BeginAction(const ActionRecord& a) {
  if (a.key.empty()) return absl::InvalidArgumentError("action with an empty idempotency key");
  if (!OneOf(a.kind, kActionKinds)) return NotOneOf(StrCat("action ", Shown(a.key)), "kind", a.kind, kActionKinds);
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("INSERT INTO actions (key, kind, node, job, pool, state, created, "
                                               "updated, detail) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?) "
                                               "ON CONFLICT (key) DO NOTHING",
                                               "BeginAction"));
    TIDE_RETURN_IF_ERROR(s.BindText(a.key)
                             .BindText(a.kind)
                             .BindText(a.node)
                             .BindText(a.job)
                             .BindText(a.pool)
                             .BindTime(a.created)
                             .BindTime(a.created)
                             .BindText(a.detail)
                             .Run());
  }
  if (db_->Changes() == 1) return OkStatus();
  TIDE_ASSIGN_OR_RETURN(auto existing, GetAction(a.key));
  return absl::AlreadyExistsError(
      StrCat("action ", Shown(a.key), " already exists",
             existing.has_value() ? StrCat(" (", existing->kind, ", ", existing->state, ")") : std::string()));
}

Status Store::FinishAction(const std::string& key, const std::string& state, const std::string& detail, Timestamp now) {
  if (!OneOf(state, kFinalActionStates)) {
    return NotOneOf(StrCat("action ", Shown(key)), "final state", state, kFinalActionStates);
  }
  TIDE_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db_.get(), "FinishAction"));
  std::string kind, current;
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT kind, state FROM actions WHERE key = ?", "FinishAction"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(key).Step());
    if (!row) return absl::NotFoundError(StrCat("action ", Shown(key), " not found"));
    kind = s.Text(0);
    current = s.Text(1);
  }
  if (current == state) return OkStatus();
  if (current != "pending") {
    return absl::FailedPreconditionError(
        StrCat("action ", Shown(key), " is already ", current, "; not changing it to ", state));
  }
  if (kind == "create" && state == "done") {
    return absl::FailedPreconditionError(StrCat("action ", Shown(key), " is a create; record its instance with CommitCreate"));
  }
  {
    TIDE_ASSIGN_OR_RETURN(
        auto s, db_->Prepare("UPDATE actions SET state = ?, detail = ?, updated = ? WHERE key = ?", "FinishAction"));
    TIDE_RETURN_IF_ERROR(s.BindText(state).BindText(detail).BindTime(now).BindText(key).Run());
  }
  return txn.Commit();
}

Result<std::optional<ActionRecord>> Store::GetAction(const std::string& key) {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT key, kind, node, job, pool, state, created, updated, detail "
                                             "FROM actions WHERE key = ?",
                                             "GetAction"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(key).Step());
  if (!row) return std::optional<ActionRecord>();
  return std::optional<ActionRecord>(ReadAction(s));
}

Result<std::vector<ActionRecord>> Store::PendingActions() {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT key, kind, node, job, pool, state, created, updated, detail "
                                             "FROM actions WHERE state = 'pending' ORDER BY created, rowid",
                                             "PendingActions"));
  return ReadAll<ActionRecord>(s, [](const SqliteStatement& row) -> Result<ActionRecord> { return ReadAction(row); });
}

Result<std::vector<ActionRecord>> Store::RecentActions(int limit) {
  if (limit < 0) return absl::InvalidArgumentError(StrCat("RecentActions: limit ", limit, " is negative"));
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT key, kind, node, job, pool, state, created, updated, detail "
                                             "FROM actions ORDER BY created DESC, rowid DESC LIMIT ?",
                                             "RecentActions"));
  s.BindInt(limit);
  return ReadAll<ActionRecord>(s, [](const SqliteStatement& row) -> Result<ActionRecord> { return ReadAction(row); });
}

// --- Instances ---------------------------------------------------------------

Status Store::PutInstanceRow(const InstanceRecord& r, std::string_view what) {
  {
    // The WHERE keeps a gone instance gone: its interval is closed, and
    // reviving the row would bill it twice.
    TIDE_ASSIGN_OR_RETURN(
        auto s,
        db_->Prepare("INSERT INTO instances (id, node, pool, tier, price_per_hour, idempotency_key, created, "
                     "deleted, state) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?) "
                     "ON CONFLICT (id) DO UPDATE SET node = excluded.node, pool = excluded.pool, "
                     "tier = excluded.tier, price_per_hour = excluded.price_per_hour, "
                     "idempotency_key = excluded.idempotency_key, created = excluded.created, "
                     "state = excluded.state WHERE instances.deleted IS NULL",
                     what));
    TIDE_RETURN_IF_ERROR(s.BindText(r.id)
                             .BindText(r.node)
                             .BindText(r.pool)
                             .BindText(model::TierName(r.tier))
                             .BindReal(r.price_per_hour)
                             .BindText(r.idempotency_key)
                             .BindTime(r.created)
                             .BindText(r.state)
                             .Run());
  }
  if (db_->Changes() == 1) return OkStatus();
  return absl::FailedPreconditionError(
      StrCat("instance ", Shown(r.id), " is already deleted or lost; a gone instance is not brought back"));
}

Status Store::PutInstance(const InstanceRecord& r) {
  TIDE_RETURN_IF_ERROR(ValidateLiveInstance(r));
  return PutInstanceRow(r, "PutInstance");
}

Status Store::MarkInstanceDeleted(const std::string& id, Timestamp at, const std::string& state) {
  if (!OneOf(state, kGoneInstanceStates)) return NotOneOf(StrCat("instance ", Shown(id)), "state", state, kGoneInstanceStates);
  if (at >= kInfiniteFuture) {
    return absl::InvalidArgumentError(StrCat("instance ", Shown(id), ": deletion time is not finite"));
  }
  TIDE_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db_.get(), "MarkInstanceDeleted"));
  std::string tier;
  double price = 0;
  Timestamp created{};
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT tier, price_per_hour, created, deleted FROM instances "
                                               "WHERE id = ?",
                                               "MarkInstanceDeleted"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(id).Step());
    if (!row) return absl::NotFoundError(StrCat("instance ", Shown(id), " not found"));
    if (!s.IsNull(3)) return OkStatus();  // already gone: the first deletion stands
    tier = s.Text(0);
    price = s.Real(1);
    created = s.Time(2);
  }
  {
    TIDE_ASSIGN_OR_RETURN(
        auto s, db_->Prepare("UPDATE instances SET deleted = ?, state = ? WHERE id = ?", "MarkInstanceDeleted"));
    TIDE_RETURN_IF_ERROR(s.BindTime(at).BindText(state).BindText(id).Run());
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("INSERT INTO ledger (instance_id, tier, price_per_hour, start_at, "
                                               "end_at, cost) VALUES (?, ?, ?, ?, ?, ?) "
                                               "ON CONFLICT (instance_id) DO NOTHING",
                                               "MarkInstanceDeleted"));
    TIDE_RETURN_IF_ERROR(s.BindText(id)
                             .BindText(tier)
                             .BindReal(price)
                             .BindTime(created)
                             .BindTime(at)
                             .BindReal(RecordedCost(price, (at - created).count()))
                             .Run());
  }
  return txn.Commit();
}

Result<std::vector<InstanceRecord>> Store::Instances(bool include_deleted) {
  constexpr const char* kAll =
      "SELECT id, node, pool, tier, price_per_hour, idempotency_key, created, deleted, state FROM instances "
      "ORDER BY created, rowid";
  constexpr const char* kLive =
      "SELECT id, node, pool, tier, price_per_hour, idempotency_key, created, deleted, state FROM instances "
      "WHERE deleted IS NULL ORDER BY created, rowid";
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare(include_deleted ? kAll : kLive, "Instances"));
  return ReadAll<InstanceRecord>(s, [this](const SqliteStatement& row) { return ReadInstance(*db_, row); });
}

Result<std::optional<InstanceRecord>> Store::InstanceByNode(const std::string& node) {
  TIDE_ASSIGN_OR_RETURN(
      auto s, db_->Prepare("SELECT id, node, pool, tier, price_per_hour, idempotency_key, created, deleted, state "
                           "FROM instances WHERE node = ? AND deleted IS NULL "
                           "ORDER BY created DESC, rowid DESC LIMIT 1",
                           "InstanceByNode"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(node).Step());
  if (!row) return std::optional<InstanceRecord>();
  TIDE_ASSIGN_OR_RETURN(InstanceRecord r, ReadInstance(*db_, s));
  return std::optional<InstanceRecord>(std::move(r));
}

Status Store::CommitCreate(const std::string& action_key, const InstanceRecord& r, Timestamp now) {
  InstanceRecord rec = r;
  if (rec.idempotency_key.empty()) rec.idempotency_key = action_key;
  if (rec.idempotency_key != action_key) {
    return absl::InvalidArgumentError(StrCat("instance ", Shown(r.id), ": idempotency key ", Shown(r.idempotency_key),
                                             " does not match create action ", action_key));
  }
  TIDE_RETURN_IF_ERROR(ValidateLiveInstance(rec));
  TIDE_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db_.get(), "CommitCreate"));
  std::string kind, state;
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT kind, state FROM actions WHERE key = ?", "CommitCreate"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(action_key).Step());
    if (!row) return absl::NotFoundError(StrCat("action ", Shown(action_key), " not found"));
    kind = s.Text(0);
    state = s.Text(1);
  }
  if (kind != "create") {
    return absl::FailedPreconditionError(StrCat("action ", Shown(action_key), " is a ", kind, ", not a create"));
  }
  if (state == "done") {
    TIDE_ASSIGN_OR_RETURN(auto s,
                          db_->Prepare("SELECT idempotency_key FROM instances WHERE id = ?", "CommitCreate"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(rec.id).Step());
    if (row && s.Text(0) == action_key) return OkStatus();  // committed before
    return absl::FailedPreconditionError(
        StrCat("action ", Shown(action_key), " is already done with another instance than ", rec.id));
  }
  if (state != "pending") {
    return absl::FailedPreconditionError(
        StrCat("action ", Shown(action_key), " is ", state, "; record instance ", rec.id, " with PutInstance to adopt it"));
  }
  TIDE_RETURN_IF_ERROR(PutInstanceRow(rec, "CommitCreate"));
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("UPDATE actions SET state = 'done', detail = ?, updated = ? "
                                               "WHERE key = ?",
                                               "CommitCreate"));
    TIDE_RETURN_IF_ERROR(s.BindText(StrCat("instance ", rec.id)).BindTime(now).BindText(action_key).Run());
  }
  return txn.Commit();
}

// --- Billed intervals ------------------------------------------------------------

Result<std::vector<BilledInterval>> Store::BilledIntervals() {
  // The instances table holds every instance ever billed, gone ones with
  // their deletion time: one read, so each is counted exactly once.
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT id, tier, price_per_hour, created, deleted FROM instances "
                                             "ORDER BY created, rowid",
                                             "BilledIntervals"));
  return ReadAll<BilledInterval>(s, [this](const SqliteStatement& row) -> Result<BilledInterval> {
    BilledInterval b;
    b.instance_id = row.Text(0);
    TIDE_ASSIGN_OR_RETURN(b.tier, StoredTier(*db_, row.Text(1)));
    b.price_per_hour = row.Real(2);
    b.start = row.Time(3);
    b.end = row.IsNull(4) ? kInfiniteFuture : row.Time(4);
    return b;
  });
}

}  // namespace tide::controller
