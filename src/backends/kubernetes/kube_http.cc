#include "backends/kubernetes/kube_http.h"

#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>

#include "core/files.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube {
namespace {

using json = nlohmann::json;

std::string_view Reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

struct ServerUrl {
  bool https = true;
  std::string host;
  int port = 443;
  std::string prefix;  // "" or "/some/prefix"
};

Result<ServerUrl> ParseServer(const Connection& c) {
  ServerUrl u;
  std::string_view s = c.server;
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat(c.source, ": server '", c.server, "': ", why));
  };
  if (s.starts_with("https://")) {
    s.remove_prefix(8);
  } else if (s.starts_with("http://")) {
    s.remove_prefix(7);
    u.https = false;
    u.port = 80;
  } else {
    return bad("not an http(s) URL");
  }
  const size_t slash = s.find('/');
  std::string_view hostport = s.substr(0, slash);
  if (slash != std::string_view::npos) {
    u.prefix = std::string(s.substr(slash));
    while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
  }
  std::string_view port;
  if (hostport.starts_with("[")) {  // [v6]:port
    const size_t close = hostport.find(']');
    if (close == std::string_view::npos) return bad("unclosed '['");
    u.host = std::string(hostport.substr(1, close - 1));
    if (close + 1 < hostport.size()) {
      if (hostport[close + 1] != ':') return bad("expected ':' after ']'");
      port = hostport.substr(close + 2);
    }
  } else {
    const size_t colon = hostport.rfind(':');
    u.host = std::string(hostport.substr(0, colon));
    if (colon != std::string_view::npos) port = hostport.substr(colon + 1);
  }
  if (u.host.empty()) return bad("no host");
  if (!port.empty()) {
    int p = 0;
    if (!ParseInt(port, &p) || p <= 0 || p > 65535) return bad(StrCat("bad port '", port, "'"));
    u.port = p;
  }
  return u;
}

// PEM text: the data when given, else the file's contents.
Result<std::string> Pem(const Connection& c, const std::string& data, const std::string& file, std::string_view what) {
  if (!data.empty()) return data;
  auto text = ReadFile(file);
  if (!text.ok()) return absl::UnavailableError(StrCat(c.source, ": ", what, ": ", Message(text.status())));
  return *text;
}

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioDeleter>;
Bio MemBio(const std::string& s) { return Bio(BIO_new_mem_buf(s.data(), static_cast<int>(s.size()))); }

// Blocks SIGPIPE on this thread while it lives, and swallows one that the
// call caused: OpenSSL writes to a socket the API server may have closed
// (a watch it ended, a TLS shutdown), and a write to a closed socket would
// kill the whole program. The process-wide disposition is left alone.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE);
  }
  ~SigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE)) {
      const timespec zero{0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
};

}  // namespace

Status StatusFromReply(const Reply& reply, std::string_view what) {
  if (reply.status >= 200 && reply.status < 300) return OkStatus();
  std::string detail;
  std::string reason;
  if (auto j = json::parse(reply.body, nullptr, false); j.is_object()) {
    if (auto m = j.find("message"); m != j.end() && m->is_string()) detail = m->get<std::string>();
    if (auto r = j.find("reason"); r != j.end() && r->is_string()) reason = r->get<std::string>();
  }
  if (detail.empty()) detail = std::string(StripWhitespace(std::string_view(reply.body).substr(0, 200)));
  const std::string_view phrase = Reason(reply.status);
  std::string msg = StrCat(what, ": HTTP ", reply.status, phrase.empty() ? "" : " ", phrase);
  if (!reason.empty() && reason != phrase) StrAppend(&msg, " (", reason, ")");
  if (!detail.empty()) StrAppend(&msg, ": ", detail);
  const int s = reply.status;
  if (s == 400 || s == 422) return absl::InvalidArgumentError(msg);
  if (s == 401) return absl::UnauthenticatedError(msg);
  if (s == 403) return absl::PermissionDeniedError(msg);
  if (s == 404) return absl::NotFoundError(msg);
  if (s == 409) return reason == "AlreadyExists" ? absl::AlreadyExistsError(msg) : absl::AbortedError(msg);
  if (s == 410) return absl::OutOfRangeError(msg);
  if (s == 429) return absl::ResourceExhaustedError(msg);
  if (s >= 500 || s == 0) return absl::UnavailableError(msg);
  return absl::UnknownError(msg);
}

bool IsGone(const Status& status) { return absl::IsOutOfRange(status); }

namespace {

// Ends a client's call once `limit` has passed, whatever the server sends:
// the per-read timeouts alone let a server that trickles its reply hold a
// call, and the controller's loop with it, for as long as it likes. The
// watch is a thread that sleeps until the limit or until the call returned.
class CallDeadline {
 public:
  CallDeadline(httplib::ClientImpl* client, Duration limit)
      : thread_([this, client, limit](std::stop_token stop) {
          std::mutex mu;
          std::condition_variable_any cv;
          std::unique_lock lock(mu);
          if (cv.wait_for(lock, stop, limit, [] { return false; }) || stop.stop_requested()) return;
          expired_ = true;
          // Again until the call returns: a stop while it still connects
          // has no socket to shut yet.
          do {
            client->stop();
          } while (!cv.wait_for(lock, stop, std::chrono::milliseconds(100), [] { return false; }) &&
                   !stop.stop_requested());
        }) {}

