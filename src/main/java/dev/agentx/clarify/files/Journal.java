package dev.agentx.clarify.files;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.zip.CRC32C;

/**
 * An append-only file of records with group commit, for state that changes many times a second
 * (the outbox). Each record is framed as length (4 bytes), CRC-32C (4 bytes) and payload.
 * {@link #append(byte[])} returns once the record is on disk: threads that append together share
 * one {@code fdatasync}, so N concurrent appends cost about two syncs instead of N file writes,
 * fsyncs, renames and directory fsyncs. {@link #write(byte[])} and {@link #syncTo(long)} split the
 * two, so a caller can write several records and wait once for all of them.
 *
 * <p>A crash can leave only the last record torn (it was never acknowledged): opening the journal
 * cuts it off. A damaged record followed by good ones is corruption, reported and never skipped.
 * {@link #compact} rewrites the journal (temp file, fsync, atomic rename, directory fsync) with
 * what a fold of its records keeps, so it does not grow without bound.
 */
public final class Journal implements AutoCloseable {
    private static final int HEADER = 8;
    /** A record larger than this is corruption (an outbox entry is a few KB; a comment at most 256 KB). */
    public static final int MAX_RECORD = 16 << 20;

    private final Path file;
    private final ReentrantLock lock = new ReentrantLock();
    /** One compaction at a time (it replaces {@link #channel}; appends only take {@link #lock}). */
    private final Object compacting = new Object();
    private final GroupCommit commit = new GroupCommit(this::force);
    private FileChannel channel;
    private long records;
    /** Where the next record goes: the end of the good part of the file once read. */
    private long position;
    /**
     * The file held records when it was read: a process that was killed may have left them in the
     * page cache only, so the first sync after opening runs even for record numbers it already
     * covers (whoever acts on a record read back, say sending an effect or forgetting what a done
     * delivery needed, syncs first and must find it durable). Cleared by a sync or a compaction.
     */
    private volatile boolean inherited;
    /** How many times the journal was compacted since it was opened (a {@link Mark} is for one generation). */
    private long generation;
    /** Records written since the journal was opened (never reset: {@link #write} hands these out). */
    private long written;
    /** How many of {@link #written} are known to be on disk. */
    private final AtomicLong durable = new AtomicLong();
    /** The group commit's fdatasyncs so far. */
    private final AtomicLong syncs = new AtomicLong();

    /** Opens (or creates) the journal; the records already in it are read with {@link #records()}. */
    public Journal(Path file) {
        this.file = file;
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            boolean created = !Files.exists(file);
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            if (created) {
                channel.force(true);
                AtomicFiles.fsyncDirectory(file.toAbsolutePath().getParent());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open " + file + ": " + IoErrors.why(e), e);
        }
    }

    public Path file() {
        return file;
    }

    /** The records in the file, oldest first; a torn last record is cut off the file. */
    public List<byte[]> records() {
        lock.lock();
        try {
            List<byte[]> out = new ArrayList<>();
            long end = scan(channel, out);
            if (end < channel.size()) {
                channel.truncate(end);
                channel.force(true);
            }
            channel.position(end);
            position = end;
            inherited = end > 0;
            records = out.size();
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
        } finally {
            lock.unlock();
        }
    }

    /** A record and where it starts in the file (for {@link #read(long)}). */
    public record Located(long offset, byte[] payload) {
    }

