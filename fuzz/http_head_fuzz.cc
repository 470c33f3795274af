// The HTTP API's request heads, as the server's front end checks them
// before anything else reads them (controller::CheckRequestHead).
//
// Properties: a head it accepts, handed to httplib, is itself accepted
// unchanged when checked again (the front end's rewrite is stable), holds no
// control byte but its CRLFs, and announces a body within the limit; a
// refusal is one of the documented statuses with a printable reason.
#include "controller/http_connections.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tide;
  using namespace tide::fuzz;
  const controller::HttpLimits limits;
  const std::string_view head = AsText(data, size);
  const controller::CheckedHead checked = controller::CheckRequestHead(head, limits);
  if (checked.refuse != 0) {
    static constexpr int kDocumented[] = {400, 411, 413, 414, 417, 431, 505};
    if (std::find(std::begin(kDocumented), std::end(kDocumented), checked.refuse) == std::end(kDocumented)) {
      Fail("a refusal is a documented status", StrCat(checked.refuse));
    }
    CheckMessage(absl::InvalidArgumentError(checked.why));
    return 0;
  }
  if (checked.body_bytes > limits.max_body_bytes) Fail("an accepted body is within the limit", StrCat(checked.body_bytes));
  for (size_t i = 0; i < checked.head.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(checked.head[i]);
    const bool crlf = (c == '\r' && i + 1 < checked.head.size() && checked.head[i + 1] == '\n') ||
                      (c == '\n' && i > 0 && checked.head[i - 1] == '\r');
    if ((c < 0x20 && c != '\t' && !crlf) || c == 0x7f) Fail("an accepted head has no control byte", checked.head);
  }
  // The front end adds a Content-Length when there is none, so the head
  // httplib gets may have one field more than the limit allows.
  controller::HttpLimits one_more = limits;
  ++one_more.max_headers;
  const controller::CheckedHead again = controller::CheckRequestHead(checked.head, one_more);
  if (again.refuse != 0 || again.head != checked.head || again.body_bytes != checked.body_bytes) {
    Fail("the head httplib gets is accepted unchanged",
         StrCat(again.refuse, " ", again.why, " (", again.body_bytes, " bytes) for: ", checked.head));
  }
  return 0;
}
