#include "trace/reader.h"
#include "core/strings.h"

#include <algorithm>

#include "trace/formats.h"

namespace tide::trace {

std::vector<std::string> TraceFormats() { return {"auto", "native", "itp", "philly", "openb", "swf"}; }

model::JobSpec NewJob(const TraceOptions& options) {
  model::JobSpec j;
  j.phases = options.phases;
  j.checkpoint = options.checkpoint;
  return j;
}

void UseDefaultClass(const TraceOptions& options, model::JobSpec* job) {
  job->priority_class = options.spec->default_priority_class;
  const auto& cls = options.spec->priority_classes[job->priority_class];
  job->preemptible = cls.preemptible;
  job->is_protected = cls.protect;
}

void SplitGang(int gpus, int gpus_per_node, int* workers, int* gpus_per_worker) {
  gpus_per_node = std::max(1, gpus_per_node);
  *workers = (gpus + gpus_per_node - 1) / gpus_per_node;
  *gpus_per_worker = (gpus + *workers - 1) / *workers;
}

Result<std::unique_ptr<TraceReader>> OpenTrace(const std::string& path, std::string_view format,
                                               const TraceOptions& options) {
  if (options.spec == nullptr) return absl::InvalidArgumentError("OpenTrace needs a cluster spec");
  if (format == "swf" || (format == "auto" && LooksLikeSwf(path))) return OpenSwf(path, options);
  TIDE_ASSIGN_OR_RETURN(auto csv, CsvReader::Open(path));
  TIDE_RETURN_IF_ERROR(csv->ReadHeader());
  std::string f(format);
  if (f == "auto") {
    auto has = [&](std::string_view c) { return csv->Column(c) >= 0; };
    if (has("num_gpu") && has("gpu_milli") && has("cpu_milli")) {
      f = "openb";
    } else if (has("submission_time") && has("num_gpu")) {
      f = "itp";
    } else if (has("timestamp") && has("num_gpus") && has("gpu_time")) {
      f = "philly";
    } else if (has("submit_time")) {
      f = "native";
    } else {
      return absl::InvalidArgumentError(StrCat(
          path, ":", csv->line(), ": cannot tell the trace format from the header (",
          Shown(StrJoin(csv->header(), ",")), "); pass --format, one of ", StrJoin(TraceFormats(), ", ")));
    }
  }
  if (f == "native") return OpenNative(std::move(csv), options);
  if (f == "itp") return OpenItp(std::move(csv), options);
  if (f == "philly") return OpenPhilly(std::move(csv), options);
  if (f == "openb") return OpenOpenb(std::move(csv), options);
  return absl::InvalidArgumentError(
      StrCat("unknown trace format '", format, "'; known: ", StrJoin(TraceFormats(), ", ")));
}

Result<std::vector<model::JobSpec>> ReadAll(TraceReader& reader) {
  std::vector<model::JobSpec> out;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(auto job, reader.Next());
    if (!job) break;
    out.push_back(std::move(*job));
  }
  return out;
}

}  // namespace tide::trace
