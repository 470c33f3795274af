#!/usr/bin/env bash
# tide plan --kubernetes: the test bed's pods run no programs, so this runs
# the Job here. For each index I it runs the exact command the manifest's
# container gives, with JOB_COMPLETION_INDEX=I, the claim's folder (the pods'
# /tide-plan) a local folder holding the configuration and the trace; it
# copies the point files out as the manifest's steps do, runs the gather
# command those steps give, and compares the table and --json with a plain
# local `tide plan` of the same sweep, byte for byte. Then the errors: a used
# directory, conflicting flags, a missing point at --gather.
# Usage: TIDE=path/to/tide run_plan_kubernetes.sh SOURCE_DIR OUT_DIR
# Exit 77 (skipped) without python3's yaml module (scripts/deps installs it).
set -uo pipefail
src=$1 out=$2
python3 -c 'import yaml' 2>/dev/null || { echo "python3 with the yaml module is not installed"; exit 77; }
rm -rf "$out" && mkdir -p "$out/volume" && out=$(cd "$out" && pwd)
# Three points: the baseline first, then idle=2m and idle=30m (rows that differ). Run
# from the source folder with relative paths, as a user would: the table's
# header names the trace as given.
cd "$src" || exit 1
plan=(plan -c examples/cluster.yaml -t examples/week.csv --sweep idle=2m,30m --baseline fixed:peak)
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$TIDE" "${plan[@]}" --json "$out/local.json" >"$out/local.txt" 2>"$out/local.err" || bad "local run: $(cat "$out/local.err")"

"$TIDE" "${plan[@]}" --kubernetes "$out/job" --kube-parallelism 2 >"$out/write.txt" 2>&1 || bad "--kubernetes: $(cat "$out/write.txt")"
grep -q "a Kubernetes Indexed Job of 3 points" "$out/write.txt" || bad "--kubernetes said: $(cat "$out/write.txt")"
files=$(cd "$out/job" && ls | tr '\n' ' ')
[ "$files" = "files-pod.yaml job.yaml " ] || bad "the directory holds: $files"

# The steps' kubectl cp, done here: the inputs onto the claim's folder.
cp "$src/examples/cluster.yaml" "$src/examples/week.csv" "$out/volume/"

# Each index's command, as the kubelet would expand it, run here.
TIDE="$TIDE" python3 - "$out/job/job.yaml" "$out/volume" <<'EOF' || fail=1
import os, re, subprocess, sys, yaml
job_yaml, volume = sys.argv[1], sys.argv[2]
job = yaml.safe_load(open(job_yaml))
spec = job["spec"]
assert job["kind"] == "Job" and spec["completionMode"] == "Indexed", "not an Indexed Job"
assert spec["completions"] == 3, f"completions {spec['completions']}, want 3"
container = spec["template"]["spec"]["containers"][0]
mount = container["volumeMounts"][0]["mountPath"]

def expand(arg, env):
    # Kubernetes: $(VAR) is the variable, $$ is one '$'.
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), arg)

for i in range(spec["completions"]):
    env = {"JOB_COMPLETION_INDEX": str(i)}
    argv = [expand(a, env) for a in container["command"]]
    assert argv[0] == "tide", f"the pods run {argv[0]}"
    argv = [os.environ["TIDE"]] + [a.replace(mount + "/", volume + "/") for a in argv[1:]]
    r = subprocess.run(argv, env=dict(os.environ, **env), capture_output=True, text=True)
    if r.returncode != 0 or r.stdout or r.stderr:
        print(f"FAIL: index {i}: exit {r.returncode}: {r.stdout}{r.stderr}")
        sys.exit(1)
EOF
files=$(cd "$out/volume" && ls | tr '\n' ' ')
[ "$files" = "cluster.yaml point-0.json point-1.json point-2.json week.csv " ] || bad "the claim's folder holds: $files"

# The steps' tar copy, then the gather command exactly as the steps give it.
cp "$out"/volume/point-*.json "$out/job/"
gather=$(sed -n 's/^#   \(.*--gather=.*\)$/\1/p' "$out/job/job.yaml")
[ -n "$gather" ] || bad "no gather command in job.yaml"
(cd / && eval "$gather --json '$out/gathered.json'") >"$out/gathered.txt" 2>"$out/gathered.err" ||
  bad "gather: $(cat "$out/gathered.err")"
if cmp -s "$out/local.txt" "$out/gathered.txt"; then
  sed 's/^/    /' "$out/gathered.txt"
else
  bad "the gathered table differs from the local one:"; diff "$out/local.txt" "$out/gathered.txt"
fi
cmp -s "$out/local.json" "$out/gathered.json" || bad "the gathered --json differs: $(diff "$out/local.json" "$out/gathered.json" | head)"

# expect NAME STATUS TEXT ARGS...: tide ARGS exits STATUS with TEXT on stderr.
expect() {
  local name=$1 want=$2 text=$3 rc=0
  shift 3
  "$TIDE" "$@" >/dev/null 2>"$out/$name.err" || rc=$?
  if [ "$rc" != "$want" ] || ! grep -qF -- "$text" "$out/$name.err"; then
    bad "$name: exit $rc (want $want), stderr: $(cat "$out/$name.err") (want: $text)"
  fi
}
expect used-dir 2 "--kubernetes $out/job: exists and is not empty" "${plan[@]}" --kubernetes "$out/job"
expect with-slurm 2 "--slurm and --kubernetes: choose one" "${plan[@]}" --kubernetes "$out/new" --slurm
expect with-point 2 "--point and --kubernetes: choose one" "${plan[@]}" --kubernetes "$out/new" --point 1
expect with-gather 2 "--kubernetes and --gather: choose one" "${plan[@]}" --kubernetes "$out/new" --gather "$out/job"
expect with-json 2 "--json and --kubernetes" "${plan[@]}" --kubernetes "$out/new" --json "$out/x.json"
expect bad-name 2 "--kube-name \"Sweep\"" "${plan[@]}" --kubernetes "$out/new" --kube-name Sweep
expect image-alone 2 "--kube-image requires --kubernetes" "${plan[@]}" --kube-image tide:1
[ ! -e "$out/new" ] || bad "a refused run made $out/new"
rm "$out/job/point-2.json"
expect missing-point 1 "point 2 (idle=30m): $out/job/point-2.json: missing" "${plan[@]}" --gather "$out/job"
grep -qF -- "--gather $out/job: 1 of 3 points have no result" "$out/missing-point.err" ||
  bad "missing-point: $(cat "$out/missing-point.err")"
expect gather-nothing 2 "--gather $out/none: not a directory" "${plan[@]}" --gather "$out/none"

[ "$fail" -eq 0 ] && echo "plan --kubernetes: ok"
exit "$fail"
