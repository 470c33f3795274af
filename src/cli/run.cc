// `tide run`: the live controller over a workload manager (docs/live.md), and
// `tide local interrupt`, which injects a spot interruption into the local
// provider of a running `tide run`.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <thread>

#include "autoscale/policy.h"
#include "backends/factory.h"
#include "cli/commands.h"
#include "config/config.h"
#include "controller/controller.h"
#include "controller/http_server.h"
#include "controller/live_report.h"
#include "controller/store.h"
#include "controller/token_file.h"
#include "core/process.h"
#include "core/strings.h"
#include "metrics/prometheus.h"
#include "nlohmann/json.hpp"
#include "providers/exec/exec_provider.h"
#include "providers/kwok/kwok_config.h"
#include "providers/local/local_provider.h"

namespace tide::cli {
namespace {

std::atomic<int> g_signal{0};  // the one signal-handler flag; set by SIGTERM/SIGINT
void OnSignal(int sig) { g_signal = sig; }

// A change the manager reports (a watch event) runs the loop at once, but
// never sooner than this after the last loop ended: a burst of events is
// one loop, not one each.
constexpr auto kMinLoopGap = std::chrono::milliseconds(250);
// How often the wait between loops looks for a change, a command or a signal.
constexpr auto kWaitTick = std::chrono::milliseconds(20);

// What a replica that does not lead saw on its last look (leader election).
struct FollowerView {
  bool ok = false;
  std::string error;
  size_t jobs = 0, waiting = 0, nodes = 0;
  Timestamp at{};
};

// The HTTP server's view of the controller. Commands that change state are
// queued for the loop's thread. With leader election, a replica that does
// not lead serves read-only status and refuses commands.
class Source final : public controller::StatusSource {
 public:
  Source(controller::Controller* c, const config::Config* cfg, const RealClock* clock,
         controller::LiveReportSource* report, backends::Leadership* leadership,
         std::function<std::string()> backend_metrics)
      : c_(c),
        cfg_(cfg),
        clock_(clock),
        report_(report),
        page_(controller::LiveReportPage(*cfg)),
        leadership_(leadership),
        backend_metrics_(std::move(backend_metrics)) {}
  std::string MetricsText() override {
    std::string out = c_->MetricsText();
    {
      std::lock_guard lock(mu_);
      out += StrCat("# HELP tide_loop_duration_seconds How long the last control loop took.\n",
                    "# TYPE tide_loop_duration_seconds gauge\n", "tide_loop_duration_seconds ", loop_last_, "\n",
                    "# HELP tide_loop_duration_seconds_max The longest control loop since start.\n",
                    "# TYPE tide_loop_duration_seconds_max gauge\n", "tide_loop_duration_seconds_max ", loop_max_,
                    "\n");
    }
    if (leadership_ != nullptr) {
      out += StrCat("# HELP tide_leading 1 while this replica holds the leader Lease and acts.\n",
                    "# TYPE tide_leading gauge\n", "tide_leading ", leadership_->Leading() ? 1 : 0, "\n");
    }
    if (backend_metrics_) out += backend_metrics_();
    return out;
  }
  std::string StatusJson() override {
    if (leadership_ == nullptr) return c_->StatusJson();
    const backends::LeadershipView v = leadership_->View();
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(c_->StatusJson(), nullptr, false);
    if (!j.is_object()) j = nlohmann::ordered_json::object();
    nlohmann::ordered_json l = {{"role", v.leading ? "leader" : "follower"},
                                {"identity", v.identity},
                                {"holder", v.holder},
                                {"lock", v.lock},
                                {"since", FormatTimestamp(v.since)},
                                {"last_error", v.last_error}};
    if (!v.leading) {
      std::lock_guard lock(mu_);
      l["observed"] = {{"ok", follower_.ok},
                       {"at", FormatTimestamp(follower_.at)},
                       {"error", follower_.error},
                       {"jobs", follower_.jobs},
                       {"waiting", follower_.waiting},
                       {"nodes", follower_.nodes}};
    }
    j["leadership"] = std::move(l);
    return j.dump(2) + "\n";
  }
  bool Healthy(std::string* why) override {
    if (leadership_ == nullptr || leadership_->Leading()) return c_->Healthy(clock_->Now(), why);
    // A replica that waits to lead is healthy while it can see the cluster.
    std::lock_guard lock(mu_);
    if (follower_.ok) return true;
    *why = follower_.at == Timestamp{} ? "not leading, and no look at the cluster yet\n"
                                       : StrCat("not leading, and cannot see the cluster: ", follower_.error, "\n");
    return false;
  }
  std::string ReportPage() override { return page_; }
  Result<std::string> ReportJson() override { return report_->Json(clock_->Now()); }
  Result<std::string> Command(const std::string& name, const std::map<std::string, std::string>& params) override {
    if (leadership_ != nullptr && !leadership_->Leading()) {
      const backends::LeadershipView v = leadership_->View();
      return absl::FailedPreconditionError(StrCat("this replica (", v.identity, ") does not lead; ",
                                                  v.holder.empty() ? "nobody holds " : StrCat(v.holder, " holds "),
                                                  v.lock, ": send commands to the leader"));
    }
    if (name == "pause" || name == "resume") {
      c_->Pause(name == "pause");
      return StrCat("{\"paused\": ", name == "pause" ? "true" : "false", "}\n");
    }
    if (name == "loop") {
      run_now_ = true;
      return std::string("{\"loop\": \"requested\"}\n");
    }
    if (name == "interrupt" || name == "reclaim") {  // reclaim: the old name, still accepted
      if (cfg_->live.provider.kind != "local") {
        return absl::FailedPreconditionError("interruption injection is for the local provider only");
      }
      auto node = params.find("node");
      if (node == params.end() || node->second.empty()) return absl::InvalidArgumentError("give node=<node name>");
      Duration notice = Seconds(30);
      if (auto n = params.find("notice"); n != params.end()) {
        auto d = ParseDuration(n->second);
        if (!d.ok()) return absl::InvalidArgumentError(StrCat("notice: ", Message(d.status())));
        notice = *d;
      }
      TIDE_RETURN_IF_ERROR(providers::LocalProvider::InjectInterruptionInDir(
          cfg_->live.provider.state_dir, node->second, notice, clock_->Now()));
      // Keyed by the name called, so a caller of the old name gets the old answer.
      return StrCat("{\"", name, "\": \"", node->second, "\", \"notice_seconds\": ", notice.count(), "}\n");
    }
    return absl::NotFoundError(StrCat("no command '", name, "'; commands: pause, resume, loop, interrupt"));
  }
  bool TakeRunNow() { return run_now_.exchange(false); }
  void LoopTook(double seconds) {
    std::lock_guard lock(mu_);
    loop_last_ = seconds;
    loop_max_ = std::max(loop_max_, seconds);
  }
  void Followed(FollowerView v) {
    std::lock_guard lock(mu_);
    follower_ = std::move(v);
  }

