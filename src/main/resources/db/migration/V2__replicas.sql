-- Replicas of one server on this database (docs/storage.md, "Replicas").

-- Which replica processes each delivery: the first to claim its id. Kept for a week, longer than
-- GitHub keeps deliveries for redelivery (three days).
CREATE TABLE delivery_claims (
    delivery   text        PRIMARY KEY,
    replica    text        NOT NULL,
    claimed_at timestamptz NOT NULL
);
CREATE INDEX delivery_claims_age ON delivery_claims (claimed_at);

-- Which replica sends each effect (a comment, a label change), by the hash of its key; done once
-- GitHub confirmed it. Kept for a week.
CREATE TABLE effect_claims (
    hash       text        PRIMARY KEY,
    replica    text        NOT NULL,
    claimed_at timestamptz NOT NULL,
    done       boolean     NOT NULL DEFAULT false
);
CREATE INDEX effect_claims_age ON effect_claims (claimed_at);

-- Work done by one replica at a time (asking GitHub for missed deliveries): held until
-- expires_at and renewed by its holder.
CREATE TABLE leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);

-- What the server has queued on GitHub for each issue (the comments posted per record, the labels
-- set), by name ('mirror/owner/name#N'), as JSON: every replica continues from it.
CREATE TABLE shared_notes (
    name       text        PRIMARY KEY,
    note       jsonb       NOT NULL,
    updated_at timestamptz NOT NULL
);

-- Installations GitHub rate-limited, until when: every replica holds back its effects for them,
-- as they share the installation's budget.
CREATE TABLE installation_holds (
    installation bigint      PRIMARY KEY,
    until        timestamptz NOT NULL
);
