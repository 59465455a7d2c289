-- Since when each replica has beaten without a gap (docs/storage.md, "Replicas"). A replica is
-- judged gone by its stale heartbeat only while some replica has beaten steadily for the whole
-- 15 s: when the database itself stalls (frozen, its disk or host paused), every heartbeat goes
-- stale at once, and without this the first replica to run after the stall took the others for
-- gone and sent the effects they were sending themselves.
ALTER TABLE replica_beats ADD COLUMN up_since timestamptz NOT NULL DEFAULT now();
-- The check for a steady replica looks at the heartbeats of the last seconds only: by this index,
-- however many rows replicas that never came back left behind.
CREATE INDEX replica_beats_seen ON replica_beats (seen_at);
