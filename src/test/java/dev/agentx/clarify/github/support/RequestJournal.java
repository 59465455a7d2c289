package dev.agentx.clarify.github.support;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.extension.ServeEventListener;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Keeps every request the App makes of WireMock standing in for GitHub, one JSON line each
 * (method, URL, body), in {@code target/github-requests/<pid>.jsonl}: what {@code GitHubContractIT}
 * holds against GitHub's REST description once the tests have run. The build empties the folder
 * before the tests.
 */
public final class RequestJournal implements ServeEventListener {
    public static final Path FOLDER = Path.of("target/github-requests");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path FILE = FOLDER.resolve(ProcessHandle.current().pid() + ".jsonl");

    @Override
    public String getName() {
        return "github-request-journal";
    }

    @Override
    public void beforeResponseSent(ServeEvent event, com.github.tomakehurst.wiremock.extension.Parameters p) {
        ObjectNode line = JSON.createObjectNode();
        line.put("method", event.getRequest().getMethod().getName());
        line.put("url", event.getRequest().getUrl());
        line.put("body", event.getRequest().getBodyAsString());
        byte[] bytes = (line + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (RequestJournal.class) {
            try {
                Files.createDirectories(FOLDER);
                Files.write(FILE, bytes, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
