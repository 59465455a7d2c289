-- A repository's state follows GitHub's id of it, which a rename or a transfer does not change
-- (docs/storage.md, "Repositories by id"): the repo column of ledgers, agent_statuses,
-- status_changes, events and comment_links, and the 'mirror/<repo>#N' notes, hold the id in
-- decimal. Which name each id was last seen with, and where the server may post, is here.

-- One row per repository the server has seen: its current owner and name (since when), the
-- installation last seen acting on it, and since when it is archived or taken out of its
-- installation (null: it is not), which stops posting there.
CREATE TABLE repositories (
    id           bigint      PRIMARY KEY,
    owner        text        NOT NULL,
    name         text        NOT NULL,
    since        timestamptz NOT NULL,
    installation bigint      NOT NULL,
    archived     timestamptz,
    removed      timestamptz
);
CREATE INDEX repositories_by_name ON repositories (lower(owner), lower(name));

-- Installations deleted or suspended: nothing is posted through them; what was queued waits for
-- them to come back (docs/github-app.md, "A repository's whole life").
CREATE TABLE installations (
    id    bigint      PRIMARY KEY,
    state text        NOT NULL CHECK (state IN ('deleted', 'suspended')),
    since timestamptz NOT NULL
);

COMMENT ON COLUMN ledgers.repo IS 'GitHub''s id of the repository, in decimal (repositories.id)';
COMMENT ON COLUMN agent_statuses.repo IS 'GitHub''s id of the repository, in decimal (repositories.id)';
COMMENT ON COLUMN status_changes.repo IS 'GitHub''s id of the repository, in decimal (repositories.id)';
COMMENT ON COLUMN events.repo IS 'GitHub''s id of the repository, in decimal (repositories.id)';
COMMENT ON COLUMN comment_links.repo IS 'GitHub''s id of the repository, in decimal (repositories.id)';
COMMENT ON COLUMN delivery_queue.order_key IS 'GitHub''s id of the repository and the issue number, <id>#<N> (a rename keeps a line), or empty';
