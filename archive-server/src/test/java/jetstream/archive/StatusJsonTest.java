package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The status snapshot's JSON: Go escaping of strings (HTML characters too), numbers as plain text, null for unknown. */
@Tag("unit")
class StatusJsonTest {
    @Test
    void stringsAreEscapedAsGoDoes() {
        assertEquals("\"a\\u003cb\\u003e \\u0026 \\\"q\\\" \\\\ \\n\\t\\u0001 é\"", StatusJson.literal("a<b> & \"q\" \\ \n\t\u0001 é"));
    }

    @Test
    void treeWithScalars() {
        Map<String, Object> tree = new LinkedHashMap<>();
        tree.put("name", "x");
        tree.put("rate", 1.50);
        tree.put("count", 3L);
        tree.put("unknown", null);
        tree.put("list", List.of(true, "y"));
        assertEquals("{\"name\":\"x\",\"rate\":1.5,\"count\":3,\"unknown\":null,\"list\":[true,\"y\"]}\n", StatusJson.write(tree));
    }
}
