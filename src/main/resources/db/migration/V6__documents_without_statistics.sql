-- ANALYZE leaves out the documents no query filters, joins or sorts by: an event's and a ledger's
-- jsonb. For such a column ANALYZE sorts its sample (30,000 rows) by jsonb's ordering to find
-- common values and bounds the planner never asks for; on the events table, which grows by a row
-- per change and so is analyzed about every minute under load, that sort was the largest part
-- of an autovacuum round's CPU, taken from the same cores as the acknowledgements' commits. Queries
-- select these rows by their other columns, whose statistics stay.
ALTER TABLE events ALTER COLUMN event SET STATISTICS 0;
ALTER TABLE ledgers ALTER COLUMN ledger SET STATISTICS 0;
