// Constructors for the individual readers (OpenTrace dispatches to these).
#ifndef TIDE_TRACE_FORMATS_H_
#define TIDE_TRACE_FORMATS_H_

#include <memory>

#include "core/csv.h"
#include "trace/reader.h"

namespace tide::trace {

Result<std::unique_ptr<TraceReader>> OpenNative(std::unique_ptr<CsvReader> csv, const TraceOptions& options);
Result<std::unique_ptr<TraceReader>> OpenItp(std::unique_ptr<CsvReader> csv, const TraceOptions& options);
Result<std::unique_ptr<TraceReader>> OpenOpenb(std::unique_ptr<CsvReader> csv, const TraceOptions& options);
Result<std::unique_ptr<TraceReader>> OpenPhilly(std::unique_ptr<CsvReader> csv, const TraceOptions& options);

}  // namespace tide::trace

#endif  // TIDE_TRACE_FORMATS_H_
