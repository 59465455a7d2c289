# Sourced by the benchmarks that compare a CLI process with an empty JVM. cli_flags WORKDIR sets the
# array 'flags' to the JVM flags bin/agentx passes, read from bin/agentx itself (through a stand-in
# java that prints its arguments) so that they cannot drift apart. The class archive is left out:
# it only holds the CLI's classes, and the empty JVM gets the same flags.
cli_flags() {
  mkdir -p "$1/fake-java"
  printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done\n' > "$1/fake-java/java"
  chmod +x "$1/fake-java/java"
  flags=()
  while IFS= read -r a; do
    case "$a" in
      -cp) break ;;
      -XX:SharedArchiveFile=*|-Xlog:cds*) ;;
      *) flags+=("$a") ;;
    esac
  done < <(PATH="$1/fake-java:$PATH" bin/agentx)
}
