-- Documents only the server reads, and only whole, are kept as the JSON text it wrote: an effect
-- a claim carries, an issue's note, a status change waiting to be folded. As jsonb each write paid
-- for parsing and normalising the document (the effects' claims about half their insert's time)
-- for queries nobody runs on them. What operators query stays jsonb: ledgers, agent statuses, events
-- (docs/storage.md). A cast still reads these as jsonb: effect::jsonb ->> 'kind'.
ALTER TABLE effect_claims ALTER COLUMN effect TYPE text USING effect::text;
ALTER TABLE shared_notes ALTER COLUMN note TYPE text USING note::text;
ALTER TABLE status_changes ALTER COLUMN statuses TYPE text USING statuses::text;
