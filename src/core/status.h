// Errors are values. tide uses absl::Status and absl::StatusOr across module
// boundaries; no exception leaves a module.
//
// The codes tide uses, and what the caller should do with each:
//   InvalidArgument    bad input (config, trace, a reply). Fix the input; do not retry.
//   NotFound           a named thing (file, pool, job) does not exist. Fix the name.
//   FailedPrecondition the action does not fit the current state. Re-observe, then decide again.
//   Unavailable        a peer (Slurm, a provider, Prometheus) did not answer. Retry later;
//                      never treat as "empty" or "idle".
//   Internal           a bug in tide. Report it.
#ifndef TIDE_CORE_STATUS_H_
#define TIDE_CORE_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <string_view>

namespace tide {

using Status = absl::Status;
template <typename T>
using Result = absl::StatusOr<T>;

inline Status OkStatus() { return absl::OkStatus(); }

// A status's message as a std::string_view (Debian's Abseil has its own
// string_view type).
inline std::string_view Message(const Status& s) {
  const auto m = s.message();
  return std::string_view(m.data(), m.size());
}

}  // namespace tide

// Returns early from the calling function when `expr` is not OK.
#define TIDE_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::absl::Status tide_status_ = (expr);          \
    if (!tide_status_.ok()) return tide_status_;   \
  } while (false)

#define TIDE_CONCAT_INNER_(a, b) a##b
#define TIDE_CONCAT_(a, b) TIDE_CONCAT_INNER_(a, b)
#define TIDE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(*tmp)

// `TIDE_ASSIGN_OR_RETURN(auto x, Foo());` unwraps a Result or returns its error.
#define TIDE_ASSIGN_OR_RETURN(lhs, expr) \
  TIDE_ASSIGN_OR_RETURN_IMPL_(TIDE_CONCAT_(tide_result_, __LINE__), lhs, expr)

#endif  // TIDE_CORE_STATUS_H_
