package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubGateway;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.Supplier;

/**
 * The gateway as the outbox's senders call it: every call about a repository (its first two
 * parameters an installation and a {@link RepoRef}, as every such call of {@link GitHubGateway} has)
 * goes to where {@link Destinations} says the repository is now, not where the effect was queued.
 * So an effect queued before a rename is posted under the new name, one queued before the App was
 * installed again through the new installation, whichever kind of effect it is. Calls of any other
 * shape pass through unchanged.
 */
final class Addressed implements InvocationHandler {
    private final GitHubGateway github;
    private final Supplier<Destinations> destinations;

    private Addressed(GitHubGateway github, Supplier<Destinations> destinations) {
        this.github = github;
        this.destinations = destinations;
    }

    /** {@code github}, each repository's calls sent where {@code destinations} (as it is at each call) says. */
    static GitHubGateway gateway(GitHubGateway github, Supplier<Destinations> destinations) {
        return (GitHubGateway) Proxy.newProxyInstance(GitHubGateway.class.getClassLoader(),
                new Class<?>[] {GitHubGateway.class}, new Addressed(github, destinations));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class) {
            return switch (method.getName()) {
                case "equals" -> proxy == args[0];
                case "hashCode" -> System.identityHashCode(proxy);
                default -> "addressed " + github;
            };
        }
        Object[] sent = args;
        Class<?>[] types = method.getParameterTypes();
        if (types.length >= 2 && types[0] == long.class && types[1] == RepoRef.class && args[1] != null) {
            Destinations.Destination d = destinations.get().of((Long) args[0], (RepoRef) args[1]);
            if (d instanceof Destinations.To to) {
                sent = args.clone();
                sent[0] = to.installation();
                sent[1] = to.repo();
            }
        }
        try {
            return method.invoke(github, sent);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
