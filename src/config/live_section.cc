#include "config/live_section.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "core/strings.h"

namespace tide::config {
namespace {

// The workload-manager backends `live.backend` may name.
constexpr std::string_view kBackends[] = {"slurm", "kubernetes"};
// The signals tide sends before it interrupts a job.
constexpr std::string_view kSignals[] = {"USR1", "USR2", "TERM", "INT", "HUP", "CONT", "URG"};

// Paths in `live:` are relative to the configuration file.
std::string RelativeTo(const std::string& config_path, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
  return (std::filesystem::path(config_path).parent_path() / p).lexically_normal().string();
}

Status CheckSignal(const Field& f, const std::string& signal) {
  if (std::find(std::begin(kSignals), std::end(kSignals), signal) != std::end(kSignals)) return OkStatus();
  return f.Error(StrCat("'", signal, "' is not a signal tide sends; use one of ", StrJoin(kSignals, ", ")));
}

// A rule's `class`, which must name one of the configuration's classes.
Status ReadRuleClass(const Field& rule, const model::ClusterSpec& cluster, std::string* out) {
  auto c = rule.Get("class");
  if (!c) return rule.Error("a rule needs a `class` (a priority class name)");
  TIDE_ASSIGN_OR_RETURN(*out, c->String());
  if (cluster.PriorityClassIndex(*out) < 0) return c->Error(StrCat("no priority class named '", *out, "'"));
  return OkStatus();
}

// live.jobs.classes: every key of a rule but `class` is an attribute to
// match, whatever its name (the backend knows its attributes; the live
// controller checks them at start).
Status ParseClassRules(const Field& cls, const model::ClusterSpec& cluster, std::vector<ClassRule>* out) {
  if (!cls.IsSeq()) return cls.Error("expected a list of rules like {partition: prod, class: high}");
  for (size_t i = 0; i < cls.size(); ++i) {
    Field r = cls.At(i);
    if (!r.IsMap()) {
      return r.Error("expected a mapping of attributes to match and a `class`, e.g. {partition: prod, class: high}");
    }
    ClassRule rule;
    std::set<std::string> seen;
    for (auto it = r.node().begin(); it != r.node().end(); ++it) {
      const std::string key = it->first.as<std::string>();
      if (!seen.insert(key).second) {
        return Field(it->first, StrCat(r.path(), ".", key), &r.file()).Error("given twice; a key may appear once");
      }
      if (key == "class") continue;
      auto value = r.Get(key);
      if (!value) continue;  // an empty value counts as not given
      TIDE_ASSIGN_OR_RETURN(std::string v, value->String());
      rule.match.emplace_back(key, std::move(v));
    }
    TIDE_RETURN_IF_ERROR(ReadRuleClass(r, cluster, &rule.priority_class));
    if (rule.match.empty()) {
      return r.Error("a rule needs at least one attribute to match besides `class`, e.g. {partition: prod, class: high}");
    }
    rule.where = r.Where();
    out->push_back(std::move(rule));
  }
  return OkStatus();
}

// live.slurm.classes, the old spelling: by partition, QOS or both.
Status ParseSlurmClassRules(const Field& cls, const model::ClusterSpec& cluster, std::vector<ClassRule>* out) {
  if (!cls.IsSeq()) return cls.Error("expected a list of {partition, qos, class} rules");
  auto str = [](const Field& x) { return x.String(); };
  for (size_t i = 0; i < cls.size(); ++i) {
    Field r = cls.At(i);
    TIDE_RETURN_IF_ERROR(r.OnlyKeys({"partition", "qos", "class"}));
    std::string partition, qos;
    TIDE_RETURN_IF_ERROR(Opt(r, "partition", &partition, str));
    TIDE_RETURN_IF_ERROR(Opt(r, "qos", &qos, str));
    ClassRule rule;
    TIDE_RETURN_IF_ERROR(ReadRuleClass(r, cluster, &rule.priority_class));
    if (partition.empty() && qos.empty()) return r.Error("a rule needs a partition, a qos or both");
    // An empty one matched any value: it is simply not an attribute to match.
    if (!partition.empty()) rule.match.emplace_back("partition", std::move(partition));
    if (!qos.empty()) rule.match.emplace_back("qos", std::move(qos));
    rule.where = r.Where();
    out->push_back(std::move(rule));
  }
  return OkStatus();
}

Status ParseJobs(const Field& f, const model::ClusterSpec& cluster, JobSettings* o) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"classes", "protect_marker", "checkpoint_signal", "checkpoint_grace"}));
  if (auto cls = f.Get("classes")) TIDE_RETURN_IF_ERROR(ParseClassRules(*cls, cluster, &o->classes));
  TIDE_RETURN_IF_ERROR(Opt(f, "protect_marker", &o->protect_marker, [](const Field& x) { return x.String(); }));
  if (auto sig = f.Get("checkpoint_signal")) {
    TIDE_ASSIGN_OR_RETURN(o->checkpoint_signal, sig->String());
    TIDE_RETURN_IF_ERROR(CheckSignal(*sig, o->checkpoint_signal));
  }
  TIDE_RETURN_IF_ERROR(Opt(f, "checkpoint_grace", &o->checkpoint_grace, [](const Field& x) { return x.Dur(); }));
  return OkStatus();
}

