-- agentx_refuse(message): fails the statement that calls it, and with it the transaction, with
-- SQLSTATE P0001 and the message. A check whose failure must roll its transaction back runs in
-- the database, not in the server once the answer is in: a transaction's last writes go to the
-- database in one message with its COMMIT, which runs unless a statement before it failed.
CREATE FUNCTION agentx_refuse(message text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = message;
END
$$;
