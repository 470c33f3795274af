// The YAML cursor every section parser reads through: a node with the path
// that led to it, so that each error names the file, line, column and field
// ("cluster.yaml:9:16: pools[1].max_nodes: must be >= min_nodes (4), got 2").
// Internal to config/: the section parsers and config.cc include it; nothing
// outside this folder sees yaml-cpp.
#ifndef TIDE_CONFIG_FIELD_H_
#define TIDE_CONFIG_FIELD_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/time.h"
#include "date/tz.h"
#include "yaml-cpp/yaml.h"

namespace tide::config {

class Field {
 public:
  // `file` names the configuration in messages; it must outlive the Field
  // and every Field made from it.
  Field(const YAML::Node& node, std::string path, const std::string* file)
      : node_(node), path_(std::move(path)), file_(file) {}

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  bool IsMap() const { return node_.IsMap(); }
  bool IsSeq() const { return node_.IsSequence(); }
  bool IsScalar() const { return node_.IsScalar(); }

  // "file:line:col: path" ("file:line:col" at the top level, "file: path"
  // when yaml-cpp gives no position): what every message about this field
  // starts with, and what is kept for errors found after parsing.
  std::string Where() const;
  // InvalidArgument "<Where()>: <what>".
  Status Error(std::string_view what) const;

  // Child field of a map; absent children (and empty values) are not an
  // error here: nullopt.
  std::optional<Field> Get(std::string_view key) const;
  // The key itself of child `key` (its position is the key's, not the
  // value's), for messages about the key rather than its value; nullopt as
  // for Get.
  std::optional<Field> KeyOf(std::string_view key) const;
  Field At(size_t i) const { return Field(node_[i], ChildPath(i), file_); }
  size_t size() const { return node_.size(); }

  // Rejects keys not in `known` (suggesting the nearest) and keys given
  // twice.
  Status OnlyKeys(std::initializer_list<std::string_view> known) const;
  Status OnlyKeys(std::span<const std::string_view> known) const;

  // Typed reads; each fails with an error naming this field.
  Result<std::string> String() const;
  Result<int64_t> Int(int64_t lo, int64_t hi) const;
  Result<double> Number(double lo, double hi) const;
  Result<bool> Bool() const;
  Result<Duration> Dur() const;
  Result<Timestamp> Time() const;
  // A list, or one comma-separated string ("a, b").
  Result<std::vector<std::string>> StringList() const;

 private:
  std::string ChildPath(std::string_view key) const;
  std::string ChildPath(size_t i) const;

  YAML::Node node_;
  std::string path_;
  const std::string* file_;
};

// Reads an optional field into `out` with `read`; leaves `out` as it is
// when the field is absent.
template <typename T, typename F>
Status Opt(const Field& parent, std::string_view key, T* out, F read) {
  if (auto f = parent.Get(key)) {
    TIDE_ASSIGN_OR_RETURN(*out, read(*f));
  }
  return OkStatus();
}

// The IANA zone `name`; nullptr if the tz database has none.
const date::time_zone* FindZone(const std::string& name);
// The message for a zone FindZone does not know.
std::string UnknownZone(const std::string& name);
// The IANA zone `name`, read from field `f` (the error names `f`).
Result<const date::time_zone*> Zone(const Field& f, const std::string& name);

}  // namespace tide::config

#endif  // TIDE_CONFIG_FIELD_H_
