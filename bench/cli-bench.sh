#!/usr/bin/env bash
# Wall time of 'agentx clarify' (the list) and 'agentx clarify show CLR-7-001' on a root with 100
# issues and what 'agentx init' writes, vs a JVM running an empty main with bin/agentx's flags,
# measured with hyperfine in one run. bin/agentx runs them as users get them: through the daemon
# (docs/daemon.md), which the script starts first in a folder of its own and stops at the end;
# the rows with AGENTX_DAEMON=off are a command in a process of its own (the first call, before
# a daemon is up). Prints Markdown to stdout, then one line per row for bench/run's summary table:
#   SUMMARY|<path>|<now ms>|<floor ms>|<goal ratio>
# Not part of 'mvn verify'.
# Usage: bench/cli-bench.sh [CP [WORKDIR]]
#   CP: the test classpath (bench/run passes it); built with Maven when not given.
#   RUNS (default 20) sets hyperfine's runs per command.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v hyperfine >/dev/null; then
  echo "installing hyperfine (Debian package) for the CLI benchmark" >&2
  (apt-get update -qq && apt-get install -y -qq hyperfine) >/dev/null
fi
if [ $# -ge 1 ]; then
  cp="$1"
else
  mvn -B -q -DskipTests package
  mvn -B -q test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench-classpath.txt
  cp="target/test-classes:target/classes:$(cat target/bench-classpath.txt)"
fi
if [ $# -ge 2 ]; then
  work="$2/cli"
  mkdir -p "$work"
else
  work=$(mktemp -d -t agentx-cli-bench.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
runs="${RUNS:-20}"
root="$work/root"
rm -rf "$root"
java -XX:+UseSerialGC -cp "$cp" dev.agentx.clarify.bench.LedgerBench populate "$root" 100
# as a project set up by 'agentx init' is: its config.toml and workflows, which every command parses
bin/agentx --root "$root" init >/dev/null
mkdir -p "$work/empty"
printf 'public class Empty { public static void main(String[] a) {} }\n' > "$work/empty/Empty.java"
javac -d "$work/empty" "$work/empty/Empty.java"

# bin/agentx's JVM flags, for the empty JVM too (bench/cli-flags.sh)
. bench/cli-flags.sh
cli_flags "$work"
jar=$(readlink -f target/agentx.jar)
export AGENTX_DAEMON_DIR="$work/daemon"
trap 'bin/agentx daemon stop >/dev/null 2>&1 || true' EXIT
bin/agentx --root "$root" clarify >/dev/null # runs here, and starts the daemon
for _ in $(seq 1 150); do bin/agentx daemon status --json | grep -q '"running":true' && break; sleep 0.1; done
bin/agentx daemon status --json | grep -q '"running":true' || { echo "the daemon did not start" >&2; exit 1; }

echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(java -version 2>&1 | head -n 1);" \
  "load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "bin/agentx's JVM flags: \`${flags[*]}\`; AppCDS archive: $([ -f target/agentx.jsa ] && echo yes || echo no)."
echo
hyperfine -N -w 3 -r "$runs" --export-markdown "$work/cli.md" --export-csv "$work/cli.csv" \
  -n "empty JVM, bin/agentx's flags (java ... Empty)" "java ${flags[*]} -cp $work/empty Empty" \
  -n "empty JVM, default flags (java Empty)" "java -cp $work/empty Empty" \
  -n "agentx clarify (bin/agentx)" "bin/agentx --root $root clarify" \
  -n "agentx clarify show CLR-7-001 (bin/agentx)" "bin/agentx --root $root clarify show CLR-7-001" \
  -n "agentx clarify (plain java -jar)" "java -jar $jar --root $root clarify" \
  -n "agentx clarify, AGENTX_DAEMON=off (bin/agentx)" "env AGENTX_DAEMON=off bin/agentx --root $root clarify" \
  -n "agentx clarify show CLR-7-001, AGENTX_DAEMON=off (bin/agentx)" \
  "env AGENTX_DAEMON=off bin/agentx --root $root clarify show CLR-7-001" >/dev/null
sed 's/\xc2\xb1/+-/g' "$work/cli.md" # hyperfine writes a plus-minus sign; the repository's text stays ASCII

# --- clarify ask and answer: the agent's write path, against the same empty JVM in one run ---
# Each run asks on a root just restored from its template (the prepare step, not timed): a new
# question on an issue without a ledger, on a root with only .agentx/ (no config, the bundled
# workflows) and on the 100-issue root; the answer answers the question its template holds.
# The templates are written by bin/agentx itself, and each restore ends with sync so that the
# command's fsyncs do not also write out the copy. SUMMARY lines (one per row: path, mean ms,
# floor ms, goal ratio) are for the summary table of bench/run.
asked="$work/ask"
rm -rf "$asked"
mkdir -p "$asked/empty-template/.agentx"
cp -a "$root" "$asked/issues-template"
cp -a "$root" "$asked/answer-template"
bin/agentx --root "$asked/answer-template" clarify ask --issue 101 --from engineer --to architect "Q?" >/dev/null
# (hyperfine -N runs the prepare commands without a shell too)
restore() { printf "sh -c 'rm -rf %s && cp -a %s %s && sync'" "$asked/$1" "$asked/$2" "$asked/$1"; }
ask="clarify ask --issue 101 --from engineer --to architect --topic Auth JWT-or-sessions?"
echo
hyperfine -N -w 2 -r "$runs" --export-markdown "$work/ask.md" --export-json "$work/ask.json" \
  -n "empty JVM, bin/agentx's flags (java ... Empty)" --prepare true "java ${flags[*]} -cp $work/empty Empty" \
  -n "agentx clarify ask, root with only .agentx/ (bin/agentx)" --prepare "$(restore empty empty-template)" \
  "bin/agentx --root $asked/empty $ask" \
  -n "agentx clarify ask, 100 issues (bin/agentx)" --prepare "$(restore issues issues-template)" \
  "bin/agentx --root $asked/issues $ask" \
  -n "agentx clarify answer, 100 issues (bin/agentx)" --prepare "$(restore answer answer-template)" \
  "bin/agentx --root $asked/answer clarify answer CLR-101-001 --from architect JWT." \
  -n "agentx clarify ask, 100 issues, AGENTX_DAEMON=off (bin/agentx)" --prepare "$(restore issues issues-template)" \
  "env AGENTX_DAEMON=off bin/agentx --root $asked/issues $ask" >/dev/null
sed 's/\xc2\xb1/+-/g' "$work/ask.md"
jq -r '.results as $r | ($r[0].mean * 1000) as $floor | $r[1:][]
  | "SUMMARY|\(.command | sub(" \\(bin/agentx\\)$"; ""))|\(.mean * 1000 | round) ms|\($floor | round) ms|\(if (.command | test("DAEMON=off")) then "-" else "<=3x" end)"' "$work/ask.json"

echo
echo "The daemon after these runs: $(bin/agentx daemon status --json | jq -r '"\(.served) commands served, pid \(.pid), \(.refused) connections refused"'); resident $(grep VmRSS "/proc/$(bin/agentx daemon status --json | jq -r .pid)/status" | tr -s ' ' | cut -d' ' -f2-)."
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine: compare within one run)."
# The rows of the summary: each path's mean against the empty JVM with the same flags, goal 2x.
mean_ms() { # the mean of the Nth command above, in ms (hyperfine's CSV: command,mean,...,max; counted from the end, as a name may hold a comma)
  awk -F, -v row=$(($1 + 1)) 'NR == row { printf "%.0f", $(NF - 6) * 1000 }' "$work/cli.csv"
}
floor=$(mean_ms 1)
echo "SUMMARY|bin/agentx clarify (list, 100 issues)|$(mean_ms 3) ms|$floor ms|<=2x"
echo "SUMMARY|bin/agentx clarify show CLR-7-001|$(mean_ms 4) ms|$floor ms|<=2x"
echo "SUMMARY|bin/agentx clarify (list), AGENTX_DAEMON=off|$(mean_ms 6) ms|$floor ms|-"
echo "SUMMARY|bin/agentx clarify show, AGENTX_DAEMON=off|$(mean_ms 7) ms|$floor ms|-"

