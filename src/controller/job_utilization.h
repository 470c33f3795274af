// Which utilization samples belong to which running job: the rule that
// turns Prometheus's per-GPU series into one figure per job for the
// controller's UtilHistory (docs/live.md, "Utilization").
//
// A job's figure is the mean over the GPUs of its series, found by the
// first rule that applies:
//   1. series labelled with the job (the DCGM exporter's HPC job mapping,
//      live.metrics.job_label, equal to the job's key);
//   2. series labelled with its pods (the exporter's Kubernetes mapping,
//      ObservedJob::members), only when every pod has one;
//   3. series of its nodes, only when every node has one, and, for a job
//      with members, only when no series names any pod and the job has its
//      nodes to itself (otherwise a node's mean mixes other work, or free
//      GPUs, into the job's figure).
// A job no rule covers gets no figure: unknown, never idle.
#ifndef TIDE_CONTROLLER_JOB_UTILIZATION_H_
#define TIDE_CONTROLLER_JOB_UTILIZATION_H_

#include <map>
#include <string>
#include <vector>

#include "backends/workload.h"
#include "metrics/prometheus.h"

namespace tide::controller {

// The running jobs' utilization (0..1) by key, from one poll's samples.
std::map<std::string, double> JobUtilization(const backends::Observation& obs,
                                             const std::vector<metrics::UtilSample>& samples);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_JOB_UTILIZATION_H_
