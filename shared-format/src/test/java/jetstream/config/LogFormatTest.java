package jetstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class LogFormatTest {

    @Test
    void jsonLinesCarryTheSlogFieldsAndEscapeEverything() throws Exception {
        LogRecord r = new LogRecord(Level.WARNING, "quote \" backslash \\ newline \n tab \t ctl \u0001 {0}");
        r.setParameters(new Object[] {"param"});
        r.setLoggerName("jetstream.ingester.X");
        r.setInstant(Instant.parse("2026-12-02T17:00:00.123456Z"));
        r.setThrown(new IllegalStateException("boom"));
        String line = new LogFormat.Json().format(r);
        assertTrue(line.endsWith("}\n") && line.indexOf('\n') == line.length() - 1, "one line: " + line);
        JsonNode j = new ObjectMapper().readTree(line);
        assertEquals("2026-12-02T17:00:00.123456Z", j.get("time").asText());
        assertEquals("WARN", j.get("level").asText());
        assertEquals("jetstream.ingester.X", j.get("logger").asText());
        assertEquals("quote \" backslash \\ newline \n tab \t ctl \u0001 param", j.get("msg").asText());
        assertTrue(j.get("error").asText().startsWith("java.lang.IllegalStateException: boom"));
        assertEquals("ERROR", LogFormat.Json.level(Level.SEVERE));
        assertEquals("INFO", LogFormat.Json.level(Level.INFO));
        assertEquals("DEBUG", LogFormat.Json.level(Level.FINE));
    }

    /** A wrapping handler shaped like Quarkus' delayed handler (JBoss ExtHandler.getHandlers()). */
    public static final class Wrapper extends StreamHandler {
        private final Handler[] inner;

        Wrapper(Handler... inner) {
            this.inner = inner;
        }

        public Handler[] getHandlers() {
            return inner;
        }
    }

    @Test
    void installsIntoNestedHandlersAndTextLeavesThemAlone() {
        Logger root = Logger.getLogger("jetstream.test.logformat." + System.nanoTime());
        root.setUseParentHandlers(false);
        StreamHandler console = new StreamHandler();
        StreamHandler plain = new StreamHandler();
        root.addHandler(new Wrapper(console));
        root.addHandler(plain);
        assertEquals(2, LogFormat.install(root, new LogFormat.Json()));
        assertInstanceOf(LogFormat.Json.class, console.getFormatter());
        assertInstanceOf(LogFormat.Json.class, plain.getFormatter());
        LogFormat.apply(Map.of("JETSTREAM_LOG_FORMAT", "text"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LogFormat.apply(Map.of("JETSTREAM_LOG_FORMAT", "yaml")));
        assertTrue(e.getMessage().contains("JETSTREAM_LOG_FORMAT=yaml"));
    }
}
