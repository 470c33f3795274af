// Where and how to reach a Kubernetes API server: from a kubeconfig file (a
// named context or its current-context) or from inside a pod (the service
// account's token and CA). The result, a Connection, is what the transport
// (kube_http.h) needs; nothing here opens a socket.
//
// Errors are InvalidArgument naming the file and the field
// ("kubeconfig /home/me/.kube/config: users[admin].user.token: expected a
// string"), or Unavailable naming the file when it cannot be read.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_CONFIG_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_CONFIG_H_

#include <string>
#include <string_view>

#include "core/status.h"

namespace tide::backends::kube {

// One API server and one identity. Paths are absolute (relative ones in a
// kubeconfig are resolved against its folder); `*_data` fields hold PEM text
// (already base64-decoded). When both a file and data are given, the data
// wins, as in kubectl.
struct Connection {
  std::string server;  // "https://host:port[/prefix]", or http:// for a test proxy
  std::string ca_file;
  std::string ca_data;
  bool insecure_skip_tls_verify = false;
  // Bearer token: inline, or a file re-read on each new connection (service
  // account tokens rotate). The inline token wins.
  std::string token;
  std::string token_file;
  std::string client_cert_file;
  std::string client_cert_data;
  std::string client_key_file;
  std::string client_key_data;
  // Where this came from, for messages: "kubeconfig /p (context c)", "in-cluster".
  std::string source;
};

// Reads the kubeconfig at `path` and resolves `context` (empty: its
// current-context). Unavailable if the file cannot be read; InvalidArgument,
// naming the file and field, if it is not a kubeconfig tide can use (no such
// context, cluster or user; wrong types; bad base64; exec or auth-provider
// credentials, which tide does not run).
Result<Connection> LoadKubeconfig(const std::string& path, std::string_view context = "");

// The same on text already read: `path` is used in messages and its folder
// to resolve relative paths.
Result<Connection> ParseKubeconfig(std::string_view yaml, const std::string& path, std::string_view context = "");

// In-cluster configuration. The values are parameters, so tests can point
// them elsewhere; InClusterOptionsFromEnvironment() fills them the usual way.
struct InClusterOptions {
  std::string host;  // $KUBERNETES_SERVICE_HOST
  std::string port;  // $KUBERNETES_SERVICE_PORT
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
};
InClusterOptions InClusterOptionsFromEnvironment();

// FailedPrecondition when host or port is empty (not running in a pod);
// Unavailable, naming the file, when the token or CA file cannot be read.
// The token is not kept: the transport re-reads token_file.
Result<Connection> InClusterConnection(const InClusterOptions& options);

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_CONFIG_H_
