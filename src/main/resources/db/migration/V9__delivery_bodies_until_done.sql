-- A delivery's body is stored as received, out of line and uncompressed, and only until the
-- delivery is done with (docs/storage.md, "Deliveries"). Compressing it (pglz) was most of the
-- acknowledgement's insert, the statement a 202 waits for. Nothing reads the body of a delivery
-- done with (the id alone makes a redelivery a duplicate; the file store deletes it too), so the
-- done mark drops it, and a body takes its uncompressed space only while its delivery is queued.
ALTER TABLE deliveries ALTER COLUMN body SET STORAGE EXTERNAL;
ALTER TABLE deliveries ALTER COLUMN body DROP NOT NULL;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_body_while_queued CHECK (state <> 'queued' OR body IS NOT NULL);