// Notes with the position they are about, to be put in the file's order.
using PlacedNotes = std::vector<std::pair<std::pair<int, int>, std::string>>;

// Whether `slurm` gives `old_key`, a setting now at live.jobs.`new_key`.
// If so, it is an error when `jobs` gives that too; otherwise a note says
// where it went, and the caller reads it there.
Result<bool> Moved(const Field& slurm, const std::optional<Field>& jobs, std::string_view old_key,
                   std::string_view new_key, PlacedNotes* notes) {
  auto key = slurm.KeyOf(old_key);
  if (!key) return false;
  const std::string new_path = StrCat("live.jobs.", new_key);
  if (auto both = jobs ? jobs->KeyOf(new_key) : std::nullopt) {
    return key->Error(StrCat("the old name of ", new_path, ", which is given too (line ", both->node().Mark().line + 1,
                             "); give only ", new_path));
  }
  const YAML::Mark m = key->node().Mark();
  notes->push_back({{m.line, m.column},
                    StrCat(key->Where(), " is now ", new_path, "; read as such (move it to silence this note)")});
  return true;
}

Status ParseSlurm(const Field& s, const std::string& config_path, const model::ClusterSpec& cluster,
                  const std::optional<Field>& jobs_field, SlurmSettings* o, JobSettings* jobs,
                  PlacedNotes* notes) {
  TIDE_RETURN_IF_ERROR(s.OnlyKeys({"conf", "bin_dir", "timeout", "pools", "classes", "protect_comment",
                                   "checkpoint_signal", "checkpoint_grace"}));
  auto str = [](const Field& x) { return x.String(); };
  auto dur = [](const Field& x) { return x.Dur(); };
  TIDE_RETURN_IF_ERROR(Opt(s, "conf", &o->conf, str));
  o->conf = RelativeTo(config_path, o->conf);
  TIDE_RETURN_IF_ERROR(Opt(s, "bin_dir", &o->bin_dir, str));
  TIDE_RETURN_IF_ERROR(Opt(s, "timeout", &o->timeout, dur));
  TIDE_ASSIGN_OR_RETURN(bool protect, Moved(s, jobs_field, "protect_comment", "protect_marker", notes));
  if (protect) TIDE_RETURN_IF_ERROR(Opt(s, "protect_comment", &jobs->protect_marker, str));
  TIDE_ASSIGN_OR_RETURN(bool signal, Moved(s, jobs_field, "checkpoint_signal", "checkpoint_signal", notes));
  if (signal) TIDE_RETURN_IF_ERROR(Opt(s, "checkpoint_signal", &jobs->checkpoint_signal, str));
  TIDE_ASSIGN_OR_RETURN(bool grace, Moved(s, jobs_field, "checkpoint_grace", "checkpoint_grace", notes));
  if (grace) TIDE_RETURN_IF_ERROR(Opt(s, "checkpoint_grace", &jobs->checkpoint_grace, dur));
  if (signal) TIDE_RETURN_IF_ERROR(CheckSignal(*s.Get("checkpoint_signal"), jobs->checkpoint_signal));
  auto pools = s.Get("pools");
  if (!pools || !pools->node().IsMap()) {
    return (pools ? *pools : s).Error("give each pool's Slurm nodes, e.g. `pools: {gpu-spot: \"gpu[1-8]\"}`");
  }
  for (auto it = pools->node().begin(); it != pools->node().end(); ++it) {
    const std::string name = it->first.as<std::string>();
    Field v(it->second, StrCat(pools->path(), ".", name), &config_path);
    if (cluster.PoolIndex(name) < 0) {
      std::vector<std::string> names;
      for (const auto& p : cluster.pools) names.push_back(p.name);
      return v.Error(StrCat("no pool named '", name, "' (pools: ", StrJoin(names, ", "), ")"));
    }
    TIDE_ASSIGN_OR_RETURN(std::string nodes, v.String());
    o->pool_nodes.emplace_back(name, nodes);
  }
  for (const auto& p : cluster.pools) {
    bool found = false;
    for (const auto& [name, nodes] : o->pool_nodes) found |= name == p.name;
    if (!found) return pools->Error(StrCat("pool '", p.name, "' has no Slurm nodes; add `", p.name, ": \"node[1-N]\"`"));
  }
  TIDE_ASSIGN_OR_RETURN(bool classes, Moved(s, jobs_field, "classes", "classes", notes));
  if (classes) TIDE_RETURN_IF_ERROR(ParseSlurmClassRules(*s.Get("classes"), cluster, &jobs->classes));
  return OkStatus();
}