 private:
  controller::Controller* c_;
  const config::Config* cfg_;
  const RealClock* clock_;
  controller::LiveReportSource* report_;
  const std::string page_;
  backends::Leadership* leadership_;
  std::function<std::string()> backend_metrics_;
  std::atomic<bool> run_now_{false};
  std::mutex mu_;
  double loop_last_ = 0, loop_max_ = 0;
  FollowerView follower_;
};

// A look at the cluster by a replica that does not lead: it keeps the
// manager's watches open (so that taking over is quick) and shows what it
// sees. Nothing is decided or done.
FollowerView Follow(backends::WorkloadManager* manager, Timestamp now) {
  FollowerView v;
  v.at = now;
  auto obs = manager->Observe();
  if (!obs.ok()) {
    v.error = std::string(Message(obs.status()));
    return v;
  }
  v.ok = true;
  v.jobs = obs->jobs.size();
  v.nodes = obs->nodes.size();
  for (const auto& j : obs->jobs) v.waiting += j.phase == backends::JobPhase::kWaiting ? 1 : 0;
  return v;
}

}  // namespace

int Run(const RunArgs& args) {
  auto cfg = config::LoadConfig(args.config);
  if (!cfg.ok()) return ReportFailure(cfg.status());
  PrintConfigNotes(*cfg);
  if (!cfg->live.present) {
    return ReportFailure(absl::InvalidArgumentError(
        StrCat(args.config, ": no `live:` section; `tide run` needs one (docs/live.md)")));
  }
  // The policy before the backend: a wrong name is wrong whatever the manager says.
  auto profile = autoscale::MakePolicy(args.policy, cfg->policies, cfg->cluster, std::nullopt);
  if (!profile.ok()) {
    return ReportFailure(absl::InvalidArgumentError(StrCat("--policy: ", profile.status().message())));
  }
  if (profile->kind != "tide") {
    return ReportFailure(absl::InvalidArgumentError(
        StrCat("--policy ", args.policy, ": `tide run` runs tide's own policies (tide, tide-seed or a variant); ",
               profile->kind, " is a baseline for `tide simulate`")));
  }
  if (cfg->live.provider.kind == "kwok" && cfg->live.backend != "kubernetes") {
    // Before the backend: the configuration is wrong whatever the backend can do.
    return ReportFailure(absl::InvalidArgumentError(StrCat(
        args.config, ": live.provider.kind: kwok makes Kubernetes Node objects, which join Kubernetes, not ",
        cfg->live.backend, "; use live.backend: kubernetes, or the local or exec provider (docs/providers.md)")));
  }
  auto backend = backends::MakeBackend(*cfg);
  if (!backend.ok()) return ReportFailure(backend.status());
  if (Status s = controller::CheckClassRules(*cfg, backend->manager->capabilities()); !s.ok()) {
    return ReportFailure(s);
  }
  auto autoscaler = autoscale::Autoscaler::Make(profile->autoscaler);
  if (!autoscaler.ok()) return ReportFailure(autoscaler.status());

  std::mutex log_mu;
  RealClock clock;
  auto log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mu);
    std::cerr << FormatTimestamp(clock.Now()) << " tide: " << line << "\n" << std::flush;
  };

  const auto& live = cfg->live;
  // The exec provider's commands get the workload manager's environment
  // (SLURM_CONF), so that they can reach it too.
  SystemCommandRunner runner(backends::BackendEnvironment(*cfg));

  std::unique_ptr<providers::CloudProvider> provider;
  if (live.provider.kind == "kwok") {
    auto kwok = providers::MakeKwokProvider(*cfg);
    if (!kwok.ok()) return ReportFailure(kwok.status());
    provider = std::move(*kwok);
  } else if (live.provider.kind == "local") {
    providers::LocalProvider::Options lo;
    lo.state_dir = live.provider.state_dir;
    lo.slurmd = live.provider.slurmd;
    lo.slurm_conf = live.provider.slurm_conf;
    provider = std::make_unique<providers::LocalProvider>(lo);
  } else {
    providers::ExecProvider::Options eo;
    eo.create = live.provider.create;
    eo.delete_ = live.provider.destroy;
    eo.list = live.provider.list;
    eo.interruptions = live.provider.interruptions;
    eo.timeout = live.provider.timeout;
    provider = std::make_unique<providers::ExecProvider>(eo, &runner);
  }

  auto store = controller::Store::Open(args.dry_run ? std::string(":memory:") : live.state);
  if (!store.ok()) return ReportFailure(store.status());

  std::unique_ptr<metrics::PrometheusSource> prometheus;
  if (!live.metrics.prometheus.empty()) {
    metrics::PrometheusOptions po;
    po.url = live.metrics.prometheus;
    po.metric = live.metrics.metric;
    po.node_label = live.metrics.node_label;
    po.job_label = live.metrics.job_label;
    po.pod_label = live.metrics.pod_label;
    po.namespace_label = live.metrics.namespace_label;
    po.scale = live.metrics.scale;
    prometheus = std::make_unique<metrics::PrometheusSource>(po);
  }

  controller::ControllerOptions co;
  co.dry_run = args.dry_run;
  if (const char* fault = std::getenv("TIDE_FAULT")) co.fault = fault;
  if (backends::Leadership* l = backend->leadership; l != nullptr) co.may_act = [l] { return l->Leading(); };
  controller::Controller ctl(*cfg, std::move(*autoscaler), backend->manager.get(), provider.get(), store->get(),
                             prometheus.get(), co, log);

  controller::LiveReportSource report(*cfg, live.state, {.history = co.history, .dry_run = args.dry_run});
  backends::Leadership* leadership = backend->leadership;
  Source source(&ctl, &*cfg, &clock, &report, leadership, backend->metrics);
  std::unique_ptr<controller::HttpServer> http;
  if (!args.no_http) {
    auto token = controller::LoadToken(live.http.token_file);
    if (!token.ok()) return ReportFailure(token.status());
    if (token->created) {
      log(StrCat("made ", live.http.token_file, " (mode 0600) with a new random token for POST /api/v1/..."));
    }
    controller::HttpOptions ho;
    ho.address = live.http.address;
    ho.port = live.http.port;
    ho.token = std::move(token->value);
    http = std::make_unique<controller::HttpServer>(ho, &source);
    Status s = http->Start();
    if (!s.ok()) return ReportFailure(s);
  }

  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  log(StrCat("started: ", args.config, ", ", cfg->cluster.pools.size(), " pools, backend ", backend->summary,
             ", loop every ",
             FormatDuration(live.loop_interval), ", provider ", provider->Name(), args.dry_run ? ", DRY RUN (no action)" : "",
             http ? StrCat(", http on ", live.http.address, ":", http->port()) : std::string(),
             prometheus ? StrCat(", utilization from ", live.metrics.prometheus) : std::string(", no utilization source")));
  std::jthread campaign;
  if (leadership != nullptr) {
    campaign = std::jthread([leadership](std::stop_token stop) { leadership->Run(stop); });
  }
  backends::WorkloadManager* manager = backend->manager.get();
  int loops = 0;
  bool leading = leadership == nullptr;
  std::string last_follow_error;
  while (g_signal == 0) {
    const uint64_t generation = manager->ChangeGeneration();
    const bool lead = leadership == nullptr || leadership->Leading();
    if (leadership != nullptr && lead != leading) {
      const backends::LeadershipView v = leadership->View();
      log(lead ? StrCat("leading: this replica (", v.identity, ") holds ", v.lock, "; acting from now")
               : StrCat("not leading: ", v.holder.empty() ? "nobody" : v.holder, " holds ", v.lock,
                        "; this replica (", v.identity, ") watches and does nothing",
                        v.last_error.empty() ? "" : StrCat(" (last error: ", v.last_error, ")")));
      leading = lead;
    }
    if (lead) {
      const auto t0 = std::chrono::steady_clock::now();
      ctl.RunLoop(clock.Now());
      source.LoopTook(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      ++loops;
      if (args.once || (args.loops > 0 && loops >= args.loops)) break;
    } else {
      FollowerView v = Follow(manager, clock.Now());
      if (v.error != last_follow_error && !v.error.empty()) log(StrCat("not leading, and cannot see the cluster: ", v.error));
      last_follow_error = v.error;
      source.Followed(std::move(v));
    }
    // Wait for the interval, a command, a signal, a change of leadership, or
    // a change the manager reports (a watch event), whichever comes first.
    const auto ended = std::chrono::steady_clock::now();
    const auto until = ended + std::chrono::seconds(live.loop_interval.count());
    while (g_signal == 0 && std::chrono::steady_clock::now() < until && !source.TakeRunNow()) {
      if (leadership != nullptr && leadership->Leading() != leading) break;
      if (lead && manager->ChangeGeneration() != generation && std::chrono::steady_clock::now() - ended >= kMinLoopGap) {
        break;
      }
      std::this_thread::sleep_for(kWaitTick);
    }
  }
  if (leadership != nullptr) {
    campaign.request_stop();
    if (campaign.joinable()) campaign.join();
    // Hand over at once rather than after the Lease's length.
    if (leading) {
      leadership->Release();
      log("gave up the leader Lease");
    }
  }
  if (g_signal != 0) {
    auto pending = (*store)->PendingActions();
    log(StrCat("stopping on ", g_signal == SIGTERM ? "SIGTERM" : "SIGINT", " after ", loops,
               " loops; the current loop finished", pending.ok() ? StrCat(", ", pending->size(),
               " action(s) in flight are recorded and resume at the next start") : std::string()));
  }
  if (http) http->Stop();
  return 0;
}

int LocalInterrupt(const LocalInterruptArgs& args) {
  auto cfg = config::LoadConfig(args.config);
  if (!cfg.ok()) return ReportFailure(cfg.status());
  auto notice = ParseDuration(args.notice);
  if (!notice.ok()) return ReportFailure(absl::InvalidArgumentError(StrCat("--notice: ", Message(notice.status()))));
  RealClock clock;
  Status s =
      providers::LocalProvider::InjectInterruptionInDir(cfg->live.provider.state_dir, args.node, *notice, clock.Now());
  if (!s.ok()) return ReportFailure(s);
  std::cout << "interruption of " << args.node << " injected: notice now, taken in " << FormatDuration(*notice) << "\n";
  return 0;
}

}  // namespace tide::cli
