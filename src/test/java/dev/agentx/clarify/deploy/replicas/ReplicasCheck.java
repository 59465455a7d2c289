package dev.agentx.clarify.deploy.replicas;

import java.util.ArrayList;
import java.util.List;

/**
 * Runs a replicas recipe of {@code deploy/} as it is, with a fake GitHub, and checks what it
 * promises: deliveries spread over both replicas, none lost and none handled twice while a replica
 * goes away and comes back. Not a test of the build (it needs Docker or a cluster): run by hand
 * from the repository root with {@code bin/replicas-check}, which compiles the test classes and
 * runs this class on the JDK alone (it uses no library):
 *
 * <pre>
 *   bin/replicas-check compose                                   # deploy/compose/compose.yaml, with Docker
 *   bin/replicas-check kubernetes --database-url postgresql://...  # deploy/kubernetes/agentx-replicas.yaml
 *   ... --keep                                                   # leaves it running to look at afterwards
 *                                                                # (as a failed check does)
 * </pre>
 *
 * <p>{@link ComposeCheck} and {@link KubernetesCheck} say what each one runs and does to it; {@link
 * RecipeCheck} what they share: the deliveries through the {@link Webhook}, the {@link FakeGitHub}
 * the replicas post to, and the verdict. Exit code 0: every check passed; 1: a check failed (what
 * it ran is left up); 2: bad usage.
 */
public final class ReplicasCheck {
    private ReplicasCheck() {
    }

    public static void main(String[] args) throws Exception {
        // each delivery on a connection of its own, as GitHub sends them: a Service balances
        // connections, not requests, so a kept-alive one would take every delivery to one replica
        System.setProperty("jdk.httpclient.allowRestrictedHeaders", "connection");
        List<String> options = new ArrayList<>(List.of(args));
        boolean keep = options.remove("--keep");
        String target = options.isEmpty() ? "" : options.remove(0);
        RecipeCheck check;
        try {
            check = switch (target) {
                case "compose" -> new ComposeCheck(options);
                case "kubernetes" -> new KubernetesCheck(options);
                default -> throw new IllegalArgumentException("say which recipe: compose or kubernetes");
            };
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println("usage: bin/replicas-check compose [--keep]");
            System.err.println("       bin/replicas-check kubernetes --database-url URL [--keep]"
                    + " [--namespace NAME] [--github-host HOST] [--webhook-url URL]");
            System.exit(2);
            return;
        }
        int rc = 1;
        try {
            rc = check.run();
        } catch (IllegalStateException e) {
            // a step the check could not take (a program missing, a recipe not coming up): said plainly
            System.out.println("\nFAILED: " + e.getMessage());
        } finally {
            check.cleanUp(keep || rc != 0); // a failed check leaves everything up to be looked at
            check.github.stop();
        }
        System.exit(rc);
    }
}
