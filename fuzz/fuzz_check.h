// What every fuzz target checks besides "no crash": the properties of
// docs/reliability.md ("Fuzzing"). A failed check aborts, so libFuzzer keeps
// the input as a crash and prints the reason first.
#ifndef TIDE_FUZZ_FUZZ_CHECK_H_
#define TIDE_FUZZ_FUZZ_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/strings.h"

namespace tide::fuzz {

// Prints "property failed: <what>" and the detail, then aborts.
[[noreturn]] void Fail(std::string_view what, std::string_view detail);

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// An error a user will read: not OK, not empty, and printable (no control
// byte from the input reaches a terminal). `prefix`, when not empty, must
// start the message: the file, or the command, it came from.
void CheckMessage(const Status& status, std::string_view prefix = "");

// As CheckMessage, and the message names the file and the line: it starts
// with "<path>:<line>:", or with "<path>: " for a file-level error (empty,
// unreadable) that has no line.
void CheckNamesFileAndLine(const Status& status, std::string_view path);

// True if `json_text` is a JSON object whose `member` is an empty array: the
// one reply that may read as "none" (no jobs, no instances).
bool IsEmptyList(std::string_view json_text, const char* member);

// A file of this process's own, rewritten with each input, for parsers that
// read a path. The name holds the process id, so parallel fuzzing jobs
// (libFuzzer's -jobs) do not share one.
class InputFile {
 public:
  explicit InputFile(std::string_view stem);
  ~InputFile();
  const std::string& Write(std::string_view bytes);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tide::fuzz

#endif  // TIDE_FUZZ_FUZZ_CHECK_H_
