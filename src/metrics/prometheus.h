// GPU utilization from Prometheus's HTTP API (docs/live.md, live.metrics):
// one instant query per poll, by default of the DCGM exporter's
// DCGM_FI_DEV_GPU_UTIL (percent busy, one series per GPU, labelled with the
// node's host name and, when the exporter maps HPC jobs, the job id).
//
// A reply that cannot be read is an error, never an empty answer: missing
// data must not look like idle GPUs (model::MetricsView).
#ifndef TIDE_METRICS_PROMETHEUS_H_
#define TIDE_METRICS_PROMETHEUS_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/time.h"

namespace tide::metrics {

struct PrometheusOptions {
  // Prometheus's base URL: http:// or https://, host, optional port and
  // path prefix (a Prometheus behind a proxy at /prometheus).
  std::string url = "http://127.0.0.1:9090";
  // What to query: a metric name or any PromQL expression giving an
  // instant vector of per-GPU utilization.
  std::string metric = "DCGM_FI_DEV_GPU_UTIL";
  // The label naming the node (the Slurm or Kubernetes node name),
  // required on every series that names no pod. The DCGM exporter's is
  // "Hostname".
  std::string node_label = "Hostname";
  // The label naming the Slurm job, used when a series carries it (the DCGM
  // exporter's HPC job mapping). Not "job": Prometheus sets that to the
  // scrape job's name.
  std::string job_label = "hpc_job";
  // The labels naming the pod using the GPU and its namespace, which the
  // DCGM exporter adds on Kubernetes: a series with both names the pod
  // "namespace/pod" (backends::ObservedJob::members).
  std::string pod_label = "pod";
  std::string namespace_label = "namespace";
  // The label holding the GPU's index on its node; optional.
  std::string gpu_label = "gpu";
  // The value that means fully busy: 100 for percent, 1 for fractions.
  double scale = 100;
  // For each step of a query (connecting, sending, receiving).
  Duration timeout = Seconds(5);
};

// One series of the reply: one GPU.
struct UtilSample {
  std::string node;  // empty only when the series names a pod
  std::string job;   // empty when the series has no job label
  int gpu = -1;     // -1 when the series has no (integer) GPU label
  double util = 0;  // 0..1: value / scale, values above scale read as 1
  std::string pod;  // "namespace/pod"; empty when the series names none
};

// Reads the body of an /api/v1/query reply. InvalidArgument, naming what,
// unless it is JSON with status "success" and data.resultType "vector",
// and every series has a non-empty node label (or pod and namespace
// labels) and a value [time, "number"]
// that is finite and not negative. An empty result is an empty vector: no
// GPU reported (which is not the same as idle GPUs).
Result<std::vector<UtilSample>> ParseQueryResponse(std::string_view json, const PrometheusOptions& options);

// The mean utilization of each node over its series (GPUs).
std::map<std::string, double> NodeUtilization(const std::vector<UtilSample>& samples);

// Queries Prometheus. Holds no connection between calls; Query may be
// called from several threads at once.
class PrometheusSource {
 public:
  explicit PrometheusSource(PrometheusOptions options) : options_(std::move(options)) {}

  // GET <url>/api/v1/query?query=<metric>, within options.timeout per step.
  // Unavailable (naming the URL) if Prometheus cannot be reached or answers
  // other than 200; InvalidArgument if the URL is malformed or the reply
  // cannot be read (ParseQueryResponse).
  Result<std::vector<UtilSample>> Query() const;

  const PrometheusOptions& options() const { return options_; }

 private:
  PrometheusOptions options_;
};

// Percent-encodes everything but RFC 3986's unreserved characters, for a
// query-string value.
std::string UrlEncode(std::string_view s);

}  // namespace tide::metrics

#endif  // TIDE_METRICS_PROMETHEUS_H_
