package dev.agentx.clarify.cli;

import dev.agentx.clarify.render.Visible;
import java.io.IOException;
import java.io.Writer;

/**
 * Everything the CLI prints as text goes through this writer, which shows control characters as
 * escapes ({@link Visible}): whatever path a text from an agent or from GitHub takes to the
 * terminal (a thread, a title, an error that quotes the input), it cannot act on the terminal.
 * With colour on, the colour sequences the CLI writes itself ({@code ESC [ digits m}) pass; the
 * renderers show the same sequences in user text as escapes before they get here.
 */
final class VisibleWriter extends Writer {
    private final Writer out;
    private final boolean colour;

    VisibleWriter(Writer out, boolean colour) {
        this.out = out;
        this.colour = colour;
    }

    @Override
    public void write(char[] buf, int off, int len) throws IOException {
        int start = off;
        int end = off + len;
        for (int i = off; i < end; i++) {
            char c = buf[i];
            if (!Visible.hidden(c)) {
                continue;
            }
            int sgr = colour && c == 0x1b ? sgrEnd(buf, i, end) : -1;
            if (sgr > 0) {
                i = sgr - 1;
                continue;
            }
            out.write(buf, start, i - start);
            out.write(Visible.text(String.valueOf(c)));
            start = i + 1;
        }
        out.write(buf, start, end - start);
    }

    /** The end of a colour sequence {@code ESC [ (digits|;)* m} starting at {@code i}, or -1. */
    private static int sgrEnd(char[] buf, int i, int end) {
        if (i + 1 >= end || buf[i + 1] != '[') {
            return -1;
        }
        for (int j = i + 2; j < end && j < i + 16; j++) {
            char c = buf[j];
            if (c == 'm') {
                return j + 1;
            }
            if (!(c >= '0' && c <= '9' || c == ';')) {
                return -1;
            }
        }
        return -1;
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void close() throws IOException {
        out.close();
    }
}
