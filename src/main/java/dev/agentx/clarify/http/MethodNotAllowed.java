package dev.agentx.clarify.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;

/**
 * The answer to a method a path does not take: {@code 405} with {@code Allow}, as HTTP asks,
 * rather than the {@code 404} a router gives a path it has no route of that method for.
 */
public final class MethodNotAllowed {
    private MethodNotAllowed() {
    }

    /** Answers {@code 405}, naming the methods {@code allow} (such as {@code "GET"}). */
    public static void answer(Context ctx, String allow) {
        ctx.header("Allow", allow);
        ctx.status(405).contentType("text/plain; charset=utf-8")
                .result(ctx.method() + " is not allowed here; use " + allow + "\n");
    }

    /**
     * Refuses every method but GET (and HEAD, which the router answers with the GET route) on
     * {@code paths}, whose GET routes are added elsewhere.
     */
    public static void onlyGet(RoutesConfig routes, String... paths) {
        for (HandlerType method : HandlerType.commonHttp()) {
            if (!method.equals(HandlerType.GET) && !method.equals(HandlerType.HEAD)) {
                for (String path : paths) {
                    routes.addHttpHandler(method, path, ctx -> answer(ctx, "GET"));
                }
            }
        }
    }
}
