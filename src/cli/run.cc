// `tide run`: the live controller over a workload manager (docs/live.md), and
// `tide local interrupt`, which injects a spot interruption into the local
// provider of a running `tide run`.
#include <signal.h>

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
#include "providers/exec/exec_provider.h"
#include "providers/kwok/kwok_config.h"
#include "providers/local/local_provider.h"

namespace tide::cli {
namespace {

std::atomic<int> g_signal{0};  // the one signal-handler flag; set by SIGTERM/SIGINT
void OnSignal(int sig) { g_signal = sig; }

// The HTTP server's view of the controller. Commands that change state are
// queued for the loop's thread.
class Source final : public controller::StatusSource {
 public:
  Source(controller::Controller* c, const config::Config* cfg, const RealClock* clock,
         controller::LiveReportSource* report)
      : c_(c), cfg_(cfg), clock_(clock), report_(report), page_(controller::LiveReportPage(*cfg)) {}
  std::string MetricsText() override { return c_->MetricsText(); }
  std::string StatusJson() override { return c_->StatusJson(); }
  bool Healthy(std::string* why) override { return c_->Healthy(clock_->Now(), why); }
  std::string ReportPage() override { return page_; }
  Result<std::string> ReportJson() override { return report_->Json(clock_->Now()); }
  Result<std::string> Command(const std::string& name, const std::map<std::string, std::string>& params) override {
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

 private:
  controller::Controller* c_;
  const config::Config* cfg_;
  const RealClock* clock_;
  controller::LiveReportSource* report_;
  const std::string page_;
  std::atomic<bool> run_now_{false};
};

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
  controller::Controller ctl(*cfg, std::move(*autoscaler), backend->manager.get(), provider.get(), store->get(),
                             prometheus.get(), co, log);

  controller::LiveReportSource report(*cfg, live.state, {.history = co.history, .dry_run = args.dry_run});
  Source source(&ctl, &*cfg, &clock, &report);
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
  int loops = 0;
  while (g_signal == 0) {
    ctl.RunLoop(clock.Now());
    ++loops;
    if (args.once || (args.loops > 0 && loops >= args.loops)) break;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(live.loop_interval.count());
    while (g_signal == 0 && std::chrono::steady_clock::now() < until && !source.TakeRunNow()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
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
