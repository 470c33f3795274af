// `tide plan --kubernetes DIR`: the sweep as a Kubernetes Indexed Job
// (docs/design/sweep.md). Pod I runs `tide plan <the same arguments> --point I`
// and writes point-I.json into a folder of a ReadWriteMany claim, which also
// holds the configuration and the trace; `tide plan ... --gather DIR` reads
// the point files back once they are copied into DIR.
#ifndef TIDE_CLI_PLAN_KUBERNETES_H_
#define TIDE_CLI_PLAN_KUBERNETES_H_

#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "core/status.h"

namespace tide::cli {

// Where every pod (the Job's and the files pod) mounts the claim's folder
// named after the Job: inputs and point files side by side.
inline constexpr std::string_view kKubeMount = "/tide-plan";

// A file the pods read, to be copied onto the claim before the Job runs.
struct KubeInput {
  std::string local;   // absolute path here
  std::string in_pod;  // under kKubeMount
};

// Everything the two manifests say.
struct KubeJob {
  PlanKubernetesOptions options;
  std::string dir;  // absolute: where the manifests are written and the point files gathered
  size_t completions = 0;  // the sweep's points, the baseline among them
  // `tide plan` with the pods' paths, every argument but --point and --json.
  std::vector<std::string> point_argv;
  std::vector<KubeInput> inputs;
  // The command that gathers the point files into the table, and the
  // directory it runs in: the arguments as given, so its table is the local
  // run's to the byte (the header names the trace as given).
  std::vector<std::string> gather_argv;
  std::string gather_cwd;
};

// InvalidArgument naming the flag (--kube-name, --kube-pvc, ...) whose value
// Kubernetes would refuse.
[[nodiscard]] Status CheckKubernetesOptions(const PlanKubernetesOptions& o);

// DIR/job.yaml: the batch/v1 Job, the kubectl steps in its opening comment.
std::string KubeJobYaml(const KubeJob& job);
// DIR/files-pod.yaml: a pod that mounts the same folder, to copy the inputs
// in and the point files out with kubectl cp and kubectl exec.
std::string KubeFilesPodYaml(const KubeJob& job);

// `s` as one word of a /bin/sh command line: inside single quotes nothing is
// special, and a single quote is closed, escaped and reopened.
std::string ShellQuote(std::string_view s);

}  // namespace tide::cli

#endif  // TIDE_CLI_PLAN_KUBERNETES_H_
