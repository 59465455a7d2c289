package dev.agentx.clarify.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkflowCatalogTest {
    static Path fixtures() {
        return Path.of(System.getProperty("agentx.fixtures", "src/test/resources/fixtures"));
    }

    @Test
    void agentxOwnWorkflowFilesLoadUnchanged() throws Exception {
        Path dir = fixtures().resolve("agentx-workflows");
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.toString().endsWith(".toml")).sorted().toList();
        }
        assertTrue(files.size() >= 8, "fixture files: " + files);
        for (Path f : files) {
            String name = f.getFileName().toString().replace(".toml", "");
            Workflow wf = WorkflowParser.parse(f.toString(), name, Files.readString(f, StandardCharsets.UTF_8));
            assertFalse(wf.steps().isEmpty(), name);
        }
        Workflow feature = WorkflowParser.parse("feature.toml", "feature",
                Files.readString(dir.resolve("feature.toml"), StandardCharsets.UTF_8));
        Step impl = feature.stepOf("engineer").orElseThrow();
        assertEquals("implement", impl.id(), "the engineer's clarifying step, not the later bugfix step");
        assertEquals(List.of("architect", "product-manager"), impl.canClarify());
        assertEquals(3, impl.maxRounds());
        assertEquals(60, impl.slaMinutes());
        assertTrue(impl.blockingAllowed());
        Workflow bug = WorkflowParser.parse("bug.toml", "bug", Files.readString(dir.resolve("bug.toml")));
        assertFalse(bug.stepOf("engineer").orElseThrow().blockingAllowed());
    }

    @Test
    void theFixturesCanOverrideTheBundledOnes(@TempDir Path root) throws Exception {
        Path over = root.resolve("workflows");
        Files.createDirectories(over);
        Files.copy(fixtures().resolve("agentx-workflows/feature.toml"), over.resolve("feature.toml"));
        Files.copy(fixtures().resolve("agentx-workflows/devops.toml"), over.resolve("devops.toml"));
        WorkflowCatalog c = new WorkflowCatalog(over);
        assertEquals(3, c.workflow("feature").stepOf("engineer").orElseThrow().maxRounds());
        assertTrue(c.names().containsAll(Set.of("bug", "epic", "feature", "story", "devops")));
        assertEquals("devops-engineer", c.workflow("devops").steps().get(0).agent());
    }

    @Test
    void bundledWorkflowsMatchTheTopLevelFolder() throws Exception {
        Set<String> top = new TreeSet<>();
        try (Stream<Path> s = Files.list(Path.of("workflows"))) {
            s.forEach(p -> top.add(p.getFileName().toString().replace(".toml", "")));
        }
        assertEquals(new TreeSet<>(WorkflowCatalog.BUNDLED), top);
        WorkflowCatalog c = new WorkflowCatalog(null);
        Workflow feature = c.workflow("feature");
        assertEquals(List.of("product-manager"), feature.stepOf("architect").orElseThrow().canClarify());
        assertTrue(feature.stepOf("engineer").orElseThrow().canClarify().containsAll(List.of("architect", "product-manager")));
        assertNull(feature.stepOf("engineer").orElseThrow().maxRounds(), "the default round limits apply");
        assertFalse(c.workflow("bug").stepOf("engineer").orElseThrow().blockingAllowed());
        assertFalse(c.workflow("story").steps().isEmpty());
        assertFalse(c.workflow("epic").steps().isEmpty());
        assertEquals(c.workflow("FEATURE"), c.workflow("feature"));
    }

    @Test
    void brokenFilesNameFileLineAndField() {
        assertMessage("""
                [[steps]]
                id = "a"
                agent = "engineer"
                clarify_max_rounds = "three"
                """, "w.toml, line 4: field 'clarify_max_rounds' must be an integer, got a string");
        assertMessage("""
                [[steps]]
                id = "a"
                agent = "engineer"
                can_clarify = "architect"
                """, "w.toml, line 4: field 'can_clarify' must be an array of strings");
        assertMessage("""
                [[steps]]
                id = "a"
                agent = "engineer"

                clarify_blocking_allowed = 1
                """, "w.toml, line 5: field 'clarify_blocking_allowed' must be true or false");
        assertMessage("""
                [[steps]]
                id = "a"
                """, "field 'agent' is required in step 1");
        // a typo in a clarify field would leave its limit at the default without a word
        assertMessage("""
                [[steps]]
                id = "a"
                agent = "engineer"
                clarify_max_round = 3
                """, "w.toml, line 4: field 'clarify_max_round' is not a clarify field; they are can_clarify, "
                + "clarify_max_rounds");
        assertMessage("""
                [[steps]]
                id = "a"
                agent = "engineer"
                can_clarify_with = ["architect"]
                """, "w.toml, line 4: field 'can_clarify_with' is not a clarify field");
        assertMessage("""
                [[steps]]
                id = "a"
                agent = "engineer"
                clarify_sla_minutes = 0
                """, "w.toml, line 4: field 'clarify_sla_minutes' must be between 1");
        assertMessage("""
                [workflow]
                name = "x"
                """, "field 'steps' is required");
        assertMessage("""
                [[steps]]
                id = "a"
                agent = "engineer
                """, "w.toml, line 3: invalid TOML");
    }

    private static void assertMessage(String toml, String expected) {
        ClarifyException e = assertThrows(ClarifyException.class, () -> WorkflowParser.parse("w.toml", "w", toml));
        assertEquals(ErrorCode.VALIDATION, e.code());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void unknownWorkflowListsTheAvailableOnes() {
        ClarifyException e = assertThrows(ClarifyException.class, () -> new WorkflowCatalog(null).workflow("nope"));
        assertTrue(e.getMessage().contains("Available: bug, epic, feature, story"), e.getMessage());
        assertThrows(ClarifyException.class, () -> new WorkflowCatalog(null).workflow("../etc/passwd"));
    }

    /**
     * The build compiles workflows/*.toml into the class BundledWorkflowData; what the catalog
     * serves from it equals what the TOML parser makes of the source files, field by field.
     */
    @Test
    void theCompiledBundledWorkflowsAreTheTomlFilesParsed() throws Exception {
        List<Workflow> parsed = CompiledWorkflows.parseBundled(Path.of("workflows"));
        assertEquals(WorkflowCatalog.BUNDLED, parsed.stream().map(w -> w.source()
                .replace("bundled workflows/", "").replace(".toml", "")).collect(java.util.stream.Collectors.toSet()));
        // empty if the build did not generate the class
        java.util.Map<String, Workflow> compiled = WorkflowCatalog.compiled();
        assertEquals(WorkflowCatalog.BUNDLED, compiled.keySet());
        WorkflowCatalog catalog = new WorkflowCatalog(null);
        for (Workflow w : parsed) {
            String name = w.source().replace("bundled workflows/", "").replace(".toml", "");
            assertEquals(w, compiled.get(name), name);
            assertEquals(w, catalog.workflow(name), name);
        }
        // the format itself, on values the bundled files do not use: autonomy, no limits, no targets
        Workflow odd = new Workflow("odd", "d\u00e9j\u00e0 \"q\"\n2", "t", List.of(
                new Step("s1", "engineer", List.of(), null, null, false, false),
                new Step("s2", "architect", List.of("a", "b"), 50, 43200, true, true)),
                "bundled workflows/odd.toml", dev.agentx.clarify.protocol.Autonomy.APPROVE);
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        CompiledWorkflows.write(List.of(odd), bytes);
        assertEquals(java.util.Map.of("odd", odd), CompiledWorkflows.read(new java.io.ByteArrayInputStream(bytes.toByteArray())));
        assertThrows(java.io.IOException.class, () -> CompiledWorkflows.read(new java.io.ByteArrayInputStream(new byte[8])));
    }
}
