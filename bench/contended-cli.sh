#!/usr/bin/env bash
# N agents on one issue, each command a 'java -jar target/agentx.jar' process (how an agent calls a
# CLI): every agent makes PAIRS request+answer pairs (clarify ask, then clarify answer) at once with
# the others; first with each command running in its process (AGENTX_DAEMON=off), then handed to
# the daemon (docs/daemon.md), which then runs N commands at once. Prints a Markdown table: commands per second, command latency, and how
# many commands failed with LOCK_TIMEOUT (exit 4) or otherwise. Not part of 'mvn verify'.
# Usage: bench/contended-cli.sh WORKDIR [N...]     (default N: 2 4 8 16 32; PAIRS, default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
work="$1/contended-cli"
shift
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(2 4 8 16 32)
pairs="${PAIRS:-5}"
jar=$(readlink -f target/agentx.jar)
mkdir -p "$work"

agent() { # root name log
  local root="$1" name="$2" log="$3" i t0 t1 id code
  for ((i = 0; i < pairs; i++)); do
    t0=$(date +%s%N)
    set +e
    id=$(java -jar "$jar" --root "$root" clarify ask --issue 1 --from engineer --to architect "$name question $i" 2>>"$log.err")
    code=$?
    set -e
    t1=$(date +%s%N)
    echo "ask $code $t0 $t1" >> "$log"
    [ "$code" -eq 0 ] || continue
    t0=$(date +%s%N)
    set +e
    java -jar "$jar" --root "$root" clarify answer "$id" --from architect "answer $i" >/dev/null 2>>"$log.err"
    code=$?
    set -e
    t1=$(date +%s%N)
    echo "answer $code $t0 $t1" >> "$log"
  done
}

echo "Each command a new \`java -jar target/agentx.jar\` process, $pairs request+answer pairs per agent, all on issue 1;"
echo "measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores. Latency: one command, start to exit, in ms."
echo
echo "| daemon | agents | commands | commands/s | p50 | p90 | p99 | max | LOCK_TIMEOUT | other failures |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
export AGENTX_DAEMON_DIR="$work/daemon"
trap 'java -jar "$jar" daemon stop >/dev/null 2>&1 || true' EXIT
for mode in off on; do
  export AGENTX_DAEMON=$mode
  if [ "$mode" = on ]; then
    mkdir -p "$work/warm/.agentx"
    java -jar "$jar" --root "$work/warm" clarify >/dev/null # starts the daemon
    for _ in $(seq 1 150); do java -jar "$jar" daemon status --json | grep -q '"running":true' && break; sleep 0.1; done
  fi
  for n in "${counts[@]}"; do
    root="$work/root-$mode-$n"
    rm -rf "$root" "$work/log-$mode-$n"
    mkdir -p "$root/.agentx" "$work/log-$mode-$n"
    for ((a = 0; a < n; a++)); do
      agent "$root" "agent$a" "$work/log-$mode-$n/a$a.log" &
    done
    wait
    cat "$work/log-$mode-$n"/*.log > "$work/all-$mode-$n"
    awk '{ printf "%.3f\n", ($4 - $3) / 1e6 }' "$work/all-$mode-$n" | sort -n > "$work/lat-$mode-$n"
    awk -v n="$n" -v mode="$mode" -v lat="$work/lat-$mode-$n" '
      { if (first == "" || $3 < first) first = $3; if ($4 > last) last = $4
        if ($2 == 4) timeouts++; else if ($2 != 0) other++ }
      END {
        m = 0; while ((getline v < lat) > 0) sorted[++m] = v
        secs = (last - first) / 1e9
        printf "| %s | %d | %d | %.1f | %.0f | %.0f | %.0f | %.0f | %d | %d |\n", mode, n, NR, NR / secs,
          sorted[int(0.50 * m + 0.999)], sorted[int(0.90 * m + 0.999)], sorted[int(0.99 * m + 0.999)], sorted[m],
          timeouts + 0, other + 0
      }' "$work/all-$mode-$n"
  done
done
