package dev.agentx.clarify.github;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.routing.Outcome;
import java.util.List;

/**
 * One monitor pass over a repository's state, run after every delivered event of that repository.
 * Its outcomes are posted like any round: new thread entries (escalations) as comments, and a
 * {@code clarification-stale} event as a stale notice. {@link #STANDARD} is the clarification
 * monitor, plugged in where {@link GitHubMode} is created ({@code cli.ServeCommand});
 * {@link #NONE} does nothing.
 */
@FunctionalInterface
public interface RepositoryMonitor {
    RepositoryMonitor NONE = repository -> List.of();

    /** The clarification monitor of the repository's state (what {@code agentx serve} runs). */
    RepositoryMonitor STANDARD = repository -> repository.monitor().run().outcomes();

    /** @param repository the repository's composition root ({@code $AGENTX_DATA_DIR/repos/<owner>/<repo>}) */
    List<Outcome> run(LocalMode repository);
}
