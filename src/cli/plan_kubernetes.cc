#include "cli/plan_kubernetes.h"

#include <algorithm>

#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::cli {
namespace {

// A name Kubernetes takes as a DNS label: lowercase letters, digits and '-',
// starting and ending with a letter or digit; `dots` also allows '.' (a DNS
// subdomain, as claim names are).
bool IsDnsName(std::string_view s, size_t max, bool dots) {
  if (s.empty() || s.size() > max) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || (dots && c == '.'); });
}

// A resource quantity as requests take it: a decimal number and an optional
// suffix (m, k, M, G, ..., Ki, Mi, Gi, ...).
bool IsQuantity(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  if (i == 0 || std::count(s.begin(), s.begin() + i, '.') > 1 || s[0] == '.' || s[i - 1] == '.') return false;
  static constexpr std::string_view kSuffixes[] = {"",  "m",  "k",  "M",  "G",  "T",  "P",
                                                   "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  return std::find(std::begin(kSuffixes), std::end(kSuffixes), s.substr(i)) != std::end(kSuffixes);
}

// `s` as a YAML double-quoted scalar (a JSON string is one).
std::string Quoted(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `s` with every '$' doubled: Kubernetes expands $(VAR) in a container's
// command and reads "$$" as one '$', so no sweep value or path is expanded.
std::string KubeLiteral(std::string_view s) {
  std::string out;
  for (char c : s) {
    out.push_back(c);
    if (c == '$') out.push_back('$');
  }
  return out;
}

std::string InPod(std::string_view file) { return StrCat(kKubeMount, "/", file); }

std::string FilesPod(const KubeJob& job) { return StrCat(job.options.name, "-files"); }

// Lines of `# text`; a newline inside `text` (a path may hold one) starts
// another comment line, so the manifest stays YAML.
void Comment(std::string* out, std::string_view text) {
  std::string line = "#";
  if (!text.empty()) StrAppend(&line, " ");
  for (char c : text) {
    line.push_back(c);
    if (c == '\n') line += "# ";
  }
  StrAppend(out, line, "\n");
}

// The labels of both manifests' objects and pods, at `indent`.
std::string Labels(const KubeJob& job, int indent) {
  const std::string pad(indent, ' ');
  return StrCat(pad, "labels:\n", pad, "  app.kubernetes.io/name: tide\n", pad,
                "  app.kubernetes.io/component: plan\n", pad, "  app.kubernetes.io/instance: ", Quoted(job.options.name),
                "\n");
}

// The claim's folder named after the Job, at kKubeMount: the volume and its
// mount, for a pod spec at 4 spaces. The kubelet makes the folder if it is
// missing.
std::string VolumeMount(const KubeJob& job) {
  return StrCat("          volumeMounts:\n            - name: work\n              mountPath: ", Quoted(kKubeMount),
                "\n              subPath: ", Quoted(job.options.name), "\n");
}
std::string Volumes(const KubeJob& job) {
  return StrCat("      volumes:\n        - name: work\n          persistentVolumeClaim:\n            claimName: ",
                Quoted(job.options.pvc), "\n");
}

// The opening comment: what the Job is and the kubectl steps that run it.
std::string Steps(const KubeJob& job) {
  const PlanKubernetesOptions& o = job.options;
  const std::string files = FilesPod(job);
  const std::string job_yaml = StrCat(job.dir, "/job.yaml"), pod_yaml = StrCat(job.dir, "/files-pod.yaml");
  std::string out;
  Comment(&out, StrCat("tide plan --kubernetes: the sweep's ", job.completions,
                       " points as a Kubernetes Indexed Job (docs/design/sweep.md)."));
  Comment(&out, StrCat("Pod I runs point I (the baseline first, if any) and writes point-I.json into the folder"));
  Comment(&out, StrCat(o.name, "/ of the ReadWriteMany PersistentVolumeClaim ", Quoted(o.pvc), ", mounted at ",
                       kKubeMount, "; the"));
  Comment(&out, "configuration and the trace must be copied there first. The claim must exist in the");
  Comment(&out, StrCat("namespace, and the image ", o.image, " must hold tide on its PATH."));
  Comment(&out, "");
  Comment(&out, "The steps:");
  auto step = [&](const std::string& command) { Comment(&out, StrCat("  ", command)); };
  step(StrCat("kubectl apply -f ", ShellQuote(pod_yaml)));
  step(StrCat("kubectl wait --for=condition=Ready pod/", files));
  for (const KubeInput& in : job.inputs) {
    const std::string parent = in.in_pod.substr(0, in.in_pod.rfind('/'));
    if (parent != kKubeMount) step(StrCat("kubectl exec ", files, " -- mkdir -p ", ShellQuote(parent)));
    step(StrCat("kubectl cp ", ShellQuote(in.local), " ", ShellQuote(StrCat(files, ":", in.in_pod))));
  }
  step(StrCat("kubectl apply -f ", ShellQuote(job_yaml)));
  step(StrCat("kubectl wait --for=condition=Complete --timeout=24h job/", o.name));
  step(StrCat("kubectl exec ", files, " -- sh -c 'cd ", kKubeMount, " && tar cf - point-*.json' | tar xf - -C ",
              ShellQuote(job.dir)));
  std::vector<std::string> gather = {"cd", ShellQuote(job.gather_cwd), "&&"};
  for (const auto& a : job.gather_argv) gather.push_back(ShellQuote(a));
  step(StrJoin(gather, " "));
  step(StrCat("kubectl delete -f ", ShellQuote(job_yaml), " -f ", ShellQuote(pod_yaml)));
  Comment(&out, "");
  Comment(&out, "A point whose pod fails twice fails its index (backoffLimitPerIndex, Kubernetes 1.29 or");
  Comment(&out, "later) and the Job ends Failed, not Complete: gather anyway, and --gather names every point");
  Comment(&out, "without a result; its pod's log:");
  Comment(&out, StrCat("  kubectl logs -l job-name=", o.name, ",batch.kubernetes.io/job-completion-index=I"));
  return out;
}

}  // namespace

std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  out += "'";
  return out;
}

