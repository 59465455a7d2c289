#!/usr/bin/env python3
"""Writes the part of GitHub's REST description that the App uses, for the contract tests.

Usage: src/test/contract/extract.py DESCRIPTION.json SOURCE > src/test/resources/contract/github-rest.json

DESCRIPTION.json is GitHub's OpenAPI description of api.github.com (github/rest-api-description,
descriptions/api.github.com, or the same description as the npm package @octokit/openapi ships it
in generated/api.github.com.json). SOURCE says where it came from (package and version, or
repository and commit): it is recorded in the output's info. The output keeps the operations
named in OPERATIONS below and the webhooks named in WEBHOOKS (each as a POST to
/webhooks/<event>.<action>, its payload the request body), with every component they refer to.
"""
import json
import sys

# The REST operations the App calls (method, path as the description names it).
OPERATIONS = [
    ("get", "/app"),
    ("post", "/app/installations/{installation_id}/access_tokens"),
    ("get", "/rate_limit"),
    ("get", "/app/hook/deliveries"),
    ("post", "/app/hook/deliveries/{delivery_id}/attempts"),
    ("post", "/app-manifests/{code}/conversions"),
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/installation"),
    ("get", "/repos/{owner}/{repo}/issues"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("delete", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/reactions"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"),
    ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"),
    ("delete", "/repos/{owner}/{repo}/pulls/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
    ("delete", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("get", "/repos/{owner}/{repo}/contents/{path}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    ("post", "/repos/{owner}/{repo}/check-runs"),
    ("patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("get", "/orgs/{org}/teams/{team_slug}/members"),
    ("get", "/user"),
    ("get", "/user/installations"),
    ("get", "/user/installations/{installation_id}/repositories"),
]

# The webhook payloads the fixtures hold (event-action, as the description names them).
WEBHOOKS = [
    "installation-created", "installation-deleted", "installation-suspend", "installation-unsuspend",
    "installation-repositories-added", "installation-repositories-removed",
    "issue-comment-created", "issue-comment-deleted", "issue-comment-edited",
    "issues-labeled", "issues-opened", "issues-reopened", "issues-unlabeled",
    "pull-request-review-comment-created",
    "repository-renamed", "repository-transferred", "repository-archived", "repository-unarchived",
    "pull-request-opened", "pull-request-synchronize", "pull-request-edited", "check-run-rerequested",
    "check-suite-rerequested",
]


def refs(node, out):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            out.add(ref)
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def resolve(doc, ref):
    node = doc
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def main():
    doc = json.load(open(sys.argv[1], encoding="utf-8"))
    source = sys.argv[2]
    paths = {}
    for method, path in OPERATIONS:
        op = doc["paths"][path][method]
        entry = paths.setdefault(path, {})
        entry[method] = op
        if "parameters" in doc["paths"][path]:
            entry["parameters"] = doc["paths"][path]["parameters"]
    for name in WEBHOOKS:
        hook = doc["x-webhooks"][name]["post"]
        event, action = name.rsplit("-", 1)
        paths["/webhooks/" + event.replace("-", "_") + "." + action] = {"post": {
            "operationId": hook.get("operationId", name),
            "requestBody": hook["requestBody"],
            "responses": {"200": {"description": "acknowledged"}}}}
    components = {}
    seen = set()
    todo = set()
    refs(paths, todo)
    while todo:
        ref = todo.pop()
        if ref in seen:
            continue
        seen.add(ref)
        _, kind, name = ref[2:].split("/", 2)
        node = resolve(doc, ref)
        components.setdefault(kind, {})[name] = node
        refs(node, todo)
    out = {
        "openapi": doc["openapi"],
        "info": {"title": "GitHub REST API: the operations and webhooks AgentX Clarify uses",
                 "version": doc["info"]["version"],
                 "description": "Extracted by src/test/contract/extract.py from " + source + "."},
        "servers": [{"url": "/"}],
        "paths": dict(sorted(paths.items())),
        "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())},
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
