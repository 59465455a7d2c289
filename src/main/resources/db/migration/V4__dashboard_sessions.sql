-- The dashboard's signed-in users (docs/dashboard.md), so that every replica knows a session
-- whichever replica signed the user in. Keyed by the SHA-256 of the session id; expired rows are
-- deleted at each sign-in.
CREATE TABLE dashboard_sessions (
    id_hash      text        PRIMARY KEY,
    login        text        NOT NULL,
    repositories jsonb       NOT NULL,
    expires      timestamptz NOT NULL
);
