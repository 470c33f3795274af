#include "config/simulation_section.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <utility>

#include "core/strings.h"
#include "trace/spot.h"

namespace tide::config {
namespace {

// simulation.spot / storage / elastic. A supply trace's path counts from the
// configuration's folder; it is recorded in `supply`, not read.
Status ParseWorld(const Field& f, const std::string& config_path, sim::WorldOptions* w,
                  std::optional<SupplyTraceFile>* supply) {
  if (auto sp = f.Get("spot")) {
    TIDE_RETURN_IF_ERROR(sp->OnlyKeys({"mean_time_to_interrupt", "notice", "supply", "supply_format", "supply_scale"}));
    TIDE_RETURN_IF_ERROR(
        Opt(*sp, "mean_time_to_interrupt", &w->spot.mean_time_to_interrupt, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*sp, "notice", &w->spot.notice, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*sp, "supply_scale", &w->spot.supply_scale, [](const Field& x) { return x.Number(0, 1e6); }));
    if (auto path = sp->Get("supply")) {
      SupplyTraceFile t;
      TIDE_ASSIGN_OR_RETURN(t.source, path->String());
      TIDE_RETURN_IF_ERROR(Opt(*sp, "supply_format", &t.format, [](const Field& x) { return x.String(); }));
      // Named at the supply, as when the reader found it.
      if (Status known = trace::CheckSpotSupplyFormat(t.format); !known.ok()) return path->Error(Message(known));
      t.path = (std::filesystem::path(config_path).parent_path() / t.source).string();
      t.where = path->Where();
      *supply = std::move(t);
    }
  }
  if (auto st = f.Get("storage")) {
    TIDE_RETURN_IF_ERROR(st->OnlyKeys({"load_gb", "bandwidth_gbps", "node_gbps", "prefetch", "max_concurrent"}));
    TIDE_RETURN_IF_ERROR(Opt(*st, "load_gb", &w->storage.load_gb, [](const Field& x) { return x.Number(0, 1e9); }));
    TIDE_RETURN_IF_ERROR(
        Opt(*st, "bandwidth_gbps", &w->storage.bandwidth_gbps, [](const Field& x) { return x.Number(1e-6, 1e9); }));
    TIDE_RETURN_IF_ERROR(Opt(*st, "node_gbps", &w->storage.node_gbps, [](const Field& x) { return x.Number(1e-6, 1e9); }));
    TIDE_RETURN_IF_ERROR(Opt(*st, "prefetch", &w->storage.prefetch, [](const Field& x) { return x.Bool(); }));
    if (auto m = st->Get("max_concurrent")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, m->Int(0, 1000000));
      w->storage.max_concurrent = static_cast<int>(v);
    }
  }
  if (auto el = f.Get("elastic")) {
    TIDE_RETURN_IF_ERROR(el->OnlyKeys({"scaling_exponent", "resize_pause"}));
    TIDE_RETURN_IF_ERROR(
        Opt(*el, "scaling_exponent", &w->elastic.scaling_exponent, [](const Field& x) { return x.Number(0, 2); }));
    TIDE_RETURN_IF_ERROR(Opt(*el, "resize_pause", &w->elastic.resize_pause, [](const Field& x) { return x.Dur(); }));
  }
  return OkStatus();
}

}  // namespace

Status ParseSimulation(const Field& f, const std::string& config_path, SimulationSettings* s) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"seed", "start", "gpus_per_worker_max", "swf_procs_per_gpu", "spot", "storage", "elastic"}));
  TIDE_RETURN_IF_ERROR(ParseWorld(f, config_path, &s->world, &s->supply_trace));
  if (auto seed = f.Get("seed")) {
    TIDE_ASSIGN_OR_RETURN(int64_t v, seed->Int(0, INT64_MAX));
    s->seed = static_cast<uint64_t>(v);
  }
  TIDE_RETURN_IF_ERROR(Opt(f, "start", &s->start, [](const Field& x) { return x.Time(); }));
  if (auto g = f.Get("gpus_per_worker_max")) {
    TIDE_ASSIGN_OR_RETURN(int64_t v, g->Int(0, 64));
    s->gpus_per_worker_max = static_cast<int>(v);
  }
  if (auto g = f.Get("swf_procs_per_gpu")) {
    TIDE_ASSIGN_OR_RETURN(int64_t v, g->Int(1, 1 << 20));
    s->swf_procs_per_gpu = static_cast<int>(v);
  }
  return OkStatus();
}

Status ParseJobDefaults(const Field& f, JobDefaults* d) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"phases", "checkpoint"}));
  if (auto p = f.Get("phases")) {
    TIDE_RETURN_IF_ERROR(p->OnlyKeys({"load", "load_util", "train_util", "eval_share", "eval_util", "checkpoint_util"}));
    auto& ph = d->phases;
    TIDE_RETURN_IF_ERROR(Opt(*p, "load", &ph.load, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "load_util", &ph.load_util, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "train_util", &ph.train_util, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "eval_share", &ph.eval_share, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "eval_util", &ph.eval_util, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "checkpoint_util", &ph.checkpoint_util, [](const Field& x) { return x.Number(0, 1); }));
  }
  if (auto c = f.Get("checkpoint")) {
    TIDE_RETURN_IF_ERROR(c->OnlyKeys({"interval", "cost"}));
    TIDE_RETURN_IF_ERROR(Opt(*c, "interval", &d->checkpoint.interval, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*c, "cost", &d->checkpoint.cost, [](const Field& x) { return x.Dur(); }));
  }
  return OkStatus();
}

}  // namespace tide::config
