package jetstream.config;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Method;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * {@code JETSTREAM_LOG_FORMAT} ({@code json}, the reference's default, or {@code text}; docs/configuration.md).
 * {@code text} keeps Quarkus' console format. {@code json} replaces the formatter of every console
 * handler under the root logger with {@link Json}: one object per line, {@code time} (RFC 3339,
 * UTC), {@code level} (the slog names DEBUG/INFO/WARN/ERROR), {@code logger}, {@code msg}, and
 * {@code error} (the stack trace) when a throwable is attached — the reference's slog JSON shape
 * plus the logger name. It is applied by each service's first startup observer, so the few lines
 * Quarkus logs before it stay text.
 */
public final class LogFormat {
    private LogFormat() {}

    /** Applies the format named in {@code env}; a value other than json/text fails naming the variable. */
    public static void apply(Map<String, String> env) {
        String f = env.getOrDefault("JETSTREAM_LOG_FORMAT", "json").strip().toLowerCase(Locale.ROOT);
        switch (f) {
            case "", "json" -> install(Logger.getLogger(""), new Json());
            case "text" -> {
                // Quarkus' console format is the text format
            }
            default -> throw new IllegalArgumentException("JETSTREAM_LOG_FORMAT=" + env.get("JETSTREAM_LOG_FORMAT")
                    + " is not json or text");
        }
    }

    /**
     * Sets {@code formatter} on the logger's handlers, descending into wrapping handlers (Quarkus wraps
     * its console handler in a delayed handler, whose {@code getHandlers()} is JBoss LogManager API,
     * reached reflectively so this module needs no logging dependency).
     */
    static int install(Logger root, Formatter formatter) {
        int n = 0;
        for (Handler h : root.getHandlers()) {
            n += install(h, formatter);
        }
        return n;
    }

    private static int install(Handler h, Formatter formatter) {
        Handler[] nested = nested(h);
        if (nested != null && nested.length > 0) {
            int n = 0;
            for (Handler c : nested) {
                n += install(c, formatter);
            }
            return n;
        }
        h.setFormatter(formatter);
        return 1;
    }

    private static Handler[] nested(Handler h) {
        try {
            Method m = h.getClass().getMethod("getHandlers");
            return m.getReturnType() == Handler[].class ? (Handler[]) m.invoke(h) : null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** One JSON object per record. */
    public static final class Json extends Formatter {
        private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX")
                .withZone(ZoneOffset.UTC);

        @Override
        public String format(LogRecord r) {
            StringBuilder b = new StringBuilder(160);
            b.append("{\"time\":\"").append(TIME.format(r.getInstant()))
                    .append("\",\"level\":\"").append(level(r.getLevel())).append("\",\"logger\":");
            string(b, r.getLoggerName() == null ? "" : r.getLoggerName());
            b.append(",\"msg\":");
            string(b, message(r));
            if (r.getThrown() != null) {
                StringWriter w = new StringWriter();
                r.getThrown().printStackTrace(new PrintWriter(w));
                b.append(",\"error\":");
                string(b, w.toString());
            }
            return b.append("}\n").toString();
        }

        /**
         * The rendered message: JBoss log records format their own parameters (printf or
         * MessageFormat style, {@code getFormattedMessage()}); plain JUL records use {@link #formatMessage}.
         */
        private String message(LogRecord r) {
            try {
                Method m = r.getClass().getMethod("getFormattedMessage");
                if (m.getReturnType() == String.class) {
                    Object s = m.invoke(r);
                    return s == null ? "" : (String) s;
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                // not a JBoss record
            }
            String s = formatMessage(r);
            return s == null ? "" : s;
        }

        static String level(Level l) {
            int v = l.intValue();
            if (v >= Level.SEVERE.intValue()) {
                return "ERROR";
            }
            if (v >= Level.WARNING.intValue()) {
                return "WARN";
            }
            if (v >= Level.INFO.intValue()) {
                return "INFO";
            }
            return "DEBUG";
        }

        static void string(StringBuilder b, String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    case '\r' -> b.append("\\r");
                    case '\t' -> b.append("\\t");
                    default -> {
                        if (c < 0x20) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            b.append('"');
        }
    }
}
