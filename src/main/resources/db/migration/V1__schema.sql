-- The server's state in PostgreSQL (docs/storage.md): the repositories' state, what the replicas
-- of one server share, and the deliveries they acknowledged.

-- ---- The state of each repository, keyed by 'owner/name' ---------------------------------------
-- What .agentx/state/ holds in the file store (PRODUCT.md section 2): one row per ledger, one row
-- of agent statuses, one row per event.

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

-- The agent statuses each committed ledger change made, not yet folded into agent_statuses. A
-- transaction that changes a ledger records what the issue's ledger now makes of its agents here
-- (one row per issue, in the order of the transactions), instead of locking the repository's
-- agent_statuses row to its commit: that one row would make every delivery of a repository wait
-- for the one before it, through each commit's flush. Behind the commits, one transaction at a time
-- folds the rows into agent_statuses, in order, and deletes them; readers of the statuses apply the
-- rows not folded yet, so they see every committed change (docs/storage.md).
CREATE TABLE status_changes (
    id       bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo     text    NOT NULL,
    issue    integer NOT NULL,
    statuses text    NOT NULL
);
CREATE INDEX status_changes_by_repo ON status_changes (repo, id);

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

-- Documents only the server reads, and only whole, are kept as the JSON text it wrote (an effect a
-- claim carries, an issue's note, a status change waiting to be folded): as jsonb each write would
-- pay for parsing and normalising the document for queries nobody runs on them. What operators
-- query is jsonb: ledgers, agent statuses, events. A cast still reads the others as jsonb:
-- effect::jsonb ->> 'kind'.

-- ---- Replicas of one server on this database (docs/storage.md, "Replicas") --------------------

-- Each running replica's heartbeat (every second, the database's clock): a replica not seen for
-- 15 s is gone, and the deliveries and effects it held are taken over.
CREATE TABLE replica_beats (
    replica text        PRIMARY KEY,
    seen_at timestamptz NOT NULL
);

-- Which replica sends each effect (a comment, a label change), by the hash of its key; done once
-- GitHub confirmed it. Kept for a week. A claim carries the effect (the Effect as the outbox keeps
-- it, as JSON) and the key hashes of the effects of its issue that another replica queued before
-- it and that it waits for (null: none), so that when its replica is gone another replica takes
-- the claim over and sends the effect from here, in its issue's order.
CREATE TABLE effect_claims (
    hash       text        PRIMARY KEY,
    replica    text        NOT NULL,
    claimed_at timestamptz NOT NULL,
    done       boolean     NOT NULL DEFAULT false,
    effect     text,
    after      text[]
);
CREATE INDEX effect_claims_age ON effect_claims (claimed_at);
-- the claims not sent yet, oldest first: what a take-over looks through
CREATE INDEX effect_claims_open ON effect_claims (claimed_at) WHERE NOT done;

-- Work done by one replica at a time (asking GitHub for missed deliveries): held until
-- expires_at and renewed by its holder.
CREATE TABLE leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);

-- What the server has queued on GitHub for each issue (the comments posted per record, the labels
-- set), by name ('mirror/owner/name#N'), as JSON text: every replica continues from it.
CREATE TABLE shared_notes (
    name       text        PRIMARY KEY,
    note       text        NOT NULL,
    updated_at timestamptz NOT NULL
);

-- Installations GitHub rate-limited, until when: every replica holds back its effects for them,
-- as they share the installation's budget.
CREATE TABLE installation_holds (
    installation bigint      PRIMARY KEY,
    until        timestamptz NOT NULL
);

-- The ids of the comments the App posted, by effect key, so that the dashboard of every replica
-- links each thread entry to its comment on GitHub (docs/dashboard.md). A cache of what GitHub
-- holds: deleting rows loses links, nothing else.
CREATE TABLE comment_links (
    repo       text   NOT NULL,
    issue      int    NOT NULL,
    effect_key text   NOT NULL,
    comment_id bigint NOT NULL,
    PRIMARY KEY (repo, issue, effect_key)
);

-- The dashboard's signed-in users (docs/dashboard.md), so that every replica knows a session
-- whichever replica signed the user in. Keyed by the SHA-256 of the session id; expired rows are
-- deleted at each sign-in.
CREATE TABLE dashboard_sessions (
    id_hash      text        PRIMARY KEY,
    login        text        NOT NULL,
    repositories jsonb       NOT NULL,
    expires      timestamptz NOT NULL
);

-- ---- Deliveries (docs/storage.md, "Deliveries") --------------------------------------------------
-- The acknowledgement is the commit of a delivery's rows, and the id makes a copy of the same
-- delivery a duplicate on every replica. Two tables: what was received, a row per delivery kept 8
-- days for the dedupe by id (GitHub redelivers the past 3), and the queue, a row per delivery not
-- yet done with, holding its body. The queue stays as small as the backlog, so taking a delivery,
-- the line check and the done mark (a delete) work on a small table, however many deliveries the
-- past 8 days brought; the received rows change once, at the done mark, and have no index on what
-- changes, so that update stays on its page (fillfactor leaves room for it).
CREATE TABLE deliveries (
    seq         bigint      GENERATED ALWAYS AS IDENTITY UNIQUE, -- the order received
    id          text        PRIMARY KEY,                          -- X-GitHub-Delivery
    event       text        NOT NULL,                             -- X-GitHub-Event
    received_at timestamptz NOT NULL,
    replica     text        NOT NULL,                             -- who acknowledged it; who finished it once done
    state       text        NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'processed', 'failed')),
    failure     text,                                             -- why it failed for good
    done_at     timestamptz,
    body        bytea                                             -- a failed delivery's, to look into
) WITH (fillfactor = 80);
CREATE INDEX deliveries_received ON deliveries (received_at);

CREATE TABLE delivery_queue (
    seq         bigint      PRIMARY KEY,                          -- deliveries.seq
    order_key   text        NOT NULL,                             -- 'owner/name#N', '' for none
    body        bytea       NOT NULL,                             -- as received and verified
    replica     text        NOT NULL,                             -- who holds it
    attempts    integer     NOT NULL DEFAULT 0,
    not_before  timestamptz,                                      -- the next try after a failed one
    waited      boolean     NOT NULL DEFAULT false                -- a later delivery of its line, held by
                                                                  -- another replica, waits for it: its
                                                                  -- done mark is signalled (NOTIFY)
);
-- stored as received, out of line and uncompressed: compressing it (pglz) was most of the
-- acknowledgement's insert, the statement a 202 waits for
ALTER TABLE delivery_queue ALTER COLUMN body SET STORAGE EXTERNAL;
-- an issue's line: is an earlier delivery of it still queued? Only deliveries in a line, so that a
-- lookup by seq alone has one index to come by, the primary key: a connection keeps one plan per
-- statement (PostgresDatabase.GENERIC_PLANS), and one made while the queue looked empty could
-- otherwise read this index whole for it.
CREATE INDEX delivery_queue_line ON delivery_queue (order_key, seq) WHERE order_key <> '';
