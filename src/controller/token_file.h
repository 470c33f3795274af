// The bearer token of tide's HTTP API, kept in live.http.token_file.
//
// The file is a secret, so tide treats it as ssh treats a private key: it
// refuses a file that other users may read or write, and when the file does
// not exist it makes one that only its user can read (mode 0600) holding a
// new random token. Nothing here writes the token anywhere else.
#ifndef TIDE_CONTROLLER_TOKEN_FILE_H_
#define TIDE_CONTROLLER_TOKEN_FILE_H_

#include <string>

#include "core/status.h"

namespace tide::controller {

struct ApiToken {
  std::string value;     // empty: no token file is configured
  bool created = false;  // the file was made now, with a new token
};

// The token in `path`: its first line, without surrounding whitespace; at
// least 8 characters. An empty path: no token. A missing file is created,
// mode 0600, with a new token (256 random bits as 64 hex digits); its
// directory must exist. FailedPrecondition, naming the file, its mode and
// the fix, when group or others have any permission on it.
Result<ApiToken> LoadToken(const std::string& path);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_TOKEN_FILE_H_
