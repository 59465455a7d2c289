#!/usr/bin/env bash
# /mcp of 'agentx serve': N agents each holding a waiting clarify_ask on one server (McpWaitBench):
# heap and threads the waits hold, and the delay from an answer's delivery to each call's result.
# Prints Markdown to stdout. Not part of 'mvn verify'.
# Usage: bench/mcp-wait-bench.sh CP WORKDIR      (bench/run passes both; AGENTS, default 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
cp="$1"
work="$2/mcp-wait"
agents="${AGENTS:-1000}"
mkdir -p "$work"
echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(java -version 2>&1 | head -n 1);" \
  "load average before: $(cut -d' ' -f1-3 /proc/loadavg). One JVM (the server, WireMock as GitHub and the" \
  "agents' HTTP client), \`-XX:+UseSerialGC -Xmx1g\`."
echo
java -XX:+UseSerialGC -Xmx1g -cp "$cp" dev.agentx.clarify.github.mcp.McpWaitBench "$work" "$agents" \
  2>"$work/server.log" || { echo "McpWaitBench failed; the end of $work/server.log:" >&2
  grep -v '^[[:space:]]*at ' "$work/server.log" | tail -n 5 >&2; exit 1; }
