#include "core/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/strings.h"

namespace tide {
namespace {

namespace fs = std::filesystem;

std::string Errno() { return std::strerror(errno); }

}  // namespace

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(StrCat("cannot read ", path, ": ", Errno()));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::UnavailableError(StrCat("cannot read ", path));
  return ss.str();
}

Status WriteFileAtomically(const std::string& path, std::string_view text) {
  const std::string tmp = StrCat(path, ".tmp.", getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(StrCat("cannot create ", tmp, ": ", Errno()));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = Errno();
      close(fd);
      unlink(tmp.c_str());
      return absl::UnavailableError(StrCat("cannot write ", tmp, ": ", why));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    unlink(tmp.c_str());
    return absl::UnavailableError(StrCat("cannot write ", tmp, ": ", Errno()));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = Errno();
    unlink(tmp.c_str());
    return absl::UnavailableError(StrCat("cannot rename ", tmp, " to ", path, ": ", why));
  }
  return OkStatus();
}

void AppendLine(const std::string& path, std::string_view line) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string text = StrCat(line, "\n");
  ssize_t ignored = write(fd, text.data(), text.size());
  (void)ignored;
  close(fd);
}

Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(StrCat("cannot create directory ", dir, ": ", ec.message()));
  return OkStatus();
}

Result<std::vector<std::string>> ListFiles(const std::string& dir, std::string_view suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (ec) return absl::UnavailableError(StrCat("cannot read directory ", dir, ": ", ec.message()));
    return out;
  }
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > suffix.size() && name.ends_with(suffix)) out.push_back(it->path().string());
  }
  if (ec) return absl::UnavailableError(StrCat("cannot read directory ", dir, ": ", ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tide
