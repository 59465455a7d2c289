package dev.agentx.clarify.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * How far an agent's automatic answer counts on its own (the seeds' hilConfig levels):
 * {@code full} counts at once, {@code notify} counts and the people in the target role are told,
 * {@code approve} makes an agent's answer to a blocking question a proposal that a person accepts.
 */
public enum Autonomy {
    FULL, NOTIFY, APPROVE;

    @JsonValue
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code full}, {@code notify} or {@code approve}; anything else is VALIDATION. */
    @JsonCreator
    public static Autonomy fromWire(String value) {
        for (Autonomy a : values()) {
            if (a.wire().equals(value)) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown autonomy '" + value + "'; expected full, notify or approve");
    }

    public static boolean isValid(String value) {
        for (Autonomy a : values()) {
            if (a.wire().equals(value)) {
                return true;
            }
        }
        return false;
    }
}
