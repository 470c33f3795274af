#include "backends/kubernetes/kube_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "absl/strings/escaping.h"
#include "core/files.h"
#include "core/strings.h"

namespace tide::backends::kube {
namespace {

// Reads fields of one kubeconfig, naming the file in every error.
class Reader {
 public:
  Reader(const std::string& path) : path_(path) {
    std::filesystem::path p(path);
    dir_ = p.has_parent_path() ? p.parent_path().string() : ".";
  }

  Status Error(std::string_view field, std::string_view problem) const {
    return absl::InvalidArgumentError(StrCat("kubeconfig ", path_, ": ", field, ": ", problem));
  }

  // The string at node[key]; nullopt when absent or null.
  Result<std::optional<std::string>> String(const YAML::Node& node, const char* key, std::string_view field) const {
    const YAML::Node v = node[key];
    if (!v || v.IsNull()) return std::optional<std::string>();
    if (!v.IsScalar()) return Error(field, "expected a string");
    return std::optional<std::string>(v.Scalar());
  }

  Result<bool> Bool(const YAML::Node& node, const char* key, std::string_view field) const {
    const YAML::Node v = node[key];
    if (!v || v.IsNull()) return false;
    if (!v.IsScalar()) return Error(field, "expected true or false");
    const std::string s = ToLower(v.Scalar());
    if (s == "true") return true;
    if (s == "false") return false;
    return Error(field, StrCat("expected true or false, got '", v.Scalar(), "'"));
  }

  // Base64 data fields (certificate-authority-data and the like).
  Result<std::string> Base64(const std::string& text, std::string_view field) const {
    std::string out;
    if (!absl::Base64Unescape(text, &out)) return Error(field, "not valid base64");
    return out;
  }

  std::string Resolve(const std::string& file) const {
    if (file.empty() || file.front() == '/') return file;
    return (std::filesystem::path(dir_) / file).lexically_normal().string();
  }

