// tide: elastic GPU capacity for ML training clusters.
#include <iostream>

#include "CLI/CLI.hpp"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tide: elastic GPU capacity for training clusters (simulate policies on real traces)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tide 0.1.0");

  tide::cli::SimulateArgs sim;
  auto* simulate = app.add_subcommand("simulate", "Replay a workload under several policies and compare them");
  simulate->add_option("--config,-c", sim.config, "Cluster configuration (YAML)")->required()->check(CLI::ExistingFile);
  simulate->add_option("--trace,-t", sim.trace, "Workload trace (CSV)")->required()->check(CLI::ExistingFile);
  simulate->add_option("--format,-f", sim.format, "Trace format: auto, native, itp, philly, openb, swf")
      ->capture_default_str();
  simulate->add_option("--compare", sim.compare,
                       "Policies, comma-separated: tide, tide-seed, reactive, slurm-powersave, fixed:N|peak|mean[:pool], or a variant "
                       "(default: the configuration's policies.compare)");
  simulate->add_option("--json", sim.json_out, "Also write the figures as JSON to this file");
  simulate->add_option("--decision-log", sim.decision_log, "Write every decision, with its reason, to this file");
  simulate->add_option("--seed", sim.seed, "Random seed (default: simulation.seed)");
  simulate->add_option("--threads", sim.threads, "Policies simulated at once (default: one per core)");
  simulate->add_flag("--quiet,-q", sim.quiet, "Print nothing on success");
  simulate->add_flag("--bound", sim.bound, "Also show every policy's cost over the offline lower bound (tide bound)");
  simulate->add_option("--html", sim.html_out, "Also write the HTML report (one self-contained file) here");
  simulate->add_option("--time-zone", sim.time_zone,
                       "Time zone of the report's time axes, an IANA name (default: the configuration's time_zone)");
  simulate->add_option("--progress", sim.progress, "Progress on standard error: auto (on a terminal), always, never")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "always", "never"}));

  tide::cli::BoundArgs bound;
  auto* bound_cmd = app.add_subcommand(
      "bound", "The offline lower bound on cost: perfect foresight, no boot delay, perfect packing");
  bound_cmd->add_option("--config,-c", bound.config, "Cluster configuration (YAML), for prices and tiers")
      ->required()
      ->check(CLI::ExistingFile);
  bound_cmd->add_option("--trace,-t", bound.trace, "Workload trace")->required()->check(CLI::ExistingFile);
  bound_cmd->add_option("--format,-f", bound.format, "Trace format")->capture_default_str();
  bound_cmd->add_option("--json", bound.json_out, "Also write the figures as JSON to this file");

  auto* trace = app.add_subcommand("trace", "Generate or inspect workload traces");
  trace->require_subcommand(1);
  tide::cli::SynthArgs synth;
  auto* synth_cmd = trace->add_subcommand("synth", "Generate a seeded synthetic tidal workload (native CSV)");
  synth_cmd->add_option("--config,-c", synth.config, "Configuration, for priority classes and start time");
  synth_cmd->add_option("--out,-o", synth.out, "Output file (default: standard output)");
  synth_cmd->add_option("--days", synth.days, "Days of workload")->capture_default_str()->check(CLI::Range(1, 3660));
  synth_cmd->add_option("--seed", synth.seed, "Random seed")->capture_default_str();
  synth_cmd->add_option("--jobs-per-hour", synth.jobs_per_hour, "Regular jobs per hour at the daytime peak")
      ->capture_default_str();
  synth_cmd->add_option("--scale", synth.scale, "Multiplies every arrival rate")->capture_default_str();
  synth_cmd->add_option("--utc-offset", synth.utc_offset_hours, "Hours east of UTC of the working day")
      ->capture_default_str();
  synth_cmd->add_option("--start", synth.start, "Time zero, ISO-8601 (default: simulation.start)");
  synth_cmd->add_option("--bursts-per-day", synth.bursts_per_day,
                        "Hyper-parameter-search bursts per working day (mean)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  synth_cmd->add_option("--long-runs-per-day", synth.long_runs_per_day, "Long training runs per working day (mean)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  synth_cmd->add_option("--morning-rush", synth.morning_rush,
                        "Extra jobs submitted at local 09:00-09:15 each working day (mean)")
      ->check(CLI::Range(0.0, 100000.0));
  synth_cmd->add_option("--elastic-share", synth.elastic_share,
                        "Share of multi-GPU jobs made elastic, and of search bursts made one elastic async job")
      ->check(CLI::Range(0.0, 1.0));
  synth_cmd->add_option("--io-bound-share", synth.io_bound_share, "Share of elastic async jobs bound by their input")
      ->check(CLI::Range(0.0, 1.0));
  synth_cmd->add_option("--idle-share", synth.idle_share, "Share of regular jobs (and elastic searches) that hold GPUs and do nothing")
      ->check(CLI::Range(0.0, 1.0));
  synth_cmd->add_option("--slice-share", synth.slice_share, "Share of 1-GPU jobs that ask for a MIG slice")
      ->check(CLI::Range(0.0, 1.0));
  synth_cmd->add_option("--data-share", synth.data_share, "Share of regular jobs whose data lives in --data-region")
      ->check(CLI::Range(0.0, 1.0));
  synth_cmd->add_option("--data-region", synth.data_region, "The region that data lives in")->capture_default_str();

  tide::cli::StatsArgs stats;
  auto* stats_cmd = trace->add_subcommand("stats", "Summarise a trace: jobs, sizes, GPU-hours, demand");
  stats_cmd->add_option("--trace,-t", stats.trace, "Workload trace (CSV)")->required()->check(CLI::ExistingFile);
  stats_cmd->add_option("--format,-f", stats.format, "Trace format")->capture_default_str();
  stats_cmd->add_option("--config,-c", stats.config, "Configuration, for priority classes");

  tide::cli::OpenbClusterArgs openb_cluster;
  auto* openb_cmd =
      trace->add_subcommand("openb-cluster", "Print a cluster configuration (YAML) for an Alibaba openb node list");
  openb_cmd->add_option("--nodes,-n", openb_cluster.nodes, "openb node list (sn,cpu_milli,memory_mib,gpu,model)")
      ->required()
      ->check(CLI::ExistingFile);
  openb_cmd->add_option("--out,-o", openb_cluster.out, "Output file (default: standard output)");

  tide::cli::PlaceArgs place;
  auto* place_cmd = app.add_subcommand(
      "place", "Placement only: pack an openb pod list onto its node list, arrivals without departures");
  place_cmd->add_option("--pods,-p", place.pods, "openb pod list (CSV)")->required()->check(CLI::ExistingFile);
  place_cmd->add_option("--nodes,-n", place.nodes, "openb node list (CSV)")->required()->check(CLI::ExistingFile);
  place_cmd->add_option("--policy", place.policies, "Policies, comma-separated: best-fit, first-fit, worst-fit, fgd")
      ->capture_default_str();
  place_cmd->add_option("--inflate", place.inflate, "Arrivals up to this multiple of the cluster's GPU capacity")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 100.0));
  place_cmd->add_option("--seed", place.seed, "Random seed of the inflation sampling")->capture_default_str();
  place_cmd->add_option("--csv", place.csv_out, "Write one row per arrival per policy to this file");
  place_cmd->add_option("--json", place.json_out, "Write the summary as JSON to this file");
  place_cmd->add_flag("--quiet,-q", place.quiet, "Print nothing on success");

  tide::cli::PlanArgs plan;
  auto* plan_cmd = app.add_subcommand("plan", "Sweep a setting (reserved base, spot share, threshold...) over a workload");
  plan_cmd->add_option("--config,-c", plan.config, "Cluster configuration (YAML)")->required()->check(CLI::ExistingFile);
  plan_cmd->add_option("--trace,-t", plan.trace, "Workload trace (CSV)")->required()->check(CLI::ExistingFile);
  plan_cmd->add_option("--format,-f", plan.format, "Trace format")->capture_default_str();
  plan_cmd->add_option("--sweep", plan.sweeps,
                       "NAME=VALUES, repeatable: reserved[:pool], max[:pool], spot-share, threshold, grace, idle; "
                       "values as a list (10,12) or a range (0..20:5)")
      ->required();
  plan_cmd->add_option("--policy", plan.policy, "The policy each point runs")->capture_default_str();
  plan_cmd->add_option("--baseline", plan.baseline, "Also run this policy on the configuration as given, e.g. fixed:20");
  plan_cmd->add_option("--json", plan.json_out, "Also write every point's figures as JSON");
  plan_cmd->add_option("--seed", plan.seed, "Random seed (default: simulation.seed)");
  plan_cmd->add_option("--threads", plan.threads, "Simulations at once (default: one per core)");
  plan_cmd->add_flag("--quiet,-q", plan.quiet, "Print nothing on success");
  auto* plan_point = plan_cmd->add_option(
      "--point", plan.point,
      "Run only point I of the sweep (0-based, the baseline first if given) and write its result with --json "
      "(what each --slurm array task and --kubernetes pod runs)");
  auto* plan_slurm = plan_cmd->add_flag(
      "--slurm", plan.slurm, "Run the points as a Slurm job array (sbatch), wait for it and gather the results");
  plan_slurm->excludes(plan_point);
  plan_cmd->add_option("--slurm-dir", plan.slurm_dir,
                       "--slurm: the work directory, new or empty (default: tide-plan-<unix seconds>)")
      ->needs(plan_slurm);
  plan_cmd->add_option("--sbatch-arg", plan.sbatch_args,
                       "--slurm: an extra sbatch argument, repeatable, e.g. --sbatch-arg=--partition=gpu")
      ->needs(plan_slurm);
  auto* plan_kube = plan_cmd->add_option(
      "--kubernetes", plan.kubernetes_dir,
      "Write the points as a Kubernetes Indexed Job (job.yaml, files-pod.yaml and the kubectl steps) into this "
      "directory, new or empty; submit nothing");
  auto kube_option = [&](const char* name, auto& value, const std::string& help) {
    plan_cmd->add_option(name, value, "--kubernetes: " + help)->capture_default_str()->needs(plan_kube);
  };
  kube_option("--kube-name", plan.kubernetes.name, "the Job's name");
  kube_option("--kube-image", plan.kubernetes.image, "the pods' image, tide on its PATH");
  kube_option("--kube-pvc", plan.kubernetes.pvc, "a ReadWriteMany PersistentVolumeClaim for the inputs and the results");
  kube_option("--kube-parallelism", plan.kubernetes.parallelism, "pods at once (at most)");
  kube_option("--kube-cpu", plan.kubernetes.cpu, "each pod's CPU request");
  kube_option("--kube-memory", plan.kubernetes.memory, "each pod's memory request");
  plan_cmd->add_option("--gather", plan.gather_dir,
                       "Simulate nothing: read every point's DIR/point-I.json (from a --kubernetes Job or a "
                       "--slurm array) and print the table");

  std::string validate_config;
  auto* validate = app.add_subcommand("validate", "Check a configuration file and print what it defines");
  validate->add_option("config", validate_config, "Configuration (YAML)")->required()->check(CLI::ExistingFile);

  tide::cli::RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "Run the live controller over a workload manager (Slurm; docs/live.md)");
  run_cmd->add_option("--config,-c", run.config, "Cluster configuration with a `live:` section")
      ->required()
      ->check(CLI::ExistingFile);
  run_cmd->add_option("--policy", run.policy,
                      "tide's policy to run: tide (its defaults), tide-seed (the mission's rollout rule) or a "
                      "variant from policies.variants")
      ->capture_default_str();
  run_cmd->add_flag("--dry-run", run.dry_run, "Decide and print each decision with its reason; change nothing");
  run_cmd->add_flag("--once", run.once, "Run one loop and exit");
  run_cmd->add_option("--loops", run.loops, "Run this many loops and exit (default: until SIGTERM)");
  run_cmd->add_flag("--no-http", run.no_http, "Do not serve /metrics, /healthz and /status");

  auto* local_cmd = app.add_subcommand("local", "The local provider (real slurmd processes as cloud instances)");
  local_cmd->require_subcommand(1);
  tide::cli::LocalInterruptArgs interrupt;
  auto* interrupt_cmd =
      local_cmd->add_subcommand("interrupt", "Inject a spot interruption: a notice now, the kill later");
  interrupt_cmd->alias("reclaim");  // the old name, still accepted
  interrupt_cmd->add_option("--config,-c", interrupt.config, "The configuration `tide run` uses")
      ->required()
      ->check(CLI::ExistingFile);
  interrupt_cmd->add_option("node", interrupt.node, "The node's name in the workload manager")->required();
  interrupt_cmd->add_option("--notice", interrupt.notice, "Time between the notice and the kill")
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*simulate) return tide::cli::Simulate(sim);
  if (*synth_cmd) return tide::cli::TraceSynth(synth);
  if (*stats_cmd) return tide::cli::TraceStats(stats);
  if (*validate) return tide::cli::Validate(validate_config);
  if (*plan_cmd) return tide::cli::Plan(plan);
  if (*openb_cmd) return tide::cli::OpenbCluster(openb_cluster);
  if (*place_cmd) return tide::cli::Place(place);
  if (*bound_cmd) return tide::cli::Bound(bound);
  if (*run_cmd) return tide::cli::Run(run);
  if (*interrupt_cmd) return tide::cli::LocalInterrupt(interrupt);
  return 2;
}
