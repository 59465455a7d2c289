-- The agent statuses each committed ledger change made, not yet folded into agent_statuses. A
-- transaction that changes a ledger records what the issue's ledger now makes of its agents here
-- (one row per issue, in the order of the transactions), instead of locking the repository's
-- agent_statuses row to its commit: that one row would make every delivery of a repository wait
-- for the one before it, through each commit's flush. Behind the commits, one transaction at a time
-- folds the rows into agent_statuses, in order, and deletes them; readers of the statuses apply the
-- rows not folded yet, so they see every committed change (docs/storage.md).
CREATE TABLE status_changes (
    id       bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo     text    NOT NULL,
    issue    integer NOT NULL,
    statuses jsonb   NOT NULL
);
CREATE INDEX status_changes_by_repo ON status_changes (repo, id);
