package dev.agentx.clarify.github.webhook;

/**
 * The bytes of webhook bodies that may be held at once. A request takes its share before its body
 * is read and gives it back when it is answered; one that does not fit is refused at once rather
 * than waiting, because GitHub waits at most 10 seconds for an answer and asks again for one it
 * did not get.
 */
final class BodyBudget {
    private final long capacity;
    private long inUse;

    BodyBudget(long capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("a body budget must be positive, got " + capacity);
        }
        this.capacity = capacity;
    }

    /** Takes {@code bytes} if they fit beside what is taken; whether they did. */
    synchronized boolean tryTake(long bytes) {
        if (bytes > capacity - inUse) {
            return false;
        }
        inUse += bytes;
        return true;
    }

    synchronized void give(long bytes) {
        inUse -= bytes;
    }

    synchronized long inUse() {
        return inUse;
    }

    long capacity() {
        return capacity;
    }
}
