#include "trace/openb.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/strings.h"
#include "trace/formats.h"

namespace tide::trace {
namespace {

constexpr int64_t kMaxAmount = int64_t{1} << 40;  // CPU milli or MiB beyond any machine

// An integer field within [lo, hi], or an error naming file, line and field.
Result<int64_t> IntIn(const CsvReader& csv, std::string_view field, std::string_view value, int64_t lo, int64_t hi) {
  TIDE_ASSIGN_OR_RETURN(int64_t v, csv.Int(field, value));
  if (v < lo || v > hi) return csv.FieldError(field, StrCat("must be between ", lo, " and ", hi, ", got ", v));
  return v;
}

}  // namespace

Result<OpenbQos> ParseOpenbQos(std::string_view text) {
  if (text == "LS") return OpenbQos::kLatencySensitive;
  if (text == "Guaranteed") return OpenbQos::kGuaranteed;
  if (text == "Burstable" || text.empty()) return OpenbQos::kBurstable;
  if (text == "BE") return OpenbQos::kBestEffort;
  return absl::InvalidArgumentError(StrCat("expected LS, Guaranteed, Burstable or BE, got '", text, "'"));
}

QosClass MapOpenbQos(OpenbQos qos, const model::ClusterSpec& spec) {
  const auto& classes = spec.priority_classes;
  int highest = spec.default_priority_class, lowest = spec.default_priority_class;
  for (size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].value > classes[highest].value) highest = static_cast<int>(i);
    if (classes[i].value < classes[lowest].value) lowest = static_cast<int>(i);
  }
  QosClass out;
  switch (qos) {
    case OpenbQos::kLatencySensitive:
    case OpenbQos::kGuaranteed:
      out.priority_class = highest;
      break;
    case OpenbQos::kBurstable:
      out.priority_class = spec.default_priority_class;
      break;
    case OpenbQos::kBestEffort:
      out.priority_class = lowest;
      break;
  }
  out.preemptible = qos == OpenbQos::kBestEffort || classes[out.priority_class].preemptible;
  return out;
}

OpenbPodReader::OpenbPodReader(std::unique_ptr<CsvReader> csv)
    : csv_(std::move(csv)),
      name_(csv_->Column("name")),
      cpu_(csv_->Column("cpu_milli")),
      memory_(csv_->Column("memory_mib")),
      num_gpu_(csv_->Column("num_gpu")),
      gpu_milli_(csv_->Column("gpu_milli")),
      spec_(csv_->Column("gpu_spec")),
      qos_(csv_->Column("qos")),
      creation_(csv_->Column("creation_time")),
      deletion_(csv_->Column("deletion_time")),
      scheduled_(csv_->Column("scheduled_time")) {}

Result<std::unique_ptr<OpenbPodReader>> OpenbPodReader::Open(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(auto csv, CsvReader::Open(path));
  TIDE_RETURN_IF_ERROR(csv->ReadHeader());
  return FromCsv(std::move(csv));
}

Result<std::unique_ptr<OpenbPodReader>> OpenbPodReader::FromCsv(std::unique_ptr<CsvReader> csv) {
  std::unique_ptr<OpenbPodReader> r(new OpenbPodReader(std::move(csv)));
  for (auto [c, name] : {std::pair{r->name_, "name"}, {r->cpu_, "cpu_milli"}, {r->memory_, "memory_mib"},
                         {r->num_gpu_, "num_gpu"}, {r->gpu_milli_, "gpu_milli"}}) {
    if (c < 0) return r->csv_->LineError(StrCat("openb pod list lacks column '", name, "'"));
  }
  return r;
}

Result<std::optional<int64_t>> OpenbPodReader::Time(std::string_view field, int column,
                                                    const std::vector<std::string_view>& row) const {
  if (column < 0 || StripWhitespace(row[column]).empty()) return std::optional<int64_t>();
  TIDE_ASSIGN_OR_RETURN(int64_t t, csv_->Int(field, row[column]));
  if (t < 0 || t > kMaxSubmitSeconds) {
    return csv_->FieldError(field, StrCat("must be between 0 and ", kMaxSubmitSeconds, ", got ", t));
  }
  return std::optional<int64_t>(t);
}

