package dev.agentx.clarify.cli.daemon;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.ProcessLog;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI's daemon with real processes: the CLI runs as {@code java -cp <test class path> Main},
 * so its daemon is one of the test class path. Most tests share one daemon (folder {@code shared});
 * the ones that stop, kill, change or idle a daemon have a folder of their own. The surefire
 * configuration turns the daemon off for every process; each process here says {@code
 * AGENTX_DAEMON} itself. No daemon outlives the class ({@link #noDaemonOutlivesTheTests}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DaemonTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The AGE column of a list: it grows between two runs of the same command. */
    private static final Pattern AGE = Pattern.compile("\\b\\d+[smhdw]\\b");
    private static final Pattern STARTED = Pattern.compile("started: pid (\\d+),");

    private Path base;
    private Path project;
    /** The shared daemon's folder: the first client makes it. */
    private Path shared;
    /** {@code clarify show CLR-1-001} in a process of its own. */
    private Run show;
    private final AtomicInteger runs = new AtomicInteger();

    @BeforeAll
    void project(@TempDir Path tmp) throws Exception {
        base = tmp;
        project = Files.createDirectories(base.resolve("project"));
        shared = base.resolve("shared");
        ok(run(off(), "--root", root(), "init"));
        Run ask = run(off(), "--root", root(), "clarify", "ask", "--issue", "1", "--from", "engineer", "--to",
                "architect", "Which auth?");
        assertEquals("CLR-1-001\n", ask.out(), ask.err());
        show = ok(run(off(), "--root", root(), "clarify", "show", "CLR-1-001"));
        assertTrue(show.out().startsWith("CLR-1-001 [pending] engineer -> architect"), show.out());
    }

    @AfterAll
    void noDaemonOutlivesTheTests() throws Exception {
        for (Path dir : List.of(shared, base.resolve("restarts"), base.resolve("idle"), base.resolve("session-stop"),
                base.resolve("relative"), base.resolve("sweep"))) {
            stop(place(dir));
        }
        // any other (another build's, or one a failed test left): by its pid
        List<ProcessHandle> left = daemonsOf(base);
        left.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : left) {
            awaitExit(h.pid());
        }
        assertEquals(List.of(), daemonsOf(base).stream().map(ProcessHandle::pid).toList(), "no daemon is left");
    }

    @Test
    @Order(1)
    void theFirstCommandStartsTheDaemonAndTheNextOnesAreServedAsInTheirOwnProcess() throws Exception {
        assertFalse(Files.exists(shared), "no daemon folder before the first command");
        Run first = run(on(), "--root", root(), "clarify");
        Run list = run(off(), "--root", root(), "clarify");
        assertSame(list, first, "the first list");
        assertTrue(first.out().contains("CLR-1-001 pending"), first.out());
        JsonNode up = awaitUp(shared);
        assertEquals(0, up.get("served").asLong(), "the first command ran in its own process: " + up);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(shared)),
                "the client made the folder for its user alone");
        // the status command, as a user runs it
        JsonNode status = JSON.readTree(ok(run(on(), "daemon", "status", "--json")).out());
        assertEquals(up.get("pid"), status.get("pid"), status.toString());
        assertTrue(status.get("running").asBoolean());
        assertTrue(ProcessHandle.of(status.get("pid").asLong()).map(ProcessHandle::isAlive).orElse(false));

        List<List<String>> lines = List.of(
                List.of("--root", root(), "clarify"),
                List.of("--root", root(), "clarify", "show", "CLR-1-001"),
                List.of("--root", root(), "clarify", "shwo", "CLR-1-001"),
                List.of("--root", root(), "clarify", "answer", "CLR-1-999", "--from", "architect", "Nothing"),
                List.of("--root", root(), "--json", "clarify", "show", "CLR-1-001"),
                List.of("--root", root(), "--json", "clarify", "answer", "CLR-1-007", "Nothing"));
        long served = served(shared);
        List<Run> daemon = new ArrayList<>();
        for (List<String> line : lines) {
            String[] args = line.toArray(String[]::new);
            Run viaDaemon = run(on(), args);
            assertEquals(++served, served(shared), "served by the daemon: " + line);
            Run alone = line.equals(lines.get(0)) ? list : line.equals(lines.get(1)) ? show : run(off(), args);
            assertSame(alone, viaDaemon, line.toString());
            daemon.add(viaDaemon);
        }
        assertEquals(show.out(), daemon.get(1).out());
        assertEquals(2, daemon.get(2).code());
        assertTrue(daemon.get(2).err().contains("Did you mean 'show'?"), daemon.get(2).err());
        assertEquals(3, daemon.get(3).code());
        assertTrue(daemon.get(3).err().startsWith("NOT_FOUND: Clarification CLR-1-999 not found"), daemon.get(3).err());
        assertEquals("pending", JSON.readTree(daemon.get(4).out()).get("status").asText());
        assertEquals(3, daemon.get(5).code());
        assertEquals("NOT_FOUND", JSON.readTree(daemon.get(5).out()).at("/error/code").asText(), daemon.get(5).out());
    }

    @Test
    @Order(2)
    void theClientsWorkingFolderAndEnvironmentAreTheCommands() throws Exception {
        awaitServing();
        // the daemon's own folder holds a project of that name: a path resolved against it would find it
        Files.createDirectories(shared.resolve("project/.agentx"));
        Path deep = Files.createDirectories(project.resolve("src/deep"));
        long served = served(shared);

        Run found = run(deep, on(), List.of(), null, "clarify", "show", "CLR-1-001");
        assertEquals(++served, served(shared));
        assertSame(show, found, "no --root: the project above the client's folder");
        Run relative = run(base, on(), List.of(), null, "--root", "project", "clarify", "show", "CLR-1-001");
        assertEquals(++served, served(shared));
        assertSame(show, relative, "--root relative to the client's folder");
        Run missing = run(deep, on(), List.of(), null, "--root", "project", "clarify");
        assertEquals(++served, served(shared));
        assertEquals(2, missing.code(), missing.out() + missing.err());
        assertTrue(missing.err().startsWith("USAGE: --root project: no such folder"), missing.err());

        // mcp takes its role from the client's environment; the daemon's has none
        Run noRole = run(project, on(), List.of(), null, "mcp");
        assertEquals(++served, served(shared));
        assertEquals(2, noRole.code());
        assertTrue(noRole.err().contains("give --agent NAME (or set AGENTX_AGENT)"), noRole.err());
        Map<String, String> nobody = with(on(), "AGENTX_AGENT", "nobody");
        Run unknown = run(project, nobody, List.of(), null, "mcp");
        assertEquals(++served, served(shared));
        assertSame(run(project, with(off(), "AGENTX_AGENT", "nobody"), List.of(), null, "mcp"), unknown, "mcp");
        assertEquals(2, unknown.code());
        assertTrue(unknown.err().startsWith("USAGE: Unknown agent 'nobody' (AGENTX_AGENT)"), unknown.err());

        // a command that sets its own logging runs in its own process
        Run logged = run(project, with(on(), "AGENTX_LOG_LEVEL", "warn"), List.of(), null, "clarify", "show", "CLR-1-001");
        assertSame(show, logged, "with AGENTX_LOG_LEVEL");
        assertEquals(served, served(shared), "not served");
    }

    @Test
    @Order(3)
    void standardInputIsReadThroughTheDaemonOnlyAsFarAsTheCommandReads() throws Exception {
        awaitServing();
        long served = served(shared);
        String question = "Which database?\nPostgreSQL or SQLite, for the deploy target.\n";
        Run ask = run(project, on(), List.of(), question, "clarify", "ask", "--issue", "2", "--from", "engineer",
                "--to", "architect", "--topic", "DB", "-");
        assertEquals(++served, served(shared));
        assertEquals("CLR-2-001\n", ask.out(), ask.err());
        JsonNode record = JSON.readTree(ok(run(off(), "--root", root(), "--json", "clarify", "show", "CLR-2-001")).out());
        assertEquals(question.strip(), record.at("/thread/0/body").asText(), "the question as read from stdin");

        // a command that reads no input leaves all of it to the next reader of the same input
        List<String> java = Jvm.builder(Main.class, "--root", root(), "clarify").command();
        List<String> cmd = new ArrayList<>(List.of("bash", "-c", "\"$@\" >\"$OUT\" 2>\"$ERR\"; echo \"rc=$?\"; cat", "bash"));
        cmd.addAll(java);
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(project.toFile());
        Path out = base.resolve("shared-input.out");
        Path err = base.resolve("shared-input.err");
        environment(pb, with(with(on(), "OUT", out.toString()), "ERR", err.toString()));
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        try (OutputStream in = p.getOutputStream()) {
            in.write("the next reader's line\nand another\n".getBytes(UTF_8));
        }
        String said = new String(p.getInputStream().readAllBytes(), UTF_8);
        finish(p, "bash");
        assertEquals("rc=0\nthe next reader's line\nand another\n", said, Files.readString(err));
        assertEquals(++served, served(shared), "the list was served by the daemon");
        assertTrue(Files.readString(out).contains("CLR-2-001 pending"), Files.readString(out));
    }

    @Test
    @Order(4)
    void anMcpSessionRunsThroughTheDaemonUntilItsInputEnds() throws Exception {
        awaitServing();
        long served = served(shared);
        Path err = base.resolve("mcp.err");
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Process p = mcp(err, lines);
        try {
            OutputStream in = p.getOutputStream();
            send(in, INITIALIZE);
            JsonNode init = answer(lines, 1, err);
            assertEquals("agentx-clarify", init.at("/result/serverInfo/name").asText(), init.toString());
            assertTrue(init.at("/result/instructions").asText().contains("as 'engineer'"), init.toString());
            // the session is open: the daemon serves it now
            JsonNode during = status(shared);
            assertEquals(served + 1, during.get("served").asLong(), during.toString());
            assertEquals(1, during.get("active").asInt(), "the session runs: " + during);

            send(in, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            send(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
            JsonNode tools = answer(lines, 2, err);
            List<String> names = new ArrayList<>();
            tools.at("/result/tools").forEach(t -> names.add(t.get("name").asText()));
            assertTrue(names.contains("clarify_ask") && names.contains("clarify_inbox"), names.toString());

            in.close();
            finish(p, "mcp");
            assertEquals(0, p.exitValue(), ProcessLog.read(err));
            assertEquals("", ProcessLog.read(err), "nothing on stderr, as in a process of its own");
            assertEquals(0, status(shared).get("active").asInt(), "the session ended in the daemon too");
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    @Order(5)
    void anMcpSessionWhoseClientIsKilledEndsInTheDaemon() throws Exception {
        awaitServing();
        long served = served(shared);
        Path err = base.resolve("mcp-killed.err");
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Process p = mcp(err, lines);
        try {
            send(p.getOutputStream(), INITIALIZE);
            assertEquals("agentx-clarify", answer(lines, 1, err).at("/result/serverInfo/name").asText());
            assertEquals(1, status(shared).get("active").asInt());
            assertEquals(served + 1, served(shared));
        } finally {
            p.destroyForcibly();
        }
        // a host that kills its server instead of closing its input: the daemon's session ends too
        DaemonPlace place = place(shared);
        ProcessLog.until("the daemon to end the session of a killed client", () -> active(place) == 0, DEADLINE);
    }

    @Test
    @Order(6)
    void aConnectionWithoutTheKeyIsClosedUnansweredAndNothingRuns() throws Exception {
        JsonNode before = awaitServing();
        DaemonPlace place = place(shared);
        byte[] key = Files.readAllBytes(place.key());
        byte[] wrong = key.clone();
        wrong[0] ^= 1;
        byte[] hello = hello(place.identity, "77");
        List<byte[]> attempts = List.of(
                concat(frame(Frames.KEY, wrong), frame(Frames.HELLO, hello)),
                "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(UTF_8),
                concat(new byte[] {Frames.KEY, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff}, new byte[64]),
                // the right key in a frame that is no key frame
                concat(frame(Frames.HELLO, key), frame(Frames.HELLO, hello)),
                concat(frame(Frames.KEY, java.util.Arrays.copyOf(key, 31)), frame(Frames.HELLO, hello)));
        for (byte[] attempt : attempts) {
            assertEquals(0, exchange(place, attempt).length, "closed without a reply");
        }
        JsonNode after = status(shared);
        assertEquals(before.get("refused").asLong() + attempts.size(), after.get("refused").asLong(), after.toString());
        assertEquals(before.get("served").asLong(), after.get("served").asLong(), "nothing ran: " + after);
        assertFalse(Files.exists(ledger(77)), "nothing was written");
        assertTrue(ProcessLog.read(place.log()).contains("refused a connection that did not give the key"));
    }

    @Test
    @Order(7)
    void aDaemonFolderThatIsNotTheUsersAloneIsNotUsed() throws Exception {
        Path open = Files.createDirectory(base.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path target = Files.createDirectory(base.resolve("target"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path link = Files.createSymbolicLink(base.resolve("link"), target);
        List<Path> refused = new ArrayList<>(List.of(open, link));
        Path foreign = base.resolve("foreign");
        Optional<UserPrincipal> nobody = someoneElse();
        if (nobody.isPresent()) {
            Files.createDirectory(foreign, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            try {
                Files.setOwner(foreign, nobody.get());
                refused.add(foreign); // a folder of another user (only root can make one)
            } catch (java.nio.file.FileSystemException notRoot) {
                Files.delete(foreign);
            }
        }
        for (Path dir : refused) {
            Run r = run(project, on(dir, "60"), List.of(), null, "clarify", "show", "CLR-1-001");
            assertSame(show, r, "with the daemon folder " + dir);
            try (Stream<Path> files = Files.list(dir)) {
                assertEquals(List.of(), files.toList(), "no daemon and no socket in " + dir);
            }
            assertEquals(List.of(), daemonsOf(dir), "no daemon started for " + dir);
        }
        assertEquals("rwxrwxrwx", PosixFilePermissions.toString(Files.getPosixFilePermissions(open)), "left as it was");
    }

    @Test
    @Order(8)
    void aHelloOfAnotherBuildIsRefusedAndOnlyThatOneDifference() throws Exception {
        JsonNode before = awaitServing();
        DaemonPlace place = place(shared);
        byte[] key = Files.readAllBytes(place.key());

        List<Frames.Frame> refused = frames(exchange(place,
                concat(frame(Frames.KEY, key), frame(Frames.HELLO, hello(place.identity + "|another build", "78")))));
        assertEquals(1, refused.size(), "one frame, then the connection closes");
        assertEquals(Frames.REFUSED, refused.get(0).type());
        assertEquals(0, refused.get(0).data().length);
        JsonNode after = status(shared);
        assertEquals(before.get("served").asLong(), after.get("served").asLong(), "nothing ran");
        assertEquals(before.get("refused").asLong(), after.get("refused").asLong(), "the key was right: " + after);
        assertFalse(Files.exists(ledger(78)));

        // the same exchange with this build's identity runs the command
        List<Frames.Frame> ran = frames(exchange(place,
                concat(frame(Frames.KEY, key), frame(Frames.HELLO, hello(place.identity, "78")))));
        assertEquals(Frames.READY, ran.get(0).type());
        Frames.Frame exit = ran.get(ran.size() - 1);
        assertEquals(Frames.EXIT, exit.type());
        assertEquals(0, exit.number(), ran.stream().filter(f -> f.type() == Frames.ERR)
                .map(f -> new String(f.data(), UTF_8)).collect(Collectors.joining()));
        String out = ran.stream().filter(f -> f.type() == Frames.OUT).map(f -> new String(f.data(), UTF_8))
                .collect(Collectors.joining());
        assertEquals("CLR-78-001\n", out);
        assertTrue(Files.exists(ledger(78)));
        assertEquals(before.get("served").asLong() + 1, served(shared));
    }

    @Test
    @Order(9)
    void aDaemonOfAnotherBuildIsNotUsedAndEndsWhenItsBuildChanges() throws Exception {
        Path dir = base.resolve("builds");
        Path extra = Files.createDirectory(base.resolve("extra-entry"));
        // surefire's class path ends with a separator: an empty entry would be the working folder
        String classPath = Stream.concat(Stream.of(System.getProperty("java.class.path").split(File.pathSeparator)),
                Stream.of(extra.toString())).filter(e -> !e.isEmpty()).collect(Collectors.joining(File.pathSeparator));
        List<String> jvm = List.of("-D" + DaemonPlace.CLASSPATH_PROPERTY + "=" + classPath);
        assertSame(show, run(project, on(dir, "12"), jvm, null, "clarify", "show", "CLR-1-001"), "started another build's");
        DaemonPlace other = place(dir, classPath);
        long pid = awaitUp(other).get("pid").asLong();

        // this build's socket and key lead to the other build's daemon: it refuses, the command runs here
        DaemonPlace plain = place(dir);
        assertNotEquals(plain.name, other.name);
        Files.createSymbolicLink(plain.socket(), other.socket());
        Files.createSymbolicLink(plain.key(), other.key());
        assertSame(show, run(project, on(dir, "12"), List.of(), null, "clarify", "show", "CLR-1-001"), "refused");
        assertTrue(Files.isSymbolicLink(plain.socket()) && !Files.exists(plain.starting()),
                "the client reached the other daemon (else it would have started one of its own)");
        assertEquals(0, status(other).get("served").asLong(), "the other build's daemon ran nothing");
        Files.delete(plain.socket());
        Files.delete(plain.key());

        // the other build changes on disk: its daemon ends by itself and takes its socket and key away
        Files.setLastModifiedTime(extra, FileTime.fromMillis(Files.getLastModifiedTime(extra).toMillis() + 60_000));
        awaitExit(pid);
        assertTrue(ProcessLog.read(other.log()).contains("stopped: its build changed on disk"), ProcessLog.read(other.log()));
        assertFalse(Files.exists(other.socket()) || Files.exists(other.key()));
        // the changed build's next command runs in its own process and starts a daemon of its own
        assertSame(show, run(project, on(dir, "12"), jvm, null, "clarify", "show", "CLR-1-001"), "the changed build");
        DaemonPlace changed = place(dir, classPath);
        assertNotEquals(other.name, changed.name);
        JsonNode up = awaitUp(changed);
        assertEquals(0, up.get("served").asLong());
        stop(changed);
    }

    @Test
    @Order(10)
    void daemonStopEndsItAndAKilledDaemonsSocketDoesNotStopTheNextCommand() throws Exception {
        Path dir = base.resolve("restarts");
        DaemonPlace place = place(dir);
        assertSame(show, run(project, on(dir, "60"), List.of(), null, "clarify", "show", "CLR-1-001"), "first");
        long first = awaitUp(dir).get("pid").asLong();

        // a connection the daemon took before it was told to stop: its command does not run there
        byte[] key = Files.readAllBytes(place.key());
        try (SocketChannel early = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            early.connect(UnixDomainSocketAddress.of(place.socket()));
            Run stop = ok(run(project, on(dir, "60"), List.of(), null, "daemon", "stop", "--json"));
            JsonNode stopping = JSON.readTree(stop.out());
            assertTrue(stopping.get("stopping").asBoolean(), stop.out());
            assertEquals(first, stopping.get("pid").asLong());
            List<Byte> reply = frames(exchange(early, concat(frame(Frames.KEY, key),
                    frame(Frames.HELLO, hello(place.identity, "79"))))).stream().map(Frames.Frame::type).toList();
            assertTrue(reply.isEmpty() || reply.equals(List.of(Frames.REFUSED)), "refused or closed: " + reply);
        }
        awaitExit(first);
        assertFalse(Files.exists(ledger(79)), "the command the stopping daemon took did not run");
        assertFalse(Files.exists(place.socket()), "the socket went with it");
        assertFalse(Files.exists(place.key()), "the key went with it");
        JsonNode none = JSON.readTree(ok(run(project, on(dir, "60"), List.of(), null, "daemon", "status", "--json")).out());
        assertFalse(none.get("running").asBoolean(), none.toString());

        // bin/agentx's first step, the client's own entry: 79, nothing ran, and a daemon is on its way
        Run notServed = client(dir, "--root", root(), "clarify", "show", "CLR-1-001");
        assertEquals(DaemonClient.NOT_SERVED, notServed.code(), notServed.err());
        assertEquals("", notServed.out() + notServed.err());
        JsonNode second = awaitUp(dir);
        assertNotEquals(first, second.get("pid").asLong());
        assertEquals(0, second.get("served").asLong(), "the command after the stop did not run in it");
        Run served = client(dir, "--root", root(), "clarify", "shwo", "CLR-1-001");
        assertEquals(2, served.code(), "the command's own exit code");
        assertTrue(served.err().contains("Did you mean 'show'?"), served.err());
        assertEquals(1, served(dir));
        // status is the client's even with the daemon turned off
        JsonNode off = JSON.readTree(ok(run(project, Map.of(DaemonClient.ENV, "off", DaemonPlace.DIR_ENV, dir.toString()),
                List.of(), null, "daemon", "status", "--json")).out());
        assertEquals(second.get("pid"), off.get("pid"), off.toString());

        // killed: the socket and key stay behind, and lead nowhere
        long killed = second.get("pid").asLong();
        ProcessHandle.of(killed).ifPresent(ProcessHandle::destroyForcibly);
        awaitExit(killed);
        assertTrue(Files.exists(place.socket()) && Files.exists(place.key()), "a killed daemon leaves its socket");
        assertSame(show, run(project, on(dir, "60"), List.of(), null, "clarify", "show", "CLR-1-001"), "after a kill");
        JsonNode third = awaitUp(dir);
        assertNotEquals(killed, third.get("pid").asLong());
        assertEquals(0, third.get("served").asLong());
        assertSame(show, run(project, on(dir, "60"), List.of(), null, "clarify", "show", "CLR-1-001"), "served again");
        assertEquals(1, served(dir), "the new daemon serves");
        stop(place);
    }

    @Test
    @Order(11)
    void anIdleDaemonEndsByItself() throws Exception {
        Path dir = base.resolve("idle");
        DaemonPlace place = place(dir);
        assertSame(show, run(project, on(dir, "1"), List.of(), null, "clarify", "show", "CLR-1-001"), "idle");
        // its pid from its log: with 1 s it may be gone before a status could ask
        Instant end = Instant.now().plus(DEADLINE);
        Matcher started;
        while (!(started = STARTED.matcher(ProcessLog.read(place.log()))).find()) {
            assertTrue(Instant.now().isBefore(end), "the daemon did not start: " + ProcessLog.read(place.log()));
            Thread.sleep(50); // polling a process
        }
        assertTrue(ProcessLog.read(place.log()).contains("idle 1 s"), ProcessLog.read(place.log()));
        awaitExit(Long.parseLong(started.group(1)));
        assertTrue(ProcessLog.read(place.log()).contains("stopped: idle for 1 s"), ProcessLog.read(place.log()));
        assertFalse(Files.exists(place.socket()) || Files.exists(place.key()), "it took its socket and key away");
    }

    @Test
    @Order(11)
    void aStartingDaemonRemovesTheFilesOfOtherBuildsUnusedForADay() throws Exception {
        Path dir = base.resolve("sweep");
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        FileTime twoDaysAgo = FileTime.from(Instant.now().minus(Duration.ofDays(2)));
        List<Path> old = new ArrayList<>();
        for (String suffix : List.of(".lock", ".log", ".sock", ".key")) {
            old.add(Files.writeString(dir.resolve("cli-0ld" + suffix), "x"));
            Files.writeString(dir.resolve("cli-recent" + suffix), "x");
            Files.writeString(dir.resolve("cli-starting" + suffix), "x");
        }
        Files.writeString(dir.resolve("cli-starting.starting"), "");
        for (String b : List.of("cli-0ld", "cli-recent", "cli-starting")) {
            for (String suffix : List.of(".lock", ".log", ".sock", ".key", ".starting")) {
                Path f = dir.resolve(b + suffix);
                if (Files.exists(f)) {
                    Files.setLastModifiedTime(f, twoDaysAgo);
                }
            }
        }
        Files.setLastModifiedTime(dir.resolve("cli-recent.log"), FileTime.from(Instant.now()));
        DaemonPlace place = place(dir);
        assertSame(show, run(project, on(dir, "1"), List.of(), null, "clarify", "show", "CLR-1-001"), "sweep");
        Instant end = Instant.now().plus(DEADLINE);
        Matcher started;
        while (!(started = STARTED.matcher(ProcessLog.read(place.log()))).find()) {
            assertTrue(Instant.now().isBefore(end), "the daemon did not start: " + ProcessLog.read(place.log()));
            Thread.sleep(50); // polling a process
        }
        for (Path f : old) {
            assertFalse(Files.exists(f), f + " of a build unused for two days, whose daemon does not run");
        }
        for (String suffix : List.of(".lock", ".log", ".sock", ".key")) {
            assertTrue(Files.exists(dir.resolve("cli-recent" + suffix)), "its log changed today: kept");
            assertTrue(Files.exists(dir.resolve("cli-starting" + suffix)), "a start of it is under way: kept");
        }
        assertTrue(ProcessLog.read(place.log()).contains("another build, unused for a day: cli-0ld"),
                ProcessLog.read(place.log()));
        awaitExit(Long.parseLong(started.group(1)));
    }

    @Test
    @Order(12)
    void aWriteThroughTheDaemonIsDurableAndAsInItsOwnProcess() throws Exception {
        awaitServing();
        long served = served(shared);
        java.util.Set<String> before = stateFiles();
        List<Run> viaDaemon = List.of(
                run(project, on(), List.of(), null, "clarify", "ask", "--issue", "3", "--from", "engineer", "--to",
                        "architect", "--topic", "Cache", "Which cache?"),
                run(project, on(), List.of(), null, "--json", "clarify", "answer", "CLR-3-001", "--from", "architect",
                        "Redis"));
        assertEquals(served + 2, served(shared));
        java.util.Set<String> daemonWrote = stateFiles();
        List<Run> alone = List.of(
                run(project, off(), List.of(), null, "clarify", "ask", "--issue", "4", "--from", "engineer", "--to",
                        "architect", "--topic", "Cache", "Which cache?"),
                run(project, off(), List.of(), null, "--json", "clarify", "answer", "CLR-4-001", "--from", "architect",
                        "Redis"));
        java.util.Set<String> aloneWrote = stateFiles();
        // while the daemon runs on, it keeps nothing in the project that a process of its own would not leave
        assertEquals(newFiles(daemonWrote, aloneWrote, 4), newFiles(before, daemonWrote, 3));
        assertEquals("CLR-3-001\n", viaDaemon.get(0).out(), viaDaemon.get(0).err());
        assertEquals("CLR-4-001\n", alone.get(0).out());
        for (int i = 0; i < 2; i++) {
            assertEquals(alone.get(i).code(), viaDaemon.get(i).code());
            assertEquals(alone.get(i).err().replace("CLR-4-", "CLR-3-"), viaDaemon.get(i).err());
        }
        JsonNode said = JSON.readTree(viaDaemon.get(1).out());
        assertEquals(timeless(alone.get(1).out().replace("CLR-4-", "CLR-3-").replace("\"issueNumber\" : 4",
                "\"issueNumber\" : 3")), timeless(viaDaemon.get(1).out()), "the answer's JSON, as in a process of its own");
        assertEquals("answered", said.get("status").asText());
        // read back by a process of its own: what the daemon said it wrote
        JsonNode written = JSON.readTree(ok(run(off(), "--root", root(), "--json", "clarify", "show", "CLR-3-001")).out());
        assertEquals(said.get("clarification"), written);
        assertEquals("Redis", written.at("/thread/1/body").asText());
    }

    @Test
    @Order(13)
    void concurrentWritesToOneIssueThroughTheDaemonAllLand() throws Exception {
        awaitServing();
        long served = served(shared);
        int n = 4;
        List<Process> asks = new ArrayList<>();
        List<Path> outs = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            ProcessBuilder pb = Jvm.builder(Main.class, "--root", root(), "clarify", "ask", "--issue", "5", "--from",
                    "engineer", "--to", "architect", "--topic", "T" + i, "Question " + i).directory(base.toFile());
            environment(pb, on());
            Path out = base.resolve("concurrent-" + i + ".out");
            outs.add(out);
            asks.add(pb.redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.appendTo(out.toFile())).start());
        }
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            finish(asks.get(i), "ask " + i);
            assertEquals(0, asks.get(i).exitValue(), Files.readString(outs.get(i)));
            ids.add(Files.readString(outs.get(i)).strip());
        }
        assertEquals(served + n, served(shared), "all served by the daemon, at once");
        assertEquals(List.of("CLR-5-001", "CLR-5-002", "CLR-5-003", "CLR-5-004"), ids.stream().sorted().toList());
        JsonNode listed = JSON.readTree(ok(run(off(), "--root", root(), "--json", "clarify", "--issue", "5")).out());
        List<String> topics = new ArrayList<>();
        listed.findValues("topic").forEach(t -> topics.add(t.asText()));
        assertEquals(List.of("T1", "T2", "T3", "T4"), topics.stream().sorted().toList(), listed.toString());
    }

    // ---- processes

    record Run(int code, String out, String err) {
    }

    @Test
    @Order(14)
    void aConnectionThatSendsNothingIsClosedAndKeepsNoDaemonRunning() throws Exception {
        awaitServing();
        DaemonPlace place = place(shared);
        try (SocketChannel silent = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            silent.connect(UnixDomainSocketAddress.of(place.socket()));
            assertEquals(0, status(shared).get("active").asInt(), "a connection without the key runs nothing");
            // the daemon closes it after its handshake time (5 s): the read ends instead of waiting on
            Instant end = Instant.now().plus(DEADLINE);
            ByteBuffer one = ByteBuffer.allocate(1);
            silent.configureBlocking(false);
            int n;
            while ((n = silent.read(one)) == 0) {
                assertTrue(Instant.now().isBefore(end), "the silent connection is still open");
                Thread.sleep(50); // polling a socket
            }
            assertEquals(-1, n, "closed without a byte");
        }
    }

    @Test
    @Order(15)
    void aStoppingDaemonLetsANewOneStartWhileItsMcpSessionGoesOn() throws Exception {
        Path dir = base.resolve("session-stop");
        assertSame(show, run(project, on(dir, "60"), List.of(), null, "clarify", "show", "CLR-1-001"), "first");
        long first = awaitUp(dir).get("pid").asLong();
        Path err = base.resolve("mcp-session-stop.err");
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Process p = mcp(err, lines, on(dir, "60"));
        try {
            OutputStream in = p.getOutputStream();
            send(in, INITIALIZE);
            assertEquals("agentx-clarify", answer(lines, 1, err).at("/result/serverInfo/name").asText());
            // --root's value is no word of the daemon command
            Run stop = ok(run(project, on(dir, "60"), List.of(), null, "--root", root(), "daemon", "stop", "--json"));
            assertEquals(first, JSON.readTree(stop.out()).get("pid").asLong(), stop.out());
            // the next command runs here and starts a new daemon, though the old one still has a session
            assertSame(show, run(project, on(dir, "60"), List.of(), null, "clarify", "show", "CLR-1-001"), "after stop");
            long second = awaitUp(dir).get("pid").asLong();
            assertNotEquals(first, second);
            assertTrue(ProcessHandle.of(first).map(ProcessHandle::isAlive).orElse(false), "the old one serves its session");
            send(in, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            send(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
            assertTrue(answer(lines, 2, err).at("/result/tools").size() > 0, "the session still answers");
            in.close();
            finish(p, "mcp");
            assertEquals(0, p.exitValue(), ProcessLog.read(err));
            awaitExit(first);
            assertSame(show, run(project, on(dir, "60"), List.of(), null, "clarify", "show", "CLR-1-001"), "served");
            assertEquals(1, served(dir), "the new daemon serves");
        } finally {
            p.destroyForcibly();
        }
        stop(place(dir));
    }

    @Test
    @Order(16)
    void aClientStartedWithARelativeClassPathGetsADaemonThatServes() throws Exception {
        Path dir = base.resolve("relative");
        // relative entries, and an empty one (the JVM reads it as the working folder), from the project
        StringBuilder cp = new StringBuilder();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!entry.isEmpty()) {
                cp.append(File.pathSeparatorChar).append(project.relativize(Path.of(entry).toAbsolutePath()));
            }
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (int i = 0; i < 2; i++) {
            ProcessBuilder pb = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-cp", cp.toString(),
                    Main.class.getName(), "clarify", "show", "CLR-1-001").directory(project.toFile());
            environment(pb, on(dir, "60"));
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            pb.redirectError(ProcessBuilder.Redirect.DISCARD);
            Process proc = pb.start();
            String out = new String(proc.getInputStream().readAllBytes(), UTF_8);
            finish(proc, "show with a relative class path");
            assertEquals(0, proc.exitValue());
            assertEquals(show.out(), out);
            if (i == 0) {
                awaitUp(dir);
            }
        }
        assertEquals(1, served(dir), "the second run was served: " + ProcessLog.read(place(dir).log()));
        stop(place(dir));
    }

    private String root() {
        return project.toString();
    }

    private Map<String, String> on() {
        return on(shared, "120");
    }

    private static Map<String, String> on(Path dir, String idleSeconds) {
        return Map.of(DaemonClient.ENV, "on", DaemonPlace.DIR_ENV, dir.toString(), DaemonClient.IDLE_ENV, idleSeconds);
    }

    private static Map<String, String> off() {
        return Map.of(DaemonClient.ENV, "off");
    }

    private static Map<String, String> with(Map<String, String> env, String name, String value) {
        Map<String, String> m = new HashMap<>(env);
        m.put(name, value);
        return m;
    }

    private Run run(Map<String, String> env, String... args) throws Exception {
        return run(base, env, List.of(), null, args);
    }

    /** The CLI in a process of its own: in {@code cwd}, with {@code env} and {@code stdin} (null: none). */
    private Run run(Path cwd, Map<String, String> env, List<String> jvm, String stdin, String... args) throws Exception {
        ProcessBuilder pb = Jvm.builder(jvm, Main.class, args).directory(cwd.toFile());
        environment(pb, env);
        int n = runs.incrementAndGet();
        Path out = base.resolve("run-" + n + ".out");
        Path err = base.resolve("run-" + n + ".err");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        if (stdin == null) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        Process p = pb.start();
        if (stdin != null) {
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin.getBytes(UTF_8));
            } catch (IOException e) {
                // it ended without reading: its output says why
            }
        }
        finish(p, String.join(" ", args));
        return new Run(p.exitValue(), Files.readString(out, UTF_8), Files.readString(err, UTF_8));
    }

    /** The daemon's client entry alone ({@code DaemonClient.main}), as bin/agentx runs it first. */
    private Run client(Path dir, String... args) throws Exception {
        ProcessBuilder pb = Jvm.builder(DaemonClient.class, args).directory(project.toFile());
        environment(pb, on(dir, "60"));
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Process p = pb.start();
        byte[] err = p.getErrorStream().readAllBytes();
        byte[] out = p.getInputStream().readAllBytes();
        finish(p, "client " + String.join(" ", args));
        return new Run(p.exitValue(), new String(out, UTF_8), new String(err, UTF_8));
    }

    /** The variables of this test only: none inherited that steers the daemon or the output. */
    private static void environment(ProcessBuilder pb, Map<String, String> env) {
        Map<String, String> e = pb.environment();
        e.keySet().removeIf(k -> k.startsWith("AGENTX_") || k.equals("NO_COLOR") || k.equals("COLUMNS"));
        e.putAll(env);
    }

    private static void finish(Process p, String what) throws InterruptedException {
        if (!p.waitFor(DEADLINE.toSeconds() * 2, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(what + " did not end");
        }
    }

    private static Run ok(Run r) {
        assertEquals(0, r.code(), r.out() + r.err());
        return r;
    }

    /** The same outcome, but for the ages in a list. */
    private static void assertSame(Run expected, Run actual, String what) {
        assertEquals(expected.code(), actual.code(), what + ": " + actual.err());
        assertEquals(AGE.matcher(expected.out()).replaceAll("AGE"), AGE.matcher(actual.out()).replaceAll("AGE"), what);
        assertEquals(expected.err(), actual.err(), what);
    }

    /** A command's JSON without the times in it, which differ between two runs. */
    private static JsonNode timeless(String json) throws IOException {
        JsonNode node = JSON.readTree(json);
        for (JsonNode record : node.findParents("thread")) {
            ((ObjectNode) record).remove(List.of("created", "staleAfter", "resolvedAt"));
            record.get("thread").forEach(entry -> ((ObjectNode) entry).remove("timestamp"));
        }
        return node;
    }

    /** The files under the project's .agentx/state, relative. */
    private java.util.Set<String> stateFiles() throws IOException {
        Path state = project.resolve(".agentx/state");
        try (Stream<Path> files = Files.walk(state)) {
            return files.filter(Files::isRegularFile).map(f -> state.relativize(f).toString())
                    .collect(Collectors.toCollection(java.util.TreeSet::new));
        }
    }

    /** The files in {@code after} but not in {@code before}, with the issue number {@code issue} as N. */
    private static java.util.Set<String> newFiles(java.util.Set<String> before, java.util.Set<String> after, int issue) {
        Pattern number = Pattern.compile("(?<![0-9])" + issue + "(?![0-9])");
        return after.stream().filter(f -> !before.contains(f)).map(f -> number.matcher(f).replaceAll("N"))
                .collect(Collectors.toCollection(java.util.TreeSet::new));
    }

    private Path ledger(int issue) {
        return project.resolve(".agentx/state/clarifications/issue-" + issue + ".json");
    }

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"daemon-test\","
            + "\"version\":\"1\"}}}";

    /** {@code agentx mcp --agent engineer} through the shared daemon: each line of its stdout into {@code lines}. */
    private Process mcp(Path err, LinkedBlockingQueue<String> lines) throws IOException {
        return mcp(err, lines, on());
    }

    private Process mcp(Path err, LinkedBlockingQueue<String> lines, Map<String, String> env) throws IOException {
        ProcessBuilder pb = Jvm.builder(Main.class, "--root", root(), "mcp", "--agent", "engineer")
                .directory(base.toFile());
        environment(pb, env);
        pb.redirectError(err.toFile());
        Process p = pb.start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "mcp-stdout");
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    private static void send(OutputStream in, String line) throws IOException {
        in.write((line + "\n").getBytes(UTF_8));
        in.flush();
    }

    /** The JSON-RPC answer with {@code id}, skipping notifications. */
    private static JsonNode answer(LinkedBlockingQueue<String> lines, int id, Path err) throws Exception {
        Instant end = Instant.now().plus(DEADLINE);
        while (true) {
            String line = lines.poll(Math.max(1, Duration.between(Instant.now(), end).toMillis()), TimeUnit.MILLISECONDS);
            assertNotNull(line, "no answer to request " + id + "; stderr: " + ProcessLog.read(err));
            JsonNode node = JSON.readTree(line);
            if (node.path("id").asInt(-1) == id) {
                return node;
            }
        }
    }

    // ---- the daemon, from this process

    private static DaemonPlace place(Path dir) throws IOException {
        return DaemonPlace.of(Map.of(DaemonPlace.DIR_ENV, dir.toString()));
    }

    /** The place of a client started with {@code -Dagentx.classpath=classPath}. */
    private static DaemonPlace place(Path dir, String classPath) throws IOException {
        System.setProperty(DaemonPlace.CLASSPATH_PROPERTY, classPath);
        try {
            return place(dir);
        } finally {
            System.clearProperty(DaemonPlace.CLASSPATH_PROPERTY);
        }
    }

    /** What {@code daemon status --json} says, or null when no daemon answers. */
    private static JsonNode status(Path dir) throws IOException {
        return status(place(dir));
    }

    private static JsonNode status(DaemonPlace place) throws IOException {
        SocketChannel ch = place.connect();
        if (ch == null) {
            return null;
        }
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        int code = DaemonClient.talk(ch, place, new String[] {"daemon", "status", "--json"}, Map.of(), sink);
        return code == 0 ? JSON.readTree(sink.toByteArray()) : null;
    }

    /** The connections the daemon of {@code place} handles besides the asking one (status's "active"); -1: none answers. */
    private static int active(DaemonPlace place) {
        try {
            JsonNode s = status(place);
            return s == null ? -1 : s.get("active").asInt();
        } catch (IOException e) {
            return -1;
        }
    }

    private static long served(Path dir) throws IOException {
        JsonNode s = status(dir);
        assertNotNull(s, "the daemon in " + dir + " answers");
        return s.get("served").asLong();
    }

    private static JsonNode awaitUp(Path dir) throws Exception {
        return awaitUp(place(dir));
    }

    private static JsonNode awaitUp(DaemonPlace place) throws Exception {
        Instant end = Instant.now().plus(DEADLINE);
        JsonNode s;
        while ((s = status(place)) == null) {
            assertTrue(Instant.now().isBefore(end), () -> "no daemon " + place.name + " came up in " + place.dir + ": "
                    + folder(place.dir));
            Thread.sleep(100); // polling a process
        }
        assertTrue(s.get("running").asBoolean(), s.toString());
        return s;
    }

    /** The shared daemon, started by a command if an earlier test did not. */
    private JsonNode awaitServing() throws Exception {
        if (status(shared) == null) {
            ok(run(on(), "--root", root(), "clarify"));
        }
        return awaitUp(shared);
    }

    /** What a daemon folder holds, with its logs: for a failure's message. */
    private static String folder(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName() + (f.toString().endsWith(".log") ? ":\n" + ProcessLog.read(f) : ""))
                    .sorted().collect(Collectors.joining("\n"));
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static void awaitExit(long pid) throws InterruptedException {
        ProcessLog.until("process " + pid + " to end",
                () -> ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true), DEADLINE);
    }

    /** Stops the daemon of {@code place}, if one runs, and waits for its end. */
    private static void stop(DaemonPlace place) throws Exception {
        JsonNode s = status(place);
        if (s == null) {
            return;
        }
        SocketChannel ch = place.connect();
        if (ch != null) {
            DaemonClient.talk(ch, place, new String[] {"daemon", "stop"}, Map.of(), OutputStream.nullOutputStream());
        }
        awaitExit(s.get("pid").asLong());
    }

    /** Daemon processes whose command line names {@code dir}. */
    private static List<ProcessHandle> daemonsOf(Path dir) {
        String name = DaemonServer.class.getName();
        return ProcessHandle.allProcesses().filter(h -> {
            String line = h.info().commandLine().orElse(String.join(" ", h.info().arguments().orElse(new String[0])));
            return h.isAlive() && line.contains(name) && line.contains(dir.toString());
        }).toList();
    }

    private static Optional<UserPrincipal> someoneElse() {
        try {
            UserPrincipal nobody = java.nio.file.FileSystems.getDefault().getUserPrincipalLookupService()
                    .lookupPrincipalByName("nobody");
            return nobody.getName().equals(System.getProperty("user.name")) ? Optional.empty() : Optional.of(nobody);
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }

    // ---- frames

    private byte[] hello(String identity, String issue) throws IOException {
        return new Frames.Hello(identity, project.toString(), false, List.of("--root", root(), "clarify", "ask",
                "--issue", issue, "--from", "engineer", "--to", "architect", "Asked over a raw connection"),
                Map.of()).encode();
    }

    private static byte[] frame(byte type, byte[] data) {
        return ByteBuffer.allocate(5 + data.length).put(type).putInt(data.length).put(data).array();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        return ByteBuffer.allocate(a.length + b.length).put(a).put(b).array();
    }

    private static List<Frames.Frame> frames(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes));
        List<Frames.Frame> frames = new ArrayList<>();
        for (Frames.Frame f; (f = Frames.read(in)) != null; ) {
            frames.add(f);
        }
        return frames;
    }

    /** Sends {@code bytes} on a new connection and returns all the daemon sends until it closes it. */
    private static byte[] exchange(DaemonPlace place, byte[] bytes) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(place.socket()));
            return exchange(ch, bytes);
        }
    }

    private static byte[] exchange(SocketChannel ch, byte[] bytes) throws IOException {
        try (Selector selector = Selector.open()) {
            ByteBuffer out = ByteBuffer.wrap(bytes);
            try {
                while (out.hasRemaining()) {
                    ch.write(out);
                }
            } catch (IOException closed) {
                // the daemon closed it while this was sent: what it answered is read below
            }
            ch.configureBlocking(false);
            ch.register(selector, SelectionKey.OP_READ);
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(8192);
            Instant end = Instant.now().plus(DEADLINE);
            while (true) {
                long left = Duration.between(Instant.now(), end).toMillis();
                assertTrue(left > 0, "the daemon kept the connection open after " + got.size() + " bytes");
                selector.select(left);
                selector.selectedKeys().clear();
                buf.clear();
                int n;
                try {
                    n = ch.read(buf);
                } catch (IOException reset) {
                    return got.toByteArray();
                }
                if (n < 0) {
                    return got.toByteArray();
                }
                got.write(buf.array(), 0, n);
            }
        }
    }
}
