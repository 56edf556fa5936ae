package jetstream.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every duration setting takes the reference's Go syntax, and the formats Quarkus settings already use. */
@Tag("unit")
class GoDurationConverterTest {
    private final GoDurationConverter c = new GoDurationConverter();

    @Test
    void goSyntaxIsoAndQuarkusForms() {
        assertEquals(Duration.ofMinutes(90), c.convert("1h30m"));
        assertEquals(Duration.ofMinutes(90), c.convert("1.5h"));
        assertEquals(Duration.ofNanos(250_000), c.convert("250us"));
        assertEquals(Duration.ofHours(168), c.convert("168h"));
        assertEquals(Duration.ZERO, c.convert("0"));
        assertEquals(Duration.ofSeconds(5), c.convert("PT5S"));
        assertEquals(Duration.ofSeconds(30), c.convert("30"));
        assertEquals(Duration.ofDays(2), c.convert("2d"));
        assertThrows(IllegalArgumentException.class, () -> c.convert("5 minutes"));
        assertEquals(Duration.ofMinutes(1), c.convert("1M"));
    }
}
