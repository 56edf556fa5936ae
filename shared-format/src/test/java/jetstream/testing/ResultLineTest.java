package jetstream.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ResultLineTest {
    @Test
    void formatsValueFloorAndRatio() {
        assertEquals("RESULT seal_256mib_ms value=108 floor=285 ratio=0.3789", ResultLine.format("seal_256mib_ms", 108, 285));
        assertEquals("RESULT live_events_per_s value=21065 floor=1106403 ratio=0.01904",
                ResultLine.format("live_events_per_s", 21_065.4, 1_106_403.49));
    }

    @Test
    void numbersKeepFourSignificantDigitsWithoutGroupingOrExponent() {
        assertEquals("436.7", ResultLine.number(436.71));
        assertEquals("12.15", ResultLine.number(12.1549));
        assertEquals("0.38", ResultLine.number(0.38));
        assertEquals("0.0001235", ResultLine.number(0.00012346));
        assertEquals("1000", ResultLine.number(999.99));
        assertEquals("6308835", ResultLine.number(6_308_835.2));
        assertEquals("2000000", ResultLine.number(2e6));
        assertEquals("-3.5", ResultLine.number(-3.5));
        assertEquals("0", ResultLine.number(0));
    }

    @Test
    void aFigureWithoutFloorAndAZeroFloorSayNone() {
        assertEquals("RESULT corpus_bytes_per_event value=121.3 floor=none ratio=none",
                ResultLine.formatNoFloor("corpus_bytes_per_event", 121.3));
        assertEquals("RESULT x_ms value=5 floor=0 ratio=none", ResultLine.format("x_ms", 5, 0));
    }

    @Test
    void metricNamesAreSnakeCase() {
        assertThrows(IllegalArgumentException.class, () -> ResultLine.format("Seal ms", 1, 1));
        assertThrows(IllegalArgumentException.class, () -> ResultLine.format("seal__ms", 1, 1));
        assertThrows(IllegalArgumentException.class, () -> ResultLine.formatNoFloor("_ms", 1));
        assertEquals("cbor_to_json", ResultLine.snake("cborToJson"));
        assertEquals("live_durable_sync_1_1", ResultLine.snake("live → durable, Sync 1.1"));
        assertEquals("ops_per_s", ResultLine.snake("ops/s".replace("/", "_per_")));
    }
}
