-- The deliveries every replica acknowledged (docs/storage.md, "Deliveries"): the acknowledgement
-- is the commit of the row, and the id, its primary key, makes a copy of the same delivery a
-- duplicate on every replica. Rows of deliveries done with are kept 8 days (GitHub redelivers the
-- past 3).
CREATE TABLE deliveries (
    seq         bigint      GENERATED ALWAYS AS IDENTITY UNIQUE, -- the order received
    id          text        PRIMARY KEY,                          -- X-GitHub-Delivery
    event       text        NOT NULL,                             -- X-GitHub-Event
    order_key   text        NOT NULL,                             -- 'owner/name#N', '' for none
    body        bytea       NOT NULL,                             -- as received and verified
    received_at timestamptz NOT NULL,
    replica     text        NOT NULL,                             -- who holds it
    state       text        NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'processed', 'failed')),
    attempts    integer     NOT NULL DEFAULT 0,
    not_before  timestamptz,                                      -- the next try after a failed one
    failure     text,                                             -- why it failed for good
    done_at     timestamptz
);
-- an issue's line (is an earlier delivery of it still queued?), and the few rows still queued
-- that a start or a take-over looks through
CREATE INDEX deliveries_line ON deliveries (order_key, seq) WHERE state = 'queued';
CREATE INDEX deliveries_done ON deliveries (done_at) WHERE state <> 'queued';

-- Each running replica's heartbeat (every second, the database's clock): a replica not seen for
-- 15 s is gone, and the deliveries it held are taken over.
CREATE TABLE replica_beats (
    replica text        PRIMARY KEY,
    seen_at timestamptz NOT NULL
);

-- Which replica processes a delivery is the deliveries table's now.
DROP TABLE delivery_claims;
