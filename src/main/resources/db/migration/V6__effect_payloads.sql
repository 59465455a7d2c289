-- A claim carries the effect it claims (the Effect as the outbox keeps it, as JSON), so that when
-- its replica is gone (no heartbeat) another replica takes the claim over and sends the effect
-- from here, not only one that had queued the same effect itself (docs/storage.md, "Replicas").
ALTER TABLE effect_claims ADD COLUMN effect jsonb;

-- the claims not sent yet, oldest first: what a take-over looks through
CREATE INDEX effect_claims_open ON effect_claims (claimed_at) WHERE NOT done;
