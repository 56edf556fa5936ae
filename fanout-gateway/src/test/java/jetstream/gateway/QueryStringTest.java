package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import jetstream.filter.FilterException;

@Tag("unit")
class QueryStringTest {
    @Test
    void parsesRepeatedValuesInOrder() {
        Map<String, List<String>> q = QueryString.parse("a=1&b=x+y&a=%32&c&=v&&d=");
        assertEquals(List.of("1", "2"), q.get("a"));
        assertEquals(List.of("x y"), q.get("b"));
        assertEquals(List.of(""), q.get("c"));
        assertEquals(List.of("v"), q.get(""));
        assertEquals(List.of(""), q.get("d"));
    }

    @Test
    void rejectsWhatGoRejects() {
        assertEquals("invalid URL escape \"%zz\"", assertThrows(FilterException.class, () -> QueryString.parse("a=%zz")).getMessage());
        assertEquals("invalid URL escape \"%4\"", assertThrows(FilterException.class, () -> QueryString.parse("a=%4")).getMessage());
        assertEquals("invalid semicolon separator in query",
                assertThrows(FilterException.class, () -> QueryString.parse("a=1;b=2")).getMessage());
    }
}
