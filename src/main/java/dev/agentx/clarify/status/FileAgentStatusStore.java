package dev.agentx.clarify.status;

import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/** {@code <state>/agent-status.json}, written atomically under its own lock. */
public final class FileAgentStatusStore implements AgentStatusStore {
    private final Path file;
    private final LockManager locks;
    private final AgentStatusCodec codec = new AgentStatusCodec();

    public FileAgentStatusStore(Path stateDir, LockManager locks) {
        this.file = stateDir.resolve("agent-status.json");
        this.locks = locks;
    }

    @Override
    public Map<String, AgentStatus> read() {
        try {
            return codec.decode(Files.readAllBytes(file));
        } catch (NoSuchFileException e) {
            return new TreeMap<>();
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, file + " is damaged: " + JsonErrors.describe(e)
                    + ". It only mirrors the ledgers: move it away and it is rebuilt as agents act.", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void update(String actor, UnaryOperator<Map<String, AgentStatus>> change) {
        locks.withLock(file, actor, () -> {
            Map<String, AgentStatus> before = read();
            Map<String, AgentStatus> after = new TreeMap<>(change.apply(before));
            if (!after.equals(before)) {
                AtomicFiles.write(file, codec.encode(after));
            }
            return null;
        });
    }
}
