// Constructors for the individual readers (OpenTrace dispatches to these).
#ifndef TIDE_TRACE_FORMATS_H_
#define TIDE_TRACE_FORMATS_H_

#include <memory>
#include <string>

#include "core/csv.h"
#include "trace/reader.h"

namespace tide::trace {

Result<std::unique_ptr<TraceReader>> OpenNative(std::unique_ptr<CsvReader> csv, const TraceOptions& options);
Result<std::unique_ptr<TraceReader>> OpenItp(std::unique_ptr<CsvReader> csv, const TraceOptions& options);
Result<std::unique_ptr<TraceReader>> OpenOpenb(std::unique_ptr<CsvReader> csv, const TraceOptions& options);
Result<std::unique_ptr<TraceReader>> OpenPhilly(std::unique_ptr<CsvReader> csv, const TraceOptions& options);
// SWF is not CSV: its reader opens the file itself.
Result<std::unique_ptr<TraceReader>> OpenSwf(const std::string& path, const TraceOptions& options);
// True when the file's first non-blank line is an SWF header comment (';')
// or has SWF's 18 whitespace-separated fields.
bool LooksLikeSwf(const std::string& path);

}  // namespace tide::trace

#endif  // TIDE_TRACE_FORMATS_H_
