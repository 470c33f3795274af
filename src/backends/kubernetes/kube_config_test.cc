#include "backends/kubernetes/kube_config.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::backends::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Msg(const Status& s) { return std::string(Message(s)); }

constexpr char kToken[] = R"(apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority: pki/ca.crt
- name: other
  cluster:
    server: http://127.0.0.1:8001
    insecure-skip-tls-verify: true
users:
- name: tide
  user:
    token: abc123
- name: sa
  user:
    tokenFile: /var/run/token
- name: cert
  user:
    client-certificate: certs/admin.crt
    client-key: /abs/admin.key
contexts:
- name: lab
  context: {cluster: lab, user: tide}
- name: sa
  context: {cluster: other, user: sa}
- name: cert
  context: {cluster: lab, user: cert}
current-context: lab
)";

TEST(KubeconfigTest, CurrentContextWithTokenAndRelativeCa) {
  auto c = ParseKubeconfig(kToken, "/home/me/.kube/config");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_file, "/home/me/.kube/pki/ca.crt");
  EXPECT_EQ(c->token, "abc123");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_THAT(c->source, HasSubstr("context lab"));
}

TEST(KubeconfigTest, NamedContextWithTokenFileAndInsecure) {
  auto c = ParseKubeconfig(kToken, "/home/me/.kube/config", "sa");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "http://127.0.0.1:8001");
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->token_file, "/var/run/token");
  EXPECT_TRUE(c->token.empty());
}

TEST(KubeconfigTest, ClientCertificateFilesResolved) {
  auto c = ParseKubeconfig(kToken, "cfg/kubeconfig", "cert");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->client_cert_file, "cfg/certs/admin.crt");
  EXPECT_EQ(c->client_key_file, "/abs/admin.key");
}

TEST(KubeconfigTest, DataFieldsDecoded) {
  const std::string yaml = "clusters:\n- name: c\n  cluster:\n    server: https://h:1\n    certificate-authority-data: " +
                           absl::Base64Escape("CA PEM") +
                           "\nusers:\n- name: u\n  user:\n    client-certificate-data: " + absl::Base64Escape("CERT") +
                           "\n    client-key-data: " + absl::Base64Escape("KEY") +
                           "\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
  auto c = ParseKubeconfig(yaml, "/k");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ca_data, "CA PEM");
  EXPECT_EQ(c->client_cert_data, "CERT");
  EXPECT_EQ(c->client_key_data, "KEY");
}

struct BadCase {
  std::string name;
  std::string yaml;
  std::string context;
  std::string want;  // in the message, besides the file name
};

class BadKubeconfigTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadKubeconfigTest, NamesFileAndField) {
  auto c = ParseKubeconfig(GetParam().yaml, "/etc/kc", GetParam().context);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << c.status();
  EXPECT_THAT(Msg(c.status()), HasSubstr("kubeconfig /etc/kc"));
  EXPECT_THAT(Msg(c.status()), HasSubstr(GetParam().want));
}

const std::string kHead = "clusters:\n- name: c\n  cluster:\n    server: https://h:1\n";
const std::string kCtx = "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, BadKubeconfigTest,
    ::testing::Values(
        BadCase{"NotYaml", "clusters: [", "", "not valid YAML"},
        BadCase{"NotAMap", "- a\n- b\n", "", "expected a map"},
        BadCase{"NoCurrentContext", kHead, "", "current-context"},
        BadCase{"UnknownContext", kToken, "nope", "contexts: no entry named 'nope'"},
        BadCase{"TokenNotString", kHead + "users:\n- name: u\n  user:\n    token: [1]\n" + kCtx, "",
                "users[u].user.token: expected a string"},
        BadCase{"BadBase64", kHead + "users:\n- name: u\n  user:\n    client-certificate-data: '***'\n    client-key: k\n" + kCtx,
                "", "users[u].user.client-certificate-data: not valid base64"},
        BadCase{"CertWithoutKey", kHead + "users:\n- name: u\n  user:\n    client-certificate: c.crt\n" + kCtx, "",
                "client-certificate given without client-key"},
        BadCase{"ExecPlugin", kHead + "users:\n- name: u\n  user:\n    exec: {command: aws}\n" + kCtx, "",
                "users[u].user.exec"},
        BadCase{"NoServer", "clusters:\n- name: c\n  cluster: {}\nusers: []\n" + kCtx, "",
                "clusters[c].cluster.server: missing"},
        BadCase{"BadScheme", "clusters:\n- name: c\n  cluster: {server: ftp://h}\n" + kCtx, "", "not an http(s) URL"},
        BadCase{"PasswordInServer", "clusters:\n- name: c\n  cluster: {server: 'https://me:hunter2@h:6443/x'}\n" + kCtx,
                "", "clusters[c].cluster.server: holds credentials"},
        BadCase{"InsecureNotBool",
                "clusters:\n- name: c\n  cluster: {server: 'https://h', insecure-skip-tls-verify: maybe}\n" + kCtx, "",
                "insecure-skip-tls-verify: expected true or false"}),
    [](const auto& info) { return info.param.name; });

TEST(KubeconfigTest, APasswordInTheServerUrlIsNotShown) {
  auto c = ParseKubeconfig("clusters:\n- name: c\n  cluster: {server: 'ftp://me:hunter2@h'}\n" + kCtx, "/etc/kc", "");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(Msg(c.status()), Not(HasSubstr("hunter2")));
}

TEST(KubeconfigTest, MissingFileIsUnavailableAndNamed) {
  auto c = LoadKubeconfig("/nonexistent/kubeconfig");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsUnavailable(c.status()));
  EXPECT_THAT(Msg(c.status()), HasSubstr("/nonexistent/kubeconfig"));
}

TEST(InClusterTest, ReadsPathsGiven) {
  const auto dir = std::filesystem::temp_directory_path() / "tide_kube_incluster_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "token") << "tok\n";
  std::ofstream(dir / "ca.crt") << "pem";
  InClusterOptions o;
  o.host = "10.96.0.1";
  o.port = "443";
  o.token_file = (dir / "token").string();
  o.ca_file = (dir / "ca.crt").string();
  auto c = InClusterConnection(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token_file, o.token_file);
  EXPECT_EQ(c->ca_file, o.ca_file);

  o.host = "fd00::1";
  EXPECT_EQ(InClusterConnection(o)->server, "https://[fd00::1]:443");
  o.token_file = (dir / "missing").string();
  auto bad = InClusterConnection(o);
  EXPECT_TRUE(absl::IsUnavailable(bad.status()));
  EXPECT_THAT(Msg(bad.status()), HasSubstr("missing"));
  std::filesystem::remove_all(dir);
}

TEST(InClusterTest, NotInAPod) {
  EXPECT_TRUE(absl::IsFailedPrecondition(InClusterConnection(InClusterOptions{}).status()));
}

}  // namespace
}  // namespace tide::backends::kube
