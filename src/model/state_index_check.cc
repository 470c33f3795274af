// StateIndex::Diff: the index checked against one built afresh from the
// state (what SimOptions::check_index and the index tests run after every
// sync). Kept apart from the index's upkeep, which never calls it.
#include <algorithm>
#include <string>
#include <vector>

#include "core/strings.h"
#include "model/state_index.h"

namespace tide::model {

std::string StateIndex::Diff(const ClusterState& state) const {
  const StateIndex fresh = Build(state, placement_);
  std::vector<std::string> out;
  if (dirty_) out.push_back("touched since the last Sync");
  if (!(jobs_ == fresh.jobs_)) out.push_back("job records");
  if (job_pos_ != fresh.job_pos_) out.push_back("job positions");
  if (!(nodes_ == fresh.nodes_)) out.push_back("node records");
  auto same = [](const auto& a, const auto& b) {  // positions too, which the order ignores
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) { return x == y; });
  };
  if (!same(pending_, fresh.pending_)) out.push_back(StrCat("pending (", pending_.size(), " vs ", fresh.pending_.size(), ")"));
  if (!(active_ == fresh.active_)) out.push_back("active");
  if (!(stopping_ == fresh.stopping_)) out.push_back("stopping");
  if (!(elastic_ == fresh.elastic_)) out.push_back("elastic");
  if (!(elastic_async_ == fresh.elastic_async_)) out.push_back("elastic_async");
  if (!(elastic_below_max_ == fresh.elastic_below_max_)) out.push_back("elastic_below_max");
  if (!(staying_ == fresh.staying_)) out.push_back("staying");
  if (!same(ends_, fresh.ends_)) out.push_back(StrCat("ends (", ends_.size(), " vs ", fresh.ends_.size(), ")"));
  if (!(ready_free_ == fresh.ready_free_)) out.push_back("ready_free");
  if (!(booting_ == fresh.booting_)) out.push_back("booting");
  if (!(booting_free_ == fresh.booting_free_)) out.push_back("booting_free");
  if (!(noticed_ == fresh.noticed_)) out.push_back("noticed");
  if (!(idle_ == fresh.idle_)) out.push_back("idle");
  for (size_t p = 0; p < std::max(live_.size(), fresh.live_.size()); ++p) {
    if (live(static_cast<int>(p)) != fresh.live(static_cast<int>(p))) out.push_back(StrCat("live of pool ", p));
    if (staying(static_cast<int>(p)) != fresh.staying(static_cast<int>(p))) out.push_back(StrCat("staying of pool ", p));
    if (staying_free(static_cast<int>(p)) != fresh.staying_free(static_cast<int>(p))) {
      out.push_back(StrCat("GPUs free on staying nodes of pool ", p));
    }
    const size_t n = std::max(p < usable_.size() ? usable_[p].size() : 0, p < fresh.usable_.size() ? fresh.usable_[p].size() : 0);
    for (size_t g = 0; g < n; ++g) {
      const int a = p < usable_.size() && g < usable_[p].size() ? usable_[p][g] : 0;
      const int b = p < fresh.usable_.size() && g < fresh.usable_[p].size() ? fresh.usable_[p][g] : 0;
      if (a != b) out.push_back(StrCat("usable nodes of pool ", p, " with ", g, " GPUs"));
    }
    for (int k = 0; k < kFreeKinds; ++k) {
      const auto size = [&](const StateIndex& x) {
        return p < x.by_free_.size() ? x.by_free_[p][static_cast<size_t>(k)].size() : size_t{0};
      };
      for (int f = 0; f < static_cast<int>(std::max(size(*this), size(fresh))); ++f) {
        if (FreeCount(static_cast<int>(p), static_cast<FreeKind>(k), f) !=
            fresh.FreeCount(static_cast<int>(p), static_cast<FreeKind>(k), f)) {
          out.push_back(StrCat("nodes of pool ", p, " of kind ", k, " with ", f, " GPUs free"));
        }
      }
    }
  }
  {
    auto sorted = [](const absl::flat_hash_map<NodeId, Placed>& m) {
      std::vector<std::tuple<NodeId, std::vector<uint32_t>, int>> v;
      for (const auto& [id, pl] : m) {
        std::vector<uint32_t> jobs(pl.jobs.begin(), pl.jobs.end());
        std::sort(jobs.begin(), jobs.end());
        v.emplace_back(id, std::move(jobs), pl.fixed);
      }
      std::sort(v.begin(), v.end());
      return v;
    };
    if (sorted(placed_) != sorted(fresh.placed_)) out.push_back("jobs per node");
  }
  for (size_t p = 0; p < std::max(settled_.size(), fresh.settled_.size()); ++p) {
    auto all = [p](const StateIndex& x) {
      std::vector<Settled> v;
      if (const auto* buckets = x.settled(static_cast<int>(p))) {
        for (const auto& b : *buckets) v.insert(v.end(), b.begin(), b.end());
      }
      std::sort(v.begin(), v.end());
      return v;
    };
    if (all(*this) != all(fresh)) out.push_back(StrCat("settled nodes of pool ", p));
  }
  if (!same(starts_, fresh.starts_)) out.push_back(StrCat("starts (", starts_.size(), " vs ", fresh.starts_.size(), ")"));
  for (size_t p = 0; p < std::max(in_use_.size(), fresh.in_use_.size()); ++p) {
    const int n = std::max(InUseSpan(static_cast<int>(p)), fresh.InUseSpan(static_cast<int>(p)));
    for (int f = 0; f < n; ++f) {
      if (InUseCount(static_cast<int>(p), f) != fresh.InUseCount(static_cast<int>(p), f)) {
        out.push_back(StrCat("nodes in use of pool ", p, " with ", f, " GPUs free"));
      }
    }
    const auto* a = created(static_cast<int>(p));
    const auto* b = fresh.created(static_cast<int>(p));
    if ((a == nullptr ? 0 : a->size()) + (b == nullptr ? 0 : b->size()) > 0 && (a == nullptr || b == nullptr || *a != *b)) {
      out.push_back(StrCat("nodes of pool ", p, " by creation"));
    }
  }
  if (out_of_order_ != fresh.out_of_order_) out.push_back("node id order");
  if (node_pos_ != fresh.node_pos_) out.push_back("node positions");
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (NodePos(nodes_[i].id) != fresh.NodePos(nodes_[i].id)) {
      out.push_back(StrCat("position of node ", nodes_[i].id));
      break;
    }
  }
  return StrJoin(out, ", ");
}

const StateIndex* IndexFor(const ClusterState& state) {
  const StateIndex* x = state.index;
  return x != nullptr && x->synced_ == &state && !x->dirty_ ? x : nullptr;
}

}  // namespace tide::model
