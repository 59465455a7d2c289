package dev.agentx.clarify.ledger;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;
import java.util.stream.Stream;

/** Ledgers as {@code <state>/clarifications/issue-N.json}, one file per issue, written atomically under lock. */
public final class FileLedgerStore implements LedgerStore {
    private static final String PREFIX = "issue-";
    private static final String SUFFIX = ".json";

    private final Path dir;
    private final LockManager locks;
    private final LedgerCodec codec = new LedgerCodec();

    /** @param stateDir the {@code .agentx/state} directory */
    public FileLedgerStore(Path stateDir, LockManager locks) {
        this.dir = stateDir.resolve("clarifications");
        this.locks = locks;
    }

    public Path directory() {
        return dir;
    }

    public Path fileOf(int issue) {
        return dir.resolve("issue-" + issue + ".json");
    }

    @Override
    public Optional<Ledger> read(int issue) {
        Path file = fileOf(issue);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        return Optional.of(decode(file, issue, bytes));
    }

    /** Decodes a ledger file, refusing a damaged one with a message that says what to do. */
    public Ledger decode(Path file, int issue, byte[] bytes) {
        Ledger ledger;
        try {
            ledger = codec.decode(bytes);
        } catch (IllegalArgumentException e) {
            throw damaged(file, e.getMessage());
        }
        if (ledger.issueNumber() != issue) {
            throw damaged(file, "issueNumber is " + ledger.issueNumber() + " but the file is for issue " + issue);
        }
        return ledger;
    }

    private static ClarifyException damaged(Path file, String why) {
        return new ClarifyException(ErrorCode.INTERNAL, "Ledger " + file + " is damaged: " + why
                + ". Nothing was changed. Fix the file by hand or move it away to start the issue afresh.");
    }

    @Override
    public <T> T update(int issue, String actor, Function<Ledger, Mutation<T>> change) {
        Path file = fileOf(issue);
        return locks.withLock(file, actor, () -> {
            Ledger current = read(issue).orElse(Ledger.empty(issue));
            Mutation<T> m = change.apply(current);
            if (m.ledger() != null && !m.ledger().equals(current)) {
                AtomicFiles.write(file, codec.encode(m.ledger()));
            }
            return m.result();
        });
    }

    /** The issue number of a ledger file name ({@code issue-N.json}), or empty if it is not one. */
    public static OptionalInt issueOf(String fileName) {
        // by hand rather than with a regular expression: the monitor calls this for every file of the directory
        if (!fileName.startsWith(PREFIX) || !fileName.endsWith(SUFFIX)
                || fileName.length() <= PREFIX.length() + SUFFIX.length()) {
            return OptionalInt.empty();
        }
        String digits = fileName.substring(PREFIX.length(), fileName.length() - SUFFIX.length());
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return OptionalInt.empty();
            }
        }
        try {
            int n = Integer.parseInt(digits);
            return n > 0 ? OptionalInt.of(n) : OptionalInt.empty();
        } catch (NumberFormatException e) {
            return OptionalInt.empty(); // too large to be an issue number
        }
    }

    @Override
    public List<Integer> issues() {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Integer> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(p -> issueOf(p.getFileName().toString()).ifPresent(out::add));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        out.sort(null);
        return out;
    }
}
