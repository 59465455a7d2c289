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
 * G1's young and mixed collections); G1's concurrent cycle, and the cycles of ZGC and Shenandoah,
 * are reported by beans of their own whose durations are not pauses, and are left out.
 *
 * <p>A notification carries its times in milliseconds from a point near the JVM's start that is
 * not the one {@code RuntimeMXBean.getUptime()} counts from, and the two can differ by more than a
 * young collection lasts, which would hide every overlap. So the scale is calibrated with one
 * {@link System#gc()} at the start: its notification's times against the {@code nanoTime} before
 * and after the call (within a few ms: the call also stops and restarts the threads around the
 * collection the notification times).
 */
final class GcPauses implements NotificationListener, AutoCloseable {
    /** One collection: when it started and ended (nanoTime), and which collector ran it. */
    record Pause(long startNanos, long endNanos, String collector) implements Interval {
    }

    /** Collections after the calibrating one, as notified: start and end in ms, and the collector; guarded by itself. */
    private final List<Notified> pauses = new ArrayList<>();
    private final List<NotificationEmitter> emitters = new ArrayList<>();
    private record Notified(long startMs, long endMs, String collector) {
    }

    /** The {@code nanoTime} of the notifications' time 0, from the calibration. */
    private final long zeroNanos;
    /** How far off {@link #zeroNanos} may be, in ms (half the calibration's window). */
    private final double uncertaintyMillis;
    /** The calibrating collection's times (ms, as notified), once it arrived; guarded by {@link #pauses}. */
    private long[] calibration;

    /** Starts recording; runs one {@link System#gc()} (a full collection) to calibrate the time scale. */
    GcPauses() throws InterruptedException {
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter e && !gc.getName().contains("Concurrent")
                    && !gc.getName().contains("Cycles")) {
                e.addNotificationListener(this, null, null);
                emitters.add(e);
            }
        }
        long before = System.nanoTime();
        System.gc();
        long after = System.nanoTime();
        long[] c;
        long deadline = System.nanoTime() + 10_000_000_000L;
        synchronized (pauses) {
            while ((c = calibration) == null && System.nanoTime() < deadline) {
                pauses.wait(100); // the notification comes on the JVM's notification thread
            }
        }
        if (c == null) {
            throw new IllegalStateException("no notification of the calibrating System.gc() within 10 s"
                    + " (-XX:+DisableExplicitGC?)");
        }
        // before <= true start, true end <= after; a notified time is within 1 ms of the true one
        long early = before - c[0] * 1_000_000L;
        long late = after - c[1] * 1_000_000L;
        zeroNanos = (early + late) / 2;
        uncertaintyMillis = Math.abs(late - early) / 2e6 + 1;
    }

    /** How precisely the pauses are placed on the {@code nanoTime} scale, in ms. */
    double uncertaintyMillis() {
        return uncertaintyMillis;
    }

    @Override
    public void handleNotification(Notification n, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
        long startMs = info.getGcInfo().getStartTime();
        long endMs = info.getGcInfo().getEndTime();
        synchronized (pauses) {
            if (calibration == null) {
                if ("System.gc()".equals(info.getGcCause())) {
                    calibration = new long[] {startMs, endMs};
                    pauses.notifyAll();
                }
                return; // before the calibration nothing is recorded
            }
            pauses.add(new Notified(startMs, endMs, info.getGcName()));
        }
    }

    /** The collections that ended after {@code fromNanos}. */
    List<Pause> since(long fromNanos) {
        synchronized (pauses) {
            List<Pause> out = new ArrayList<>();
            for (Notified n : pauses) {
                Pause p = new Pause(zeroNanos + n.startMs() * 1_000_000L, zeroNanos + n.endMs() * 1_000_000L,
                        n.collector());
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
