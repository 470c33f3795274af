#include "fuzz/fuzz_check.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::fuzz {

void Fail(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "\nproperty failed: %.*s\n  %s\n", static_cast<int>(what.size()), what.data(),
               Shown(detail, 400).c_str());
  std::abort();
}

void CheckMessage(const Status& status, std::string_view prefix) {
  if (status.ok()) Fail("an error was expected", "got OK");
  const std::string_view m = Message(status);
  if (m.empty()) Fail("an error has a message", StrCat("code ", static_cast<int>(status.code())));
  for (const char c : m) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) Fail("an error message is printable", m);
  }
  if (!m.starts_with(prefix)) Fail(StrCat("an error starts with '", prefix, "'"), m);
}

void CheckNamesFileAndLine(const Status& status, std::string_view path) {
  CheckMessage(status, path);
  std::string_view rest = Message(status).substr(path.size());
  if (rest.starts_with(": ")) return;  // the whole file: empty, unreadable
  if (!rest.starts_with(":")) Fail("an error names the file then ':'", Message(status));
  rest.remove_prefix(1);
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits == 0 || digits == rest.size() || rest[digits] != ':') {
    Fail("an error names the line as <path>:<line>:", Message(status));
  }
}

bool IsEmptyList(std::string_view json_text, const char* member) {
  const auto j = nlohmann::json::parse(json_text, nullptr, false);
  return j.is_object() && j.contains(member) && j[member].is_array() && j[member].empty();
}

InputFile::InputFile(std::string_view stem)
    : path_(StrCat("/tmp/tide-fuzz-", getpid(), "-", stem)) {}

InputFile::~InputFile() { std::remove(path_.c_str()); }

const std::string& InputFile::Write(std::string_view bytes) {
  std::ofstream out(path_, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) Fail("the fuzz input file can be written", path_);
  return path_;
}

}  // namespace tide::fuzz
