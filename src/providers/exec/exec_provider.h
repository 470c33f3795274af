// ExecProvider: a CloudProvider made of user-configured commands, one per
// call, so any cloud with a command-line tool can be driven without tide
// linking its SDK. Each command is an argv array run through a CommandRunner
// (never a shell: no string from tide or a reply is ever interpreted by one).
// tide writes one JSON object to the command's stdin and reads one JSON
// object from its stdout (docs/providers.md has the protocol and templates):
//
//   create         in  {"pool","node","instance_type","tier","region","idempotency_key"}
//                  out {"id","node","state", "pool"?, "idempotency_key"?, "created"?}
//   delete         in  {"id","idempotency_key"}          out: exit status 0 = done
//   list           in  {}                                out {"instances":[<instance>...]}
//   interruptions  in  {}                                out {"interruptions":[{"id","node","at"}...]}
//
// "state" is "pending", "running" or "terminating"; "created" and "at" are
// integer Unix seconds.
//
// The idempotency contract belongs to the user's commands: create must
// return the instance it made before when it sees an idempotency_key again
// (EC2's --client-token, or an instance named after the node that the
// cloud refuses to create twice), and delete must exit 0 for an instance
// that is already gone. tide cannot check either; it retries with the same
// key after a crash or a timeout.
//
// Failures: a command that cannot be run, exits non-zero, or prints
// anything but the expected JSON gives Unavailable naming the command
// (FormatArgv) and, for a non-zero exit, its trimmed stderr; for a bad reply,
// the field. A command that does not finish within Options::timeout is
// killed with its process group and gives DeadlineExceeded naming it: a
// create cut short may have bought the instance, so the controller keeps it
// pending until a later list says (docs/live.md, "Faults"). A garbage reply
// never reads as "no instances".
//
// Not thread-safe (the CloudProvider contract); the runner must be.
#ifndef TIDE_PROVIDERS_EXEC_EXEC_PROVIDER_H_
#define TIDE_PROVIDERS_EXEC_EXEC_PROVIDER_H_

#include <string>
#include <vector>

#include "core/process.h"
#include "providers/provider.h"

namespace tide::providers {

class ExecProvider final : public CloudProvider {
 public:
  struct Options {
    // argv of each command (argv[0] looked up on PATH). create, delete_ and
    // list are required: a call whose command is empty is InvalidArgument.
    std::vector<std::string> create;
    std::vector<std::string> delete_;
    std::vector<std::string> list;
    // Empty: this cloud gives no interruption notices (Interruptions returns
    // none).
    std::vector<std::string> interruptions;
    // Per command; it is then killed with its process group.
    Duration timeout = Seconds(60);
  };

  // `runner` is not owned and must outlive the provider.
  ExecProvider(Options options, CommandRunner* runner);

  std::string Name() const override { return "exec"; }

  // Runs `create`. The reply must name request.node; a missing pool or
  // idempotency_key is taken from the request, a missing created is left at
  // the epoch (unknown).
  Result<Instance> Create(const CreateRequest& request, Timestamp now) override;
  // Runs `delete_`; exit status 0 means the instance is gone or going.
  Status Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) override;
  // Runs `list`. Every instance needs a non-empty id and node and a known
  // state; ids must be unique.
  Result<std::vector<Instance>> List(Timestamp now) override;
  // Runs `interruptions` and keeps the notices not yet past (at >= now).
  Result<std::vector<Interruption>> Interruptions(Timestamp now) override;

 private:
  Options options_;
  CommandRunner* runner_;
};

}  // namespace tide::providers

#endif  // TIDE_PROVIDERS_EXEC_EXEC_PROVIDER_H_
