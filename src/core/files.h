// Small file operations for state that must survive a crash: whole-file
// reads, a replace that readers never see half done, and the listing of a
// directory of records. Errors are Unavailable (the disk or the directory is
// the peer that did not answer) and name the path.
#ifndef TIDE_CORE_FILES_H_
#define TIDE_CORE_FILES_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tide {

// The whole file. Unavailable when it cannot be opened or read.
Result<std::string> ReadFile(const std::string& path);

// Replaces `path` with `text` in one step: the text goes to a temporary file
// beside it (<path>.tmp.<pid>), is fsync'd, then renamed over `path`, so
// readers (and a restart after a crash) see the old file or the new one,
// never half of one. The temporary file is removed on failure.
Status WriteFileAtomically(const std::string& path, std::string_view text);

// Appends `line` and a newline, best effort: for logs that people read, where
// losing a line must not fail the caller.
void AppendLine(const std::string& path, std::string_view line);

// Creates `dir` and its parents (mkdir -p).
Status MakeDirs(const std::string& dir);

// The paths of the files in `dir` whose names end in `suffix` and are longer
// than it ("x.json", not ".json"), sorted. None (not an error) when `dir`
// does not exist.
Result<std::vector<std::string>> ListFiles(const std::string& dir, std::string_view suffix);

}  // namespace tide

#endif  // TIDE_CORE_FILES_H_
