package dev.agentx.clarify.render;

import dev.agentx.clarify.protocol.Status;

/** ANSI colour, applied only when enabled (a terminal, and NO_COLOR unset). */
public record Ansi(boolean enabled) {
    public static final Ansi OFF = new Ansi(false);

    public String bold(String s) {
        return wrap("1", s);
    }

    public String dim(String s) {
        return wrap("2", s);
    }

    public String status(Status status, String s) {
        return wrap(switch (status) {
            case PENDING -> "33";
            case ANSWERED -> "36";
            case RESOLVED -> "32";
            case STALE -> "35";
            case ESCALATED -> "31;1";
            case ABANDONED -> "90";
        }, s);
    }

    public String color(String code, String s) {
        return wrap(code, s);
    }

    private String wrap(String code, String s) {
        return enabled ? "\u001b[" + code + "m" + s + "\u001b[0m" : s;
    }
}
