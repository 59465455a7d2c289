package dev.agentx.clarify.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Objects;

/**
 * Where in the code a clarification was asked: a line (or lines) of a file of a pull request, as
 * a review comment names them (docs/protocol.md, {@code codeLine}).
 *
 * @param path the file, relative to the repository's root
 * @param line the (last) line the question is on; null for a question on the whole file
 * @param startLine the first line of a question on several lines; null for one line
 * @param side {@code LEFT} (the old version of the file) or {@code RIGHT} (the new); null when not known
 * @param reviewComment GitHub Mode: the id of the review comment that asked, the head of the review
 *                      thread every round is posted in as a reply; null for a question not asked in review
 */
@JsonPropertyOrder({"path", "line", "startLine", "side", "reviewComment"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CodeLine(@JsonProperty(required = true) String path, Integer line, Integer startLine, String side,
                       Long reviewComment) {
    /** Longer paths than this are no file GitHub keeps. */
    public static final int MAX_PATH = 4096;

    public CodeLine {
        Objects.requireNonNull(path, "path");
        if (path.isBlank() || path.length() > MAX_PATH || path.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new IllegalArgumentException("field 'path' must be a file's path of 1-" + MAX_PATH
                    + " characters without control characters");
        }
        if (line != null && line < 1) {
            throw new IllegalArgumentException("field 'line' must be a line number from 1, got " + line);
        }
        if (startLine != null && (line == null || startLine < 1 || startLine > line)) {
            throw new IllegalArgumentException("field 'startLine' must be a line number from 1 up to 'line', got "
                    + startLine);
        }
        if (startLine != null && startLine.equals(line)) {
            startLine = null;
        }
        if (side != null && !side.equals("LEFT") && !side.equals("RIGHT")) {
            throw new IllegalArgumentException("field 'side' must be LEFT or RIGHT, got '" + side + "'");
        }
        if (reviewComment != null && reviewComment < 1) {
            throw new IllegalArgumentException("field 'reviewComment' must be a comment id from 1, got "
                    + reviewComment);
        }
    }

    /** {@code path:line}, {@code path:start-line}, or the path alone for a question on the whole file. */
    public String describe() {
        if (line == null) {
            return path;
        }
        return path + ":" + (startLine == null ? "" : startLine + "-") + line;
    }
}
