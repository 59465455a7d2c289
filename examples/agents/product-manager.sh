#!/usr/bin/env bash
# An example "command" agent for the product-manager role: answers from a small
# table of product decisions, and says CANNOT_ANSWER for anything else.
# Same contract as architect.sh (request JSON on stdin, AGENTX_* variables, answer on stdout).
set -euo pipefail
cat >/dev/null   # the request JSON; this agent only needs AGENTX_QUESTION

case "$(printf '%s' "$AGENTX_QUESTION" | tr '[:upper:]' '[:lower:]')" in
  *user*|*audience*)
    echo "Small teams of 2 to 10 developers; single sign-on comes later." ;;
  *deadline*|*release*)
    echo "The beta ships at the end of the quarter." ;;
  *)
    echo "CANNOT_ANSWER: no product decision on this yet" ;;
esac