    /** As {@link #records()}, with where each record starts in the file. */
    public List<Located> located() {
        lock.lock();
        try {
            List<Located> out = new ArrayList<>();
            long end = scan(channel, null, out);
            if (end < channel.size()) {
                channel.truncate(end);
                channel.force(true);
            }
            channel.position(end);
            position = end;
            inherited = end > 0;
            records = out.size();
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The payload of the record that starts at {@code offset} (from {@link #writeLocated} or
     * {@link #located()}), checked against its checksum. Safe beside appends.
     */
    public byte[] read(long offset) {
        try {
            FileChannel ch;
            lock.lock();
            try {
                ch = channel;
            } finally {
                lock.unlock();
            }
            ByteBuffer header = ByteBuffer.allocate(HEADER);
            readFully(ch, header, offset);
            header.flip();
            int length = header.getInt();
            int crc = header.getInt();
            if (length < 0 || length > MAX_RECORD) {
                throw new IOException("no record starts at byte " + offset);
            }
            ByteBuffer payload = ByteBuffer.allocate(length);
            readFully(ch, payload, offset + HEADER);
            CRC32C check = new CRC32C();
            check.update(payload.array(), 0, length);
            if ((int) check.getValue() != crc) {
                throw new IOException("the record at byte " + offset + " is damaged (checksum mismatch)");
            }
            return payload.array();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
        }
    }

    /**
     * The whole records of a journal that another process may be appending to, read without
     * changing the file: a half-written last record is left out, never cut off. Empty when there
     * is no such file.
     */
    public static List<byte[]> readOnly(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            List<byte[]> out = new ArrayList<>();
            scan(ch, out, null, ch.size());
            return out;
        } catch (java.nio.file.NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
        }
    }

    /** Reads every whole record; returns where the good part of the file ends. */
    private long scan(FileChannel ch, List<byte[]> out) throws IOException {
        return scan(ch, out, null);
    }

    private long scan(FileChannel ch, List<byte[]> out, List<Located> located) throws IOException {
        return scan(ch, out, located, ch.size());
    }

    /**
     * Reads the whole records in the file's first {@code size} bytes, through a buffer of up to
     * 1 MB (a read per record cost a start a few hundred milliseconds for a journal of 200,000).
     */
    private static long scan(FileChannel ch, List<byte[]> out, List<Located> located, long size) throws IOException {
        Window w = new Window(ch, size);
        long pos = 0;
        while (pos < size) {
            if (size - pos < HEADER) {
                return pos; // torn tail (a record header is cut short): what a crash during an append leaves
            }
            ByteBuffer header = w.at(pos, HEADER);
            int length = header.getInt();
            int crc = header.getInt();
            if (length < 0 || length > MAX_RECORD || pos + HEADER + length > size) {
                return pos; // torn tail (a record's length runs past the end): what a crash during an append leaves
            }
            byte[] payload = new byte[length];
            w.at(pos + HEADER, length).get(payload);
            CRC32C check = new CRC32C();
            check.update(payload, 0, length);
            if ((int) check.getValue() != crc) {
                if (pos + HEADER + length == size) {
                    return pos; // torn tail (the last record's checksum is wrong): what a crash during an append leaves
                }
                throw new IOException("record at byte " + pos + " is damaged (checksum mismatch) and is not the last "
                        + "one: the file is corrupt; restore it from a backup or move it away to start empty");
            }
            if (out != null) {
                out.add(payload);
            }
            if (located != null) {
                located.add(new Located(pos, payload));
            }
            pos += HEADER + length;
        }
        return pos;
    }

    /** The file's first {@code size} bytes read a buffer at a time, front to back. */
    private static final class Window {
        private final FileChannel ch;
        private final long size;
        private ByteBuffer buf;
        /** Where in the file {@link #buf}'s first byte is; it holds {@code buf.limit()} bytes. */
        private long start;

        Window(FileChannel ch, long size) {
            this.ch = ch;
            this.size = size;
            this.buf = ByteBuffer.allocate((int) Math.max(HEADER, Math.min(1 << 20, size)));
            this.buf.limit(0);
        }

        /** A view of the file's bytes [at, at + n), which lie within the first {@code size}. */
        ByteBuffer at(long at, int n) throws IOException {
            if (at < start || at + n > start + buf.limit()) {
                if (n > buf.capacity()) {
                    buf = ByteBuffer.allocate(n);
                }
                buf.clear();
                buf.limit((int) Math.min(buf.capacity(), size - at));
                readFully(ch, buf, at);
                buf.flip();
                start = at;
            }
            return buf.duplicate().position((int) (at - start)).limit((int) (at - start) + n);
        }
    }

    private static void readFully(FileChannel ch, ByteBuffer buf, long at) throws IOException {
        long pos = at;
        while (buf.hasRemaining()) {
            int n = ch.read(buf, pos);
            if (n < 0) {
                throw new IOException("unexpected end of file");
            }
            pos += n;
        }
    }

    private static ByteBuffer frame(byte[] payload) {
        checkSize(payload);
        ByteBuffer buf = ByteBuffer.allocate(HEADER + payload.length);
        put(buf, payload);
        buf.flip();
        return buf;
    }

    /** Appends the framed record (length, CRC-32C, payload) to {@code buf}, which has room for it. */
    private static void put(ByteBuffer buf, byte[] payload) {
        checkSize(payload);
        CRC32C crc = new CRC32C();
        crc.update(payload);
        buf.putInt(payload.length).putInt((int) crc.getValue()).put(payload);
    }

    private static void checkSize(byte[] payload) {
        if (payload.length > MAX_RECORD) {
            throw new IllegalArgumentException("journal record of " + payload.length + " bytes exceeds " + MAX_RECORD);
        }
    }

    /** How many bytes the file holds (its good part, once read). */
    public long bytes() {
        lock.lock();
        try {
            return position;
        } finally {
            lock.unlock();
        }
    }

    /** How many records the file holds (what {@link #compact} would start from). */
    public long size() {
        lock.lock();
        try {
            return records;
        } finally {
            lock.unlock();
        }
    }

    /** Appends the record; returns once it is durable. Safe to call from many threads at once. */
    public void append(byte[] payload) {
        syncTo(write(payload));
    }

    /**
     * Writes the record to the file without waiting for the disk: it survives the process ending
     * (it is in the kernel's page cache) but not the machine's, until a {@link #sync()} or
     * {@link #syncTo(long)} covers it. Returns the record's number for {@link #syncTo(long)}. Lets
     * a caller write several records and pay one sync for all of them, shared with other threads.
     */
    public long write(byte[] payload) {
        return writeLocated(payload).number();
    }

    /** What {@link #writeLocated} wrote: the record's number for {@link #syncTo} and where it starts for {@link #read}. */
    public record Written(long number, long offset) {
    }

    /** As {@link #write(byte[])}, also telling where the record starts. */
    public Written writeLocated(byte[] payload) {
        ByteBuffer buf = frame(payload);
        lock.lock();
        try {
            long at = position;
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
            position = channel.position();
            records++;
            return new Written(++written, at);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + file + ": " + IoErrors.why(e), e);
        } finally {
            lock.unlock();
        }
    }

    /** Returns once every record written before this call is durable (at once if it already is). */
    public void sync() {
        long upTo;
        lock.lock();
        try {
            upTo = written;
        } finally {
            lock.unlock();
        }
        syncTo(upTo);
    }

    /** Returns once record {@code number} (from {@link #write}) and those before it are durable. */
    public void syncTo(long number) {
        if (inherited || durable.get() < number) {
            commit.commit(); // a sync that started after the record was written: it covers it
        }
    }

    /** The group commit's sync: fdatasync of the file appends go to. */
    private void force() throws IOException {
        FileChannel ch;
        long upTo;
        lock.lock();
        try {
            ch = channel;
            upTo = written;
        } finally {
            lock.unlock();
        }
        try {
            ch.force(false);
        } catch (ClosedChannelException e) {
            // compacted meanwhile: the new file was synced with everything appended before it
        }
        inherited = false;
        syncs.incrementAndGet();
        durable.accumulateAndGet(upTo, Math::max);
    }

    /** How many fdatasyncs the group commit ran since the journal was opened (for tests). */
    public long syncs() {
        return syncs.get();
    }

    /** How many records were written since the journal was opened. */
    public long written() {
        lock.lock();
        try {
            return written;
        } finally {
            lock.unlock();
        }
    }

    /** How many of the records written since the journal was opened are known to be on disk. */
    public long durable() {
        return durable.get();
    }

    /**
     * A point in the journal ({@link #mark()}): a {@link #compact(Mark, Snapshot)} from it replaces
     * the records before it and keeps those after it as they are.
     */
    public record Mark(long generation, long position, long records) {
    }

    /** The records of a compacted journal's head, handed one by one to {@code out}, oldest first. */
    @FunctionalInterface
    public interface Snapshot {
        void writeTo(Consumer<byte[]> out);
    }

    /** Where the journal ends now: appends after this call go after the mark. */
    public Mark mark() {
        lock.lock();
        try {
            return new Mark(generation, position, records);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Rewrites the journal with {@code fold} applied to its records (for example: what is still
     * pending and what must be remembered), durably. The fold must keep records that rebuild the
     * same state when replayed, since the records appended while it runs follow its output as
     * they are. Appends go on while the records are read, folded and written: they wait only
     * while the records appended meanwhile are copied over and the file is replaced (a journal of
     * a few hundred thousand records takes seconds to fold, which held every append up before).
     */
    public void compact(UnaryOperator<List<byte[]>> fold) {
        synchronized (compacting) {
            Mark mark = mark();
            List<byte[]> current = new ArrayList<>();
            try {
                scan(channel, current, null, mark.position()); // only compactions replace the channel, one at a time
            } catch (IOException e) {
                throw new UncheckedIOException("cannot compact " + file + ": " + IoErrors.why(e), e);
            }
            List<byte[]> kept = fold.apply(current);
            replace(mark, out -> kept.forEach(out));
        }
    }

    /**
     * Rewrites the journal, durably, as {@code head} followed by the records appended since
     * {@code since}, without reading the records before it: for an owner that keeps its whole
     * state in memory. {@code head} must rebuild at least the state the records before the mark
     * add up to; it may also hold the effect of some records after it, since those are replayed
     * on top of it, so each record must set what it changes rather than build on what was there
     * (a queue, done, note or forget record, not a counter). Appends go on while {@code head} is
     * written. Fails when the journal was compacted since the mark.
     */
    public void compact(Mark since, Snapshot head) {
        synchronized (compacting) {
            replace(since, head);
        }
    }

    /** Writes {@code head} and the records after {@code since} to a temp file and swaps it in; holds {@link #compacting}. */
    private void replace(Mark since, Snapshot head) {
        if (since.generation() != generation) {
            throw new IllegalStateException("cannot compact " + file + " from a mark taken before it was last compacted");
        }
        Path dir = file.toAbsolutePath().getParent();
        Path temp = dir.resolve("." + file.getFileName() + ".compact");
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            long[] kept = new long[1];
            ByteBuffer buf = ByteBuffer.allocate(1 << 16);
            head.writeTo(record -> {
                kept[0]++;
                try {
                    if (buf.remaining() < HEADER + record.length) {
                        drain(buf, out);
                    }
                    if (buf.remaining() < HEADER + record.length) {
                        ByteBuffer big = frame(record); // larger than the buffer
                        while (big.hasRemaining()) {
                            out.write(big);
                        }
                    } else {
                        put(buf, record);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            drain(buf, out);
            lock.lock();
            try {
                long tail = position - since.position(); // appended meanwhile: whole framed records, copied as they are
                for (long done = 0; done < tail; ) {
                    done += channel.transferTo(since.position() + done, tail - done, out);
                }
                out.force(true);
                Files.move(temp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                AtomicFiles.fsyncDirectory(dir);
                FileChannel old = channel;
                channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
                channel.position(channel.size());
                position = channel.size();
                records = kept[0] + (records - since.records());
                generation++;
                inherited = false; // the new file was synced whole
                old.close();
            } finally {
                lock.unlock();
            }
        } catch (IOException | UncheckedIOException e) {
            throw new UncheckedIOException("cannot compact " + file + ": " + e.getMessage(),
                    e instanceof IOException io ? io : ((UncheckedIOException) e).getCause());
        }
    }

    private static void drain(ByteBuffer buf, FileChannel out) throws IOException {
        buf.flip();
        while (buf.hasRemaining()) {
            out.write(buf);
        }
        buf.clear();
    }

    @Override
    public void close() {
        lock.lock();
        try {
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            lock.unlock();
        }
    }
}
