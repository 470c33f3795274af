// fake_dcgm_exporter --port P --file F: a stand-in for NVIDIA's DCGM
// exporter in the integration tests (metrics.sh). On every scrape of
// GET /metrics it reads F, whose lines are
//
//   <node> <util_percent> [gpus] [job]     (# comments and blank lines skipped)
//
// and answers one DCGM_FI_DEV_GPU_UTIL series per GPU (gpus default 8),
// labelled as the real exporter labels them (gpu, UUID, device, modelName,
// Hostname; hpc_job when a job is given). A job written pod:NAMESPACE/POD
// is the exporter's Kubernetes pod mapping instead: namespace, pod and
// container labels. A missing file serves no series;
// a malformed line is a 500 naming it. Listens on 127.0.0.1 only; exits 0 on
// SIGTERM or SIGINT. Prints "listening on 127.0.0.1:<port>" (port 0: any).
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "serve_on_loopback.h"

namespace {

// The page for the file's current contents, or false with `*error`.
bool Render(const std::string& path, std::string* page, std::string* error) {
  std::ostringstream out;
  out << "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
      << "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
  std::ifstream in(path);
  std::string line;
  for (int n = 1; in && std::getline(in, line); ++n) {
    std::istringstream words(line);
    std::vector<std::string> f;
    for (std::string w; words >> w;) f.push_back(w);
    if (f.empty() || f[0][0] == '#') continue;
    char* util_end = nullptr;
    char* gpus_end = nullptr;
    const double pct = f.size() >= 2 ? std::strtod(f[1].c_str(), &util_end) : -1;
    const long gpus = f.size() >= 3 ? std::strtol(f[2].c_str(), &gpus_end, 10) : 8;
    if (f.size() < 2 || f.size() > 4 || *util_end != '\0' || !(pct >= 0) ||
        (gpus_end != nullptr && *gpus_end != '\0') || gpus < 0 || gpus > 64) {
      *error = path + ":" + std::to_string(n) + ": want '<node> <util_percent> [gpus] [job]', got '" + line + "'\n";
      return false;
    }
    const std::string& node = f[0];
    const std::string job = f.size() == 4 ? f[3] : "";
    std::string owner;  // the labels naming the job or pod
    if (job.rfind("pod:", 0) == 0 && job.find('/') != std::string::npos) {
      const size_t slash = job.find('/');
      owner = ",namespace=\"" + job.substr(4, slash - 4) + "\",pod=\"" + job.substr(slash + 1) + "\",container=\"train\"";
    } else if (!job.empty()) {
      owner = ",hpc_job=\"" + job + "\"";
    }
    for (long g = 0; g < gpus; ++g) {
      out << "DCGM_FI_DEV_GPU_UTIL{gpu=\"" << g << "\",UUID=\"GPU-fake-" << node << "-" << g << "\",device=\"nvidia"
          << g << "\",modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"" << node << "\"" << owner << "} " << f[1]
          << "\n";
    }
  }
  *page = out.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int port = -1;
  std::string file;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--port")
      port = std::atoi(argv[i + 1]);
    else if (flag == "--file")
      file = argv[i + 1];
  }
  if (port < 0 || file.empty() || argc != 5) {
    std::fprintf(stderr, "usage: fake_dcgm_exporter --port P --file F\n");
    return 2;
  }
  httplib::Server server;
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    std::string page, error;
    if (Render(file, &page, &error)) {
      res.set_content(page, "text/plain; version=0.0.4; charset=utf-8");
    } else {
      res.status = 500;
      res.set_content(error, "text/plain");
    }
  });
  return tide::testing::ServeOnLoopback(server, port, "fake_dcgm_exporter");
}