// Kubernetes names (docs/kubernetes.md): a DNS label (a namespace), a DNS
// subdomain (a label prefix) and a qualified name (a taint key).
bool DnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

bool DnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (std::string_view part : Split(s, '.')) {
    if (!DnsLabel(part)) return false;
  }
  return true;
}

bool QualifiedName(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash != std::string_view::npos && !DnsSubdomain(s.substr(0, slash))) return false;
  std::string_view name = slash == std::string_view::npos ? s : s.substr(slash + 1);
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (name.empty() || name.size() > 63 || !alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

Status ParseLeaderElection(const Field& f, LeaderElectionSettings* o) {
  if (!f.IsMap()) return f.Error("expected a map, e.g. {lease: tide, namespace: tide-system}");
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"lease", "namespace", "identity", "duration", "renew_deadline", "retry"}));
  auto str = [](const Field& x) { return x.String(); };
  auto dur = [](const Field& x) { return x.Dur(); };
  TIDE_RETURN_IF_ERROR(Opt(f, "lease", &o->lease, str));
  if (auto l = f.Get("lease"); l && !o->lease.empty() && !DnsSubdomain(o->lease)) {
    return l->Error(StrCat("'", Shown(o->lease), "' is not a Lease name (lowercase letters, digits, '-' and '.')"));
  }
  TIDE_RETURN_IF_ERROR(Opt(f, "namespace", &o->namespace_name, str));
  if (auto n = f.Get("namespace"); n && !DnsLabel(o->namespace_name)) {
    return n->Error(StrCat("'", Shown(o->namespace_name), "' is not a namespace name (lowercase letters, digits and '-')"));
  }
  TIDE_RETURN_IF_ERROR(Opt(f, "identity", &o->identity, str));
  TIDE_RETURN_IF_ERROR(Opt(f, "duration", &o->duration, dur));
  TIDE_RETURN_IF_ERROR(Opt(f, "renew_deadline", &o->renew_deadline, dur));
  TIDE_RETURN_IF_ERROR(Opt(f, "retry", &o->retry, dur));
  if (o->retry < Seconds(1)) return f.Get("retry")->Error("must be at least 1s");
  // The order client-go insists on too: a holder gives up (renew deadline)
  // before anyone may take its Lease (duration), and tries more than once
  // before it gives up.
  if (o->renew_deadline >= o->duration) {
    return (f.Get("renew_deadline") ? *f.Get("renew_deadline") : f)
        .Error(StrCat("must be shorter than duration (", FormatDuration(o->duration),
                      "), so that a holder stops acting before another replica may take the Lease"));
  }
  if (o->retry >= o->renew_deadline) {
    return (f.Get("retry") ? *f.Get("retry") : f)
        .Error(StrCat("must be shorter than renew_deadline (", FormatDuration(o->renew_deadline), ")"));
  }
  return OkStatus();
}

