package dev.agentx.clarify.cli;

import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.github.EnvFile;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.setup.Credentials;
import dev.agentx.clarify.github.setup.ManifestFlow;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code agentx setup}: registers the GitHub App through GitHub's manifest flow (docs/github-app.md). */
@Command(name = "setup", mixinStandardHelpOptions = true,
        description = {"Register the GitHub App in one step: serves a page on 127.0.0.1 whose button "
                + "creates the App on GitHub from app-manifest.yml, then writes the App's id, key and "
                + "webhook secret into the data dir for 'agentx serve' (in agentx.env and "
                + "github-app.pem, mode 0600), and prints the link that installs it.",
                "The data dir is $AGENTX_DATA_DIR, else ./agentx-data, as for 'agentx serve'."},
        footer = {"", "Examples:",
                "  agentx setup --url https://agentx.example.com",
                "  agentx setup --url https://agentx.example.com --org acme --name \"Acme Clarify\"",
                "  agentx setup --url https://agentx.example.com --print-manifest",
                "", "On a remote server, forward the page's port to your browser first:",
                "  ssh -L 3000:127.0.0.1:3000 you@server"})
final class SetupCommand implements Runnable {
    private final CliContext ctx;

    @Option(names = "--url", required = true, paramLabel = "URL",
            description = "The public address GitHub delivers webhooks to (see the examples).")
    String url;

    @Option(names = "--org", paramLabel = "ORG", description = "Create the App for this organization.")
    String org;

    @Option(names = "--name", paramLabel = "NAME", description = "The App's name (unique on GitHub).")
    String name;

    @Option(names = "--port", paramLabel = "N", defaultValue = "3000",
            description = "The setup page's port on 127.0.0.1 (0: any free port; default 3000).")
    int port;

    @Option(names = "--github-url", paramLabel = "URL", defaultValue = "https://github.com",
            description = "GitHub's address (GitHub Enterprise Server: its own).")
    String githubUrl;

    @Option(names = "--force", description = "Replace credentials already in the data dir.")
    boolean force;

    @Option(names = "--print-manifest", description = "Print the filled-in manifest as JSON and stop.")
    boolean printManifest;

    SetupCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        URI publicUrl = httpUrl("--url", url);
        URI github = httpUrl("--github-url", githubUrl);
        if (port < 0 || port > 65535) {
            throw new ClarifyException(ErrorCode.USAGE, "--port must be between 0 and 65535, got " + port + ".");
        }
        String webhookPath = ctx.env.getOrDefault("AGENTX_WEBHOOK_PATH", GitHubSettings.DEFAULT_PATH);
        String apiUrl = ctx.env.get("GITHUB_API_URL") != null ? ctx.env.get("GITHUB_API_URL").strip()
                : github.getHost().equals("github.com") ? GitHubSettings.DEFAULT_API_URL
                : github.toString().replaceAll("/+$", "") + "/api/v3";
        Path dataDir = EnvFile.dataDir(ctx.env, ctx.cwd);
        ManifestFlow flow = new ManifestFlow(new ManifestFlow.Options(publicUrl, org, name, webhookPath, github,
                apiUrl.replaceAll("/+$", ""), dataDir, "127.0.0.1", port));
        if (printManifest) {
            ctx.out.println(flow.manifest().toPrettyString());
            ctx.out.flush();
            return;
        }
        List<Path> existing = Credentials.files(dataDir).stream().filter(Files::exists).toList();
        if (!existing.isEmpty() && !force) {
            throw new ClarifyException(ErrorCode.USAGE, "not replacing " + existing.stream().map(Path::toString)
                    .reduce((a, b) -> a + " and " + b).orElse("") + ": an App is set up there already. Run "
                    + "'agentx setup --force' to register another and replace them.");
        }
        ManifestFlow.Outcome outcome;
        ManifestFlow started;
        try {
            started = flow.start();
        } catch (RuntimeException e) {
            throw new ClarifyException(ErrorCode.USAGE, "Cannot serve the setup page on 127.0.0.1:" + port + ": "
                    + IoErrors.innermost(e) + ". Choose another port with --port.", e);
        }
        try (started) {
            ctx.err.println("agentx setup: open " + started.address() + " in your browser and press the button;");
            ctx.err.println("GitHub creates the App for " + (org == null ? "your account" : "the organization "
                    + org) + " and sends you back to that page. Waiting (Ctrl-C stops)...");
            ctx.err.flush();
            outcome = started.outcome().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ClarifyException(ErrorCode.INTERNAL, "interrupted before GitHub sent the App back", e);
        } catch (ExecutionException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, e.getCause().getMessage(), e.getCause());
        }
        if (outcome instanceof ManifestFlow.Failed f) {
            throw new ClarifyException(ErrorCode.INTERNAL, f.message());
        }
        Credentials app = ((ManifestFlow.Registered) outcome).app();
        if (ctx.json()) {
            ctx.printJson(ctx.mapper().createObjectNode().put("appId", app.appId()).put("slug", app.slug())
                    .put("htmlUrl", app.htmlUrl()).put("installUrl", app.installUrl())
                    .put("dataDir", dataDir.toString()));
            return;
        }
        ctx.out.println("Registered GitHub App " + app.slug() + " (id " + app.appId() + "); credentials written to "
                + dataDir.resolve(EnvFile.NAME) + " and " + dataDir.resolve(Credentials.KEY_FILE) + ".");
        ctx.out.println("Install it: " + app.installUrl());
        ctx.out.println("Then start the server: agentx serve");
        ctx.out.flush();
    }

    private static URI httpUrl(String option, String value) {
        try {
            URI u = URI.create(value.strip());
            if (u.getScheme() != null && u.getScheme().matches("https?") && u.getHost() != null) {
                return u;
            }
        } catch (IllegalArgumentException e) {
            // reported below
        }
        throw new ClarifyException(ErrorCode.USAGE, option + " must be an http(s) address like "
                + "https://agentx.example.com, got '" + value + "'.");
    }
}