Status CheckKubernetesOptions(const PlanKubernetesOptions& o) {
  // The pods' names add "-<index>-<5 letters>" to the Job's, within 63.
  if (!IsDnsName(o.name, 50, false)) {
    return absl::InvalidArgumentError(
        StrCat("--kube-name ", Quoted(o.name),
               ": not a Job name Kubernetes takes (lowercase letters, digits and '-', at most 50)"));
  }
  if (!IsDnsName(o.pvc, 253, true)) {
    return absl::InvalidArgumentError(
        StrCat("--kube-pvc ", Quoted(o.pvc), ": not a claim name (lowercase letters, digits, '-' and '.')"));
  }
  if (o.image.empty() || std::any_of(o.image.begin(), o.image.end(), [](char c) { return c <= ' '; })) {
    return absl::InvalidArgumentError(StrCat("--kube-image ", Quoted(o.image), ": not an image name"));
  }
  if (o.parallelism < 1) {
    return absl::InvalidArgumentError(StrCat("--kube-parallelism ", o.parallelism, ": must be at least 1"));
  }
  if (!IsQuantity(o.cpu)) {
    return absl::InvalidArgumentError(StrCat("--kube-cpu ", Quoted(o.cpu), ": not a quantity (1, 500m, 2)"));
  }
  if (!IsQuantity(o.memory)) {
    return absl::InvalidArgumentError(StrCat("--kube-memory ", Quoted(o.memory), ": not a quantity (1Gi, 512Mi)"));
  }
  return OkStatus();
}

std::string KubeJobYaml(const KubeJob& job) {
  const PlanKubernetesOptions& o = job.options;
  std::string out = Steps(job);
  StrAppend(&out, "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: ", Quoted(o.name), "\n", Labels(job, 2));
  StrAppend(&out, "spec:\n  completionMode: Indexed\n  completions: ", job.completions, "\n  parallelism: ",
            std::min<size_t>(static_cast<size_t>(o.parallelism), job.completions),
            "\n  backoffLimitPerIndex: 1\n  template:\n    metadata:\n", Labels(job, 6));
  StrAppend(&out,
            "    spec:\n      restartPolicy: Never\n      automountServiceAccountToken: false\n      containers:\n"
            "        - name: point\n          image: ",
            Quoted(o.image), "\n          imagePullPolicy: IfNotPresent\n          command:\n");
  // The control plane sets JOB_COMPLETION_INDEX too; saying so here makes
  // $(JOB_COMPLETION_INDEX) expand on any version.
  std::vector<std::string> argv;
  for (const auto& a : job.point_argv) argv.push_back(KubeLiteral(a));
  argv.push_back("--point=$(JOB_COMPLETION_INDEX)");
  argv.push_back(StrCat("--json=", KubeLiteral(InPod("point-")), "$(JOB_COMPLETION_INDEX).json"));
  argv.push_back("-q");
  for (const auto& a : argv) StrAppend(&out, "            - ", Quoted(a), "\n");
  StrAppend(&out,
            "          env:\n            - name: JOB_COMPLETION_INDEX\n              valueFrom:\n"
            "                fieldRef:\n"
            "                  fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']\n"
            "          resources:\n            requests:\n              cpu: ",
            Quoted(o.cpu), "\n              memory: ", Quoted(o.memory), "\n", VolumeMount(job), Volumes(job));
  return out;
}

std::string KubeFilesPodYaml(const KubeJob& job) {
  std::string out;
  Comment(&out, StrCat("tide plan --kubernetes: a pod that mounts the Job's folder of the claim ", Quoted(job.options.pvc),
                       ","));
  Comment(&out, "for kubectl cp and kubectl exec: the inputs go in, the point files come out (the steps are at");
  Comment(&out, "the top of job.yaml). Delete it when the sweep is gathered.");
  StrAppend(&out, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", Quoted(FilesPod(job)), "\n", Labels(job, 2));
  StrAppend(&out,
            "spec:\n  restartPolicy: Never\n  automountServiceAccountToken: false\n  containers:\n"
            "    - name: files\n      image: \"busybox:1.36\"\n      command: [\"sleep\", \"86400\"]\n");
  // The same mount as the Job's pods, 4 spaces less deep.
  for (const std::string& block : {VolumeMount(job), Volumes(job)}) {
    for (std::string_view line : Split(block, '\n', true)) {
      StrAppend(&out, line.substr(4), "\n");
    }
  }
  return out;
}

}  // namespace tide::cli
