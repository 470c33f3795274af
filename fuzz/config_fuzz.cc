// The YAML configuration (config::ParseConfig), as `tide simulate -c` and
// `tide run -c` read it. Property: an error names the file, the line (and
// column) and is printable; a configuration that parses, parsed again, is
// accepted again (parsing depends on nothing but the text).
#include "config/config.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tide;
  const std::string text(fuzz::AsText(data, size));
  auto config = config::ParseConfig(text, "fuzz.yaml");
  if (!config.ok()) {
    fuzz::CheckNamesFileAndLine(config.status(), "fuzz.yaml");
    return 0;
  }
  auto again = config::ParseConfig(text, "fuzz.yaml");
  if (!again.ok()) fuzz::Fail("a configuration that parsed once parses again", Message(again.status()));
  return 0;
}