Status ParseKubernetes(const Field& k, const std::string& config_path, KubernetesSettings* o) {
  TIDE_RETURN_IF_ERROR(k.OnlyKeys(
      {"kubeconfig", "context", "namespaces", "scheduler_name", "label_prefix", "notice_taints", "timeout", "mode",
       "leader_election"}));
  auto str = [](const Field& x) { return x.String(); };
  TIDE_RETURN_IF_ERROR(Opt(k, "kubeconfig", &o->kubeconfig, str));
  o->kubeconfig = RelativeTo(config_path, o->kubeconfig);
  TIDE_RETURN_IF_ERROR(Opt(k, "context", &o->context, str));
  if (auto ns = k.Get("namespaces")) {
    if (!ns->IsSeq()) return ns->Error("expected a list of namespaces, e.g. [training, research]");
    for (size_t i = 0; i < ns->size(); ++i) {
      Field n = ns->At(i);
      TIDE_ASSIGN_OR_RETURN(std::string name, n.String());
      if (!DnsLabel(name)) return n.Error(StrCat("'", name, "' is not a namespace name (lowercase letters, digits and '-')"));
      o->namespaces.push_back(std::move(name));
    }
  }
  TIDE_RETURN_IF_ERROR(Opt(k, "scheduler_name", &o->scheduler_name, str));
  if (auto s = k.Get("scheduler_name"); s && !DnsSubdomain(o->scheduler_name)) {
    return s->Error(StrCat("'", o->scheduler_name, "' is not a scheduler name (lowercase letters, digits, '-' and '.')"));
  }
  TIDE_RETURN_IF_ERROR(Opt(k, "label_prefix", &o->label_prefix, str));
  if (auto p = k.Get("label_prefix"); p && !DnsSubdomain(o->label_prefix)) {
    return p->Error(StrCat("'", o->label_prefix, "' is not a label prefix: a DNS name such as tide.example.com"));
  }
  if (auto t = k.Get("notice_taints")) {
    if (!t->IsSeq()) return t->Error("expected a list of taint keys, e.g. [aws-node-termination-handler/spot-itn]");
    o->notice_taints.clear();
    for (size_t i = 0; i < t->size(); ++i) {
      Field n = t->At(i);
      TIDE_ASSIGN_OR_RETURN(std::string key, n.String());
      if (!QualifiedName(key)) return n.Error(StrCat("'", key, "' is not a taint key (prefix/name, e.g. example.com/spot-notice)"));
      o->notice_taints.push_back(std::move(key));
    }
  }
  TIDE_RETURN_IF_ERROR(Opt(k, "timeout", &o->timeout, [](const Field& x) { return x.Dur(); }));
  if (auto t = k.Get("timeout"); t && o->timeout < Seconds(1)) return t->Error("must be at least 1s");
  TIDE_RETURN_IF_ERROR(Opt(k, "mode", &o->mode, str));
  if (o->mode != "schedule" && o->mode != "autoscale") {
    return k.Get("mode")->Error(StrCat("unknown mode '", Shown(o->mode),
                                       "'; expected schedule (tide places its pods) or autoscale (another scheduler "
                                       "places them, tide buys and releases nodes)"));
  }
  if (auto le = k.Get("leader_election")) TIDE_RETURN_IF_ERROR(ParseLeaderElection(*le, &o->leader_election));
  return OkStatus();
}

