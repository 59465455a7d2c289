-- The queues keep their empty pages. A vacuum that finds empty pages at the end of a table gives
-- them back to the file system, and to do that it takes the table's ACCESS EXCLUSIVE lock, which
-- every insert waits for until the vacuum ends. These tables empty themselves all the time (a done
-- mark deletes its delivery's row and body, a fold deletes the status changes it folded), so
-- nearly every vacuum of them would find such pages: the acknowledgements' inserts would wait
-- behind the queue's vacuum at every tick (up to tens of milliseconds on a busy host), the
-- worker's behind autovacuum's. Kept, the pages are filled again by the next inserts; a table
-- stays as large as its largest backlog (VACUUM FULL, run by hand, gives that space back:
-- docs/storage.md).
ALTER TABLE delivery_queue SET (vacuum_truncate = false, toast.vacuum_truncate = false);
ALTER TABLE status_changes SET (vacuum_truncate = false);
