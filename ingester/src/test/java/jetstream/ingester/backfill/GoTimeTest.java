package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The hand-written RFC 3339 paths write and read exactly what the JDK formatter and parser do. */
@Tag("unit")
class GoTimeTest {
    private static final DateTimeFormatter REFERENCE = new DateTimeFormatterBuilder()
            .appendPattern("uuuu-MM-dd'T'HH:mm:ss")
            .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
            .appendLiteral('Z')
            .toFormatter()
            .withZone(ZoneOffset.UTC);

    @Test
    void formatsAndParsesLikeTheJdkAcrossDatesAndFractions() {
        SplittableRandom rnd = new SplittableRandom(7);
        long lo = Instant.parse("0001-01-01T00:00:00Z").getEpochSecond();
        long hi = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
        int[] scales = {1, 10, 100, 1_000, 1_000_000, 100_000_000, 1_000_000_000};
        for (int i = 0; i < 200_000; i++) {
            long sec = i < 100_000 ? rnd.nextLong(0, 4_102_444_800L) : rnd.nextLong(lo, hi + 1);
            int scale = scales[rnd.nextInt(scales.length)];
            int nano = scale == 1_000_000_000 ? 0 : rnd.nextInt(1_000_000_000 / scale) * scale;
            Instant t = Instant.ofEpochSecond(sec, nano);
            String s = GoTime.format(t);
            assertEquals(REFERENCE.format(t), s, "format of " + t);
            assertEquals(t, GoTime.parse(s), "parse of " + s);
            assertEquals(OffsetDateTime.parse(s, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant(), GoTime.parse(s));
        }
        for (String edge : new String[] {"1970-01-01T00:00:00Z", "2000-02-29T23:59:59.999999999Z",
                "2026-12-31T00:00:00.1Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.000000001Z"}) {
            assertEquals(edge, GoTime.format(GoTime.parse(edge)));
        }
        // outside the canonical range the formatter answers
        Instant far = Instant.parse("+10000-01-01T00:00:00Z");
        assertEquals(REFERENCE.format(far), GoTime.format(far));
    }

    @Test
    void otherRfc3339FormsStillParseAndMalformedOnesFail() {
        assertEquals(Instant.parse("2026-12-04T06:00:00Z"), GoTime.parse("2026-12-04T07:00:00+01:00"));
        assertEquals(Instant.parse("2026-12-04T07:00:00.5Z"), GoTime.parse("2026-12-04T07:00:00.500Z"));
        for (String bad : new String[] {"2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-04T24:00:00Z",
                "2026-12-04T07:00:0aZ", "2026-12-04 07:00:00Z", "2026-12-04T07:00:00.1234567890Z",
                "", "yesterday"}) {
            assertThrows(IllegalArgumentException.class, () -> GoTime.parse(bad), bad);
        }
    }
}
