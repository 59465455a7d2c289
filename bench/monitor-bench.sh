#!/usr/bin/env bash
# Benchmark of one monitor pass over 10, 100, 1,000, 10,000 and 100,000 ledgers (5 % active).
# Not a test: it prints Markdown for bench/README.md (bench/run puts it there).
# Usage: bench/monitor-bench.sh [sizes...]      (KEEP=1 keeps the generated projects)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f target/agentx.jar ] || [ -n "$(find src -newer target/agentx.jar -name '*.java' -print -quit)" ]; then
  mvn -B -q -DskipTests package
fi
echo "machine: $(nproc) cores, $(java -version 2>&1 | head -n 1), $(uname -sr), $(date -u +%Y-%m-%dT%H:%M:%SZ)," \
  "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
java -Xmx1g -cp target/agentx.jar bench/MonitorBench.java "$@"

# A whole CLI process on the largest set, as a user runs it (bin/agentx, JVM start-up included).
n=10000
project=$(mktemp -d -t agentx-cli-bench.XXXXXX)
empty=$(mktemp -d -t agentx-cli-empty.XXXXXX)
trap 'rm -rf "$project" "$empty"' EXIT
mkdir -p "$empty/.agentx"
java -cp target/agentx.jar bench/MonitorBench.java --generate "$project" "$n"
bin/agentx --root "$project" monitor >/dev/null   # builds the index, as the first pass does
cli() { # cli ROOT: 7 timed runs of 'bin/agentx --root ROOT monitor', sorted, in ms
  local times=() start end
  for i in 1 2 3 4 5 6 7; do
    start=$(date +%s%N)
    bin/agentx --root "$1" monitor >/dev/null
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | tr '\n' ' '
}
echo
echo "\`bin/agentx monitor\` as a new process (JVM start-up included), 7 runs each, ms:"
echo "- no ledgers:        $(cli "$empty")"
echo "- $n ledgers:     $(cli "$project")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