Result<std::optional<OpenbPod>> OpenbPodReader::Next() {
  TIDE_ASSIGN_OR_RETURN(auto row, csv_->Next());
  if (!row) return std::optional<OpenbPod>();
  const auto& f = *row;
  OpenbPod pod;
  pod.name = std::string(f[name_]);
  if (pod.name.empty()) pod.name = StrCat("line", csv_->line());  // as the native reader names a job
  TIDE_ASSIGN_OR_RETURN(pod.cpu_milli, IntIn(*csv_, "cpu_milli", f[cpu_], 0, kMaxAmount));
  TIDE_ASSIGN_OR_RETURN(pod.memory_mib, IntIn(*csv_, "memory_mib", f[memory_], 0, kMaxAmount));
  TIDE_ASSIGN_OR_RETURN(int64_t num_gpu, IntIn(*csv_, "num_gpu", f[num_gpu_], 0, 1024));
  TIDE_ASSIGN_OR_RETURN(int64_t gpu_milli, csv_->Int("gpu_milli", f[gpu_milli_]));
  if (num_gpu == 0 && gpu_milli != 0) {
    return csv_->FieldError("gpu_milli", StrCat("a pod without GPUs must have 0, got ", gpu_milli));
  }
  if (num_gpu == 1 && (gpu_milli < 1 || gpu_milli > 1000)) {
    return csv_->FieldError("gpu_milli", StrCat("a 1-GPU pod asks for 1 to 1000, got ", gpu_milli));
  }
  if (num_gpu > 1 && gpu_milli != 1000) {
    return csv_->FieldError("gpu_milli", StrCat("a pod of several GPUs takes them whole (1000), got ", gpu_milli));
  }
  pod.num_gpu = static_cast<int>(num_gpu);
  pod.gpu_milli = static_cast<int>(gpu_milli);
  if (spec_ >= 0) {
    for (std::string_view m : Split(f[spec_], '|', /*skip_empty=*/true)) {
      m = StripWhitespace(m);
      if (std::find(pod.gpu_models.begin(), pod.gpu_models.end(), m) == pod.gpu_models.end()) {
        pod.gpu_models.emplace_back(m);
      }
    }
  }
  if (qos_ >= 0) {
    auto qos = ParseOpenbQos(StripWhitespace(f[qos_]));
    if (!qos.ok()) return csv_->FieldError("qos", std::string(qos.status().message()));
    pod.qos = *qos;
  }
  TIDE_ASSIGN_OR_RETURN(pod.creation, Time("creation_time", creation_, f));
  TIDE_ASSIGN_OR_RETURN(pod.deletion, Time("deletion_time", deletion_, f));
  TIDE_ASSIGN_OR_RETURN(pod.scheduled, Time("scheduled_time", scheduled_, f));
  if (pod.creation && pod.deletion && *pod.deletion < *pod.creation) {
    return csv_->FieldError("deletion_time",
                            StrCat("is before creation_time (", *pod.deletion, " < ", *pod.creation, ")"));
  }
  if (pod.creation && pod.scheduled && *pod.scheduled < *pod.creation) {
    return csv_->FieldError("scheduled_time",
                            StrCat("is before creation_time (", *pod.scheduled, " < ", *pod.creation, ")"));
  }
  if (pod.scheduled && pod.deletion && *pod.deletion < *pod.scheduled) {
    return csv_->FieldError("deletion_time",
                            StrCat("is before scheduled_time (", *pod.deletion, " < ", *pod.scheduled, ")"));
  }
  // The same bound on a run as every format's (found by fuzzing: a pod that
  // ran for decades could not be written back as a native trace).
  if (pod.scheduled && pod.deletion && *pod.deletion - *pod.scheduled > kMaxRuntimeSeconds) {
    return csv_->FieldError("deletion_time", StrCat("more than ", kMaxRuntimeSeconds, " seconds after scheduled_time"));
  }
  return std::optional<OpenbPod>(std::move(pod));
}

Result<std::vector<OpenbPod>> ReadOpenbPods(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(auto reader, OpenbPodReader::Open(path));
  std::vector<OpenbPod> pods;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(auto pod, reader->Next());
    if (!pod) break;
    pods.push_back(std::move(*pod));
  }
  return pods;
}

int OpenbSliceUnits(int gpu_milli, const model::MigConfig& mig, std::string* profile) {
  if (gpu_milli >= 1000 || gpu_milli <= 0) return 0;
  const int per_gpu = std::max(1, mig.units_per_gpu);
  int units = std::max(1, (gpu_milli * per_gpu + 999) / 1000);
  std::string name = StrCat(units, "g");
  if (mig.enabled()) {
    int best = 0;
    for (const auto& p : mig.profiles) {
      const int u = model::SliceUnits(p);
      if (u >= units && (best == 0 || u < best)) {
        best = u;
        name = p;
      }
    }
    if (best == 0) name = StrCat(per_gpu, "g");
    units = best > 0 ? best : per_gpu;
  }
  if (profile != nullptr) *profile = name;
  return units;
}

