package dev.agentx.clarify.lock;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The random tokens of lock files and of stale locks renamed away: 122 random bits in the form of
 * a version-4 UUID. A token only has to differ from every other holder's, not to be unguessable:
 * anyone who can read the lock file reads its token. So they come from {@link ThreadLocalRandom},
 * not from {@link UUID#randomUUID()}, whose {@code SecureRandom} loads and seeds the security
 * providers on first use, which cost a CLI command more than the lock itself. Each JVM seeds its
 * generator from the wall clock and the system's nanosecond timer; two processes would share a
 * stream only by starting the generator in the same nanosecond.
 */
final class LockTokens {
    private LockTokens() {
    }

    static String next() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long msb = (random.nextLong() & ~0xF000L) | 0x4000L; // version 4
        long lsb = (random.nextLong() & ~(0xC000L << 48)) | (0x8000L << 48); // IETF variant
        return new UUID(msb, lsb).toString();
    }
}
