-- The state of each repository the server serves, keyed by 'owner/name': what .agentx/state/
-- holds in the file store (PRODUCT.md section 2), one row per ledger, one row of agent statuses,
-- one row per event.

-- One ledger per issue: the SPEC-1 JSON (the same document as clarifications/issue-N.json).
-- version counts the writes; active says whether a record is still open (the monitor's scan).
CREATE TABLE ledgers (
    repo       text        NOT NULL,
    issue      integer     NOT NULL CHECK (issue > 0),
    version    bigint      NOT NULL,
    active     boolean     NOT NULL,
    ledger     jsonb       NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (repo, issue)
);
CREATE INDEX ledgers_active ON ledgers (repo, issue) WHERE active;

-- The agents' statuses of a repository: the document agent-status.json holds.
CREATE TABLE agent_statuses (
    repo       text        PRIMARY KEY,
    statuses   jsonb       NOT NULL,
    updated_at timestamptz NOT NULL
);

-- The event log (events.jsonl): one row per event, in the order recorded.
CREATE TABLE events (
    id               bigserial   PRIMARY KEY,
    repo             text        NOT NULL,
    type             text        NOT NULL,
    issue            integer     NOT NULL,
    clarification_id text        NOT NULL,
    at               timestamptz NOT NULL,
    event            jsonb       NOT NULL
);
CREATE INDEX events_by_type ON events (repo, type, id);
