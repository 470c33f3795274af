#include "cli/plan_kubernetes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace tide::cli {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// A three-point sweep (the baseline and two thresholds) as plan.cc builds it.
KubeJob ThreePoints() {
  KubeJob job;
  job.dir = "/home/me/sweep";
  job.completions = 3;
  job.point_argv = {"tide",          "plan",          "--config=/tide-plan/cluster.yaml",
                    "--trace=/tide-plan/week.csv", "--format=auto", "--sweep=threshold=1,3",
                    "--policy=tide", "--baseline=fixed:peak",       "--seed=7"};
  job.inputs = {{"/home/me/cluster.yaml", "/tide-plan/cluster.yaml"}, {"/home/me/week.csv", "/tide-plan/week.csv"}};
  job.gather_argv = {"/usr/bin/tide", "plan", "--config=cluster.yaml", "--gather=/home/me/sweep"};
  job.gather_cwd = "/home/me";
  return job;
}

std::vector<std::string> Strings(const YAML::Node& list) {
  std::vector<std::string> out;
  for (const auto& n : list) out.push_back(n.as<std::string>());
  return out;
}

TEST(PlanKubernetesTest, TheJobIsIndexedWithOnePodPerPoint) {
  const KubeJob job = ThreePoints();
  const YAML::Node y = YAML::Load(KubeJobYaml(job));
  EXPECT_EQ(y["apiVersion"].as<std::string>(), "batch/v1");
  EXPECT_EQ(y["kind"].as<std::string>(), "Job");
  EXPECT_EQ(y["metadata"]["name"].as<std::string>(), "tide-plan");
  const YAML::Node spec = y["spec"];
  EXPECT_EQ(spec["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(spec["completions"].as<int>(), 3);
  EXPECT_EQ(spec["parallelism"].as<int>(), 3) << "16 by default, never more than the points";
  EXPECT_EQ(spec["backoffLimitPerIndex"].as<int>(), 1);

  const YAML::Node pod = spec["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"].as<std::string>(), "Never");
  EXPECT_FALSE(pod["automountServiceAccountToken"].as<bool>());
  ASSERT_EQ(pod["containers"].size(), 1u);
  const YAML::Node c = pod["containers"][0];
  EXPECT_EQ(c["image"].as<std::string>(), "tide:latest");
  std::vector<std::string> command = job.point_argv;
  command.push_back("--point=$(JOB_COMPLETION_INDEX)");
  command.push_back("--json=/tide-plan/point-$(JOB_COMPLETION_INDEX).json");
  command.push_back("-q");
  EXPECT_THAT(Strings(c["command"]), ElementsAreArray(command));
  ASSERT_EQ(c["env"].size(), 1u);
  EXPECT_EQ(c["env"][0]["name"].as<std::string>(), "JOB_COMPLETION_INDEX");
  EXPECT_EQ(c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(),
            "metadata.annotations['batch.kubernetes.io/job-completion-index']");
  EXPECT_EQ(c["resources"]["requests"]["cpu"].as<std::string>(), "1");
  EXPECT_EQ(c["resources"]["requests"]["memory"].as<std::string>(), "1Gi");

  ASSERT_EQ(c["volumeMounts"].size(), 1u);
  EXPECT_EQ(c["volumeMounts"][0]["name"].as<std::string>(), "work");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"].as<std::string>(), "/tide-plan");
  EXPECT_EQ(c["volumeMounts"][0]["subPath"].as<std::string>(), "tide-plan") << "the claim's folder named after the Job";
  ASSERT_EQ(pod["volumes"].size(), 1u);
  EXPECT_EQ(pod["volumes"][0]["name"].as<std::string>(), "work");
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as<std::string>(), "tide-plan");
}

TEST(PlanKubernetesTest, OptionsReachTheManifest) {
  KubeJob job = ThreePoints();
  job.completions = 40;
  job.options.name = "sweep-7";
  job.options.image = "registry.example/tide:0.1";
  job.options.pvc = "shared.rwx";
  job.options.parallelism = 5;
  job.options.cpu = "500m";
  job.options.memory = "3Gi";
  const YAML::Node y = YAML::Load(KubeJobYaml(job));
  EXPECT_EQ(y["metadata"]["name"].as<std::string>(), "sweep-7");
  EXPECT_EQ(y["spec"]["completions"].as<int>(), 40);
  EXPECT_EQ(y["spec"]["parallelism"].as<int>(), 5);
  const YAML::Node pod = y["spec"]["template"]["spec"];
  const YAML::Node c = pod["containers"][0];
  EXPECT_EQ(c["image"].as<std::string>(), "registry.example/tide:0.1");
  EXPECT_EQ(c["resources"]["requests"]["cpu"].as<std::string>(), "500m");
  EXPECT_EQ(c["resources"]["requests"]["memory"].as<std::string>(), "3Gi");
  EXPECT_EQ(c["volumeMounts"][0]["subPath"].as<std::string>(), "sweep-7");
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as<std::string>(), "shared.rwx");
}

