// The Kubernetes API's replies: a list of Pods and the watch events after it,
// as the Pod informer reads them (backends/kubernetes/kube_watch.h). The
// input is the list's body, then "\n\n", then watch event lines; without
// "\n\n" it is one object parsed as a Pod and as a Node (ParsePodText,
// ParseNodeText).
//
// Properties: an object that cannot be read never enters the view (every
// object in it parses on its own and sits under its own key), and an error
// is printable; a list that does not parse leaves the informer unsynced, so
// the controller acts on nothing.
#include "backends/kubernetes/kube_objects.h"
#include "backends/kubernetes/kube_watch.h"
#include "fuzz/fuzz_check.h"

namespace tide::fuzz {
namespace {

using backends::kube::Reply;

class Script final : public backends::kube::Transport {
 public:
  std::string list_body;
  std::vector<std::string_view> lines;
  Result<Reply> Request(std::string_view, std::string_view, std::string_view, std::string_view) override {
    return Reply{200, list_body};
  }
  Status Watch(std::string_view, const backends::kube::LineHandler& on_line, std::stop_token,
               const std::function<void()>& on_open) override {
    if (on_open) on_open();
    for (const auto line : lines) {
      if (!on_line(line)) return OkStatus();
    }
    return OkStatus();
  }
};

class NoSleep final : public backends::kube::Sleeper {
 public:
  bool Sleep(Duration, std::stop_token) override { return true; }
};

}  // namespace
}  // namespace tide::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tide;
  using namespace tide::fuzz;
  namespace kube = tide::backends::kube;
  const std::string_view text = AsText(data, size);
  const size_t split = text.find("\n\n");
  if (split == std::string_view::npos) {
    auto pod = kube::ParsePodText(text);
    if (!pod.ok()) CheckMessage(pod.status());
    auto node = kube::ParseNodeText(text);
    if (!node.ok()) CheckMessage(node.status());
    return 0;
  }
  Script transport;
  transport.list_body = std::string(text.substr(0, split));
  for (std::string_view rest = text.substr(split + 2); !rest.empty();) {
    const size_t nl = rest.find('\n');
    transport.lines.push_back(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  ManualClock clock(FromUnixSeconds(1'800'000'000));
  NoSleep sleeper;
  kube::PodInformer informer(&transport, &clock, &sleeper);
  const auto listed = informer.Step();
  if (listed.kind == kube::StepResult::Kind::kFailed) {
    CheckMessage(listed.error);
    if (informer.Synced()) Fail("a list that failed leaves the informer unsynced", Message(listed.error));
    return 0;
  }
  const auto watched = informer.Step();
  if (watched.kind == kube::StepResult::Kind::kFailed) CheckMessage(watched.error);
  const auto view = informer.Snapshot();
  for (const auto& [key, pod] : view.objects) {
    if (key != kube::Key(pod.meta)) Fail("a pod sits under its own key", key);
  }
  for (const auto& [key, why] : view.unreadable) {
    if (view.objects.contains(key)) Fail("an unreadable object is not in the view", key);
    for (const char c : why) {
      if (static_cast<unsigned char>(c) < 0x20) Fail("why an object is unreadable is printable", why);
    }
  }
  return 0;
}
