-- A delivery's body is stored as received, out of line and uncompressed (docs/storage.md,
-- "Replicas"): compressing it (pglz) was most of the acknowledgement's insert, the statement a 202
-- waits for. Nothing reads the body of a processed delivery (the id alone makes a redelivery a
-- duplicate; the file store deletes it too), so the done mark drops it; a failed delivery keeps
-- it for whoever looks into the failure, as inbox/failed/ does on files.
ALTER TABLE deliveries ALTER COLUMN body SET STORAGE EXTERNAL;
ALTER TABLE deliveries ALTER COLUMN body DROP NOT NULL;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_body_while_queued CHECK (state <> 'queued' OR body IS NOT NULL);
