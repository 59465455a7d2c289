-- Every statement the server repeats keeps one plan per connection, made at its first run
-- (PostgresDatabase.GENERIC_PLANS); the plan must not depend on how many rows the queue held
-- at that moment. Looked up by seq, a delivery's row has one index to come by: the line index
-- no longer covers deliveries outside a line (order_key ''), so a lookup by seq alone cannot
-- use it (reading it whole, as a planner that thinks the table empty may choose), and the
-- line check names that predicate.
DROP INDEX delivery_queue_line;
CREATE INDEX delivery_queue_line ON delivery_queue (order_key, seq) WHERE order_key <> '';
