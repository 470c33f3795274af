// A streaming CSV reader that keeps track of where it is, so that every error
// can name the file, the line and the field.
//
// It understands RFC 4180 quoting within one physical line, strips a trailing
// '\r', skips blank lines and lines starting with '#', and accepts a last line
// without a newline. It reads its input in blocks of 64 KiB and holds one of
// them (and a line longer than what is left of it) at a time.
#ifndef TIDE_CORE_CSV_H_
#define TIDE_CORE_CSV_H_

#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tide {

// `field` as one CSV field that CsvReader reads back as it is: quoted (with
// doubled quotes) when it holds a comma, a quote or a carriage return, has
// blanks at either end (which an unquoted field loses), or starts with '#'
// (a comment line when it comes first). A line feed cannot be written (the
// reader reads one physical line per row, so never gives one): it is
// written as a space.
std::string CsvField(std::string_view field);

class CsvReader {
 public:
  // Opens `path`. NotFound if it cannot be opened.
  static Result<std::unique_ptr<CsvReader>> Open(const std::string& path);
  // Reads from a stream the caller keeps alive; `name` is used in errors.
  CsvReader(std::istream* in, std::string name);

  // Reads the header row. InvalidArgument if the input is empty.
  Status ReadHeader();
  const std::vector<std::string>& header() const { return header_; }
  // Index of a header column, or -1.
  int Column(std::string_view name) const;

  // The next data row, nullptr at the end. InvalidArgument on a row whose
  // field count differs from the header's. The fields are views into the
  // reader's line, valid until the next call.
  Result<const std::vector<std::string_view>*> Next();

  const std::string& name() const { return name_; }
  int64_t line() const { return line_; }

  // "file:line: field 'x': <what>" as an InvalidArgument error.
  Status FieldError(std::string_view field, std::string_view what) const;
  Status LineError(std::string_view what) const;

  // Typed field access with errors that name file, line and field.
  Result<int64_t> Int(std::string_view field, std::string_view value) const;
  Result<double> Double(std::string_view field, std::string_view value) const;
  Result<bool> Bool(std::string_view field, std::string_view value) const;

 private:
  bool ReadLine();
  // The next physical line, without its '\n', into row_; false at the end.
  bool NextPhysicalLine();
  Status Split();

  std::unique_ptr<std::ifstream> owned_;
  std::istream* in_;
  std::string name_;
  int64_t line_ = 0;
  // The block read last, and where its unread part begins and ends.
  std::vector<char> block_;
  size_t pos_ = 0, end_ = 0;
  std::string buf_;      // a line that spans blocks
  std::string_view row_;  // the current line: into block_ or buf_
  std::vector<std::string> unquoted_;  // storage for fields that needed unquoting
  std::vector<std::string_view> fields_;
  std::vector<std::string> header_;
};

}  // namespace tide

#endif  // TIDE_CORE_CSV_H_