namespace {

// The MIG layout of the configuration's first MIG pool (a plain 7-unit GPU
// when none slices).
model::MigConfig FirstMig(const model::ClusterSpec& spec) {
  for (const auto& p : spec.pools) {
    if (p.mig.enabled()) return p.mig;
  }
  return model::MigConfig{};
}

// Pods -> JobSpecs for the simulator. Rows must be in creation order; CPU-only
// pods and pods that were never scheduled are skipped and counted.
class OpenbTraceReader final : public TraceReader {
 public:
  OpenbTraceReader(std::unique_ptr<OpenbPodReader> pods, TraceOptions options)
      : pods_(std::move(pods)), options_(options), mig_(FirstMig(*options_.spec)) {}

  Status CheckHeader() const {
    if (pods_->has_times()) return OkStatus();
    return pods_->csv().LineError(
        "this openb pod list has no creation_time, deletion_time and scheduled_time columns, so it cannot be "
        "simulated over time; use it with `tide place`, which needs no times");
  }

  Result<std::optional<model::JobSpec>> Next() override {
    while (true) {
      TIDE_ASSIGN_OR_RETURN(auto pod, pods_->Next());
      if (!pod) return std::optional<model::JobSpec>();
      const CsvReader& csv = pods_->csv();
      if (!pod->creation) return csv.FieldError("creation_time", "is empty; the simulator needs it");
      if (!pod->deletion) return csv.FieldError("deletion_time", "is empty; the simulator needs it");
      if (*pod->creation < last_) {
        return csv.FieldError("creation_time",
                              StrCat("rows must be in creation order (", *pod->creation, " < ", last_,
                                     "); sort the file first: (head -1 F; tail -n +2 F | sort -t, -k9,9n)"));
      }
      last_ = *pod->creation;
      if (pod->num_gpu == 0) {
        ++cpu_only_;
        continue;
      }
      if (!pod->scheduled) {
        ++never_scheduled_;
        continue;
      }
      return std::optional<model::JobSpec>(ToJob(*pod));
    }
  }

  Timestamp start() const override { return options_.start; }
  std::string Describe() const override { return StrCat("openb:", pods_->csv().name()); }
  std::string Notes() const override {
    return StrCat("skipped ", cpu_only_, " CPU-only pods (num_gpu 0) and ", never_scheduled_,
                  " pods never scheduled (empty scheduled_time)");
  }

 private:
  model::JobSpec ToJob(const OpenbPod& pod) const {
    model::JobSpec job = NewJob(options_);
    job.name = pod.name;
    job.submit = options_.start + Seconds(*pod.creation);
    job.runtime = Seconds(*pod.deletion - *pod.scheduled);
    if (pod.num_gpu == 1 && pod.gpu_milli < 1000) {
      job.slice_units = OpenbSliceUnits(pod.gpu_milli, mig_, &job.slice);
    } else {
      SplitGang(pod.num_gpu, options_.gpus_per_node, &job.workers, &job.gpus_per_worker);
    }
    job.gpu_models = pod.gpu_models;
    const QosClass cls = MapOpenbQos(pod.qos, *options_.spec);
    job.priority_class = cls.priority_class;
    job.preemptible = cls.preemptible;
    job.is_protected = options_.spec->priority_classes[cls.priority_class].protect;
    return job;
  }

  std::unique_ptr<OpenbPodReader> pods_;
  TraceOptions options_;
  model::MigConfig mig_;
  int64_t last_ = 0;
  int64_t cpu_only_ = 0;
  int64_t never_scheduled_ = 0;
};

}  // namespace

Result<std::unique_ptr<TraceReader>> OpenOpenb(std::unique_ptr<CsvReader> csv, const TraceOptions& options) {
  TIDE_ASSIGN_OR_RETURN(auto pods, OpenbPodReader::FromCsv(std::move(csv)));
  auto r = std::make_unique<OpenbTraceReader>(std::move(pods), options);
  TIDE_RETURN_IF_ERROR(r->CheckHeader());
  return std::unique_ptr<TraceReader>(std::move(r));
}