  // The entry of list `section` (clusters, users, contexts) named `name`: its
  // inner map (the `cluster`, `user` or `context` key).
  Result<YAML::Node> Named(const YAML::Node& root, const char* section, const char* inner,
                           const std::string& name) const {
    const YAML::Node list = root[section];
    if (!list || list.IsNull()) return Error(section, StrCat("missing, so '", name, "' is not defined"));
    if (!list.IsSequence()) return Error(section, "expected a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node entry = list[i];
      const std::string field = StrCat(section, "[", i, "]");
      if (!entry.IsMap()) return Error(field, "expected a map");
      TIDE_ASSIGN_OR_RETURN(auto n, String(entry, "name", StrCat(field, ".name")));
      if (!n || *n != name) continue;
      const YAML::Node body = entry[inner];
      if (!body || !body.IsMap()) return Error(StrCat(section, "[", name, "].", inner), "expected a map");
      return body;
    }
    return Error(section, StrCat("no entry named '", name, "'"));
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string dir_;
};

// True if the URL's authority holds user information (user:password@host).
bool HasUserinfo(std::string_view url) {
  const size_t start = url.find("://");
  if (start == std::string_view::npos) return false;
  return url.substr(start + 3, url.find('/', start + 3) - start - 3).find('@') != std::string_view::npos;
}

Result<Connection> Parse(const YAML::Node& root, const Reader& r, std::string_view wanted) {
  if (!root.IsMap()) return r.Error("(top level)", "expected a map (is this a kubeconfig?)");
  std::string context(wanted);
  if (context.empty()) {
    TIDE_ASSIGN_OR_RETURN(auto cur, r.String(root, "current-context", "current-context"));
    if (!cur || cur->empty()) return r.Error("current-context", "not set, and no context was named");
    context = *cur;
  }
  TIDE_ASSIGN_OR_RETURN(YAML::Node ctx, r.Named(root, "contexts", "context", context));
  const std::string cf = StrCat("contexts[", context, "].context");
  TIDE_ASSIGN_OR_RETURN(auto cluster_name, r.String(ctx, "cluster", StrCat(cf, ".cluster")));
  TIDE_ASSIGN_OR_RETURN(auto user_name, r.String(ctx, "user", StrCat(cf, ".user")));
  if (!cluster_name || cluster_name->empty()) return r.Error(StrCat(cf, ".cluster"), "missing");

  Connection c;
  c.source = StrCat("kubeconfig ", r.path(), " (context ", context, ")");
  TIDE_ASSIGN_OR_RETURN(YAML::Node cluster, r.Named(root, "clusters", "cluster", *cluster_name));
  const std::string kf = StrCat("clusters[", *cluster_name, "].cluster");
  TIDE_ASSIGN_OR_RETURN(auto server, r.String(cluster, "server", StrCat(kf, ".server")));
  if (!server || server->empty()) return r.Error(StrCat(kf, ".server"), "missing");
  // Errors about the API server name its URL, and they go to the log and to
  // /status: a password in the URL would go with them. Refused unshown.
  if (HasUserinfo(*server)) {
    return r.Error(StrCat(kf, ".server"),
                   "holds credentials (user:password@); give them as the user's token or client certificate");
  }
  if (!server->starts_with("https://") && !server->starts_with("http://")) {
    return r.Error(StrCat(kf, ".server"), StrCat("'", *server, "' is not an http(s) URL"));
  }
  c.server = *server;
  while (c.server.size() > 8 && c.server.back() == '/') c.server.pop_back();
  TIDE_ASSIGN_OR_RETURN(auto ca, r.String(cluster, "certificate-authority", StrCat(kf, ".certificate-authority")));
  if (ca) c.ca_file = r.Resolve(*ca);
  TIDE_ASSIGN_OR_RETURN(auto ca_data,
                        r.String(cluster, "certificate-authority-data", StrCat(kf, ".certificate-authority-data")));
  if (ca_data) {
    TIDE_ASSIGN_OR_RETURN(c.ca_data, r.Base64(*ca_data, StrCat(kf, ".certificate-authority-data")));
  }
  TIDE_ASSIGN_OR_RETURN(c.insecure_skip_tls_verify,
                        r.Bool(cluster, "insecure-skip-tls-verify", StrCat(kf, ".insecure-skip-tls-verify")));

  if (!user_name || user_name->empty()) return c;  // anonymous
  TIDE_ASSIGN_OR_RETURN(YAML::Node user, r.Named(root, "users", "user", *user_name));
  const std::string uf = StrCat("users[", *user_name, "].user");
  for (const char* unsupported : {"exec", "auth-provider"}) {
    if (user[unsupported] && !user[unsupported].IsNull()) {
      return r.Error(StrCat(uf, ".", unsupported),
                     "credential plugins are not supported by tide: use a token, tokenFile or client certificate");
    }
  }
  TIDE_ASSIGN_OR_RETURN(auto token, r.String(user, "token", StrCat(uf, ".token")));
  if (token) c.token = *token;
  TIDE_ASSIGN_OR_RETURN(auto token_file, r.String(user, "tokenFile", StrCat(uf, ".tokenFile")));
  if (token_file) c.token_file = r.Resolve(*token_file);
  struct PemField {
    const char* file_key;
    const char* data_key;
    std::string* file;
    std::string* data;
  };
  for (const PemField& f : {PemField{"client-certificate", "client-certificate-data", &c.client_cert_file,
                                     &c.client_cert_data},
                            PemField{"client-key", "client-key-data", &c.client_key_file, &c.client_key_data}}) {
    TIDE_ASSIGN_OR_RETURN(auto file, r.String(user, f.file_key, StrCat(uf, ".", f.file_key)));
    if (file) *f.file = r.Resolve(*file);
    TIDE_ASSIGN_OR_RETURN(auto data, r.String(user, f.data_key, StrCat(uf, ".", f.data_key)));
    if (data) {
      TIDE_ASSIGN_OR_RETURN(*f.data, r.Base64(*data, StrCat(uf, ".", f.data_key)));
    }
  }
  const bool has_cert = !c.client_cert_file.empty() || !c.client_cert_data.empty();
  const bool has_key = !c.client_key_file.empty() || !c.client_key_data.empty();
  if (has_cert != has_key) {
    return r.Error(uf, has_cert ? "client-certificate given without client-key" : "client-key given without client-certificate");
  }
  return c;
}

}  // namespace

Result<Connection> ParseKubeconfig(std::string_view yaml, const std::string& path, std::string_view context) {
  const Reader reader(path);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        StrCat("kubeconfig ", path, ": line ", e.mark.line + 1, ": not valid YAML: ", e.msg));
  }
  try {
    return Parse(root, reader, context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(StrCat("kubeconfig ", path, ": line ", e.mark.line + 1, ": ", e.msg));
  }
}

Result<Connection> LoadKubeconfig(const std::string& path, std::string_view context) {
  auto text = ReadFile(path);
  if (!text.ok()) return absl::UnavailableError(StrCat("kubeconfig ", path, ": ", Message(text.status())));
  return ParseKubeconfig(*text, path, context);
}

InClusterOptions InClusterOptionsFromEnvironment() {
  InClusterOptions o;
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST")) o.host = h;
  if (const char* p = std::getenv("KUBERNETES_SERVICE_PORT")) o.port = p;
  return o;
}

Result<Connection> InClusterConnection(const InClusterOptions& options) {
  if (options.host.empty() || options.port.empty()) {
    return absl::FailedPreconditionError(
        "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set (not running in a pod?)");
  }
  for (const std::string* f : {&options.token_file, &options.ca_file}) {
    auto text = ReadFile(*f);
    if (!text.ok()) return absl::UnavailableError(StrCat("in-cluster: ", Message(text.status())));
  }
  Connection c;
  const bool v6 = Contains(options.host, ":");
  c.server = StrCat("https://", v6 ? "[" : "", options.host, v6 ? "]" : "", ":", options.port);
  c.token_file = options.token_file;
  c.ca_file = options.ca_file;
  c.source = "in-cluster";
  return c;
}

}  // namespace tide::backends::kube
