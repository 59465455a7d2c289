package dev.agentx.clarify.workflow;

import dev.agentx.clarify.protocol.Autonomy;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The bundled workflows as the build compiles them: {@code workflows/*.toml} stay the source, and
 * the build (pom.xml, after compiling) parses them with {@link WorkflowParser} and writes the
 * parsed {@link Workflow}s, in the form {@link #write} gives them, into the generated class
 * {@code BundledWorkflowData} (as a string constant, one char per byte), which it then compiles
 * into the jar. {@link WorkflowCatalog} reads them from there with a {@link DataInputStream}.
 * Parsing TOML at run time loaded the TOML library and its ANTLR parser and ran them cold, and
 * reading the TOML from the jar opened the shaded jar (indexing its 15,000 entries), both in
 * every CLI command that routes a question; a class of the jar comes from the AppCDS archive
 * instead. A project's own {@code .agentx/workflows/*.toml} and the config are still parsed as
 * TOML. WorkflowCatalogTest proves that both forms of each bundled workflow agree.
 */
public final class CompiledWorkflows {
    /** The class the build generates, a {@code Supplier<String>} of the compiled workflows. */
    static final String DATA_CLASS = "dev.agentx.clarify.workflow.BundledWorkflowData";
    /** The first int of the file: "AXW" and the format's number, written and read by this class alone. */
    private static final int MAGIC = 0x41585701;

    private CompiledWorkflows() {
    }

    /** The bundled workflows of {@code dir} ({@code <name>.toml} for each of {@link WorkflowCatalog#BUNDLED}), parsed. */
    public static List<Workflow> parseBundled(Path dir) throws IOException {
        List<Workflow> out = new ArrayList<>();
        for (String name : new TreeSet<>(WorkflowCatalog.BUNDLED)) {
            Path file = dir.resolve(name + ".toml");
            out.add(WorkflowParser.parse("bundled workflows/" + name + ".toml", name,
                    Files.readString(file, StandardCharsets.UTF_8)));
        }
        return out;
    }

    /** Writes {@code workflows} in the compiled form. */
    public static void write(List<Workflow> workflows, OutputStream sink) throws IOException {
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(sink));
        out.writeInt(MAGIC);
        out.writeInt(workflows.size());
        for (Workflow w : workflows) {
            out.writeUTF(w.name());
            out.writeUTF(w.description());
            out.writeUTF(w.type());
            out.writeUTF(w.source());
            out.writeUTF(w.autonomy() == null ? "" : w.autonomy().name());
            out.writeInt(w.steps().size());
            for (Step s : w.steps()) {
                out.writeUTF(s.id());
                out.writeUTF(s.agent());
                out.writeInt(s.canClarify().size());
                for (String t : s.canClarify()) {
                    out.writeUTF(t);
                }
                out.writeInt(s.maxRounds() == null ? -1 : s.maxRounds());
                out.writeInt(s.slaMinutes() == null ? -1 : s.slaMinutes());
                out.writeBoolean(s.blockingAllowed());
                out.writeBoolean(s.declaresClarify());
            }
        }
        out.flush();
    }

    /**
     * Reads what {@link #write} wrote: the workflows by their catalog name (the file name the build
     * read them from, which {@link Workflow#name()} may differ from).
     */
    public static Map<String, Workflow> read(InputStream source) throws IOException {
        DataInputStream in = new DataInputStream(source);
        if (in.readInt() != MAGIC) {
            throw new IOException("not a compiled workflow file of this build");
        }
        int count = in.readInt();
        Map<String, Workflow> out = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            String name = in.readUTF();
            String description = in.readUTF();
            String type = in.readUTF();
            String from = in.readUTF();
            String autonomy = in.readUTF();
            int steps = in.readInt();
            List<Step> list = new ArrayList<>(steps);
            for (int j = 0; j < steps; j++) {
                String id = in.readUTF();
                String agent = in.readUTF();
                int targets = in.readInt();
                List<String> canClarify = new ArrayList<>(targets);
                for (int k = 0; k < targets; k++) {
                    canClarify.add(in.readUTF());
                }
                int maxRounds = in.readInt();
                int sla = in.readInt();
                boolean blocking = in.readBoolean();
                boolean declares = in.readBoolean();
                list.add(new Step(id, agent, canClarify, maxRounds < 0 ? null : maxRounds, sla < 0 ? null : sla,
                        blocking, declares));
            }
            Workflow w = new Workflow(name, description, type, list, from,
                    autonomy.isEmpty() ? null : Autonomy.valueOf(autonomy));
            out.put(catalogName(from), w);
        }
        return out;
    }

    /** {@code feature} of {@code bundled workflows/feature.toml}: the name the catalog looks it up by. */
    private static String catalogName(String source) {
        int slash = source.lastIndexOf('/');
        return source.substring(slash + 1, source.length() - ".toml".length());
    }

    /**
     * The build's step: {@code CompiledWorkflows <workflows dir> <generated sources dir>} writes
     * the source of {@code BundledWorkflowData} there. A workflow that does not parse fails the
     * build with the parser's message.
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: CompiledWorkflows <workflows dir> <generated sources dir>");
        }
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        write(parseBundled(Path.of(args[0])), bytes);
        String simple = DATA_CLASS.substring(DATA_CLASS.lastIndexOf('.') + 1);
        Path target = Path.of(args[1]).resolve(DATA_CLASS.replace('.', '/') + ".java");
        Files.createDirectories(target.getParent());
        Files.writeString(target, "package dev.agentx.clarify.workflow;\n\n"
                + "/** Generated by CompiledWorkflows from workflows/*.toml at build time. */\n"
                + "final class " + simple + " implements java.util.function.Supplier<String> {\n"
                + "    @Override\n    public String get() {\n        return \"" + escaped(bytes.toByteArray())
                + "\";\n    }\n}\n", StandardCharsets.US_ASCII);
    }

    /** Each byte as one char of a Java string literal, in ASCII. */
    private static String escaped(byte[] data) {
        StringBuilder b = new StringBuilder(data.length * 2);
        for (byte x : data) {
            int c = x & 0xFF;
            if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
                b.append((char) c);
            } else {
                b.append(String.format("\\%03o", c));
            }
        }
        return b.toString();
    }
}
