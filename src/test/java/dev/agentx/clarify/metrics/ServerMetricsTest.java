package dev.agentx.clarify.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.Scrape;
import org.junit.jupiter.api.Test;

class ServerMetricsTest {
    @Test
    void aGaugeThatFailsCostsOnlyItsOwnValues() {
        ServerMetrics m = ServerMetrics.create()
                .gauge("agentx_test_broken", "Fails after one value.", g -> {
                    g.call(1, "a");
                    throw new IllegalStateException("a ledger cannot be read");
                }, "name")
                .gauge("agentx_test_fine", "Works.", g -> g.call(7));
        m.webhookRefused(401);
        String scrape = m.scrape();
        assertEquals(1, Scrape.value(scrape, "agentx_test_broken{name=\"a\"}"), scrape);
        assertEquals(7, Scrape.value(scrape, "agentx_test_fine"), scrape);
        assertEquals(1, Scrape.value(scrape, "agentx_webhook_refused_total{status=\"401\"}"), scrape);
    }

    @Test
    void theJvmSeriesAreInTheScrapeOfEachServerThatAsksForThem() {
        assertFalse(ServerMetrics.create().scrape().contains("jvm_"), "only a server's scrape has them");
        for (int i = 0; i < 2; i++) { // one JVM registry, shared: each server's scrape has its series once
            String scrape = ServerMetrics.create().withJvm().scrape();
            assertTrue(scrape.contains("\n# TYPE jvm_memory_used_bytes gauge\n"), scrape);
            assertEquals(scrape.indexOf("# TYPE jvm_memory_used_bytes "), scrape.lastIndexOf("# TYPE jvm_memory_used_bytes "));
            assertTrue(scrape.contains("\nprocess_cpu_seconds_total "), scrape);
            assertTrue(scrape.contains("\nagentx_lock_wait_seconds_bucket{le=\"0.001\"} 0\n"), scrape);
        }
    }
}
