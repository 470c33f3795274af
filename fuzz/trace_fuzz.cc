// One trace reader, chosen at build time (TIDE_FUZZ_FORMAT): native, itp,
// philly, openb, swf, auto (the format told from the header), spot (a spot
// supply series) or openb_nodes (openb's node list).
//
// Properties: an error names the file and the line and is printable; a
// trace that reads, written as tide's native format and read again, gives
// the same jobs (the writer loses nothing the native format can say).
#include <sstream>

#include "fuzz/fuzz_check.h"
#include "testutil/builders.h"
#include "trace/openb.h"
#include "trace/reader.h"
#include "trace/spot.h"
#include "trace/synth.h"

#ifndef TIDE_FUZZ_FORMAT
#error "TIDE_FUZZ_FORMAT names the trace format"
#endif

namespace tide::fuzz {
namespace {

constexpr std::string_view kFormat = TIDE_FUZZ_FORMAT;

struct World {
  model::ClusterSpec spec = tide::testing::Spec({tide::testing::Pool("gpu", 8, model::Tier::kOnDemand, 100, 0, 50)});
  trace::TraceOptions options;
  InputFile input{kFormat};
  InputFile again{StrCat(kFormat, "-again")};
  World() {
    options.spec = &spec;
    options.start = tide::testing::kT0;
  }
};

std::string Native(const World& w, Timestamp start, const std::vector<model::JobSpec>& jobs) {
  std::ostringstream out;
  trace::NativeWriter writer(&out, &w.spec, start, /*extended=*/true);
  for (const auto& j : jobs) writer.Write(j);
  return out.str();
}

// What the native format carries of a job, field by field.
std::string Differs(const model::JobSpec& a, const model::JobSpec& b) {
  if (a.name != b.name) return StrCat("name '", a.name, "' -> '", b.name, "'");
  if (a.submit != b.submit || a.runtime != b.runtime) return "submit or runtime";
  if (a.gpus_per_worker != b.gpus_per_worker || a.workers != b.workers) return "gpus_per_worker or workers";
  if (a.priority_class != b.priority_class || a.preemptible != b.preemptible || a.is_protected != b.is_protected) {
    return "priority, preemptible or protected";
  }
  if (a.team != b.team) return StrCat("team '", a.team, "' -> '", b.team, "'");
  if (a.min_workers != b.min_workers || a.max_workers != b.max_workers || a.async != b.async ||
      a.io_bound_workers != b.io_bound_workers) {
    return "elasticity";
  }
  if (a.phases.train_util != b.phases.train_util) return StrCat("train_util ", a.phases.train_util, " -> ", b.phases.train_util);
  if (a.slice_units != b.slice_units) return StrCat("slice '", a.slice, "' -> '", b.slice, "'");
  if (a.data_region != b.data_region || a.data_gb != b.data_gb || a.output_gb != b.output_gb) return "data";
  return "";
}

void ReadJobs(World& w, std::string_view bytes) {
  const std::string& path = w.input.Write(bytes);
  auto reader = trace::OpenTrace(path, kFormat, w.options);
  if (!reader.ok()) return CheckNamesFileAndLine(reader.status(), path);
  auto jobs = trace::ReadAll(**reader);
  if (!jobs.ok()) return CheckNamesFileAndLine(jobs.status(), path);
  if (jobs->empty()) return;
  // Written back as tide's native format, from the first submission (as a
  // conversion would: the native format's times count from its start), and
  // read again: the same jobs.
  trace::TraceOptions again_options = w.options;
  again_options.start = jobs->front().submit;
  const std::string text = Native(w, again_options.start, *jobs);
  auto again = trace::OpenTrace(w.again.Write(text), "native", again_options);
  if (!again.ok()) Fail("the native writer's output reads again", Message(again.status()));
  auto jobs2 = trace::ReadAll(**again);
  if (!jobs2.ok()) Fail("the native writer's output reads again", Message(jobs2.status()));
  if (jobs2->size() != jobs->size()) Fail("written and read again, as many jobs", text);
  for (size_t i = 0; i < jobs->size(); ++i) {
    if (const std::string d = Differs((*jobs)[i], (*jobs2)[i]); !d.empty()) {
      Fail(StrCat("written and read again, the same job (", d, ")"), text);
    }
  }
}

}  // namespace
}  // namespace tide::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tide;
  using namespace tide::fuzz;
  static World* w = new World();
  const std::string_view bytes = AsText(data, size);
  if constexpr (kFormat == "spot") {
    auto points = trace::ReadSpotSupply(w->input.Write(bytes));
    if (!points.ok()) CheckNamesFileAndLine(points.status(), w->input.path());
  } else if constexpr (kFormat == "openb_nodes") {
    auto nodes = trace::ReadOpenbNodes(w->input.Write(bytes));
    if (!nodes.ok()) CheckNamesFileAndLine(nodes.status(), w->input.path());
  } else {
    ReadJobs(*w, bytes);
  }
  return 0;
}
