#include "place/packer.h"

#include <algorithm>
#include <functional>

#include "absl/hash/hash.h"
#include "core/rng.h"
#include "core/strings.h"

namespace tide::place {

int64_t Cluster::TotalGpus() const {
  int64_t g = 0;
  for (const auto& n : nodes) g += n.gpus;
  return g;
}

size_t PodHash::operator()(const PodRequest& p) const {
  return absl::HashOf(p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli, p.models);
}

int64_t NodeFree::FreeMilli() const {
  int64_t f = 0;
  for (int g = 0; g < gpus; ++g) f += gpu_milli[g];
  return f;
}

ModelMask MaskOf(const Cluster& cluster, const std::vector<std::string>& models) {
  ModelMask mask = 0;
  for (const auto& m : models) {
    auto it = std::find(cluster.models.begin(), cluster.models.end(), m);
    if (it != cluster.models.end()) mask |= ModelMask{1} << (it - cluster.models.begin());
  }
  return models.empty() || mask != 0 ? mask : kNoModel;
}

Workload WorkloadOf(const std::vector<PodRequest>& pods) {
  Workload w;
  absl::flat_hash_map<PodRequest, int, PodHash> index;
  int64_t n = 0;
  for (const auto& p : pods) {
    if (p.num_gpu == 0) continue;
    auto [it, added] = index.try_emplace(p, static_cast<int>(w.types.size()));
    if (added) w.types.push_back({p, 0});
    w.types[it->second].weight += 1;
    ++n;
  }
  for (auto& t : w.types) t.weight /= static_cast<double>(n);
  return w;
}

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kFirstFit:
      return "first-fit";
    case Policy::kBestFit:
      return "best-fit";
    case Policy::kWorstFit:
      return "worst-fit";
    case Policy::kFgd:
      return "fgd";
  }
  return "?";
}

std::vector<Policy> AllPolicies() { return {Policy::kBestFit, Policy::kFirstFit, Policy::kWorstFit, Policy::kFgd}; }

Result<Policy> ParsePolicy(std::string_view name) {
  for (Policy p : AllPolicies()) {
    if (PolicyName(p) == name) return p;
  }
  return absl::InvalidArgumentError(
      StrCat("unknown placement policy '", name, "'; known: best-fit, first-fit, worst-fit, fgd"));
}

namespace {

bool ModelAllowed(const NodeFree& n, ModelMask models) { return models == 0 || ((models >> n.model) & 1) != 0; }

int WholeFree(const NodeFree& n) {
  int k = 0;
  for (int g = 0; g < n.gpus; ++g) k += n.gpu_milli[g] == kMilliPerGpu;
  return k;
}

bool Fractional(const PodRequest& pod) { return pod.num_gpu == 1 && pod.gpu_milli < kMilliPerGpu; }

}  // namespace

int64_t NodeFragment(const NodeFree& n, const PodRequest& pod) {
  const int64_t free = n.FreeMilli();
  if (!ModelAllowed(n, pod.models) || n.cpu_milli < pod.cpu_milli || n.memory_mib < pod.memory_mib) return free;
  if (Fractional(pod)) {
    int64_t frag = 0;
    for (int g = 0; g < n.gpus; ++g) {
      if (n.gpu_milli[g] < pod.gpu_milli) frag += n.gpu_milli[g];
    }
    return frag;
  }
  if (WholeFree(n) < pod.num_gpu) return free;
  return free - int64_t{WholeFree(n)} * kMilliPerGpu;
}