// Kubernetes expands $(VAR) in a command and reads "$$" as '$': every other
// '$' is doubled, and YAML's special characters stay in their quotes.
TEST(PlanKubernetesTest, ArgumentsReachThePodUnchanged) {
  KubeJob job = ThreePoints();
  job.point_argv.push_back("--baseline=$(HOME): \"#x\" 'y' \\ ü");
  const YAML::Node y = YAML::Load(KubeJobYaml(job));
  const auto command = Strings(y["spec"]["template"]["spec"]["containers"][0]["command"]);
  EXPECT_THAT(command, ::testing::Contains("--baseline=$$(HOME): \"#x\" 'y' \\ ü"));
}

TEST(PlanKubernetesTest, TheOpeningCommentHoldsTheSteps) {
  const KubeJob job = ThreePoints();
  const std::string yaml = KubeJobYaml(job);
  for (const char* step : {
           "#   kubectl apply -f '/home/me/sweep/files-pod.yaml'\n",
           "#   kubectl wait --for=condition=Ready pod/tide-plan-files\n",
           "#   kubectl cp '/home/me/cluster.yaml' 'tide-plan-files:/tide-plan/cluster.yaml'\n",
           "#   kubectl cp '/home/me/week.csv' 'tide-plan-files:/tide-plan/week.csv'\n",
           "#   kubectl apply -f '/home/me/sweep/job.yaml'\n",
           "#   kubectl wait --for=condition=Complete --timeout=24h job/tide-plan\n",
           "#   kubectl exec tide-plan-files -- sh -c 'cd /tide-plan && tar cf - point-*.json' | tar xf - -C "
           "'/home/me/sweep'\n",
           "#   cd '/home/me' && '/usr/bin/tide' 'plan' '--config=cluster.yaml' '--gather=/home/me/sweep'\n",
       }) {
    EXPECT_THAT(yaml, HasSubstr(step));
  }
}

// A path holding a newline must not end the comment.
TEST(PlanKubernetesTest, ANewlineInAPathStaysInTheComment) {
  KubeJob job = ThreePoints();
  job.inputs[1].local = "/home/me/odd\nkind: Pod";
  const YAML::Node y = YAML::Load(KubeJobYaml(job));
  EXPECT_EQ(y["kind"].as<std::string>(), "Job");
}

TEST(PlanKubernetesTest, TheFilesPodMountsTheSameFolder) {
  const KubeJob job = ThreePoints();
  const YAML::Node pod = YAML::Load(KubeFilesPodYaml(job));
  const YAML::Node job_pod = YAML::Load(KubeJobYaml(job))["spec"]["template"]["spec"];
  EXPECT_EQ(pod["kind"].as<std::string>(), "Pod");
  EXPECT_EQ(pod["metadata"]["name"].as<std::string>(), "tide-plan-files");
  EXPECT_EQ(pod["spec"]["restartPolicy"].as<std::string>(), "Never");
  const YAML::Node c = pod["spec"]["containers"][0];
  EXPECT_EQ(YAML::Dump(c["volumeMounts"]), YAML::Dump(job_pod["containers"][0]["volumeMounts"]));
  EXPECT_EQ(YAML::Dump(pod["spec"]["volumes"]), YAML::Dump(job_pod["volumes"]));
}

TEST(PlanKubernetesTest, OptionsKubernetesWouldRefuseAreNamed) {
  struct Case {
    const char* name;
    void (*set)(PlanKubernetesOptions*);
    const char* error;
  };
  const Case cases[] = {
      {"upper-case name", [](PlanKubernetesOptions* o) { o->name = "Sweep"; }, "--kube-name \"Sweep\""},
      {"long name", [](PlanKubernetesOptions* o) { o->name = std::string(51, 'a'); }, "--kube-name"},
      {"name ending in -", [](PlanKubernetesOptions* o) { o->name = "sweep-"; }, "--kube-name"},
      {"claim with /", [](PlanKubernetesOptions* o) { o->pvc = "a/b"; }, "--kube-pvc \"a/b\""},
      {"empty image", [](PlanKubernetesOptions* o) { o->image = ""; }, "--kube-image"},
      {"image with a space", [](PlanKubernetesOptions* o) { o->image = "tide latest"; }, "--kube-image"},
      {"no parallelism", [](PlanKubernetesOptions* o) { o->parallelism = 0; }, "--kube-parallelism 0"},
      {"cpu in words", [](PlanKubernetesOptions* o) { o->cpu = "one"; }, "--kube-cpu \"one\""},
      {"memory in GB", [](PlanKubernetesOptions* o) { o->memory = "2GB"; }, "--kube-memory \"2GB\""},
  };
  EXPECT_TRUE(CheckKubernetesOptions({}).ok());
  for (const Case& c : cases) {
    PlanKubernetesOptions o;
    c.set(&o);
    const Status s = CheckKubernetesOptions(o);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.error)) << c.name;
  }
  PlanKubernetesOptions fine;
  fine.name = "sweep-7";
  fine.pvc = "shared.rwx";
  fine.cpu = "0.5";
  fine.memory = "512Mi";
  EXPECT_TRUE(CheckKubernetesOptions(fine).ok());
}

}  // namespace
}  // namespace tide::cli