Status ParseProvider(const Field& p, const std::string& config_path, ProviderSettings* o) {
  TIDE_RETURN_IF_ERROR(p.OnlyKeys(
      {"kind", "state_dir", "slurmd", "slurm_conf", "create", "delete", "list", "interruptions", "timeout"}));
  auto str = [](const Field& x) { return x.String(); };
  TIDE_RETURN_IF_ERROR(Opt(p, "kind", &o->kind, str));
  if (o->kind != "local" && o->kind != "exec" && o->kind != "kwok") {
    return p.Get("kind")->Error(StrCat("unknown provider '", o->kind, "'; expected local, exec or kwok"));
  }
  TIDE_RETURN_IF_ERROR(Opt(p, "state_dir", &o->state_dir, str));
  o->state_dir = RelativeTo(config_path, o->state_dir);
  TIDE_RETURN_IF_ERROR(Opt(p, "slurmd", &o->slurmd, str));
  if (auto conf = p.Get("slurm_conf")) {
    TIDE_ASSIGN_OR_RETURN(o->slurm_conf, conf->String());
    o->slurm_conf = RelativeTo(config_path, o->slurm_conf);
  }
  TIDE_RETURN_IF_ERROR(Opt(p, "timeout", &o->timeout, [](const Field& x) { return x.Dur(); }));
  auto argv = [&](std::string_view key, std::vector<std::string>* out) -> Status {
    auto a = p.Get(key);
    if (!a) return OkStatus();
    if (!a->IsSeq() || a->size() == 0) {
      return a->Error("expected a command as a list of arguments, e.g. [/usr/local/bin/create-node, --json]");
    }
    TIDE_ASSIGN_OR_RETURN(*out, a->StringList());
    return OkStatus();
  };
  TIDE_RETURN_IF_ERROR(argv("create", &o->create));
  TIDE_RETURN_IF_ERROR(argv("delete", &o->destroy));
  TIDE_RETURN_IF_ERROR(argv("list", &o->list));
  TIDE_RETURN_IF_ERROR(argv("interruptions", &o->interruptions));
  if (o->kind == "exec") {
    for (auto [key, v] : {std::pair{"create", &o->create}, {"delete", &o->destroy}, {"list", &o->list}}) {
      if (v->empty()) return p.Error(StrCat("the exec provider needs a `", key, "` command"));
    }
  }
  return OkStatus();
}

}  // namespace