Packer::Packer(Workload workload, Policy policy) : workload_(std::move(workload)), policy_(policy) {
  for (size_t t = 0; t < workload_.types.size(); ++t) {
    const PodRequest& pod = workload_.types[t].pod;
    type_of_.emplace(pod, static_cast<int>(t));
    cpu_demands_.push_back(pod.cpu_milli);
    memory_demands_.push_back(pod.memory_mib);
  }
  for (auto* v : {&cpu_demands_, &memory_demands_}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
}

Result<Packer> Packer::Create(const Cluster& cluster, Workload workload, Policy policy) {
  if (cluster.models.size() >= static_cast<size_t>(kMaxModels)) {
    return absl::InvalidArgumentError(StrCat("at most ", kMaxModels - 1, " GPU models, got ", cluster.models.size()));
  }
  Packer p(std::move(workload), policy);
  for (const NodeSpec& s : cluster.nodes) {
    if (s.gpus < 1 || s.gpus > kMaxGpusPerNode) {
      return absl::InvalidArgumentError(
          StrCat("node ", s.name, ": ", s.gpus, " GPUs; placement takes nodes of 1 to ", kMaxGpusPerNode));
    }
    if (s.model < 0 || s.model >= static_cast<int>(cluster.models.size())) {
      return absl::InvalidArgumentError(StrCat("node ", s.name, ": model index ", s.model, " out of range"));
    }
    NodeFree n;
    n.cpu_milli = s.cpu_milli;
    n.memory_mib = s.memory_mib;
    n.gpus = s.gpus;
    n.model = s.model;
    for (int g = 0; g < s.gpus; ++g) n.gpu_milli[g] = kMilliPerGpu;
    p.free_.push_back(n);
    p.frag_.push_back(p.ExpectedFragment(n));
    p.frag_sum_ += p.frag_.back();
    p.total_gpus_ += s.gpus;
  }
  p.version_.assign(p.free_.size(), 1);
  if (policy == Policy::kFgd) {
    p.choice_cache_.assign(p.workload_.types.size(), std::vector<Cached>(p.free_.size()));
  }
  p.total_milli_ = p.total_gpus_ * kMilliPerGpu;
  return p;
}

namespace {

// The largest of `demands` (ascending) at most `v`, or -1 if none is.
int64_t FloorDemand(const std::vector<int64_t>& demands, int64_t v) {
  auto it = std::upper_bound(demands.begin(), demands.end(), v);
  return it == demands.begin() ? -1 : *(it - 1);
}

}  // namespace

double Packer::ExpectedFragment(const NodeFree& n) const {
  NodeFree key = n;
  std::sort(key.gpu_milli.begin(), key.gpu_milli.begin() + key.gpus, std::greater<>());
  key.cpu_milli = FloorDemand(cpu_demands_, n.cpu_milli);
  key.memory_mib = FloorDemand(memory_demands_, n.memory_mib);
  auto [it, added] = frag_memo_.try_emplace(key, 0.0);
  if (added) {
    double f = 0;
    for (const auto& t : workload_.types) f += t.weight * static_cast<double>(NodeFragment(key, t.pod));
    it->second = f;
  }
  return it->second;
}

bool Packer::Fits(const NodeFree& n, const PodRequest& pod) const {
  if (!ModelAllowed(n, pod.models) || n.cpu_milli < pod.cpu_milli || n.memory_mib < pod.memory_mib) return false;
  if (Fractional(pod)) {
    for (int g = 0; g < n.gpus; ++g) {
      if (n.gpu_milli[g] >= pod.gpu_milli) return true;
    }
    return false;
  }
  return WholeFree(n) >= pod.num_gpu;
}

namespace {

// `n` after `pod` takes from a GPU with `level` free (fractional) or whole GPUs.
NodeFree After(const NodeFree& n, const PodRequest& pod, int level, Placement* where = nullptr) {
  NodeFree out = n;
  out.cpu_milli -= pod.cpu_milli;
  out.memory_mib -= pod.memory_mib;
  if (Fractional(pod)) {
    for (int g = 0; g < n.gpus; ++g) {
      if (n.gpu_milli[g] == level) {
        out.gpu_milli[g] = static_cast<int16_t>(level - pod.gpu_milli);
        if (where) where->taken[g] = static_cast<int16_t>(pod.gpu_milli);
        break;
      }
    }
    return out;
  }
  int left = pod.num_gpu;
  for (int g = 0; g < n.gpus && left > 0; ++g) {
    if (n.gpu_milli[g] == kMilliPerGpu) {
      out.gpu_milli[g] = 0;
      if (where) where->taken[g] = kMilliPerGpu;
      --left;
    }
  }
  return out;
}

}  // namespace

Packer::Choice Packer::FgdChoice(int i, const PodRequest& pod) const {
  const NodeFree& n = free_[i];
  const double before = frag_[i];
  if (!Fractional(pod)) return {ExpectedFragment(After(n, pod, 0)) - before, 0};
  Choice best{1e300, 0};
  for (int g = 0; g < n.gpus; ++g) {
    const int level = n.gpu_milli[g];
    if (level < pod.gpu_milli || level == best.level) continue;
    const double d = ExpectedFragment(After(n, pod, level)) - before;
    // Ties go to the tighter GPU, as best-fit would.
    if (d < best.delta - 1e-9 || (d < best.delta + 1e-9 && level < best.level)) best = {d, level};
  }
  return best;
}

Packer::Choice Packer::ChooseOnNode(int i, const PodRequest& pod, int type) const {
  const NodeFree& n = free_[i];
  if (policy_ == Policy::kFgd) {
    if (type < 0) return FgdChoice(i, pod);
    Cached& c = choice_cache_[type][i];
    if (c.version != version_[i]) c = {version_[i], FgdChoice(i, pod)};
    return c.choice;
  }
  if (!Fractional(pod)) return {};
  int level = -1;
  for (int g = 0; g < n.gpus; ++g) {
    const int f = n.gpu_milli[g];
    if (f < pod.gpu_milli) continue;
    if (level < 0 || (policy_ == Policy::kBestFit && f < level) || (policy_ == Policy::kWorstFit && f > level)) {
      level = f;
    }
    if (policy_ == Policy::kFirstFit) break;
  }
  return {0, level};
}

void Packer::Take(int i, const PodRequest& pod, const Choice& c) {
  NodeFree& n = free_[i];
  last_ = Placement{};
  last_.node = i;
  const NodeFree next = After(n, pod, c.level, &last_);
  for (int g = 0; g < n.gpus; ++g) {
    used_gpus_ += (n.gpu_milli[g] == kMilliPerGpu) && next.gpu_milli[g] < kMilliPerGpu;
  }
  allocated_milli_ += pod.TotalMilli();
  n = next;
  ++version_[i];
  frag_sum_ -= frag_[i];
  frag_[i] = ExpectedFragment(n);
  frag_sum_ += frag_[i];
}

Step Packer::Add(const PodRequest& pod) {
  ++arrivals_;
  arrived_milli_ += pod.TotalMilli();
  auto t = type_of_.find(pod);
  const int type = t == type_of_.end() ? -1 : t->second;
  int best = -1;
  Choice best_choice;
  double best_score = 0;
  for (int i = 0; i < static_cast<int>(free_.size()); ++i) {
    if (!Fits(free_[i], pod)) continue;
    const Choice c = ChooseOnNode(i, pod, type);
    if (policy_ == Policy::kFirstFit) {
      best = i;
      best_choice = c;
      break;
    }
    // Lower is better; ties keep the lower node index.
    double score = 0;
    const double left = static_cast<double>(free_[i].FreeMilli() - pod.TotalMilli());
    if (policy_ == Policy::kBestFit) score = left;
    if (policy_ == Policy::kWorstFit) score = -left;
    if (policy_ == Policy::kFgd) score = c.delta;
    if (best < 0 || score < best_score - 1e-9) {
      best = i;
      best_choice = c;
      best_score = score;
    }
  }
  if (best < 0) {
    ++failed_;
    last_ = Placement{};
    return Figures(false);
  }
  Take(best, pod, best_choice);
  return Figures(true);
}

Step Packer::Figures(bool placed) const {
  Step s;
  const double total = static_cast<double>(std::max<int64_t>(1, total_milli_));
  s.arrival = arrivals_;
  s.arrived = static_cast<double>(arrived_milli_) / total;
  s.gpu_alloc = static_cast<double>(used_gpus_) / static_cast<double>(std::max<int64_t>(1, total_gpus_));
  s.milli_alloc = static_cast<double>(allocated_milli_) / total;
  s.frag = std::max(0.0, frag_sum_) / total;
  s.failed = failed_;
  s.placed = placed;
  return s;
}

std::vector<int> InflateArrivals(const std::vector<PodRequest>& pods, int64_t capacity_milli, double target,
                                 uint64_t seed) {
  std::vector<int> out;
  if (pods.empty()) return out;
  const double goal = target * static_cast<double>(capacity_milli);
  double requested = 0;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (requested >= goal) return out;
    out.push_back(static_cast<int>(i));
    requested += static_cast<double>(pods[i].TotalMilli());
  }
  bool any_gpu = false;
  for (const auto& p : pods) any_gpu |= p.num_gpu > 0;
  if (!any_gpu) return out;
  Rng rng(seed);
  while (requested < goal) {
    const int i = static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(pods.size()) - 1));
    out.push_back(i);
    requested += static_cast<double>(pods[i].TotalMilli());
  }
  return out;
}

Result<Run> Replay(const Cluster& cluster, const std::vector<PodRequest>& pods, const std::vector<int>& arrivals,
                   const Workload& workload, Policy policy) {
  TIDE_ASSIGN_OR_RETURN(Packer packer, Packer::Create(cluster, workload, policy));
  Run run;
  run.policy = policy;
  run.steps.reserve(arrivals.size());
  for (int i : arrivals) {
    const PodRequest& pod = pods[i];
    if (pod.num_gpu == 0) {
      ++run.cpu_only;
      continue;
    }
    run.steps.push_back(packer.Add(pod));
  }
  return run;
}

const Step& StepAtShare(const Run& run, double share) {
  for (const Step& s : run.steps) {
    if (s.arrived >= share - 1e-12) return s;
  }
  return run.steps.back();
}

}  // namespace tide::place