  // The call returned: ends the watch, and says whether it cut the call.
  bool Expired() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
    return expired_;
  }

 private:
  std::atomic<bool> expired_{false};
  std::jthread thread_;
};

}  // namespace

struct HttpTransport::Impl {
  Connection connection;
  HttpOptions options;
  ServerUrl url;
  X509* cert = nullptr;
  EVP_PKEY* key = nullptr;
  std::string ca_pem;  // from ca_data; ca_file is handed to httplib by path

  ~Impl() {
    if (cert != nullptr) X509_free(cert);
    if (key != nullptr) EVP_PKEY_free(key);
  }

  std::string Where() const { return StrCat("API server ", connection.server); }

  Result<std::string> Token() const {
    if (!connection.token.empty()) return connection.token;
    if (connection.token_file.empty()) return std::string();
    auto text = ReadFile(connection.token_file);
    if (!text.ok()) {
      return absl::UnavailableError(StrCat(connection.source, ": token file: ", Message(text.status())));
    }
    return std::string(StripWhitespace(*text));
  }

  // Idle clients whose connection (TLS included) the next request reuses:
  // a fresh connection per request costs a TCP and a TLS handshake on both
  // sides, which at thousands of bindings a minute is most of the work.
  // A client is used by one request at a time; it goes back here only after
  // a whole reply, and is dropped on any failure or deadline.
  static constexpr size_t kMaxIdle = 16;
  std::mutex idle_mu;
  std::vector<std::unique_ptr<httplib::ClientImpl>> idle;

  Result<std::unique_ptr<httplib::ClientImpl>> TakeClient() {
    std::unique_ptr<httplib::ClientImpl> client;
    {
      std::lock_guard lock(idle_mu);
      if (!idle.empty()) {
        client = std::move(idle.back());
        idle.pop_back();
      }
    }
    if (client == nullptr) {
      TIDE_ASSIGN_OR_RETURN(client, NewClient(options.read_timeout));
      client->set_keep_alive(true);
      return client;
    }
    // The token is read for every request (a projected token rotates).
    TIDE_ASSIGN_OR_RETURN(std::string token, Token());
    if (!token.empty()) client->set_bearer_token_auth(token.c_str());
    return client;
  }

  void GiveBack(std::unique_ptr<httplib::ClientImpl> client) {
    std::lock_guard lock(idle_mu);
    if (idle.size() < kMaxIdle) idle.push_back(std::move(client));
  }

  // A fresh client for one call: the token is read now.
  Result<std::unique_ptr<httplib::ClientImpl>> NewClient(Duration read_timeout) const {
    std::unique_ptr<httplib::ClientImpl> client;
    if (url.https) {
      auto ssl = cert != nullptr ? std::make_unique<httplib::SSLClient>(url.host, url.port, cert, key)
                                 : std::make_unique<httplib::SSLClient>(url.host, url.port);
      if (!ssl->is_valid()) return absl::InternalError(StrCat(Where(), ": could not set up TLS"));
      ssl->enable_server_certificate_verification(!connection.insecure_skip_tls_verify);
      if (!ca_pem.empty()) {
        X509_STORE* store = X509_STORE_new();
        Bio bio = MemBio(ca_pem);
        while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
          X509_STORE_add_cert(store, x);
          X509_free(x);
        }
        ssl->set_ca_cert_store(store);  // the client's TLS context owns it now
      } else if (!connection.ca_file.empty()) {
        ssl->set_ca_cert_path(connection.ca_file.c_str());
      }
      client = std::move(ssl);
    } else {
      client = std::make_unique<httplib::ClientImpl>(url.host, url.port);
    }
    client->set_connection_timeout(std::chrono::seconds(options.connect_timeout.count()));
    client->set_read_timeout(std::chrono::seconds(read_timeout.count()));
    client->set_write_timeout(std::chrono::seconds(options.read_timeout.count()));
    client->set_url_encode(false);  // callers encode their paths and queries
    client->set_keep_alive(false);
    TIDE_ASSIGN_OR_RETURN(std::string token, Token());
    if (!token.empty()) client->set_bearer_token_auth(token.c_str());
    return client;
  }

  httplib::Headers Headers() const {
    return {{"Accept", "application/json"}, {"User-Agent", options.user_agent}};
  }

  Status Failed(const httplib::ClientImpl& client, httplib::Error error, std::string_view path) const {
    std::string msg = StrCat(Where(), ": ", path, ": no reply: ", httplib::to_string(error));
    if (error == httplib::Error::SSLServerVerification && url.https) {
      const long v = static_cast<const httplib::SSLClient&>(client).get_openssl_verify_result();
      StrAppend(&msg, " (", X509_verify_cert_error_string(v), ")");
    }
    return absl::UnavailableError(msg);
  }
};

