package dev.agentx.clarify.github.setup;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;

/**
 * The GitHub App manifest: the repository's {@code app-manifest.yml} (bundled in the jar) with the
 * addresses of one installation filled in, as JSON for GitHub's manifest flow.
 */
public final class AppManifest {
    static final String RESOURCE = "/app-manifest.yml";

    private AppManifest() {
    }

    /**
     * @param publicUrl where GitHub reaches the server, without a path (the App's homepage)
     * @param webhookPath the server's webhook path
     * @param redirectUrl where GitHub sends the browser back with the code; null keeps the file's
     * @param name the App's name; null keeps the file's
     */
    public static ObjectNode filledIn(URI publicUrl, String webhookPath, URI redirectUrl, String name) {
        ObjectNode m = bundled();
        String base = publicUrl.toString().replaceAll("/+$", "");
        m.put("url", base);
        ((ObjectNode) m.with("hook_attributes")).put("url", base + webhookPath);
        // where GitHub sends a user back after signing in to the dashboard (docs/dashboard.md)
        m.putArray("callback_urls").add(base + "/dashboard/callback");
        if (redirectUrl != null) {
            m.put("redirect_url", redirectUrl.toString());
        }
        if (name != null) {
            m.put("name", name);
        }
        return m;
    }

    /** The manifest as the repository holds it. */
    public static ObjectNode bundled() {
        try (InputStream in = AppManifest.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks " + RESOURCE);
            }
            return (ObjectNode) new ObjectMapper(new YAMLFactory()).readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE + ": " + e.getMessage(), e);
        }
    }
}
