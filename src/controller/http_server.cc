#include "controller/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <utility>

#include "controller/http_connections.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::controller {
namespace {

constexpr char kMetricsType[] = "text/plain; version=0.0.4; charset=utf-8";
constexpr char kJsonType[] = "application/json";
constexpr char kTextType[] = "text/plain; charset=utf-8";
constexpr char kHtmlType[] = "text/html; charset=utf-8";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded decoding: %XX and '+' for space. A
// malformed escape is kept as written.
std::string FormDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// "a=1&b=x%20y" into `params` (a later value replaces an earlier one).
void ParseForm(std::string_view text, std::map<std::string, std::string>* params) {
  for (std::string_view pair : Split(text, '&', /*skip_empty=*/true)) {
    const size_t eq = pair.find('=');
    std::string key = FormDecode(pair.substr(0, eq));
    if (key.empty()) continue;
    (*params)[std::move(key)] = eq == std::string_view::npos ? std::string() : FormDecode(pair.substr(eq + 1));
  }
}

// A JSON object of scalars into `params`; InvalidArgument otherwise.
Status ParseJsonObject(const std::string& body, std::map<std::string, std::string>* params) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("the body is not valid JSON");
  if (!j.is_object()) return absl::InvalidArgumentError("the JSON body must be an object");
  for (const auto& [key, value] : j.items()) {
    if (value.is_string()) {
      (*params)[key] = value.get<std::string>();
    } else if (value.is_number() || value.is_boolean()) {
      (*params)[key] = value.dump();
    } else {
      return absl::InvalidArgumentError(
          StrCat("parameter '", key, "': give a string, number or boolean, not ", value.type_name()));
    }
  }
  return OkStatus();
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && ToLower(s.substr(0, prefix.size())) == prefix;
}

void ReplyJsonError(httplib::Response& res, int status, std::string_view message) {
  res.status = status;
  nlohmann::json body = {{"error", std::string(message)}};
  res.set_content(body.dump() + "\n", kJsonType);
}

int HttpStatusFor(const Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
      return 400;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    default:
      return 500;
  }
}

}  // namespace

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of the longer string is looked at whatever the contents.
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

