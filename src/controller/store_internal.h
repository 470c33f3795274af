// Helpers the store's source files share (controller/store.h); not for
// other users.
#ifndef TIDE_CONTROLLER_STORE_INTERNAL_H_
#define TIDE_CONTROLLER_STORE_INTERNAL_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/sqlite.h"
#include "core/status.h"
#include "core/strings.h"

namespace tide::controller::store_internal {

template <size_t N>
bool OneOf(std::string_view v, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

// InvalidArgument: "<thing>: <field> '<v>' is not one of <set>".
template <size_t N>
Status NotOneOf(std::string_view thing, std::string_view field, std::string_view v,
                const std::array<std::string_view, N>& set) {
  return absl::InvalidArgumentError(StrCat(thing, ": ", field, " '", v, "' is not one of ", StrJoin(set, ", ")));
}

// Every row of `s`, each read by `read` (a function of the statement that
// returns a Result<T>); the first error stops the read.
template <typename T, typename Read>
Result<std::vector<T>> ReadAll(SqliteStatement& s, Read read) {
  std::vector<T> out;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    TIDE_ASSIGN_OR_RETURN(T value, read(s));
    out.push_back(std::move(value));
  }
  return out;
}

}  // namespace tide::controller::store_internal

#endif  // TIDE_CONTROLLER_STORE_INTERNAL_H_
