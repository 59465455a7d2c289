package dev.agentx.clarify.http;

import io.javalin.http.Context;

/**
 * The answer to a method a path does not take: {@code 405} with {@code Allow}, as HTTP asks,
 * rather than the {@code 404} a router gives a path it has no route of that method for. Every
 * server of ours answers so for each of its paths ({@link HttpServerDefaults}).
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
}