Status ParseLive(const Field& f, const std::string& config_path, const model::ClusterSpec& cluster, LiveSettings* l,
                 std::vector<std::string>* notes) {
  TIDE_RETURN_IF_ERROR(
      f.OnlyKeys({"state", "loop_interval", "backend", "jobs", "slurm", "kubernetes", "provider", "metrics", "http"}));
  l->present = true;
  auto str = [](const Field& x) { return x.String(); };
  TIDE_RETURN_IF_ERROR(Opt(f, "state", &l->state, str));
  l->state = RelativeTo(config_path, l->state);
  TIDE_RETURN_IF_ERROR(Opt(f, "loop_interval", &l->loop_interval, [](const Field& x) { return x.Dur(); }));
  if (auto li = f.Get("loop_interval"); li && l->loop_interval < Seconds(1)) return li->Error("must be at least 1s");
  const std::optional<Field> slurm = f.Get("slurm"), kube = f.Get("kubernetes");
  if (auto b = f.Get("backend")) {
    TIDE_ASSIGN_OR_RETURN(l->backend, b->String());
    if (std::find(std::begin(kBackends), std::end(kBackends), l->backend) == std::end(kBackends)) {
      return b->Error(StrCat("unknown backend '", l->backend, "'; expected one of: ", StrJoin(kBackends, ", ")));
    }
  } else if (kube && slurm) {
    return f.Error("gives both `slurm:` and `kubernetes:`; say which to use with `backend: slurm` or `backend: kubernetes`");
  } else if (kube) {
    l->backend = "kubernetes";
  }
  // The other backend's section is a mistake, not something to ignore.
  if (l->backend == "kubernetes" && slurm) {
    return f.KeyOf("slurm")->Error("is for `backend: slurm`; this file says `backend: kubernetes`");
  }
  if (l->backend == "slurm" && kube) {
    return f.KeyOf("kubernetes")->Error("is for `backend: kubernetes`; this file uses Slurm (give `backend: kubernetes`)");
  }
  const std::optional<Field> jobs = f.Get("jobs");
  if (jobs) TIDE_RETURN_IF_ERROR(ParseJobs(*jobs, cluster, &l->jobs));
  if (l->backend == "kubernetes") {
    // Every setting has a default: inside the cluster `kubernetes: {}` will do.
    if (kube) TIDE_RETURN_IF_ERROR(ParseKubernetes(*kube, config_path, &l->kubernetes));
  } else if (slurm) {
    PlacedNotes moved;
    TIDE_RETURN_IF_ERROR(ParseSlurm(*slurm, config_path, cluster, jobs, &l->slurm, &l->jobs, &moved));
    std::sort(moved.begin(), moved.end());
    for (auto& [at, note] : moved) notes->push_back(std::move(note));
  } else {
    return f.Error("`live:` needs a `slurm:` section with each pool's nodes (or `kubernetes:` for Kubernetes)");
  }
  bool provider_conf = false;
  if (auto p = f.Get("provider")) {
    TIDE_RETURN_IF_ERROR(ParseProvider(*p, config_path, &l->provider));
    provider_conf = p->Get("slurm_conf").has_value();
  }
  // The local provider's slurmd reads the cluster's slurm.conf unless told otherwise.
  if (!provider_conf) l->provider.slurm_conf = l->slurm.conf;
  if (l->provider.state_dir.empty()) {
    l->provider.state_dir = (std::filesystem::path(l->state).parent_path() / "local-provider").string();
  }
  if (auto m = f.Get("metrics")) {
    TIDE_RETURN_IF_ERROR(m->OnlyKeys({"prometheus", "metric", "node_label", "job_label", "pod_label", "namespace_label", "scale"}));
    MetricsSettings& o = l->metrics;
    TIDE_RETURN_IF_ERROR(Opt(*m, "prometheus", &o.prometheus, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "metric", &o.metric, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "node_label", &o.node_label, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "job_label", &o.job_label, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "pod_label", &o.pod_label, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "namespace_label", &o.namespace_label, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "scale", &o.scale, [](const Field& x) { return x.Number(1e-9, 1e9); }));
    if (!o.prometheus.empty() && o.prometheus.rfind("http://", 0) != 0) {
      return m->Get("prometheus")->Error("expected an http:// URL, e.g. http://127.0.0.1:9090");
    }
    // The URL is logged at start and in every error about Prometheus, so a
    // password in it (user:password@host) would be too. tide sends none.
    if (o.prometheus.substr(0, o.prometheus.find('/', 7)).find('@') != std::string::npos) {
      return m->Get("prometheus")->Error(
          "holds credentials (user:password@), which tide does not send and would log; put an authenticating "
          "proxy on this machine in between");
    }
  }
  if (auto h = f.Get("http")) {
    TIDE_RETURN_IF_ERROR(h->OnlyKeys({"address", "port", "token_file"}));
    HttpSettings& o = l->http;
    TIDE_RETURN_IF_ERROR(Opt(*h, "address", &o.address, str));
    if (auto port = h->Get("port")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, port->Int(0, 65535));
      o.port = static_cast<int>(v);
    }
    TIDE_RETURN_IF_ERROR(Opt(*h, "token_file", &o.token_file, str));
    o.token_file = RelativeTo(config_path, o.token_file);
  }
  return OkStatus();
}

}  // namespace tide::config
