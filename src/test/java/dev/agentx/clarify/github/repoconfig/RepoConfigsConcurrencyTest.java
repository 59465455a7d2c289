package dev.agentx.clarify.github.repoconfig;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.github.api.RepoFile;
import dev.agentx.clarify.support.MutableClock;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The worker's lanes resolve a repository's config at once: GitHub is asked once, not once per lane. */
class RepoConfigsConcurrencyTest {
    private static final RepoRef REPO = new RepoRef("acme", "widgets");
    private final MutableClock clock = MutableClock.at("2026-11-23T10:00:00Z");
    private final AtomicInteger calls = new AtomicInteger();

    /** A gateway whose only call, reading the file, waits for {@code gate} and finds no file. */
    private GitHubGateway gateway(CountDownLatch gate) {
        return (GitHubGateway) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {GitHubGateway.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("fileOnDefaultBranch")) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    calls.incrementAndGet();
                    gate.await(30, TimeUnit.SECONDS);
                    return Optional.<RepoFile>empty();
                });
    }

    private RepoConfigs configs(GitHubGateway github) {
        return new RepoConfigs(AgentxConfig.defaults(), repo -> null, github, clock, Duration.ofMinutes(1));
    }

    @Test
    void lanesStartingTogetherAskGitHubOnce() throws Exception {
        int lanes = 12;
        CountDownLatch entered = new CountDownLatch(lanes);
        RepoConfigs configs = configs(gateway(entered));
        ExecutorService pool = Executors.newFixedThreadPool(lanes);
        List<Future<RepoConfigs.Resolved>> all = new ArrayList<>();
        try {
            for (int i = 0; i < lanes; i++) {
                all.add(pool.submit(() -> {
                    entered.countDown(); // the first to ask waits in the call until every lane has come this far
                    return configs.resolve(7, REPO);
                }));
            }
            for (Future<RepoConfigs.Resolved> f : all) {
                assertSame(AgentxConfig.defaults().getClass(), f.get(30, TimeUnit.SECONDS).config().getClass());
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, calls.get());
    }

    @Test
    void whileOneThreadChecksADueRepositoryTheOthersGoOnWithTheConfigInForce() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch open = new CountDownLatch(0);
        CountDownLatch[] gate = {open};
        GitHubGateway github = (GitHubGateway) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {GitHubGateway.class}, (proxy, method, args) -> {
                    calls.incrementAndGet();
                    gate[0].await(30, TimeUnit.SECONDS);
                    return Optional.<RepoFile>empty();
                });
        RepoConfigs configs = configs(github);
        AgentxConfig first = configs.resolve(7, REPO).config();
        assertEquals(1, calls.get());

        clock.advance(Duration.ofMinutes(2)); // due for a check
        gate[0] = release;
        ExecutorService checker = Executors.newSingleThreadExecutor();
        try {
            Future<RepoConfigs.Resolved> checking = checker.submit(() -> configs.resolve(7, REPO));
            while (calls.get() < 2) {
                Thread.onSpinWait(); // until the checker is inside the call
            }
            // not blocked behind the check: answers at once with what is in force
            assertSame(first, configs.resolve(7, REPO).config());
            assertEquals(2, calls.get());
            release.countDown();
            checking.get(30, TimeUnit.SECONDS);
        } finally {
            checker.shutdownNow();
        }
        configs.resolve(7, REPO); // checked a moment ago: no call
        assertEquals(2, calls.get());
    }
}
