-- The deliveries split in two (docs/storage.md, "Deliveries"): what was received, a row per
-- delivery kept 8 days for the dedupe by id, and the queue, a row per delivery not yet done with,
-- holding its body. The queue stays as small as the backlog, so taking a delivery, the line check
-- and the done mark (a delete) work on a small table, however many deliveries the past 8 days
-- brought; the received rows change once, at the done mark, and have no index on what changes,
-- so that update stays on its page (fillfactor leaves room for it).
DROP TABLE deliveries;

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
    not_before  timestamptz                                       -- the next try after a failed one
);
-- stored as received, out of line and uncompressed: compressing it (pglz) was most of the
-- acknowledgement's insert, the statement a 202 waits for
ALTER TABLE delivery_queue ALTER COLUMN body SET STORAGE EXTERNAL;
-- an issue's line: is an earlier delivery of it still queued? Only deliveries in a line, so that a
-- lookup by seq alone has one index to come by, the primary key: a connection keeps one plan per
-- statement (PostgresDatabase.GENERIC_PLANS), and one made while the queue looked empty could
-- otherwise read this index whole for it.
CREATE INDEX delivery_queue_line ON delivery_queue (order_key, seq) WHERE order_key <> '';
