#include "controller/token_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/strings.h"

namespace tide::controller {
namespace {

// The shortest token accepted from a file: a guard against an empty or
// truncated file, not a strength rule (a token tide makes has 64 digits).
constexpr size_t kMinTokenChars = 8;
// A new token's random bytes: 256 bits, beyond any guessing over HTTP.
constexpr size_t kNewTokenBytes = 32;
// What is read of the file: a token is one short line; a larger file is
// not a token file, and is not read whole into memory.
constexpr size_t kMaxReadBytes = 4096;

std::string What(const std::string& path) { return StrCat(path, " (live.http.token_file)"); }

// Closes a descriptor when it goes.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

Result<std::string> NewToken() {
  unsigned char bytes[kNewTokenBytes];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(StrCat("getrandom: ", std::strerror(errno)));
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 0xf];
  }
  return token;
}

// Makes the file with a new token. AlreadyExists if another process made it
// meanwhile (O_EXCL: an existing file is never replaced).
Result<ApiToken> Create(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(std::string token, NewToken());
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == EEXIST) return absl::AlreadyExistsError(What(path));
    return absl::UnavailableError(StrCat(What(path), ": cannot create the token file: ", std::strerror(err)));
  }
  const std::string text = token + "\n";
  // 0600 exactly, whatever the umask took away.
  bool ok = ::fchmod(fd.get(), 0600) == 0;
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd.get()) == 0;
  ok = ::close(fd.Release()) == 0 && ok;
  if (!ok) {
    const int err = errno;
    ::unlink(path.c_str());  // a half-written token file would be refused at the next start
    return absl::UnavailableError(StrCat(What(path), ": cannot write the token file: ", std::strerror(err)));
  }
  return ApiToken{std::move(token), /*created=*/true};
}

}  // namespace

Result<ApiToken> LoadToken(const std::string& path) {
  if (path.empty()) return ApiToken{};
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) {
      auto made = Create(path);
      if (made.ok() || made.status().code() != absl::StatusCode::kAlreadyExists) return made;
      return LoadToken(path);  // made by another process meanwhile: read theirs
    }
    return absl::UnavailableError(StrCat(What(path), ": cannot read the token file: ", std::strerror(err)));
  }
  // The mode of the file opened, not of a path that may change meanwhile.
  struct stat st = {};
  if (::fstat(fd.get(), &st) != 0) {
    return absl::UnavailableError(StrCat(What(path), ": cannot stat the token file: ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return absl::FailedPreconditionError(StrCat(What(path), ": not a regular file"));
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(
        StrCat(What(path), ": the token file has mode ", fmt::format("{:04o}", st.st_mode & 07777),
               ", so other users may read or change it; run: chmod 600 ", path));
  }
  std::string text(kMaxReadBytes, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::UnavailableError(StrCat(What(path), ": cannot read the token file: ", std::strerror(errno)));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  const std::string_view line = StripWhitespace(std::string_view(text).substr(0, text.find('\n')));
  if (line.size() < kMinTokenChars) {
    return absl::InvalidArgumentError(
        StrCat(What(path), ": the token must have at least ", kMinTokenChars,
               " characters on the first line (delete the file to have tide make a new one)"));
  }
  return ApiToken{std::string(line), /*created=*/false};
}

}  // namespace tide::controller