HttpTransport::HttpTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpTransport::~HttpTransport() = default;

Result<std::unique_ptr<HttpTransport>> HttpTransport::Create(const Connection& connection, HttpOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->connection = connection;
  impl->options = std::move(options);
  TIDE_ASSIGN_OR_RETURN(impl->url, ParseServer(connection));
  const Connection& c = connection;
  if (!c.client_cert_data.empty() || !c.client_cert_file.empty()) {
    TIDE_ASSIGN_OR_RETURN(std::string cert_pem, Pem(c, c.client_cert_data, c.client_cert_file, "client-certificate"));
    TIDE_ASSIGN_OR_RETURN(std::string key_pem, Pem(c, c.client_key_data, c.client_key_file, "client-key"));
    impl->cert = PEM_read_bio_X509(MemBio(cert_pem).get(), nullptr, nullptr, nullptr);
    if (impl->cert == nullptr) {
      return absl::InvalidArgumentError(StrCat(c.source, ": client-certificate: not a PEM certificate"));
    }
    impl->key = PEM_read_bio_PrivateKey(MemBio(key_pem).get(), nullptr, nullptr, nullptr);
    if (impl->key == nullptr) return absl::InvalidArgumentError(StrCat(c.source, ": client-key: not a PEM private key"));
  }
  if (!c.ca_data.empty()) {
    Bio bio = MemBio(c.ca_data);
    X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (x == nullptr) {
      return absl::InvalidArgumentError(StrCat(c.source, ": certificate-authority-data: not a PEM certificate"));
    }
    X509_free(x);
    impl->ca_pem = c.ca_data;
  } else if (!c.ca_file.empty()) {
    auto text = ReadFile(c.ca_file);
    if (!text.ok()) return absl::UnavailableError(StrCat(c.source, ": certificate-authority: ", Message(text.status())));
  }
  return std::unique_ptr<HttpTransport>(new HttpTransport(std::move(impl)));
}

Result<Reply> HttpTransport::Request(std::string_view method, std::string_view path_with_query, std::string_view body,
                                     std::string_view content_type) {
  const SigpipeBlock no_sigpipe;  // outlives the client, whose destructor may write
  TIDE_ASSIGN_OR_RETURN(auto client, impl_->TakeClient());
  httplib::Request req;
  req.method = std::string(method);
  req.path = StrCat(impl_->url.prefix, path_with_query);
  req.headers = impl_->Headers();
  if (!body.empty()) {
    req.body = std::string(body);
    req.headers.emplace("Content-Type", std::string(content_type));
  }
  CallDeadline deadline(client.get(), impl_->options.read_timeout);
  httplib::Result res = client->send(req);
  const bool expired = deadline.Expired();
  if (!res && expired) {
    return absl::DeadlineExceededError(StrCat(impl_->Where(), ": ", method, " ", path_with_query,
                                              ": no whole reply within ", FormatDuration(impl_->options.read_timeout)));
  }
  if (!res) return impl_->Failed(*client, res.error(), StrCat(method, " ", path_with_query));
  Reply reply{res->status, std::move(res->body)};
  if (!expired) impl_->GiveBack(std::move(client));
  return reply;
}

Status HttpTransport::Watch(std::string_view path_with_query, const LineHandler& on_line, std::stop_token stop,
                            const std::function<void()>& on_open) {
  const SigpipeBlock no_sigpipe;  // outlives the client, whose destructor may write
  TIDE_ASSIGN_OR_RETURN(auto client, impl_->NewClient(impl_->options.watch_read_timeout));
  const std::string what = StrCat("watch ", path_with_query);
  int status = 0;
  std::string error_body;  // the reply's body when it is not 200
  std::string pending;     // a line not yet complete
  bool ended_by_handler = false;
  httplib::Request req;
  req.method = "GET";
  req.path = StrCat(impl_->url.prefix, path_with_query);
  req.headers = impl_->Headers();
  req.response_handler = [&](const httplib::Response& r) {
    status = r.status;
    if (status == 200 && on_open) on_open();
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (status != 200) {
      if (error_body.size() < 65536) error_body.append(data, n);
      return true;
    }
    pending.append(data, n);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(pending.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      if (!on_line(line)) {
        ended_by_handler = true;
        return false;
      }
    }
    pending.erase(0, start);
    return true;
  };
  if (stop.stop_requested()) return absl::CancelledError(StrCat(what, ": stopped"));
  std::stop_callback cancel(stop, [&client] { client->stop(); });
  httplib::Result res = client->send(req);
  if (ended_by_handler) return OkStatus();
  if (stop.stop_requested()) return absl::CancelledError(StrCat(what, ": stopped"));
  if (!res) return impl_->Failed(*client, res.error(), what);
  if (status != 200) return StatusFromReply(Reply{status, error_body}, what);
  if (std::string_view rest = StripWhitespace(pending); !rest.empty()) on_line(rest);
  return OkStatus();
}

}  // namespace tide::backends::kube
