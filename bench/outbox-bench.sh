#!/usr/bin/env bash
# The outbox journal's cost at start and at a compaction, against the floor of reading its records.
# Not a test: it prints a Markdown table for bench/RESULTS.md (bench/run calls it).
# Usage: bench/outbox-bench.sh CLASSPATH WORKDIR [KEYS:DELIVERIES ...]
#   default sizes: 100000:10000 and 1000000:100000 (the second needs about 350 MB of disk)
set -euo pipefail
cd "$(dirname "$0")/.."
cp=$1; work=$2; shift 2
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(100000:10000 1000000:100000)
flags="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError" # the deployment's heap settings
bench() { java $flags -cp "$cp" dev.agentx.clarify.bench.OutboxJournalBench "$@" 2>/dev/null; }
median() { sort -n | sed -n 2p; } # of three

echo "machine: $(nproc) cores, $(java -version 2>&1 | head -n 1), $(date -u +%Y-%m-%dT%H:%M:%SZ)," \
  "load average before: $(cut -d' ' -f1-3 /proc/loadavg); data dir on $(df -T "$work" 2>/dev/null | awk 'NR==2 {print $2" ("$1")"}')"
echo
echo "A journal as a busy server leaves it just before a growth compaction: a compacted head of the done keys"
echo "(30 days of them) and a mirror note per issue, then the deliveries since (a comment, a reaction and a label"
echo "each, queued and done, and a note). Each a fresh JVM with the deployment's heap flags, median of 3 (ms)."
echo "Floor: reading the journal's records (framing and checksums), nothing else. Start: \`new Outbox\` as the"
echo "server's start makes it (read, parse, rebuild the memory; the worker's first tick compacts it). Compaction:"
echo "5 on the opened outbox, as that tick, the daily prune and a growth compaction do, median."
echo
echo "| done keys | deliveries after them | records | MB | floor | start | start / floor | compaction | its CPU |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for size in "${sizes[@]}"; do
  keys=${size%%:*}; deliveries=${size##*:}
  src="$work/outbox-$keys"; run="$work/outbox-run"
  rm -rf "$src"
  read -r _ records mb < <(bench build "$src" "$keys" "$deliveries")
  floors=(); starts=(); compactions=(); cpus=()
  for i in 1 2 3; do
    rm -rf "$run"; cp -r "$src" "$run"
    read -r _ _ ms < <(bench floor "$run"); floors+=("$ms")
    rm -rf "$run"; cp -r "$src" "$run"
    read -r _ start compaction cpu < <(bench open "$run")
    starts+=("$start"); compactions+=("$compaction"); cpus+=("$cpu")
  done
  floor=$(printf '%s\n' "${floors[@]}" | median)
  start=$(printf '%s\n' "${starts[@]}" | median)
  echo "| $keys | $deliveries | $records | $mb | $floor | $start | $(awk -v a="$start" -v b="$floor" 'BEGIN {printf "%.1fx", a / b}') |" \
    "$(printf '%s\n' "${compactions[@]}" | median) | $(printf '%s\n' "${cpus[@]}" | median) |"
  rm -rf "$src" "$run"
done
