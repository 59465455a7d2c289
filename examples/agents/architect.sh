#!/usr/bin/env bash
# An example "command" agent for the architect role (see docs/answer-channels.md).
#
# The hub runs it once per question, in the project root, without a shell in between:
#   stdin          the request as one JSON object (id, issue, from, to, topic, round,
#                  question, options, thread, repository, issueContext)
#   environment    the main fields again, for scripts that do not parse JSON:
#                  AGENTX_CLARIFICATION_ID AGENTX_ISSUE AGENTX_FROM AGENTX_TO
#                  AGENTX_TOPIC AGENTX_ROUND AGENTX_QUESTION AGENTX_OPTIONS (one per line)
#   stdout         the answer: plain text, or JSON {"answer": "...", "choice": <0-based index>}
#   CANNOT_ANSWER  as the first line (a reason may follow) says it cannot answer: the
#                  question stays pending, and repeated failure escalates to a human
#   exit code      non-zero is a failure (the message on stderr goes into the note)
#
# When a question is about requirements, this architect asks the product manager itself
# ("agentx" must be on PATH) and answers with what it learned: agents clarifying with agents.
set -euo pipefail

request="$(cat)"   # the whole request; a real agent would hand it to its model
if [ -z "$request" ]; then
  echo "no request on stdin" >&2
  exit 2
fi

question="$(printf '%s' "$AGENTX_QUESTION" | tr '[:upper:]' '[:lower:]')"

# A question with options: answer with the index of the chosen option (0-based).
if [ -n "${AGENTX_OPTIONS:-}" ]; then
  i=0
  while IFS= read -r option; do
    case "$(printf '%s' "$option" | tr '[:upper:]' '[:lower:]')" in
      *postgres*|*jwt*)
        printf '{"choice": %d, "answer": "Option %d: it is what ADR-7 standardised on."}\n' "$i" "$((i + 1))"
        exit 0 ;;
    esac
    i=$((i + 1))
  done <<< "$AGENTX_OPTIONS"
  printf '{"choice": 0}\n'
  exit 0
fi

case "$question" in
  *auth*)
    echo "Use JWT bearer tokens signed with RS256; see ADR-42." ;;
  *lifetime*|*expir*)
    echo "15 minutes for access tokens, with refresh tokens valid for 7 days." ;;
  *user*|*requirement*|*audience*)
    # Not the architect's call: ask the product manager, then answer with that.
    id="$(agentx clarify ask --issue "$AGENTX_ISSUE" --from architect --to product-manager \
          --non-blocking --topic "Users (for $AGENTX_CLARIFICATION_ID)" "$AGENTX_QUESTION")"
    answer="$(agentx clarify show "$id" | sed -n 's/^  A: //p' | tail -n 1)"
    if [ -z "$answer" ]; then
      echo "CANNOT_ANSWER: product-manager has not answered $id yet"
      exit 0
    fi
    agentx clarify resolve "$id" -m "Thanks, passing it on to $AGENTX_FROM." >/dev/null
    echo "Per product-manager ($id): $answer" ;;
  *)
    echo "CANNOT_ANSWER: not an architecture question" ;;
esac
