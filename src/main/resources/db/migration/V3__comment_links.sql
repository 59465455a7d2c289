-- The ids of the comments the App posted, by effect key, so that the dashboard of every replica
-- links each thread entry to its comment on GitHub (docs/dashboard.md). A cache of what GitHub
-- holds: deleting rows loses links, nothing else.
CREATE TABLE comment_links (
    repo       text   NOT NULL,
    issue      int    NOT NULL,
    effect_key text   NOT NULL,
    comment_id bigint NOT NULL,
    PRIMARY KEY (repo, issue, effect_key)
);
