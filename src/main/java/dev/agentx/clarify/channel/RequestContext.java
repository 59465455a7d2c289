package dev.agentx.clarify.channel;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The repository and issue context sent to automatic agents with each question (the
 * {@code repository} and {@code issueContext} objects of the request JSON). Local Mode sends the
 * project root; GitHub Mode sends the same, with the repository's folder under the data dir.
 */
public interface RequestContext {
    Map<String, Object> repository();

    Map<String, Object> issue(int number);

    /** Local Mode: {@code {"mode":"local","root":...,"name":...}} and {@code {"number":N}}. */
    static RequestContext local(Path root) {
        Path abs = root.toAbsolutePath().normalize();
        Map<String, Object> repo = new LinkedHashMap<>();
        repo.put("mode", "local");
        repo.put("root", abs.toString());
        repo.put("name", abs.getFileName() == null ? abs.toString() : abs.getFileName().toString());
        Map<String, Object> frozen = Map.copyOf(repo);
        return new RequestContext() {
            @Override
            public Map<String, Object> repository() {
                return frozen;
            }

            @Override
            public Map<String, Object> issue(int number) {
                return Map.of("number", number);
            }
        };
    }
}