Result<std::vector<OpenbNode>> ReadOpenbNodes(CsvReader* csv) {
  const int sn = csv->Column("sn"), cpu = csv->Column("cpu_milli"), memory = csv->Column("memory_mib"),
            gpu = csv->Column("gpu"), model = csv->Column("model");
  for (auto [c, name] : {std::pair{sn, "sn"}, {cpu, "cpu_milli"}, {memory, "memory_mib"}, {gpu, "gpu"},
                         {model, "model"}}) {
    if (c < 0) return csv->LineError(StrCat("openb node list lacks column '", name, "'"));
  }
  std::vector<OpenbNode> nodes;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(auto row, csv->Next());
    if (!row) break;
    const auto& f = *row;
    OpenbNode n;
    n.name = std::string(f[sn]);
    TIDE_ASSIGN_OR_RETURN(n.cpu_milli, IntIn(*csv, "cpu_milli", f[cpu], 1, kMaxAmount));
    TIDE_ASSIGN_OR_RETURN(n.memory_mib, IntIn(*csv, "memory_mib", f[memory], 1, kMaxAmount));
    TIDE_ASSIGN_OR_RETURN(int64_t gpus, IntIn(*csv, "gpu", f[gpu], 0, 64));
    n.model = std::string(StripWhitespace(f[model]));
    n.gpus = static_cast<int>(gpus);
    if (n.gpus > 0 && n.model.empty()) return csv->FieldError("model", "is empty on a node with GPUs");
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Result<std::vector<OpenbNode>> ReadOpenbNodes(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(auto csv, CsvReader::Open(path));
  TIDE_RETURN_IF_ERROR(csv->ReadHeader());
  return ReadOpenbNodes(csv.get());
}

std::vector<OpenbNodeGroup> GroupOpenbNodes(const std::vector<OpenbNode>& nodes, int* cpu_only) {
  std::map<std::tuple<std::string, int, int64_t, int64_t>, int> counts;
  int cpu = 0;
  for (const OpenbNode& n : nodes) {
    if (n.gpus == 0) {
      ++cpu;
      continue;
    }
    ++counts[{n.model, n.gpus, n.cpu_milli, n.memory_mib}];
  }
  if (cpu_only != nullptr) *cpu_only = cpu;
  std::map<std::pair<std::string, int>, int> shapes;
  for (const auto& [key, count] : counts) ++shapes[{std::get<0>(key), std::get<1>(key)}];
  std::vector<OpenbNodeGroup> groups;
  for (const auto& [key, count] : counts) {
    OpenbNodeGroup g{std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), count, ""};
    g.pool = StrCat(ToLower(g.model), "x", g.gpus);
    if (shapes[{g.model, g.gpus}] > 1) StrAppend(&g.pool, "-", g.cpu_milli / 1000, "c", g.memory_mib / 1024, "g");
    groups.push_back(std::move(g));
  }
  return groups;
}

double OpenbGpuPricePerHour(std::string_view model) {
  // CNY per GPU-hour, reserved: rough 2023 cloud list prices for the named
  // models with the reserved discount; G2 and G3 are anonymised in the trace
  // and priced as V100-class and A100-class parts.
  static constexpr std::pair<std::string_view, double> kPrices[] = {
      {"T4", 4.0}, {"P100", 6.0}, {"A10", 7.0}, {"V100M16", 10.0}, {"V100M32", 12.0}, {"G2", 10.0}, {"G3", 18.0}};
  for (const auto& [name, price] : kPrices) {
    if (name == model) return price;
  }
  return 10.0;
}

std::string OpenbClusterYaml(const std::vector<OpenbNodeGroup>& groups, std::string_view source) {
  std::string y;
  int nodes = 0, gpus = 0;
  for (const auto& g : groups) {
    nodes += g.count;
    gpus += g.count * g.gpus;
  }
  StrAppend(&y, "# The Alibaba openb 2023 GPU cluster as tide pools: one reserved pool per node shape\n",
            "# (GPU model, GPUs, CPU, memory), min = max = the node count. ", nodes, " nodes, ", gpus, " GPUs.\n",
            "# Generated by `tide trace openb-cluster --nodes ", source, "`.\n",
            "# Prices are assumptions (CNY per node-hour, reserved), not from the trace:\n",
            "# see examples/openb/README.md.\n", "currency: CNY\n\ninstance_types:\n");
  for (const auto& g : groups) {
    StrAppend(&y, "  - {name: ", g.pool, ", gpus: ", g.gpus, ", gpu_model: ", g.model, ", cpus: ", g.cpu_milli / 1000,
              ", memory_gib: ", g.memory_mib / 1024, "}\n");
  }
  StrAppend(&y, "\npools:\n");
  for (const auto& g : groups) {
    StrAppend(&y, "  - {name: ", g.pool, ", instance_type: ", g.pool, ", tier: reserved, price_per_hour: ",
              fmt::format("{:.2f}", OpenbGpuPricePerHour(g.model) * g.gpus), ", nodes: ", g.count, "}\n");
  }
  StrAppend(&y,
            "\n# The trace's QoS maps by value: LS and Guaranteed -> high, Burstable -> normal (the default),\n"
            "# BE -> low (preemptible).\n"
            "priority_classes:\n"
            "  - {name: high, value: 100}\n"
            "  - {name: normal, value: 50}\n"
            "  - {name: low, value: 10, preemptible: true}\n"
            "default_priority_class: normal\n"
            "\n# A fixed cluster: no pool can grow, so only the policies that work within it.\n"
            "policies:\n"
            "  compare: [reactive, tide]\n");
  return y;
}

}  // namespace tide::trace
