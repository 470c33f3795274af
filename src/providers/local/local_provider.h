// LocalProvider: a CloudProvider whose instances are real slurmd processes on
// this machine, so the live controller can be run end to end against a real
// slurmctld without a cloud account (DESIGN.md section 1).
//
// Each instance is one detached process (core/process.h's DetachedProcess:
// its own session and process group, parent init) that sleeps the request's boot delay, then execs
// `slurmd -D -b -f <conf> -N <node>`: -D keeps slurmd in the foreground so
// the pid we record is slurmd's, -b reports "node rebooted now", without
// which slurmctld keeps waiting for a CLOUD node's boot. The child's signal
// mask is empty and its dispositions default, whatever the caller's are.
//
// State lives on disk so a restarted tide finds what it bought:
//   <state_dir>/instances/<id>.json  one record per instance (pid, process
//                                    start time, request), written via a
//                                    temporary file and rename
//   <state_dir>/interruptions/<node>.json
//                                    an injected spot interruption {"node", "at"}
//   <state_dir>/logs/<node>.log      the instance's stdout and stderr
//   <state_dir>/terminated.log       one line per instance that ended
// A recorded pid counts as the instance only while /proc/<pid>/stat shows the
// recorded start time (field 22), so a reused pid is never taken for ours.
//
// Not thread-safe (the CloudProvider contract). Another process may inject
// interruptions into the same state_dir at any time (InjectInterruptionInDir).
#ifndef TIDE_PROVIDERS_LOCAL_LOCAL_PROVIDER_H_
#define TIDE_PROVIDERS_LOCAL_LOCAL_PROVIDER_H_

#include <string>
#include <string_view>
#include <vector>

#include "providers/provider.h"

namespace tide::providers {

namespace local_internal {
struct Record;  // one instance's file under instances/; defined in the .cc
}  // namespace local_internal

class LocalProvider final : public CloudProvider {
 public:
  struct Options {
    // Directory for the records above; created on first use. Required.
    std::string state_dir;
    // The slurmd binary. Looked up on PATH when it holds no '/'.
    std::string slurmd = "/usr/sbin/slurmd";
    // Passed as `-f`; empty leaves slurmd to find its configuration.
    std::string slurm_conf;
    // Appended to slurmd's arguments (e.g. {"-L", "/tmp/lab/log/gpu1.log"}).
    std::vector<std::string> slurmd_args;
    // When not empty, run this argv instead of slurmd (tests: {"/bin/sleep",
    // "300"}). argv[0] is resolved like `slurmd`.
    std::vector<std::string> command_override;
    // true: the instance's stdout and stderr go to logs/<node>.log;
    // false: to /dev/null.
    bool log_output = true;
    // Delete sends SIGTERM, waits this long for the process to end, then
    // sends SIGKILL to its process group.
    Duration stop_grace = Seconds(5);
  };

  explicit LocalProvider(Options options);

  std::string Name() const override { return "local"; }

  // Starts the node's process, or returns the live (pending or running)
  // instance that already has this idempotency key or this node, starting
  // nothing. `now` stamps Instance::created. The returned state is
  // "pending" until the boot delay is over and slurmd has been exec'd, then
  // "running". InvalidArgument for a node name that is not
  // [A-Za-z0-9_.-]+; NotFound when the program is not an executable file;
  // Unavailable when the process cannot be started or its record not written
  // (nothing is then left running).
  Result<Instance> Create(const CreateRequest& request, Timestamp now) override;

  // SIGTERM to the recorded pid (only while its start time matches), up to
  // stop_grace for it to end, then SIGKILL to its process group; removes the
  // record. Blocks for at most stop_grace plus about a second. An unknown id
  // (never ours, or already gone) is OK. `idempotency_key` is not needed: the
  // id alone names the instance.
  Status Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) override;

  // Carries out every interruption whose time (<= now) has come, drops instances
  // whose process has ended (their records are removed and noted in
  // terminated.log: the instance is gone, as a dead VM is), and returns the
  // rest sorted by id. Unavailable when the state directory or a record
  // cannot be read: never an empty list in place of one it could not read.
  Result<std::vector<Instance>> List(Timestamp now) override;

  // Carries out due interruptions like List, then returns the injected
  // interruptions still ahead (at > now) whose instance still exists, sorted by node.
  Result<std::vector<Interruption>> Interruptions(Timestamp now) override;

  // Announces that `node`'s instance is taken away at now + notice, as a
  // cloud's spot interruption does; List or Interruptions at or after that
  // time SIGKILLs it. Same as InjectInterruptionInDir on this provider's
  // state_dir.
  Status InjectInterruption(const std::string& node, Duration notice, Timestamp now);

  // For another process (the CLI) to inject into a running provider's state
  // directory. NotFound when no instance record names `node`;
  // InvalidArgument for a bad node name or a negative notice; Unavailable
  // when the file cannot be written. A second interruption for the same
  // node replaces the first.
  static Status InjectInterruptionInDir(const std::string& state_dir, const std::string& node, Duration notice,
                                        Timestamp now);

  // The nodes whose instances this object has interrupted since the last
  // call, each reported once, in the order they were taken (for counting
  // interruptions).
  std::vector<std::string> TakeInterrupted();

 private:
  using Record = local_internal::Record;

  // Carries out due interruptions, then loads every record and drops the dead.
  Result<std::vector<Record>> Refresh(Timestamp now);
  Status CarryOutInterruptions(Timestamp now);
  Result<std::vector<Record>> LoadRecords() const;
  void Forget(const Record& record, std::string_view reason, Timestamp now) const;
  std::vector<std::string> Argv(const std::string& node) const;

  Options options_;
  std::vector<std::string> interrupted_;
};

}  // namespace tide::providers

#endif  // TIDE_PROVIDERS_LOCAL_LOCAL_PROVIDER_H_
