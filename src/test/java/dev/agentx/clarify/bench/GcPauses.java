package dev.agentx.clarify.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The garbage collections of this JVM while it records, as intervals on the {@link System#nanoTime()}
 * scale, so a benchmark can tell which slow responses overlapped a collection. A collection's
 * duration as the JVM reports it is its pause for the stop-the-world collectors (Serial, Parallel,
 * G1's young and mixed collections); G1's concurrent cycle is reported by a separate bean whose
 * duration is not a pause and is left out.
 */
final class GcPauses implements NotificationListener, AutoCloseable {
    /** One collection: when it started and ended (nanoTime), and which collector ran it. */
    record Pause(long startNanos, long endNanos, String collector) {
        double millis() {
            return (endNanos - startNanos) / 1e6;
        }

        boolean overlaps(long from, long to) {
            return startNanos < to && endNanos > from;
        }
    }

    private final List<Pause> pauses = new ArrayList<>();
    private final List<NotificationEmitter> emitters = new ArrayList<>();
    /** nanoTime at JVM start: GC notifications carry times in milliseconds of JVM uptime. */
    private final long startNanos = System.nanoTime() - ManagementFactory.getRuntimeMXBean().getUptime() * 1_000_000L;

    GcPauses() {
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter e && !gc.getName().contains("Concurrent")) {
                e.addNotificationListener(this, null, null);
                emitters.add(e);
            }
        }
    }

    @Override
    public void handleNotification(Notification n, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
        long start = startNanos + info.getGcInfo().getStartTime() * 1_000_000L;
        long end = startNanos + info.getGcInfo().getEndTime() * 1_000_000L;
        synchronized (pauses) {
            pauses.add(new Pause(start, end, info.getGcName()));
        }
    }

    /** The collections that ended after {@code fromNanos}. */
    List<Pause> since(long fromNanos) {
        synchronized (pauses) {
            List<Pause> out = new ArrayList<>();
            for (Pause p : pauses) {
                if (p.endNanos() > fromNanos) {
                    out.add(p);
                }
            }
            return out;
        }
    }

    @Override
    public void close() {
        for (NotificationEmitter e : emitters) {
            try {
                e.removeNotificationListener(this);
            } catch (javax.management.ListenerNotFoundException ignored) {
                // never added: nothing to remove
            }
        }
    }
}
