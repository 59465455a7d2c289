#!/usr/bin/env bash
# The outbox and inbox journals' cost at start and at a compaction, against the floor of reading
# their records. Not a test: it prints Markdown tables for bench/README.md (bench/run calls it).
# Usage: bench/journal-bench.sh CLASSPATH WORKDIR
#   outbox: 100,000 and 1,000,000 done keys (the second needs about 350 MB of disk);
#   inbox: 80,000 and 240,000 delivery ids (8 days at 10,000 and 30,000 deliveries a day)
set -euo pipefail
cd "$(dirname "$0")/.."
cp=$1; work=$2
flags="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError" # the deployment's heap settings
bench() { java $flags -cp "$cp" dev.agentx.clarify.bench.JournalBench "$@" 2>/dev/null; }
median() { sort -n | sed -n 2p; } # of three

echo "machine: $(nproc) cores, $(java -version 2>&1 | head -n 1), $(date -u +%Y-%m-%dT%H:%M:%SZ)," \
  "load average before: $(cut -d' ' -f1-3 /proc/loadavg); data dir on $(df -T "$work" 2>/dev/null | awk 'NR==2 {print $2" ("$1")"}')"
echo
echo "Each figure a fresh JVM with the deployment's heap flags, median of 3 (ms). Floor: reading the journal's"
echo "records (framing and checksums), nothing else. Start: \`new Outbox\` or \`new FileDeliveryQueue\` as the server's start"
echo "makes it (read, parse, rebuild the memory; the worker's first tick compacts it). Compaction: 5 on the opened"
echo "journal, as that tick, the daily prune and a growth compaction do, median."
echo
measure() { # measure KIND ARGS...: prints the table's row for a journal built by 'KIND-build'/'build'
  local kind=$1; shift
  local src="$work/journal-src" run="$work/journal-run" records mb floors=() starts=() compactions=() cpus=()
  rm -rf "$src"
  if [ "$kind" = inbox ]; then read -r _ records mb < <(bench inbox-build "$src" "$@")
  else read -r _ records mb < <(bench build "$src" "$@"); fi
  for i in 1 2 3; do
    rm -rf "$run"; cp -r "$src" "$run"
    read -r _ _ ms < <(bench floor "$run"); floors+=("$ms")
    rm -rf "$run"; cp -r "$src" "$run"
    if [ "$kind" = inbox ]; then read -r _ start compaction cpu < <(bench inbox-open "$run")
    else read -r _ start compaction cpu < <(bench open "$run"); fi
    starts+=("$start"); compactions+=("$compaction"); cpus+=("$cpu")
  done
  local floor start
  floor=$(printf '%s\n' "${floors[@]}" | median)
  start=$(printf '%s\n' "${starts[@]}" | median)
  echo "| $records | $mb | $floor | $start | $(awk -v a="$start" -v b="$floor" 'BEGIN {printf "%.1fx", a / b}') |" \
    "$(printf '%s\n' "${compactions[@]}" | median) | $(printf '%s\n' "${cpus[@]}" | median) |"
  rm -rf "$src" "$run"
}

echo "**Outbox journal.** A journal as a busy server leaves it just before a growth compaction: a compacted head of"
echo "the done keys (30 days of them) and a mirror note per issue, then the deliveries since (a comment, a reaction"
echo "and a label each, queued and done, and a note)."
echo
echo "| done keys | deliveries after them | records | MB | floor | start | start / floor | compaction | its CPU |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for size in 100000:10000 1000000:100000; do
  echo -n "| ${size%%:*} | ${size##*:} "
  measure outbox "${size%%:*}" "${size##*:}"
done
echo
echo "**Inbox journal.** The ids of the deliveries done with in the last 8 days (each kept so a redelivery is"
echo "told apart), as a compaction leaves them."
echo
echo "| delivery ids | records | MB | floor | start | start / floor | compaction | its CPU |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for ids in 80000 240000; do
  echo -n "| $ids "
  measure inbox "$ids"
done