HttpServer::HttpServer(HttpOptions options, StatusSource* source) : options_(std::move(options)), source_(source) {
  port_ = options_.port;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Routes() {
  httplib::Server& s = *server_;
  // httplib's default sets SO_REUSEPORT, which lets a second process bind
  // the same port and silently share its connections. SO_REUSEADDR only:
  // a restart can rebind at once, a second tide cannot.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });

  auto guarded = [](auto fn) {
    return [fn](const httplib::Request& req, httplib::Response& res) {
      try {
        fn(req, res);
      } catch (const std::exception& e) {
        res.status = 500;
        res.set_content(StrCat("internal error: ", e.what(), "\n"), kTextType);
      } catch (...) {
        res.status = 500;
        res.set_content("internal error\n", kTextType);
      }
    };
  };

  s.Get("/metrics", guarded([this](const httplib::Request&, httplib::Response& res) {
          res.set_content(source_->MetricsText(), kMetricsType);
        }));
  s.Get("/status", guarded([this](const httplib::Request&, httplib::Response& res) {
          res.set_content(source_->StatusJson(), kJsonType);
        }));
  s.Get("/healthz", guarded([this](const httplib::Request&, httplib::Response& res) {
          std::string why;
          if (source_->Healthy(&why)) {
            res.set_content("ok\n", kTextType);
          } else {
            res.status = 503;
            if (why.empty()) why = "unhealthy";
            if (why.back() != '\n') why += '\n';
            res.set_content(why, kTextType);
          }
        }));
  s.Get("/", guarded([this](const httplib::Request&, httplib::Response& res) {
          res.set_content(source_->ReportPage(), kHtmlType);
        }));
  // Before the command routes, whose pattern it also matches.
  s.Get("/api/v1/report", guarded([this](const httplib::Request&, httplib::Response& res) {
          res.set_header("Cache-Control", "no-store");
          Result<std::string> out = source_->ReportJson();
          if (!out.ok()) return ReplyJsonError(res, 503, Message(out.status()));
          res.set_content(*out, kJsonType);
        }));
  const std::string read_only = "/(metrics|status|healthz|api/v1/report)?";
  auto get_only = [](const httplib::Request& req, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content(StrCat(req.path, " answers GET only\n"), kTextType);
  };
  s.Post(read_only, get_only);
  s.Put(read_only, get_only);
  s.Patch(read_only, get_only);
  s.Delete(read_only, get_only);

  const std::string command = "/api/v1/([A-Za-z0-9_.-]+)";
  s.Get(command, [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Allow", "POST");
    ReplyJsonError(res, 405, StrCat(req.path, " answers POST only"));
  });
  s.Post(command, guarded([this](const httplib::Request& req, httplib::Response& res) {
           if (options_.token.empty()) {
             ReplyJsonError(res, 403,
                            "no token is configured (live.http.token_file): state-changing requests are refused");
             return;
           }
           const std::string auth = req.get_header_value("Authorization");
           constexpr std::string_view kScheme = "bearer ";
           if (!StartsWithNoCase(auth, kScheme)) {
             res.set_header("WWW-Authenticate", "Bearer realm=\"tide\"");
             ReplyJsonError(res, 401, "give the token as 'Authorization: Bearer <token>'");
             return;
           }
           const std::string_view given = StripWhitespace(std::string_view(auth).substr(kScheme.size()));
           if (!ConstantTimeEquals(given, options_.token)) {
             ReplyJsonError(res, 403, "the token is not valid");
             return;
           }

           std::map<std::string, std::string> params;
           if (const size_t q = req.target.find('?'); q != std::string::npos) {
             ParseForm(std::string_view(req.target).substr(q + 1), &params);
           }
           const std::string type = req.get_header_value("Content-Type");
           if (StartsWithNoCase(type, "application/json")) {
             Status s = ParseJsonObject(req.body, &params);
             if (!s.ok()) return ReplyJsonError(res, 400, Message(s));
           } else if (StartsWithNoCase(type, "application/x-www-form-urlencoded")) {
             ParseForm(req.body, &params);
           } else if (!StripWhitespace(req.body).empty()) {
             ReplyJsonError(
                 res, 415,
                 StrCat("a body must be application/json or application/x-www-form-urlencoded, not '", type, "'"));
             return;
           }

           Result<std::string> out = source_->Command(req.matches[1].str(), params);
           if (!out.ok()) return ReplyJsonError(res, HttpStatusFor(out.status()), Message(out.status()));
           res.set_content(*out, kJsonType);
         }));

  // Fills in bodies for the errors httplib makes itself (an unknown path);
  // replies the handlers wrote are left as they are. Malformed, oversized
  // and slow requests never get this far (http_connections.h).
  s.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 404) {
      res.set_content(StrCat("not found: ", req.path,
                             "; try /, /api/v1/report, /metrics, /status, /healthz or POST /api/v1/<command>\n"),
                      kTextType);
    } else {
      res.set_content(StrCat("error ", res.status, "\n"), kTextType);
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
}

Status HttpServer::Start() {
  if (started_) return absl::FailedPreconditionError("the HTTP server was already started");
  started_ = true;
  server_ = std::make_unique<LimitedServer>(options_.limits);
  Routes();
  errno = 0;
  int bound = -1;
  if (options_.port == 0) {
    bound = server_->bind_to_any_port(options_.address);
  } else if (server_->bind_to_port(options_.address, options_.port)) {
    bound = options_.port;
  }
  if (bound <= 0) {
    const int err = errno;
    return absl::UnavailableError(StrCat("cannot listen on ", options_.address, ":", options_.port,
                                         err != 0 ? StrCat(": ", std::strerror(err)) : std::string()));
  }
  port_ = bound;
  server_->ApplyBacklog();
  serving_ = true;
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    serving_ = false;
  });
  // httplib's stop() does nothing until the accept loop runs: wait for it,
  // so that a Stop() right after Start() is not lost.
  while (serving_ && !server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!serving_) {
    thread_.join();
    return absl::UnavailableError(StrCat("the HTTP server on ", options_.address, ":", port_, " stopped at once"));
  }
  return OkStatus();
}

void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  if (serving_) server_->stop();
  thread_.join();
}

}  // namespace tide::controller
