#!/usr/bin/env bash
# 'agentx mcp': start to the first answered tools/list, via bin/agentx and plain java -jar, against a
# JVM running an empty main with bin/agentx's flags, measured in one run; then the CPU a waiting
# clarify_ask uses. Prints Markdown to stdout. Not part of 'mvn verify'.
# Usage: bench/mcp-bench.sh CP WORKDIR      (bench/run passes both; RUNS, default 15, sets the runs)
set -euo pipefail
cd "$(dirname "$0")/.."
cp="$1"
work="$2/mcp"
mkdir -p "$work/empty" "$work/root/.agentx/workflows"
runs="${RUNS:-15}"
printf 'public class Empty { public static void main(String[] a) {} }\n' > "$work/empty/Empty.java"
javac -d "$work/empty" "$work/empty/Empty.java"
# a workflow in which the engineer may ask the architect
cat > "$work/root/.agentx/workflows/mesh.toml" <<'TOML'
[workflow]
name = "mesh"

[[steps]]
id = "engineer"
agent = "engineer"
can_clarify = ["architect"]

[[steps]]
id = "architect"
agent = "architect"
can_clarify = ["engineer"]
TOML
printf 'default_workflow = "mesh"\n' > "$work/root/.agentx/config.toml"
# bin/agentx's JVM flags, for the empty JVM too (bench/cli-flags.sh)
. bench/cli-flags.sh
cli_flags "$work"
jar=$(readlink -f target/agentx.jar)
echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(java -version 2>&1 | head -n 1);" \
  "load average before: $(cut -d' ' -f1-3 /proc/loadavg). Times in ms, $runs runs each, alternating."
echo
# bin/agentx hands 'agentx mcp' to the daemon (docs/daemon.md): started here first, in a folder of
# its own, and stopped at the end; the row without it is a process of its own (the first start).
export AGENTX_DAEMON_DIR="$work/daemon"
trap 'bin/agentx daemon stop >/dev/null 2>&1 || true' EXIT
bin/agentx --root "$work/root" clarify >/dev/null
for _ in $(seq 1 150); do bin/agentx daemon status --json | grep -q '"running":true' && break; sleep 0.1; done
java -XX:+UseSerialGC -cp "$cp" dev.agentx.clarify.bench.McpStartBench "$work/empty" "$work/root" "$runs" \
  "${flags[@]}" -- "bin/agentx=bin/agentx" "bin/agentx without the daemon=env AGENTX_DAEMON=off bin/agentx" \
  "java -jar=java -jar $jar"
